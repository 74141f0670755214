// Decoders of bytes that come from another process or from the user, tested
// without MPI: the whole-lock-epoch payload (formats/whole_epoch_codec.c),
// memory handles (formats/memhandle_codec.c; also for a given window and
// owner), rkey-cache messages (formats/rkey_wire.c; also packed),
// notifications (formats/notify_wire.c) and pulled access epochs
// (formats/pulled_epoch_codec.c). Each decoder gets valid input, each kind of
// malformed input, and a seeded random mutator; a malformed input must be
// refused, and whatever is accepted must stay inside the bytes received.

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

extern "C" {
#include "memhandle_codec.h"
#include "pulled_epoch_codec.h"
#include "rkey_wire.h"
#include "notify_wire.h"
#include "whole_epoch_codec.h"
}

namespace {

// Element sizes as the receiving side accepts them: types 1..8 have that many
// bytes; anything else is refused.
size_t test_type_size(int32_t datatype, void *)
{
    return datatype >= 1 && datatype <= 8 ? static_cast<size_t>(datatype) : 0;
}

struct test_op {
    nbrma_whole_op_kind_t kind;
    int32_t datatype;
    int32_t count;
    int64_t disp;
};

std::vector<unsigned char> make_epoch(const std::vector<test_op> &ops)
{
    size_t bytes = nbrma_whole_epoch_data_offset(ops.size());
    for (const test_op &op : ops)
        bytes += nbrma_whole_epoch_span(static_cast<size_t>(op.count) * op.datatype);
    std::vector<unsigned char> buf(bytes);
    nbrma_whole_epoch_writer_t writer;
    nbrma_whole_epoch_writer_init(&writer, buf.data(), static_cast<uint32_t>(ops.size()), bytes);
    unsigned char fill = 1;
    for (const test_op &op : ops) {
        std::vector<unsigned char> data(static_cast<size_t>(op.count) * op.datatype, fill++);
        nbrma_whole_epoch_op_t desc = {op.kind, op.datatype, 3, op.count, op.disp};
        nbrma_whole_epoch_write(&writer, &desc, data.data(), data.size());
    }
    return buf;
}

const std::vector<test_op> three_ops = {
    {NBRMA_WHOLE_OP_PUT, 4, 4, 0},
    {NBRMA_WHOLE_OP_ACCUMULATE, 8, 2, 7},
    {NBRMA_WHOLE_OP_PUT, 1, 5, 100},
};

int check(const std::vector<unsigned char> &buf, size_t bytes)
{
    nbrma_whole_epoch_reader_t reader;
    return nbrma_whole_epoch_read_init(&reader, buf.data(), bytes, test_type_size, nullptr);
}

}  // namespace

TEST(WholeEpochCodec, RoundTrip)
{
    std::vector<unsigned char> buf = make_epoch(three_ops);
    nbrma_whole_epoch_reader_t reader;
    ASSERT_EQ(0, nbrma_whole_epoch_read_init(&reader, buf.data(), buf.size(), test_type_size,
                                             nullptr));
    const void *data;
    size_t len;
    unsigned char fill = 1;
    for (const test_op &op : three_ops) {
        const nbrma_whole_epoch_op_t *desc = nbrma_whole_epoch_read(&reader, &data, &len);
        ASSERT_NE(nullptr, desc);
        EXPECT_EQ(op.kind, desc->kind);
        EXPECT_EQ(op.count, desc->count);
        EXPECT_EQ(op.disp, desc->target_disp);
        ASSERT_EQ(static_cast<size_t>(op.count) * op.datatype, len);
        for (size_t i = 0; i < len; i++)
            ASSERT_EQ(fill, static_cast<const unsigned char *>(data)[i]);
        fill++;
    }
    EXPECT_EQ(nullptr, nbrma_whole_epoch_read(&reader, &data, &len));
}

// An epoch toward the own rank is applied as packed, without a sender that
// fills in the protocol message: the writer marks it as a whole epoch.
TEST(WholeEpochCodec, WrittenEpochIsReadableUnsent)
{
    std::vector<unsigned char> buf = make_epoch(three_ops);
    EXPECT_EQ(NBRMA_CTRL_LOCK_EPOCH, reinterpret_cast<nbrma_whole_epoch_t *>(buf.data())->ctrl.kind);
    EXPECT_EQ(0, check(buf, buf.size()));
}

TEST(WholeEpochCodec, EmptyEpochIsValid)
{
    std::vector<unsigned char> buf = make_epoch({});
    EXPECT_EQ(0, check(buf, buf.size()));
}

