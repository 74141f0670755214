// 1- and 2-byte accumulates on the aligned 8-byte word around them, and the
// CPU's atomics for every element size
// (ch4_netmod_rma/peer_memory/narrow_ops.h), without MPI: element arithmetic
// against a plain reference, any alignment and count, and no lost update when
// threads apply to the same words at once.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <sys/mman.h>
#include <thread>
#include <type_traits>
#include <vector>

#include "narrow_ops.h"
#include "cpu_transactions.h"
#include "narrow_reference.hpp"

namespace {

const nbrma_narrow_op_t all_ops[] = {NBRMA_NARROW_SUM,  NBRMA_NARROW_BAND,    NBRMA_NARROW_BOR,
                                     NBRMA_NARROW_BXOR, NBRMA_NARROW_REPLACE, NBRMA_NARROW_NO_OP};


// Random targets, operands, offsets and counts against element-wise arithmetic;
// the bytes around the range stay as they were.
template <class T> void check_against_reference(unsigned seed, bool any_size = false)
{
    std::mt19937 rng(seed);
    const unsigned esize = sizeof(T);
    for (int round = 0; round < 2000; ++round) {
        alignas(8) unsigned char mem[256], expect[256];
        for (auto &b : mem)
            b = static_cast<unsigned char>(rng());
        std::memcpy(expect, mem, sizeof mem);
        const size_t first = rng() % 32;  // shorts at odd addresses too, some across words
        const size_t n = rng() % ((sizeof mem - first) / esize - 8);
        std::vector<T> operand(n + 1), fetched(n + 1), want_fetched(n + 1);
        for (auto &v : operand)
            v = static_cast<T>(rng());
        const nbrma_narrow_op_t op = all_ops[rng() % 6];
        for (size_t i = 0; i < n; ++i) {
            T old;
            std::memcpy(&old, expect + first + i * esize, esize);
            want_fetched[i] = old;
            const T now = reference<T>(old, operand[i], op);
            std::memcpy(expect + first + i * esize, &now, esize);
        }
        if (any_size)
            nbrma_cpu_apply(mem + first, operand.data(), n, esize, op, fetched.data());
        else
            nbrma_narrow_apply_cpu(mem + first, operand.data(), n, esize, op, fetched.data());
        ASSERT_EQ(std::memcmp(mem, expect, sizeof mem), 0)
            << "op " << op << " at " << first << ", " << n << " elements of " << esize;
        for (size_t i = 0; i < n; ++i)
            ASSERT_EQ(fetched[i], want_fetched[i]) << "old value " << i;
    }
}

}  // namespace

TEST(narrow_ops, bytes_match_plain_arithmetic) { check_against_reference<unsigned char>(1); }
TEST(narrow_ops, shorts_match_plain_arithmetic) { check_against_reference<uint16_t>(2); }

// nbrma_cpu_apply: the same arithmetic for every element size, 4- and 8-byte
// elements at aligned and unaligned addresses alike.
TEST(cpu_ops, every_size_matches_plain_arithmetic)
{
    check_against_reference<unsigned char>(3, true);
    check_against_reference<uint16_t>(4, true);
    check_against_reference<uint32_t>(5, true);
    check_against_reference<uint64_t>(6, true);
}

TEST(cpu_ops, cswap_of_wide_elements)
{
    alignas(8) uint64_t w = 7;
    alignas(4) uint32_t v[2] = {5, 5};
    EXPECT_EQ(nbrma_cpu_cswap(&w, 8, 6, 1), 7u);
    EXPECT_EQ(w, 7u) << "compare failed";
    EXPECT_EQ(nbrma_cpu_cswap(&w, 8, 7, 1), 7u);
    EXPECT_EQ(w, 1u);
    EXPECT_EQ(nbrma_cpu_cswap(&v[1], 4, 5, 0xffffffffu), 5u);
    EXPECT_EQ(v[1], 0xffffffffu);
    EXPECT_EQ(v[0], 5u) << "only its own element";
    EXPECT_EQ(nbrma_cpu_cswap(&v[1], 4, 0xffffffffu, 3), 0xffffffffu) << "no sign extension";
    EXPECT_EQ(v[1], 3u);
}

// Threads add to the same 8-byte and 4-byte counters and fetch as they go:
// no update lost, every fetched value taken once.
TEST(cpu_ops, concurrent_wide_updates_are_not_lost)
{
    alignas(8) uint64_t counter64 = 0;
    alignas(4) uint32_t counter32 = 0;
    const int threads = 4, rounds = 20000;
    std::vector<std::vector<uint64_t>> seen(threads);
    std::vector<std::thread> pool;
    for (int t = 0; t < threads; ++t)
        pool.emplace_back([&, t] {
            const uint64_t one64 = 1;
            const uint32_t one32 = 1;
            for (int r = 0; r < rounds; ++r) {
                uint64_t old = 0;
                nbrma_cpu_apply(&counter64, &one64, 1, 8, NBRMA_NARROW_SUM, &old);
                seen[t].push_back(old);
                nbrma_cpu_apply(&counter32, &one32, 1, 4, NBRMA_NARROW_SUM, nullptr);
            }
        });
    for (auto &th : pool)
        th.join();
    EXPECT_EQ(counter64, static_cast<uint64_t>(threads * rounds));
    EXPECT_EQ(counter32, static_cast<uint32_t>(threads * rounds));
    std::vector<bool> taken(threads * rounds, false);
    for (auto &values : seen)
        for (uint64_t v : values) {
            ASSERT_LT(v, taken.size());
            EXPECT_FALSE(taken[v]) << "value " << v << " fetched twice";
            taken[v] = true;
        }
}

