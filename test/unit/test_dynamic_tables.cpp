// The bookkeeping of duplicated windows and of dynamic windows' memory
// besides the rkey cache (formats/dup_parents.c, formats/dynamic_memory.c;
// ch4/duplicate/dup_win.c and ch4/dynamic/ make the MPICH and UCX calls),
// without MPI or UCX. Duplicates: an entry per parent window, counted, gone
// with the last duplicate, which hands back a parent freed before. Memory
// handles: registrations by generation, newest first, counted. Per target:
// pending RDMA and its completion by rank or for all, whether RDMA pays,
// rkeys retired until their target's RDMA completes, the ranks RDMA goes to.
// Generations never repeat. Memory-handle windows: listed newest first,
// removed, orphaned (parent and rkey gone, each rkey released once) and the
// address of a displacement. The range check of a memory-handle window at
// its edges. Tables also under random operations
// against plain models.

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <map>
#include <random>
#include <set>
#include <vector>

extern "C" {
#include "dup_parents.h"
#include "dynamic_memory.h"
}

namespace {

void *tag(uintptr_t n)
{
    return reinterpret_cast<void *>(n);
}

constexpr int ALL = -7;         // the glue's NBRMA_ALL_RANKS stands for any sentinel

// --- duplicates --------------------------------------------------------------

TEST(DupParents, EntryPerParentAndCounts)
{
    nbrma_dup_parents_t list = {};
    nbrma_dup_parent_t *a = nbrma_dup_parents_get(&list, tag(1));
    ASSERT_NE(a, nullptr);
    EXPECT_EQ(a->live_dups, 0);
    EXPECT_EQ(nbrma_dup_parents_get(&list, tag(1)), a);
    nbrma_dup_parent_t *b = nbrma_dup_parents_get(&list, tag(2));
    ASSERT_NE(b, nullptr);
    EXPECT_NE(a, b);
    EXPECT_EQ(list.first, a);   // in order of the first duplicate
    EXPECT_EQ(a->next, b);
    a->live_dups = 2;
    EXPECT_EQ(nbrma_dup_parents_count(&list, tag(1)), 2);
    EXPECT_EQ(nbrma_dup_parents_count(&list, tag(3)), 0);
    EXPECT_EQ(nbrma_dup_parents_find(&list, tag(3)), nullptr);

    // a duplicate not made: the entry that has none goes, the other stays
    nbrma_dup_parents_unused(&list, b);
    EXPECT_EQ(nbrma_dup_parents_find(&list, tag(2)), nullptr);
    nbrma_dup_parents_unused(&list, a);
    EXPECT_EQ(nbrma_dup_parents_find(&list, tag(1)), a);

    void *orphan = tag(99);
    nbrma_dup_parents_release(&list, a, &orphan);
    EXPECT_EQ(orphan, nullptr);
    EXPECT_EQ(nbrma_dup_parents_count(&list, tag(1)), 1);
    nbrma_dup_parents_release(&list, a, &orphan);       // the last: not orphaned
    EXPECT_EQ(orphan, nullptr);
    EXPECT_EQ(list.first, nullptr);
}

TEST(DupParents, OrphanGoesWithItsLastDuplicate)
{
    nbrma_dup_parents_t list = {};
    nbrma_dup_parents_orphan(&list, tag(5));    // no entry: nothing
    EXPECT_EQ(list.first, nullptr);
    nbrma_dup_parent_t *p = nbrma_dup_parents_get(&list, tag(5));
    ASSERT_NE(p, nullptr);
    p->live_dups = 2;
    nbrma_dup_parents_orphan(&list, tag(5));
    void *orphan = nullptr;
    nbrma_dup_parents_release(&list, p, &orphan);
    EXPECT_EQ(orphan, nullptr); // one left
    nbrma_dup_parents_release(&list, p, &orphan);
    EXPECT_EQ(orphan, tag(5));
    EXPECT_EQ(nbrma_dup_parents_find(&list, tag(5)), nullptr);
}

// random creations, failures, frees and orphaning against a map
TEST(DupParents, RandomAgainstModel)
{
    std::mt19937 rng(32);
    nbrma_dup_parents_t list = {};
    struct M { int dups; bool orphaned; };
    std::map<uintptr_t, M> model;
    for (int step = 0; step < 20000; step++) {
        uintptr_t w = 1 + rng() % 8;
        switch (rng() % 4) {
            case 0: {           // a duplicate made, or failing after get
                nbrma_dup_parent_t *p = nbrma_dup_parents_get(&list, tag(w));
                ASSERT_NE(p, nullptr);
                if (rng() % 4 == 0) {
                    nbrma_dup_parents_unused(&list, p);
                } else {
                    p->live_dups++;
                    model[w].dups++;
                }
                break;
            }
            case 1: {           // a duplicate freed
                if (!model.count(w))
                    break;
                nbrma_dup_parent_t *p = nbrma_dup_parents_find(&list, tag(w));
                ASSERT_NE(p, nullptr);
                void *orphan = tag(1234);
                nbrma_dup_parents_release(&list, p, &orphan);
                M &m = model[w];
                bool last = --m.dups == 0;
                EXPECT_EQ(orphan, last && m.orphaned ? tag(w) : nullptr);
                if (last)
                    model.erase(w);
                break;
            }
            case 2:
                nbrma_dup_parents_orphan(&list, tag(w));
                if (model.count(w))
                    model[w].orphaned = true;
                break;
            default:
                break;
        }
        for (uintptr_t v = 1; v <= 8; v++)
            ASSERT_EQ(nbrma_dup_parents_count(&list, tag(v)), model.count(v) ? model[v].dups : 0);
    }
    size_t n = 0;
    for (nbrma_dup_parent_t *p = list.first; p; p = p->next)
        n++;
    EXPECT_EQ(n, model.size());
    while (list.first) {
        nbrma_dup_parent_t *p = list.first;
        void *orphan;
        p->live_dups = 1;
        nbrma_dup_parents_release(&list, p, &orphan);
    }
}

// --- memory handles' registrations -----------------------------------------

TEST(Registrations, ByGenerationNewestFirst)
{
    nbrma_registrations_t t = {};
    EXPECT_EQ(nbrma_registrations_find(&t, 1), nullptr);
    EXPECT_EQ(nbrma_registrations_remove(&t, 1), nullptr);
    EXPECT_EQ(nbrma_registrations_pop(&t), nullptr);
    for (uint64_t g = 1; g <= 3; g++) {
        nbrma_registration_t *r = nbrma_registration_new(tag(0x1000 * g), 64 * g);
        ASSERT_NE(r, nullptr);
        EXPECT_EQ(r->base, tag(0x1000 * g));
        EXPECT_EQ(r->size, 64 * g);
        EXPECT_EQ(r->mem_h, nullptr);
        EXPECT_FALSE(r->mem_h_owned);
        r->generation = g;
        nbrma_registrations_add(&t, r);
    }
    EXPECT_EQ(t.count, 3);
    EXPECT_EQ(t.newest->generation, 3u);
    ASSERT_NE(nbrma_registrations_find(&t, 2), nullptr);
    EXPECT_EQ(nbrma_registrations_find(&t, 2)->size, 128u);
    nbrma_registration_t *r = nbrma_registrations_remove(&t, 2);        // the middle one
    ASSERT_NE(r, nullptr);
    EXPECT_EQ(r->generation, 2u);
    nbrma_registration_free(r);
    EXPECT_EQ(t.count, 2);
    EXPECT_EQ(nbrma_registrations_find(&t, 2), nullptr);
    EXPECT_EQ(nbrma_registrations_remove(&t, 2), nullptr);      // released twice
    EXPECT_EQ(t.count, 2);
    std::vector<uint64_t> popped;
    while ((r = nbrma_registrations_pop(&t))) {
        popped.push_back(r->generation);
        nbrma_registration_free(r);
    }
    EXPECT_EQ(popped, (std::vector<uint64_t>{3, 1}));
    EXPECT_EQ(t.count, 0);
}

TEST(Registrations, RandomAgainstModel)
{
    std::mt19937 rng(7);
    nbrma_registrations_t t = {};
    std::set<uint64_t> model;
    uint64_t next = 0;
    for (int step = 0; step < 20000; step++) {
        uint64_t g = 1 + rng() % (next + 2);
        if (rng() % 2) {
            nbrma_registration_t *r = nbrma_registration_new(nullptr, 0);
            ASSERT_NE(r, nullptr);
            r->generation = ++next;
            nbrma_registrations_add(&t, r);
            model.insert(next);
        } else {
            nbrma_registration_t *r = nbrma_registrations_remove(&t, g);
            EXPECT_EQ(r != nullptr, model.erase(g) == 1);
            nbrma_registration_free(r);
        }
        ASSERT_EQ(t.count, (int) model.size());
        ASSERT_EQ(nbrma_registrations_find(&t, g) != nullptr, model.count(g) == 1);
    }
    nbrma_registration_t *r;
    while ((r = nbrma_registrations_pop(&t)))
        nbrma_registration_free(r);
}

// --- per target: the component's RDMA ---------------------------------------

TEST(RdmaTargets, PendingAndCompletion)
{
    nbrma_rdma_targets_t t;
    ASSERT_TRUE(nbrma_rdma_targets_init(&t, 4));
    int first = -1, last = -1;
    EXPECT_FALSE(nbrma_rdma_targets_to_complete(&t, ALL, ALL, &first, &last));
    EXPECT_FALSE(nbrma_rdma_targets_to_complete(&t, 1, ALL, &first, &last));
    nbrma_rdma_targets_issued(&t, 1);
    nbrma_rdma_targets_issued(&t, 1);   // counted once per rank
    nbrma_rdma_targets_issued(&t, 3);
    EXPECT_EQ(t.npending, 2);
    EXPECT_FALSE(nbrma_rdma_targets_to_complete(&t, 2, ALL, &first, &last));
    EXPECT_FALSE(nbrma_rdma_targets_to_complete(&t, 4, ALL, &first, &last));   // outside
    EXPECT_FALSE(nbrma_rdma_targets_to_complete(&t, -1, ALL, &first, &last));
    ASSERT_TRUE(nbrma_rdma_targets_to_complete(&t, 3, ALL, &first, &last));
    EXPECT_EQ(first, 3);
    EXPECT_EQ(last, 3);
    nbrma_rdma_targets_completed(&t, first, last);
    EXPECT_EQ(t.npending, 1);
    EXPECT_FALSE(t.pending[3]);
    ASSERT_TRUE(nbrma_rdma_targets_to_complete(&t, ALL, ALL, &first, &last));
    EXPECT_EQ(first, 0);
    EXPECT_EQ(last, 3);
    nbrma_rdma_targets_completed(&t, first, last);
    EXPECT_EQ(t.npending, 0);
    EXPECT_FALSE(nbrma_rdma_targets_to_complete(&t, ALL, ALL, &first, &last));
    nbrma_rdma_targets_free(&t);
    EXPECT_EQ(t.pending, nullptr);
}

TEST(RdmaTargets, PaysLearntOncePerTarget)
{
    nbrma_rdma_targets_t t;
    ASSERT_TRUE(nbrma_rdma_targets_init(&t, 3));
    for (int r = 0; r < 3; r++)
        EXPECT_EQ(nbrma_rdma_targets_pays(&t, r), NBRMA_RDMA_PAYS_UNKNOWN);
    EXPECT_TRUE(nbrma_rdma_targets_learn(&t, 0, 2, 0));
    EXPECT_FALSE(nbrma_rdma_targets_learn(&t, 1, 1, 1));        // tcp's: emulated
    EXPECT_FALSE(nbrma_rdma_targets_learn(&t, 2, 0, 0));        // no lanes
    EXPECT_EQ(nbrma_rdma_targets_pays(&t, 0), NBRMA_RDMA_PAYS);
    EXPECT_EQ(nbrma_rdma_targets_pays(&t, 1), NBRMA_RDMA_DOES_NOT_PAY);
    EXPECT_EQ(nbrma_rdma_targets_pays(&t, 2), NBRMA_RDMA_DOES_NOT_PAY);
    nbrma_rdma_targets_free(&t);
}

TEST(RdmaTargets, RetiredKeysWaitForTheirTarget)
{
    nbrma_rdma_targets_t t;
    ASSERT_TRUE(nbrma_rdma_targets_init(&t, 3));
    EXPECT_FALSE(nbrma_rdma_targets_retire(&t, 0, tag(1)));    // nothing pending: now
    EXPECT_FALSE(nbrma_rdma_targets_retire(&t, 3, tag(1)));    // outside
    nbrma_rdma_targets_issued(&t, 0);
    nbrma_rdma_targets_issued(&t, 2);
    EXPECT_TRUE(nbrma_rdma_targets_retire(&t, 0, tag(10)));
    EXPECT_TRUE(nbrma_rdma_targets_retire(&t, 2, tag(20)));
    EXPECT_TRUE(nbrma_rdma_targets_retire(&t, 0, tag(11)));
    EXPECT_EQ(nbrma_rdma_targets_take_retired(&t, 1, ALL), nullptr);
    std::multiset<void *> got;
    void *k;
    while ((k = nbrma_rdma_targets_take_retired(&t, 0, ALL)))
        got.insert(k);
    EXPECT_EQ(got, (std::multiset<void *>{tag(10), tag(11)}));
    EXPECT_EQ(nbrma_rdma_targets_take_retired(&t, ALL, ALL), tag(20));
    EXPECT_EQ(nbrma_rdma_targets_take_retired(&t, ALL, ALL), nullptr);
    EXPECT_EQ(t.retired, nullptr);
    nbrma_rdma_targets_free(&t);
}

// issues, retirements and completions by rank or all against plain arrays;
// every rkey comes back exactly once
TEST(RdmaTargets, RandomAgainstModel)
{
    std::mt19937 rng(11);
    const int n = 5;
    nbrma_rdma_targets_t t;
    ASSERT_TRUE(nbrma_rdma_targets_init(&t, n));
    std::vector<bool> pending(n);
    std::multimap<int, uintptr_t> retired;
    uintptr_t next_key = 1;
    std::set<uintptr_t> destroyed;
    for (int step = 0; step < 20000; step++) {
        int r = rng() % n;
        switch (rng() % 3) {
            case 0:
                nbrma_rdma_targets_issued(&t, r);
                pending[r] = true;
                break;
            case 1: {
                uintptr_t key = next_key++;
                bool kept = nbrma_rdma_targets_retire(&t, r, tag(key));
                ASSERT_EQ(kept, (bool) pending[r]);
                if (kept)
                    retired.insert({r, key});
                else
                    destroyed.insert(key);
                break;
            }
            default: {
                int rank = rng() % 3 == 0 ? ALL : r, first, last;
                bool any = false;
                for (int i = 0; i < n; i++)
                    any |= pending[i] && (rank == ALL || rank == i);
                bool some = false;
                for (int i = 0; i < n; i++)
                    some |= pending[i];
                // with anything pending, "all" completes even where nothing is
                ASSERT_EQ(nbrma_rdma_targets_to_complete(&t, rank, ALL, &first, &last),
                          rank == ALL ? some : any);
                if (!(rank == ALL ? some : any))
                    break;
                nbrma_rdma_targets_completed(&t, first, last);
                for (int i = first; i <= last; i++)
                    pending[i] = false;
                void *k;
                while ((k = nbrma_rdma_targets_take_retired(&t, rank, ALL))) {
                    uintptr_t key = reinterpret_cast<uintptr_t>(k);
                    ASSERT_TRUE(destroyed.insert(key).second);
                }
                for (auto it = retired.begin(); it != retired.end();)
                    it = rank == ALL || it->first == rank ? retired.erase(it) : std::next(it);
            }
        }
        int np = 0;
        for (int i = 0; i < n; i++) {
            ASSERT_EQ(t.pending[i], pending[i]);
            np += pending[i];
        }
        ASSERT_EQ(t.npending, np);
    }
    void *k;
    while ((k = nbrma_rdma_targets_take_retired(&t, ALL, ALL)))
        ASSERT_TRUE(destroyed.insert(reinterpret_cast<uintptr_t>(k)).second);
    EXPECT_EQ(destroyed.size(), next_key - 1);
    nbrma_rdma_targets_free(&t);
}

// --- generations -------------------------------------------------------------

TEST(Generations, NeverZeroAndNeverRepeated)
{
    uint64_t last = nbrma_next_generation();
    EXPECT_NE(last, 0u);
    for (int i = 0; i < 1000; i++) {
        uint64_t g = nbrma_next_generation();
        ASSERT_GT(g, last);
        last = g;
    }
}

TEST(RdmaTargets, RemoteRanksOnly)
{
    EXPECT_TRUE(nbrma_rdma_remote_rank(0, 1, 2));
    EXPECT_TRUE(nbrma_rdma_remote_rank(1, 0, 2));
    EXPECT_FALSE(nbrma_rdma_remote_rank(1, 1, 2));   // this process
    EXPECT_FALSE(nbrma_rdma_remote_rank(2, 0, 2));   // outside the window
    EXPECT_FALSE(nbrma_rdma_remote_rank(-1, 0, 2));  // MPI_PROC_NULL
    EXPECT_FALSE(nbrma_rdma_remote_rank(-5, 0, 2));
    EXPECT_FALSE(nbrma_rdma_remote_rank(0, 0, 1));   // alone
}

// --- memory-handle windows ----------------------------------------------------

namespace {

std::vector<int> targets(const nbrma_memhandle_windows_t &t)
{
    std::vector<int> v;
    for (const nbrma_memhandle_window_t *w = t.newest; w; w = w->next_sibling)
        v.push_back(w->target);
    return v;
}

std::vector<void *> released;

void release(void *rkey)
{
    released.push_back(rkey);
}

}  // namespace

TEST(MemhandleWindows, AddAndRemoveNewestFirst)
{
    nbrma_memhandle_windows_t t = {};
    nbrma_memhandle_window_t w[4] = {};
    for (int i = 0; i < 4; i++) {
        w[i].target = i;
        nbrma_memhandle_windows_add(&t, &w[i]);
    }
    EXPECT_EQ(t.count, 4);
    EXPECT_EQ(targets(t), (std::vector<int>{3, 2, 1, 0}));
    nbrma_memhandle_windows_remove(&t, &w[2]);  // the middle
    EXPECT_EQ(targets(t), (std::vector<int>{3, 1, 0}));
    nbrma_memhandle_windows_remove(&t, &w[3]);  // the newest
    nbrma_memhandle_windows_remove(&t, &w[0]);  // the oldest
    EXPECT_EQ(targets(t), std::vector<int>{1});
    EXPECT_EQ(t.count, 1);
    nbrma_memhandle_windows_remove(&t, &w[0]);  // not in the table: nothing
    EXPECT_EQ(t.count, 1);
    nbrma_memhandle_windows_remove(&t, &w[1]);
    EXPECT_EQ(t.count, 0);
    EXPECT_EQ(t.newest, nullptr);
}

TEST(MemhandleWindows, OrphansLoseParentAndRkeyOnce)
{
    nbrma_memhandle_windows_t t = {};
    nbrma_memhandle_window_t w[3] = {};
    int parent;
    for (int i = 0; i < 3; i++) {
        w[i].parent = &parent;
        w[i].target = i;
        w[i].rkey = i == 1 ? nullptr : tag(0x100 + i);  // one without RDMA
        nbrma_memhandle_windows_add(&t, &w[i]);
    }
    released.clear();
    nbrma_memhandle_windows_orphan(&t, release);
    EXPECT_EQ(released, (std::vector<void *>{tag(0x102), tag(0x100)}));
    for (const nbrma_memhandle_window_t &x : w) {
        EXPECT_EQ(x.parent, nullptr);
        EXPECT_EQ(x.rkey, nullptr);
        EXPECT_EQ(x.next_sibling, nullptr);
        EXPECT_EQ(x.target, &x - w);  // what the window reports stays
    }
    EXPECT_EQ(t.count, 0);
    EXPECT_EQ(t.newest, nullptr);
    nbrma_memhandle_windows_orphan(&t, release);  // nothing left to release
    EXPECT_EQ(released.size(), 2u);
}

TEST(MemhandleWindows, RandomAgainstModel)
{
    std::mt19937 gen(11);
    nbrma_memhandle_windows_t t = {};
    std::vector<nbrma_memhandle_window_t> pool(32);
    std::vector<int> model;     // targets, newest first
    for (int round = 0; round < 20000; round++) {
        int i = static_cast<int>(gen() % pool.size());
        auto at = std::find(model.begin(), model.end(), i);
        if (at == model.end() && gen() % 2) {
            pool[i].target = i;
            nbrma_memhandle_windows_add(&t, &pool[i]);
            model.insert(model.begin(), i);
        } else {
            nbrma_memhandle_windows_remove(&t, &pool[i]);
            if (at != model.end())
                model.erase(at);
        }
        ASSERT_EQ(targets(t), model) << round;
        ASSERT_EQ(t.count, static_cast<int>(model.size()));
    }
}

TEST(MemhandleWindows, AddressOfADisplacement)
{
    nbrma_memhandle_window_t w = {};
    w.remote_base = 0x7f0000001000ULL;
    EXPECT_EQ(nbrma_memhandle_window_address(&w, 0, 8), 0x7f0000001000ULL);
    EXPECT_EQ(nbrma_memhandle_window_address(&w, 3, 8), 0x7f0000001018ULL);
    EXPECT_EQ(nbrma_memhandle_window_address(&w, -2, 4), 0x7f0000000ff8ULL);
    // as the glue's MPI_Aint sum did: modulo 2^64
    w.remote_base = UINT64_MAX;
    EXPECT_EQ(nbrma_memhandle_window_address(&w, 1, 1), 0u);
}

// --- the range of a memory-handle window's operation ------------------------

TEST(TargetRange, Edges)
{
    int64_t lo = -1, hi = -1;
    // count 0: inside, bounds untouched
    EXPECT_TRUE(nbrma_target_range_inside(1000, 8, 0, 0, 8, 8, 16, &lo, &hi));
    EXPECT_EQ(lo, -1);
    // 2 doubles at disp 0 of a 16-byte window: [0, 16), the last byte inside
    EXPECT_TRUE(nbrma_target_range_inside(0, 8, 2, 0, 8, 8, 16, &lo, &hi));
    EXPECT_EQ(lo, 0);
    EXPECT_EQ(hi, 16);
    // one byte beyond
    EXPECT_FALSE(nbrma_target_range_inside(1, 1, 2, 0, 8, 8, 16, &lo, &hi));
    EXPECT_EQ(hi, 17);
    // below the window
    EXPECT_FALSE(nbrma_target_range_inside(-1, 4, 1, 0, 4, 4, 16, &lo, &hi));
    EXPECT_EQ(lo, -4);
    // true lb moves both ends; extent larger than the data (a resized type)
    EXPECT_TRUE(nbrma_target_range_inside(0, 1, 3, 4, 4, 16, 40, &lo, &hi));
    EXPECT_EQ(lo, 4);
    EXPECT_EQ(hi, 40);
    EXPECT_FALSE(nbrma_target_range_inside(0, 1, 3, 4, 4, 16, 39, &lo, &hi));
    // negative extent: the elements go downward from disp
    EXPECT_TRUE(nbrma_target_range_inside(32, 1, 3, 0, 8, -8, 40, &lo, &hi));
    EXPECT_EQ(lo, 16);
    EXPECT_EQ(hi, 40);
    EXPECT_FALSE(nbrma_target_range_inside(8, 1, 3, 0, 8, -8, 40, &lo, &hi));
    EXPECT_EQ(lo, -8);
}

// against the bytes touched, element by element
TEST(TargetRange, RandomAgainstElements)
{
    std::mt19937 rng(3);
    for (int i = 0; i < 20000; i++) {
        int64_t disp = (int64_t) (rng() % 41) - 8, unit = 1 + rng() % 4;
        int64_t count = 1 + rng() % 5, true_lb = (int64_t) (rng() % 9) - 4;
        int64_t true_extent = rng() % 9, extent = (int64_t) (rng() % 17) - 8;
        int64_t size = rng() % 64;
        int64_t mn = INT64_MAX, mx = INT64_MIN;
        for (int64_t e = 0; e < count; e++) {
            int64_t a = disp * unit + e * extent + true_lb;
            mn = std::min(mn, a);
            mx = std::max(mx, a + true_extent);
        }
        int64_t lo, hi;
        bool inside = nbrma_target_range_inside(disp, unit, count, true_lb, true_extent,
                                                extent, size, &lo, &hi);
        ASSERT_EQ(lo, mn);
        ASSERT_EQ(hi, mx);
        ASSERT_EQ(inside, mn >= 0 && mx <= size);
    }
}

}  // namespace