TEST(WholeEpochCodec, RefusesMalformed)
{
    std::vector<unsigned char> good = make_epoch(three_ops);
    ASSERT_EQ(0, check(good, good.size()));

    // shorter or longer than the header claims, shorter than a header
    EXPECT_EQ(-1, check(good, good.size() - 1));
    std::vector<unsigned char> longer = good;
    longer.resize(good.size() + 16);
    EXPECT_EQ(-1, check(longer, longer.size()));
    EXPECT_EQ(-1, check(good, sizeof(nbrma_whole_epoch_t) - 1));

    auto mutated = [&](auto &&change) {
        std::vector<unsigned char> buf = good;
        change(reinterpret_cast<nbrma_whole_epoch_t *>(buf.data()),
               reinterpret_cast<nbrma_whole_epoch_op_t *>(buf.data() +
                                                          sizeof(nbrma_whole_epoch_t)));
        return check(buf, buf.size());
    };
    EXPECT_EQ(-1, mutated([](nbrma_whole_epoch_t *e, nbrma_whole_epoch_op_t *) {
                  e->ctrl.kind = NBRMA_CTRL_LOCK_REQUEST; }));
    EXPECT_EQ(-1, mutated([](nbrma_whole_epoch_t *e, nbrma_whole_epoch_op_t *) {
                  e->n_ops = 0xffffffffu; }));
    EXPECT_EQ(-1, mutated([](nbrma_whole_epoch_t *e, nbrma_whole_epoch_op_t *) {
                  e->n_ops = 4; }));
    EXPECT_EQ(-1, mutated([](nbrma_whole_epoch_t *e, nbrma_whole_epoch_op_t *) {
                  e->bytes += 16; }));
    EXPECT_EQ(-1, mutated([](nbrma_whole_epoch_t *, nbrma_whole_epoch_op_t *op) {
                  op[1].kind = 7; }));
    EXPECT_EQ(-1, mutated([](nbrma_whole_epoch_t *, nbrma_whole_epoch_op_t *op) {
                  op[0].count = -1; }));
    EXPECT_EQ(-1, mutated([](nbrma_whole_epoch_t *, nbrma_whole_epoch_op_t *op) {
                  op[2].count = 17; }));  // data runs past the end (16 bytes of room)
    EXPECT_EQ(-1, mutated([](nbrma_whole_epoch_t *, nbrma_whole_epoch_op_t *op) {
                  op[0].datatype = 9; }));  // a type the receiver refuses
    EXPECT_EQ(-1, mutated([](nbrma_whole_epoch_t *, nbrma_whole_epoch_op_t *op) {
                  op[0].count = 0x7fffffff; }));

    std::vector<unsigned char> too_big(NBRMA_WHOLE_EPOCH_MAX_BYTES + 64);
    nbrma_whole_epoch_writer_t writer;
    nbrma_whole_epoch_writer_init(&writer, too_big.data(), 0, too_big.size());
    EXPECT_EQ(-1, check(too_big, too_big.size()));
}

// Random byte changes and lengths: whatever the reader accepts lies inside the
// buffer, and some mutations are refused (the mutator reaches the checks).
TEST(WholeEpochCodec, RandomMutationsStayInBounds)
{
    std::vector<unsigned char> good = make_epoch(three_ops);
    std::mt19937 rng(20261123);
    long accepted = 0, refused = 0;
    for (int round = 0; round < 200000; round++) {
        std::vector<unsigned char> buf = good;
        int changes = 1 + static_cast<int>(rng() % 4);
        for (int c = 0; c < changes; c++)
            buf[rng() % buf.size()] = static_cast<unsigned char>(rng());
        size_t bytes = rng() % 8 == 0 ? rng() % (buf.size() + 1) : buf.size();
        nbrma_whole_epoch_reader_t reader;
        if (nbrma_whole_epoch_read_init(&reader, buf.data(), bytes, test_type_size, nullptr)) {
            refused++;
            continue;
        }
        accepted++;
        const void *data;
        size_t len;
        uint32_t n = 0;
        while (nbrma_whole_epoch_read(&reader, &data, &len)) {
            const unsigned char *p = static_cast<const unsigned char *>(data);
            ASSERT_GE(p, buf.data());
            ASSERT_LE(p + len, buf.data() + bytes);
            n++;
        }
        ASSERT_EQ(reader.n_ops, n);
    }
    EXPECT_GT(accepted, 0);
    EXPECT_GT(refused, 0);
}

