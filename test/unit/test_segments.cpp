// The elements of an accumulate's target as segments of its datatype
// (ch4_netmod_rma/peer_memory/segments.h), without MPI: element addresses,
// alignment, and the CPU's atomics segment after segment against a plain
// reference.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

#include "segments.h"
#include "narrow_reference.hpp"

namespace {

iovec seg(uint64_t addr, size_t len)
{
    return iovec{reinterpret_cast<void *>(static_cast<uintptr_t>(addr)), len};
}

}  // namespace

TEST(segments, element_addresses_in_segment_order)
{
    // another process's addresses: never dereferenced
    const iovec segments[] = {seg(0x7f0000000010, 8), seg(0x7f0000000100, 0),
                              seg(0x7f0000000004, 12)};
    std::vector<uint64_t> addrs(6, 0);
    ASSERT_TRUE(nbrma_segments_element_addresses(segments, 3, 4, addrs.data()));
    EXPECT_EQ(addrs, (std::vector<uint64_t>{0x7f0000000010, 0x7f0000000014, 0x7f0000000004,
                                             0x7f0000000008, 0x7f000000000c, 0}));
    EXPECT_TRUE(nbrma_segments_element_addresses(segments, 0, 4, addrs.data())) << "none";
    const iovec one = seg(0x1000, 16);
    ASSERT_TRUE(nbrma_segments_element_addresses(&one, 1, 8, addrs.data()));
    EXPECT_EQ(addrs[0], 0x1000u);
    EXPECT_EQ(addrs[1], 0x1008u);
}

// A segment of part of an element is a datatype error: the addresses of the
// segments before it are written, none after.
TEST(segments, a_segment_of_part_of_an_element_is_refused)
{
    const iovec segments[] = {seg(0x2000, 8), seg(0x3000, 6), seg(0x4000, 8)};
    std::vector<uint64_t> addrs(5, 7);
    EXPECT_FALSE(nbrma_segments_element_addresses(segments, 3, 4, addrs.data()));
    EXPECT_EQ(addrs, (std::vector<uint64_t>{0x2000, 0x2004, 7, 7, 7}));
    const iovec odd = seg(0x5000, 3);
    EXPECT_FALSE(nbrma_segments_element_addresses(&odd, 1, 2, addrs.data()));
    EXPECT_TRUE(nbrma_segments_element_addresses(&odd, 1, 1, addrs.data()));
}

TEST(segments, aligned_when_every_segment_begins_aligned)
{
    const iovec segments[] = {seg(0x1000, 8), seg(0x1010, 4), seg(0x1024, 4)};
    EXPECT_TRUE(nbrma_segments_aligned(segments, 3, 4));
    EXPECT_FALSE(nbrma_segments_aligned(segments, 3, 8)) << "the third at 4 mod 8";
    EXPECT_TRUE(nbrma_segments_aligned(segments, 2, 8));
    EXPECT_TRUE(nbrma_segments_aligned(segments, 0, 8)) << "no segment";
    const iovec odd = seg(0x1001, 2);
    EXPECT_FALSE(nbrma_segments_aligned(&odd, 1, 2));
    EXPECT_TRUE(nbrma_segments_aligned(&odd, 1, 1));
}

namespace {

// Random disjoint segments of a buffer (in random order, empty ones too, of
// whole elements at element-aligned or odd offsets), a packed operand and
// fetched buffer: each element gets the operand and yields the old value at
// its packed position; the bytes between segments stay.
template <class T> void check_segments_against_reference(unsigned seed)
{
    const nbrma_narrow_op_t ops[] = {NBRMA_NARROW_SUM,  NBRMA_NARROW_BAND,
                                     NBRMA_NARROW_BOR,  NBRMA_NARROW_BXOR,
                                     NBRMA_NARROW_REPLACE, NBRMA_NARROW_NO_OP};
    const size_t esize = sizeof(T);
    std::mt19937_64 rng(seed);
    for (int round = 0; round < 2000; ++round) {
        alignas(8) unsigned char mem[512], expect[512];
        for (auto &b : mem)
            b = static_cast<unsigned char>(rng());
        std::memcpy(expect, mem, sizeof mem);
        // cut the buffer into slots, keep some as segments
        std::vector<iovec> segments;
        size_t at = rng() % 3;
        while (segments.size() < 12) {
            const size_t len = esize * (rng() % 5);
            if (at + len + 8 > sizeof mem)
                break;
            if (rng() % 3)
                segments.push_back(iovec{mem + at, len});
            at += len + rng() % 9;
            if (rng() % 2)
                at += esize - at % esize;  // aligned, or not
        }
        std::shuffle(segments.begin(), segments.end(), rng);
        size_t n = 0;
        for (const auto &s : segments)
            n += s.iov_len / esize;
        const nbrma_narrow_op_t op = ops[rng() % 6];
        std::vector<T> operand(n + 1), fetched(n + 1, T(0x3c)), want(n + 1, T(0x3c));
        for (auto &v : operand)
            v = static_cast<T>(rng());
        size_t i = 0;
        for (const auto &s : segments)
            for (size_t off = 0; off < s.iov_len; off += esize, ++i) {
                unsigned char *e = expect + (static_cast<unsigned char *>(s.iov_base) - mem) + off;
                T old;
                std::memcpy(&old, e, esize);
                want[i] = old;
                const T now = reference<T>(old, operand[i], op);
                std::memcpy(e, &now, esize);
            }
        const bool with_fetched = rng() % 4 != 0;
        nbrma_cpu_apply_segments(segments.data(), segments.size(),
                                 op == NBRMA_NARROW_NO_OP ? nullptr : operand.data(),
                                 static_cast<unsigned>(esize), op,
                                 with_fetched ? fetched.data() : nullptr);
        ASSERT_EQ(std::memcmp(mem, expect, sizeof mem), 0)
            << "op " << op << ", " << segments.size() << " segments of " << esize;
        if (!with_fetched)
            std::fill(want.begin(), want.end(), T(0x3c));
        ASSERT_EQ(fetched, want) << "fetched in segment order";
    }
}

}  // namespace

TEST(segments, cpu_atomics_segment_after_segment_match_plain_arithmetic)
{
    check_segments_against_reference<uint8_t>(41);
    check_segments_against_reference<uint16_t>(42);
    check_segments_against_reference<uint32_t>(43);
    check_segments_against_reference<uint64_t>(44);
}
