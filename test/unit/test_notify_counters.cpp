// The counters of notified RMA and the requests waiting on them
// (core/include/nbrma_notify_counters.h) without MPI: the creation vote
// (N1), index checks (N2), waits released exactly when their counter
// reaches their value (N3), waiters of freed counters (N4), and random
// programs of several windows checked against a plain model, with every
// release checked against the counter's value when it happened.

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <deque>
#include <limits>
#include <memory>
#include <random>
#include <thread>
#include <utility>
#include <vector>

#include "nbrma_notify_counters.h"

namespace {

// What the glue's request is here: an id and what it waits for, so that
// each release can be checked against the counter as it is then.
struct waiter {
    int id;
    const int64_t *counter;
    int64_t value;
};

struct released {
    int id;
    bool freed;
    bool operator==(const released &o) const { return id == o.id && freed == o.freed; }
};

std::vector<released> log_;
bool early_release_;    // a waiter released below its value (not freed)

void release(void *w, bool freed)
{
    auto *x = static_cast<waiter *>(w);
    if (!freed && __atomic_load_n(x->counter, __ATOMIC_ACQUIRE) < x->value)
        early_release_ = true;
    log_.push_back({x->id, freed});
}

std::vector<released> take_log()
{
    std::vector<released> out;
    out.swap(log_);
    return out;
}

std::vector<released> reached(std::initializer_list<int> ids)
{
    std::vector<released> out;
    for (int id : ids)
        out.push_back({id, false});
    return out;
}

// One window with `n` counters of its own memory, in a table of its own.
struct window {
    nbrma_notify_table table{};
    std::vector<int64_t> values;
    nbrma_notify_counters *c = nullptr;
    std::deque<waiter> waiters; // stable addresses