namespace {

std::vector<unsigned char> make_handle(size_t rkey_bytes)
{
    std::vector<unsigned char> handle(NBRMA_MEMHANDLE_MAX_BYTES, 0xee);
    std::vector<unsigned char> rkey(rkey_bytes);
    for (size_t i = 0; i < rkey_bytes; i++)
        rkey[i] = static_cast<unsigned char>(i * 7 + 1);
    nbrma_memhandle_header_t hdr = {};
    hdr.owner_rank = 3;
    hdr.win_id = 0x1234;
    hdr.generation = 42;
    hdr.base = 0x7f0000001000ULL;
    hdr.size = 4096;
    size_t n = nbrma_memhandle_encode(handle.data(), &hdr, rkey.data(), rkey.size());
    EXPECT_EQ(sizeof(hdr) + rkey_bytes, n);
    return handle;
}

}  // namespace

TEST(MemhandleCodec, RoundTrip)
{
    std::vector<unsigned char> handle = make_handle(100);
    nbrma_memhandle_header_t hdr;
    ASSERT_EQ(NBRMA_MEMHANDLE_OK, nbrma_memhandle_decode(handle.data(), &hdr));
    EXPECT_EQ(3, hdr.owner_rank);
    EXPECT_EQ(0x1234u, hdr.win_id);
    EXPECT_EQ(42u, hdr.generation);
    EXPECT_EQ(4096u, hdr.size);
    EXPECT_EQ(100u, hdr.rkey_bytes);
    EXPECT_EQ(0, std::memcmp(handle.data() + sizeof(hdr), make_handle(100).data() + sizeof(hdr),
                             100));
}

TEST(MemhandleCodec, TooLargeIsNotEncoded)
{
    std::vector<unsigned char> handle(NBRMA_MEMHANDLE_MAX_BYTES);
    std::vector<unsigned char> rkey(NBRMA_MEMHANDLE_MAX_BYTES);
    nbrma_memhandle_header_t hdr = {};
    EXPECT_EQ(0u, nbrma_memhandle_encode(handle.data(), &hdr, rkey.data(), rkey.size()));
}

// FNV-1a over the handle changes with any single byte (each step is a
// bijection of the running hash), so every one-byte change is refused.
TEST(MemhandleCodec, EveryByteChangeIsRefused)
{
    std::vector<unsigned char> good = make_handle(64);
    size_t total = sizeof(nbrma_memhandle_header_t) + 64;
    for (size_t i = 0; i < total; i++) {
        for (int delta : {1, 0x80}) {
            std::vector<unsigned char> bad = good;
            bad[i] = static_cast<unsigned char>(bad[i] ^ delta);
            nbrma_memhandle_header_t hdr;
            ASSERT_NE(NBRMA_MEMHANDLE_OK, nbrma_memhandle_decode(bad.data(), &hdr))
                << "byte " << i;
        }
    }
}

TEST(MemhandleCodec, StatusNamesTheFault)
{
    nbrma_memhandle_header_t hdr;
    std::vector<unsigned char> zero(NBRMA_MEMHANDLE_MAX_BYTES, 0);
    EXPECT_EQ(NBRMA_MEMHANDLE_NOT_A_HANDLE, nbrma_memhandle_decode(zero.data(), &hdr));

    std::vector<unsigned char> h = make_handle(8);
    reinterpret_cast<nbrma_memhandle_header_t *>(h.data())->version = 9;
    EXPECT_EQ(NBRMA_MEMHANDLE_BAD_VERSION, nbrma_memhandle_decode(h.data(), &hdr));

    h = make_handle(8);
    reinterpret_cast<nbrma_memhandle_header_t *>(h.data())->rkey_bytes = 0xffff;
    EXPECT_EQ(NBRMA_MEMHANDLE_BAD_LENGTH, nbrma_memhandle_decode(h.data(), &hdr));

    h = make_handle(8);
    reinterpret_cast<nbrma_memhandle_header_t *>(h.data())->total_bytes = 100000;
    EXPECT_EQ(NBRMA_MEMHANDLE_BAD_LENGTH, nbrma_memhandle_decode(h.data(), &hdr));

    h = make_handle(8);
    h[sizeof(nbrma_memhandle_header_t) + 3] ^= 1;  // the rkey, as after a truncated copy
    EXPECT_EQ(NBRMA_MEMHANDLE_BAD_CHECKSUM, nbrma_memhandle_decode(h.data(), &hdr));
    EXPECT_STREQ("checksum mismatch: truncated or altered",
                 nbrma_memhandle_strstatus(NBRMA_MEMHANDLE_BAD_CHECKSUM));
}

