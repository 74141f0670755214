// The table of memory that UCX allocated (ch4/memory/ucx_memory.c), tested
// with a UCX context of its own and without MPI: lookups of ranges inside,
// across and outside allocations, mappings that reuse an allocation's own
// (and are not unmapped by their users), new mappings of other memory,
// allocation/free cycles that leave the table as it was, and allocations
// still held when the context goes (MPI_Finalize without MPI_Free_mem).

#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <vector>

extern "C" {
#include "ucx_memory.h"
}

namespace {

class UcxMemory : public ::testing::Test {
  protected:
    void SetUp() override
    {
        ucp_params_t params = {};
        params.field_mask = UCP_PARAM_FIELD_FEATURES;
        params.features = UCP_FEATURE_RMA | UCP_FEATURE_AMO64;
        ucp_config_t *config;
        ASSERT_EQ(ucp_config_read(nullptr, nullptr, &config), UCS_OK);
        ASSERT_EQ(ucp_init(&params, config, &context), UCS_OK);
        ucp_config_release(config);
    }
    void TearDown() override
    {
        if (context)
            ucp_cleanup(context);
    }
    ucp_context_h context = nullptr;
};

TEST_F(UcxMemory, FindsRangesInsideAnAllocationOnly)
{
    char *a = static_cast<char *>(MPIDI_NBRMA_memory_alloc(context, 4096));
    char *b = static_cast<char *>(MPIDI_NBRMA_memory_alloc(context, 100));
    ASSERT_NE(a, nullptr);
    ASSERT_NE(b, nullptr);
    ucp_mem_h mh = nullptr;

    EXPECT_TRUE(MPIDI_NBRMA_memory_find(a, 4096, &mh));
    EXPECT_NE(mh, nullptr);
    EXPECT_TRUE(MPIDI_NBRMA_memory_find(a + 4000, 96, nullptr));
    EXPECT_FALSE(MPIDI_NBRMA_memory_find(a + 4000, 97, nullptr));     // runs past the end
    EXPECT_FALSE(MPIDI_NBRMA_memory_find(a - 1, 2, nullptr));          // starts before
    EXPECT_TRUE(MPIDI_NBRMA_memory_find(b + 99, 1, nullptr));
    EXPECT_FALSE(MPIDI_NBRMA_memory_find(b + 100, 1, nullptr));

    int on_heap = 0;
    EXPECT_FALSE(MPIDI_NBRMA_memory_find(&on_heap, sizeof(on_heap), nullptr));
    EXPECT_FALSE(MPIDI_NBRMA_memory_free(context, &on_heap));          // not ours
    EXPECT_FALSE(MPIDI_NBRMA_memory_free(context, a + 1));             // not a base

    EXPECT_TRUE(MPIDI_NBRMA_memory_free(context, a));
    EXPECT_FALSE(MPIDI_NBRMA_memory_find(a, 1, nullptr));
    EXPECT_FALSE(MPIDI_NBRMA_memory_free(context, a));                 // twice
    EXPECT_TRUE(MPIDI_NBRMA_memory_free(context, b));
}

TEST_F(UcxMemory, MappingsReuseAnAllocationsOwn)
{
    char *a = static_cast<char *>(MPIDI_NBRMA_memory_alloc(context, 8192));
    ASSERT_NE(a, nullptr);
    ucp_mem_h own = nullptr, mapped = nullptr;
    bool owned = true;
    ASSERT_TRUE(MPIDI_NBRMA_memory_find(a, 1, &own));

    ASSERT_EQ(MPIDI_NBRMA_memory_map(context, a + 16, 64, &mapped, &owned), UCS_OK);
    EXPECT_FALSE(owned);
    EXPECT_EQ(mapped, own);
    MPIDI_NBRMA_memory_unmap(context, mapped, owned);  // must leave the allocation's alone
    EXPECT_TRUE(MPIDI_NBRMA_memory_find(a, 8192, nullptr));

    std::vector<char> other(4096);
    ASSERT_EQ(MPIDI_NBRMA_memory_map(context, other.data(), other.size(), &mapped, &owned),
              UCS_OK);
    EXPECT_TRUE(owned);
    EXPECT_NE(mapped, own);
    MPIDI_NBRMA_memory_unmap(context, mapped, owned);
    EXPECT_TRUE(MPIDI_NBRMA_memory_free(context, a));
}

TEST_F(UcxMemory, CyclesInAnyOrderLeaveNothingBehind)
{
    std::vector<void *> live;
    std::srand(7);
    for (int i = 0; i < 2000; i++) {
        if (live.empty() || (std::rand() % 3 && live.size() < 64)) {
            void *p = MPIDI_NBRMA_memory_alloc(context, 1 + std::rand() % 20000);
            ASSERT_NE(p, nullptr);
            live.push_back(p);
        } else {
            size_t k = std::rand() % live.size();
            ASSERT_TRUE(MPIDI_NBRMA_memory_free(context, live[k]));
            live.erase(live.begin() + k);
        }
        for (void *p : live)
            ASSERT_TRUE(MPIDI_NBRMA_memory_find(p, 1, nullptr));
    }
    for (void *p : live)
        EXPECT_TRUE(MPIDI_NBRMA_memory_free(context, p));
    EXPECT_EQ(MPIDI_NBRMA_memory_alloc(context, 0), nullptr);
    // more than half the machine has: refused before UCX tries (its posix
    // method filled /dev/shm and left the files behind, with 2^60 bytes)
    EXPECT_EQ(MPIDI_NBRMA_memory_alloc(context, size_t(1) << 60), nullptr);
    EXPECT_EQ(MPIDI_NBRMA_memory_alloc(context, SIZE_MAX), nullptr);
}

// MPI_Finalize without MPI_Free_mem: ucp_cleanup aborted the process (UCX's
// rcache asserts that no region is in use) while an allocation was left.
// After MPIDI_NBRMA_memory_finalize the context cleans up (TearDown), and
// every block kept its address and contents and stays writable.
TEST_F(UcxMemory, HeldAllocationsOutliveTheContextWithTheirData)
{
    const size_t sizes[] = { 1, 8, 4096, 4097, 65536, size_t(1) << 20 };
    std::vector<unsigned char *> blocks;
    for (size_t b = 0; b < sizeof(sizes) / sizeof(sizes[0]); b++) {
        auto *p = static_cast<unsigned char *>(MPIDI_NBRMA_memory_alloc(context, sizes[b]));
        ASSERT_NE(p, nullptr);
        for (size_t i = 0; i < sizes[b]; i++)
            p[i] = static_cast<unsigned char>(b * 31 + i * 7 + 1);
        blocks.push_back(p);
    }
    ASSERT_TRUE(MPIDI_NBRMA_memory_free(context, blocks[2]));  // one freed before
    blocks[2] = nullptr;

    EXPECT_EQ(MPIDI_NBRMA_memory_finalize(context), 0u);
    ucp_cleanup(context);       // aborted here before the fix
    context = nullptr;

    for (size_t b = 0; b < blocks.size(); b++) {
        if (blocks[b] == nullptr)
            continue;
        EXPECT_FALSE(MPIDI_NBRMA_memory_find(blocks[b], 1, nullptr));
        size_t bad = sizes[b];
        for (size_t i = 0; i < sizes[b] && bad == sizes[b]; i++)
            if (blocks[b][i] != static_cast<unsigned char>(b * 31 + i * 7 + 1))
                bad = i;
        EXPECT_EQ(bad, sizes[b]) << "block " << b << " lost its data";
        blocks[b][sizes[b] - 1] = 0;     // still writable
    }
}

// A window or memory handle never freed leaves its mapping of the program's
// own memory: MPIDI_NBRMA_memory_finalize releases it (ucp_cleanup aborted
// otherwise), the memory stays the program's, and a release after it (a
// holder that frees late) does nothing.
TEST_F(UcxMemory, MappingsLeftAtFinalizeAreReleasedThere)
{
    std::vector<char> left(8192, 'x'), freed(4096, 'y');
    ucp_mem_h left_h = nullptr, freed_h = nullptr;
    bool owned = false;
    ASSERT_EQ(MPIDI_NBRMA_memory_map(context, left.data(), left.size(), &left_h, &owned), UCS_OK);
    ASSERT_TRUE(owned);
    ASSERT_EQ(MPIDI_NBRMA_memory_map(context, freed.data(), freed.size(), &freed_h, &owned),
              UCS_OK);
    MPIDI_NBRMA_memory_unmap(context, freed_h, owned);

    EXPECT_EQ(MPIDI_NBRMA_memory_finalize(context), 0u);
    MPIDI_NBRMA_memory_unmap(context, left_h, true);   // released already: nothing
    ucp_cleanup(context);       // aborted here while a mapping was left
    context = nullptr;
    EXPECT_EQ(left[8191], 'x');
}

// Mappings of other memory (windows, memory handles, the rkey cache) made
// and released in any order, several over the same buffer: each release
// unmaps its own, and those left go at MPIDI_NBRMA_memory_finalize, after
// which their holders' releases do nothing (a mapping unmapped twice, or
// left, makes ucp_cleanup abort).
TEST_F(UcxMemory, MappingsReleasedInAnyOrderGoOnce)
{
    std::vector<std::vector<char>> buffers(20, std::vector<char>(3000, 'z'));
    std::vector<ucp_mem_h> live;
    std::srand(11);
    for (int i = 0; i < 400; i++) {
        if (live.empty() || (std::rand() % 2 && live.size() < 50)) {
            std::vector<char> &b = buffers[std::rand() % buffers.size()];
            ucp_mem_h h = nullptr;
            bool owned = false;
            ASSERT_EQ(MPIDI_NBRMA_memory_map(context, b.data() + std::rand() % 100, 1000, &h,
                                             &owned), UCS_OK);
            ASSERT_TRUE(owned);
            live.push_back(h);
        } else {
            size_t k = std::rand() % live.size();
            MPIDI_NBRMA_memory_unmap(context, live[k], true);
            live.erase(live.begin() + k);
        }
    }
    ASSERT_FALSE(live.empty());
    EXPECT_EQ(MPIDI_NBRMA_memory_finalize(context), 0u);
    for (ucp_mem_h h : live)
        MPIDI_NBRMA_memory_unmap(context, h, true);     // released already: nothing
    ucp_cleanup(context);
    context = nullptr;
}

}  // namespace