// A long accumulate of 4-byte elements goes two per 8-byte word (a sum lane
// by lane, compare-and-swap), beside single elements of the same words at
// both ends: no update lost either way, carries kept inside each element.
TEST(cpu_ops, concurrent_int_pair_updates_are_not_lost)
{
    alignas(8) uint32_t mem[10] = {};
    const int threads = 4, rounds = 20000;
    std::vector<std::thread> pool;
    for (int t = 0; t < threads; ++t)
        pool.emplace_back([&mem, t] {
            const uint32_t ones[9] = {1, 1, 1, 1, 1, 1, 1, 1, 1};
            const uint32_t big[2] = {0xffffffffu, 0xffffffffu};
            const uint32_t bit = 1u << t, clear = ~bit;
            const uint32_t bits[2] = {bit, bit};
            for (int r = 0; r < rounds; ++r) {
                nbrma_cpu_apply(&mem[1], ones, 7, 4, NBRMA_NARROW_SUM, nullptr);  // 1 + 3 words
                nbrma_cpu_apply(&mem[2], ones, 1, 4, NBRMA_NARROW_SUM, nullptr);  // 1 element
                nbrma_cpu_apply(&mem[4], big, 2, 4, NBRMA_NARROW_SUM, nullptr);   // -1 each: a word
                // mem[8..9]: bits set by the word path, cleared by the element path
                nbrma_cpu_apply(&mem[8], bits, 2, 4, NBRMA_NARROW_BOR, nullptr);
                nbrma_cpu_apply(&mem[9], &clear, 1, 4, NBRMA_NARROW_BAND, nullptr);
                nbrma_cpu_apply(&mem[8], &clear, 1, 4, NBRMA_NARROW_BAND, nullptr);
            }
        });
    for (auto &th : pool)
        th.join();
    const uint32_t total = static_cast<uint32_t>(threads * rounds);
    EXPECT_EQ(mem[0], 0u) << "outside every range";
    for (int i = 1; i < 8; ++i)
        EXPECT_EQ(mem[i], i == 4 || i == 5 ? 0u : total * (i == 2 ? 2 : 1))
            << "element " << i << " (4 and 5: +1 and -1 each round, no carry from 4 into 5)";
    EXPECT_EQ(mem[8], 0u) << "every bit set and cleared";
    EXPECT_EQ(mem[9], 0u) << "every bit set and cleared";
}

// Whole words (a long accumulate of bytes or shorts goes word by word with one
// atomic instruction each) beside single elements of the same words: no
// update lost either way.
TEST(narrow_ops, concurrent_whole_word_updates_are_not_lost)
{
    alignas(8) unsigned char mem[32] = {};
    const int threads = 4, rounds = 20000;
    std::vector<std::thread> pool;
    for (int t = 0; t < threads; ++t)
        pool.emplace_back([&mem, t] {
            unsigned char ones[16];
            std::memset(ones, 1, sizeof ones);
            const uint16_t twos[4] = {2, 2, 2, 2};
            const unsigned char bit = static_cast<unsigned char>(1u << t);
            const unsigned char clear = static_cast<unsigned char>(~bit);
            for (int r = 0; r < rounds; ++r) {
                nbrma_narrow_apply_cpu(mem, ones, 16, 1, NBRMA_NARROW_SUM, nullptr);   // 2 words
                nbrma_narrow_apply_cpu(mem + 16, twos, 4, 2, NBRMA_NARROW_SUM, nullptr);  // 1 word
                nbrma_narrow_apply_cpu(mem + 3, ones, 1, 1, NBRMA_NARROW_SUM, nullptr);   // 1 byte
                // byte 24's bits: set by the word path (a whole word of BOR), cleared by
                // the element path
                unsigned char word_or[8] = {bit};
                nbrma_narrow_apply_cpu(mem + 24, word_or, 8, 1, NBRMA_NARROW_BOR, nullptr);
                nbrma_narrow_apply_cpu(mem + 24, &clear, 1, 1, NBRMA_NARROW_BAND, nullptr);
            }
        });
    for (auto &th : pool)
        th.join();
    for (int b = 0; b < 16; ++b)
        EXPECT_EQ(mem[b], static_cast<unsigned char>(threads * rounds * (b == 3 ? 2 : 1)))
            << "byte " << b;
    for (int s = 0; s < 4; ++s) {
        uint16_t v;
        std::memcpy(&v, mem + 16 + 2 * s, 2);
        EXPECT_EQ(v, static_cast<uint16_t>(2 * threads * rounds)) << "short " << s;
    }
    EXPECT_EQ(mem[24], 0) << "every bit set and cleared";
}