TEST(MemhandleCodec, RandomMutationsAreRefused)
{
    std::vector<unsigned char> good = make_handle(120);
    std::mt19937 rng(7);
    for (int round = 0; round < 100000; round++) {
        std::vector<unsigned char> bad = good;
        size_t i = rng() % (sizeof(nbrma_memhandle_header_t) + 120);
        unsigned char v = static_cast<unsigned char>(rng());
        if (v == bad[i])
            continue;
        bad[i] = v;
        nbrma_memhandle_header_t hdr;
        ASSERT_NE(NBRMA_MEMHANDLE_OK, nbrma_memhandle_decode(bad.data(), &hdr)) << round;
    }
}

TEST(MemhandleCodec, DecodeForItsWindowAndOwner)
{
    std::vector<unsigned char> handle = make_handle(16);  // window 0x1234, owner 3
    nbrma_memhandle_header_t hdr;
    EXPECT_EQ(NBRMA_MEMHANDLE_OK, nbrma_memhandle_decode_for(handle.data(), 0x1234, 4, &hdr));
    EXPECT_EQ(3, hdr.owner_rank);
    EXPECT_EQ(NBRMA_MEMHANDLE_OTHER_WINDOW,
              nbrma_memhandle_decode_for(handle.data(), 0x1235, 4, &hdr));
    // the owner must be a rank of the window: 3 is not of 3 processes
    EXPECT_EQ(NBRMA_MEMHANDLE_BAD_OWNER,
              nbrma_memhandle_decode_for(handle.data(), 0x1234, 3, &hdr));
    // another window is told before a bad owner (MPI_ERR_WIN before MPI_ERR_ARG)
    EXPECT_EQ(NBRMA_MEMHANDLE_OTHER_WINDOW,
              nbrma_memhandle_decode_for(handle.data(), 0x1235, 3, &hdr));
    EXPECT_STREQ("owner rank out of range", nbrma_memhandle_strstatus(NBRMA_MEMHANDLE_BAD_OWNER));
    EXPECT_STREQ("made on another window",
                 nbrma_memhandle_strstatus(NBRMA_MEMHANDLE_OTHER_WINDOW));
}

TEST(MemhandleCodec, DecodeForReportsCorruptionFirst)
{
    std::vector<unsigned char> handle = make_handle(16);
    handle[sizeof(nbrma_memhandle_header_t) + 1] ^= 1;
    nbrma_memhandle_header_t hdr;
    EXPECT_EQ(NBRMA_MEMHANDLE_BAD_CHECKSUM,
              nbrma_memhandle_decode_for(handle.data(), 0x9999, 1, &hdr));
    std::vector<unsigned char> negative = make_handle(0);
    reinterpret_cast<nbrma_memhandle_header_t *>(negative.data())->owner_rank = -1;
    // re-encode with the negative owner: only the rank check refuses it
    nbrma_memhandle_header_t h = *reinterpret_cast<nbrma_memhandle_header_t *>(negative.data());
    ASSERT_NE(0u, nbrma_memhandle_encode(negative.data(), &h, nullptr, 0));
    EXPECT_EQ(NBRMA_MEMHANDLE_BAD_OWNER,
              nbrma_memhandle_decode_for(negative.data(), 0x1234, 4, &hdr));
}

