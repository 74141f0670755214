// The synchronization calls' table and engine calls
// (core/include/nbrma_sync_calls.h) without MPI: rules C1-C4 one by one, then
// random programs of calls on two-rank worlds whose messages are delivered
// after each call, run twice: through nbrma_sync_engine and through a plain
// model of the glue's former switch (sync_calls.c's call_engine before the
// move). Every call's code, test flag, message and completed request must be
// the same.

#include <gtest/gtest.h>

#include <cstdint>
#include <deque>
#include <initializer_list>
#include <random>
#include <string>
#include <vector>

#include "nbrma_core.h"
#include "nbrma_sync_calls.h"

namespace {

TEST(sync_calls, the_table_of_kinds)
{
    const unsigned E = NBRMA_SYNC_ENGINE, R = NBRMA_SYNC_ENGINE | NBRMA_SYNC_REQUEST;
    const unsigned ONE = NBRMA_SYNC_COMPLETES_RANK, ALL = NBRMA_SYNC_COMPLETES_ALL;
    EXPECT_EQ(nbrma_sync_traits(NBRMA_SYNC_FENCE), R | ALL);
    EXPECT_EQ(nbrma_sync_traits(NBRMA_SYNC_POST), R | NBRMA_SYNC_GROUP);
    EXPECT_EQ(nbrma_sync_traits(NBRMA_SYNC_START), R | NBRMA_SYNC_GROUP);
    EXPECT_EQ(nbrma_sync_traits(NBRMA_SYNC_COMPLETE), R | ALL);
    EXPECT_EQ(nbrma_sync_traits(NBRMA_SYNC_WAIT), R);
    EXPECT_EQ(nbrma_sync_traits(NBRMA_SYNC_TEST), E);                  // C1: no request
    EXPECT_EQ(nbrma_sync_traits(NBRMA_SYNC_LOCK), R);
    EXPECT_EQ(nbrma_sync_traits(NBRMA_SYNC_UNLOCK), R | ONE);
    EXPECT_EQ(nbrma_sync_traits(NBRMA_SYNC_LOCK_ALL), R);
    EXPECT_EQ(nbrma_sync_traits(NBRMA_SYNC_UNLOCK_ALL), R | ALL);
    EXPECT_EQ(nbrma_sync_traits(NBRMA_SYNC_FLUSH),
              R | NBRMA_SYNC_KEEPS_GRANTS | ONE);    // C2, C5
    EXPECT_EQ(nbrma_sync_traits(NBRMA_SYNC_SYNC), 0u);                 // C1: MPICH's
    EXPECT_EQ(nbrma_sync_traits(-1), 0u);
    EXPECT_EQ(nbrma_sync_traits(NBRMA_SYNC_KINDS), 0u);
    // C2: only a flush keeps grants
    for (int k = 0; k < NBRMA_SYNC_KINDS; k++)
        EXPECT_EQ((nbrma_sync_traits(k) & NBRMA_SYNC_KEEPS_GRANTS) != 0, k == NBRMA_SYNC_FLUSH);
}

TEST(sync_calls, what_each_kind_completes_and_toward_whom)
{
    // C5: the dynamic windows' question "does this call complete my RDMA"
    int targets = 123;
    EXPECT_TRUE(nbrma_sync_completes(NBRMA_SYNC_UNLOCK, 4, &targets));
    EXPECT_EQ(targets, 4);
    EXPECT_TRUE(nbrma_sync_completes(NBRMA_SYNC_FLUSH, 5, &targets));
    EXPECT_EQ(targets, 5);
    EXPECT_TRUE(nbrma_sync_completes(NBRMA_SYNC_FLUSH, NBRMA_ALL_RANKS, &targets));
    EXPECT_EQ(targets, NBRMA_ALL_RANKS);
    for (int k : {NBRMA_SYNC_FENCE, NBRMA_SYNC_COMPLETE, NBRMA_SYNC_UNLOCK_ALL}) {
        targets = 123;
        EXPECT_TRUE(nbrma_sync_completes(k, 6, &targets)) << k;
        EXPECT_EQ(targets, NBRMA_ALL_RANKS) << k;
    }
    for (int k : std::initializer_list<int>{NBRMA_SYNC_POST, NBRMA_SYNC_START, NBRMA_SYNC_WAIT,
                                            NBRMA_SYNC_TEST, NBRMA_SYNC_LOCK, NBRMA_SYNC_LOCK_ALL,
                                            NBRMA_SYNC_SYNC, NBRMA_SYNC_KINDS, -1})
        EXPECT_FALSE(nbrma_sync_completes(k, 6, &targets)) << k;
    // never both: a kind completes toward its rank or toward every target
    for (int k = 0; k < NBRMA_SYNC_KINDS; k++)
        EXPECT_NE(nbrma_sync_traits(k) & (NBRMA_SYNC_COMPLETES_RANK | NBRMA_SYNC_COMPLETES_ALL),
                  unsigned(NBRMA_SYNC_COMPLETES_RANK | NBRMA_SYNC_COMPLETES_ALL)) << k;
}

TEST(sync_calls, the_names_in_error_messages)
{
    EXPECT_STREQ(nbrma_sync_nonblocking_name(NBRMA_SYNC_FENCE), "MPIX_Win_ifence");
    EXPECT_STREQ(nbrma_sync_nonblocking_name(NBRMA_SYNC_POST), "MPIX_Win_ipost");
    EXPECT_STREQ(nbrma_sync_nonblocking_name(NBRMA_SYNC_START), "MPIX_Win_istart");
    EXPECT_STREQ(nbrma_sync_nonblocking_name(NBRMA_SYNC_COMPLETE), "MPIX_Win_icomplete");
    EXPECT_STREQ(nbrma_sync_nonblocking_name(NBRMA_SYNC_WAIT), "MPIX_Win_iwait");
    EXPECT_STREQ(nbrma_sync_nonblocking_name(NBRMA_SYNC_TEST), "MPI_Win_test");
    EXPECT_STREQ(nbrma_sync_nonblocking_name(NBRMA_SYNC_LOCK), "MPIX_Win_ilock");
    EXPECT_STREQ(nbrma_sync_nonblocking_name(NBRMA_SYNC_UNLOCK), "MPIX_Win_iunlock");
    EXPECT_STREQ(nbrma_sync_nonblocking_name(NBRMA_SYNC_LOCK_ALL), "MPIX_Win_ilock_all");
    EXPECT_STREQ(nbrma_sync_nonblocking_name(NBRMA_SYNC_UNLOCK_ALL), "MPIX_Win_iunlock_all");
    EXPECT_STREQ(nbrma_sync_nonblocking_name(NBRMA_SYNC_FLUSH), "MPIX_Win_iflush");
    EXPECT_STREQ(nbrma_sync_nonblocking_name(NBRMA_SYNC_SYNC), "MPI_Win_sync");
    EXPECT_STREQ(nbrma_sync_nonblocking_name(NBRMA_SYNC_KINDS), "?");
    EXPECT_STREQ(nbrma_sync_nonblocking_name(-1), "?");
}

TEST(sync_calls, post_and_start_keep_their_groups_apart)
{
    EXPECT_EQ(nbrma_sync_group_slot(NBRMA_SYNC_POST), 1);
    EXPECT_EQ(nbrma_sync_group_slot(NBRMA_SYNC_START), 0);
}

TEST(sync_calls, only_a_checked_lock_of_my_own_rank_waits_for_the_lock)
{
    EXPECT_TRUE(nbrma_sync_waits_for_self_lock(NBRMA_SYNC_LOCK, 3, 3, 0));
    EXPECT_TRUE(nbrma_sync_waits_for_self_lock(NBRMA_SYNC_LOCK, 3, 3, NBRMA_MODE_NOPRECEDE));
    EXPECT_FALSE(nbrma_sync_waits_for_self_lock(NBRMA_SYNC_LOCK, 3, 3, NBRMA_MODE_NOCHECK));
    EXPECT_FALSE(nbrma_sync_waits_for_self_lock(NBRMA_SYNC_LOCK, 2, 3, 0));
    EXPECT_FALSE(nbrma_sync_waits_for_self_lock(NBRMA_SYNC_LOCK_ALL, 3, 3, 0));
    EXPECT_FALSE(nbrma_sync_waits_for_self_lock(NBRMA_SYNC_UNLOCK, 3, 3, 0));
    EXPECT_FALSE(nbrma_sync_waits_for_self_lock(NBRMA_SYNC_FLUSH, 3, 3, 0));
}

TEST(sync_calls, a_kind_without_an_engine_call_is_an_internal_error)
{
    nbrma_sync_args a{};
    a.kind = NBRMA_SYNC_SYNC;
    EXPECT_EQ(nbrma_sync_engine(nullptr, &a, nullptr), NBRMA_ERR_INTERN);
    a.kind = NBRMA_SYNC_KINDS;
    EXPECT_EQ(nbrma_sync_engine(nullptr, &a, nullptr), NBRMA_ERR_INTERN);
    a.kind = -1;
    EXPECT_EQ(nbrma_sync_engine(nullptr, &a, nullptr), NBRMA_ERR_INTERN);
}

TEST(sync_calls, wrong_use_leaves_a_record_with_the_caller)
{
    EXPECT_TRUE(nbrma_op_record_refused(NBRMA_ERR_SYNC));
    EXPECT_TRUE(nbrma_op_record_refused(NBRMA_ERR_ARG));
    EXPECT_TRUE(nbrma_op_record_refused(NBRMA_ERR_RANK));
    for (int rc : { NBRMA_OK, NBRMA_ERR_NOMEM, NBRMA_ERR_INTERN, NBRMA_ERR_TRANSPORT_BASE,
                    NBRMA_ERR_TRANSPORT_BASE + 7 })
        EXPECT_FALSE(nbrma_op_record_refused(rc)) << rc;
}

// The glue's switch before the move.
int old_call_engine(nbrma_engine *e, const nbrma_sync_args *c, void *req)
{
    switch (c->kind) {
        case NBRMA_SYNC_FENCE: return nbrma_ifence(e, c->assert_bits, req);
        case NBRMA_SYNC_POST: return nbrma_ipost(e, c->ranks, c->nranks, c->assert_bits, req);
        case NBRMA_SYNC_START: return nbrma_istart(e, c->ranks, c->nranks, c->assert_bits, req);
        case NBRMA_SYNC_COMPLETE: return nbrma_icomplete(e, req);
        case NBRMA_SYNC_WAIT: return nbrma_iwait(e, req);
        case NBRMA_SYNC_TEST: return nbrma_test(e, c->flag);
        case NBRMA_SYNC_LOCK: return nbrma_ilock(e, c->lock_type, c->rank, c->assert_bits, req);
        case NBRMA_SYNC_UNLOCK: return nbrma_iunlock(e, c->rank, req);
        case NBRMA_SYNC_LOCK_ALL: return nbrma_ilock_all(e, c->assert_bits, req);
        case NBRMA_SYNC_UNLOCK_ALL: return nbrma_iunlock_all(e, req);
        case NBRMA_SYNC_FLUSH: return nbrma_iflush(e, c->rank, c->local, req);
        default: return NBRMA_ERR_INTERN;
    }
}

struct msg {
    int kind, from, to;
    uint64_t v;
    int type;
};

struct world;
struct proc {
    world *w;
    int rank;
    nbrma_engine *e = nullptr;
};

struct world {
    std::vector<proc> procs;
    std::deque<msg> queue;
    std::vector<std::string> log;

