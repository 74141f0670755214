// The completion ledger's lists (core/include/nbrma_ledger_flights.h)
// without MPI: rules F1-F5 one by one, with their edges (growth, the kept
// open list, out-of-order finishes, errors), then random programs driven as
// ledger_gather.c, _adapter.c and _wait.c drive the core and checked step by
// step against plain models of the glue's former arrays and task list.

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <vector>

#include "nbrma_core.h"
#include "nbrma_ledger.h"
#include "nbrma_ledger_flights.h"

namespace {

struct ledger_ptr {
    nbrma_ledger *l = nbrma_ledger_create();
    ~ledger_ptr() { nbrma_ledger_destroy(l); }
};

void *handle(uintptr_t h) { return reinterpret_cast<void *>(h); }

struct lists {
    nbrma_flights flights{};
    nbrma_open_flushes open{};
    ~lists()
    {
        std::free(flights.v);
        nbrma_open_flushes_release(&open);
    }
    void add(nbrma_peer_key peer, uint64_t seq, uintptr_t h, int vni)
    {
        ASSERT_EQ(nbrma_flights_reserve(&flights, &open), NBRMA_OK);
        nbrma_flights_add(&flights, &open, peer, seq, handle(h), vni);
    }
};

} // namespace

TEST(LedgerFlights, ReserveGrowsBothFromSixteenAndFourDoubling)
{
    lists s;
    EXPECT_FALSE(nbrma_flights_vni(&s.flights, nullptr));
    for (int i = 0; i < 40; i++) {
        s.add(7, i + 1, 100 + i, 3);
        EXPECT_GE(s.flights.cap, s.flights.n);
        EXPECT_GE(s.open.cap, s.open.n);
    }
    EXPECT_EQ(s.flights.cap, 64u);     // 16, 32, 64
    EXPECT_EQ(s.open.cap, 64u);        // 4 (or a kept list), ..., 64
    EXPECT_EQ(s.flights.n, 40u);
    EXPECT_EQ(s.open.n, 40u);
    for (size_t i = 0; i < 40; i++) {
        EXPECT_EQ(s.flights.v[i].seq, i + 1);
        EXPECT_EQ(s.flights.v[i].handle, handle(100 + i));
        EXPECT_EQ(s.open.v[i].peer, 7u);
        EXPECT_EQ(s.open.v[i].seq, i + 1);
    }
}

TEST(LedgerFlights, ReserveIsFreeWhileBothHaveRoom)
{
    lists s;
    s.add(1, 1, 1, 0);
    nbrma_flight *v = s.flights.v;
    size_t cap = s.flights.cap;
    EXPECT_EQ(nbrma_flights_reserve(&s.flights, &s.open), NBRMA_OK);
    EXPECT_EQ(s.flights.v, v);
    EXPECT_EQ(s.flights.cap, cap);
    // a second wait's open list is empty: only it grows
    nbrma_open_flushes other{};
    ASSERT_EQ(nbrma_flights_reserve(&s.flights, &other), NBRMA_OK);
    EXPECT_EQ(s.flights.cap, cap);
    EXPECT_GE(other.cap, 1u);
    nbrma_open_flushes_release(&other);
    EXPECT_EQ(other.v, nullptr);
    EXPECT_EQ(other.n, 0u);
    EXPECT_EQ(other.cap, 0u);
}

TEST(LedgerFlights, RemoveTakesTheLastIntoItsPlace)
{
    lists s;
    for (int i = 0; i < 5; i++)
        s.add(10 + i, 1, 20 + i, i);
    int vni = -1;
    ASSERT_TRUE(nbrma_flights_vni(&s.flights, &vni));
    EXPECT_EQ(vni, 0);
    nbrma_flights_remove(&s.flights, 0);        // the last (peer 14) comes first
    ASSERT_EQ(s.flights.n, 4u);
    EXPECT_EQ(s.flights.v[0].peer, 14u);
    ASSERT_TRUE(nbrma_flights_vni(&s.flights, &vni));
    EXPECT_EQ(vni, 4);
    nbrma_flights_remove(&s.flights, 3);        // the last removes itself
    ASSERT_EQ(s.flights.n, 3u);
    EXPECT_EQ(s.flights.v[2].peer, 12u);
    while (s.flights.n)
        nbrma_flights_remove(&s.flights, 0);
    EXPECT_FALSE(nbrma_flights_vni(&s.flights, &vni));
    EXPECT_EQ(s.open.n, 5u);    // a wait's list is its own
}

