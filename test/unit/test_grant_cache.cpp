// The grant cache (core/include/nbrma_grant_cache.h) without MPI: the rules
// one by one, then random sequences of grants, operations, hand-overs and
// flushes checked against a plain model: every operation that went without
// the engine is handed over or completed by a flush exactly once, a local
// flush waits only for targets with operations not locally complete, and
// only a grant lets an operation skip the engine; a flush needs a target's
// endpoint flushed exactly where some operation left UCX operations there.

#include <gtest/gtest.h>

#include <map>
#include <random>
#include <set>

#include "nbrma_core.h"
#include "nbrma_grant_cache.h"

namespace {

struct cache_ptr {
    nbrma_grant_cache *c;
    explicit cache_ptr(int n) : c(nbrma_grant_cache_create(n)) {}
    ~cache_ptr() { nbrma_grant_cache_destroy(c); }
};

// the targets a flush covers, with whether each needs its endpoint flushed
std::map<int, bool> covered_ways(const nbrma_grant_cache *c, int rank, bool local)
{
    std::map<int, bool> out;
    size_t cursor = 0;
    int target;
    bool by_endpoint;
    while (nbrma_grant_cache_next_covered(c, rank, local, &cursor, &target, &by_endpoint))
        EXPECT_TRUE(out.emplace(target, by_endpoint).second)
            << "target " << target << " listed twice";
    return out;
}

std::set<int> covered(const nbrma_grant_cache *c, int rank, bool local)
{
    std::set<int> out;
    for (auto &[target, by_endpoint] : covered_ways(c, rank, local))
        out.insert(target);
    return out;
}

// (rank -> (count, all locally complete)) handed over, emptying the cache;
// `ways`: rank -> whether some left UCX operations on its endpoint
std::map<int, std::pair<uint64_t, bool>> hand_over(nbrma_grant_cache *c,
                                                   std::map<int, bool> *ways = nullptr)
{
    std::map<int, std::pair<uint64_t, bool>> out;
    int rank;
    uint64_t count;
    bool local, by_endpoint;
    while (nbrma_grant_cache_last_counted(c, &rank, &count, &local, &by_endpoint)) {
        EXPECT_TRUE(out.emplace(rank, std::make_pair(count, local)).second);
        if (ways)
            (*ways)[rank] = by_endpoint;
        nbrma_grant_cache_forget(c, rank);
    }
    return out;
}

TEST(grant_cache, only_a_grant_lets_operations_skip_the_engine_until_a_sync_call_forgets_it)
{
    cache_ptr p(4);
    EXPECT_FALSE(nbrma_grant_cache_may_issue(p.c, 1));
    nbrma_grant_cache_granted(p.c, 1);
    nbrma_grant_cache_granted(p.c, 1);
    EXPECT_TRUE(nbrma_grant_cache_may_issue(p.c, 1));
    EXPECT_FALSE(nbrma_grant_cache_may_issue(p.c, 2));
    EXPECT_FALSE(nbrma_grant_cache_may_issue(p.c, 7));     // outside the window
    nbrma_grant_cache_forget_grants(p.c);
    EXPECT_FALSE(nbrma_grant_cache_may_issue(p.c, 1));
}

// G1: a fence epoch's grant covers every rank of the window at once, until
// the next synchronization call.
TEST(grant_cache, a_fence_grants_every_rank_until_a_sync_call)
{
    cache_ptr p(3);
    nbrma_grant_cache_granted_all(p.c);
    for (int r = 0; r < 3; ++r)
        EXPECT_TRUE(nbrma_grant_cache_may_issue(p.c, r));
    EXPECT_FALSE(nbrma_grant_cache_may_issue(p.c, 3));            // outside the window
    EXPECT_FALSE(nbrma_grant_cache_may_issue(p.c, -1));
    nbrma_grant_cache_forget_grants(p.c);
    for (int r = 0; r < 3; ++r)
        EXPECT_FALSE(nbrma_grant_cache_may_issue(p.c, r));
}

TEST(grant_cache, a_hand_over_lists_each_target_once_with_its_count_and_locality)
{
    cache_ptr p(4);
    ASSERT_TRUE(nbrma_grant_cache_count(p.c, 2, true, true));
    ASSERT_TRUE(nbrma_grant_cache_count(p.c, 0, true, true));
    ASSERT_TRUE(nbrma_grant_cache_count(p.c, 2, false, true));
    ASSERT_TRUE(nbrma_grant_cache_count(p.c, 2, true, true));
    auto got = hand_over(p.c);
    EXPECT_EQ(got, (std::map<int, std::pair<uint64_t, bool>>{{0, {1, true}}, {2, {3, false}}}));
    EXPECT_TRUE(hand_over(p.c).empty());
}

TEST(grant_cache, counts_survive_forgetting_grants_and_grants_survive_a_hand_over)
{
    cache_ptr p(4);
    nbrma_grant_cache_granted(p.c, 3);
    ASSERT_TRUE(nbrma_grant_cache_count(p.c, 3, true, true));
    nbrma_grant_cache_forget(p.c, 3);
    EXPECT_TRUE(nbrma_grant_cache_may_issue(p.c, 3));      // a flush keeps the grant
    ASSERT_TRUE(nbrma_grant_cache_count(p.c, 3, false, true));
    nbrma_grant_cache_forget_grants(p.c);
    EXPECT_FALSE(nbrma_grant_cache_may_issue(p.c, 3));
    EXPECT_EQ(covered(p.c, NBRMA_ALL_RANKS, false), (std::set<int>{3}));
}

TEST(grant_cache, a_flush_covers_its_target_and_a_local_flush_only_what_is_not_locally_complete)
{
    cache_ptr p(5);
    ASSERT_TRUE(nbrma_grant_cache_count(p.c, 1, true, true));
    ASSERT_TRUE(nbrma_grant_cache_count(p.c, 2, false, true));
    ASSERT_TRUE(nbrma_grant_cache_count(p.c, 4, true, true));
    EXPECT_EQ(covered(p.c, NBRMA_ALL_RANKS, false), (std::set<int>{1, 2, 4}));
    EXPECT_EQ(covered(p.c, NBRMA_ALL_RANKS, true), (std::set<int>{2}));
    EXPECT_EQ(covered(p.c, 1, false), (std::set<int>{1}));
    EXPECT_TRUE(covered(p.c, 1, true).empty());
    EXPECT_TRUE(covered(p.c, 3, false).empty());
    nbrma_grant_cache_flushed(p.c, NBRMA_ALL_RANKS, true);
    EXPECT_EQ(covered(p.c, NBRMA_ALL_RANKS, false), (std::set<int>{1, 4}));
    nbrma_grant_cache_flushed(p.c, 4, false);
    EXPECT_EQ(covered(p.c, NBRMA_ALL_RANKS, false), (std::set<int>{1}));
}

TEST(grant_cache, an_endpoint_flush_only_where_an_operation_left_ucx_operations_there)
{
    cache_ptr p(4);
    ASSERT_TRUE(nbrma_grant_cache_count(p.c, 1, false, false));     // an active message
    ASSERT_TRUE(nbrma_grant_cache_count(p.c, 2, false, false));
    ASSERT_TRUE(nbrma_grant_cache_count(p.c, 2, true, true));       // and a UCX put
    EXPECT_EQ(covered_ways(p.c, NBRMA_ALL_RANKS, false),
              (std::map<int, bool>{{1, false}, {2, true}}));
    EXPECT_EQ(covered_ways(p.c, 1, false), (std::map<int, bool>{{1, false}}));
    nbrma_grant_cache_flushed(p.c, 2, false);
    ASSERT_TRUE(nbrma_grant_cache_count(p.c, 2, false, false));     // after the flush: AM only
    EXPECT_EQ(covered_ways(p.c, 2, false), (std::map<int, bool>{{2, false}}));
    std::map<int, bool> ways;                                       // a hand-over says so too
    hand_over(p.c, &ways);
    EXPECT_EQ(ways, (std::map<int, bool>{{1, false}, {2, false}}));
}

// Rule R8's stream: `max` operations since the last flush, or more than `max`
// between the two flushes before; a flush of nothing keeps that interval, a
// hand-over forgets it.
TEST(grant_cache, a_stream_is_max_operations_since_a_flush_or_more_in_the_interval_before)
{
    cache_ptr p(4);
    const uint64_t max = 3;
    EXPECT_FALSE(nbrma_grant_cache_in_stream(p.c, 1, max)) << "nothing counted yet";
    EXPECT_TRUE(nbrma_grant_cache_in_stream(p.c, 1, 0)) << "0: always";
    for (uint64_t i = 0; i < max; i++) {
        EXPECT_FALSE(nbrma_grant_cache_in_stream(p.c, 1, max)) << i;
        ASSERT_TRUE(nbrma_grant_cache_count(p.c, 1, true, false));
    }
    EXPECT_TRUE(nbrma_grant_cache_in_stream(p.c, 1, max));
    EXPECT_FALSE(nbrma_grant_cache_in_stream(p.c, 2, max)) << "per target";
    nbrma_grant_cache_flushed(p.c, 1, false);
    EXPECT_FALSE(nbrma_grant_cache_in_stream(p.c, 1, max)) << "max before the flush, not more";
    for (uint64_t i = 0; i <= max; i++)
        ASSERT_TRUE(nbrma_grant_cache_count(p.c, 1, true, false));
    nbrma_grant_cache_flushed(p.c, 1, false);
    EXPECT_TRUE(nbrma_grant_cache_in_stream(p.c, 1, max)) << "more than max before the flush";
    nbrma_grant_cache_flushed(p.c, NBRMA_ALL_RANKS, false);
    EXPECT_TRUE(nbrma_grant_cache_in_stream(p.c, 1, max)) << "a flush of nothing";
    ASSERT_TRUE(nbrma_grant_cache_count(p.c, 1, true, false));
    nbrma_grant_cache_flushed(p.c, 1, false);
    EXPECT_FALSE(nbrma_grant_cache_in_stream(p.c, 1, max)) << "one operation between flushes";
    for (uint64_t i = 0; i <= max; i++)
        ASSERT_TRUE(nbrma_grant_cache_count(p.c, 1, true, false));
    nbrma_grant_cache_flushed(p.c, 1, false);
    hand_over(p.c);
    EXPECT_FALSE(nbrma_grant_cache_in_stream(p.c, 1, max)) << "a hand-over forgets";
}

TEST(grant_cache, a_finished_nonblocking_local_flush_leaves_later_local_flushes_nothing_to_wait_for)
{
    cache_ptr p(3);
    uint64_t seq = 0;
    ASSERT_TRUE(nbrma_grant_cache_count(p.c, 1, false, true));      // a put still in flight
    ASSERT_TRUE(nbrma_grant_cache_count(p.c, 1, true, true));
    EXPECT_FALSE(nbrma_grant_cache_local_flush_in_flight(p.c, 1, &seq));
    nbrma_grant_cache_local_flush_began(p.c, 1, 7);
    ASSERT_TRUE(nbrma_grant_cache_local_flush_in_flight(p.c, 1, &seq));
    EXPECT_EQ(seq, 7u);
    // until it is found finished, a local flush covers the target still
    EXPECT_EQ(covered(p.c, 1, true), (std::set<int>{1}));
    ASSERT_TRUE(nbrma_grant_cache_count(p.c, 1, false, true));      // one more after it began
    nbrma_grant_cache_local_flush_finished(p.c, 1);
    EXPECT_FALSE(nbrma_grant_cache_local_flush_in_flight(p.c, 1, &seq));
    // the one after it is not covered by it
    EXPECT_EQ(covered(p.c, 1, true), (std::set<int>{1}));
    nbrma_grant_cache_local_flush_began(p.c, 1, 0);                 // none in flight: seq 0
    ASSERT_TRUE(nbrma_grant_cache_local_flush_in_flight(p.c, 1, &seq));
    EXPECT_EQ(seq, 0u);
    nbrma_grant_cache_local_flush_finished(p.c, 1);
    EXPECT_TRUE(covered(p.c, 1, true).empty());
    // a remote flush still covers all four, and the hand-over says they
    // are locally complete
    EXPECT_EQ(covered(p.c, 1, false), (std::set<int>{1}));
    EXPECT_EQ(hand_over(p.c), (std::map<int, std::pair<uint64_t, bool>>{{1, {3, true}}}));
}

TEST(grant_cache, a_completed_flush_forgets_a_local_flush_in_flight)
{
    cache_ptr p(3);
    uint64_t seq = 0;
    ASSERT_TRUE(nbrma_grant_cache_count(p.c, 2, false, true));
    nbrma_grant_cache_local_flush_began(p.c, 2, 3);
    nbrma_grant_cache_flushed(p.c, 2, false);
    EXPECT_FALSE(nbrma_grant_cache_local_flush_in_flight(p.c, 2, &seq));
    // what comes after is counted as itself: finishing nothing subtracts nothing
    ASSERT_TRUE(nbrma_grant_cache_count(p.c, 2, false, true));
    nbrma_grant_cache_local_flush_finished(p.c, 2);
    EXPECT_EQ(covered(p.c, 2, true), (std::set<int>{2}));
    // a target without operations has nothing in flight
    nbrma_grant_cache_local_flush_began(p.c, 0, 5);
    EXPECT_FALSE(nbrma_grant_cache_local_flush_in_flight(p.c, 0, &seq));
}

TEST(grant_cache, ranks_outside_the_window_are_never_counted)
{
    cache_ptr p(2);
    EXPECT_FALSE(nbrma_grant_cache_count(p.c, 2, true, true));
    EXPECT_FALSE(nbrma_grant_cache_count(p.c, -1, true, true));
    nbrma_grant_cache_forget(p.c, 9);
    EXPECT_TRUE(hand_over(p.c).empty());
}

// The model: per target, operations not yet handed over or completed, with
// their locality; the grants. Every operation must leave exactly once.
TEST(grant_cache_sim, every_operation_is_handed_over_or_flushed_exactly_once)
{
    constexpr int n_ranks = 6;
    for (unsigned seed = 1; seed <= 500; seed++) {
        std::mt19937 rng(seed);
        cache_ptr p(n_ranks);
        std::set<int> granted;
        std::map<int, std::pair<uint64_t, uint64_t>> open;    // rank -> (count, not local)
        std::map<int, uint64_t> by_ucx;                         // rank -> of them, by endpoint
        uint64_t went = 0, left = 0;
        for (int step = 0; step < 200; step++) {
            int rank = static_cast<int>(rng() % n_ranks);
            switch (rng() % 6) {
            case 0:
                nbrma_grant_cache_granted(p.c, rank);
                granted.insert(rank);
                break;
            case 1:
            case 2:{
                ASSERT_EQ(nbrma_grant_cache_may_issue(p.c, rank), granted.count(rank) == 1)
                    << "seed " << seed;
                if (!granted.count(rank))
                    break;
                bool local = rng() % 2, ucx = rng() % 2;
                ASSERT_TRUE(nbrma_grant_cache_count(p.c, rank, local, ucx));
                open[rank].first++;
                open[rank].second += !local;
                by_ucx[rank] += ucx;
                went++;
                break;
            }
            case 3:{           // a synchronization call: hand over, maybe forget grants
                std::map<int, bool> ways;
                for (auto &[r, c] : hand_over(p.c, &ways)) {
                    ASSERT_EQ(ways[r], by_ucx[r] != 0) << "seed " << seed;
                    ASSERT_EQ(open.count(r), 1u) << "seed " << seed;
                    ASSERT_EQ(c.first, open[r].first) << "seed " << seed;
                    ASSERT_EQ(c.second, open[r].second == 0) << "seed " << seed;
                    left += c.first;
                    open.erase(r);
                    by_ucx.erase(r);
                }
                ASSERT_TRUE(open.empty()) << "seed " << seed;
                if (rng() % 2) {
                    nbrma_grant_cache_forget_grants(p.c);
                    granted.clear();
                }
                break;
            }
            default:{          // a blocking flush toward one rank or all, local or not
                int target = rng() % 3 ? rank : NBRMA_ALL_RANKS;
                bool local = rng() % 2;
                std::map<int, bool> want;
                for (auto &[r, c] : open)
                    if ((target == NBRMA_ALL_RANKS || r == target) && !(local && c.second == 0))
                        want.emplace(r, by_ucx[r] != 0);
                ASSERT_EQ(covered_ways(p.c, target, local), want) << "seed " << seed;
                nbrma_grant_cache_flushed(p.c, target, local);
                for (auto &[r, ucx] : want) {
                    left += open[r].first;
                    open.erase(r);
                    by_ucx.erase(r);
                }
            }
            }
        }
        for (auto &[r, c] : hand_over(p.c))
            left += c.first;
        ASSERT_EQ(left, went) << "seed " << seed;
    }
}

} // namespace