// Whether this processor commits transactions at all (a processor or a
// hypervisor may report RTM and abort every one; the library then uses its
// atomics, and the test below cannot ask for commits).
#if defined(__x86_64__)
#include <immintrin.h>
__attribute__((target("rtm"))) bool empty_transactions_commit()
{
    for (int i = 0; i < 100; ++i)
        if (_xbegin() == _XBEGIN_STARTED) {
            _xend();
            return true;
        }
    return false;
}
#else
bool empty_transactions_commit() { return false; }
#endif

// Long runs (2 KiB of bytes, 256 words of 8 bytes, 256 doubles) go in chunks
// of hardware transactions where the processor has them, while single
// elements of the same memory go by the atomics (compare-and-swap, fetch-and-
// add) in other threads: a conflicting access aborts a chunk, which is then
// retried or applied by the atomics, so no update is lost either way. Run
// with the transactions on and off; with them on, some chunks must commit on
// a processor that has them (else the test would not reach them).
void long_runs_beside_single_elements(bool transactions)
{
    nbrma_cpu_transactions_enable(transactions);
    const size_t committed_before = nbrma_cpu_transactions_committed();
    alignas(64) static unsigned char bytes[2048];
    alignas(64) static uint64_t words[256];
    alignas(64) static double doubles[256];
    std::memset(bytes, 0, sizeof bytes);
    std::memset(words, 0, sizeof words);
    std::memset(doubles, 0, sizeof doubles);
    const int threads = 4, rounds = 1000;
    std::vector<std::thread> pool;
    for (int t = 0; t < threads; ++t)
        pool.emplace_back([t] {
            std::vector<unsigned char> ones(sizeof bytes, 1);
            const std::vector<uint64_t> word_ones(256, 1);
            const std::vector<double> double_ones(256, 1.0);
            const unsigned char one = 1;
            const uint64_t one64 = 1;
            const double one_double = 1.0;
            for (int r = 0; r < rounds; ++r) {
                if (t % 2 == 0) {
                    nbrma_cpu_apply(bytes, ones.data(), sizeof bytes, 1, NBRMA_NARROW_SUM, nullptr);
                    nbrma_cpu_apply(words, word_ones.data(), 256, 8, NBRMA_NARROW_SUM, nullptr);
                    nbrma_cpu_apply(doubles, double_ones.data(), 256, 8, NBRMA_ELEMENT_FLOAT_SUM,
                                    nullptr);
                } else {
                    // one element in each chunk of the long runs, by the atomics
                    for (size_t at = 5; at < sizeof bytes; at += 1024)
                        nbrma_cpu_apply(bytes + at, &one, 1, 1, NBRMA_NARROW_SUM, nullptr);
                    for (size_t at = 3; at < 256; at += 128) {
                        nbrma_cpu_apply(words + at, &one64, 1, 8, NBRMA_NARROW_SUM, nullptr);
                        nbrma_cpu_apply(doubles + at, &one_double, 1, 8, NBRMA_ELEMENT_FLOAT_SUM,
                                        nullptr);
                    }
                }
            }
        });
    for (auto &th : pool)
        th.join();
    const int long_runs = (threads + 1) / 2 * rounds, singles = threads / 2 * rounds;
    for (size_t b = 0; b < sizeof bytes; ++b)
        ASSERT_EQ(bytes[b], static_cast<unsigned char>(long_runs + (b % 1024 == 5 ? singles : 0)))
            << "byte " << b;
    for (size_t w = 0; w < 256; ++w) {
        const int want = long_runs + (w % 128 == 3 ? singles : 0);
        ASSERT_EQ(words[w], static_cast<uint64_t>(want)) << "word " << w;
        ASSERT_EQ(doubles[w], static_cast<double>(want)) << "double " << w;
    }
    const size_t committed = nbrma_cpu_transactions_committed() - committed_before;
    if (!transactions)
        EXPECT_EQ(committed, 0u) << "switched off";
    else if (nbrma_cpu_has_transactions() && empty_transactions_commit())
        EXPECT_GT(committed, 0u) << "the processor's transactions commit: some chunk must";
    nbrma_cpu_transactions_enable(true);
}

// A chunk whose transaction aborts goes by the atomics: the first write to a
// page not yet mapped in the process aborts a transaction (the fault is not
// taken inside it), so a run over fresh pages has chunks of both kinds, and
// every element must still be added exactly once.
TEST(cpu_ops, chunks_that_abort_go_by_the_atomics)
{
    const size_t bytes = 16 * 4096;
    void *fresh = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    ASSERT_NE(fresh, MAP_FAILED);
    std::vector<unsigned char> ones(bytes, 1);
    const size_t committed_before = nbrma_cpu_transactions_committed();
    nbrma_cpu_apply(fresh, ones.data(), bytes, 1, NBRMA_NARROW_SUM, nullptr);
    const size_t committed = nbrma_cpu_transactions_committed() - committed_before;
    const auto *mem = static_cast<const unsigned char *>(fresh);
    size_t wrong = 0;
    for (size_t b = 0; b < bytes; ++b)
        wrong += mem[b] != 1;
    EXPECT_EQ(wrong, 0u);
    EXPECT_LT(committed, bytes / 1024) << "the first chunk of each fresh page cannot commit";
    munmap(fresh, bytes);
}