TEST(LedgerFlights, TheLastSmallOpenListIsKeptForTheNextWait)
{
    nbrma_flights flights{};
    nbrma_open_flushes x{}, y{}, z{}, big{};
    ASSERT_EQ(nbrma_flights_reserve(&flights, &x), NBRMA_OK);   // takes a list kept earlier, if any
    ASSERT_EQ(nbrma_flights_reserve(&flights, &y), NBRMA_OK);   // none kept now: allocates
    nbrma_open_flush *yv = y.v;
    size_t ycap = y.cap;
    nbrma_open_flushes_release(&y);                             // kept
    ASSERT_EQ(nbrma_flights_reserve(&flights, &z), NBRMA_OK);
    EXPECT_EQ(z.v, yv);
    EXPECT_EQ(z.cap, ycap);
    nbrma_open_flushes_release(&x);                             // kept (none was)
    nbrma_open_flushes_release(&z);                             // one is: freed
    // more than 16 entries of room: freed, never kept
    for (int i = 0; i < 17; i++) {
        ASSERT_EQ(nbrma_flights_reserve(&flights, &big), NBRMA_OK);
        nbrma_flights_add(&flights, &big, 1, i + 1, nullptr, 0);
    }
    EXPECT_GT(big.cap, 16u);
    nbrma_open_flush *bigv = big.v;
    nbrma_open_flushes_release(&big);
    nbrma_open_flushes w{};
    ASSERT_EQ(nbrma_flights_reserve(&flights, &w), NBRMA_OK);
    EXPECT_NE(w.v, bigv);
    EXPECT_LE(w.cap, 16u);
    nbrma_open_flushes_release(&w);
    std::free(flights.v);
}

TEST(LedgerFlights, OpenFlushesFinishNewestFirstWithTheFirstError)
{
    ledger_ptr l;
    lists s;
    uint64_t a1, a2, b1;
    ASSERT_TRUE(nbrma_ledger_start_flush(l.l, 1, &a1));
    ASSERT_TRUE(nbrma_ledger_start_flush(l.l, 2, &b1));
    ASSERT_TRUE(nbrma_ledger_start_flush(l.l, 1, &a2));
    s.add(1, a1, 1, 0);
    s.add(2, b1, 2, 0);
    s.add(1, a2, 3, 0);
    int error = 0;
    EXPECT_FALSE(nbrma_open_flushes_finished(l.l, &s.open, &error));
    EXPECT_EQ(s.open.n, 3u);
    // a2 finishing covers a1 too (out of order); b1 still open
    nbrma_ledger_flush_finished(l.l, 1, a2, 0);
    EXPECT_FALSE(nbrma_open_flushes_finished(l.l, &s.open, &error));
    EXPECT_EQ(s.open.n, 2u);    // the newest left; b1 blocks a1
    EXPECT_EQ(error, 0);
    nbrma_ledger_flush_finished(l.l, 2, b1, 55);
    EXPECT_TRUE(nbrma_open_flushes_finished(l.l, &s.open, &error));
    EXPECT_EQ(s.open.n, 0u);
    EXPECT_EQ(error, 55);
    // an error already there wins; an empty list is finished at once
    error = 9;
    EXPECT_TRUE(nbrma_open_flushes_finished(nullptr, &s.open, &error));
    EXPECT_EQ(error, 9);
}

TEST(LedgerFlights, AFailedEndpointStaysFailedForLaterWaits)
{
    ledger_ptr l;
    lists s;
    uint64_t a1, a2;
    ASSERT_TRUE(nbrma_ledger_start_flush(l.l, 5, &a1));
    nbrma_ledger_flush_finished(l.l, 5, a1, 77);
    ASSERT_TRUE(nbrma_ledger_start_flush(l.l, 5, &a2));
    s.add(5, a2, 1, 0);
    nbrma_ledger_flush_finished(l.l, 5, a2, 0);
    int error = 0;
    EXPECT_TRUE(nbrma_open_flushes_finished(l.l, &s.open, &error));
    EXPECT_EQ(error, 77);
}

