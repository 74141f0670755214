// The waits registered with the completion ledger
// (core/include/nbrma_ledger_waits.h) without MPI: rules W1-W5 with their
// edges (a wait released at arming, errors, parts taken over, entries
// reused newest first, a release in the middle of the list), then random
// programs driven as ledger_adapter.c drives the core, checked step by step
// against a model of the glue's former list (link_wait, unlink_wait,
// free_waiting, register_open, forget_arg, has_waits) on a ledger of its own.

#include <gtest/gtest.h>

#include <cstdint>
#include <map>
#include <random>
#include <vector>

#include "nbrma_core.h"
#include "nbrma_ledger.h"
#include "nbrma_ledger_flights.h"
#include "nbrma_ledger_waits.h"

namespace {

constexpr int kNoMem = 99;      // the glue's "no memory" code, in the tests

struct ledger_ptr {
    nbrma_ledger *l = nbrma_ledger_create();
    ~ledger_ptr() { nbrma_ledger_destroy(l); }
};

void *ptr(uintptr_t v) { return reinterpret_cast<void *>(v); }

// Entries live as long as the process; a test's registry frees them.
struct registry {
    nbrma_waits w{};
    ~registry()
    {
        for (nbrma_registered_wait *list : {w.head, w.spare})
            while (list) {
                nbrma_registered_wait *next = list->next;
                nbrma_outside_parts_free(&list->parts);
                std::free(list);
                list = next;
            }
    }
};

int done_fn(void *, int) { return 0; }

std::vector<void *> owners(const nbrma_waits &w)
{
    std::vector<void *> v;
    for (nbrma_registered_wait *e = w.head; e; e = e->next) {
        if (e->next) {
            EXPECT_EQ(e->next->prev, e);
        }
        v.push_back(e->owner);
    }
    if (w.head) {
        EXPECT_EQ(w.head->prev, nullptr);
    }
    return v;
}

TEST(LedgerWaits, EmptyRegistry)
{
    registry r;
    EXPECT_FALSE(nbrma_waits_any(&r.w));
    EXPECT_FALSE(nbrma_waits_of(&r.w, ptr(1)));
    nbrma_waits_forget_arg(&r.w, ptr(1));
    ledger_ptr l;
    nbrma_registered_wait *w;
    EXPECT_FALSE(nbrma_waits_next_released(&r.w, l.l, &w));
}

TEST(LedgerWaits, WithoutPartsReleasedAtArming)
{
    registry r;
    ledger_ptr l;
    nbrma_open_flushes open{};
    nbrma_outside_parts parts{};
    nbrma_registered_wait *e =
        nbrma_waits_register(&r.w, l.l, ptr(5), NBRMA_WAIT_CALLBACK, 0, &open, &parts, kNoMem);
    ASSERT_NE(e, nullptr);
    EXPECT_NE(e->id, 0u);
    EXPECT_EQ(e->owner, ptr(5));
    EXPECT_EQ(e->action, NBRMA_WAIT_CALLBACK);
    EXPECT_EQ(e->req, nullptr);
    EXPECT_EQ(e->done, nullptr);
    EXPECT_EQ(e->arg, nullptr);
    EXPECT_TRUE(nbrma_waits_any(&r.w));
    EXPECT_TRUE(nbrma_waits_of(&r.w, ptr(5)));
    EXPECT_FALSE(nbrma_waits_of(&r.w, ptr(6)));
    nbrma_registered_wait *w = nullptr;
    ASSERT_TRUE(nbrma_waits_next_released(&r.w, l.l, &w));
    EXPECT_EQ(w, e);
    EXPECT_EQ(w->error, 0);
    EXPECT_FALSE(nbrma_waits_any(&r.w));
    EXPECT_FALSE(nbrma_waits_next_released(&r.w, l.l, &w));
    nbrma_waits_free(&r.w, w);
    EXPECT_EQ(r.w.spare, e);
    EXPECT_EQ(nbrma_ledger_waiters(l.l), 0u);
}

TEST(LedgerWaits, WaitsForFlushesAndPartsTakenOver)
{
    registry r;
    ledger_ptr l;
    uint64_t s1, s2;
    ASSERT_TRUE(nbrma_ledger_start_flush(l.l, 11, &s1));
    ASSERT_TRUE(nbrma_ledger_start_flush(l.l, 12, &s2));
    nbrma_open_flush of[2] = {{11, s1}, {12, s2}};
    nbrma_open_flushes open{of, 2, 2};
    nbrma_outside_parts parts{};
    ASSERT_EQ(nbrma_outside_parts_add(&parts, ptr(77), 3, false), NBRMA_OK);
    nbrma_outside_part *v = parts.v;
    nbrma_registered_wait *e =
        nbrma_waits_register(&r.w, l.l, ptr(1), NBRMA_WAIT_REQUEST, 0, &open, &parts, kNoMem);
    ASSERT_NE(e, nullptr);
    EXPECT_EQ(parts.v, nullptr);
    EXPECT_EQ(parts.n, 0u);
    EXPECT_EQ(parts.cap, 0u);
    EXPECT_EQ(e->parts.v, v);
    EXPECT_EQ(e->parts.n, 1u);
    EXPECT_EQ(open.n, 2u);      // the open list stays the caller's
    nbrma_registered_wait *w;
    nbrma_ledger_flush_finished(l.l, 11, s1, 0);
    nbrma_ledger_outside_done(l.l, e->id, 0);
    EXPECT_FALSE(nbrma_waits_next_released(&r.w, l.l, &w));
    nbrma_ledger_flush_finished(l.l, 12, s2, 4);
    ASSERT_TRUE(nbrma_waits_next_released(&r.w, l.l, &w));
    EXPECT_EQ(w, e);
    EXPECT_EQ(w->error, 4);
    nbrma_waits_free(&r.w, w);
    EXPECT_EQ(w->parts.v, nullptr);
    EXPECT_EQ(w->parts.n, 0u);
}

// A listed wait (owner 1, a request's) of one flush of `peer` started now
// (*seq), with the wait's `error`; NULL without memory.
nbrma_registered_wait *wait_for_one_flush(registry &r, ledger_ptr &l, nbrma_peer_key peer,
                                          int error, uint64_t *seq)
{
    if (!nbrma_ledger_start_flush(l.l, peer, seq))
        return nullptr;
    nbrma_open_flush of[1] = {{peer, *seq}};
    nbrma_open_flushes open{of, 1, 1};
    nbrma_outside_parts parts{};
    return nbrma_waits_register(&r.w, l.l, ptr(1), NBRMA_WAIT_REQUEST, error, &open, &parts,
                                kNoMem);
}

TEST(LedgerWaits, WaitErrorWinsAndIsKeptWithoutParts)
{
    registry r;
    ledger_ptr l;
    uint64_t s;
    nbrma_registered_wait *e = wait_for_one_flush(r, l, 3, 8, &s);
    ASSERT_NE(e, nullptr);
    nbrma_registered_wait *w;
    EXPECT_FALSE(nbrma_waits_next_released(&r.w, l.l, &w));
    nbrma_ledger_flush_finished(l.l, 3, s, 2);
    ASSERT_TRUE(nbrma_waits_next_released(&r.w, l.l, &w));
    EXPECT_EQ(w->error, 8);
    nbrma_waits_free(&r.w, w);
}

TEST(LedgerWaits, AFlushFinishedBeforeIsNoPart)
{
    registry r;
    ledger_ptr l;
    uint64_t s;
    ASSERT_TRUE(nbrma_ledger_start_flush(l.l, 3, &s));
    nbrma_ledger_flush_finished(l.l, 3, s, 0);
    nbrma_open_flush of[1] = {{3, s}};
    nbrma_open_flushes open{of, 1, 1};
    nbrma_outside_parts parts{};
    nbrma_registered_wait *e =
        nbrma_waits_register(&r.w, l.l, ptr(1), NBRMA_WAIT_CALLBACK, 0, &open, &parts, kNoMem);
    ASSERT_NE(e, nullptr);
    nbrma_registered_wait *w;
    ASSERT_TRUE(nbrma_waits_next_released(&r.w, l.l, &w));
    EXPECT_EQ(w, e);
    EXPECT_EQ(w->error, 0);
    nbrma_waits_free(&r.w, w);
}

TEST(LedgerWaits, NewestFirstAndEntriesReusedNewestFirst)
{
    registry r;
    ledger_ptr l;
    nbrma_open_flushes open{};
    std::vector<nbrma_registered_wait *> e;
    uint64_t s;
    ASSERT_TRUE(nbrma_ledger_start_flush(l.l, 1, &s));
    nbrma_open_flush of[1] = {{1, s}};
    nbrma_open_flushes one{of, 1, 1};
    for (uintptr_t o = 1; o <= 3; o++) {
        nbrma_outside_parts parts{};
        e.push_back(nbrma_waits_register(&r.w, l.l, ptr(o), NBRMA_WAIT_CALLBACK, 0, &one, &parts,
                                         kNoMem));
        ASSERT_NE(e.back(), nullptr);
    }
    EXPECT_EQ(owners(r.w), (std::vector<void *>{ptr(3), ptr(2), ptr(1)}));
    nbrma_ledger_flush_finished(l.l, 1, s, 0);
    std::vector<nbrma_registered_wait *> released;
    nbrma_registered_wait *w;
    while (nbrma_waits_next_released(&r.w, l.l, &w))
        released.push_back(w);
    ASSERT_EQ(released.size(), 3u);
    EXPECT_FALSE(nbrma_waits_any(&r.w));
    for (nbrma_registered_wait *x : released)
        nbrma_waits_free(&r.w, x);
    // the last freed is the first reused, then a new one is allocated
    std::vector<nbrma_registered_wait *> again;
    for (size_t i = 0; i < 4; i++) {
        nbrma_outside_parts parts{};
        nbrma_registered_wait *x = nbrma_waits_register(&r.w, l.l, ptr(9), NBRMA_WAIT_REQUEST, 0,
                                                        &open, &parts, kNoMem);
        ASSERT_NE(x, nullptr);
        if (i < 3) {
            EXPECT_EQ(x, released[2 - i]);
        }
        EXPECT_EQ(x->action, NBRMA_WAIT_REQUEST);
        EXPECT_EQ(x->error, 0);
        again.push_back(x);
    }
    EXPECT_EQ(r.w.spare, nullptr);
    for (nbrma_registered_wait *x : released)
        EXPECT_NE(again[3], x);
    for (size_t i = 0; i < 4; i++) {    // released at arming, in that order
        ASSERT_TRUE(nbrma_waits_next_released(&r.w, l.l, &w));
        EXPECT_EQ(w, again[i]);
        nbrma_waits_free(&r.w, w);
    }
}

TEST(LedgerWaits, ReleaseInTheMiddleOfTheList)
{
    registry r;
    ledger_ptr l;
    nbrma_open_flushes open{};
    std::vector<nbrma_registered_wait *> e;
    for (uintptr_t o = 1; o <= 3; o++) {
        nbrma_outside_parts parts{};
        ASSERT_EQ(nbrma_outside_parts_add(&parts, nullptr, int(o), true), NBRMA_OK);
        e.push_back(nbrma_waits_register(&r.w, l.l, ptr(o), NBRMA_WAIT_CALLBACK, 0, &open, &parts,
                                         kNoMem));
    }
    nbrma_registered_wait *w;
    nbrma_ledger_outside_done(l.l, e[1]->id, 5);        // the middle one
    ASSERT_TRUE(nbrma_waits_next_released(&r.w, l.l, &w));
    EXPECT_EQ(w, e[1]);
    EXPECT_EQ(w->error, 5);
    nbrma_waits_free(&r.w, w);
    EXPECT_EQ(owners(r.w), (std::vector<void *>{ptr(3), ptr(1)}));
    nbrma_ledger_outside_done(l.l, e[2]->id, 0);        // the head
    ASSERT_TRUE(nbrma_waits_next_released(&r.w, l.l, &w));
    nbrma_waits_free(&r.w, w);
    EXPECT_EQ(owners(r.w), (std::vector<void *>{ptr(1)}));
    EXPECT_FALSE(nbrma_waits_of(&r.w, ptr(3)));
    EXPECT_TRUE(nbrma_waits_of(&r.w, ptr(1)));
    nbrma_ledger_outside_done(l.l, e[0]->id, 0);        // the last
    ASSERT_TRUE(nbrma_waits_next_released(&r.w, l.l, &w));
    nbrma_waits_free(&r.w, w);
    EXPECT_FALSE(nbrma_waits_any(&r.w));
}

TEST(LedgerWaits, ForgetArgTouchesOnlyCallbacksWithIt)
{
    registry r;
    ledger_ptr l;
    nbrma_open_flushes open{};
    nbrma_registered_wait *e[4];
    for (int i = 0; i < 4; i++) {
        nbrma_outside_parts parts{};
        ASSERT_EQ(nbrma_outside_parts_add(&parts, nullptr, i, true), NBRMA_OK);
        e[i] = nbrma_waits_register(&r.w, l.l, ptr(1),
                                    i == 3 ? NBRMA_WAIT_REQUEST : NBRMA_WAIT_CALLBACK, 0, &open,
                                    &parts, kNoMem);
        e[i]->done = done_fn;
        e[i]->arg = ptr(i == 1 ? 200 : 100);
    }
    nbrma_waits_forget_arg(&r.w, ptr(100));
    EXPECT_EQ(e[0]->action, NBRMA_WAIT_NOTHING);
    EXPECT_EQ(e[1]->action, NBRMA_WAIT_CALLBACK);
    EXPECT_EQ(e[2]->action, NBRMA_WAIT_NOTHING);
    EXPECT_EQ(e[3]->action, NBRMA_WAIT_REQUEST);
    nbrma_waits_forget_arg(&r.w, ptr(300));
    EXPECT_EQ(e[1]->action, NBRMA_WAIT_CALLBACK);
}

// --- random programs against a model of the glue's former list -------------

enum class action { request, callback, nothing };

struct model_wait {
    void *win;
    nbrma_waiter_id id;
    action act;
    void *arg;
    int error;
    size_t parts;
    int serial;                 // which allocation
    model_wait *prev, *next;
};

struct model {
    nbrma_ledger *ledger = nbrma_ledger_create();
    model_wait *waits = nullptr, *spare = nullptr;
    int allocated = 0;
    std::vector<model_wait *> all;
    ~model()
    {
        for (model_wait *w : all)
            delete w;
        nbrma_ledger_destroy(ledger);
    }