TEST(RkeyWire, PackWritesTheMessageThenTheRkey)
{
    unsigned char buf[NBRMA_RKEY_MSG_MAX_BYTES];
    std::memset(buf, 0xee, sizeof(buf));
    nbrma_rkey_msg_t query = {};
    query.addr = 0x5000;
    size_t n = nbrma_rkey_msg_pack(buf, &query, NBRMA_RKEY_QUERY, 77, 2, nullptr);
    ASSERT_EQ(sizeof(nbrma_rkey_msg_t), n);
    EXPECT_EQ(77u, query.win_id);  // set in the caller's message too
    EXPECT_EQ(2, query.from);
    EXPECT_EQ(NBRMA_RKEY_QUERY, query.kind);
    nbrma_rkey_msg_t back;
    std::memcpy(&back, buf, sizeof(back));
    EXPECT_EQ(0, std::memcmp(&back, &query, sizeof(back)));
    EXPECT_TRUE(nbrma_rkey_msg_valid(&back, 3));
    EXPECT_EQ(0xee, buf[sizeof(nbrma_rkey_msg_t)]);  // nothing after a query

    std::vector<unsigned char> rkey(NBRMA_RKEY_MAX_BYTES);
    for (size_t i = 0; i < rkey.size(); i++)
        rkey[i] = static_cast<unsigned char>(i * 13 + 5);
    nbrma_rkey_msg_t reply = {};
    reply.base = 0x4000;
    reply.size = 0x2000;
    reply.generation = 9;
    reply.rkey_bytes = NBRMA_RKEY_MAX_BYTES;
    n = nbrma_rkey_msg_pack(buf, &reply, NBRMA_RKEY_REPLY, 77, 0, rkey.data());
    ASSERT_EQ(sizeof(buf), n);
    std::memcpy(&back, buf, sizeof(back));
    EXPECT_EQ(NBRMA_RKEY_REPLY, back.kind);
    EXPECT_EQ(0x4000u, back.base);
    EXPECT_TRUE(nbrma_rkey_msg_valid(&back, 1));
    EXPECT_EQ(0, std::memcmp(buf + sizeof(back), rkey.data(), rkey.size()));
}

TEST(RkeyWire, Validation)
{
    nbrma_rkey_msg_t msg = {};
    msg.from = 1;
    msg.kind = NBRMA_RKEY_QUERY;
    EXPECT_TRUE(nbrma_rkey_msg_valid(&msg, 2));
    EXPECT_FALSE(nbrma_rkey_msg_valid(&msg, 1));  // sender outside the window
    msg.from = -1;
    EXPECT_FALSE(nbrma_rkey_msg_valid(&msg, 2));
    msg.from = 0;
    msg.rkey_bytes = 4;  // an rkey on a query
    EXPECT_FALSE(nbrma_rkey_msg_valid(&msg, 2));

    msg.kind = NBRMA_RKEY_REPLY;
    msg.base = 4096;
    msg.size = 4096;
    EXPECT_TRUE(nbrma_rkey_msg_valid(&msg, 2));
    msg.rkey_bytes = 0;  // a reply without rkey
    EXPECT_FALSE(nbrma_rkey_msg_valid(&msg, 2));
    msg.rkey_bytes = NBRMA_RKEY_MAX_BYTES + 1;
    EXPECT_FALSE(nbrma_rkey_msg_valid(&msg, 2));
    msg.rkey_bytes = 4;
    msg.base = UINT64_MAX - 10;  // a region that wraps around
    EXPECT_FALSE(nbrma_rkey_msg_valid(&msg, 2));

    msg.base = 0;
    msg.kind = 0;
    EXPECT_FALSE(nbrma_rkey_msg_valid(&msg, 2));
    msg.kind = 99;
    EXPECT_FALSE(nbrma_rkey_msg_valid(&msg, 2));
}

namespace {

std::vector<unsigned char> make_pulled(const std::vector<nbrma_pulled_op_t> &ops)
{
    std::vector<unsigned char> buf(nbrma_pulled_epoch_bytes(ops.size()));
    nbrma_pulled_epoch_t header = {};
    header.ctrl.kind = NBRMA_CTRL_ACCESS_EPOCH;
    header.n_ops = static_cast<uint32_t>(ops.size());
    header.bytes = static_cast<uint32_t>(buf.size());
    std::memcpy(buf.data(), &header, sizeof(header));
    if (!ops.empty())
        std::memcpy(buf.data() + sizeof(header), ops.data(), ops.size() * sizeof(ops[0]));
    return buf;
}

const std::vector<nbrma_pulled_op_t> two_pulled = {
    {NBRMA_WHOLE_OP_PUT, 8, 0, 131072, 0, 0x7f0000001000ull},
    {NBRMA_WHOLE_OP_ACCUMULATE, 4, 3, 2, 9, 0x1000ull},
};

const nbrma_pulled_op_t *check_pulled(const std::vector<unsigned char> &buf, uint32_t *n)
{
    return nbrma_pulled_epoch_check(buf.data(), buf.size(), test_type_size, nullptr, n);
}

}  // namespace

TEST(PulledEpochCodec, RoundTrip)
{
    std::vector<unsigned char> buf = make_pulled(two_pulled);
    uint32_t n = 0;
    const nbrma_pulled_op_t *ops = check_pulled(buf, &n);
    ASSERT_NE(nullptr, ops);
    ASSERT_EQ(2u, n);
    EXPECT_EQ(0, std::memcmp(ops, two_pulled.data(), sizeof(nbrma_pulled_op_t) * 2));
    EXPECT_NE(nullptr, check_pulled(make_pulled({}), &n));
    EXPECT_EQ(0u, n);
}