TEST(LedgerFlights, OutsidePartsGrowFromTwoAndRemoveByTheLast)
{
    nbrma_outside_parts kept{}, p{};
    ASSERT_EQ(nbrma_outside_parts_add(&kept, nullptr, 0, false), NBRMA_OK);  // takes a kept list, if any
    for (int i = 0; i < 5; i++)
        ASSERT_EQ(nbrma_outside_parts_add(&p, i % 2 ? handle(i) : nullptr, i, i == 2), NBRMA_OK);
    EXPECT_EQ(p.cap, 8u);       // 2, 4, 8
    ASSERT_EQ(p.n, 5u);
    EXPECT_EQ(p.v[2].req, nullptr);
    EXPECT_EQ(p.v[2].rank, 2);
    EXPECT_TRUE(p.v[2].local);
    EXPECT_EQ(p.v[3].req, handle(3));
    nbrma_outside_parts_remove(&p, 1);
    ASSERT_EQ(p.n, 4u);
    EXPECT_EQ(p.v[1].rank, 4);
    nbrma_outside_parts_free(&p);
    EXPECT_EQ(p.v, nullptr);
    EXPECT_EQ(p.n, 0u);
    EXPECT_EQ(p.cap, 0u);
    nbrma_outside_parts_free(&p);      // twice is harmless
    nbrma_outside_parts_free(&kept);
}

TEST(LedgerFlights, TheLastSmallPartsListIsKeptForTheNextWait)
{
    nbrma_outside_parts x{}, y{}, z{}, big{};
    ASSERT_EQ(nbrma_outside_parts_add(&x, nullptr, 0, false), NBRMA_OK);  // takes a kept list, if any
    ASSERT_EQ(nbrma_outside_parts_add(&y, nullptr, 1, false), NBRMA_OK);  // none kept now: allocates
    nbrma_outside_part *yv = y.v;
    size_t ycap = y.cap;
    nbrma_outside_parts_free(&y);                                         // kept
    EXPECT_EQ(y.v, nullptr);
    EXPECT_EQ(y.n, 0u);
    ASSERT_EQ(nbrma_outside_parts_add(&z, handle(7), 2, true), NBRMA_OK);
    EXPECT_EQ(z.v, yv);
    EXPECT_EQ(z.cap, ycap);
    ASSERT_EQ(z.n, 1u);
    EXPECT_EQ(z.v[0].req, handle(7));
    EXPECT_EQ(z.v[0].rank, 2);
    EXPECT_TRUE(z.v[0].local);
    nbrma_outside_parts_free(&x);                                         // kept (none was)
    nbrma_outside_parts_free(&z);                                         // one is: freed
    // more than 16 entries of room: freed, never kept
    for (int i = 0; i < 17; i++)
        ASSERT_EQ(nbrma_outside_parts_add(&big, nullptr, i, false), NBRMA_OK);
    EXPECT_GT(big.cap, 16u);
    nbrma_outside_part *bigv = big.v;
    nbrma_outside_parts_free(&big);
    nbrma_outside_parts w{};
    ASSERT_EQ(nbrma_outside_parts_add(&w, nullptr, 0, false), NBRMA_OK);
    EXPECT_NE(w.v, bigv);
    EXPECT_LE(w.cap, 16u);
    nbrma_outside_parts_free(&w);
}

// --- F5 ---------------------------------------------------------------------

namespace {

struct task_rig {
    struct item {
        nbrma_ledger_task task{};
        int id = 0;
        int again_left = 0;     // runs that ask for the next poll too
        int error = 0;
        nbrma_ledger_task *also_list = nullptr;  // listed from inside its run
    };
    static task_rig *self;
    nbrma_ledger_task *tasks = nullptr;
    std::vector<int> ran;
    std::vector<int> errors;
    item items[6];

    task_rig()
    {
        self = this;
        for (int i = 0; i < 6; i++)
            items[i].id = i;
    }
    static item *of(nbrma_ledger_task *t)
    {
        return reinterpret_cast<item *>(reinterpret_cast<char *>(t) - offsetof(item, task));
    }
    static int run(nbrma_ledger_task *t, bool *again)
    {
        item *it = of(t);
        self->ran.push_back(it->id);
        if (it->also_list)
            nbrma_ledger_tasks_add(&self->tasks, it->also_list, nullptr, run);
        if (it->again_left > 0) {
            it->again_left--;
            *again = true;
        }
        return it->error;
    }
    static void keep(int error) { self->errors.push_back(error); }
    bool add(int i, void *owner = nullptr)
    {
        return nbrma_ledger_tasks_add(&tasks, &items[i].task, owner, run);
    }
    void poll() { nbrma_ledger_tasks_run(&tasks, keep); }
};
task_rig *task_rig::self;

} // namespace

