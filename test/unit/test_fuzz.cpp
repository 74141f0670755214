// Fuzzing of every decoder of bytes that arrive from another process or from
// the user: protocol messages (formats/wire.c) and the mailbox ring that
// carries them (formats/mailbox_ring.c), the whole-lock-epoch payload the
// target applies (whole_epoch_codec.c), pulled access epochs
// (pulled_epoch_codec.c), rkey-cache messages (rkey_wire.c), memory handles
// (memhandle_codec.c), and the engine's inbound protocol events, interleaved
// with the application's calls (core/src/*.cpp through nbrma_core.h).
//
// Each decoder starts from valid encodings built with the writers and
// encoders, mutates them (bit flips, interesting bytes, field-aware
// overwrites with boundary values, truncation, extension, splicing) and
// decodes them from a heap buffer of exactly the received length, so that
// AddressSanitizer sees any read past it. Beyond "no crash", every input is
// checked against a plain re-statement of the format (accepted exactly when
// it is valid) and what is accepted is checked to lie inside the bytes
// received.
//
//   NBRMA_FUZZ_INPUTS          inputs per decoder (default 200000)
//   NBRMA_FUZZ_ENGINE_INPUTS   engine sessions, if not NBRMA_FUZZ_INPUTS
//   NBRMA_FUZZ_SEED            base seed (default fixed, printed)
//   NBRMA_FUZZ_ONLY=i          run input i only (a failure prints the command)
//   NBRMA_FUZZ_TRACE=1         print the engine calls of the sessions run
//   NBRMA_FUZZ_HANG_SECONDS    abort when one input takes longer (default 60)
//
// Input i of a decoder depends on the seed and i only, so that a failure
// replays alone.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <climits>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <memory>
#include <sstream>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include <sys/time.h>
#include <unistd.h>

extern "C" {
#include "mailbox_ring.h"
#include "memhandle_codec.h"
#include "pulled_epoch_codec.h"
#include "rkey_wire.h"
#include "whole_epoch_codec.h"
#include "wire.h"
}
#include "nbrma_core.h"
#include "nbrma_fence_barrier.h"
#include "nbrma/engine.hpp"

namespace {

using bytes_t = std::vector<std::uint8_t>;

// --- configuration, seeds, statistics ---------------------------------------------

struct fuzz_config {
    std::uint64_t seed = 20240611;
    std::uint64_t inputs = 200000;
    std::uint64_t engine_inputs = 200000;
    long long only = -1;
    bool trace = false;
    unsigned hang_seconds = 60;
};

std::uint64_t env_u64(const char *name, std::uint64_t fallback)
{
    const char *text = std::getenv(name);
    return text && *text ? std::strtoull(text, nullptr, 0) : fallback;
}

const fuzz_config &config()
{
    static const fuzz_config cfg = [] {
        fuzz_config c;
        c.seed = env_u64("NBRMA_FUZZ_SEED", c.seed);
        c.inputs = env_u64("NBRMA_FUZZ_INPUTS", c.inputs);
        c.engine_inputs = env_u64("NBRMA_FUZZ_ENGINE_INPUTS", c.inputs);
        if (const char *only = std::getenv("NBRMA_FUZZ_ONLY"); only && *only)
            c.only = std::strtoll(only, nullptr, 0);
        c.trace = env_u64("NBRMA_FUZZ_TRACE", 0) != 0;
        c.hang_seconds = static_cast<unsigned>(env_u64("NBRMA_FUZZ_HANG_SECONDS", 60));
        return c;
    }();
    return cfg;
}

// splitmix64: cheap to seed per input, which mt19937 is not.
struct rng {
    std::uint64_t state;
    std::uint64_t next()
    {
        std::uint64_t z = (state += 0x9e3779b97f4a7c15ull);
        z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
        z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
        return z ^ (z >> 31);
    }
    std::uint64_t below(std::uint64_t n) { return n ? next() % n : 0; }
    bool one_in(std::uint64_t n) { return below(n) == 0; }
};

rng rng_for(std::uint64_t decoder, std::uint64_t input)
{
    rng r{config().seed ^ (decoder * 0xd1b54a32d192ed03ull) ^ (input * 0x8cb92ba72f3d8dd7ull)};
    r.next();
    return r;
}

// The watchdog: a decoder or an engine call that loops forever is a finding
// too. A timer checks that the input number moves; async-signal-safe output.
std::atomic<std::uint64_t> g_progress{0};
const char *volatile g_decoder = "";
std::atomic<std::uint64_t> g_input{0};

void write_str(const char *s)
{
    ssize_t ignored = write(2, s, std::strlen(s));
    (void) ignored;
}

void write_u64(std::uint64_t v)
{
    char buf[24];
    int i = 23;
    buf[i] = 0;
    do {
        buf[--i] = static_cast<char>('0' + v % 10);
        v /= 10;
    } while (v);
    write_str(buf + i);
}

void on_watchdog(int)
{
    static std::uint64_t last = ~0ull;
    const std::uint64_t now = g_progress.load();
    if (now != last) {
        last = now;
        return;
    }
    write_str("\n[fuzz] HANG: no progress for one watchdog period in ");
    write_str(g_decoder);
    write_str(", reproduce with NBRMA_FUZZ_SEED=");
    write_u64(config().seed);
    write_str(" NBRMA_FUZZ_ONLY=");
    write_u64(g_input.load());
    write_str("\n");
    std::abort();
}

void start_watchdog()
{
    static bool started = false;
    if (started || config().hang_seconds == 0)
        return;
    started = true;
    std::signal(SIGALRM, on_watchdog);
    itimerval every{};
    every.it_interval.tv_sec = config().hang_seconds;
    every.it_value.tv_sec = config().hang_seconds;
    setitimer(ITIMER_REAL, &every, nullptr);
}

enum class verdict { accepted, refused, violation };

struct fuzz_stats {
    std::uint64_t inputs = 0, accepted = 0, refused = 0;
    std::uint64_t extra = 0;  // the engine: calls made
};

std::string hex(const std::uint8_t *p, std::size_t n)
{
    static const char digits[] = "0123456789abcdef";
    std::string out;
    for (std::size_t i = 0; i < n; ++i) {
        out += digits[p[i] >> 4];
        out += digits[p[i] & 15];
        if (i % 32 == 31)
            out += '\n';
        else if (i % 8 == 7)
            out += ' ';
    }
    return out;
}

// Runs `one(rng, index, why)` for each input; a violation stops the test
// with the command that replays it.
template <class One>
fuzz_stats run_fuzz(const char *name, std::uint64_t decoder, std::uint64_t inputs, One &&one)
{
    start_watchdog();
    g_decoder = name;
    fuzz_stats stats;
    const auto start = std::chrono::steady_clock::now();
    std::uint64_t first = 0, end = inputs;
    if (config().only >= 0) {
        first = static_cast<std::uint64_t>(config().only);
        end = first + 1;
    }
    std::string why;
    for (std::uint64_t i = first; i < end; ++i) {
        g_input.store(i, std::memory_order_relaxed);
        g_progress.fetch_add(1, std::memory_order_relaxed);
        rng r = rng_for(decoder, i);
        const verdict v = one(r, i, why, stats);
        ++stats.inputs;
        if (v == verdict::violation) {
            ADD_FAILURE() << name << " input " << i << ": " << why
                          << "\nreproduce: NBRMA_FUZZ_SEED=" << config().seed << " NBRMA_FUZZ_ONLY=" << i
                          << " test/unit/nbrma_fuzz_tests --gtest_filter=Fuzz.*" << name << "*";
            break;
        }
        ++(v == verdict::accepted ? stats.accepted : stats.refused);
    }
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    std::printf("[fuzz] %-16s %llu inputs, %llu accepted, %llu refused%s, %.1f s (NBRMA_FUZZ_SEED=%llu)\n", name,
                static_cast<unsigned long long>(stats.inputs), static_cast<unsigned long long>(stats.accepted),
                static_cast<unsigned long long>(stats.refused),
                stats.extra ? (", " + std::to_string(stats.extra) + " engine calls").c_str() : "", seconds,
                static_cast<unsigned long long>(config().seed));
    std::fflush(stdout);
    ::testing::Test::RecordProperty("inputs", std::to_string(stats.inputs));
    ::testing::Test::RecordProperty("accepted", std::to_string(stats.accepted));
    ::testing::Test::RecordProperty("refused", std::to_string(stats.refused));
    ::testing::Test::RecordProperty("seconds", std::to_string(seconds));
    ::testing::Test::RecordProperty("seed", std::to_string(config().seed));
    return stats;
}

// The decoders must see exactly the bytes received: a heap block of that
// size, so that one byte more is a heap-buffer-overflow under ASan. (new[]
// aligns like malloc, as the receivers' buffers are.)
std::unique_ptr<std::uint8_t[]> exact_copy(const bytes_t &buf)
{
    std::unique_ptr<std::uint8_t[]> copy(new std::uint8_t[buf.size()]);
    if (!buf.empty())
        std::memcpy(copy.get(), buf.data(), buf.size());
    return copy;
}

template <class T> T load(const std::uint8_t *p, std::size_t offset)
{
    T v;
    std::memcpy(&v, p + offset, sizeof(v));
    return v;
}

template <class T> void store(bytes_t &buf, std::size_t offset, T v)
{
    if (offset + sizeof(v) <= buf.size())
        std::memcpy(buf.data() + offset, &v, sizeof(v));
}

// --- the mutator ----------------------------------------------------------------

// A field of the format: where it lies and how wide it is.
struct field {
    std::uint32_t offset;
    std::uint8_t width;  // 1, 2, 4 or 8
};

class mutator {
  public:
    // `related`: values that mean something to this format (sizes, counts,
    // limits), written into fields next to the usual boundary values.
    mutator(rng &r, const std::vector<field> &fields, const std::vector<std::uint64_t> &related,
            const std::vector<bytes_t> &pool)
        : r_(r), fields_(fields), related_(related), pool_(pool)
    {
    }

    void mutate(bytes_t &buf, bool may_resize)
    {
        const int rounds = 1 + static_cast<int>(r_.below(4)) + (r_.one_in(8) ? static_cast<int>(r_.below(12)) : 0);
        for (int i = 0; i < rounds; ++i)
            once(buf, may_resize);
    }

    std::uint64_t boundary(std::uint8_t width)
    {
        const std::uint64_t ones = width == 8 ? ~0ull : (1ull << (8 * width)) - 1;
        const std::uint64_t sign = 1ull << (8 * width - 1);
        switch (r_.below(12)) {
        case 0:
            return 0;
        case 1:
            return 1;
        case 2:
            return ones;  // -1
        case 3:
            return sign - 1;  // INT_MAX
        case 4:
            return sign;  // INT_MIN
        case 5:
            return ones - 1;
        case 6:
            return r_.below(16);
        case 7:
            return sign + 1;
        case 8:
        case 9:
        case 10:
            if (!related_.empty()) {
                const std::uint64_t v = related_[r_.below(related_.size())];
                return (v + r_.below(3) - 1) & ones;  // the value, one less or one more
            }
            return 2;
        default:
            return r_.next() & ones;
        }
    }

  private:
    void set_field(bytes_t &buf, std::uint32_t offset, std::uint8_t width, std::uint64_t v)
    {
        if (offset + width > buf.size())
            return;
        for (std::uint8_t b = 0; b < width; ++b)
            buf[offset + b] = static_cast<std::uint8_t>(v >> (8 * b));
    }