    static int send(void *c, int peer, int kind, uint64_t v, int type)
    {
        proc &p = *static_cast<proc *>(c);
        p.w->queue.push_back({kind, p.rank, peer, v, type});
        p.w->log.push_back("send " + std::to_string(kind) + " " + std::to_string(p.rank) + "->" +
                           std::to_string(peer) + " " + std::to_string(v) + " " +
                           std::to_string(type));
        return NBRMA_OK;
    }

    explicit world(int n) : procs(static_cast<size_t>(n))
    {
        nbrma_transport t{};
        t.send_grant = [](void *c, int p, uint64_t v) { return send(c, p, 0, v, 0); };
        t.send_done = [](void *c, int p, uint64_t v) { return send(c, p, 1, v, 0); };
        t.send_lock_request = [](void *c, int p, uint64_t v, int ty) { return send(c, p, 2, v, ty); };
        t.send_lock_release = [](void *c, int p, uint64_t v) { return send(c, p, 3, v, 0); };
        t.send_fence_arrival = [](void *c, int p, uint64_t v) { return send(c, p, 4, v, 0); };
        t.issue_op = [](void *, int, void *, nbrma_op_ticket) { return NBRMA_OK; };
        t.request_complete = [](void *c, void *cookie, int status) {
            proc &p = *static_cast<proc *>(c);
            p.w->log.push_back("complete " + std::to_string(p.rank) + " " +
                               std::to_string(reinterpret_cast<uintptr_t>(cookie)) + " " +
                               std::to_string(status));
        };
        for (int r = 0; r < n; r++) {
            procs[r].w = this;
            procs[r].rank = r;
            t.ctx = &procs[r];
            EXPECT_EQ(nbrma_engine_create(r, n, &t, &procs[r].e), NBRMA_OK);
        }
    }
    ~world()
    {
        for (proc &p : procs)
            nbrma_engine_free(p.e);
    }
    void deliver()
    {
        while (!queue.empty()) {
            msg m = queue.front();
            queue.pop_front();
            nbrma_engine *e = procs[m.to].e;
            int rc = m.kind == 0 ? nbrma_on_grant(e, m.from, m.v)
                : m.kind == 1 ? nbrma_on_done(e, m.from, m.v)
                : m.kind == 2 ? nbrma_on_lock_request(e, m.from, m.v, m.type)
                : m.kind == 3 ? nbrma_on_lock_release(e, m.from, m.v)
                : nbrma_on_fence_arrival(e, m.from, m.v);
            log.push_back("deliver " + std::to_string(rc));
        }
    }
};

TEST(sync_calls, a_real_engine_refuses_records_outside_an_epoch_or_the_window)
{
    world w(2);
    int rec;
    EXPECT_TRUE(nbrma_op_record_refused(nbrma_op_record(w.procs[0].e, 1, &rec)));  // no epoch
    nbrma_sync_args a{};
    a.kind = NBRMA_SYNC_LOCK_ALL;
    ASSERT_EQ(nbrma_sync_engine(w.procs[0].e, &a, reinterpret_cast<void *>(1)), NBRMA_OK);
    EXPECT_TRUE(nbrma_op_record_refused(nbrma_op_record(w.procs[0].e, 5, &rec)));  // rank
    EXPECT_TRUE(nbrma_op_record_refused(nbrma_op_record(w.procs[0].e, -1, &rec)));
}

// One random program of `steps` calls on a world of `n`, through the core's
// dispatch or the model: everything that happened.
std::vector<std::string> run(uint64_t seed, int n, int steps, bool core)
{
    std::mt19937_64 rng(seed);
    world w(n);
    const int lock_types[] = { NBRMA_LOCK_EXCLUSIVE, NBRMA_LOCK_SHARED, 0 };
    const int asserts[] = { 0, NBRMA_MODE_NOCHECK, NBRMA_MODE_NOPRECEDE, NBRMA_MODE_NOSUCCEED };
    uintptr_t next_cookie = 1;

    for (int s = 0; s < steps; s++) {
        proc &p = w.procs[rng() % n];
        std::vector<int> ranks;
        for (int r = 0; r < n; r++)
            if (rng() % 2)
                ranks.push_back(r);
        if (rng() % 8 == 0)
            ranks.push_back(static_cast<int>(rng() % (n + 1)));    // duplicate or outside
        int flag = -1;
        nbrma_sync_args a{};
        a.kind = static_cast<int>(rng() % (NBRMA_SYNC_KINDS + 1));
        int r = static_cast<int>(rng() % (n + 2));
        a.rank = r == n ? NBRMA_ALL_RANKS : r == n + 1 ? -1 : r;
        a.local = static_cast<int>(rng() % 2);
        a.lock_type = lock_types[rng() % 3];
        a.assert_bits = asserts[rng() % 4];
        a.ranks = ranks.data();
        a.nranks = static_cast<int>(ranks.size());
        a.flag = &flag;
        void *cookie = a.kind == NBRMA_SYNC_TEST ? nullptr
            : reinterpret_cast<void *>(next_cookie++);
        int rc = core ? nbrma_sync_engine(p.e, &a, cookie) : old_call_engine(p.e, &a, cookie);
        w.log.push_back("call " + std::to_string(p.rank) + " kind " + std::to_string(a.kind) +
                        " rc " + std::to_string(rc) + " flag " + std::to_string(flag));
        if (rc == NBRMA_ERR_NOMEM || rc == NBRMA_ERR_INTERN) {
            if (a.kind < NBRMA_SYNC_SYNC)
                break;          // the engine's state is undefined
            continue;
        }
        w.deliver();
        for (proc &q : w.procs) {
            int made = 0;
            w.log.push_back("progress " + std::to_string(nbrma_progress(q.e, &made)));
        }
        w.deliver();
    }
    return w.log;
}

TEST(sync_calls_sim, random_programs_call_the_engine_as_the_old_switch_did)
{
    size_t completions = 0, ok = 0;
    std::vector<size_t> ok_of_kind(NBRMA_SYNC_KINDS + 1);
    for (uint64_t seed = 1; seed <= 300; seed++) {
        int n = 2 + static_cast<int>(seed % 2);
        auto core = run(seed, n, 60, true);
        auto model = run(seed, n, 60, false);
        ASSERT_EQ(core, model) << "seed " << seed;
        for (const std::string &l : core) {
            completions += l.rfind("complete", 0) == 0;
            if (l.find(" rc 0 ") != std::string::npos) {
                ok++;
                ok_of_kind[std::stoul(l.substr(l.find("kind ") + 5))]++;
            }
        }
    }
    // the programs did complete requests and succeed, not only fail
    EXPECT_GT(completions, 500u);
    EXPECT_GT(ok, 2000u);
    for (int k = 0; k < NBRMA_SYNC_SYNC; k++)
        EXPECT_GT(ok_of_kind[k], 20u) << "kind " << k;     // every engine call succeeded
    EXPECT_EQ(ok_of_kind[NBRMA_SYNC_SYNC] + ok_of_kind[NBRMA_SYNC_KINDS], 0u);
}

} // namespace