TEST(LedgerTasks, ListedOnceNewestFirstAndUnlistedWhenDone)
{
    task_rig r;
    void *win = handle(42);
    EXPECT_TRUE(r.add(0));
    EXPECT_TRUE(r.add(1, win));
    EXPECT_FALSE(r.add(1));     // listed already: owner unchanged
    EXPECT_TRUE(nbrma_ledger_tasks_of(r.tasks, win));
    EXPECT_FALSE(nbrma_ledger_tasks_of(r.tasks, handle(43)));
    r.poll();
    EXPECT_EQ(r.ran, (std::vector<int>{1, 0}));
    EXPECT_EQ(r.tasks, nullptr);
    EXPECT_FALSE(r.items[0].task.listed);
    EXPECT_FALSE(nbrma_ledger_tasks_of(r.tasks, win));
    EXPECT_TRUE(r.add(0));      // may be listed again
}

TEST(LedgerTasks, AgainRunsAtTheNextPollAndListedDuringARunWaits)
{
    task_rig r;
    r.items[0].again_left = 2;
    r.items[1].also_list = &r.items[2].task;
    r.items[1].error = 7;
    r.items[0].error = 8;
    r.add(0);
    r.add(1);
    r.poll();
    EXPECT_EQ(r.ran, (std::vector<int>{1, 0}));
    EXPECT_EQ(r.errors, (std::vector<int>{7, 8}));
    r.ran.clear();
    r.items[1].also_list = nullptr;
    r.poll();                   // 2 (listed by 1's run) and 0 again
    EXPECT_EQ(r.ran, (std::vector<int>{0, 2}));
    r.ran.clear();
    r.poll();
    EXPECT_EQ(r.ran, (std::vector<int>{0}));
    r.ran.clear();
    r.poll();
    EXPECT_TRUE(r.ran.empty());
    EXPECT_FALSE(r.items[0].task.listed);
}

// The glue's former task list (ledger_adapter.c before the move), verbatim
// but for its types.
namespace {
struct old_task {
    bool listed = false;
    old_task *next = nullptr;
    int id = 0;
};
}

TEST(LedgerTasks, RandomProgramsMatchTheFormerList)
{
    std::mt19937 rng(32);
    for (int program = 0; program < 300; program++) {
        task_rig r;
        old_task olds[6];
        old_task *old_list = nullptr;
        int again_plan[6] = {};
        for (int i = 0; i < 6; i++)
            olds[i].id = i;
        std::vector<int> old_ran;
        for (int step = 0; step < 40; step++) {
            int i = static_cast<int>(rng() % 6);
            if (rng() % 3 != 0) {       // list i (each_poll)
                bool was = olds[i].listed;
                if (!was) {
                    olds[i].listed = true;
                    olds[i].next = old_list;
                    old_list = &olds[i];
                }
                ASSERT_EQ(r.add(i), !was);
                continue;
            }
            // a poll: every task asks again with the plan's count
            for (int k = 0; k < 6; k++) {
                again_plan[k] = static_cast<int>(rng() % 2);
                r.items[k].again_left = again_plan[k];
            }
            old_ran.clear();
            old_task *t = old_list;
            old_list = nullptr;
            while (t) {
                old_task *next = t->next;
                bool again = again_plan[t->id] > 0;
                old_ran.push_back(t->id);
                if (again) {
                    t->next = old_list;
                    old_list = t;
                } else {
                    t->listed = false;
                }
                t = next;
            }
            r.ran.clear();
            r.poll();
            ASSERT_EQ(r.ran, old_ran) << "program " << program << " step " << step;
            std::vector<int> now, old_now;
            for (nbrma_ledger_task *c = r.tasks; c; c = c->next)
                now.push_back(task_rig::of(c)->id);
            for (old_task *c = old_list; c; c = c->next)
                old_now.push_back(c->id);
            ASSERT_EQ(now, old_now);
        }
    }
}