    void once(bytes_t &buf, bool may_resize)
    {
        static const std::uint8_t interesting[] = {0, 0xff, 0x7f, 0x80, 1, 0xfe, 0x10, 0x40};
        const std::uint64_t choice = r_.below(may_resize ? 14 : 11);
        // nothing to overwrite or truncate in an empty buffer: grow it
        if (buf.empty() && choice < 12) {
            if (may_resize)
                buf.resize(r_.below(64), static_cast<std::uint8_t>(r_.next()));
            return;
        }
        switch (choice) {
        case 0:
        case 1:
            buf[r_.below(buf.size())] ^= static_cast<std::uint8_t>(1u << r_.below(8));
            break;
        case 2:
            buf[r_.below(buf.size())] = interesting[r_.below(sizeof(interesting))];
            break;
        case 3:
            buf[r_.below(buf.size())] = static_cast<std::uint8_t>(r_.next());
            break;
        case 4:
        case 5:
        case 6:
        case 7:
            if (!fields_.empty()) {
                const field &f = fields_[r_.below(fields_.size())];
                set_field(buf, f.offset, f.width, boundary(f.width));
            }
            break;
        case 8: {  // an aligned word of anything
            const std::uint32_t offset = static_cast<std::uint32_t>(r_.below(buf.size()) & ~7ull);
            set_field(buf, offset, 8, boundary(8));
            break;
        }
        case 9:  // splicing: a piece of another valid encoding, anywhere
            if (!pool_.empty()) {
                const bytes_t &other = pool_[r_.below(pool_.size())];
                if (other.empty())
                    break;
                const std::size_t from = r_.below(other.size());
                const std::size_t to = r_.below(buf.size());
                const std::size_t n = std::min({static_cast<std::size_t>(1 + r_.below(64)), other.size() - from,
                                                buf.size() - to});
                std::memcpy(buf.data() + to, other.data() + from, n);
            }
            break;
        case 10: {  // a piece of itself elsewhere (a descriptor repeated, shifted)
            const std::size_t from = r_.below(buf.size());
            const std::size_t to = r_.below(buf.size());
            const std::size_t n = std::min({static_cast<std::size_t>(1 + r_.below(48)), buf.size() - from,
                                            buf.size() - to});
            std::memmove(buf.data() + to, buf.data() + from, n);
            break;
        }
        case 11: {  // truncated
            switch (r_.below(4)) {
            case 0:
                buf.resize(buf.size() - 1);
                break;
            case 1:
                buf.resize(r_.below(buf.size() + 1));
                break;
            case 2:
                buf.resize(buf.size() - std::min<std::size_t>(buf.size(), 8 * (1 + r_.below(4))));
                break;
            default:
                buf.resize(std::min<std::size_t>(buf.size(), r_.below(72)));
                break;
            }
            break;
        }
        case 12: {  // extended
            const std::size_t more = r_.one_in(2) ? 1 + r_.below(8) : 8 * (1 + r_.below(8));
            const std::uint8_t fill = r_.one_in(2) ? 0 : static_cast<std::uint8_t>(r_.next());
            buf.resize(buf.size() + more, fill);
            break;
        }
        default:  // spliced: my head, another one's tail
            if (!pool_.empty()) {
                const bytes_t &other = pool_[r_.below(pool_.size())];
                const std::size_t head = r_.below(buf.size() + 1);
                const std::size_t tail_from = r_.below(other.size() + 1);
                buf.resize(head);
                buf.insert(buf.end(), other.begin() + static_cast<std::ptrdiff_t>(tail_from), other.end());
            }
            break;
        }
    }