TEST(cpu_ops, long_runs_in_transactions_lose_no_update)
{
    long_runs_beside_single_elements(true);
}

TEST(cpu_ops, long_runs_without_transactions_lose_no_update)
{
    long_runs_beside_single_elements(false);
}

TEST(narrow_ops, extract_and_combine_touch_one_element)
{
    uint64_t word;
    const unsigned char bytes[8] = {1, 2, 3, 4, 5, 6, 7, 0xff};
    std::memcpy(&word, bytes, 8);
    EXPECT_EQ(nbrma_narrow_extract(word, 7, 1), 0xffu);
    const uint64_t added = nbrma_narrow_combine(word, 7, 1, 1, NBRMA_NARROW_SUM);
    unsigned char out[8];
    std::memcpy(out, &added, 8);
    EXPECT_EQ(out[7], 0) << "wraps inside its byte";
    EXPECT_EQ(std::memcmp(out, bytes, 7), 0) << "no carry into the other bytes";
    EXPECT_TRUE(nbrma_narrow_fits(0x1006, 2));
    EXPECT_FALSE(nbrma_narrow_fits(0x1007, 2)) << "across two words";
    EXPECT_FALSE(nbrma_narrow_fits(0x1000, 4));
}

TEST(narrow_ops, cswap_swaps_only_on_equal)
{
    alignas(8) unsigned char mem[8] = {9, 9, 9, 9, 9, 9, 9, 9};
    EXPECT_EQ(nbrma_narrow_cswap_cpu(mem + 3, 1, 8, 42), 9u);
    EXPECT_EQ(mem[3], 9) << "compare failed";
    EXPECT_EQ(nbrma_narrow_cswap_cpu(mem + 3, 1, 9, 42), 9u);
    EXPECT_EQ(mem[3], 42);
    EXPECT_EQ(mem[2], 9);
    EXPECT_EQ(mem[4], 9);
    alignas(8) uint16_t across[8] = {};
    unsigned char *odd = reinterpret_cast<unsigned char *>(across) + 7;  // bytes 7 and 8
    EXPECT_EQ(nbrma_narrow_cswap_cpu(odd, 2, 0, 0x1234), 0u) << "a short across two words";
    EXPECT_EQ(nbrma_narrow_cswap_cpu(odd, 2, 0, 0x5678), 0x1234u);
}

// Threads add to the same bytes (whole words and single elements) and flip
// neighbouring bytes by compare-and-swap: every update must survive.
TEST(narrow_ops, concurrent_updates_of_one_word_are_not_lost)
{
    alignas(8) unsigned char mem[16] = {};
    const int threads = 4, rounds = 20000;
    std::vector<std::thread> pool;
    for (int t = 0; t < threads; ++t)
        pool.emplace_back([&mem, t] {
            const unsigned char ones[8] = {1, 1, 1, 1, 1, 1, 1, 1};
            for (int r = 0; r < rounds; ++r) {
                nbrma_narrow_apply_cpu(mem, ones, 7, 1, NBRMA_NARROW_SUM, nullptr);  // bytes 0-6
                const uint16_t two = 2;
                nbrma_narrow_apply_cpu(mem + 8, &two, 1, 2, NBRMA_NARROW_SUM, nullptr);  // bytes 8-9
                // byte 7: each thread owns one bit, set then cleared by compare-and-swap
                const unsigned bit = 1u << t;
                uint64_t cur = mem[7];
                for (;;) {
                    const uint64_t seen = nbrma_narrow_cswap_cpu(mem + 7, 1, cur, cur | bit);
                    if (seen == cur)
                        break;
                    cur = seen;
                }
                const unsigned char clear = static_cast<unsigned char>(~bit);
                nbrma_narrow_apply_cpu(mem + 7, &clear, 1, 1, NBRMA_NARROW_BAND, nullptr);
            }
        });
    for (auto &th : pool)
        th.join();
    for (int b = 0; b < 7; ++b)
        EXPECT_EQ(mem[b], static_cast<unsigned char>(threads * rounds)) << "byte " << b;
    EXPECT_EQ(mem[7], 0) << "every bit set and cleared";
    uint16_t sum;
    std::memcpy(&sum, mem + 8, 2);
    EXPECT_EQ(sum, static_cast<uint16_t>(2 * threads * rounds));
}