TEST(PulledEpochCodec, RefusesMalformed)
{
    uint32_t n;
    auto mutated = [&](auto &&change) {
        std::vector<nbrma_pulled_op_t> ops = two_pulled;
        std::vector<unsigned char> buf = make_pulled(ops);
        nbrma_pulled_epoch_t header;
        std::memcpy(&header, buf.data(), sizeof(header));
        change(header, ops[1]);
        std::vector<unsigned char> out = make_pulled(ops);
        std::memcpy(out.data(), &header, sizeof(header));
        return check_pulled(out, &n);
    };
    EXPECT_EQ(nullptr, mutated([](nbrma_pulled_epoch_t &h, nbrma_pulled_op_t &) { h.ctrl.kind = NBRMA_CTRL_LOCK_EPOCH; }));
    EXPECT_EQ(nullptr, mutated([](nbrma_pulled_epoch_t &h, nbrma_pulled_op_t &) { h.bytes += 1; }));
    EXPECT_EQ(nullptr, mutated([](nbrma_pulled_epoch_t &h, nbrma_pulled_op_t &) { h.n_ops = 3; }));
    EXPECT_EQ(nullptr, mutated([](nbrma_pulled_epoch_t &h, nbrma_pulled_op_t &) { h.n_ops = 1; }));
    EXPECT_EQ(nullptr, mutated([](nbrma_pulled_epoch_t &, nbrma_pulled_op_t &op) { op.kind = 0; }));
    EXPECT_EQ(nullptr, mutated([](nbrma_pulled_epoch_t &, nbrma_pulled_op_t &op) { op.kind = 3; }));
    EXPECT_EQ(nullptr, mutated([](nbrma_pulled_epoch_t &, nbrma_pulled_op_t &op) { op.count = -1; }));
    EXPECT_EQ(nullptr, mutated([](nbrma_pulled_epoch_t &, nbrma_pulled_op_t &op) { op.datatype = 9; }));
    EXPECT_EQ(nullptr, mutated([](nbrma_pulled_epoch_t &, nbrma_pulled_op_t &op) {
        op.origin_addr = UINT64_MAX - 4;  // 8 bytes from there wrap around
    }));
    // short buffers, and more operations than one message may carry
    std::vector<unsigned char> buf = make_pulled(two_pulled);
    for (size_t bytes = 0; bytes < buf.size(); ++bytes)
        EXPECT_EQ(nullptr, nbrma_pulled_epoch_check(buf.data(), bytes, test_type_size, nullptr, &n)) << bytes;
    std::vector<nbrma_pulled_op_t> many(NBRMA_PULLED_EPOCH_MAX_OPS + 1, two_pulled[0]);
    EXPECT_EQ(nullptr, check_pulled(make_pulled(many), &n));
    many.pop_back();
    EXPECT_NE(nullptr, check_pulled(make_pulled(many), &n));
}

// The header a pulled epoch claims is copied before it is checked: at least
// the header, at most an epoch of the maximum number of operations.
TEST(PulledEpochCodec, ClaimedSizeBoundsTheCopy)
{
    EXPECT_FALSE(nbrma_pulled_epoch_claim_fits(0));
    EXPECT_FALSE(nbrma_pulled_epoch_claim_fits(sizeof(nbrma_pulled_epoch_t) - 1));
    EXPECT_TRUE(nbrma_pulled_epoch_claim_fits(sizeof(nbrma_pulled_epoch_t)));
    size_t most = nbrma_pulled_epoch_bytes(NBRMA_PULLED_EPOCH_MAX_OPS);
    EXPECT_TRUE(nbrma_pulled_epoch_claim_fits(static_cast<uint32_t>(most)));
    EXPECT_FALSE(nbrma_pulled_epoch_claim_fits(static_cast<uint32_t>(most + 1)));
    EXPECT_FALSE(nbrma_pulled_epoch_claim_fits(UINT32_MAX));
}

