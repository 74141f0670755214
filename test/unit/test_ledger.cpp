// The completion ledger (core/include/nbrma_ledger.h), without MPI: its rules
// one by one, then a simulator of a transport, issued operations, endpoint
// flushes and waiters with outside parts, which checks at every release that
// everything the waiter needed is complete, and at the end that every waiter
// was released. The same simulator over a transport whose flushes do not
// wait for their operations must find an early release: the proof that the
// check can fail. Last, the memory the ledger keeps per peer for 10^3-10^5
// peers.

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <map>
#include <random>
#include <set>
#include <vector>

#include "nbrma_ledger.h"
#include "nbrma_grant_cache.h"

namespace {

struct ledger_ptr {
    nbrma_ledger *l = nbrma_ledger_create();
    ~ledger_ptr() { nbrma_ledger_destroy(l); }
};

std::vector<void *> take_released(nbrma_ledger *l, std::vector<int> *errors = nullptr)
{
    std::vector<void *> out;
    void *cookie;
    int error;
    while (nbrma_ledger_next_released(l, &cookie, &error)) {
        out.push_back(cookie);
        if (errors)
            errors->push_back(error);
    }
    return out;
}

void *cookie_of(int i)
{
    return reinterpret_cast<void *>(static_cast<uintptr_t>(i));
}

TEST(ledger, a_waiter_without_parts_is_released_when_armed)
{
    ledger_ptr lp;
    nbrma_waiter_id w = nbrma_ledger_waiter_new(lp.l, cookie_of(7));
    ASSERT_NE(w, 0u);
    EXPECT_TRUE(take_released(lp.l).empty());
    nbrma_ledger_waiter_armed(lp.l, w);
    EXPECT_EQ(take_released(lp.l), std::vector<void *>{cookie_of(7)});
    EXPECT_EQ(nbrma_ledger_waiters(lp.l), 0u);
}

TEST(ledger, a_flush_releases_the_waiters_at_or_below_its_number_in_any_order)
{
    ledger_ptr lp;
    const nbrma_peer_key p = 0x10;
    uint64_t one, two;
    ASSERT_TRUE(nbrma_ledger_start_flush(lp.l, p, &one));
    ASSERT_TRUE(nbrma_ledger_start_flush(lp.l, p, &two));
    EXPECT_LT(one, two);
    nbrma_waiter_id a = nbrma_ledger_waiter_new(lp.l, cookie_of(1));
    nbrma_waiter_id b = nbrma_ledger_waiter_new(lp.l, cookie_of(2));
    ASSERT_TRUE(nbrma_ledger_waiter_needs_flush(lp.l, b, p, two));
    ASSERT_TRUE(nbrma_ledger_waiter_needs_flush(lp.l, a, p, one));
    nbrma_ledger_waiter_armed(lp.l, a);
    nbrma_ledger_waiter_armed(lp.l, b);
    EXPECT_TRUE(take_released(lp.l).empty());
    int error = -1;
    EXPECT_FALSE(nbrma_ledger_flush_done(lp.l, p, one, &error));
    nbrma_ledger_flush_finished(lp.l, p, two, 0);  // the later one first: covers both
    std::vector<void *> got = take_released(lp.l);
    std::sort(got.begin(), got.end());
    EXPECT_EQ(got, (std::vector<void *>{cookie_of(1), cookie_of(2)}));
    EXPECT_TRUE(nbrma_ledger_flush_done(lp.l, p, one, &error));
    EXPECT_EQ(error, 0);
    nbrma_ledger_flush_finished(lp.l, p, one, 0);  // the late flush 1 changes nothing
    EXPECT_TRUE(take_released(lp.l).empty());
    EXPECT_EQ(nbrma_ledger_waiters(lp.l), 0u);
}

TEST(ledger, a_flush_does_not_release_a_waiter_of_a_later_one)
{
    ledger_ptr lp;
    const nbrma_peer_key p = 0x10;
    uint64_t one, two;
    ASSERT_TRUE(nbrma_ledger_start_flush(lp.l, p, &one));
    ASSERT_TRUE(nbrma_ledger_start_flush(lp.l, p, &two));
    nbrma_waiter_id b = nbrma_ledger_waiter_new(lp.l, cookie_of(2));
    ASSERT_TRUE(nbrma_ledger_waiter_needs_flush(lp.l, b, p, two));
    nbrma_ledger_waiter_armed(lp.l, b);
    nbrma_ledger_flush_finished(lp.l, p, one, 0);
    EXPECT_TRUE(take_released(lp.l).empty());
    nbrma_ledger_flush_finished(lp.l, p, two, 0);
    EXPECT_EQ(take_released(lp.l), std::vector<void *>{cookie_of(2)});
}

TEST(ledger, a_waiter_that_asks_for_a_finished_flush_needs_nothing_more)
{
    ledger_ptr lp;
    const nbrma_peer_key p = 0x10;
    uint64_t seq;
    ASSERT_TRUE(nbrma_ledger_start_flush(lp.l, p, &seq));
    nbrma_ledger_flush_finished(lp.l, p, seq, 0);
    nbrma_waiter_id a = nbrma_ledger_waiter_new(lp.l, cookie_of(1));
    ASSERT_TRUE(nbrma_ledger_waiter_needs_flush(lp.l, a, p, seq));
    nbrma_ledger_waiter_armed(lp.l, a);
    EXPECT_EQ(take_released(lp.l), std::vector<void *>{cookie_of(1)});
}

TEST(ledger, errors_reach_the_waiter_and_the_first_one_wins)
{
    ledger_ptr lp;
    const nbrma_peer_key p = 0x10, q = 0x20;
    uint64_t sp, sq;
    ASSERT_TRUE(nbrma_ledger_start_flush(lp.l, p, &sp));
    ASSERT_TRUE(nbrma_ledger_start_flush(lp.l, q, &sq));
    nbrma_waiter_id b = nbrma_ledger_waiter_new(lp.l, cookie_of(2));
    ASSERT_TRUE(nbrma_ledger_waiter_needs_flush(lp.l, b, p, sp));
    ASSERT_TRUE(nbrma_ledger_waiter_needs_flush(lp.l, b, q, sq));
    nbrma_ledger_waiter_needs_outside(lp.l, b);
    nbrma_ledger_waiter_armed(lp.l, b);
    nbrma_ledger_flush_finished(lp.l, p, sp, 0);
    nbrma_ledger_flush_finished(lp.l, q, sq, 5);
    EXPECT_TRUE(take_released(lp.l).empty());      // the outside part is missing
    nbrma_ledger_outside_done(lp.l, b, 9);
    std::vector<int> errors;
    EXPECT_EQ(take_released(lp.l, &errors), std::vector<void *>{cookie_of(2)});
    EXPECT_EQ(errors, std::vector<int>{5});        // the first error wins
}

TEST(ledger, a_wait_without_a_waiter_learns_of_a_failed_flush_of_its_endpoint)
{
    ledger_ptr lp;
    const nbrma_peer_key p = 0x30, q = 0x40;
    uint64_t one, two, other;
    int error = -1;
    ASSERT_TRUE(nbrma_ledger_start_flush(lp.l, p, &one));
    ASSERT_TRUE(nbrma_ledger_start_flush(lp.l, p, &two));
    ASSERT_TRUE(nbrma_ledger_start_flush(lp.l, q, &other));
    EXPECT_FALSE(nbrma_ledger_flush_done(lp.l, p, one, &error));
    EXPECT_EQ(error, -1);  // untouched until done
    nbrma_ledger_flush_finished(lp.l, p, one, 7);
    EXPECT_TRUE(nbrma_ledger_flush_done(lp.l, p, one, &error));
    EXPECT_EQ(error, 7);
    EXPECT_FALSE(nbrma_ledger_flush_done(lp.l, p, two, &error));
    nbrma_ledger_flush_finished(lp.l, p, two, 0);
    EXPECT_TRUE(nbrma_ledger_flush_done(lp.l, p, two, &error));
    EXPECT_EQ(error, 7);   // the endpoint stays failed
    nbrma_ledger_flush_finished(lp.l, q, other, 0);
    EXPECT_TRUE(nbrma_ledger_flush_done(lp.l, q, other, &error));
    EXPECT_EQ(error, 0);   // another endpoint's failure is not this one's
}

TEST(ledger, a_waiter_that_failed_is_released_with_its_error_once_its_parts_are_done)
{
    ledger_ptr lp;
    const nbrma_peer_key p = 0x10;
    uint64_t seq;
    ASSERT_TRUE(nbrma_ledger_start_flush(lp.l, p, &seq));
    nbrma_waiter_id a = nbrma_ledger_waiter_new(lp.l, cookie_of(1));
    nbrma_ledger_waiter_error(lp.l, a, 7);
    ASSERT_TRUE(nbrma_ledger_waiter_needs_flush(lp.l, a, p, seq));
    nbrma_ledger_waiter_error(lp.l, a, 8);         // the first error wins
    nbrma_ledger_waiter_armed(lp.l, a);
    EXPECT_TRUE(take_released(lp.l).empty());      // still waits for its flush
    nbrma_ledger_flush_finished(lp.l, p, seq, 0);
    std::vector<int> errors;
    EXPECT_EQ(take_released(lp.l, &errors), std::vector<void *>{cookie_of(1)});
    EXPECT_EQ(errors, std::vector<int>{7});
}

TEST(ledger, the_id_of_a_released_waiter_names_no_later_waiter)
{
    ledger_ptr lp;
    nbrma_waiter_id a = nbrma_ledger_waiter_new(lp.l, cookie_of(1));
    nbrma_ledger_waiter_armed(lp.l, a);
    EXPECT_EQ(take_released(lp.l).size(), 1u);
    nbrma_waiter_id b = nbrma_ledger_waiter_new(lp.l, cookie_of(2));   // a's slot again
    EXPECT_NE(a, b);
    nbrma_ledger_waiter_needs_outside(lp.l, b);
    nbrma_ledger_waiter_armed(lp.l, b);
    nbrma_ledger_outside_done(lp.l, a, 0);         // stale: must not touch b
    nbrma_ledger_waiter_armed(lp.l, a);
    EXPECT_TRUE(take_released(lp.l).empty());
    nbrma_ledger_outside_done(lp.l, b, 0);
    EXPECT_EQ(take_released(lp.l), std::vector<void *>{cookie_of(2)});
}

// --- the simulator -------------------------------------------------------

struct sim_flush {
    nbrma_peer_key peer;
    uint64_t seq;
    std::set<uint64_t> covers;  // operations in flight toward the peer when it started
};

struct sim_waiter {
    std::set<uint64_t> needs;   // operations in flight toward its peers when it asked
    int outside = 0;            // outside parts not done
    bool released = false;
};

// Runs one seeded program; returns the number of waiters released before
// what they needed was complete (0 with an honest transport).
int simulate(unsigned seed, bool flushes_wait_for_operations, int *released_total)
{
    std::mt19937 rng(seed);
    const int n_peers = 1 + rng() % 5;
    ledger_ptr lp;
    uint64_t next_op = 0;
    std::map<uint64_t, nbrma_peer_key> in_flight;          // operation -> peer
    std::vector<sim_flush> flushes;
    std::map<int, sim_waiter> waiters;
    std::vector<std::pair<nbrma_waiter_id, int>> outside_open; // (ledger's id, simulator's)
    int next_waiter = 0, early = 0;

    auto peer_key = [](int i) { return static_cast<nbrma_peer_key>(0x100 + i); };
    auto collect = [&]() {
        void *cookie;
        int error;
        while (nbrma_ledger_next_released(lp.l, &cookie, &error)) {
            int id = static_cast<int>(reinterpret_cast<uintptr_t>(cookie));
            sim_waiter &w = waiters.at(id);
            EXPECT_FALSE(w.released);
            w.released = true;
            (*released_total)++;
            bool complete = w.outside == 0;
            for (uint64_t op : w.needs)
                complete = complete && !in_flight.count(op);
            early += !complete;
        }
    };
    // a flush the glue starts now, or (sharing) the newest one in flight
    // toward that peer if no operation toward it was issued since it started
    auto flush_for = [&](nbrma_peer_key peer) {
        for (auto it = flushes.rbegin(); it != flushes.rend(); ++it)
            if (it->peer == peer) {
                bool covers_all = true;
                for (auto &op : in_flight)
                    covers_all = covers_all && (op.second != peer || it->covers.count(op.first));
                if (covers_all && rng() % 2)
                    return it->seq;
                break;
            }
        sim_flush f{peer, 0, {}};
        EXPECT_TRUE(nbrma_ledger_start_flush(lp.l, peer, &f.seq));
        for (auto &op : in_flight)
            if (op.second == peer)
                f.covers.insert(op.first);
        flushes.push_back(f);
        return f.seq;
    };

    for (int step = 0; step < 400; step++) {
        switch (rng() % 6) {
        case 0:
        case 1:        // issue an operation
            in_flight[++next_op] = peer_key(rng() % n_peers);
            break;
        case 2:        // an operation completes at its target
            if (!in_flight.empty()) {
                auto it = in_flight.begin();
                std::advance(it, rng() % in_flight.size());
                in_flight.erase(it);
            }
            break;
        case 3: {      // a waiter on one peer or all, maybe with outside parts
            int id = next_waiter++;
            sim_waiter &w = waiters[id];
            nbrma_waiter_id wid = nbrma_ledger_waiter_new(lp.l, cookie_of(id));
            EXPECT_NE(wid, 0u);
            int one = rng() % (n_peers + 1);       // n_peers: all
            for (int i = 0; i < n_peers; i++)
                if (one == n_peers || one == i) {
                    uint64_t seq = flush_for(peer_key(i));
                    EXPECT_TRUE(nbrma_ledger_waiter_needs_flush(lp.l, wid, peer_key(i), seq));
                    for (auto &op : in_flight)
                        if (op.second == peer_key(i))
                            w.needs.insert(op.first);
                }
            w.outside = rng() % 3;
            for (int i = 0; i < w.outside; i++)
                nbrma_ledger_waiter_needs_outside(lp.l, wid);
            if (w.outside)
                outside_open.push_back({wid, id});
            nbrma_ledger_waiter_armed(lp.l, wid);
            break;
        }
        case 4:        // a flush finishes: once its operations completed, if honest
            for (size_t i = 0; i < flushes.size(); i++) {
                bool done = true;
                for (uint64_t op : flushes[i].covers)
                    done = done && (!flushes_wait_for_operations || !in_flight.count(op));
                if (done && rng() % 2) {
                    sim_flush f = flushes[i];
                    flushes.erase(flushes.begin() + i);
                    nbrma_ledger_flush_finished(lp.l, f.peer, f.seq, 0);
                    break;
                }
            }
            break;
        case 5:        // an outside part is done
            if (!outside_open.empty()) {
                size_t i = rng() % outside_open.size();
                auto [wid, id] = outside_open[i];
                sim_waiter &w = waiters.at(id);
                w.outside--;
                nbrma_ledger_outside_done(lp.l, wid, 0);
                if (w.outside == 0)
                    outside_open.erase(outside_open.begin() + i);
            }
            break;
        }
        collect();
    }
    // drain: every operation completes, every flush and outside part finishes
    in_flight.clear();
    for (auto &f : flushes)
        nbrma_ledger_flush_finished(lp.l, f.peer, f.seq, 0);
    for (auto [wid, id] : outside_open)
        while (waiters.at(id).outside > 0) {
            waiters.at(id).outside--;
            nbrma_ledger_outside_done(lp.l, wid, 0);
        }
    collect();
    for (auto &w : waiters)
        EXPECT_TRUE(w.second.released) << "seed " << seed << ": waiter " << w.first
            << " never released";
    EXPECT_EQ(nbrma_ledger_waiters(lp.l), 0u);
    EXPECT_LE(nbrma_ledger_peers(lp.l), static_cast<size_t>(n_peers));
    return early;
}

unsigned seeds()
{
    const char *s = std::getenv("NBRMA_SIM_SEEDS");
    return s ? static_cast<unsigned>(std::atoi(s)) : 3000u;
}

TEST(ledger_sim, no_waiter_is_released_before_what_it_needs_and_every_one_is)
{
    int released = 0;
    for (unsigned seed = 1; seed <= seeds(); seed++) {
        ASSERT_EQ(simulate(seed, true, &released), 0) << "seed " << seed;
        if (HasFailure())
            FAIL() << "seed " << seed;
    }
    EXPECT_GT(released, 0);
}

TEST(ledger_sim, a_transport_whose_flushes_do_not_wait_is_caught)
{
    int released = 0, early = 0;
    for (unsigned seed = 1; seed <= 500; seed++)
        early += simulate(seed, false, &released);
    EXPECT_GT(early, 0) << "the check never fails: it checks nothing";
}

// --- memory and matching per peer ----------------------------------------

// The process-wide ledger keeps one object per peer contacted; each window
// keeps its matching triple <a_l, e_l, g_r> per peer (24 bytes,
// match_triple.hpp) and its grant cache's state (nbrma_grant_cache.h), with
// an entry only per target used since the last synchronization call. A flush of one peer touches that peer's object only, so
// the work per waiter does not grow with the number of peers.
TEST(ledger_model, memory_per_peer_stays_constant_from_a_thousand_to_a_hundred_thousand_peers)
{
    const size_t window_bytes = 3 * sizeof(uint64_t) + nbrma_grant_cache_rank_bytes();
    EXPECT_LE(nbrma_grant_cache_rank_bytes(), 4u);
    for (size_t n : {size_t(1000), size_t(10000), size_t(100000)}) {
        ledger_ptr lp;
        for (size_t i = 0; i < n; i++) {
            uint64_t seq;
            nbrma_waiter_id w = nbrma_ledger_waiter_new(lp.l, cookie_of(1));
            ASSERT_TRUE(nbrma_ledger_start_flush(lp.l, 0x1000 + i, &seq));
            ASSERT_TRUE(nbrma_ledger_waiter_needs_flush(lp.l, w, 0x1000 + i, seq));
            nbrma_ledger_waiter_armed(lp.l, w);
            ASSERT_TRUE(take_released(lp.l).empty());
            nbrma_ledger_flush_finished(lp.l, 0x1000 + i, seq, 0);
            ASSERT_EQ(take_released(lp.l).size(), 1u);
        }
        EXPECT_EQ(nbrma_ledger_peers(lp.l), n);
        EXPECT_EQ(nbrma_ledger_waiters(lp.l), 0u);
        size_t per_peer = nbrma_ledger_peer_bytes();
        EXPECT_LE(per_peer, 96u);
        std::printf("ledger model: %zu peers: %zu B per peer (process), + %zu B per peer per "
                    "window (triple, grant cache); %.1f MiB per process with 10 windows\n", n,
                    per_peer, window_bytes, (per_peer + 10 * window_bytes) * n / 1048576.0);
    }
}

} // namespace
