// The bookkeeping of the rkey cache of dynamic windows (formats/rkey_regions.c;
// ch4/dynamic/rkey_cache.c makes the UCX calls and sends the messages),
// without MPI or UCX. At a target: lookups inside a region, at its edges,
// outside and across two regions, detach of the middle one, the newest of
// overlapping regions first, a registration recorded or refused for good,
// the reply to a query, and the origins told at detach. At an origin:
// lookups per target, a region dropped only by its own generation, each
// rkey given back exactly once, and when a miss asks the target (from the
// second miss on, one query in flight per target). Both sides also under
// random operations against a plain model of the code they replaced.

#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <map>
#include <set>
#include <vector>

extern "C" {
#include "rkey_regions.h"
}

namespace {

// rkeys are never looked at by the table: any distinct pointers do
void *tag(uintptr_t n)
{
    return reinterpret_cast<void *>(n);
}

// the test rkey_cache.c made before, for the models of the random runs
bool old_contains(uint64_t base, uint64_t size, uint64_t addr, uint64_t len)
{
    return addr >= base && addr - base <= size && len <= size - (addr - base);
}

// --- this process as a target ----------------------------------------------

class AttachedRegions : public ::testing::Test {
  protected:
    void TearDown() override
    {
        while (nbrma_attached_region_t *r = nbrma_attached_regions_pop(&list))
            nbrma_attached_region_free(r);
    }
    nbrma_attached_region_t *attach(uint64_t base, uint64_t size, uint64_t generation,
                                    int nprocs = 4)
    {
        nbrma_attached_region_t *r =
            nbrma_attached_regions_add(&list, base, size, generation, nprocs);
        EXPECT_NE(r, nullptr);
        return r;
    }
    // the generation of the region found for [addr, addr + len), 0 for none
    uint64_t find(uint64_t addr, uint64_t len) const
    {
        const nbrma_attached_region_t *r = nbrma_attached_regions_find(&list, addr, len);
        return r ? r->generation : 0;
    }
    // the generations, newest first
    std::vector<uint64_t> generations() const
    {
        std::vector<uint64_t> g;
        for (const nbrma_attached_region_t *r = list.newest; r; r = r->next)
            g.push_back(r->generation);
        return g;
    }
    static std::vector<int> origins(const nbrma_attached_region_t *r)
    {
        std::vector<int> o;
        for (int rank = nbrma_attached_region_next_origin(r, 0); rank >= 0;
             rank = nbrma_attached_region_next_origin(r, rank + 1))
            o.push_back(rank);
        return o;
    }
    nbrma_attached_regions_t list = {};
};

TEST_F(AttachedRegions, ARegistrationIsRecordedOrRefusedForGood)
{
    static char packed[16];
    nbrma_attached_region_t *ok = attach(0x1000, 0x100, 1, 2);
    EXPECT_TRUE(nbrma_attached_region_unasked(ok));
    EXPECT_TRUE(nbrma_attached_region_registered(ok, tag(7), true, packed, sizeof(packed), 16));
    EXPECT_FALSE(nbrma_attached_region_unasked(ok));
    EXPECT_EQ(ok->mem_h, tag(7));
    EXPECT_TRUE(ok->mem_h_owned);
    EXPECT_EQ(ok->packed_rkey, packed);
    EXPECT_EQ(ok->packed_rkey_bytes, sizeof(packed));
    EXPECT_FALSE(ok->refused);

    // no packed rkey, or one larger than a reply carries: refused, nothing kept
    nbrma_attached_region_t *unpacked = attach(0x2000, 0x100, 2, 2);
    EXPECT_FALSE(nbrma_attached_region_registered(unpacked, tag(8), true, nullptr, 0, 16));
    nbrma_attached_region_t *big = attach(0x3000, 0x100, 3, 2);
    EXPECT_FALSE(nbrma_attached_region_registered(big, tag(9), false, packed, 17, 16));
    for (nbrma_attached_region_t *r : {unpacked, big}) {
        EXPECT_TRUE(r->refused);
        EXPECT_FALSE(nbrma_attached_region_unasked(r));
        EXPECT_EQ(r->mem_h, nullptr);
        EXPECT_EQ(r->packed_rkey, nullptr);
        EXPECT_EQ(r->packed_rkey_bytes, 0u);
    }
}

TEST_F(AttachedRegions, AnAnswerCarriesTheRegionAndNotesItsOrigin)
{
    nbrma_attached_region_t *r = attach(0x1000, 0x100, 42, 3);
    static char packed[24];
    r->packed_rkey = packed;
    r->packed_rkey_bytes = sizeof(packed);
    nbrma_rkey_msg_t reply = {};
    reply.addr = 0x1010;
    EXPECT_EQ(nbrma_attached_region_answer(r, 2, &reply), packed);
    EXPECT_EQ(reply.addr, 0x1010u);  // the query's, untouched
    EXPECT_EQ(reply.base, 0x1000u);
    EXPECT_EQ(reply.size, 0x100u);
    EXPECT_EQ(reply.generation, 42u);
    EXPECT_EQ(reply.rkey_bytes, sizeof(packed));
    EXPECT_EQ(origins(r), std::vector<int>{2});
    // an origin outside the window is answered but not noted
    nbrma_attached_region_answer(r, 3, &reply);
    nbrma_attached_region_answer(r, 0, &reply);
    EXPECT_EQ(origins(r), (std::vector<int>{0, 2}));
}

TEST_F(AttachedRegions, AnEmptyListHoldsNothing)
{
    EXPECT_EQ(find(0, 0), 0u);
    EXPECT_EQ(find(0x1000, 1), 0u);
    EXPECT_EQ(nbrma_attached_regions_remove(&list, 0x1000), nullptr);
    EXPECT_EQ(nbrma_attached_regions_pop(&list), nullptr);
}

TEST_F(AttachedRegions, ANewRegionIsUnregisteredAndSentToNoOne)
{
    nbrma_attached_region_t *r = attach(0x1000, 0x100, 42, 3);
    EXPECT_EQ(r->base, 0x1000u);
    EXPECT_EQ(r->size, 0x100u);
    EXPECT_EQ(r->generation, 42u);
    EXPECT_EQ(r->mem_h, nullptr);
    EXPECT_EQ(r->packed_rkey, nullptr);
    EXPECT_EQ(r->packed_rkey_bytes, 0u);
    EXPECT_FALSE(r->refused);
    EXPECT_EQ(r->nprocs, 3);
    EXPECT_EQ(nbrma_attached_region_next_origin(r, 0), -1);
}

TEST_F(AttachedRegions, FindsRangesInsideAndUpToTheEdgesOnly)
{
    attach(0x1000, 0x1000, 1);  // [0x1000, 0x2000)
    attach(0x2000, 0x1000, 2);  // [0x2000, 0x3000), right after it

    EXPECT_EQ(find(0x1000, 0x1000), 1u);        // all of the first
    EXPECT_EQ(find(0x1000, 1), 1u);             // its first byte
    EXPECT_EQ(find(0x1fff, 1), 1u);             // its last byte
    EXPECT_EQ(find(0x1800, 0x800), 1u);         // up to its end
    EXPECT_EQ(find(0x1800, 0x801), 0u) << "spans the two regions";
    EXPECT_EQ(find(0x1fff, 2), 0u) << "spans the two regions";
    EXPECT_EQ(find(0x1000, 0x2000), 0u) << "both regions are not one";
    EXPECT_EQ(find(0x2000, 1), 2u);
    EXPECT_EQ(find(0x2fff, 1), 2u);
    EXPECT_EQ(find(0x2000, 0x1000), 2u);
    EXPECT_EQ(find(0xfff, 1), 0u);              // the byte before
    EXPECT_EQ(find(0xfff, 2), 0u);              // begins before
    EXPECT_EQ(find(0x3000, 1), 0u);             // the byte after
    EXPECT_EQ(find(0x2fff, 2), 0u);             // ends after
    EXPECT_EQ(find(0x8000, 1), 0u);
}

// Whole and pulled epochs ask with the operation's length, which may be 0:
// a region's end is then inside it (and at a shared edge, the newer region
// answers).
TEST_F(AttachedRegions, ZeroLengthsLieInsideUpToTheEnd)
{
    attach(0x1000, 0x1000, 1);
    EXPECT_EQ(find(0x1000, 0), 1u);
    EXPECT_EQ(find(0x2000, 0), 1u);
    EXPECT_EQ(find(0x2001, 0), 0u);
    EXPECT_EQ(find(0xfff, 0), 0u);
    attach(0x2000, 0x1000, 2);
    EXPECT_EQ(find(0x2000, 0), 2u);
}

TEST_F(AttachedRegions, RangesAtTheTopOfTheAddressSpaceDoNotWrap)
{
    attach(UINT64_MAX - 0xfff, 0x1000, 1);      // its end is 2^64
    EXPECT_EQ(find(UINT64_MAX, 1), 1u);
    EXPECT_EQ(find(UINT64_MAX - 0xfff, 0x1000), 1u);
    EXPECT_EQ(find(UINT64_MAX, 2), 0u);
    EXPECT_EQ(find(UINT64_MAX - 0xfff, UINT64_MAX), 0u);
    EXPECT_EQ(find(0, 1), 0u);
}

TEST_F(AttachedRegions, DetachingTheMiddleRegionKeepsTheOthers)
{
    attach(0x1000, 0x1000, 1);
    attach(0x3000, 0x1000, 2);
    attach(0x5000, 0x1000, 3);

    EXPECT_EQ(nbrma_attached_regions_remove(&list, 0x3800), nullptr) << "by base only";
    EXPECT_EQ(nbrma_attached_regions_remove(&list, 0x4000), nullptr);
    nbrma_attached_region_t *r = nbrma_attached_regions_remove(&list, 0x3000);
    ASSERT_NE(r, nullptr);
    EXPECT_EQ(r->generation, 2u);
    EXPECT_EQ(r->next, nullptr);
    nbrma_attached_region_free(r);

    EXPECT_EQ(generations(), (std::vector<uint64_t>{3, 1}));
    EXPECT_EQ(find(0x3000, 1), 0u);
    EXPECT_EQ(find(0x1800, 8), 1u);
    EXPECT_EQ(find(0x5800, 8), 3u);
    EXPECT_EQ(nbrma_attached_regions_remove(&list, 0x3000), nullptr) << "detached once";
}

TEST_F(AttachedRegions, TheNewestOfRegionsAtOneBaseAnswersAndGoesFirst)
{
    attach(0x1000, 0x100, 1);
    attach(0x1000, 0x1000, 2);
    EXPECT_EQ(find(0x1000, 1), 2u);
    EXPECT_EQ(find(0x1800, 1), 2u);

    nbrma_attached_region_t *r = nbrma_attached_regions_remove(&list, 0x1000);
    ASSERT_NE(r, nullptr);
    EXPECT_EQ(r->generation, 2u);
    nbrma_attached_region_free(r);
    EXPECT_EQ(find(0x1000, 1), 1u);
    EXPECT_EQ(find(0x1800, 1), 0u);
}

TEST_F(AttachedRegions, PopEmptiesNewestFirst)
{
    attach(0x1000, 1, 1);
    attach(0x2000, 1, 2);
    attach(0x3000, 1, 3);
    std::vector<uint64_t> popped;
    while (nbrma_attached_region_t *r = nbrma_attached_regions_pop(&list)) {
        popped.push_back(r->generation);
        nbrma_attached_region_free(r);
    }
    EXPECT_EQ(popped, (std::vector<uint64_t>{3, 2, 1}));
    EXPECT_EQ(list.newest, nullptr);
}

// At detach the target tells exactly the origins it gave the rkey to, each
// once; ranks come from messages and are checked.
TEST_F(AttachedRegions, TheOriginsThatGotTheKeyAreToldAtDetach)
{
    nbrma_attached_region_t *r = attach(0x1000, 0x1000, 1, 5);
    nbrma_attached_region_t *other = attach(0x4000, 0x1000, 2, 5);

    EXPECT_TRUE(nbrma_attached_region_note_origin(r, 3));
    EXPECT_TRUE(nbrma_attached_region_note_origin(r, 0));
    EXPECT_TRUE(nbrma_attached_region_note_origin(r, 3));       // asked twice
    EXPECT_TRUE(nbrma_attached_region_note_origin(r, 4));
    EXPECT_FALSE(nbrma_attached_region_note_origin(r, -1));
    EXPECT_FALSE(nbrma_attached_region_note_origin(r, 5));
    EXPECT_TRUE(nbrma_attached_region_note_origin(other, 1));

    EXPECT_EQ(origins(r), (std::vector<int>{0, 3, 4}));
    EXPECT_EQ(origins(other), (std::vector<int>{1}));
    EXPECT_EQ(nbrma_attached_region_next_origin(r, 1), 3);
    EXPECT_EQ(nbrma_attached_region_next_origin(r, 4), 4);
    EXPECT_EQ(nbrma_attached_region_next_origin(r, 5), -1);
    EXPECT_EQ(nbrma_attached_region_next_origin(r, -7), 0);

    nbrma_attached_region_t *gone = nbrma_attached_regions_remove(&list, 0x1000);
    ASSERT_EQ(gone, r);
    EXPECT_EQ(origins(gone), (std::vector<int>{0, 3, 4}));
    nbrma_attached_region_free(gone);
}

// Attach, detach, lookups and answered queries in random order against a
// plain list, newest first, as rkey_cache.c kept it before.
TEST_F(AttachedRegions, RandomOperationsMatchAList)
{
    struct region {
        uint64_t base, size, generation;
        std::set<int> origins;
    };
    std::vector<region> model;  // newest first
    const int nprocs = 6;
    uint64_t generation = 0;
    int found = 0, told = 0;   // the run reaches lookups that hit and detaches that tell

    std::srand(17);
    for (int step = 0; step < 20000; step++) {
        // bases on a coarse grid, sizes that reach into the next slots: regions
        // overlap, share bases and meet at their edges
        uint64_t base = 0x100 * (1 + std::rand() % 64);
        switch (std::rand() % 4) {
            case 0: {
                uint64_t size = 1 + std::rand() % 0x300;
                attach(base, size, ++generation, nprocs);
                model.insert(model.begin(), region{base, size, generation, {}});
                break;
            }
            case 1: {
                nbrma_attached_region_t *r = nbrma_attached_regions_remove(&list, base);
                auto it = model.begin();
                while (it != model.end() && it->base != base)
                    ++it;
                if (it == model.end()) {
                    ASSERT_EQ(r, nullptr);
                    break;
                }
                ASSERT_NE(r, nullptr);
                ASSERT_EQ(r->generation, it->generation);
                ASSERT_EQ(origins(r), std::vector<int>(it->origins.begin(), it->origins.end()));
                told += !it->origins.empty();
                nbrma_attached_region_free(r);
                model.erase(it);
                break;
            }
            default: {
                // a query (one byte) answered to a random origin, or a lookup
                uint64_t addr = 0x100 * (std::rand() % 70) + std::rand() % 0x100;
                uint64_t len = std::rand() % 3 ? 1 : std::rand() % 0x400;
                region *expected = nullptr;
                for (region &m : model)
                    if (old_contains(m.base, m.size, addr, len)) {
                        expected = &m;
                        break;
                    }
                nbrma_attached_region_t *r = nbrma_attached_regions_find(&list, addr, len);
                ASSERT_EQ(r ? r->generation : 0, expected ? expected->generation : 0)
                    << "addr " << addr << " len " << len;
                found += r != nullptr;
                if (r && len == 1) {
                    int origin = std::rand() % nprocs;
                    ASSERT_TRUE(nbrma_attached_region_note_origin(r, origin));
                    expected->origins.insert(origin);
                }
            }
        }
        ASSERT_EQ(generations().size(), model.size());
    }
    std::vector<uint64_t> expected;
    for (const region &m : model)
        expected.push_back(m.generation);
    EXPECT_EQ(generations(), expected);
    EXPECT_GT(found, 1000);
    EXPECT_GT(told, 100);
}

// --- this process as an origin ---------------------------------------------

// each rkey is the address of its own counter of releases
std::map<void *, int> *released;
void count_release(void *rkey)
{
    ++(*released)[rkey];
}

class CachedRegions : public ::testing::Test {
  protected:
    void SetUp() override
    {
        released = &releases;
        ASSERT_TRUE(nbrma_cached_regions_init(&cache, 4));
    }
    void TearDown() override
    {
        nbrma_cached_regions_free(&cache, count_release);
        released = nullptr;
    }
    void add(int target, uint64_t base, uint64_t size, uint64_t generation)
    {
        ASSERT_TRUE(nbrma_cached_regions_add(&cache, target, base, size, generation,
                                             tag(generation)));
    }
    // the generation of the region found, 0 for none
    uint64_t find(int target, uint64_t addr, uint64_t bytes) const
    {
        const nbrma_cached_region_t *c = nbrma_cached_regions_find(&cache, target, addr, bytes);
        return c ? c->generation : 0;
    }
    nbrma_cached_regions_t cache = {};
    std::map<void *, int> releases;
};

TEST(CachedRegionsOff, AnAllZeroCacheIsOffAndHoldsNothing)
{
    nbrma_cached_regions_t cache = {};
    void *rkey = tag(5);

    EXPECT_EQ(nbrma_cached_regions_find(&cache, 0, 0x1000, 1), nullptr);
    EXPECT_FALSE(nbrma_cached_regions_has(&cache, 0, 1));
    EXPECT_FALSE(nbrma_cached_regions_add(&cache, 0, 0x1000, 1, 1, rkey));
    EXPECT_FALSE(nbrma_cached_regions_drop(&cache, 0, 1, &rkey));
    EXPECT_EQ(rkey, tag(5));
    EXPECT_FALSE(nbrma_cached_regions_miss(&cache, 0));
    EXPECT_FALSE(nbrma_cached_regions_miss(&cache, 0));
    nbrma_cached_regions_query_sent(&cache, 0);
    nbrma_cached_regions_answered(&cache, 0);
    nbrma_cached_regions_free(&cache, count_release);    // nothing to release
    EXPECT_EQ(cache.target, nullptr);
}

TEST_F(CachedRegions, FindsRangesPerTargetUpToTheEdgesOnly)
{
    add(1, 0x1000, 0x1000, 7);
    add(1, 0x2000, 0x1000, 8);
    add(2, 0x8000, 0x100, 9);

    EXPECT_EQ(find(1, 0x1000, 8), 7u);
    EXPECT_EQ(find(1, 0x1ff8, 8), 7u);          // its last 8 bytes
    EXPECT_EQ(find(1, 0x1ffc, 8), 0u) << "spans the two regions";
    EXPECT_EQ(find(1, 0x2000, 0x1000), 8u);
    EXPECT_EQ(find(1, 0x2ff8, 9), 0u);          // ends after
    EXPECT_EQ(find(1, 0xff8, 8), 0u);           // ends right before
    EXPECT_EQ(find(1, 0x8000, 8), 0u) << "another target's region";
    EXPECT_EQ(find(0, 0x1000, 8), 0u);
    EXPECT_EQ(find(2, 0x8000, 0x100), 9u);
    EXPECT_EQ(find(2, 0x8000, 0x101), 0u);
    EXPECT_EQ(find(-1, 0x1000, 8), 0u);
    EXPECT_EQ(find(4, 0x1000, 8), 0u);
    EXPECT_FALSE(nbrma_cached_regions_add(&cache, 4, 0x1000, 1, 10, tag(10)))
        << "no such target: the rkey stays the caller's";
    EXPECT_FALSE(nbrma_cached_regions_add(&cache, -1, 0x1000, 1, 10, tag(10)));
}

TEST_F(CachedRegions, TheNewestRegionAnswers)
{
    add(0, 0x1000, 0x1000, 1);
    add(0, 0x1000, 0x2000, 2);  // attached again, larger, after a detach
    EXPECT_EQ(find(0, 0x1000, 8), 2u);
}

TEST_F(CachedRegions, KnowsTheGenerationsItHoldsPerTarget)
{
    add(1, 0x1000, 0x100, 7);
    EXPECT_TRUE(nbrma_cached_regions_has(&cache, 1, 7));
    EXPECT_FALSE(nbrma_cached_regions_has(&cache, 1, 8));
    EXPECT_FALSE(nbrma_cached_regions_has(&cache, 0, 7)) << "generations are the target's";
    EXPECT_FALSE(nbrma_cached_regions_has(&cache, 9, 7));
}

TEST_F(CachedRegions, DropsARegionOnlyByItsOwnGeneration)
{
    add(1, 0x1000, 0x1000, 7);
    add(1, 0x3000, 0x1000, 8);
    add(2, 0x1000, 0x1000, 7);  // another target may use the same numbers
    void *rkey = tag(99);

    EXPECT_FALSE(nbrma_cached_regions_drop(&cache, 1, 9, &rkey));
    EXPECT_FALSE(nbrma_cached_regions_drop(&cache, 0, 7, &rkey));
    EXPECT_FALSE(nbrma_cached_regions_drop(&cache, 4, 7, &rkey));
    EXPECT_FALSE(nbrma_cached_regions_drop(&cache, -1, 7, &rkey));
    EXPECT_EQ(rkey, tag(99)) << "untouched when nothing is dropped";
    EXPECT_EQ(find(1, 0x1000, 8), 7u);

    EXPECT_TRUE(nbrma_cached_regions_drop(&cache, 1, 7, &rkey));
    EXPECT_EQ(rkey, tag(7));
    EXPECT_EQ(find(1, 0x1000, 8), 0u);
    EXPECT_EQ(find(1, 0x3000, 8), 8u);
    EXPECT_EQ(find(2, 0x1000, 8), 7u);
    EXPECT_FALSE(nbrma_cached_regions_has(&cache, 1, 7));
    EXPECT_FALSE(nbrma_cached_regions_drop(&cache, 1, 7, &rkey)) << "dropped once";
    EXPECT_TRUE(releases.empty()) << "a dropped rkey is the caller's, not released here";
}

TEST_F(CachedRegions, FreeReleasesEachRkeyOnce)
{
    add(0, 0x1000, 1, 1);
    add(0, 0x2000, 1, 2);
    add(3, 0x1000, 1, 3);
    void *rkey;
    ASSERT_TRUE(nbrma_cached_regions_drop(&cache, 0, 2, &rkey));

    nbrma_cached_regions_free(&cache, count_release);
    EXPECT_EQ(releases, (std::map<void *, int>{{tag(1), 1}, {tag(3), 1}}));
    EXPECT_EQ(cache.target, nullptr);
    EXPECT_EQ(find(0, 0x1000, 1), 0u) << "off after free";
    nbrma_cached_regions_free(&cache, count_release);    // and again: nothing
    EXPECT_EQ(releases.size(), 2u);
}

// The first miss toward a target goes MPICH's way without a query; the
// second asks; while that query is in flight no miss asks or counts; after
// the answer, two misses again.
TEST_F(CachedRegions, AQueryFromTheSecondMissOnOneAtATimePerTarget)
{
    EXPECT_FALSE(nbrma_cached_regions_miss(&cache, 1));
    EXPECT_TRUE(nbrma_cached_regions_miss(&cache, 1));
    nbrma_cached_regions_query_sent(&cache, 1);
    for (int i = 0; i < 300; i++)
        EXPECT_FALSE(nbrma_cached_regions_miss(&cache, 1)) << "query in flight, miss " << i;

    // other targets are not held up by target 1's query
    EXPECT_FALSE(nbrma_cached_regions_miss(&cache, 2));
    EXPECT_TRUE(nbrma_cached_regions_miss(&cache, 2));

    nbrma_cached_regions_answered(&cache, 1);
    EXPECT_FALSE(nbrma_cached_regions_miss(&cache, 1)) << "the misses in flight did not count";
    EXPECT_TRUE(nbrma_cached_regions_miss(&cache, 1));
    nbrma_cached_regions_query_sent(&cache, 1);
    nbrma_cached_regions_answered(&cache, 1);   // "no region": the same
    EXPECT_FALSE(nbrma_cached_regions_miss(&cache, 1));
    EXPECT_TRUE(nbrma_cached_regions_miss(&cache, 1));

    EXPECT_FALSE(nbrma_cached_regions_miss(&cache, 4));
    EXPECT_FALSE(nbrma_cached_regions_miss(&cache, -1));
}

// Toward a target that RDMA does not pay for the glue sends no query: every
// miss from the second on keeps asking whether to (and the glue's answer,
// kept per target, stays no), however many there are.
TEST_F(CachedRegions, MissesWithoutAQueryKeepAskingAfterTheSecond)
{
    EXPECT_FALSE(nbrma_cached_regions_miss(&cache, 0));
    for (int i = 0; i < 1000; i++)
        ASSERT_TRUE(nbrma_cached_regions_miss(&cache, 0)) << "miss " << i + 2;
    nbrma_cached_regions_query_sent(&cache, 0);
    EXPECT_FALSE(nbrma_cached_regions_miss(&cache, 0));
}

// Misses, queries, answers, replies, detaches and lookups in random order
// against the code rkey_cache.c had before: lists per target, newest first,
// and `!pending && ++misses >= 2`.
TEST_F(CachedRegions, RandomOperationsMatchTheOldBookkeeping)
{
    struct cached {
        uint64_t base, size, generation;
        void *rkey;
    };
    const int ntargets = 4;
    std::vector<std::vector<cached>> model(ntargets);   // newest first
    std::vector<bool> pending(ntargets);
    std::vector<long> misses(ntargets);
    std::set<void *> live;
    uintptr_t next_rkey = 1;

    std::srand(23);
    for (int step = 0; step < 40000; step++) {
        int target = std::rand() % ntargets;
        uint64_t generation = 1 + std::rand() % 40;
        switch (std::rand() % 5) {
            case 0: {
                // a miss; RDMA pays toward targets 0-2 only
                bool ask = !pending[target] && ++misses[target] >= 2;
                ASSERT_EQ(nbrma_cached_regions_miss(&cache, target), ask) << "step " << step;
                if (ask && target != 3) {
                    nbrma_cached_regions_query_sent(&cache, target);
                    pending[target] = true;
                    misses[target] = 0;
                }
                break;
            }
            case 1: {
                // an answer: a reply cached unless the generation is known
                nbrma_cached_regions_answered(&cache, target);
                pending[target] = false;
                bool known = false;
                for (const cached &c : model[target])
                    known = known || c.generation == generation;
                ASSERT_EQ(nbrma_cached_regions_has(&cache, target, generation), known);
                if (known || std::rand() % 3 == 0)
                    break;
                uint64_t base = 0x100 * (std::rand() % 32);
                uint64_t size = 1 + std::rand() % 0x300;
                void *rkey = tag(next_rkey++);
                ASSERT_TRUE(nbrma_cached_regions_add(&cache, target, base, size, generation, rkey));
                model[target].insert(model[target].begin(), cached{base, size, generation, rkey});
                live.insert(rkey);
                break;
            }
            case 2: {
                // an invalidation
                void *rkey = nullptr;
                auto it = model[target].begin();
                while (it != model[target].end() && it->generation != generation)
                    ++it;
                bool dropped = nbrma_cached_regions_drop(&cache, target, generation, &rkey);
                ASSERT_EQ(dropped, it != model[target].end());
                if (dropped) {
                    ASSERT_EQ(rkey, it->rkey);
                    ASSERT_EQ(live.erase(rkey), 1u);
                    model[target].erase(it);
                }
                break;
            }
            default: {
                uint64_t addr = 0x100 * (std::rand() % 36) + std::rand() % 0x100;
                uint64_t bytes = 1 + std::rand() % 0x200;
                const cached *expected = nullptr;
                for (const cached &c : model[target])
                    if (old_contains(c.base, c.size, addr, bytes)) {
                        expected = &c;
                        break;
                    }
                const nbrma_cached_region_t *c =
                    nbrma_cached_regions_find(&cache, target, addr, bytes);
                ASSERT_EQ(c ? c->rkey : nullptr, expected ? expected->rkey : nullptr)
                    << "target " << target << " addr " << addr << " bytes " << bytes;
            }
        }
    }
    // what is left is released exactly once, the dropped ones never
    nbrma_cached_regions_free(&cache, count_release);
    std::map<void *, int> expected;
    for (void *rkey : live)
        expected[rkey] = 1;
    EXPECT_EQ(releases, expected);
    EXPECT_FALSE(live.empty()) << "the random run should leave some rkeys cached";
}

}  // namespace