// What the origin writes (pulled_epoch.c) is what the target's check accepts,
// once the sender gave its protocol message the kind.
TEST(PulledEpochCodec, WrittenEpochPassesTheCheck)
{
    const nbrma_whole_epoch_op_t descs[] = {
        {NBRMA_WHOLE_OP_PUT, 8, 0, 131072, 0},
        {NBRMA_WHOLE_OP_ACCUMULATE, 4, 3, 2, 9},
    };
    const uint64_t addrs[] = {0x7f0000001000ull, 0x1000ull};
    std::vector<unsigned char> buf(nbrma_pulled_epoch_bytes(2), 0xa5);
    nbrma_pulled_op_t *ops = nbrma_pulled_epoch_init(buf.data(), 2);
    ASSERT_EQ(static_cast<void *>(buf.data() + sizeof(nbrma_pulled_epoch_t)),
              static_cast<void *>(ops));
    for (int i = 0; i < 2; ++i)
        ops[i] = nbrma_pulled_op_of(&descs[i], addrs[i]);
    nbrma_pulled_epoch_t header;
    std::memcpy(&header, buf.data(), sizeof(header));
    EXPECT_EQ(2u, header.n_ops);
    EXPECT_EQ(buf.size(), header.bytes);
    EXPECT_EQ(0, header.ctrl.kind);  // zeroed: the sender fills it in
    uint32_t n = 0;
    EXPECT_EQ(nullptr, check_pulled(buf, &n));  // not a protocol message yet
    header.ctrl.kind = NBRMA_CTRL_ACCESS_EPOCH;
    std::memcpy(buf.data(), &header, sizeof(header));
    const nbrma_pulled_op_t *read = check_pulled(buf, &n);
    ASSERT_NE(nullptr, read);
    ASSERT_EQ(2u, n);
    EXPECT_EQ(0, std::memcmp(read, two_pulled.data(), sizeof(nbrma_pulled_op_t) * 2));
}

// The planning of a whole epoch: data spans add up from the descriptors' end,
// and the epoch stops fitting once it passes NBRMA_WHOLE_EPOCH_MAX_BYTES, also
// for one operation larger than any epoch.
TEST(WholeEpochCodec, PlanStopsAtTheMaximum)
{
    size_t bytes = nbrma_whole_epoch_data_offset(3);
    size_t start = bytes;
    EXPECT_TRUE(nbrma_whole_epoch_plan_add(&bytes, 1));
    EXPECT_EQ(start + 16, bytes);
    EXPECT_TRUE(nbrma_whole_epoch_plan_add(&bytes, 0));
    EXPECT_EQ(start + 16, bytes);
    EXPECT_TRUE(nbrma_whole_epoch_plan_add(&bytes, 32));
    EXPECT_EQ(start + 48, bytes);
    // exactly the maximum fits, one span more does not
    size_t rest = NBRMA_WHOLE_EPOCH_MAX_BYTES - bytes;
    size_t at_max = bytes;
    EXPECT_TRUE(nbrma_whole_epoch_plan_add(&at_max, rest));
    EXPECT_EQ(static_cast<size_t>(NBRMA_WHOLE_EPOCH_MAX_BYTES), at_max);
    EXPECT_FALSE(nbrma_whole_epoch_plan_add(&at_max, 1));
    size_t over = bytes;
    EXPECT_FALSE(nbrma_whole_epoch_plan_add(&over, rest + 1));
    // a size no epoch reaches does not wrap the sum around
    size_t huge = bytes;
    EXPECT_FALSE(nbrma_whole_epoch_plan_add(&huge, SIZE_MAX));
    EXPECT_GT(huge, static_cast<size_t>(NBRMA_WHOLE_EPOCH_MAX_BYTES));
    // the sizes a plan accepts are those the writer fills exactly
    size_t planned = nbrma_whole_epoch_data_offset(three_ops.size());
    for (const test_op &op : three_ops)
        ASSERT_TRUE(nbrma_whole_epoch_plan_add(&planned,
                                               static_cast<size_t>(op.count) * op.datatype));
    std::vector<unsigned char> buf = make_epoch(three_ops);
    EXPECT_EQ(buf.size(), planned);
    EXPECT_EQ(0, check(buf, planned));
}

// A notification (MPIX_Put_notify) as the target's handler receives it:
// exactly one message, with its magic and a non-negative id.
TEST(NotifyWire, RoundTripAndRefusals)
{
    nbrma_notify_msg_t msg, out;
    nbrma_notify_encode(&msg, 0x1234567800000001ull, 42);
    ASSERT_EQ(0, nbrma_notify_decode(&msg, sizeof(msg), &out));
    EXPECT_EQ(0x1234567800000001ull, out.win_id);
    EXPECT_EQ(42, out.notify_id);

    nbrma_notify_encode(&msg, 1, 0);
    EXPECT_EQ(0, nbrma_notify_decode(&msg, sizeof(msg), &out));
    for (size_t bytes = 0; bytes < sizeof(msg); ++bytes)
        EXPECT_EQ(-1, nbrma_notify_decode(&msg, bytes, &out)) << bytes;
    EXPECT_EQ(-1, nbrma_notify_decode(&msg, sizeof(msg) + 1, &out));
    EXPECT_EQ(-1, nbrma_notify_decode(nullptr, sizeof(msg), &out));
    nbrma_notify_msg_t bad = msg;
    bad.notify_id = -1;
    EXPECT_EQ(-1, nbrma_notify_decode(&bad, sizeof(bad), &out));
    bad = msg;
    bad.magic ^= 1;
    EXPECT_EQ(-1, nbrma_notify_decode(&bad, sizeof(bad), &out));
}