    rng &r_;
    const std::vector<field> &fields_;
    const std::vector<std::uint64_t> &related_;
    const std::vector<bytes_t> &pool_;
};

std::vector<bytes_t> make_pool(std::uint64_t decoder, bytes_t (*make)(rng &), std::size_t n = 64)
{
    rng r = rng_for(decoder ^ 0x706f6f6cull, 0);
    std::vector<bytes_t> pool;
    for (std::size_t i = 0; i < n; ++i)
        pool.push_back(make(r));
    return pool;
}

// Field lists of formats with repeated descriptors: the header's, then those
// of the first descriptors.
std::vector<field> fields_with_descriptors(const std::vector<field> &header, std::size_t header_bytes,
                                           const std::vector<field> &descriptor, std::size_t descriptor_bytes,
                                           std::size_t descriptors)
{
    std::vector<field> all = header;
    for (std::size_t i = 0; i < descriptors; ++i)
        for (const field &f : descriptor)
            all.push_back(field{static_cast<std::uint32_t>(header_bytes + i * descriptor_bytes + f.offset), f.width});
    return all;
}

const std::vector<field> ctrl_fields = {{0, 8}, {8, 8}, {16, 4}, {20, 4}, {24, 4}, {28, 4}};

// --- whole lock epochs ---------------------------------------------------------

// The element sizes a receiver might accept: types 1..8 of that many bytes,
// then larger ones up to the decoder's limit, and some beyond it (refused).
std::size_t whole_type_size(std::int32_t datatype, void *)
{
    if (datatype >= 1 && datatype <= 8)
        return static_cast<std::size_t>(datatype);
    switch (datatype) {
    case 9:
        return 16;
    case 10:
        return 255;
    case 11:
        return NBRMA_WHOLE_EPOCH_MAX_BYTES;  // the largest element accepted
    case 12:
        return NBRMA_WHOLE_EPOCH_MAX_BYTES + 1;
    case 13:
        return SIZE_MAX;
    }
    return 0;
}

bytes_t valid_whole_epoch(rng &r)
{
    struct planned {
        nbrma_whole_epoch_op_t desc;
        std::size_t len;
    };
    std::vector<planned> ops;
    const std::size_t want = r.one_in(16) ? r.below(100) : r.below(6);
    std::size_t bytes = nbrma_whole_epoch_data_offset(0);
    for (std::size_t i = 0; i < want; ++i) {
        static const std::int32_t types[] = {1, 2, 4, 8, 3, 9, 10, 11};
        nbrma_whole_epoch_op_t desc{};
        desc.kind = r.one_in(2) ? NBRMA_WHOLE_OP_PUT : NBRMA_WHOLE_OP_ACCUMULATE;
        desc.datatype = types[r.below(r.one_in(8) ? 8 : 5)];
        desc.op = static_cast<std::int32_t>(r.below(16));
        const std::size_t elem = whole_type_size(desc.datatype, nullptr);
        desc.count = static_cast<std::int32_t>(r.one_in(6) ? 0 : r.below(1 + 256 / elem));
        desc.target_disp = static_cast<std::int64_t>(r.one_in(4) ? r.next() : r.below(1 << 20));
        const std::size_t len = static_cast<std::size_t>(desc.count) * elem;
        const std::size_t grown = nbrma_whole_epoch_data_offset(ops.size() + 1) - nbrma_whole_epoch_data_offset(ops.size()) +
            nbrma_whole_epoch_span(len);
        if (bytes + grown > NBRMA_WHOLE_EPOCH_MAX_BYTES)
            break;
        bytes += grown;
        ops.push_back(planned{desc, len});
    }
    bytes_t buf(bytes);
    nbrma_whole_epoch_writer_t writer;
    nbrma_whole_epoch_writer_init(&writer, buf.data(), static_cast<std::uint32_t>(ops.size()), bytes);
    bytes_t data;
    for (const planned &op : ops) {
        data.assign(op.len, 0);
        for (std::size_t i = 0; i < op.len; ++i)
            data[i] = static_cast<std::uint8_t>(r.next());
        nbrma_whole_epoch_write(&writer, &op.desc, data.data(), data.size());
    }
    // what the sender fills in
    nbrma_whole_epoch_t *header = reinterpret_cast<nbrma_whole_epoch_t *>(buf.data());
    header->ctrl.win_id = r.next();
    header->ctrl.value = r.below(1000);
    header->ctrl.lock_type = r.one_in(2) ? NBRMA_LOCK_EXCLUSIVE : NBRMA_LOCK_SHARED;
    header->ctrl.from = static_cast<std::int32_t>(r.below(8));
    return buf;
}

// The format restated plainly, in 128-bit arithmetic: the decoder must
// accept exactly these epochs.
bool whole_epoch_is_valid(const std::uint8_t *p, std::size_t bytes)
{
    using u128 = unsigned __int128;
    if (bytes < sizeof(nbrma_whole_epoch_t) || bytes > NBRMA_WHOLE_EPOCH_MAX_BYTES)
        return false;
    const nbrma_whole_epoch_t header = load<nbrma_whole_epoch_t>(p, 0);
    if (header.ctrl.kind != NBRMA_CTRL_LOCK_EPOCH || header.bytes != bytes)
        return false;
    const u128 descriptors_end = sizeof(header) + static_cast<u128>(header.n_ops) * sizeof(nbrma_whole_epoch_op_t);
    if (descriptors_end > bytes)
        return false;
    u128 offset = (descriptors_end + 15) / 16 * 16;
    for (std::uint32_t i = 0; i < header.n_ops; ++i) {
        const nbrma_whole_epoch_op_t op =
            load<nbrma_whole_epoch_op_t>(p, sizeof(header) + i * sizeof(nbrma_whole_epoch_op_t));
        if (op.kind != NBRMA_WHOLE_OP_PUT && op.kind != NBRMA_WHOLE_OP_ACCUMULATE)
            return false;
        if (op.count < 0 || op.count > NBRMA_WHOLE_EPOCH_MAX_BYTES)
            return false;
        const std::size_t elem = whole_type_size(op.datatype, nullptr);
        if (elem == 0 || elem > NBRMA_WHOLE_EPOCH_MAX_BYTES)
            return false;
        const u128 len = static_cast<u128>(op.count) * elem;
        if (offset + len > bytes)
            return false;
        offset += (len + 15) / 16 * 16;
    }
    return true;
}

verdict whole_epoch_one(rng &r, std::string &why, const std::vector<bytes_t> &pool)
{
    bytes_t buf = pool[r.below(pool.size())];
    if (!r.one_in(4))
        buf = valid_whole_epoch(r);
    const bool unmutated = r.one_in(16);
    if (!unmutated) {
        const std::uint32_t n_ops = load<nbrma_whole_epoch_t>(buf.data(), 0).n_ops;
        const std::vector<field> fields = fields_with_descriptors(
            {{16, 4}, {20, 4}, {24, 4}, {28, 4}, {32, 4}, {36, 4}}, sizeof(nbrma_whole_epoch_t),
            {{0, 4}, {4, 4}, {8, 4}, {12, 4}, {16, 8}}, sizeof(nbrma_whole_epoch_op_t), std::min<std::uint32_t>(n_ops, 8));
        const std::vector<std::uint64_t> related = {
            buf.size(), n_ops, NBRMA_WHOLE_EPOCH_MAX_BYTES, (buf.size() - 40) / 24, 13, 12, 11, 2, 0x7fffffff,
            nbrma_whole_epoch_data_offset(n_ops), NBRMA_CTRL_LOCK_EPOCH};
        mutator m(r, fields, related, pool);
        m.mutate(buf, true);
        // the length mutations keep the header's claim in step now and then,
        // so that the checks behind the length check are reached
        if (buf.size() >= sizeof(nbrma_whole_epoch_t) && r.one_in(2))
            store<std::uint32_t>(buf, 36, static_cast<std::uint32_t>(buf.size()));
    }
    const std::size_t bytes = buf.size();
    const std::unique_ptr<std::uint8_t[]> exact = exact_copy(buf);
    const std::uint8_t *p = exact.get();
    const bool valid = whole_epoch_is_valid(buf.data(), bytes);

    nbrma_whole_epoch_reader_t reader;
    const bool accepted = nbrma_whole_epoch_read_init(&reader, p, bytes, whole_type_size, nullptr) == 0;
    if (unmutated && !accepted) {
        why = "a valid epoch was refused:\n" + hex(buf.data(), bytes);
        return verdict::violation;
    }
    if (accepted != valid) {
        why = std::string(accepted ? "accepted a malformed epoch" : "refused a valid epoch") + " of " +
            std::to_string(bytes) + " bytes:\n" + hex(buf.data(), bytes);
        return verdict::violation;
    }
    if (!accepted)
        return verdict::refused;
    const std::uint32_t n_ops = load<nbrma_whole_epoch_t>(p, 0).n_ops;
    const std::uint8_t *end = p + bytes;
    const std::uint8_t *data_floor = p + std::min(bytes, nbrma_whole_epoch_data_offset(n_ops));
    const std::uint8_t *previous_end = data_floor;
    std::uint32_t n = 0;
    const void *data;
    std::size_t len;
    while (const nbrma_whole_epoch_op_t *op = nbrma_whole_epoch_read(&reader, &data, &len)) {
        const std::uint8_t *d = static_cast<const std::uint8_t *>(data);
        const std::uint8_t *desc = reinterpret_cast<const std::uint8_t *>(op);
        if (++n > n_ops) {
            why = "more operations read than the header counts";
            return verdict::violation;
        }
        if (desc < p + sizeof(nbrma_whole_epoch_t) || desc + sizeof(*op) > end) {
            why = "a descriptor outside the buffer";
            return verdict::violation;
        }
        if (d < previous_end || len > static_cast<std::size_t>(end - d)) {
            why = "operation " + std::to_string(n - 1) + "'s data (" + std::to_string(len) +
                " bytes) outside the buffer or over another's:\n" + hex(p, bytes);
            return verdict::violation;
        }
        if ((op->kind != NBRMA_WHOLE_OP_PUT && op->kind != NBRMA_WHOLE_OP_ACCUMULATE) || op->count < 0 ||
            len != static_cast<std::size_t>(op->count) * whole_type_size(op->datatype, nullptr)) {
            why = "an accepted operation is not what its descriptor says";
            return verdict::violation;
        }
        previous_end = d + len;
    }
    if (n != n_ops || nbrma_whole_epoch_read(&reader, &data, &len) != nullptr) {
        why = "the reader did not stop after the header's count";
        return verdict::violation;
    }
    return verdict::accepted;
}

// --- pulled access epochs --------------------------------------------------------

// Element sizes up to 2^32: the decoder's product stays below 2^63 for any
// count < 2^31, as MPI's basic sizes (< 256) do by far.
std::size_t pulled_type_size(std::int32_t datatype, void *)
{
    if (datatype >= 1 && datatype <= 8)
        return static_cast<std::size_t>(datatype);
    switch (datatype) {
    case 9:
        return 16;
    case 10:
        return 255;
    case 11:
        return std::size_t{1} << 32;
    }
    return 0;
}

bytes_t valid_pulled_epoch(rng &r)
{
    const std::size_t n = r.one_in(8) ? NBRMA_PULLED_EPOCH_MAX_OPS - r.below(3) : r.below(6);
    bytes_t buf(nbrma_pulled_epoch_bytes(n));
    nbrma_pulled_epoch_t header{};
    header.ctrl.kind = NBRMA_CTRL_ACCESS_EPOCH;
    header.ctrl.value = r.below(1000);
    header.ctrl.from = static_cast<std::int32_t>(r.below(8));
    header.ctrl.win_id = r.next();
    header.n_ops = static_cast<std::uint32_t>(n);
    header.bytes = static_cast<std::uint32_t>(buf.size());
    std::memcpy(buf.data(), &header, sizeof(header));
    for (std::size_t i = 0; i < n; ++i) {
        static const std::int32_t types[] = {1, 2, 4, 8, 9, 10, 11};
        nbrma_pulled_op_t op{};
        op.kind = r.one_in(2) ? NBRMA_WHOLE_OP_PUT : NBRMA_WHOLE_OP_ACCUMULATE;
        op.datatype = types[r.below(7)];
        op.op = static_cast<std::int32_t>(r.below(16));
        op.count = static_cast<std::int32_t>(r.one_in(8) ? r.below(0x80000000ull) : r.below(1024));
        op.target_disp = static_cast<std::int64_t>(r.below(1 << 20));
        const std::uint64_t len = static_cast<std::uint64_t>(op.count) * pulled_type_size(op.datatype, nullptr);
        // some right at the top of the address space
        op.origin_addr = r.one_in(8) ? UINT64_MAX - len : (0x7f0000000000ull + r.below(1ull << 32)) & ~7ull;
        std::memcpy(buf.data() + sizeof(header) + i * sizeof(op), &op, sizeof(op));
    }
    return buf;
}

bool pulled_epoch_is_valid(const std::uint8_t *p, std::size_t bytes)
{
    using u128 = unsigned __int128;
    if (bytes < sizeof(nbrma_pulled_epoch_t))
        return false;
    const nbrma_pulled_epoch_t header = load<nbrma_pulled_epoch_t>(p, 0);
    if (header.ctrl.kind != NBRMA_CTRL_ACCESS_EPOCH || header.bytes != bytes ||
        header.n_ops > NBRMA_PULLED_EPOCH_MAX_OPS ||
        bytes != sizeof(header) + static_cast<u128>(header.n_ops) * sizeof(nbrma_pulled_op_t))
        return false;
    for (std::uint32_t i = 0; i < header.n_ops; ++i) {
        const nbrma_pulled_op_t op = load<nbrma_pulled_op_t>(p, sizeof(header) + i * sizeof(op));
        if (op.kind != NBRMA_WHOLE_OP_PUT && op.kind != NBRMA_WHOLE_OP_ACCUMULATE)
            return false;
        const std::size_t elem = pulled_type_size(op.datatype, nullptr);
        if (op.count < 0 || elem == 0)
            return false;
        if (static_cast<u128>(op.origin_addr) + static_cast<u128>(op.count) * elem > UINT64_MAX)
            return false;
    }
    return true;
}

verdict pulled_epoch_one(rng &r, std::string &why, const std::vector<bytes_t> &pool)
{
    bytes_t buf = r.one_in(4) ? pool[r.below(pool.size())] : valid_pulled_epoch(r);
    const bool unmutated = r.one_in(16);
    if (!unmutated) {
        const std::uint32_t n_ops = load<nbrma_pulled_epoch_t>(buf.data(), 0).n_ops;
        const std::vector<field> fields = fields_with_descriptors(
            {{16, 4}, {20, 4}, {24, 4}, {28, 4}, {32, 4}, {36, 4}}, sizeof(nbrma_pulled_epoch_t),
            {{0, 4}, {4, 4}, {8, 4}, {12, 4}, {16, 8}, {24, 8}}, sizeof(nbrma_pulled_op_t),
            std::min<std::uint32_t>(n_ops, 8));
        const std::vector<std::uint64_t> related = {
            buf.size(), n_ops, NBRMA_PULLED_EPOCH_MAX_OPS, nbrma_pulled_epoch_bytes(NBRMA_PULLED_EPOCH_MAX_OPS),
            nbrma_pulled_epoch_bytes(n_ops + 1), 11, 12, 0x7fffffff, UINT64_MAX - 0x7fffffffull,
            NBRMA_CTRL_ACCESS_EPOCH};
        mutator m(r, fields, related, pool);
        m.mutate(buf, true);
        if (buf.size() >= sizeof(nbrma_pulled_epoch_t) && r.one_in(2)) {
            store<std::uint32_t>(buf, 36, static_cast<std::uint32_t>(buf.size()));
            if (r.one_in(2) && buf.size() >= 40)
                store<std::uint32_t>(buf, 32, static_cast<std::uint32_t>((buf.size() - 40) / 32));
        }
    }
    const std::size_t bytes = buf.size();
    const std::unique_ptr<std::uint8_t[]> exact = exact_copy(buf);
    const std::uint8_t *p = exact.get();
    const bool valid = pulled_epoch_is_valid(buf.data(), bytes);
    std::uint32_t n = 0xdeadbeef;
    const nbrma_pulled_op_t *ops = nbrma_pulled_epoch_check(p, bytes, pulled_type_size, nullptr, &n);
    if (unmutated && !ops) {
        why = "a valid pulled epoch was refused:\n" + hex(buf.data(), bytes);
        return verdict::violation;
    }
    if ((ops != nullptr) != valid) {
        why = std::string(ops ? "accepted a malformed pulled epoch" : "refused a valid pulled epoch") + " of " +
            std::to_string(bytes) + " bytes:\n" + hex(buf.data(), bytes);
        return verdict::violation;
    }
    if (!ops)
        return verdict::refused;
    const std::uint8_t *first = reinterpret_cast<const std::uint8_t *>(ops);
    if (n > NBRMA_PULLED_EPOCH_MAX_OPS || first != p + sizeof(nbrma_pulled_epoch_t) ||
        n * sizeof(nbrma_pulled_op_t) > bytes - sizeof(nbrma_pulled_epoch_t)) {
        why = "accepted descriptors outside the buffer or more than the maximum: n_ops " + std::to_string(n);
        return verdict::violation;
    }
    for (std::uint32_t i = 0; i < n; ++i) {
        const nbrma_pulled_op_t &op = ops[i];
        const std::uint64_t len = static_cast<std::uint64_t>(op.count) * pulled_type_size(op.datatype, nullptr);
        if ((op.kind != NBRMA_WHOLE_OP_PUT && op.kind != NBRMA_WHOLE_OP_ACCUMULATE) || op.count < 0 ||
            op.origin_addr + len < op.origin_addr) {
            why = "accepted operation " + std::to_string(i) + " is invalid or its range wraps";
            return verdict::violation;
        }
    }
    return verdict::accepted;
}

// --- memory handles --------------------------------------------------------------

std::uint64_t fnv1a_handle(const std::uint8_t *p, std::size_t bytes)
{
    std::uint64_t hash = 14695981039346656037ULL;
    for (std::size_t i = 0; i < bytes; ++i) {
        const bool in_checksum = i >= offsetof(nbrma_memhandle_header_t, checksum) &&
            i < offsetof(nbrma_memhandle_header_t, checksum) + 8;
        hash = (hash ^ (in_checksum ? 0 : p[i])) * 1099511628211ULL;
    }
    return hash;
}

nbrma_memhandle_status_t handle_status(const std::uint8_t *p)
{
    const nbrma_memhandle_header_t h = load<nbrma_memhandle_header_t>(p, 0);
    if (h.magic != NBRMA_MEMHANDLE_MAGIC)
        return NBRMA_MEMHANDLE_NOT_A_HANDLE;
    if (h.version != NBRMA_MEMHANDLE_VERSION)
        return NBRMA_MEMHANDLE_BAD_VERSION;
    if (h.total_bytes != sizeof(h) + static_cast<std::size_t>(h.rkey_bytes) || h.total_bytes > NBRMA_MEMHANDLE_MAX_BYTES)
        return NBRMA_MEMHANDLE_BAD_LENGTH;
    return fnv1a_handle(p, h.total_bytes) == h.checksum ? NBRMA_MEMHANDLE_OK : NBRMA_MEMHANDLE_BAD_CHECKSUM;
}

bytes_t valid_handle(rng &r)
{
    // the user's buffer: whatever it held before, then the handle
    bytes_t handle(NBRMA_MEMHANDLE_MAX_BYTES);
    const std::uint8_t fill = static_cast<std::uint8_t>(r.next());
    for (std::uint8_t &b : handle)
        b = r.one_in(2) ? fill : static_cast<std::uint8_t>(r.next());
    const std::size_t room = NBRMA_MEMHANDLE_MAX_BYTES - sizeof(nbrma_memhandle_header_t);
    std::size_t rkey_bytes = r.below(room + 1);
    if (r.one_in(4))
        rkey_bytes = r.one_in(2) ? 0 : room - r.below(2);
    bytes_t rkey(rkey_bytes);
    for (std::uint8_t &b : rkey)
        b = static_cast<std::uint8_t>(r.next());
    nbrma_memhandle_header_t hdr{};
    hdr.owner_rank = static_cast<std::int32_t>(r.below(64));
    hdr.win_id = r.next();
    hdr.generation = r.below(100);
    hdr.base = r.next() & ~0xfffull;
    hdr.size = r.below(1ull << 30);
    nbrma_memhandle_encode(handle.data(), &hdr, rkey.data(), rkey.size());
    return handle;
}

verdict memhandle_one(rng &r, std::string &why, const std::vector<bytes_t> &pool)
{
    bytes_t buf = r.one_in(4) ? pool[r.below(pool.size())] : valid_handle(r);
    const bool unmutated = r.one_in(16);
    if (!unmutated) {
        static const std::vector<field> fields = {{0, 4},  {4, 2},  {6, 2},  {8, 4},  {12, 4},
                                                  {16, 8}, {24, 8}, {32, 8}, {40, 8}, {48, 8}};
        const nbrma_memhandle_header_t h = load<nbrma_memhandle_header_t>(buf.data(), 0);
        const std::vector<std::uint64_t> related = {
            NBRMA_MEMHANDLE_MAGIC, NBRMA_MEMHANDLE_VERSION, NBRMA_MEMHANDLE_MAX_BYTES,
            NBRMA_MEMHANDLE_MAX_BYTES - sizeof(h), sizeof(h), h.total_bytes, h.rkey_bytes, 0xffff, 0xffff + sizeof(h)};
        mutator m(r, fields, related, pool);
        m.mutate(buf, false);
        // A handle is a user's 512 bytes; a mutation that made the lengths
        // agree, or a checksum that matches garbage, must reach the checks
        // behind them without reading past the claimed length.
        if (r.one_in(3))
            store<std::uint32_t>(buf, 8, static_cast<std::uint32_t>(sizeof(h) + load<std::uint16_t>(buf.data(), 6)));
        if (r.one_in(2)) {
            const std::uint32_t total = load<std::uint32_t>(buf.data(), 8);
            if (total <= NBRMA_MEMHANDLE_MAX_BYTES)
                store<std::uint64_t>(buf, 48, fnv1a_handle(buf.data(), total));
        }
    }
    const std::unique_ptr<std::uint8_t[]> exact = exact_copy(buf);
    nbrma_memhandle_header_t hdr;
    const nbrma_memhandle_status_t status = nbrma_memhandle_decode(exact.get(), &hdr);
    const nbrma_memhandle_status_t expected = handle_status(buf.data());
    if (unmutated && status != NBRMA_MEMHANDLE_OK) {
        why = std::string("a valid handle was refused: ") + nbrma_memhandle_strstatus(status);
        return verdict::violation;
    }
    if (status != expected) {
        why = std::string("status ") + nbrma_memhandle_strstatus(status) + ", expected " +
            nbrma_memhandle_strstatus(expected) + ":\n" + hex(buf.data(), 64);
        return verdict::violation;
    }
    // Only as much as the header claims is read: the same status from a
    // block that ends there.
    const std::uint32_t claimed = load<std::uint32_t>(buf.data(), 8);
    if (claimed <= NBRMA_MEMHANDLE_MAX_BYTES) {
        const bytes_t shorter(buf.begin(), buf.begin() + std::max<std::size_t>(claimed, sizeof(hdr)));
        const std::unique_ptr<std::uint8_t[]> tight = exact_copy(shorter);
        nbrma_memhandle_header_t again;
        if (nbrma_memhandle_decode(tight.get(), &again) != status) {
            why = "the status depends on bytes beyond the claimed length";
            return verdict::violation;
        }
    }
    if (status != NBRMA_MEMHANDLE_OK)
        return verdict::refused;
    if (std::memcmp(&hdr, buf.data(), sizeof(hdr)) != 0 || hdr.checksum != fnv1a_handle(buf.data(), hdr.total_bytes) ||
        hdr.total_bytes != sizeof(hdr) + hdr.rkey_bytes || hdr.total_bytes > NBRMA_MEMHANDLE_MAX_BYTES) {
        why = "an accepted handle's header is not what the bytes say, or its checksum is wrong";
        return verdict::violation;
    }
    // Encoding what was accepted gives the same bytes back.
    bytes_t again(NBRMA_MEMHANDLE_MAX_BYTES, 0);
    nbrma_memhandle_header_t copy = hdr;
    const std::size_t total =
        nbrma_memhandle_encode(again.data(), &copy, buf.data() + sizeof(hdr), hdr.rkey_bytes);
    if (total != hdr.total_bytes || std::memcmp(again.data(), buf.data(), total) != 0) {
        why = "re-encoding an accepted handle gives other bytes";
        return verdict::violation;
    }
    return verdict::accepted;
}

// --- rkey-cache messages -----------------------------------------------------------

bytes_t valid_rkey_msg(rng &r)
{
    nbrma_rkey_msg_t msg{};
    msg.kind = static_cast<std::uint16_t>(NBRMA_RKEY_QUERY + r.below(4));
    msg.win_id = r.next();
    msg.addr = r.next();
    msg.from = static_cast<std::int32_t>(r.below(8));
    msg.generation = r.below(100);
    if (msg.kind == NBRMA_RKEY_REPLY) {
        msg.rkey_bytes = static_cast<std::uint16_t>(1 + r.below(NBRMA_RKEY_MAX_BYTES));
        msg.base = r.one_in(4) ? UINT64_MAX - r.below(1 << 20) : r.next() >> 1;
        msg.size = r.below(UINT64_MAX - msg.base + 1);
    }
    bytes_t buf(sizeof(msg));
    std::memcpy(buf.data(), &msg, sizeof(msg));
    return buf;
}

int pick_nprocs(rng &r)
{
    switch (r.below(10)) {
    case 0:
        return 0;
    case 1:
        return INT_MAX;
    case 2:
        return -1;
    default:
        return 1 + static_cast<int>(r.below(8));
    }
}

verdict rkey_one(rng &r, std::string &why, const std::vector<bytes_t> &pool)
{
    bytes_t buf = r.one_in(4) ? pool[r.below(pool.size())] : valid_rkey_msg(r);
    const bool unmutated = r.one_in(16);
    int nprocs = unmutated ? 8 : pick_nprocs(r);
    if (!unmutated) {
        static const std::vector<field> fields = {{0, 8}, {8, 8}, {16, 8}, {24, 8}, {32, 8}, {40, 4}, {44, 2}, {46, 2}};
        static const std::vector<std::uint64_t> related = {NBRMA_RKEY_MAX_BYTES, NBRMA_RKEY_QUERY,      NBRMA_RKEY_REPLY,
                                                           NBRMA_RKEY_NONE,      NBRMA_RKEY_INVALIDATE, 8};
        mutator m(r, fields, related, pool);
        m.mutate(buf, false);
    }
    // A reply's packed rkey follows the message: the received block holds
    // both, truncated or extended here.
    const nbrma_rkey_msg_t plain = load<nbrma_rkey_msg_t>(buf.data(), 0);
    bytes_t received = buf;
    std::size_t tail = plain.rkey_bytes;
    if (!unmutated && r.one_in(4))
        tail = r.one_in(2) ? r.below(tail + 1) : tail + r.below(16);
    received.resize(sizeof(plain) + tail, 0xab);
    const std::unique_ptr<std::uint8_t[]> exact = exact_copy(received);
    const nbrma_rkey_msg_t *msg = reinterpret_cast<const nbrma_rkey_msg_t *>(exact.get());
    const bool accepted = nbrma_rkey_msg_valid(msg, nprocs) != 0;

    bool valid = plain.from >= 0 && plain.from < nprocs;
    switch (plain.kind) {
    case NBRMA_RKEY_QUERY:
    case NBRMA_RKEY_NONE:
    case NBRMA_RKEY_INVALIDATE:
        valid = valid && plain.rkey_bytes == 0;
        break;
    case NBRMA_RKEY_REPLY:
        valid = valid && plain.rkey_bytes > 0 && plain.rkey_bytes <= NBRMA_RKEY_MAX_BYTES &&
            static_cast<unsigned __int128>(plain.base) + plain.size <= UINT64_MAX;
        break;
    default:
        valid = false;
    }
    if ((unmutated && !accepted) || accepted != valid) {
        why = std::string(accepted ? "accepted a malformed" : "refused a valid") + " rkey message (nprocs " +
            std::to_string(nprocs) + "):\n" + hex(buf.data(), buf.size());
        return verdict::violation;
    }
    if (!accepted)
        return verdict::refused;
    // What a receiver does with an accepted reply: the rkey, if it is all
    // there (the active-message header's size is the sender's word).
    if (plain.kind == NBRMA_RKEY_REPLY && sizeof(plain) + plain.rkey_bytes <= received.size()) {
        std::uint8_t rkey[NBRMA_RKEY_MAX_BYTES];
        std::memcpy(rkey, exact.get() + sizeof(plain), plain.rkey_bytes);
    }
    return verdict::accepted;
}

// --- protocol messages (wire.h) -------------------------------------------------

bytes_t valid_ctrl_msg(rng &r)
{
    nbrma_ctrl_msg_t msg{};
    msg.win_id = r.next();
    msg.kind = static_cast<std::int32_t>(r.below(NBRMA_CTRL_ACCESS_APPLIED + 1));
    msg.value = r.one_in(4) ? r.next() : r.below(100);
    msg.from = static_cast<std::int32_t>(r.below(8));
    msg.lock_type = msg.kind == NBRMA_CTRL_LOCK_REQUEST || msg.kind == NBRMA_CTRL_LOCK_EPOCH
        ? (r.one_in(2) ? NBRMA_LOCK_EXCLUSIVE : NBRMA_LOCK_SHARED)
        : 0;
    bytes_t buf(sizeof(msg));
    std::memcpy(buf.data(), &msg, sizeof(msg));
    return buf;
}

bool ctrl_is_valid(const nbrma_ctrl_msg_t &msg, int nprocs)
{
    const bool lock = msg.kind == NBRMA_CTRL_LOCK_REQUEST || msg.kind == NBRMA_CTRL_LOCK_EPOCH;
    return msg.kind >= NBRMA_CTRL_GRANT && msg.kind <= NBRMA_CTRL_ACCESS_APPLIED && msg.from >= 0 &&
        msg.from < nprocs && msg.reserved == 0 &&
        (!lock || msg.lock_type == NBRMA_LOCK_EXCLUSIVE || msg.lock_type == NBRMA_LOCK_SHARED);
}

verdict ctrl_one(rng &r, std::string &why, const std::vector<bytes_t> &pool)
{
    bytes_t buf = r.one_in(4) ? pool[r.below(pool.size())] : valid_ctrl_msg(r);
    const bool unmutated = r.one_in(16);
    const int nprocs = unmutated ? 8 : pick_nprocs(r);
    if (!unmutated) {
        static const std::vector<std::uint64_t> related = {NBRMA_LOCK_EXCLUSIVE, NBRMA_LOCK_SHARED, NBRMA_CTRL_ACCESS_APPLIED,
                                                           NBRMA_CTRL_LOCK_EPOCH, 8, 0xffffffffull};
        mutator m(r, ctrl_fields, related, pool);
        m.mutate(buf, false);
    }
    const std::unique_ptr<std::uint8_t[]> exact = exact_copy(buf);
    const nbrma_ctrl_msg_t *msg = reinterpret_cast<const nbrma_ctrl_msg_t *>(exact.get());
    const bool accepted = nbrma_ctrl_msg_check(msg, nprocs) != 0;
    const bool mail_accepted = nbrma_ctrl_mail_check(msg, nprocs) != 0;
    const bool valid = ctrl_is_valid(*msg, nprocs);
    if ((unmutated && !accepted) || accepted != valid ||
        mail_accepted != (valid && msg->kind != NBRMA_CTRL_LOCK_EPOCH)) {
        why = std::string(accepted ? "accepted a malformed" : "refused a valid") + " protocol message (nprocs " +
            std::to_string(nprocs) + ", mail " + (mail_accepted ? "accepted" : "refused") + "):\n" +
            hex(buf.data(), buf.size());
        return verdict::violation;
    }

    // The same message out of a mailbox ring: kind and arg are bytes, the
    // sender is the ring's, as the glue converts it (nbrma_ctrl_msg_of_mail).
    nbrma_ring_msg_t mail{};
    mail.kind = static_cast<std::uint8_t>(r.one_in(2) ? r.below(10) : r.next());
    mail.arg = static_cast<std::uint8_t>(r.one_in(2) ? NBRMA_LOCK_EXCLUSIVE + r.below(3) - 1 : r.next());
    mail.value = r.next();
    const nbrma_ctrl_msg_t from_ring = nbrma_ctrl_msg_of_mail(
        0, nprocs > 0 ? static_cast<int>(r.below(static_cast<std::uint64_t>(nprocs))) : 0, &mail);
    const bool ring_accepted = nbrma_ctrl_mail_check(&from_ring, nprocs) != 0;
    const bool ring_valid = nprocs > 0 && mail.kind <= NBRMA_CTRL_ACCESS_APPLIED && mail.kind != NBRMA_CTRL_LOCK_EPOCH &&
        (mail.kind != NBRMA_CTRL_LOCK_REQUEST || mail.arg == NBRMA_LOCK_EXCLUSIVE || mail.arg == NBRMA_LOCK_SHARED);
    if (ring_accepted != ring_valid) {
        why = "ring message kind " + std::to_string(mail.kind) + " arg " + std::to_string(mail.arg) +
            (ring_accepted ? " accepted" : " refused");
        return verdict::violation;
    }
    return accepted ? verdict::accepted : verdict::refused;
}

// --- mailbox rings -----------------------------------------------------------------

// One ring that its sender, the owner and a third process scribbling over it
// share. The owner's reads must stay in the ring, end, and take a slot only
// when its stamp names the message due; the sender must never write into a
// slot whose message the owner has not taken by the count it reads.
struct ring_box {
    std::unique_ptr<std::uint8_t[]> block;
    nbrma_mailbox_t *box;
    nbrma_ring_t *ring;
    ring_box() : block(new std::uint8_t[nbrma_mailbox_bytes(1)]())
    {
        box = reinterpret_cast<nbrma_mailbox_t *>(block.get());
        ring = &box->ring[0];
    }
};

std::uint64_t scribble_value(rng &r, std::uint64_t near)
{
    switch (r.below(8)) {
    case 0:
        return 0;
    case 1:
        return UINT64_MAX - r.below(2);
    case 2:
        return near + r.below(40) - 20;
    case 3:
        return std::uint64_t{1} << 48;
    case 4:
        return r.next();
    default:
        return near + r.below(3) - 1;
    }
}

void scribble(rng &r, nbrma_ring_t *ring, std::uint64_t sent)
{
    if (r.one_in(3)) {
        ring->consumed = scribble_value(r, ring->consumed);
        return;
    }
    nbrma_ring_slot_t &slot = ring->slot[r.below(NBRMA_RING_SLOTS)];
    const std::uint64_t seq = scribble_value(r, r.one_in(2) ? ring->consumed + 1 : sent);
    slot.stamp = r.one_in(4) ? r.next() : seq << 16 | (r.next() & 0xffff);
    slot.value = r.next();
}

verdict ring_receive_one(rng &r, std::string &why)
{
    ring_box b;
    nbrma_ring_sender_t sender{};
    // an honest history first: sent and partly taken
    const std::uint64_t sent = r.below(64);
    std::uint64_t taken = 0;
    nbrma_ring_msg_t got{};
    for (std::uint64_t i = 0; i < sent; ++i) {
        const nbrma_ring_msg_t m{static_cast<std::uint8_t>(r.next()), static_cast<std::uint8_t>(r.next()), r.next()};
        if (!nbrma_ring_send(b.box, b.ring, &sender, &m)) {
            ++taken;
            if (nbrma_ring_receive(b.ring, &got) != NBRMA_RING_MESSAGE) {
                why = "an honest ring lost a message";
                return verdict::violation;
            }
            --i;
        }
    }
    if (r.one_in(4) && b.ring->consumed < 1000)  // a ring that wrapped around many times
        b.ring->consumed += NBRMA_RING_SLOTS * (1 + r.below(1000)), sender.sent = b.ring->consumed;
    const int scribbles = static_cast<int>(r.below(6));
    for (int i = 0; i < scribbles; ++i)
        scribble(r, b.ring, sender.sent);

    bool any = false;
    for (int run = 0; run <= NBRMA_RING_SLOTS + 1; ++run) {
        nbrma_ring_t before;
        std::memcpy(&before, b.ring, sizeof(before));
        const std::uint64_t n = before.consumed;
        nbrma_ring_msg_t msg{};
        const int rc = nbrma_ring_receive(b.ring, &msg);
        if (rc == NBRMA_RING_MESSAGE) {
            if (run == NBRMA_RING_SLOTS + 1) {
                why = "more messages taken in a row than the ring has slots: the reader would not stop";
                return verdict::violation;
            }
            const nbrma_ring_slot_t &slot = before.slot[n % NBRMA_RING_SLOTS];
            if ((slot.stamp >> 16) != n + 1 || msg.value != slot.value || msg.kind != ((slot.stamp >> 8) & 0xff) ||
                msg.arg != (slot.stamp & 0xff) || b.ring->consumed != n + 1 ||
                std::memcmp(&before.slot, &b.ring->slot, sizeof(before.slot)) != 0) {
                why = "a message taken that its stamp does not name, or the ring changed otherwise";
                return verdict::violation;
            }
            any = true;
            continue;
        }
        if (rc != NBRMA_RING_EMPTY && rc != NBRMA_RING_MALFORMED) {
            why = "receive returned " + std::to_string(rc);
            return verdict::violation;
        }
        if (std::memcmp(&before, b.ring, sizeof(before)) != 0) {
            why = "an empty or malformed ring was changed";
            return verdict::violation;
        }
        if (rc == NBRMA_RING_EMPTY && scribbles == 0 && n != sender.sent) {
            why = "an honest ring looked empty with messages in it";
            return verdict::violation;
        }
        break;
    }
    return any ? verdict::accepted : verdict::refused;
}

verdict ring_send_one(rng &r, std::string &why)
{
    ring_box b;
    nbrma_ring_sender_t sender{};
    std::deque<nbrma_ring_msg_t> unread;  // honest model: sent, not taken
    bool honest = true;
    bool any_sent = false;
    const int steps = 1 + static_cast<int>(r.below(80));
    for (int step = 0; step < steps; ++step) {
        const std::uint64_t what = r.below(10);
        if (what < 5) {
            const nbrma_ring_msg_t m{static_cast<std::uint8_t>(r.next()), static_cast<std::uint8_t>(r.next()), r.next()};
            std::uint8_t before[sizeof(nbrma_mailbox_t) + sizeof(nbrma_ring_t)];
            std::memcpy(before, b.block.get(), sizeof(before));
            const std::uint64_t n = sender.sent;
            const std::uint64_t consumed_now = b.ring->consumed;
            const std::uint64_t known_before = sender.known_consumed;
            const bool ok = nbrma_ring_send(b.box, b.ring, &sender, &m);
            if (!ok) {
                if (std::memcmp(before, b.block.get(), sizeof(before)) != 0 || sender.sent != n) {
                    why = "a refused send wrote into the mailbox";
                    return verdict::violation;
                }
                if (honest && unread.size() < NBRMA_RING_SLOTS) {
                    why = "an honest ring with room refused a message";
                    return verdict::violation;
                }
                continue;
            }
            any_sent = true;
            // The slot reused held message n - SLOTS: by the count the sender
            // read (now, or before when it had no need to read again), the
            // owner took it. A count read before may be above the owner's
            // now only if a third process moved it back since: the sender
            // trusts what the owner published when it read.
            const bool had_room = known_before <= n && n - known_before < NBRMA_RING_SLOTS;
            if (sender.known_consumed > n || n - sender.known_consumed >= NBRMA_RING_SLOTS ||
                (sender.known_consumed != consumed_now && (!had_room || sender.known_consumed != known_before))) {
                why = "message " + std::to_string(n) + " sent over an unread slot (owner's count " +
                    std::to_string(consumed_now) + ", sender's " + std::to_string(sender.known_consumed) + ")";
                return verdict::violation;
            }
            if (honest && unread.size() >= NBRMA_RING_SLOTS) {
                why = "an honest full ring took one more message";
                return verdict::violation;
            }
            const nbrma_ring_slot_t &slot = b.ring->slot[n % NBRMA_RING_SLOTS];
            if (slot.stamp != ((n + 1) << 16 | std::uint64_t{m.kind} << 8 | m.arg) || slot.value != m.value ||
                sender.sent != n + 1) {
                why = "the sent message is not in its slot";
                return verdict::violation;
            }
            unread.push_back(m);
        } else if (what < 9) {
            nbrma_ring_msg_t got{};
            const int rc = nbrma_ring_receive(b.ring, &got);
            if (honest) {
                if (unread.empty() ? rc != NBRMA_RING_EMPTY
                                   : rc != NBRMA_RING_MESSAGE || got.value != unread.front().value ||
                            got.kind != unread.front().kind || got.arg != unread.front().arg) {
                    why = "an honest ring delivered out of order, lost or invented a message";
                    return verdict::violation;
                }
                if (!unread.empty())
                    unread.pop_front();
            }
        } else {
            scribble(r, b.ring, sender.sent);
            honest = false;
        }
    }
    return any_sent ? verdict::accepted : verdict::refused;
}

}  // namespace