namespace {

// MPICH's arithmetic (MPL_MIN/MPL_MAX with the target first) in the element's
// own C type.
template <class T> T typed_reference(T old, T operand, nbrma_narrow_op_t op)
{
    switch (op) {
    case NBRMA_ELEMENT_PROD:
    case NBRMA_ELEMENT_FLOAT_PROD: return static_cast<T>(old * operand);
    case NBRMA_ELEMENT_FLOAT_SUM: return static_cast<T>(old + operand);
    case NBRMA_ELEMENT_MIN_SIGNED:
    case NBRMA_ELEMENT_MIN_UNSIGNED:
    case NBRMA_ELEMENT_FLOAT_MIN: return old < operand ? old : operand;
    default: return old > operand ? old : operand;
    }
}

template <class T> T random_element(std::mt19937_64 &rng)
{
    if constexpr (std::is_floating_point_v<T>) {
        const uint64_t pick = rng() % 16;
        if (pick == 0)
            return std::numeric_limits<T>::quiet_NaN();
        if (pick == 1)
            return -std::numeric_limits<T>::infinity();
        return static_cast<T>(static_cast<int64_t>(rng() % 2001) - 1000) / static_cast<T>(8);
    } else {
        return static_cast<T>(rng());
    }
}

// Elements of type T at random offsets (aligned and not, 4- and 8-byte ones
// too) against the typed reference, bit for bit, with the old values fetched.
template <class T> void check_element_ops(std::initializer_list<nbrma_narrow_op_t> ops, unsigned seed)
{
    std::mt19937_64 rng(seed);
    const unsigned esize = sizeof(T);
    for (nbrma_narrow_op_t op : ops)
        for (int round = 0; round < 500; ++round) {
            alignas(8) unsigned char mem[256], expect[256];
            // up to 28 elements of 4 and 8 bytes: runs of 64 bytes and more go in
            // transactions where the processor has them
            const size_t first = rng() % 16, n = 1 + rng() % (esize >= 4 ? 28 : 12);
            std::vector<T> operand(n), fetched(n), want_fetched(n);
            for (size_t i = 0; i < n; ++i) {
                const T v = random_element<T>(rng);
                std::memcpy(mem + first + i * esize, &v, esize);
                operand[i] = random_element<T>(rng);
            }
            std::memcpy(expect, mem, sizeof mem);
            for (size_t i = 0; i < n; ++i) {
                T old;
                std::memcpy(&old, expect + first + i * esize, esize);
                want_fetched[i] = old;
                const T now = typed_reference<T>(old, operand[i], op);
                std::memcpy(expect + first + i * esize, &now, esize);
            }
            nbrma_cpu_apply(mem + first, operand.data(), n, esize, op, fetched.data());
            ASSERT_EQ(std::memcmp(mem, expect, sizeof mem), 0)
                << "op " << op << " at " << first << ", " << n << " elements of " << esize;
            ASSERT_EQ(std::memcmp(fetched.data(), want_fetched.data(), n * esize), 0);
        }
}

}  // namespace

// MIN, MAX and PROD of integers and the arithmetic of float and double, which
// the CPU applies one element at a time by compare-and-swap: the signedness
// decides MIN and MAX, NaNs and infinities fall as MPICH's comparisons let them.
TEST(cpu_ops, typed_element_ops_match_mpich_arithmetic)
{
    const auto signed_ops = {NBRMA_ELEMENT_PROD, NBRMA_ELEMENT_MIN_SIGNED, NBRMA_ELEMENT_MAX_SIGNED};
    const auto unsigned_ops = {NBRMA_ELEMENT_PROD, NBRMA_ELEMENT_MIN_UNSIGNED,
                               NBRMA_ELEMENT_MAX_UNSIGNED};
    const auto float_ops = {NBRMA_ELEMENT_FLOAT_SUM, NBRMA_ELEMENT_FLOAT_PROD,
                            NBRMA_ELEMENT_FLOAT_MIN, NBRMA_ELEMENT_FLOAT_MAX};
    check_element_ops<int8_t>(signed_ops, 11);
    check_element_ops<uint8_t>(unsigned_ops, 12);
    check_element_ops<int16_t>(signed_ops, 13);
    check_element_ops<uint16_t>(unsigned_ops, 14);
    check_element_ops<int32_t>(signed_ops, 15);
    check_element_ops<uint32_t>(unsigned_ops, 16);
    check_element_ops<int64_t>(signed_ops, 17);
    check_element_ops<uint64_t>(unsigned_ops, 18);
    check_element_ops<float>(float_ops, 19);
    check_element_ops<double>(float_ops, 20);
}

// Threads add 1.0 to one double and one float, and raise a signed maximum in
// a 4-byte and a 1-byte element (next to bytes others add to): every update
// survives, as with the integer additions above.
TEST(cpu_ops, concurrent_element_ops_are_not_lost)
{
    alignas(8) double sum64 = 0;
    alignas(4) float sum32 = 0;
    alignas(4) int32_t max32 = INT32_MIN;
    alignas(8) int8_t bytes[8] = {-128, 0, 0, 0, 0, 0, 0, 0};
    const int threads = 4, rounds = 20000;
    std::vector<std::thread> pool;
    for (int t = 0; t < threads; ++t)
        pool.emplace_back([&, t] {
            const double one64 = 1;
            const float one32 = 1;
            const int8_t add = 1;
            for (int r = 0; r < rounds; ++r) {
                nbrma_cpu_apply(&sum64, &one64, 1, 8, NBRMA_ELEMENT_FLOAT_SUM, nullptr);
                nbrma_cpu_apply(&sum32, &one32, 1, 4, NBRMA_ELEMENT_FLOAT_SUM, nullptr);
                const int32_t mine = r * threads + t - rounds * threads / 2;
                nbrma_cpu_apply(&max32, &mine, 1, 4, NBRMA_ELEMENT_MAX_SIGNED, nullptr);
                const int8_t small = static_cast<int8_t>(r % 100 - 50 + t);
                nbrma_cpu_apply(&bytes[0], &small, 1, 1, NBRMA_ELEMENT_MAX_SIGNED, nullptr);
                nbrma_cpu_apply(&bytes[1], &add, 1, 1, NBRMA_NARROW_SUM, nullptr);
            }
        });
    for (auto &th : pool)
        th.join();
    EXPECT_EQ(sum64, static_cast<double>(threads * rounds));
    EXPECT_EQ(sum32, static_cast<float>(threads * rounds));
    EXPECT_EQ(max32, rounds * threads - 1 - rounds * threads / 2);
    EXPECT_EQ(bytes[0], 49 + threads - 1) << "the largest operand";
    EXPECT_EQ(bytes[1], static_cast<int8_t>(threads * rounds)) << "the neighbour's additions";
}