// Which messages wake an agent that sleeps for its peers only: those that ask
// the receiver to act for the sender, who waits for it; not those of the
// receiver's own synchronization, which its next MPI call completes.
TEST(CtrlWire, OnlyMessagesThatServeTheirSenderWakeAnAgentAsleepForPeers)
{
    EXPECT_TRUE(nbrma_ctrl_kind_serves_peer(NBRMA_CTRL_LOCK_REQUEST));
    EXPECT_TRUE(nbrma_ctrl_kind_serves_peer(NBRMA_CTRL_LOCK_RELEASE));
    EXPECT_TRUE(nbrma_ctrl_kind_serves_peer(NBRMA_CTRL_LOCK_EPOCH));
    EXPECT_TRUE(nbrma_ctrl_kind_serves_peer(NBRMA_CTRL_ACCESS_EPOCH));
    EXPECT_FALSE(nbrma_ctrl_kind_serves_peer(NBRMA_CTRL_GRANT));
    EXPECT_FALSE(nbrma_ctrl_kind_serves_peer(NBRMA_CTRL_DONE));
    EXPECT_FALSE(nbrma_ctrl_kind_serves_peer(NBRMA_CTRL_FENCE_ARRIVAL));
    EXPECT_FALSE(nbrma_ctrl_kind_serves_peer(NBRMA_CTRL_ACCESS_APPLIED));
    EXPECT_FALSE(nbrma_ctrl_kind_serves_peer(-1));
    EXPECT_FALSE(nbrma_ctrl_kind_serves_peer(NBRMA_CTRL_ACCESS_APPLIED + 1));
}

// A protocol message as the glue makes it, and as a mailbox ring carries it
// there and back (formats/wire.h): every field but the sender's window id and
// rank travels in the ring's message, and `reserved` is zero.
TEST(CtrlWire, MadeMessagesTravelThroughARingUnchanged)
{
    const int exclusive = 234;  // MPI_LOCK_EXCLUSIVE in MPICH, NBRMA_LOCK_EXCLUSIVE
    nbrma_ctrl_msg_t msg = nbrma_ctrl_msg_make(0xabcdef0123ull, 5, NBRMA_CTRL_LOCK_REQUEST,
                                               0x1122334455667788ull, exclusive);
    EXPECT_EQ(0xabcdef0123ull, msg.win_id);
    EXPECT_EQ(0x1122334455667788ull, msg.value);
    EXPECT_EQ(NBRMA_CTRL_LOCK_REQUEST, msg.kind);
    EXPECT_EQ(exclusive, msg.lock_type);
    EXPECT_EQ(5, msg.from);
    EXPECT_EQ(0, msg.reserved);

    nbrma_ring_msg_t mail = nbrma_ctrl_mail_of(&msg);
    EXPECT_EQ(NBRMA_CTRL_LOCK_REQUEST, mail.kind);
    EXPECT_EQ(exclusive, mail.arg);
    EXPECT_EQ(msg.value, mail.value);
    nbrma_ctrl_msg_t back = nbrma_ctrl_msg_of_mail(msg.win_id, msg.from, &mail);
    EXPECT_EQ(0, std::memcmp(&msg, &back, sizeof(msg)));

    // every kind; a message without a lock type carries 0
    for (int kind = NBRMA_CTRL_GRANT; kind <= NBRMA_CTRL_ACCESS_APPLIED; ++kind) {
        msg = nbrma_ctrl_msg_make(7, 0, kind, ~0ull, 0);
        mail = nbrma_ctrl_mail_of(&msg);
        back = nbrma_ctrl_msg_of_mail(7, 0, &mail);
        EXPECT_EQ(0, std::memcmp(&msg, &back, sizeof(msg))) << kind;
        EXPECT_EQ(0, back.lock_type);
    }
}