    static void link_wait(model_wait **list, model_wait *w)
    {
        w->prev = nullptr;
        w->next = *list;
        if (*list)
            (*list)->prev = w;
        *list = w;
    }
    static void unlink_wait(model_wait **list, model_wait *w)
    {
        if (w->prev)
            w->prev->next = w->next;
        else
            *list = w->next;
        if (w->next)
            w->next->prev = w->prev;
    }
    void free_waiting(model_wait *w)
    {
        w->parts = 0;
        w->next = spare;
        spare = w;
    }
    model_wait *register_open(void *win, action a, int error,
                              const std::vector<std::pair<nbrma_peer_key, uint64_t>> &open,
                              size_t parts)
    {
        model_wait *r = spare;
        if (r) {
            spare = r->next;
        } else {
            r = new model_wait{};
            r->serial = allocated++;
            all.push_back(r);
        }
        int serial = r->serial;
        *r = model_wait{};
        r->serial = serial;
        r->win = win;
        r->act = a;
        r->id = nbrma_ledger_waiter_new(ledger, r);
        if (r->id == 0) {
            free_waiting(r);
            return nullptr;
        }
        if (error)
            nbrma_ledger_waiter_error(ledger, r->id, error);
        for (auto &f : open)
            if (!nbrma_ledger_waiter_needs_flush(ledger, r->id, f.first, f.second))
                nbrma_ledger_waiter_error(ledger, r->id, kNoMem);
        r->parts = parts;
        for (size_t i = 0; i < parts; i++)
            nbrma_ledger_waiter_needs_outside(ledger, r->id);
        link_wait(&waits, r);
        nbrma_ledger_waiter_armed(ledger, r->id);
        return r;
    }
    bool next_released(model_wait **out)
    {
        void *cookie;
        int error;
        if (!nbrma_ledger_next_released(ledger, &cookie, &error))
            return false;
        model_wait *w = static_cast<model_wait *>(cookie);
        unlink_wait(&waits, w);
        w->error = error;
        *out = w;
        return true;
    }
    void forget_arg(void *arg)
    {
        for (model_wait *w = waits; w; w = w->next)
            if (w->act == action::callback && w->arg == arg)
                w->act = action::nothing;
    }
    bool has_waits(void *win)
    {
        for (model_wait *w = waits; w; w = w->next)
            if (w->win == win)
                return true;
        return false;
    }
};

action of(nbrma_wait_action a)
{
    return a == NBRMA_WAIT_REQUEST ? action::request
        : a == NBRMA_WAIT_CALLBACK ? action::callback : action::nothing;
}

// W5: the lists a flush that began is kept in.
struct in_flight {
    nbrma_flights flights{};
    nbrma_open_flushes open{};
    ~in_flight()
    {
        std::free(flights.v);
        nbrma_open_flushes_release(&open);
    }
};

TEST(LedgerWaits, WithoutEntriesAFlushFinishedAtOnceGetsNoNumber)
{
    registry r;
    ledger_ptr l, fresh;
    in_flight f;
    EXPECT_EQ(nbrma_waits_flush_began(&r.w, l.l, &f.flights, &f.open, 7, nullptr, 0, 3),
              NBRMA_OK);
    EXPECT_EQ(f.flights.n, 0u);
    EXPECT_EQ(f.open.n, 0u);
    uint64_t next, first;
    ASSERT_TRUE(nbrma_ledger_start_flush(l.l, 7, &next));
    ASSERT_TRUE(nbrma_ledger_start_flush(fresh.l, 7, &first));
    EXPECT_EQ(next, first);     // no number was taken
    int error = -1;
    EXPECT_FALSE(nbrma_ledger_flush_done(l.l, 7, next, &error));
}

TEST(LedgerWaits, AFlushInFlightIsNumberedAndKeptInBothLists)
{
    registry r;
    ledger_ptr l;
    in_flight f;
    ASSERT_EQ(nbrma_waits_flush_began(&r.w, l.l, &f.flights, &f.open, 7, ptr(9), 2, 0),
              NBRMA_OK);
    ASSERT_EQ(f.flights.n, 1u);
    ASSERT_EQ(f.open.n, 1u);
    EXPECT_EQ(f.flights.v[0].peer, 7u);
    EXPECT_EQ(f.flights.v[0].handle, ptr(9));
    EXPECT_EQ(f.flights.v[0].vni, 2);
    EXPECT_EQ(f.open.v[0].peer, 7u);
    EXPECT_EQ(f.open.v[0].seq, f.flights.v[0].seq);
    int error = -1;
    EXPECT_FALSE(nbrma_ledger_flush_done(l.l, 7, f.open.v[0].seq, &error));
    nbrma_ledger_flush_finished(l.l, 7, f.open.v[0].seq, 0);
    EXPECT_TRUE(nbrma_ledger_flush_done(l.l, 7, f.open.v[0].seq, &error));
    EXPECT_EQ(error, 0);
}

TEST(LedgerWaits, WhileEntriesAreListedAFlushFinishedAtOnceReleasesWithItsError)
{
    registry r;
    ledger_ptr l;
    in_flight f;
    uint64_t s1;
    nbrma_registered_wait *e = wait_for_one_flush(r, l, 11, 0, &s1);
    ASSERT_NE(e, nullptr);
    nbrma_registered_wait *w;
    EXPECT_FALSE(nbrma_waits_next_released(&r.w, l.l, &w));
    // a later flush of the same endpoint covers s1: it finished, failed
    EXPECT_EQ(nbrma_waits_flush_began(&r.w, l.l, &f.flights, &f.open, 11, nullptr, 0, 6),
              NBRMA_OK);
    EXPECT_EQ(f.flights.n, 0u);
    EXPECT_EQ(f.open.n, 0u);
    ASSERT_TRUE(nbrma_waits_next_released(&r.w, l.l, &w));
    EXPECT_EQ(w, e);
    EXPECT_EQ(w->error, 6);
    nbrma_waits_free(&r.w, w);
}

TEST(LedgerWaits, RandomProgramsMatchTheGlueModel)
{
    for (unsigned seed = 1; seed <= 200; seed++) {
        SCOPED_TRACE(seed);
        std::mt19937 rng(seed);
        auto pick = [&](int n) { return int(rng() % unsigned(n)); };
        registry r;
        ledger_ptr l;
        model m;
        std::map<const nbrma_registered_wait *, int> serial;   // core entry -> allocation
        std::map<const model_wait *, nbrma_registered_wait *> twin;
        std::vector<std::pair<nbrma_peer_key, uint64_t>> in_flight;
        int released = 0, reused = 0;

        auto check_lists = [&]() {
            model_wait *mw = m.waits;
            for (nbrma_registered_wait *w = r.w.head; w; w = w->next, mw = mw->next) {
                ASSERT_NE(mw, nullptr);
                ASSERT_EQ(twin[mw], w);
                EXPECT_EQ(w->owner, mw->win);
                EXPECT_EQ(w->id, mw->id);
                EXPECT_EQ(of(w->action), mw->act);
                EXPECT_EQ(w->parts.n, mw->parts);
                EXPECT_EQ(serial.at(w), mw->serial);
            }
            EXPECT_EQ(mw, nullptr);
            EXPECT_EQ(nbrma_waits_any(&r.w), m.waits != nullptr);
            EXPECT_EQ(nbrma_ledger_waiters(l.l), nbrma_ledger_waiters(m.ledger));
        };

        for (int step = 0; step < 300; step++) {
            int op = pick(10);
            if (op < 3) {       // register a wait that stays open
                void *win = ptr(1 + pick(4));
                nbrma_wait_action a = pick(2) ? NBRMA_WAIT_REQUEST : NBRMA_WAIT_CALLBACK;
                int error = pick(5) == 0 ? 1 + pick(3) : 0;
                std::vector<nbrma_open_flush> of_core;
                std::vector<std::pair<nbrma_peer_key, uint64_t>> of_model;
                for (int i = pick(3); i > 0; i--) {
                    nbrma_peer_key peer = 1 + pick(3);
                    uint64_t s1, s2;
                    ASSERT_TRUE(nbrma_ledger_start_flush(l.l, peer, &s1));
                    ASSERT_TRUE(nbrma_ledger_start_flush(m.ledger, peer, &s2));
                    ASSERT_EQ(s1, s2);
                    of_core.push_back({peer, s1});
                    of_model.push_back({peer, s1});
                    in_flight.push_back({peer, s1});
                }
                size_t nparts = size_t(pick(3));
                nbrma_outside_parts parts{};
                for (size_t i = 0; i < nparts; i++)
                    ASSERT_EQ(nbrma_outside_parts_add(&parts, nullptr, int(i), true), NBRMA_OK);
                nbrma_open_flushes open{of_core.data(), of_core.size(), of_core.size()};
                nbrma_registered_wait *spare_before = r.w.spare;
                nbrma_registered_wait *e =
                    nbrma_waits_register(&r.w, l.l, win, a, error, &open, &parts, kNoMem);
                model_wait *me = m.register_open(win, of(a), error, of_model, nparts);
                ASSERT_NE(e, nullptr);
                ASSERT_NE(me, nullptr);
                EXPECT_EQ(parts.n, 0u);
                if (spare_before) {
                    EXPECT_EQ(e, spare_before);
                    reused++;
                } else {
                    EXPECT_EQ(serial.count(e), 0u);
                    serial[e] = int(serial.size());
                }
                twin[me] = e;
                e->arg = ptr(100 + pick(3));
                me->arg = e->arg;
            } else if (op < 5 && !in_flight.empty()) {  // a flush finishes
                size_t i = size_t(pick(int(in_flight.size())));
                int error = pick(6) == 0 ? 10 + pick(2) : 0;
                nbrma_ledger_flush_finished(l.l, in_flight[i].first, in_flight[i].second, error);
                nbrma_ledger_flush_finished(m.ledger, in_flight[i].first, in_flight[i].second,
                                            error);
                in_flight.erase(in_flight.begin() + long(i));
            } else if (op < 7 && m.waits) {     // an outside part is done
                int n = 0;
                for (model_wait *w = m.waits; w; w = w->next)
                    n++;
                model_wait *mw = m.waits;
                for (int k = pick(n); k > 0; k--)
                    mw = mw->next;
                if (mw->parts == 0)
                    continue;
                nbrma_registered_wait *w = twin[mw];
                int error = pick(5) == 0 ? 20 : 0;
                nbrma_outside_parts_remove(&w->parts, 0);
                mw->parts--;
                nbrma_ledger_outside_done(l.l, w->id, error);
                nbrma_ledger_outside_done(m.ledger, mw->id, error);
            } else if (op < 9) {        // the poller takes what was released
                nbrma_registered_wait *w;
                model_wait *mw;
                for (;;) {
                    bool got = nbrma_waits_next_released(&r.w, l.l, &w);
                    bool mgot = m.next_released(&mw);
                    ASSERT_EQ(got, mgot);
                    if (!got)
                        break;
                    ASSERT_EQ(twin[mw], w);
                    EXPECT_EQ(w->error, mw->error);
                    EXPECT_EQ(of(w->action), mw->act);
                    nbrma_waits_free(&r.w, w);
                    m.free_waiting(mw);
                    twin.erase(mw);
                    released++;
                    check_lists();
                }
            } else {            // a waiting loop goes away; a window asks
                void *arg = ptr(100 + pick(3));
                nbrma_waits_forget_arg(&r.w, arg);
                m.forget_arg(arg);
                for (uintptr_t o = 1; o <= 4; o++)
                    EXPECT_EQ(nbrma_waits_of(&r.w, ptr(o)), m.has_waits(ptr(o)));
            }
            check_lists();
        }
        EXPECT_GT(released, 0);
        EXPECT_GT(reused, 0);
    }
}

} // namespace