// --- the origin's compare-and-swap loops on another process's words --------
// (nbrma_narrow_update_words: UCX's compare-and-swap, here on a model of the
// target's memory)

namespace {

// The target's memory at a made-up address, with UCX's compare-and-swap: the
// word is returned, and replaced only if it equals the expected one. Before
// a swap, "another writer" may change the bytes of the word that lie outside
// [mine_lo, mine_hi) (another origin's neighbouring elements); from the n-th
// swap on the swap fails with `fail_with`.
struct remote_memory {
    static constexpr uint64_t base = 0x7f0000001000ull;
    alignas(8) unsigned char bytes[64] = {};
    std::mt19937_64 *rng = nullptr;  // set: another writer
    uint64_t mine_lo = 0, mine_hi = 0;
    unsigned swaps = 0, fail_at = ~0u;
    int fail_with = 0;
    std::vector<uint64_t> swapped_words;

    static int cswap(void *ctx, uint64_t word_addr, uint64_t expected, uint64_t desired,
                     uint64_t *found)
    {
        auto *m = static_cast<remote_memory *>(ctx);
        EXPECT_EQ(word_addr % 8, 0u);
        EXPECT_GE(word_addr, base);
        EXPECT_LE(word_addr + 8, base + sizeof m->bytes);
        if (m->swaps++ == m->fail_at)
            return m->fail_with;
        unsigned char *w = m->bytes + (word_addr - base);
        if (m->rng && (*m->rng)() % 2)
            for (uint64_t a = word_addr; a < word_addr + 8; ++a)
                if (a < m->mine_lo || a >= m->mine_hi)
                    w[a - word_addr] = static_cast<unsigned char>((*m->rng)());
        std::memcpy(found, w, 8);
        if (*found == expected)
            std::memcpy(w, &desired, 8);
        m->swapped_words.push_back(word_addr);
        return 0;
    }
};

// A random update (any offset where the elements fit, 1 to 16 elements, any
// lane-wise operation) against plain arithmetic on the same bytes; the bytes
// outside the range are the other writer's.
template <class T> void check_words_against_reference(unsigned seed, bool other_writer)
{
    std::mt19937_64 rng(seed);
    const unsigned esize = sizeof(T);
    for (int round = 0; round < 3000; ++round) {
        remote_memory m;
        for (auto &b : m.bytes)
            b = static_cast<unsigned char>(rng());
        unsigned char before[sizeof m.bytes];
        std::memcpy(before, m.bytes, sizeof before);
        const size_t n = 1 + rng() % 16;
        uint64_t addr;
        do
            addr = remote_memory::base + rng() % (sizeof m.bytes - n * esize + 1);
        while (!nbrma_narrow_range_fits(addr, n, esize));
        std::vector<T> operand(n), fetched(n + 1, T(0x5a)), want(n);
        for (auto &v : operand)
            v = static_cast<T>(rng());
        const nbrma_narrow_op_t op = all_ops[rng() % 6];
        m.mine_lo = addr;
        m.mine_hi = addr + n * esize;
        m.rng = other_writer ? &rng : nullptr;
        nbrma_word_guess_t guess = {};
        if (rng() % 2) {  // a guess of the first word, right or wrong
            guess.key = &m;
            guess.word_addr = addr & ~uint64_t(7);
            std::memcpy(&guess.value, m.bytes + (guess.word_addr - remote_memory::base), 8);
            guess.value ^= rng() % 2;
        }
        ASSERT_EQ(nbrma_narrow_update_words(addr, n, esize, op,
                                            op == NBRMA_NARROW_NO_OP ? nullptr : operand.data(),
                                            nullptr, fetched.data(), &guess, &m,
                                            remote_memory::cswap, &m),
                  0);
        const size_t first = addr - remote_memory::base;
        for (size_t i = 0; i < n; ++i) {
            T old, now;
            std::memcpy(&old, before + first + i * esize, esize);
            std::memcpy(&now, m.bytes + first + i * esize, esize);
            ASSERT_EQ(fetched[i], old) << "old value " << i;
            ASSERT_EQ(now, reference<T>(old, operand[i], op))
                << "op " << op << " element " << i << " of " << n << " at " << first;
        }
        ASSERT_EQ(fetched[n], T(0x5a)) << "nothing fetched past the range";
        for (size_t b = 0; !other_writer && b < sizeof m.bytes; ++b) {
            if (b < first || b >= first + n * esize) {
                ASSERT_EQ(m.bytes[b], before[b]) << "byte " << b << " outside the range";
            }
        }
        // the guess is the last word swapped and what was written there
        ASSERT_EQ(guess.key, &m);
        ASSERT_EQ(guess.word_addr, ((addr + (n - 1) * esize) & ~uint64_t(7)));
        if (!other_writer) {
            ASSERT_EQ(std::memcmp(&guess.value, m.bytes + (guess.word_addr - remote_memory::base),
                                  8),
                      0);
        }
    }
}

}  // namespace

