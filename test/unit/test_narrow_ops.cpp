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
#include <thread>
#include <type_traits>
#include <vector>

#include "narrow_ops.h"

namespace {

const nbrma_narrow_op_t all_ops[] = {NBRMA_NARROW_SUM,  NBRMA_NARROW_BAND,    NBRMA_NARROW_BOR,
                                     NBRMA_NARROW_BXOR, NBRMA_NARROW_REPLACE, NBRMA_NARROW_NO_OP};

template <class T> T reference(T old, T operand, nbrma_narrow_op_t op)
{
    switch (op) {
    case NBRMA_NARROW_SUM: return static_cast<T>(old + operand);
    case NBRMA_NARROW_BAND: return static_cast<T>(old & operand);
    case NBRMA_NARROW_BOR: return static_cast<T>(old | operand);
    case NBRMA_NARROW_BXOR: return static_cast<T>(old ^ operand);
    case NBRMA_NARROW_REPLACE: return operand;
    default: return old;
    }
}

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
            const size_t first = rng() % 16, n = 1 + rng() % 12;
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
