// The sorted table of address ranges behind the table of UCX allocations
// (formats/address_table.c; ch4/memory/ucx_memory.c keeps its lock and the
// UCX calls), without MPI or UCX: insertion at the front, in the middle and
// at the end, containment at the ranges' edges and of zero-length ranges,
// queries that overlap an entry without lying inside it, removal by base
// only, and growth past the first 16 entries.

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <iterator>
#include <map>
#include <vector>

extern "C" {
#include "address_table.h"
}

namespace {

// payloads are never looked at by the table: any distinct pointers do
void *tag(uintptr_t n)
{
    return reinterpret_cast<void *>(n);
}

class AddressTable : public ::testing::Test {
  protected:
    void TearDown() override
    {
        nbrma_address_table_free(&table);
    }
    void insert(uintptr_t base, size_t size)
    {
        ASSERT_TRUE(nbrma_address_table_insert(&table, base, size, tag(base)));
    }
    // the payload of the entry containing [addr, addr + size), or nullptr
    void *find(uintptr_t addr, size_t size) const
    {
        const nbrma_address_range_t *r = nbrma_address_table_containing(&table, addr, size);
        return r ? r->payload : nullptr;
    }
    std::vector<uintptr_t> bases() const
    {
        std::vector<uintptr_t> b;
        for (size_t i = 0; i < table.n; i++)
            b.push_back(table.range[i].base);
        return b;
    }
    nbrma_address_table_t table = {};
};

TEST_F(AddressTable, AnEmptyTableHoldsNothing)
{
    EXPECT_EQ(find(0, 0), nullptr);
    EXPECT_EQ(find(0x1000, 1), nullptr);
    void *payload = tag(7);
    EXPECT_FALSE(nbrma_address_table_remove(&table, 0x1000, &payload));
    EXPECT_EQ(payload, tag(7)) << "untouched when nothing is removed";
    nbrma_address_table_free(&table);   // twice is harmless (TearDown)
    EXPECT_EQ(table.n, 0u);
}

TEST_F(AddressTable, InsertsAtTheFrontInTheMiddleAndAtTheEnd)
{
    insert(0x5000, 0x100);
    insert(0x1000, 0x100);      // front
    insert(0x9000, 0x100);      // end
    insert(0x3000, 0x100);      // middle
    insert(0x7000, 0x100);      // middle
    insert(0x0800, 0x100);      // front again
    EXPECT_EQ(bases(), (std::vector<uintptr_t>{0x0800, 0x1000, 0x3000, 0x5000, 0x7000, 0x9000}));
    for (uintptr_t b : bases())
        EXPECT_EQ(find(b + 0x10, 0x10), tag(b));
}

TEST_F(AddressTable, ContainsRangesUpToTheEdgesOnly)
{
    insert(0x1000, 0x1000);     // [0x1000, 0x2000)
    insert(0x2000, 0x100);      // adjacent: [0x2000, 0x2100)
    insert(0x4000, 0x10);

    EXPECT_EQ(find(0x1000, 0x1000), tag(0x1000));       // the whole allocation
    EXPECT_EQ(find(0x1000, 1), tag(0x1000));            // its first byte
    EXPECT_EQ(find(0x1fff, 1), tag(0x1000));            // its last byte
    EXPECT_EQ(find(0x1f00, 0x100), tag(0x1000));        // ends at its end
    EXPECT_EQ(find(0x1f00, 0x101), nullptr);            // one byte past it
    EXPECT_EQ(find(0x0fff, 1), nullptr);                // before the first base
    EXPECT_EQ(find(0x0fff, 2), nullptr);                // starts before, ends inside
    EXPECT_EQ(find(0x2000, 1), tag(0x2000));            // the next one's first byte
    EXPECT_EQ(find(0x20ff, 1), tag(0x2000));
    EXPECT_EQ(find(0x2100, 1), nullptr);                // in the gap
    EXPECT_EQ(find(0x3fff, 1), nullptr);
    EXPECT_EQ(find(0x400f, 1), tag(0x4000));
    EXPECT_EQ(find(0x4010, 1), nullptr);                // past the last one
    EXPECT_EQ(find(UINTPTR_MAX, 1), nullptr);
}

// What ucx_memory.c's lookup always answered: a zero-length range lies in an
// entry from its base up to and including its end (MPIDI_NBRMA_memory_map
// and MPI_Win_allocate's check ask only for size > 0).
TEST_F(AddressTable, ZeroLengthRangesLieInsideUpToTheEnd)
{
    insert(0x1000, 0x100);
    insert(0x3000, 0);          // an entry of no bytes

    EXPECT_EQ(find(0x1000, 0), tag(0x1000));
    EXPECT_EQ(find(0x1080, 0), tag(0x1000));
    EXPECT_EQ(find(0x1100, 0), tag(0x1000));            // at the end itself
    EXPECT_EQ(find(0x1101, 0), nullptr);
    EXPECT_EQ(find(0x0fff, 0), nullptr);
    EXPECT_EQ(find(0x3000, 0), tag(0x3000));
    EXPECT_EQ(find(0x3000, 1), nullptr);
    EXPECT_EQ(find(0x3001, 0), nullptr);
}

TEST_F(AddressTable, QueriesThatOnlyOverlapAnEntryAreNotInside)
{
    insert(0x1000, 0x100);
    insert(0x1100, 0x100);      // adjacent
    insert(0x2000, 0x100);

    EXPECT_EQ(find(0x10f0, 0x20), nullptr);             // across two adjacent entries
    EXPECT_EQ(find(0x1000, 0x200), nullptr);            // both of them whole
    EXPECT_EQ(find(0x0f00, 0x300), nullptr);            // around the first
    EXPECT_EQ(find(0x1180, 0x1000), nullptr);           // into the next and past it
    EXPECT_EQ(find(0x1f00, 0x180), nullptr);            // from the gap into one
    EXPECT_EQ(find(0x1000, SIZE_MAX), nullptr);         // the longest range
    EXPECT_EQ(find(0x10ff, SIZE_MAX), nullptr);
}

// The address arithmetic must not wrap at the top of the address space.
TEST_F(AddressTable, RangesAtTheTopOfTheAddressSpace)
{
    insert(UINTPTR_MAX - 15, 16);

    EXPECT_EQ(find(UINTPTR_MAX, 1), tag(UINTPTR_MAX - 15));
    EXPECT_EQ(find(UINTPTR_MAX - 15, 16), tag(UINTPTR_MAX - 15));
    EXPECT_EQ(find(UINTPTR_MAX, 2), nullptr);
    EXPECT_EQ(find(UINTPTR_MAX - 15, 17), nullptr);
    EXPECT_EQ(find(UINTPTR_MAX - 16, 1), nullptr);
}

TEST_F(AddressTable, RemovesByBaseOnly)
{
    insert(0x1000, 0x100);
    insert(0x2000, 0x100);
    insert(0x3000, 0x100);
    void *payload = nullptr;

    EXPECT_FALSE(nbrma_address_table_remove(&table, 0x2001, &payload));  // inside, not a base
    EXPECT_FALSE(nbrma_address_table_remove(&table, 0x1fff, &payload));
    EXPECT_FALSE(nbrma_address_table_remove(&table, 0x4000, &payload));
    EXPECT_EQ(payload, nullptr);
    EXPECT_EQ(table.n, 3u);

    ASSERT_TRUE(nbrma_address_table_remove(&table, 0x2000, &payload));   // the middle
    EXPECT_EQ(payload, tag(0x2000));
    EXPECT_EQ(bases(), (std::vector<uintptr_t>{0x1000, 0x3000}));
    EXPECT_EQ(find(0x2000, 1), nullptr);
    EXPECT_EQ(find(0x3000, 1), tag(0x3000));
    EXPECT_FALSE(nbrma_address_table_remove(&table, 0x2000, &payload));  // twice

    ASSERT_TRUE(nbrma_address_table_remove(&table, 0x3000, &payload));   // the end
    ASSERT_TRUE(nbrma_address_table_remove(&table, 0x1000, &payload));   // the front
    EXPECT_EQ(payload, tag(0x1000));
    EXPECT_EQ(table.n, 0u);
    EXPECT_EQ(find(0x1000, 1), nullptr);

    insert(0x5000, 0x10);       // the emptied table takes new entries
    EXPECT_EQ(find(0x5000, 0x10), tag(0x5000));
}

// Equal bases never come from UCX; the table keeps them in insertion order,
// finds the last one and removes it first (as ucx_memory.c's own code did).
TEST_F(AddressTable, EqualBasesGoLastInFirstOut)
{
    ASSERT_TRUE(nbrma_address_table_insert(&table, 0x1000, 0x10, tag(1)));
    ASSERT_TRUE(nbrma_address_table_insert(&table, 0x1000, 0x20, tag(2)));
    EXPECT_EQ(find(0x1000, 0x10), tag(2));
    void *payload = nullptr;
    ASSERT_TRUE(nbrma_address_table_remove(&table, 0x1000, &payload));
    EXPECT_EQ(payload, tag(2));
    ASSERT_TRUE(nbrma_address_table_remove(&table, 0x1000, &payload));
    EXPECT_EQ(payload, tag(1));
}

TEST_F(AddressTable, GrowsByDoublingFromSixteen)
{
    for (uintptr_t i = 0; i < 16; i++)
        insert(0x10000 + i * 0x100, 0x80);
    EXPECT_EQ(table.cap, 16u);
    insert(0x100, 0x80);        // the 17th, at the front
    EXPECT_EQ(table.cap, 32u);
    EXPECT_EQ(table.n, 17u);
    EXPECT_EQ(bases().front(), 0x100u);
    for (size_t i = 0; i < table.n; i++)
        EXPECT_EQ(find(table.range[i].base + 0x7f, 1), tag(table.range[i].base));
}

// Allocation and free in random order, checked against a std::map: the
// table stays sorted and every range is found with its own payload.
TEST_F(AddressTable, RandomInsertionsAndRemovalsMatchAMap)
{
    std::map<uintptr_t, size_t> live;   // base -> size, bases 0x1000 apart
    std::srand(11);
    for (int step = 0; step < 20000; step++) {
        uintptr_t base = 0x1000 * (1 + std::rand() % 2000);
        if (std::rand() % 2 && live.find(base) == live.end()) {
            size_t size = 1 + std::rand() % 0x1000;
            insert(base, size);
            live[base] = size;
        } else {
            void *payload = nullptr;
            bool listed = live.erase(base) > 0;
            ASSERT_EQ(nbrma_address_table_remove(&table, base, &payload), listed);
            if (listed) {
                ASSERT_EQ(payload, tag(base));
            }
        }
        uintptr_t probe = 0x1000 * (1 + std::rand() % 2000) + std::rand() % 0x1000;
        auto above = live.upper_bound(probe);
        bool inside = above != live.begin() &&
            probe - std::prev(above)->first < std::prev(above)->second;
        ASSERT_EQ(find(probe, 1) != nullptr, inside) << "probe " << probe;
    }
    std::vector<uintptr_t> expected;
    for (const auto &e : live)
        expected.push_back(e.first);
    EXPECT_EQ(bases(), expected);
    EXPECT_TRUE(std::is_sorted(expected.begin(), expected.end()));
}

}  // namespace