TEST(narrow_words, bytes_match_plain_arithmetic) { check_words_against_reference<uint8_t>(31, false); }
TEST(narrow_words, shorts_match_plain_arithmetic) { check_words_against_reference<uint16_t>(32, false); }

// Another writer changes the rest of the word between the origin's read and
// its swap: the swap fails, the origin retries from what it found, and
// neither update is lost.
TEST(narrow_words, another_writer_of_the_word_is_not_undone)
{
    check_words_against_reference<uint8_t>(33, true);
    check_words_against_reference<uint16_t>(34, true);
}

// One swap per word when the guess is right (the same counter again), two
// when it is not (another word, another target's memory, a changed word).
TEST(narrow_words, the_guess_saves_a_swap)
{
    remote_memory m;
    const uint64_t counter = remote_memory::base + 8 + 3;
    const uint8_t one = 1;
    uint8_t old = 0;
    nbrma_word_guess_t guess = {};
    m.bytes[8] = 9;  // the word is not 0: no guess is wrong
    ASSERT_EQ(nbrma_narrow_update_words(counter, 1, 1, NBRMA_NARROW_SUM, &one, nullptr, &old,
                                        &guess, &m, remote_memory::cswap, &m),
              0);
    EXPECT_EQ(m.swaps, 2u);
    EXPECT_EQ(m.bytes[11], 1);
    for (int i = 0; i < 5; ++i)
        ASSERT_EQ(nbrma_narrow_update_words(counter, 1, 1, NBRMA_NARROW_SUM, &one, nullptr, &old,
                                            &guess, &m, remote_memory::cswap, &m),
                  0);
    EXPECT_EQ(m.swaps, 7u) << "one swap each";
    EXPECT_EQ(old, 5);
    EXPECT_EQ(m.bytes[11], 6);
    const int other_target = 0;
    ASSERT_EQ(nbrma_narrow_update_words(counter, 1, 1, NBRMA_NARROW_SUM, &one, nullptr, nullptr,
                                        &guess, &other_target, remote_memory::cswap, &m),
              0);
    EXPECT_EQ(m.swaps, 9u) << "the guess is per target's memory";
    m.bytes[12] = 77;  // another writer
    ASSERT_EQ(nbrma_narrow_update_words(counter, 1, 1, NBRMA_NARROW_SUM, &one, nullptr, &old,
                                        &guess, &other_target, remote_memory::cswap, &m),
              0);
    EXPECT_EQ(m.swaps, 11u);
    EXPECT_EQ(old, 7);
    EXPECT_EQ(m.bytes[11], 8);
    EXPECT_EQ(m.bytes[12], 77);
    nbrma_word_guess_t none = {};
    ASSERT_EQ(nbrma_narrow_update_words(remote_memory::base + 40, 2, 2, NBRMA_NARROW_REPLACE,
                                        "\1\0\2\0", nullptr, nullptr, &none, &m,
                                        remote_memory::cswap, &m),
              0);
    EXPECT_EQ(m.swaps, 12u) << "a word of zeros: no guess is right";
    EXPECT_EQ(none.word_addr, remote_memory::base + 40);
    EXPECT_EQ(m.bytes[40] + m.bytes[42], 3);
}

// Elements across words: one swap per word, the fetched values in order.
TEST(narrow_words, a_range_across_words_goes_word_by_word)
{
    remote_memory m;
    for (size_t b = 0; b < sizeof m.bytes; ++b)
        m.bytes[b] = static_cast<unsigned char>(b);
    std::vector<uint8_t> operand(16, 0x80), fetched(16);
    nbrma_word_guess_t guess = {};
    ASSERT_EQ(nbrma_narrow_update_words(remote_memory::base + 5, 16, 1, NBRMA_NARROW_BXOR,
                                        operand.data(), nullptr, fetched.data(), &guess, &m,
                                        remote_memory::cswap, &m),
              0);
    EXPECT_EQ(m.swapped_words, (std::vector<uint64_t>{
                                   remote_memory::base, remote_memory::base, remote_memory::base + 8,
                                   remote_memory::base + 8, remote_memory::base + 16,
                                   remote_memory::base + 16}));
    for (size_t i = 0; i < 16; ++i) {
        EXPECT_EQ(fetched[i], 5 + i);
        EXPECT_EQ(m.bytes[5 + i], (5 + i) ^ 0x80);
    }
    EXPECT_EQ(m.bytes[4], 4);
    EXPECT_EQ(m.bytes[21], 21);
}