// --- the engine: inbound protocol events among the application's calls ---------------

namespace {

// One session is one engine behind a transport that records what the engine
// asks of it and checks it, driven by random application calls (right and
// wrong ones) and random inbound events: plausible answers to what the engine
// sent, and anything (every kind, senders inside and outside the window,
// values near the engine's counters and any 64-bit value, lock types valid
// or not). A session ends when the engine reports NBRMA_ERR_NOMEM,
// NBRMA_ERR_INTERN or a transport error: its state is undefined then, and it
// is freed.
class engine_session {
  public:
    engine_session(rng &r, std::string &why, fuzz_stats &stats) : r_(r), why_(why), stats_(stats) {}
    ~engine_session() { end(); }
    engine_session(const engine_session &) = delete;
    engine_session &operator=(const engine_session &) = delete;

    // NBRMA_FUZZ_TRACE: the calls and their codes
    static bool trace() { return config().trace; }

    verdict run();
    std::uint64_t calls_ok = 0, calls_refused = 0;

  private:
    struct record {
        int target;
        bool in_call = false;   // op_record is running: issue_op may take it now
        bool recorded = false;  // the engine accepted it
        bool taken = false;     // issued or packed
    };
    struct payload {
        bool lock;  // for apply_lock_epoch, or apply_access_epoch
        bool mine;  // packed by this engine's transport
        int from;
        std::uint64_t id;
        bool exclusive;
    };
    struct cookie {
        bool completed = false;
        bool refused = false;  // its call returned an error: it must never complete
        bool fence = false;
        std::uint64_t fence_seq = 0;
    };
    struct ticket {
        nbrma_op_ticket t;
        bool local_reported;
    };
    struct sent {
        enum kind { grant, done, lock_request, lock_release, arrival, lock_epoch, access_epoch, applied } what;
        int peer;
        std::uint64_t value;
        int lock_type;
    };
    // What "NBRMA_ERR_SYNC, NBRMA_ERR_ARG and NBRMA_ERR_RANK change nothing"
    // can be checked on.
    struct snapshot {
        std::vector<std::uint64_t> counters;
        std::size_t deferred, active, waiting_locks, shared_holders;
        int exclusive_holder;
        std::uint64_t epochs_opened, barriers, fences_reached, callbacks;
        std::uint32_t exposures;
        int pending, open, lock_attempts;
        bool operator==(const snapshot &o) const
        {
            return counters == o.counters && deferred == o.deferred && active == o.active &&
                waiting_locks == o.waiting_locks && shared_holders == o.shared_holders &&
                exclusive_holder == o.exclusive_holder && epochs_opened == o.epochs_opened && barriers == o.barriers &&
                fences_reached == o.fences_reached && callbacks == o.callbacks && exposures == o.exposures &&
                pending == o.pending && open == o.open && lock_attempts == o.lock_attempts;
        }
    };