    explicit window(int n, void *user = nullptr) : values(static_cast<size_t>(n > 0 ? n : 1), 0)
    {
        log_.clear();
        early_release_ = false;
        EXPECT_EQ(nbrma_notify_table_add(&table, this, n, values.data(), user, release, &c),
                  NBRMA_OK);
    }
    ~window()
    {
        if (c)
            nbrma_notify_table_remove(&table, c);
        log_.clear();
    }
    int wait(int id, int idx, int64_t value)
    {
        bool in = idx >= 0 && static_cast<size_t>(idx) < values.size();
        waiters.push_back({id, in ? &values[static_cast<size_t>(idx)] : nullptr, value});
        return nbrma_notify_counters_wait(c, idx, value, &waiters.back());
    }
    bool arrive(int idx) { return nbrma_notify_table_arrived(&table, this, idx); }
};

TEST(notify_counters, the_vote_makes_counters_only_where_every_process_agrees)
{
    auto verdict = [](std::vector<std::pair<int, bool>> procs, int *lo = nullptr,
                      int *hi = nullptr) {
        int all[3] = {std::numeric_limits<int>::min(), std::numeric_limits<int>::min(),
                      std::numeric_limits<int>::min()};
        for (auto [n, have] : procs) {       // MPI_MAX over the window
            int v[3];
            nbrma_notify_vote(n, have, v);
            for (int i = 0; i < 3; i++)
                all[i] = std::max(all[i], v[i]);
        }
        if (lo)
            *lo = -all[1];
        if (hi)
            *hi = all[0];
        return nbrma_notify_verdict(all);
    };
    int lo, hi;
    EXPECT_EQ(verdict({{4, false}, {4, false}, {4, false}}), NBRMA_OK);
    EXPECT_EQ(verdict({{0, false}}), NBRMA_OK);
    EXPECT_EQ(verdict({{3, false}, {5, false}, {4, false}}, &lo, &hi), NBRMA_ERR_ARG);
    EXPECT_EQ(lo, 3);
    EXPECT_EQ(hi, 5);
    EXPECT_EQ(verdict({{0, false}, {1, false}}), NBRMA_ERR_ARG);
    // counters somewhere already come first, agreeing numbers or not
    EXPECT_EQ(verdict({{4, false}, {4, true}}), NBRMA_ERR_SYNC);
    EXPECT_EQ(verdict({{4, true}, {7, false}}), NBRMA_ERR_SYNC);
    // no overflow at the extremes: they differ, they do not agree by accident
    EXPECT_EQ(verdict({{std::numeric_limits<int>::min(), false}}), NBRMA_ERR_ARG);
    EXPECT_EQ(verdict({{std::numeric_limits<int>::max(), false}}), NBRMA_OK);
    EXPECT_EQ(verdict({{std::numeric_limits<int>::max(), false}, {0, false}}), NBRMA_ERR_ARG);
}

TEST(notify_counters, the_table_finds_each_window_and_refuses_a_second_entry)
{
    nbrma_notify_table t{};
    int64_t a[2] = {0, 0}, b[1] = {0};
    int win_a = 0, win_b = 0, user = 0;
    nbrma_notify_counters *ca, *cb, *again = reinterpret_cast<nbrma_notify_counters *>(&user);

    EXPECT_EQ(nbrma_notify_table_find(&t, &win_a), nullptr);
    ASSERT_EQ(nbrma_notify_table_add(&t, &win_a, 2, a, &user, release, &ca), NBRMA_OK);
    ASSERT_EQ(nbrma_notify_table_add(&t, &win_b, 1, b, nullptr, release, &cb), NBRMA_OK);
    EXPECT_EQ(nbrma_notify_table_find(&t, &win_a), ca);
    EXPECT_EQ(nbrma_notify_table_find(&t, &win_b), cb);
    EXPECT_EQ(nbrma_notify_table_find(&t, nullptr), nullptr);
    EXPECT_EQ(nbrma_notify_counters_user(ca), &user);
    EXPECT_EQ(nbrma_notify_counters_count(ca), 2);
    EXPECT_EQ(nbrma_notify_counters_count(cb), 1);
    EXPECT_EQ(nbrma_notify_table_add(&t, &win_a, 2, a, nullptr, release, &again),
              NBRMA_ERR_SYNC);
    EXPECT_EQ(again, nullptr);
    EXPECT_EQ(nbrma_notify_table_add(&t, nullptr, 1, b, nullptr, release, nullptr),
              NBRMA_ERR_ARG);
    EXPECT_EQ(nbrma_notify_table_add(&t, &user, -1, b, nullptr, release, nullptr),
              NBRMA_ERR_ARG);
    EXPECT_EQ(nbrma_notify_table_add(&t, &user, 1, nullptr, nullptr, release, nullptr),
              NBRMA_ERR_ARG);
    EXPECT_EQ(nbrma_notify_table_add(&t, &user, 1, b, nullptr, nullptr, nullptr), NBRMA_ERR_ARG);
    EXPECT_EQ(nbrma_notify_table_find(&t, &user), nullptr);
    nbrma_notify_table_remove(&t, ca);
    EXPECT_EQ(nbrma_notify_table_find(&t, &win_a), nullptr);
    EXPECT_EQ(nbrma_notify_table_find(&t, &win_b), cb);
    nbrma_notify_table_remove(&t, cb);
    EXPECT_EQ(t.first, nullptr);
}

TEST(notify_counters, an_index_names_one_of_the_counters_and_others_are_dropped)
{
    window w(3);
    EXPECT_FALSE(nbrma_notify_counters_has(w.c, -1));
    EXPECT_TRUE(nbrma_notify_counters_has(w.c, 0));
    EXPECT_TRUE(nbrma_notify_counters_has(w.c, 2));
    EXPECT_FALSE(nbrma_notify_counters_has(w.c, 3));
    EXPECT_FALSE(w.arrive(3));
    EXPECT_FALSE(w.arrive(-1));
    int other;
    EXPECT_FALSE(nbrma_notify_table_arrived(&w.table, &other, 0));     // no counters there
    EXPECT_FALSE(nbrma_notify_table_arrived(&w.table, nullptr, 0));
    EXPECT_EQ(w.values, (std::vector<int64_t>{0, 0, 0}));
    EXPECT_TRUE(w.arrive(2));
    EXPECT_EQ(nbrma_notify_counters_get(w.c, 2), 1);
    EXPECT_EQ(nbrma_notify_counters_get(w.c, 3), 0);
    nbrma_notify_counters_set(w.c, 3, 9);   // nothing written past the counters
    nbrma_notify_counters_set(w.c, -1, 9);
    EXPECT_EQ(w.values, (std::vector<int64_t>{0, 0, 1}));
    EXPECT_EQ(w.wait(1, 3, 1), NBRMA_ERR_ARG);
    EXPECT_EQ(w.wait(2, -1, 1), NBRMA_ERR_ARG);
    EXPECT_EQ(nbrma_notify_counters_waiting(w.c), 0u);
    EXPECT_TRUE(take_log().empty());

    window none(0);                         // a window may have no counters
    EXPECT_FALSE(nbrma_notify_counters_has(none.c, 0));
    EXPECT_FALSE(none.arrive(0));
}

TEST(notify_counters, a_wait_is_released_exactly_when_its_counter_reaches_its_value)
{
    window w(1);
    ASSERT_EQ(w.wait(1, 0, 3), NBRMA_OK);
    EXPECT_EQ(nbrma_notify_counters_waiting(w.c), 1u);
    EXPECT_TRUE(w.arrive(0));
    EXPECT_TRUE(w.arrive(0));
    EXPECT_TRUE(take_log().empty());
    EXPECT_TRUE(w.arrive(0));
    EXPECT_EQ(take_log(), reached({1}));
    EXPECT_EQ(nbrma_notify_counters_waiting(w.c), 0u);
    // the request takes nothing from the counter
    EXPECT_EQ(nbrma_notify_counters_get(w.c, 0), 3);
    EXPECT_TRUE(w.arrive(0));
    EXPECT_TRUE(take_log().empty());
    EXPECT_FALSE(early_release_);
}

TEST(notify_counters, a_wait_already_reached_is_released_inside_the_call)
{
    window w(2);
    ASSERT_EQ(w.wait(1, 0, 0), NBRMA_OK);   // 0 >= 0
    EXPECT_EQ(take_log(), reached({1}));
    ASSERT_EQ(w.wait(2, 0, -5), NBRMA_OK);
    EXPECT_EQ(take_log(), reached({2}));
    nbrma_notify_counters_set(w.c, 1, 7);
    ASSERT_EQ(w.wait(3, 1, 7), NBRMA_OK);
    EXPECT_EQ(take_log(), reached({3}));
    EXPECT_EQ(nbrma_notify_counters_waiting(w.c), 0u);
}

TEST(notify_counters, several_waits_on_one_counter_go_at_their_own_values_in_the_order_made)
{
    window w(1);
    ASSERT_EQ(w.wait(1, 0, 3), NBRMA_OK);
    ASSERT_EQ(w.wait(2, 0, 1), NBRMA_OK);
    ASSERT_EQ(w.wait(3, 0, 3), NBRMA_OK);
    ASSERT_EQ(w.wait(4, 0, 2), NBRMA_OK);
    ASSERT_EQ(w.wait(5, 0, 1), NBRMA_OK);
    EXPECT_TRUE(take_log().empty());
    w.arrive(0);
    EXPECT_EQ(take_log(), reached({2, 5}));
    w.arrive(0);
    EXPECT_EQ(take_log(), reached({4}));
    w.arrive(0);
    EXPECT_EQ(take_log(), reached({1, 3}));
    EXPECT_EQ(nbrma_notify_counters_waiting(w.c), 0u);
    // a counter that jumps past several values releases them together, in
    // the order they were made, not by value
    ASSERT_EQ(w.wait(6, 0, 9), NBRMA_OK);
    ASSERT_EQ(w.wait(7, 0, 5), NBRMA_OK);
    ASSERT_EQ(w.wait(8, 0, 10), NBRMA_OK);
    nbrma_notify_counters_set(w.c, 0, 9);
    EXPECT_EQ(take_log(), reached({6, 7}));
    EXPECT_EQ(nbrma_notify_counters_waiting(w.c), 1u);
    EXPECT_FALSE(early_release_);
}

TEST(notify_counters, set_below_a_waiters_value_does_not_release_it)
{
    window w(1);
    w.arrive(0);
    w.arrive(0);
    ASSERT_EQ(w.wait(1, 0, 4), NBRMA_OK);
    nbrma_notify_counters_set(w.c, 0, 0);   // reset: further from the value
    EXPECT_TRUE(take_log().empty());
    EXPECT_EQ(nbrma_notify_counters_get(w.c, 0), 0);
    nbrma_notify_counters_set(w.c, 0, 3);
    EXPECT_TRUE(take_log().empty());
    w.arrive(0);
    EXPECT_EQ(take_log(), reached({1}));
    // a wait released stays released when the counter is set lower again
    nbrma_notify_counters_set(w.c, 0, 0);
    EXPECT_TRUE(take_log().empty());
    EXPECT_EQ(nbrma_notify_counters_waiting(w.c), 0u);
}

TEST(notify_counters, any_change_checks_every_counter_of_the_window)
{
    window w(3);
    ASSERT_EQ(w.wait(1, 0, 1), NBRMA_OK);
    ASSERT_EQ(w.wait(2, 2, 2), NBRMA_OK);
    // a peer's UCX atomic: the memory changes, nobody is told
    __atomic_fetch_add(&w.values[0], 1, __ATOMIC_ACQ_REL);
    __atomic_fetch_add(&w.values[2], 2, __ATOMIC_ACQ_REL);
    EXPECT_TRUE(take_log().empty());
    w.arrive(1);                            // another counter of the window
    EXPECT_EQ(take_log(), reached({1, 2}));
}

TEST(notify_counters, a_poll_catches_silent_changes_on_every_window)
{
    nbrma_notify_table t{};
    int64_t a[1] = {0}, b[1] = {0};
    int win_a = 0, win_b = 0;
    nbrma_notify_counters *ca, *cb;
    ASSERT_EQ(nbrma_notify_table_add(&t, &win_a, 1, a, nullptr, release, &ca), NBRMA_OK);
    ASSERT_EQ(nbrma_notify_table_add(&t, &win_b, 1, b, nullptr, release, &cb), NBRMA_OK);
    log_.clear();
    waiter wa{1, &a[0], 1}, wb{2, &b[0], 1}, wb2{3, &b[0], 2};
    ASSERT_EQ(nbrma_notify_counters_wait(ca, 0, 1, &wa), NBRMA_OK);
    ASSERT_EQ(nbrma_notify_counters_wait(cb, 0, 1, &wb), NBRMA_OK);
    ASSERT_EQ(nbrma_notify_counters_wait(cb, 0, 2, &wb2), NBRMA_OK);
    EXPECT_TRUE(nbrma_notify_table_poll(&t));
    EXPECT_TRUE(take_log().empty());
    __atomic_fetch_add(&a[0], 1, __ATOMIC_ACQ_REL);
    __atomic_fetch_add(&b[0], 1, __ATOMIC_ACQ_REL);
    EXPECT_TRUE(nbrma_notify_table_poll(&t));      // wb2 still waits
    auto got = take_log();
    std::sort(got.begin(), got.end(), [](auto &x, auto &y) { return x.id < y.id; });
    EXPECT_EQ(got, reached({1, 2}));
    // an arrival on one window releases nothing on another
    __atomic_fetch_add(&b[0], 1, __ATOMIC_ACQ_REL);
    EXPECT_TRUE(nbrma_notify_table_arrived(&t, &win_a, 0));
    EXPECT_TRUE(take_log().empty());
    EXPECT_FALSE(nbrma_notify_table_poll(&t));
    EXPECT_EQ(take_log(), reached({3}));
    EXPECT_FALSE(early_release_);
    nbrma_notify_table_remove(&t, ca);
    nbrma_notify_table_remove(&t, cb);
}

TEST(notify_counters, waiters_of_freed_counters_are_released_as_freed_in_order)
{
    auto w = std::make_unique<window>(2);
    ASSERT_EQ(w->wait(1, 0, 5), NBRMA_OK);
    ASSERT_EQ(w->wait(2, 1, 1), NBRMA_OK);
    ASSERT_EQ(w->wait(3, 0, 2), NBRMA_OK);
    w->arrive(1);
    EXPECT_EQ(take_log(), reached({2}));
    nbrma_notify_table_remove(&w->table, w->c);
    EXPECT_EQ(take_log(), (std::vector<released>{{1, true}, {3, true}}));
    EXPECT_EQ(nbrma_notify_table_find(&w->table, w.get()), nullptr);
    // an increment that comes after the counters went is dropped
    EXPECT_FALSE(w->arrive(0));
    EXPECT_EQ(w->values[0], 0);
    w->c = nullptr;
}

TEST(notify_counters, arrivals_and_peers_atomics_together_lose_no_increment)
{
    window w(1);
    constexpr int each = 100000;
    std::thread peer([&] {
        for (int i = 0; i < each; i++)
            __atomic_fetch_add(&w.values[0], 1, __ATOMIC_ACQ_REL);
    });
    for (int i = 0; i < each; i++)
        w.arrive(0);
    peer.join();
    EXPECT_EQ(nbrma_notify_counters_get(w.c, 0), 2 * each);
}

// The plain model: per window its values and its waits in the order made; a
// check releases, in that order, those whose counter holds their value.
TEST(notify_counters, random_programs_agree_with_a_plain_model)
{
    constexpr int n_windows = 3, n_counters = 3;
    for (unsigned seed = 0; seed < 500; seed++) {
        std::mt19937 rng(seed);
        nbrma_notify_table t{};
        // memory the counters keep for the program's length (a window freed
        // and made again gets a fresh block)
        std::deque<std::vector<int64_t>> memory;
        std::deque<waiter> waiters;
        int keys[n_windows] = {};
        struct mw {
            nbrma_notify_counters *c = nullptr;
            int64_t *mem = nullptr;
            std::vector<int64_t> values;
            std::vector<std::pair<int, const waiter *>> waits;   // (idx, waiter)
        } m[n_windows];
        std::vector<int> order;                 // the table's order: newest first
        std::vector<released> expect;
        int next_id = 0;
        log_.clear();
        early_release_ = false;

        auto make = [&](int k) {
            memory.emplace_back(n_counters, 0);
            m[k].mem = memory.back().data();
            m[k].values.assign(n_counters, 0);
            m[k].waits.clear();
            ASSERT_EQ(nbrma_notify_table_add(&t, &keys[k], n_counters, m[k].mem, nullptr,
                                             release, &m[k].c), NBRMA_OK);
            order.insert(order.begin(), k);
        };
        auto check = [&](int k) {
            std::vector<std::pair<int, const waiter *>> kept;
            for (auto &[idx, w] : m[k].waits) {
                if (m[k].values[static_cast<size_t>(idx)] >= w->value)
                    expect.push_back({w->id, false});
                else
                    kept.emplace_back(idx, w);
            }
            m[k].waits = kept;
        };
        for (int k = 0; k < n_windows; k++)
            make(k);
        for (int step = 0; step < 300; step++) {
            int k = static_cast<int>(rng() % n_windows);
            int idx = static_cast<int>(rng() % (n_counters + 1)) - (rng() % 8 == 0);
            bool in = idx >= 0 && idx < n_counters;
            switch (rng() % 7) {
                case 0:
                case 1: {                       // MPIX_Win_notify_request
                    int64_t value = static_cast<int64_t>(rng() % 8) - 1;
                    waiters.push_back({next_id++, in ? &m[k].mem[idx] : nullptr, value});
                    int rc = nbrma_notify_counters_wait(m[k].c, idx, value, &waiters.back());
                    ASSERT_EQ(rc, in ? NBRMA_OK : NBRMA_ERR_ARG);
                    if (in) {
                        m[k].waits.emplace_back(idx, &waiters.back());
                        check(k);
                    }
                    break;
                }
                case 2: {                       // an increment arrives
                    ASSERT_EQ(nbrma_notify_table_arrived(&t, &keys[k], idx), in);
                    if (in) {
                        m[k].values[static_cast<size_t>(idx)]++;
                        check(k);
                    }
                    break;
                }
                case 3:                         // MPIX_Win_set_notify
                    if (in) {
                        int64_t value = static_cast<int64_t>(rng() % 6);
                        nbrma_notify_counters_set(m[k].c, idx, value);
                        m[k].values[static_cast<size_t>(idx)] = value;
                        check(k);
                    }
                    break;
                case 4:                         // a peer's UCX atomic: nobody told
                    if (in) {
                        __atomic_fetch_add(&m[k].mem[idx], 1, __ATOMIC_ACQ_REL);
                        m[k].values[static_cast<size_t>(idx)]++;
                    }
                    break;
                case 5: {                       // the ledger's poll
                    for (int j : order)
                        check(j);
                    bool again = false;
                    for (auto &x : m)
                        again = again || !x.waits.empty();
                    ASSERT_EQ(nbrma_notify_table_poll(&t), again);
                    break;
                }
                default:                        // now and then the counters go and come back
                    if (rng() % 8 == 0) {
                        for (auto &wt : m[k].waits)
                            expect.push_back({wt.second->id, true});
                        nbrma_notify_table_remove(&t, m[k].c);
                        order.erase(std::find(order.begin(), order.end(), k));
                        make(k);
                    }
                    break;
            }
            ASSERT_EQ(take_log(), expect) << "seed " << seed << " step " << step;
            expect.clear();
            ASSERT_FALSE(early_release_) << "seed " << seed << " step " << step;
            for (int j = 0; j < n_windows; j++) {
                ASSERT_EQ(nbrma_notify_counters_waiting(m[j].c), m[j].waits.size());
                for (int i = 0; i < n_counters; i++)
                    ASSERT_EQ(nbrma_notify_counters_get(m[j].c, i), m[j].values[i])
                        << "seed " << seed << " step " << step;
            }
        }
        // N4 for whatever still waits; then nothing waits anywhere
        for (int k = 0; k < n_windows; k++) {
            for (auto &wt : m[k].waits)
                expect.push_back({wt.second->id, true});
            nbrma_notify_table_remove(&t, m[k].c);
        }
        ASSERT_EQ(take_log(), expect) << "seed " << seed;
        ASSERT_EQ(t.first, nullptr);
    }
}

} // namespace