// Compare-and-swap of one element: swapped in only if it equals the compare
// value, the old element fetched either way, the neighbours kept.
TEST(narrow_words, compare_and_swap_of_one_element)
{
    for (unsigned esize : {1u, 2u}) {
        remote_memory m;
        std::memset(m.bytes, 0xee, sizeof m.bytes);
        const uint64_t at = remote_memory::base + 16 + 6;
        const uint16_t value = 0x1234, wrong = 0x1111, right = 0xeeee;
        uint16_t old = 0;
        nbrma_word_guess_t guess = {};
        ASSERT_EQ(nbrma_narrow_update_words(at, 1, esize, NBRMA_NARROW_REPLACE, &value, &wrong,
                                            &old, &guess, &m, remote_memory::cswap, &m),
                  0);
        EXPECT_EQ(old, esize == 1 ? 0xeeu : 0xeeeeu);
        EXPECT_EQ(m.bytes[22], 0xee) << "not equal: unchanged";
        old = 0;
        m.rng = nullptr;
        ASSERT_EQ(nbrma_narrow_update_words(at, 1, esize, NBRMA_NARROW_REPLACE, &value, &right,
                                            &old, &guess, &m, remote_memory::cswap, &m),
                  0);
        EXPECT_EQ(old, esize == 1 ? 0xeeu : 0xeeeeu);
        uint16_t now = 0;
        std::memcpy(&now, m.bytes + 22, esize);
        EXPECT_EQ(now, esize == 1 ? 0x34u : 0x1234u);
        EXPECT_EQ(m.bytes[21], 0xee);
        EXPECT_EQ(m.bytes[22 + esize], 0xee);
    }
}

// An error of the swap ends the update: the words before it are updated and
// fetched, the others untouched, and no swap follows.
TEST(narrow_words, an_error_ends_the_update)
{
    remote_memory m;
    m.fail_at = 1;  // the second swap: the second word (the guess of 0 is right)
    m.fail_with = 0x2a;
    std::vector<uint8_t> operand(12, 1), fetched(12, 0x77);
    nbrma_word_guess_t guess = {};
    EXPECT_EQ(nbrma_narrow_update_words(remote_memory::base + 4, 12, 1, NBRMA_NARROW_SUM,
                                        operand.data(), nullptr, fetched.data(), &guess, &m,
                                        remote_memory::cswap, &m),
              0x2a);
    EXPECT_EQ(m.swaps, 2u);
    for (size_t i = 0; i < 12; ++i) {
        EXPECT_EQ(m.bytes[4 + i], i < 4 ? 1 : 0) << "byte " << 4 + i;
        EXPECT_EQ(fetched[i], i < 4 ? 0 : 0x77) << "fetched " << i;
    }
    EXPECT_EQ(guess.word_addr, remote_memory::base) << "the last word swapped";
}

TEST(narrow_words, which_ranges_fit_in_words)
{
    EXPECT_TRUE(nbrma_narrow_range_fits(0x1000, 0, 1));
    EXPECT_TRUE(nbrma_narrow_range_fits(0x1001, 16, 1));
    EXPECT_TRUE(nbrma_narrow_range_fits(0x1000, 16, 2));
    EXPECT_TRUE(nbrma_narrow_range_fits(0x1002, 4, 2)) << "the fourth in the next word";
    EXPECT_TRUE(nbrma_narrow_range_fits(0x1003, 2, 2));
    EXPECT_FALSE(nbrma_narrow_range_fits(0x1003, 3, 2)) << "the third across two words";
    EXPECT_FALSE(nbrma_narrow_range_fits(0x1007, 1, 2));
    EXPECT_TRUE(nbrma_narrow_range_fits(0x1006, 1, 2));
    EXPECT_TRUE(nbrma_narrow_range_fits(0x1001, 1, 2));
    EXPECT_FALSE(nbrma_narrow_range_fits(0x1000, 1, 4)) << "1 and 2 bytes only";
    EXPECT_TRUE(nbrma_narrow_range_fits(UINT64_MAX - 7, 8, 1)) << "the top of the address space";
}

// nbrma_cpu_cswap on packed elements of every size: the compare value is
// replaced by the old element.
TEST(cpu_ops, cswap_of_packed_elements)
{
    for (unsigned esize : {1u, 2u, 4u, 8u})
        for (size_t offset : {size_t(0), size_t(1), size_t(esize)}) {
            alignas(8) unsigned char mem[32];
            std::memset(mem, 0x11, sizeof mem);
            unsigned char value[8], compare_result[8];
            std::memset(value, 0x99, sizeof value);
            std::memset(compare_result, 0x22, sizeof compare_result);
            nbrma_cpu_cswap_packed(mem + 8 + offset, esize, value, compare_result);
            EXPECT_EQ(compare_result[0], 0x11) << "the old element";
            EXPECT_EQ(mem[8 + offset], 0x11) << "not equal: unchanged";
            nbrma_cpu_cswap_packed(mem + 8 + offset, esize, value, compare_result);
            for (unsigned b = 0; b < esize; ++b) {
                EXPECT_EQ(compare_result[b], 0x11);
                EXPECT_EQ(mem[8 + offset + b], 0x99) << esize << " bytes at +" << offset;
            }
            EXPECT_EQ(mem[8 + offset + esize], 0x11);
            EXPECT_EQ(mem[7 + offset], 0x11);
        }
}
