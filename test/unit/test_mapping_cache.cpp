// What windows' mailboxes keep across windows (formats/mapping_cache.c;
// os/kept_segments.c attaches and detaches the segments), without MPI:
// spare segments matched by size, peers' mappings found again only by the
// same endpoint, address and key, dropped least recently used first once
// more than the limit is unused, and the release callback called exactly
// once for each mapping dropped.

#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <vector>

extern "C" {
#include "mapping_cache.h"
}

namespace {

// a handle is the address of its own counter of releases
void count_release(void *handle)
{
    ++*static_cast<int *>(handle);
}

// endpoints are opaque keys: any distinct addresses do
char endpoint_a, endpoint_b;

TEST(SpareSegments, AreMatchedByTheirExactSize)
{
    nbrma_spare_segment_t slot[4];
    nbrma_spare_segments_t spares = {slot, 4, 0};
    char a, b, c, d, e;

    EXPECT_EQ(nbrma_spare_segments_take(&spares, 64), nullptr);
    EXPECT_TRUE(nbrma_spare_segments_keep(&spares, &a, 64));
    EXPECT_TRUE(nbrma_spare_segments_keep(&spares, &b, 128));
    EXPECT_TRUE(nbrma_spare_segments_keep(&spares, &c, 64));
    EXPECT_TRUE(nbrma_spare_segments_keep(&spares, &d, 256));
    EXPECT_FALSE(nbrma_spare_segments_keep(&spares, &e, 64)) << "a fifth is the caller's to free";
    EXPECT_EQ(spares.n, 4);

    EXPECT_EQ(nbrma_spare_segments_take(&spares, 32), nullptr);         // no smaller one
    EXPECT_EQ(nbrma_spare_segments_take(&spares, 100), nullptr);        // no larger one either
    EXPECT_EQ(nbrma_spare_segments_take(&spares, 64), &a);              // the first kept of a size
    EXPECT_EQ(nbrma_spare_segments_take(&spares, 64), &c);
    EXPECT_EQ(nbrma_spare_segments_take(&spares, 64), nullptr);
    EXPECT_EQ(spares.n, 2);
    EXPECT_EQ(nbrma_spare_segments_take(&spares, 256), &d);
    EXPECT_EQ(nbrma_spare_segments_take(&spares, 128), &b);
    EXPECT_EQ(spares.n, 0);
}

TEST(SpareSegments, EmptyNewestFirst)
{
    nbrma_spare_segment_t slot[4];
    nbrma_spare_segments_t spares = {slot, 4, 0};
    char a, b, c;

    EXPECT_EQ(nbrma_spare_segments_pop(&spares), nullptr);
    nbrma_spare_segments_keep(&spares, &a, 8);
    nbrma_spare_segments_keep(&spares, &b, 8);
    nbrma_spare_segments_keep(&spares, &c, 16);
    EXPECT_EQ(nbrma_spare_segments_pop(&spares), &c);
    EXPECT_EQ(nbrma_spare_segments_pop(&spares), &b);
    EXPECT_EQ(nbrma_spare_segments_pop(&spares), &a);
    EXPECT_EQ(nbrma_spare_segments_pop(&spares), nullptr);
    EXPECT_TRUE(nbrma_spare_segments_keep(&spares, &a, 8)) << "room again";
}

class MappingCache : public ::testing::Test {
  protected:
    void SetUp() override
    {
        released.reserve(64);   // handles point into it: no reallocation
    }
    void TearDown() override
    {
        nbrma_mapping_cache_clear(&cache);
        for (size_t i = 0; i < released.size(); i++)
            EXPECT_EQ(released[i], 1) << "mapping " << i << " released once, not " << released[i];
    }
    // a new mapping of `key` at `addr` through `ep`, as kept_segments.c
    // makes one: the record, then the mapping (here a counter), then the cache
    nbrma_kept_mapping_t *map(const void *ep, uint64_t addr, const std::vector<char> &key)
    {
        EXPECT_EQ(nbrma_mapping_cache_use(&cache, ep, addr, key.data(), key.size()), nullptr);
        nbrma_kept_mapping_t *m = nbrma_mapping_new(ep, addr, key.data(), key.size());
        EXPECT_NE(m, nullptr);
        released.push_back(0);
        nbrma_mapping_cache_add(&cache, m, &released.back(), &mapped_here);
        return m;
    }
    nbrma_kept_mapping_t *use(const void *ep, uint64_t addr, const std::vector<char> &key)
    {
        return nbrma_mapping_cache_use(&cache, ep, addr, key.data(), key.size());
    }
    int n_kept() const
    {
        int n = 0;
        for (const nbrma_kept_mapping_t *m = cache.mru; m; m = m->next)
            n++;
        return n;
    }
    // at most 3 unused mappings (the glue keeps 16)
    nbrma_mapping_cache_t cache = {nullptr, 0, 3, count_release};
    std::vector<int> released;  // per mapping, in the order mapped
    char mapped_here = 0;
};

TEST_F(MappingCache, TheSameKeyFindsTheSameMapping)
{
    const std::vector<char> key = {1, 2, 3, 4, 5};
    nbrma_kept_mapping_t *m = map(&endpoint_a, 0x1000, key);
    EXPECT_EQ(m->users, 1);
    EXPECT_EQ(m->ptr, &mapped_here);
    EXPECT_EQ(m->handle, &released[0]);

    // a second window while the first still maps it
    EXPECT_EQ(use(&endpoint_a, 0x1000, key), m);
    EXPECT_EQ(m->users, 2);
    nbrma_mapping_cache_unuse(&cache, m);
    nbrma_mapping_cache_unuse(&cache, m);
    EXPECT_EQ(cache.n_unused, 1);
    EXPECT_EQ(released[0], 0) << "kept while unused";

    // a window created after both were freed finds it again
    std::vector<char> same = key;
    EXPECT_EQ(use(&endpoint_a, 0x1000, same), m);
    EXPECT_EQ(m->users, 1);
    EXPECT_EQ(cache.n_unused, 0);
    EXPECT_EQ(released[0], 0);
}

TEST_F(MappingCache, TheRecordKeepsItsOwnCopyOfTheKey)
{
    std::vector<char> key = {9, 8, 7};
    nbrma_kept_mapping_t *m = map(&endpoint_a, 0x1000, key);
    EXPECT_NE(m->key, static_cast<void *>(key.data()));
    key[0] = 0;                 // the caller's buffer changes
    EXPECT_EQ(use(&endpoint_a, 0x1000, key), nullptr);
    EXPECT_EQ(use(&endpoint_a, 0x1000, {9, 8, 7}), m);
}

TEST_F(MappingCache, AnyOtherKeyDoesNotMatch)
{
    const std::vector<char> key = {1, 2, 3, 4};
    nbrma_kept_mapping_t *m = map(&endpoint_a, 0x1000, key);
    nbrma_mapping_cache_unuse(&cache, m);

    EXPECT_EQ(use(&endpoint_b, 0x1000, key), nullptr);                 // another endpoint
    EXPECT_EQ(use(&endpoint_a, 0x2000, key), nullptr);                 // another address
    EXPECT_EQ(use(&endpoint_a, 0x1000, {1, 2, 3, 5}), nullptr);        // a segment made anew
    EXPECT_EQ(use(&endpoint_a, 0x1000, {1, 2, 3}), nullptr);           // a shorter key
    EXPECT_EQ(use(&endpoint_a, 0x1000, {1, 2, 3, 4, 0}), nullptr);     // a longer one
    EXPECT_EQ(m->users, 0) << "no miss uses it";
    EXPECT_EQ(cache.n_unused, 1);

    // the stale mapping and the new one live side by side
    nbrma_kept_mapping_t *fresh = map(&endpoint_a, 0x1000, {1, 2, 3, 5});
    EXPECT_NE(fresh, m);
    EXPECT_EQ(cache.mru, fresh);
    EXPECT_EQ(n_kept(), 2);
}

// The limit counts unused mappings only; beyond it the least recently used
// (mapped or found again the longest ago) of them goes, used ones stay.
TEST_F(MappingCache, DropsTheLeastRecentlyUsedUnusedMappingBeyondTheLimit)
{
    nbrma_kept_mapping_t *m[6];
    for (int i = 0; i < 6; i++)
        m[i] = map(&endpoint_a, 0x1000 * (i + 1), {static_cast<char>(i)});
    // most recently used first: m5 m4 m3 m2 m1 m0

    nbrma_mapping_cache_unuse(&cache, m[1]);
    nbrma_mapping_cache_unuse(&cache, m[2]);
    nbrma_mapping_cache_unuse(&cache, m[3]);
    EXPECT_EQ(cache.n_unused, 3);
    EXPECT_EQ(n_kept(), 6) << "up to the limit (3) all stay";

    nbrma_mapping_cache_unuse(&cache, m[4]);       // the fourth unused
    EXPECT_EQ(released, (std::vector<int>{0, 1, 0, 0, 0, 0})) << "m1: m0 is still used";
    EXPECT_EQ(cache.n_unused, 3);
    EXPECT_EQ(use(&endpoint_a, 0x2000, {1}), nullptr);

    // m2 found again moves to the front: m2 m5 m4 m3 m0
    EXPECT_EQ(use(&endpoint_a, 0x3000, {2}), m[2]);
    EXPECT_EQ(cache.n_unused, 2);
    nbrma_mapping_cache_unuse(&cache, m[2]);       // three unused: none goes
    EXPECT_EQ(released, (std::vector<int>{0, 1, 0, 0, 0, 0}));

    // m0 unused now, the least recently used: the one unused goes itself
    nbrma_mapping_cache_unuse(&cache, m[0]);
    EXPECT_EQ(released, (std::vector<int>{1, 1, 0, 0, 0, 0}));
    nbrma_mapping_cache_unuse(&cache, m[5]);       // then m3, behind m4
    EXPECT_EQ(released, (std::vector<int>{1, 1, 0, 1, 0, 0}));
    EXPECT_EQ(n_kept(), 3);
    EXPECT_EQ(cache.n_unused, 3);
    const nbrma_kept_mapping_t *order[] = {m[2], m[5], m[4]};
    const nbrma_kept_mapping_t *k = cache.mru;
    for (const nbrma_kept_mapping_t *expected : order) {
        ASSERT_NE(k, nullptr);
        EXPECT_EQ(k, expected);
        k = k->next;
    }
    EXPECT_EQ(k, nullptr);
}

// MPI_Finalize: every mapping goes, also those windows still use, each
// released once; records that never entered the cache are not released.
TEST_F(MappingCache, ClearingReleasesEachMappingOnce)
{
    nbrma_kept_mapping_t *used = map(&endpoint_a, 0x1000, {1});
    nbrma_kept_mapping_t *twice = map(&endpoint_b, 0x1000, {1});
    nbrma_kept_mapping_t *unused = map(&endpoint_a, 0x2000, {2});
    EXPECT_EQ(use(&endpoint_b, 0x1000, {1}), twice);
    nbrma_mapping_cache_unuse(&cache, unused);
    (void) used;

    nbrma_kept_mapping_t *failed = nbrma_mapping_new(&endpoint_a, 0x3000, "xy", 2);
    ASSERT_NE(failed, nullptr);
    nbrma_mapping_discard(failed);       // as after a failed ucp_rkey_ptr

    nbrma_mapping_cache_clear(&cache);
    EXPECT_EQ(released, (std::vector<int>{1, 1, 1}));
    EXPECT_EQ(cache.mru, nullptr);
    EXPECT_EQ(cache.n_unused, 0);

    // a cache cleared takes mappings again (MPI sessions after a finalize)
    nbrma_kept_mapping_t *again = map(&endpoint_a, 0x1000, {1});
    EXPECT_EQ(use(&endpoint_a, 0x1000, {1}), again);
    EXPECT_EQ(again->users, 2);
}

// What kept_segments.c's map function (nbrma_segment_attach)
// saw, and whether it fails next.
struct MapCall {
    const void *ep;
    uint64_t addr;
    const void *key;
};
std::vector<MapCall> map_calls;
std::vector<int> *map_handles;  // the fixture's release counters
bool map_fails;
char map_target;

bool map_counted(const void *ep, uint64_t addr, const void *key, void **handle, void **ptr)
{
    map_calls.push_back({ep, addr, key});
    if (map_fails)
        return false;
    map_handles->push_back(0);
    *handle = &map_handles->back();
    *ptr = &map_target;
    return true;
}

// One call finds a kept mapping or makes one through the caller's map
// function (given the caller's endpoint, address and key); a map that fails
// leaves nothing kept and releases nothing.
TEST_F(MappingCache, GetFindsAKeptMappingOrMapsANewOne)
{
    const std::vector<char> key = {4, 5, 6};
    map_calls.clear();
    map_handles = &released;
    map_fails = false;

    nbrma_kept_mapping_t *m = nbrma_mapping_cache_get(&cache, &endpoint_a, 0x1000, key.data(),
                                                      key.size(), map_counted);
    ASSERT_NE(m, nullptr);
    ASSERT_EQ(map_calls.size(), 1u);
    EXPECT_EQ(map_calls[0].ep, &endpoint_a);
    EXPECT_EQ(map_calls[0].addr, 0x1000u);
    EXPECT_EQ(map_calls[0].key, key.data());
    EXPECT_EQ(m->ptr, &map_target);
    EXPECT_EQ(m->handle, &released[0]);
    EXPECT_EQ(m->users, 1);
    EXPECT_EQ(cache.mru, m);

    const std::vector<char> same = key;
    EXPECT_EQ(nbrma_mapping_cache_get(&cache, &endpoint_a, 0x1000, same.data(), same.size(),
                                      map_counted), m);
    EXPECT_EQ(map_calls.size(), 1u) << "kept: not mapped again";
    EXPECT_EQ(m->users, 2);

    map_fails = true;
    EXPECT_EQ(nbrma_mapping_cache_get(&cache, &endpoint_b, 0x1000, key.data(), key.size(),
                                      map_counted), nullptr);
    EXPECT_EQ(map_calls.size(), 2u);
    EXPECT_EQ(n_kept(), 1);
    EXPECT_EQ(released, (std::vector<int>{0}));

    map_fails = false;
    nbrma_kept_mapping_t *other = nbrma_mapping_cache_get(&cache, &endpoint_b, 0x1000, key.data(),
                                                          key.size(), map_counted);
    ASSERT_NE(other, nullptr);
    EXPECT_NE(other, m);
    EXPECT_EQ(cache.mru, other);
    EXPECT_EQ(n_kept(), 2);
    nbrma_mapping_cache_unuse(&cache, m);
    nbrma_mapping_cache_unuse(&cache, m);
    nbrma_mapping_cache_unuse(&cache, other);
    EXPECT_EQ(cache.n_unused, 2);
    // TearDown: each of the two released once
}

// Windows created and freed in random order over a few peers and keys: at
// every step no more than the limit of unused mappings is kept, and every
// mapping dropped (then or at the end) was released exactly once.
TEST_F(MappingCache, RandomWindowsReleaseEachDroppedMappingOnce)
{
    std::vector<nbrma_kept_mapping_t *> windows;
    released.reserve(5000);     // before any handle points into it
    std::srand(5);
    for (int step = 0; step < 4000 && released.size() < 4900; step++) {
        if (windows.empty() || std::rand() % 2) {
            const void *ep = std::rand() % 2 ? &endpoint_a : &endpoint_b;
            uint64_t addr = 0x1000 * (std::rand() % 4);
            std::vector<char> key = {static_cast<char>(std::rand() % 3)};
            nbrma_kept_mapping_t *m = use(ep, addr, key);
            windows.push_back(m ? m : map(ep, addr, key));
        } else {
            size_t k = std::rand() % windows.size();
            nbrma_mapping_cache_unuse(&cache, windows[k]);
            windows.erase(windows.begin() + k);
        }
        int unused = 0;
        for (const nbrma_kept_mapping_t *m = cache.mru; m; m = m->next)
            unused += m->users == 0;
        ASSERT_EQ(unused, cache.n_unused);
        ASSERT_LE(cache.n_unused, cache.max_unused);
        for (int r : released)
            ASSERT_LE(r, 1);
    }
    // TearDown clears the rest and checks every count is 1
}

}  // namespace