// F1/F3/F4 against plain vectors with the glue's former swap removal.
TEST(LedgerFlights, RandomProgramsMatchTheFormerArrays)
{
    std::mt19937 rng(9800);
    for (int program = 0; program < 200; program++) {
        ledger_ptr l;
        nbrma_flights flights{};
        nbrma_open_flushes open{};
        nbrma_outside_parts parts{};
        struct fl { nbrma_peer_key peer; uint64_t seq; uintptr_t h; int vni; };
        std::vector<fl> model;
        std::vector<nbrma_outside_part> model_parts;
        std::vector<std::pair<nbrma_peer_key, uint64_t>> model_open;
        int model_error = 0, error = 0;
        uintptr_t next_h = 1;
        for (int step = 0; step < 120; step++) {
            unsigned what = rng() % 5;
            if (what == 0 || what == 1) {       // a flush starts, stays in flight
                nbrma_peer_key peer = 1 + rng() % 4;
                uint64_t seq;
                ASSERT_TRUE(nbrma_ledger_start_flush(l.l, peer, &seq));
                ASSERT_EQ(nbrma_flights_reserve(&flights, &open), NBRMA_OK);
                int vni = static_cast<int>(rng() % 2);
                nbrma_flights_add(&flights, &open, peer, seq, handle(next_h), vni);
                model.push_back({peer, seq, next_h++, vni});
                model_open.emplace_back(peer, seq);
            } else if (what == 2 && !model.empty()) {   // the poller sees some finished
                for (size_t i = 0; i < flights.n;) {
                    if (rng() % 2) {
                        i++;
                        continue;
                    }
                    int err = rng() % 8 == 0 ? 3 + static_cast<int>(rng() % 3) : 0;
                    nbrma_ledger_flush_finished(l.l, flights.v[i].peer, flights.v[i].seq, err);
                    nbrma_flights_remove(&flights, i);
                    model[i] = model.back();
                    model.pop_back();
                }
            } else if (what == 3) {     // an outside part, or one found done
                if (rng() % 2 || model_parts.empty()) {
                    void *req = rng() % 2 ? handle(next_h++) : nullptr;
                    int rank = static_cast<int>(rng() % 8);
                    ASSERT_EQ(nbrma_outside_parts_add(&parts, req, rank, rank % 2), NBRMA_OK);
                    model_parts.push_back({req, rank, rank % 2 != 0});
                } else {
                    size_t i = rng() % model_parts.size();
                    nbrma_outside_parts_remove(&parts, i);
                    model_parts[i] = model_parts.back();
                    model_parts.pop_back();
                }
            } else {                    // the wait looks at its open flushes
                bool done = nbrma_open_flushes_finished(l.l, &open, &error);
                bool model_done = true;
                while (!model_open.empty()) {
                    auto [peer, seq] = model_open.back();
                    int e;
                    if (!nbrma_ledger_flush_done(l.l, peer, seq, &e)) {
                        model_done = false;
                        break;
                    }
                    if (model_error == 0)
                        model_error = e;
                    model_open.pop_back();
                }
                ASSERT_EQ(done, model_done);
                ASSERT_EQ(error, model_error);
            }
            ASSERT_EQ(flights.n, model.size());
            for (size_t i = 0; i < model.size(); i++) {
                ASSERT_EQ(flights.v[i].peer, model[i].peer);
                ASSERT_EQ(flights.v[i].seq, model[i].seq);
                ASSERT_EQ(flights.v[i].handle, handle(model[i].h));
                ASSERT_EQ(flights.v[i].vni, model[i].vni);
            }
            int vni;
            ASSERT_EQ(nbrma_flights_vni(&flights, &vni), !model.empty());
            if (!model.empty()) {
                ASSERT_EQ(vni, model[0].vni);
            }
            ASSERT_EQ(open.n, model_open.size());
            for (size_t i = 0; i < model_open.size(); i++) {
                ASSERT_EQ(open.v[i].peer, model_open[i].first);
                ASSERT_EQ(open.v[i].seq, model_open[i].second);
            }
            ASSERT_EQ(parts.n, model_parts.size());
            for (size_t i = 0; i < model_parts.size(); i++) {
                ASSERT_EQ(parts.v[i].req, model_parts[i].req);
                ASSERT_EQ(parts.v[i].rank, model_parts[i].rank);
                ASSERT_EQ(parts.v[i].local, model_parts[i].local);
            }
        }
        std::free(flights.v);
        nbrma_open_flushes_release(&open);
        nbrma_outside_parts_free(&parts);
    }
}