    static engine_session &of(void *ctx)
    {
        engine_session &s = *static_cast<engine_session *>(ctx);
        ++s.callbacks_;
        return s;
    }
    void violated(const std::string &what)
    {
        if (why_.empty())
            why_ = what;
    }
    bool valid_rank(int r) const { return r >= 0 && r < nprocs_; }
    int injected(int rc_if_fine)
    {
        return fail_one_in_ && r_.one_in(fail_one_in_) ? NBRMA_ERR_TRANSPORT_BASE + 1 : rc_if_fine;
    }
    void note(typename sent::kind what, int peer, std::uint64_t value, int lock_type = 0)
    {
        if (outbox_.size() >= 64)
            outbox_.erase(outbox_.begin());
        outbox_.push_back(sent{what, peer, value, lock_type});
    }
    // The engine talks to itself through its loopback, never the transport.
    void check_peer(int peer, const char *what)
    {
        if (!valid_rank(peer) || peer == me_)
            violated(std::string(what) + " toward rank " + std::to_string(peer) + " (my rank " + std::to_string(me_) +
                     " of " + std::to_string(nprocs_) + ")");
    }
    bool epoch_active(const void *e) const
    {
        for (const nbrma::epoch *a : impl_->active_epochs())
            if (a == e)
                return true;
        return false;
    }

    static int outbound(void *ctx, typename sent::kind what, const char *name, int peer, std::uint64_t value,
                        int lock_type = 0);
    static int t_send_grant(void *ctx, int peer, std::uint64_t granted);
    static int t_send_done(void *ctx, int peer, std::uint64_t id);
    static int t_send_lock_request(void *ctx, int peer, std::uint64_t id, int lock_type);
    static int t_send_lock_release(void *ctx, int peer, std::uint64_t id);
    static int t_send_fence_arrival(void *ctx, int peer, std::uint64_t seq);
    static int t_issue_op(void *ctx, int target, void *rec, nbrma_op_ticket t);
    static void t_request_complete(void *ctx, void *c, int status);
    static int t_pack_lock_epoch(void *ctx, int peer, int lock_type, void *const *records, std::size_t n,
                                 void **out);
    static int t_send_lock_epoch(void *ctx, int peer, std::uint64_t id, int lock_type, void *p);
    static int t_apply_lock_epoch(void *ctx, int origin, void *p);
    static int t_pack_access_epoch(void *ctx, int peer, void *const *records, std::size_t n, void **out);
    static int t_send_access_epoch(void *ctx, int peer, std::uint64_t id, void *p);
    static int t_apply_access_epoch(void *ctx, int origin, void *p);
    static int t_send_access_applied(void *ctx, int origin, std::uint64_t id);
    static int t_try_lock(void *ctx, int peer, int lock_type, int *state);
    static int t_unlock(void *ctx, int peer, int lock_type);
    static void t_drop_payload(void *ctx, void *p);

    bool take_records(int peer, void *const *records, std::size_t n);
    payload *new_payload(bool lock, bool mine, int from, std::uint64_t id, bool exclusive)
    {
        payload *p = new payload{lock, mine, from, id, exclusive};
        live_.insert(p);
        return p;
    }
    // Applied or dropped: the transport frees it, once.
    bool release_payload(void *raw, const char *how)
    {
        payload *p = static_cast<payload *>(raw);
        if (!p || live_.erase(p) == 0) {
            violated(std::string(how) + " of a payload the engine does not hold (twice, refused, or never given)");
            return false;
        }
        delete p;
        return true;
    }

    bool create();
    void end();
    bool step();  // true: the session ended
    int application_call(cookie *&c, record *&rec);
    int inbound_event();
    int fence_arrival(int from, std::uint64_t value);
    int plausible_event();
    int pick_from();
    std::uint64_t pick_value(int from);
    int pick_lock_type();
    cookie *new_cookie()
    {
        if (r_.one_in(8))
            return nullptr;
        cookies_.emplace_back();
        return &cookies_.back();
    }
    std::vector<int> pick_group();
    snapshot take_snapshot() const;
    bool after_call(int rc, const snapshot &before, cookie *c, record *rec);

    rng &r_;
    std::string &why_;
    fuzz_stats &stats_;
    nbrma_engine *handle_ = nullptr;
    nbrma::engine *impl_ = nullptr;
    int me_ = 0, nprocs_ = 1;
    unsigned fail_one_in_ = 0;  // transport failures injected; 0: none
    bool local_reports_ = false;
    std::deque<record> records_;
    std::unordered_set<payload *> live_;  // the engine's: to be applied or dropped, once
    std::deque<cookie> cookies_;
    std::vector<ticket> tickets_;
    std::vector<sent> outbox_;
    std::uint64_t fences_opened_ = 0;
    std::unordered_map<std::uint64_t, std::vector<int>> arrivals_;  // fence -> arrivals accepted, per peer
    std::uint64_t callbacks_ = 0;
    bool mismatch_pending_ = false;  // t_issue_op: this call must return NBRMA_ERR_INTERN
};

// Every protocol message the engine sends: to a peer (never to itself),
// recorded so that plausible answers can follow.
int engine_session::outbound(void *ctx, typename sent::kind what, const char *name, int peer,
                             std::uint64_t value, int lock_type)
{
    engine_session &s = of(ctx);
    s.check_peer(peer, name);
    s.note(what, peer, value, lock_type);
    return s.injected(NBRMA_OK);
}

int engine_session::t_send_grant(void *ctx, int peer, std::uint64_t granted)
{
    return outbound(ctx, sent::grant, "send_grant", peer, granted);
}

int engine_session::t_send_done(void *ctx, int peer, std::uint64_t id)
{
    return outbound(ctx, sent::done, "send_done", peer, id);
}

int engine_session::t_send_lock_request(void *ctx, int peer, std::uint64_t id, int lock_type)
{
    if (lock_type != NBRMA_LOCK_EXCLUSIVE && lock_type != NBRMA_LOCK_SHARED)
        of(ctx).violated("send_lock_request with lock type " + std::to_string(lock_type));
    return outbound(ctx, sent::lock_request, "send_lock_request", peer, id, lock_type);
}

int engine_session::t_send_lock_release(void *ctx, int peer, std::uint64_t id)
{
    return outbound(ctx, sent::lock_release, "send_lock_release", peer, id);
}

int engine_session::t_send_fence_arrival(void *ctx, int peer, std::uint64_t seq)
{
    return outbound(ctx, sent::arrival, "send_fence_arrival", peer, seq);
}

int engine_session::t_issue_op(void *ctx, int target, void *rec, nbrma_op_ticket t)
{
    engine_session &s = of(ctx);
    record *op = static_cast<record *>(rec);
    if (!op || (!op->recorded && !op->in_call) || op->taken || op->target != target || t.target != target ||
        t.count != 1) {
        s.violated("issue_op of an operation not recorded toward that target, or twice");
        return NBRMA_OK;
    }
    op->taken = true;
    const nbrma::epoch *e = static_cast<const nbrma::epoch *>(t.epoch);
    if (!s.epoch_active(e) || t.slot >= e->slots.size() || !e->slots[t.slot].granted ||
        (e->slots[t.slot].rank != target && e->slots[t.slot].rank != nbrma::fence_slot_rank)) {
        s.violated("operation issued from an epoch that is not active, or toward a target that did not grant");
        return NBRMA_OK;
    }
    const nbrma::target_slot &slot = e->slots[t.slot];
    // What can be checked here of my own rank's side: an operation toward
    // myself needs my own exposure with its id (PSCW) or my own lock held.
    if (target == s.me_) {
        if (e->kind == nbrma::epoch_kind::access && !s.impl_->exposure_expecting(s.me_, slot.match_id))
            s.violated("PSCW operation toward my own rank without my exposure with its access id");
        if ((e->kind == nbrma::epoch_kind::lock || e->kind == nbrma::epoch_kind::lock_all) && !e->nocheck &&
            !slot.lock_word &&
            (!s.impl_->locks().holds(s.me_) || (e->exclusive && s.impl_->locks().exclusive_holder() != s.me_))) {
            // Access ids are shared by PSCW and locks: a lock toward myself
            // that an exposure of mine to myself granted (a post without its
            // start, then a lock: erroneous) must be refused in this call,
            // when its request reaches my own lock manager.
            if (s.impl_->exposure_expecting(s.me_, slot.match_id))
                s.mismatch_pending_ = true;
            else
                s.violated("passive operation toward my own rank without holding my own lock");
        }
    }
    const int rc = s.injected(NBRMA_OK);
    if (rc == NBRMA_OK)
        s.tickets_.push_back(ticket{t, false});
    return rc;
}

void engine_session::t_request_complete(void *ctx, void *raw, int status)
{
    engine_session &s = of(ctx);
    cookie *c = static_cast<cookie *>(raw);
    if (!c) {
        s.violated("request_complete with a NULL cookie");
        return;
    }
    if (c->completed || c->refused || status != NBRMA_OK)
        s.violated(c->completed ? "a request completed twice"
                                : c->refused ? "the request of a refused call completed" : "a request failed");
    c->completed = true;
    // Rule 5 seen from outside: a fence passes once every message of its
    // barrier came in from the peer that sends it, not a duplicate in place
    // of another message or another peer's.
    if (c->fence) {
        for (int j = 0; j < nbrma_fence_rounds(s.nprocs_); ++j)
            for (int i = 1; nbrma_fence_index_valid(s.nprocs_, j, i); ++i) {
                const int p = nbrma_fence_from(s.me_, s.nprocs_, j, i);
                const std::vector<int> &in = s.arrivals_[nbrma_fence_token(c->fence_seq, j, i)];
                if (in.size() <= static_cast<std::size_t>(p) || in[static_cast<std::size_t>(p)] == 0)
                    s.violated("fence " + std::to_string(c->fence_seq) + " passed without message " +
                               std::to_string(j) + "." + std::to_string(i) + " from rank " + std::to_string(p) +
                               " (" + std::to_string(s.nprocs_) + " processes)");
            }
    }
}

bool engine_session::take_records(int peer, void *const *records, std::size_t n)
{
    for (std::size_t i = 0; i < n; ++i) {
        const record *op = static_cast<const record *>(records[i]);
        if (!op || (!op->recorded && !op->in_call) || op->taken || op->target != peer) {
            violated("an operation packed that was not recorded toward that peer, or was issued already");
            return false;
        }
    }
    for (std::size_t i = 0; i < n; ++i)
        static_cast<record *>(records[i])->taken = true;
    return true;
}

int engine_session::t_pack_lock_epoch(void *ctx, int peer, int lock_type, void *const *records, std::size_t n,
                                      void **out)
{
    engine_session &s = of(ctx);
    *out = nullptr;
    if (!s.valid_rank(peer) || (lock_type != NBRMA_LOCK_EXCLUSIVE && lock_type != NBRMA_LOCK_SHARED))
        s.violated("pack_lock_epoch toward a rank outside the window or with an invalid lock type");
    const int rc = s.injected(NBRMA_OK);
    if (rc != NBRMA_OK || s.r_.one_in(4))
        return rc;  // declined
    if (s.take_records(peer, records, n))
        *out = s.new_payload(true, true, s.me_, 0, lock_type == NBRMA_LOCK_EXCLUSIVE);
    return NBRMA_OK;
}

int engine_session::t_send_lock_epoch(void *ctx, int peer, std::uint64_t id, int lock_type, void *p)
{
    engine_session &s = of(ctx);
    s.check_peer(peer, "send_lock_epoch");
    s.release_payload(p, "send_lock_epoch");  // sent: the transport frees it
    s.note(sent::lock_epoch, peer, id, lock_type);
    return s.injected(NBRMA_OK);
}

// At the grant, under the lock: the lock is the origin's now.
int engine_session::t_apply_lock_epoch(void *ctx, int origin, void *raw)
{
    engine_session &s = of(ctx);
    const payload *p = static_cast<const payload *>(raw);
    if (p && s.live_.count(const_cast<payload *>(p))) {
        if (!p->lock || p->from != origin)
            s.violated("a payload applied as a whole lock epoch of another origin, or not one");
        else if (!s.impl_->locks().holds(origin) ||
                 (p->exclusive && s.impl_->locks().exclusive_holder() != origin))
            s.violated("a whole lock epoch applied without its origin holding the lock");
    }
    s.release_payload(raw, "apply_lock_epoch");
    return s.injected(NBRMA_OK);
}

int engine_session::t_pack_access_epoch(void *ctx, int peer, void *const *records, std::size_t n, void **out)
{
    engine_session &s = of(ctx);
    *out = nullptr;
    s.check_peer(peer, "pack_access_epoch");
    const int rc = s.injected(NBRMA_OK);
    if (rc != NBRMA_OK || s.r_.one_in(4))
        return rc;
    if (s.take_records(peer, records, n))
        *out = s.new_payload(false, true, s.me_, 0, false);
    return NBRMA_OK;
}

int engine_session::t_send_access_epoch(void *ctx, int peer, std::uint64_t id, void *p)
{
    engine_session &s = of(ctx);
    s.check_peer(peer, "send_access_epoch");
    s.release_payload(p, "send_access_epoch");
    s.note(sent::access_epoch, peer, id);
    return s.injected(NBRMA_OK);
}

// Applied once my exposure toward that origin with that id is granted.
int engine_session::t_apply_access_epoch(void *ctx, int origin, void *raw)
{
    engine_session &s = of(ctx);
    const payload *p = static_cast<const payload *>(raw);
    if (p && s.live_.count(const_cast<payload *>(p))) {
        if (p->lock || p->mine || p->from != origin)
            s.violated("a payload applied as a pulled access epoch of another origin, or not one");
        else if (!s.impl_->exposure_expecting(origin, p->id))
            s.violated("a pulled access epoch applied without my exposure with its id");
    }
    s.release_payload(raw, "apply_access_epoch");
    return s.injected(NBRMA_OK);
}

int engine_session::t_send_access_applied(void *ctx, int origin, std::uint64_t id)
{
    engine_session &s = of(ctx);
    s.check_peer(origin, "send_access_applied");
    s.note(sent::applied, origin, id);
    return s.injected(NBRMA_OK);
}

// Lock words are memory other processes write too: any answer, even one no
// transport gives (the engine must refuse it).
int engine_session::t_try_lock(void *ctx, int peer, int lock_type, int *state)
{
    engine_session &s = of(ctx);
    if (!s.valid_rank(peer) || (lock_type != NBRMA_LOCK_EXCLUSIVE && lock_type != NBRMA_LOCK_SHARED))
        s.violated("try_lock toward a rank outside the window or with an invalid lock type");
    static const int answers[] = {NBRMA_LOCK_TAKEN, NBRMA_LOCK_TAKEN, NBRMA_LOCK_BUSY, NBRMA_LOCK_BY_MESSAGE, 7};
    *state = answers[s.r_.below(s.r_.one_in(16) ? 5 : 4)];
    return s.injected(NBRMA_OK);
}

int engine_session::t_unlock(void *ctx, int peer, int lock_type)
{
    engine_session &s = of(ctx);
    if (!s.valid_rank(peer) || (lock_type != NBRMA_LOCK_EXCLUSIVE && lock_type != NBRMA_LOCK_SHARED))
        s.violated("unlock toward a rank outside the window or with an invalid lock type");
    return s.injected(NBRMA_OK);
}

// Freeing a refused message's payload is no protocol action: not counted
// among the callbacks that a refused call must not make.
void engine_session::t_drop_payload(void *ctx, void *p)
{
    static_cast<engine_session *>(ctx)->release_payload(p, "drop_payload");
}

bool engine_session::create()
{
    switch (r_.below(10)) {
    case 0:
        nprocs_ = 1;
        break;
    case 1:
    case 2:
    case 3:
        nprocs_ = 2;
        break;
    case 4:
    case 5:
    case 6:
        nprocs_ = 3;
        break;
    default:
        nprocs_ = 4 + static_cast<int>(r_.below(2));
    }
    me_ = static_cast<int>(r_.below(static_cast<std::uint64_t>(nprocs_)));
    fail_one_in_ = r_.one_in(8) ? 20 + static_cast<unsigned>(r_.below(60)) : 0;
    nbrma_transport t{};
    t.ctx = this;
    t.send_grant = t_send_grant;
    t.send_done = t_send_done;
    t.send_lock_request = t_send_lock_request;
    t.send_lock_release = t_send_lock_release;
    t.send_fence_arrival = t_send_fence_arrival;
    t.issue_op = t_issue_op;
    t.request_complete = t_request_complete;
    // the optional groups, now and then incomplete
    if (r_.one_in(2)) {
        t.pack_lock_epoch = r_.one_in(16) ? nullptr : t_pack_lock_epoch;
        t.send_lock_epoch = r_.one_in(16) ? nullptr : t_send_lock_epoch;
        t.apply_lock_epoch = r_.one_in(16) ? nullptr : t_apply_lock_epoch;
    }
    if (r_.one_in(2)) {
        t.pack_access_epoch = r_.one_in(16) ? nullptr : t_pack_access_epoch;
        t.send_access_epoch = r_.one_in(16) ? nullptr : t_send_access_epoch;
        t.apply_access_epoch = r_.one_in(16) ? nullptr : t_apply_access_epoch;
        t.send_access_applied = r_.one_in(16) ? nullptr : t_send_access_applied;
    }
    if (r_.one_in(6)) {
        t.try_lock = t_try_lock;
        t.unlock = t_unlock;
    }
    t.drop_payload = t_drop_payload;

    // wrong creations first, now and then: refused, nothing allocated
    if (r_.one_in(16)) {
        nbrma_engine *e = nullptr;
        const int bad_rank = r_.one_in(2) ? -1 : nprocs_;
        if (nbrma_engine_create(bad_rank, nprocs_, &t, &e) != NBRMA_ERR_RANK ||
            nbrma_engine_create(0, r_.one_in(2) ? 0 : -3, &t, &e) != NBRMA_ERR_ARG || e != nullptr) {
            violated("nbrma_engine_create accepted a rank outside the window or no processes");
            return false;
        }
    }
    if (nbrma_engine_create(me_, nprocs_, &t, &handle_) != NBRMA_OK) {
        violated("nbrma_engine_create failed");
        return false;
    }
    impl_ = &nbrma::engine_of(handle_);
    if (r_.one_in(3) && nbrma_set_ordered_notifications(handle_, 1) != NBRMA_OK)
        violated("nbrma_set_ordered_notifications failed");
    if (r_.one_in(2) && nbrma_set_reorder_flags(handle_, static_cast<unsigned>(r_.below(16))) != NBRMA_OK)
        violated("nbrma_set_reorder_flags failed");
    if (trace())
        std::fprintf(stderr, "[engine] rank %d of %d, transport failures 1 in %u\n", me_, nprocs_, fail_one_in_);
    return why_.empty();
}

// The engine is freed: whatever payload it still held it drops, and every
// payload it was given was applied or dropped exactly once.
void engine_session::end()
{
    if (!handle_)
        return;
    nbrma_engine_free(handle_);
    handle_ = nullptr;
    impl_ = nullptr;
    if (!live_.empty())
        violated(std::to_string(live_.size()) + " payload(s) neither applied nor dropped by the engine: leaked");
    for (payload *p : live_)
        delete p;
    live_.clear();
}

engine_session::snapshot engine_session::take_snapshot() const
{
    snapshot s;
    for (int p = 0; p < nprocs_; ++p) {
        const nbrma::match_triple &t = impl_->triple(p);
        s.counters.push_back(t.accesses_requested);
        s.counters.push_back(t.exposures_opened);
        s.counters.push_back(t.granted());
    }
    s.deferred = impl_->deferred_count();
    s.active = impl_->active_count();
    s.waiting_locks = impl_->locks().waiting_count();
    s.shared_holders = impl_->locks().shared_holder_count();
    s.exclusive_holder = impl_->locks().exclusive_holder();
    s.epochs_opened = impl_->epochs_opened();
    s.barriers = impl_->fence_barriers_passed();
    s.fences_reached = impl_->fences_reached();
    s.callbacks = callbacks_;
    s.exposures = impl_->active_exposure_count();
    s.pending = nbrma_has_pending_epochs(handle_);
    s.open = nbrma_has_open_epochs(handle_);
    s.lock_attempts = nbrma_lock_attempts_pending(handle_);
    return s;
}

// Every call returns a code; the calls that refuse change nothing, complete
// no request and issue nothing; the others may end the session.
bool engine_session::after_call(int rc, const snapshot &before, cookie *c, record *rec)
{
    if (trace())
        std::fprintf(stderr, " -> %d [locks waiting %zu, shared %zu, exclusive %d; epochs active %zu, deferred %zu]\n",
                     rc, impl_->locks().waiting_count(), impl_->locks().shared_holder_count(),
                     impl_->locks().exclusive_holder(), impl_->active_count(), impl_->deferred_count());
    const bool fatal = rc == NBRMA_ERR_NOMEM || rc == NBRMA_ERR_INTERN || rc >= NBRMA_ERR_TRANSPORT_BASE;
    if (rc < 0 || (rc > NBRMA_ERR_INTERN && rc < NBRMA_ERR_TRANSPORT_BASE) ||
        (rc >= NBRMA_ERR_TRANSPORT_BASE && (rc != NBRMA_ERR_TRANSPORT_BASE + 1 || !fail_one_in_)))
        violated("unknown return code " + std::to_string(rc));
    if (rec) {
        rec->in_call = false;
        rec->recorded = rc == NBRMA_OK;
    }
    rc == NBRMA_OK ? ++calls_ok : ++calls_refused;
    if (mismatch_pending_ && rc != NBRMA_ERR_INTERN && rc < NBRMA_ERR_TRANSPORT_BASE)
        violated("a lock toward myself that my own exposure granted was not reported as a protocol error");
    mismatch_pending_ = false;
    if (fatal)
        return true;
    if (rc != NBRMA_OK) {
        if (c && c->completed)
            violated("the request of a call that returned " + std::to_string(rc) + " completed");
        if (c)
            c->refused = true;
        if (rec && rec->taken)
            violated("an operation whose recording was refused was issued");
        if (!(take_snapshot() == before))
            violated(std::string("a call that returned ") + nbrma_strerror(rc) + " changed the engine");
    }
    // a lock is held exclusively by one or shared by any, never both
    const nbrma::lock_manager &locks = impl_->locks();
    if (locks.exclusive_holder() >= nprocs_ || (locks.exclusive_holder() >= 0 && locks.shared_holder_count() != 0))
        violated("the window lock is held exclusively and shared at once");
    return !why_.empty();
}

int engine_session::pick_from()
{
    switch (r_.below(20)) {
    case 0:
        return -1;
    case 1:
        return nprocs_;
    case 2:
        return INT_MIN;
    case 3:
        return INT_MAX;
    case 4:
        return static_cast<int>(r_.next());
    case 5:
    case 6:
        return me_;
    default:
        return static_cast<int>(r_.below(static_cast<std::uint64_t>(nprocs_)));
    }
}

// Values near the engine's counters, where the checks are, and anything.
std::uint64_t engine_session::pick_value(int from)
{
    const nbrma::match_triple *t = valid_rank(from) ? &impl_->triple(from) : nullptr;
    const std::uint64_t near = r_.below(3) - 1;  // -1, 0, +1
    switch (r_.below(14)) {
    case 0:
        return 0;
    case 1:
        return 1;
    case 2:
        return UINT64_MAX - r_.below(2);
    case 3:
        return r_.next();
    case 4:
        return std::uint64_t{1} << 63;
    case 5:
    case 6:
        return t ? t->accesses_requested + near : r_.below(4);
    case 7:
    case 8:
        return t ? t->exposures_opened + 1 + near : r_.below(4);
    case 9:
        return t ? t->granted() + near : r_.below(4);
    case 10:
    case 11:
        return impl_->fence_barriers_passed() + r_.below(4);
    default:
        return r_.below(6);
    }
}

int engine_session::pick_lock_type()
{
    if (!r_.one_in(6))
        return r_.one_in(2) ? NBRMA_LOCK_EXCLUSIVE : NBRMA_LOCK_SHARED;
    static const int odd[] = {0, -1, 1, NBRMA_LOCK_EXCLUSIVE - 1, NBRMA_LOCK_SHARED + 1, INT_MIN, INT_MAX};
    return r_.one_in(8) ? static_cast<int>(r_.next()) : odd[r_.below(7)];
}

std::vector<int> engine_session::pick_group()
{
    std::vector<int> group;
    for (int p = 0; p < nprocs_; ++p)
        if (r_.one_in(2))
            group.push_back(p);
    for (std::size_t i = group.size(); i > 1; --i)
        std::swap(group[i - 1], group[r_.below(i)]);
    if (r_.one_in(16))
        group.push_back(pick_from());  // outside the window, or a duplicate
    return group;
}

int engine_session::application_call(cookie *&c, record *&rec)
{
    const int target = r_.one_in(8) ? pick_from() : static_cast<int>(r_.below(static_cast<std::uint64_t>(nprocs_)));
    const int assert_bits = r_.one_in(4) ? static_cast<int>(r_.next() & 0x7c00)
                                         : (r_.one_in(3) ? NBRMA_MODE_NOSUCCEED : 0) |
            (r_.one_in(4) ? NBRMA_MODE_NOCHECK : 0);
    switch (r_.below(26)) {
    case 0:
    case 1: {
        c = new_cookie();
        if (c) {
            c->fence = true;
            c->fence_seq = fences_opened_ + 1;
        }
        if (trace())
            std::fprintf(stderr, "ifence(%#x)", assert_bits);
        const int rc = nbrma_ifence(handle_, assert_bits, c);
        if (rc == NBRMA_OK)
            ++fences_opened_;
        return rc;
    }
    case 2:
    case 3: {
        const std::vector<int> group = pick_group();
        c = new_cookie();
        const int n = r_.one_in(32) ? -1 : static_cast<int>(group.size());
        const int *ranks = r_.one_in(32) ? nullptr : group.data();
        if (trace())
            std::fprintf(stderr, "%s(%d ranks)", r_.state & 1 ? "ipost" : "istart", n);
        return (r_.next() & 1) ? nbrma_ipost(handle_, ranks, n, assert_bits, c)
                               : nbrma_istart(handle_, ranks, n, assert_bits, c);
    }
    case 4:
        c = new_cookie();
        if (trace())
            std::fprintf(stderr, "icomplete");
        return nbrma_icomplete(handle_, c);
    case 5:
        c = new_cookie();
        if (trace())
            std::fprintf(stderr, "iwait");
        return nbrma_iwait(handle_, c);
    case 6: {
        int flag = 7;
        if (trace())
            std::fprintf(stderr, "test");
        const int rc = nbrma_test(handle_, r_.one_in(16) ? nullptr : &flag);
        if (rc == NBRMA_OK && flag != 0 && flag != 1)
            violated("nbrma_test left its flag unset");
        return rc;
    }
    case 7:
    case 8: {
        c = new_cookie();
        const int lock_type = pick_lock_type();
        if (trace())
            std::fprintf(stderr, "ilock(%d, %d, %#x)", lock_type, target, assert_bits);
        return nbrma_ilock(handle_, lock_type, target, assert_bits, c);
    }
    case 9:
    case 10:
        c = new_cookie();
        if (trace())
            std::fprintf(stderr, "iunlock(%d)", target);
        return nbrma_iunlock(handle_, target, c);
    case 11:
        c = new_cookie();
        if (trace())
            std::fprintf(stderr, "ilock_all(%#x)", assert_bits);
        return nbrma_ilock_all(handle_, assert_bits, c);
    case 12:
        c = new_cookie();
        if (trace())
            std::fprintf(stderr, "iunlock_all");
        return nbrma_iunlock_all(handle_, c);
    case 13:
    case 14:
    case 15: {
        records_.push_back(record{target});
        rec = &records_.back();
        rec->in_call = true;
        if (trace())
            std::fprintf(stderr, "op_record(%d)", target);
        return nbrma_op_record(handle_, target, rec);
    }
    case 16: {
        const std::uint64_t count = r_.below(4);
        nbrma_op_ticket t{};
        int issued = 7;
        if (trace())
            std::fprintf(stderr, "op_issue_direct(%d, %llu)", target, static_cast<unsigned long long>(count));
        const int rc = nbrma_op_issue_direct(handle_, target, count, r_.one_in(32) ? nullptr : &t, &issued);
        if (rc == NBRMA_OK && issued == 1) {
            if (t.target != target || t.count != count || !epoch_active(t.epoch))
                violated("a direct issue's ticket does not name its target, count or an active epoch");
            tickets_.push_back(ticket{t, false});
        } else if (rc == NBRMA_OK && issued != 0) {
            violated("nbrma_op_issue_direct left *issued unset");
        }
        return rc;
    }
    case 17:
    case 18:
    case 19: {
        if (tickets_.empty())
            break;
        const std::size_t i = r_.below(tickets_.size());
        const ticket t = tickets_[i];
        // The glue reports the ticket back whenever its operations complete:
        // the epoch must still be there.
        if (!epoch_active(t.t.epoch)) {
            violated("an epoch ended with operations outstanding: their report would reach freed memory");
            return NBRMA_OK;
        }
        if (local_reports_ && !t.local_reported) {
            tickets_[i].local_reported = true;
            if (trace())
                std::fprintf(stderr, "op_local_completed");
            return nbrma_op_local_completed(handle_, t.t);
        }
        tickets_[i] = tickets_.back();
        tickets_.pop_back();
        // rule R10: the glue reports an operation performed at return so
        // (never after a local report: it has none)
        if (!t.local_reported && r_.one_in(3)) {
            if (trace())
                std::fprintf(stderr, "op_performed");
            return nbrma_op_performed(handle_, t.t);
        }
        if (trace())
            std::fprintf(stderr, "op_completed");
        return nbrma_op_completed(handle_, t.t);
    }
    case 20: {
        c = new_cookie();
        const int rank = r_.one_in(3) ? NBRMA_ALL_RANKS : target;
        if (trace())
            std::fprintf(stderr, "iflush(%d)", rank);
        return nbrma_iflush(handle_, rank, static_cast<int>(r_.below(2)), c);
    }
    case 21: {
        int ready = 7;
        const int rank = r_.one_in(3) ? NBRMA_ALL_RANKS : target;
        const int rc = nbrma_flush_ready(handle_, rank, static_cast<int>(r_.below(2)), &ready);
        if (ready != 0 && ready != 1)
            violated("nbrma_flush_ready left *ready unset");
        if (trace())
            std::fprintf(stderr, "flush_ready(%d)", rank);
        return rc;
    }
    case 22: {
        const unsigned flags = static_cast<unsigned>(r_.below(r_.one_in(8) ? 64 : 16));
        if (trace())
            std::fprintf(stderr, "set_reorder_flags(%#x)", flags);
        return nbrma_set_reorder_flags(handle_, flags);
    }
    case 23: {
        const int enabled = static_cast<int>(r_.below(2));
        if (trace())
            std::fprintf(stderr, "set_local_completion_reports(%d)", enabled);
        const int rc = nbrma_set_local_completion_reports(handle_, enabled);
        if (rc == NBRMA_OK)
            local_reports_ = enabled;
        return rc;
    }
    case 24: {
        std::size_t deferred = 0, active = 0;
        void *base = nullptr;
        std::size_t bytes = 0;
        if (nbrma_epoch_counts(handle_, &deferred, &active) != NBRMA_OK ||
            nbrma_counter_memory(handle_, &base, &bytes) != NBRMA_OK ||
            bytes != static_cast<std::size_t>(nprocs_) * sizeof(nbrma::match_triple))
            violated("a query failed");
        if (trace())
            std::fprintf(stderr, "queries");
        return NBRMA_OK;
    }
    default:
        break;
    }
    int made = 7;
    if (trace())
        std::fprintf(stderr, "progress");
    const int rc = nbrma_progress(handle_, r_.one_in(8) ? nullptr : &made);
    return rc;
}

// The arrival counts from the call on: the fence it completes passes inside
// the call, before it returns. A refused arrival never counted.
int engine_session::fence_arrival(int from, std::uint64_t value)
{
    int *counted = nullptr;
    if (valid_rank(from)) {
        std::vector<int> &in = arrivals_[value];
        in.resize(static_cast<std::size_t>(nprocs_));
        counted = &in[static_cast<std::size_t>(from)];
        ++*counted;
    }
    const int rc = nbrma_on_fence_arrival(handle_, from, value);
    if (rc != NBRMA_OK && counted)
        --*counted;
    return rc;
}

int engine_session::inbound_event()
{
    const int from = pick_from();
    const std::uint64_t value = pick_value(from);
    const int lock_type = pick_lock_type();
    const auto kind = r_.below(8);
    if (trace())
        std::fprintf(stderr, "event %d from %d value %llu lock type %d", static_cast<int>(kind), from,
                     static_cast<unsigned long long>(value), lock_type);
    switch (kind) {
    case 0:
        return nbrma_on_grant(handle_, from, value);
    case 1:
        return nbrma_on_done(handle_, from, value);
    case 2:
        return nbrma_on_lock_request(handle_, from, value, lock_type);
    case 3: {
        payload *p = r_.one_in(32) ? nullptr : new_payload(true, false, from, value, lock_type == NBRMA_LOCK_EXCLUSIVE);
        return nbrma_on_lock_epoch(handle_, from, value, lock_type, p);
    }
    case 4:
        return nbrma_on_lock_release(handle_, from, value);
    case 5: {
        payload *p = r_.one_in(32) ? nullptr : new_payload(false, false, from, value, false);
        return nbrma_on_access_epoch(handle_, from, value, p);
    }
    case 6:
        return nbrma_on_access_applied(handle_, from, value);
    default:
        return fence_arrival(from, value);
    }
}

// What well-behaved peers would send: answers to what the engine sent, and
// their own requests, so that sessions get deep into the protocol.
int engine_session::plausible_event()
{
    if (nprocs_ == 1)
        return inbound_event();
    int peer = static_cast<int>(r_.below(static_cast<std::uint64_t>(nprocs_ - 1)));
    peer += peer >= me_;
    int what = static_cast<int>(r_.below(8));
    std::uint64_t value = 0;
    int lock_type = r_.one_in(2) ? NBRMA_LOCK_EXCLUSIVE : NBRMA_LOCK_SHARED;
    if (!outbox_.empty() && r_.one_in(2)) {
        const std::size_t i = r_.below(outbox_.size());
        const sent m = outbox_[i];
        if (!r_.one_in(8)) {  // an answer now and then duplicated
            outbox_[i] = outbox_.back();
            outbox_.pop_back();
        }
        peer = m.peer;
        value = m.value;
        switch (m.what) {
        case sent::lock_request:
        case sent::lock_epoch:
            what = 0;  // the grant
            break;
        case sent::access_epoch:
            what = r_.one_in(2) ? 6 : 0;  // applied, or the grant
            break;
        case sent::arrival:
            what = 7;  // the same message of that fence from the peer it comes from
            peer = nbrma_fence_from(me_, nprocs_, nbrma_fence_token_round(value), nbrma_fence_token_index(value));
            break;
        case sent::grant:
            what = static_cast<int>(r_.below(4)) + 1;  // done, lock request, release, pulled epoch
            value += what == 2 ? 1 : 0;
            what = what == 4 ? 5 : what == 3 ? 4 : what;
            break;
        default:
            what = 2;
            value = impl_->triple(peer).exposures_opened + 1;
            break;
        }
    } else {
        const nbrma::match_triple &t = impl_->triple(peer);
        switch (what) {
        case 0:
            value = t.accesses_requested;
            break;
        case 1:
        case 4:
        case 6:
            value = t.exposures_opened;
            break;
        case 7: {  // a message of the next fence or the one after, from its sender
            const int round = static_cast<int>(r_.below(static_cast<std::uint64_t>(nbrma_fence_rounds(nprocs_))));
            int index = 1;
            while (nbrma_fence_index_valid(nprocs_, round, index + 1) && r_.one_in(2))
                ++index;
            peer = nbrma_fence_from(me_, nprocs_, round, index);
            value = nbrma_fence_token(impl_->fence_barriers_passed() + 1 + r_.below(2), round, index);
            break;
        }
        default:
            value = t.exposures_opened + 1;
            break;
        }
    }
    if (trace())
        std::fprintf(stderr, "plausible %d from %d value %llu", what, peer, static_cast<unsigned long long>(value));
    switch (what) {
    case 0:
        return nbrma_on_grant(handle_, peer, value);
    case 1:
        return nbrma_on_done(handle_, peer, value);
    case 2:
        return r_.one_in(3) ? nbrma_on_lock_epoch(handle_, peer, value, lock_type,
                                                  new_payload(true, false, peer, value, lock_type == NBRMA_LOCK_EXCLUSIVE))
                            : nbrma_on_lock_request(handle_, peer, value, lock_type);
    case 3:
    case 4:
        return nbrma_on_lock_release(handle_, peer, value);
    case 5:
        return nbrma_on_access_epoch(handle_, peer, value, new_payload(false, false, peer, value, false));
    case 6:
        return nbrma_on_access_applied(handle_, peer, value);
    default:
        return fence_arrival(peer, value);
    }
}

bool engine_session::step()
{
    const snapshot before = take_snapshot();
    cookie *c = nullptr;
    record *rec = nullptr;
    const std::uint64_t what = r_.below(20);
    int rc;
    if (what < 7)
        rc = application_call(c, rec);
    else if (what < 14)
        rc = plausible_event();
    else
        rc = inbound_event();
    return after_call(rc, before, c, rec);
}

verdict engine_session::run()
{
    if (!create())
        return verdict::violation;
    const int steps = 1 + static_cast<int>(r_.below(64));
    bool ended = false;
    for (int i = 0; i < steps && !ended; ++i)
        ended = step();
    stats_.extra += calls_ok + calls_refused;
    end();
    if (!why_.empty())
        return verdict::violation;
    return ended ? verdict::refused : verdict::accepted;
}

std::vector<bytes_t> no_pool;

}  // namespace

// --- the tests: one per decoder ---------------------------------------------------------

namespace {

// A decoder fuzzed from mutations of valid encodings (a pool per decoder).
void fuzz_from_pool(const char *name, std::uint64_t decoder, bytes_t (*valid)(rng &),
                    verdict (*one)(rng &, std::string &, const std::vector<bytes_t> &))
{
    const std::vector<bytes_t> pool = make_pool(decoder, valid);
    run_fuzz(name, decoder, config().inputs,
             [&](rng &r, std::uint64_t, std::string &why, fuzz_stats &) { return one(r, why, pool); });
}

}  // namespace

TEST(Fuzz, WholeLockEpoch)
{
    fuzz_from_pool("WholeLockEpoch", 1, valid_whole_epoch, whole_epoch_one);
}

TEST(Fuzz, PulledAccessEpoch)
{
    fuzz_from_pool("PulledAccessEpoch", 2, valid_pulled_epoch, pulled_epoch_one);
}

TEST(Fuzz, MemoryHandle)
{
    fuzz_from_pool("MemoryHandle", 3, valid_handle, memhandle_one);
}

TEST(Fuzz, RkeyMessage)
{
    fuzz_from_pool("RkeyMessage", 4, valid_rkey_msg, rkey_one);
}

TEST(Fuzz, ControlMessage)
{
    fuzz_from_pool("ControlMessage", 5, valid_ctrl_msg, ctrl_one);
}

TEST(Fuzz, MailboxRingReceive)
{
    run_fuzz("MailboxRingReceive", 6, config().inputs,
             [&](rng &r, std::uint64_t, std::string &why, fuzz_stats &) { return ring_receive_one(r, why); });
}

TEST(Fuzz, MailboxRingSend)
{
    run_fuzz("MailboxRingSend", 7, config().inputs,
             [&](rng &r, std::uint64_t, std::string &why, fuzz_stats &) { return ring_send_one(r, why); });
}

// An input is one session: one engine, up to 64 calls.
TEST(Fuzz, EngineEvents)
{
    std::uint64_t ok = 0, refused = 0;
    run_fuzz("EngineEvents", 8, config().engine_inputs, [&](rng &r, std::uint64_t, std::string &why, fuzz_stats &stats) {
        if (engine_session::trace())
            std::fprintf(stderr, "[engine] session\n");
        engine_session session(r, why, stats);
        const verdict v = session.run();
        ok += session.calls_ok;
        refused += session.calls_refused;
        return v;
    });
    std::printf("[fuzz] EngineEvents     calls: %llu returned NBRMA_OK, %llu an error\n",
                static_cast<unsigned long long>(ok), static_cast<unsigned long long>(refused));
    ::testing::Test::RecordProperty("calls_ok", std::to_string(ok));
    ::testing::Test::RecordProperty("calls_refused", std::to_string(refused));
}
