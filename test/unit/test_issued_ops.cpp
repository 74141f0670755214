// The completion sweep's bookkeeping (core/include/nbrma_issued_ops.h)
// without MPI: rules S1-S4 one by one, then random programs of issues,
// local reports, sweeps that start, fail and end, and reports during which
// later operations are issued, driven as completion_sweep.c drives the core
// and checked against a plain model of the glue's former arrays
// (completion_sweep.c before the move), step by step.

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

#include "nbrma_core.h"
#include "nbrma_issued_ops.h"

namespace {

struct ops_ptr {
    nbrma_issued_ops *ops;
    explicit ops_ptr(int n_ranks) : ops(nbrma_issued_ops_create(n_ranks)) { EXPECT_NE(ops, nullptr); }
    ~ops_ptr() { nbrma_issued_ops_destroy(ops); }
};

nbrma_op_ticket ticket(uint64_t age, int target)
{
    nbrma_op_ticket t{};
    t.age = age;
    t.target = target;
    t.count = 1;
    return t;
}

void *req(uintptr_t id) { return reinterpret_cast<void *>(id); }

std::vector<uint64_t> local_reports(nbrma_issued_ops *ops)
{
    std::vector<uint64_t> ages;
    size_t cursor = nbrma_issued_ops_count(ops);
    nbrma_op_ticket t;
    while (nbrma_issued_ops_next_local(ops, &cursor, &t))
        ages.push_back(t.age);
    return ages;
}

std::vector<int> flushes(const nbrma_issued_ops *ops)
{
    std::vector<int> ranks;
    size_t cursor = 0;
    int rank;
    while (nbrma_issued_ops_next_flush(ops, &cursor, &rank))
        ranks.push_back(rank);
    return ranks;
}

struct report {
    uint64_t age;
    void *request;
    bool with_local;
    bool operator==(const report &o) const
    {
        return age == o.age && request == o.request && with_local == o.with_local;
    }
};

std::vector<report> swept(nbrma_issued_ops *ops, bool take_local = true)
{
    std::vector<report> out;
    size_t cursor = 0;
    nbrma_issued_op op;
    bool with_local;
    while (nbrma_issued_ops_next_swept(ops, &cursor, take_local, &op, &with_local))
        out.push_back(report{op.ticket.age, op.request, with_local});
    return out;
}

TEST(issued_ops, create_and_destroy_edges)
{
    nbrma_issued_ops_destroy(nullptr);
    ops_ptr none(0);
    EXPECT_EQ(nbrma_issued_ops_count(none.ops), 0u);
    EXPECT_FALSE(nbrma_issued_ops_pending(none.ops));
    EXPECT_FALSE(nbrma_issued_ops_sweeping(none.ops));
    EXPECT_TRUE(nbrma_issued_ops_snapshot(none.ops));   // nothing kept: all complete at local
    EXPECT_TRUE(flushes(none.ops).empty());
    ops_ptr negative(-3);
    EXPECT_TRUE(flushes(negative.ops).empty());
}

TEST(issued_ops, room_doubles_from_64_and_keeping_grows_it_if_none_was_reserved)
{
    ops_ptr p(2);
    EXPECT_EQ(p.ops->cap, 0u);
    ASSERT_EQ(nbrma_issued_ops_reserve(p.ops), NBRMA_OK);
    EXPECT_EQ(p.ops->cap, 64u);
    for (uint64_t i = 0; i < 64; i++) {
        ASSERT_EQ(nbrma_issued_ops_reserve(p.ops), NBRMA_OK);
        ASSERT_EQ(nbrma_issued_ops_keep(p.ops, ticket(i, 1), nullptr, false, false, false), NBRMA_OK);
    }
    EXPECT_EQ(p.ops->cap, 64u);
    // no reserve: keeping makes room itself
    ASSERT_EQ(nbrma_issued_ops_keep(p.ops, ticket(64, 0), nullptr, false, false, false), NBRMA_OK);
    EXPECT_EQ(p.ops->cap, 128u);
    for (uint64_t i = 65; i < 300; i++)
        ASSERT_EQ(nbrma_issued_ops_keep(p.ops, ticket(i, 0), nullptr, false, false, false), NBRMA_OK);
    EXPECT_EQ(nbrma_issued_ops_count(p.ops), 300u);
    EXPECT_EQ(p.ops->cap, 512u);
    EXPECT_TRUE(nbrma_issued_ops_pending(p.ops));
    for (uint64_t i = 0; i < 300; i++)     // S1: in issue order
        EXPECT_EQ(p.ops->ops[i].ticket.age, i);
}

TEST(issued_ops, local_reports_name_the_locally_complete_newest_first_once)
{
    ops_ptr p(3);
    const bool local[] = {true, false, true, true, false};
    for (uint64_t i = 0; i < 5; i++)
        ASSERT_EQ(nbrma_issued_ops_keep(p.ops, ticket(i, 1), nullptr, local[i], false, false), NBRMA_OK);
    EXPECT_EQ(nbrma_issued_ops_local_pending(p.ops), 3u);
    EXPECT_EQ(local_reports(p.ops), (std::vector<uint64_t>{3, 2, 0}));
    EXPECT_EQ(nbrma_issued_ops_local_pending(p.ops), 0u);
    EXPECT_TRUE(local_reports(p.ops).empty());          // once
    // a later one: only it
    ASSERT_EQ(nbrma_issued_ops_keep(p.ops, ticket(5, 2), nullptr, true, false, false), NBRMA_OK);
    EXPECT_EQ(local_reports(p.ops), (std::vector<uint64_t>{5}));
}

TEST(issued_ops, a_local_report_stops_once_none_is_due_and_names_none_kept_after_it_began)
{
    ops_ptr p(2);
    for (uint64_t i = 0; i < 4; i++)
        ASSERT_EQ(nbrma_issued_ops_keep(p.ops, ticket(i, 0), nullptr, i == 2, false, false), NBRMA_OK);
    size_t cursor = nbrma_issued_ops_count(p.ops);
    nbrma_op_ticket t;
    ASSERT_TRUE(nbrma_issued_ops_next_local(p.ops, &cursor, &t));
    EXPECT_EQ(t.age, 2u);
    // the engine call issued another, locally complete one
    ASSERT_EQ(nbrma_issued_ops_keep(p.ops, ticket(4, 1), nullptr, true, false, false), NBRMA_OK);
    EXPECT_FALSE(nbrma_issued_ops_next_local(p.ops, &cursor, &t));
    EXPECT_EQ(nbrma_issued_ops_local_pending(p.ops), 1u);       // for the next report
    EXPECT_EQ(local_reports(p.ops), (std::vector<uint64_t>{4}));
}

TEST(issued_ops, a_sweep_flushes_the_endpoints_its_operations_left_ucx_operations_on)
{
    ops_ptr p(6);
    ASSERT_EQ(nbrma_issued_ops_keep(p.ops, ticket(0, 4), nullptr, false, true, true), NBRMA_OK);
    ASSERT_EQ(nbrma_issued_ops_keep(p.ops, ticket(1, 1), nullptr, false, false, true), NBRMA_OK);
    ASSERT_EQ(nbrma_issued_ops_keep(p.ops, ticket(2, 1), nullptr, false, true, true), NBRMA_OK);
    ASSERT_EQ(nbrma_issued_ops_keep(p.ops, ticket(3, 4), nullptr, false, true, true), NBRMA_OK);
    ASSERT_EQ(nbrma_issued_ops_keep(p.ops, ticket(4, 5), nullptr, false, false, true), NBRMA_OK);
    EXPECT_TRUE(nbrma_issued_ops_snapshot(p.ops));      // every one complete at local completion
    EXPECT_EQ(flushes(p.ops), (std::vector<int>{1, 4}));        // in rank order, once each
    ASSERT_EQ(nbrma_issued_ops_keep(p.ops, ticket(5, 0), nullptr, false, false, false), NBRMA_OK);
    EXPECT_FALSE(nbrma_issued_ops_snapshot(p.ops));     // one needs its remote completion
    EXPECT_EQ(flushes(p.ops), (std::vector<int>{1, 4}));
}

TEST(issued_ops, a_sweep_covers_what_was_kept_when_it_started_and_reports_it_in_order)
{
    ops_ptr p(3);
    ASSERT_EQ(nbrma_issued_ops_keep(p.ops, ticket(0, 0), req(10), true, true, false), NBRMA_OK);
    ASSERT_EQ(nbrma_issued_ops_keep(p.ops, ticket(1, 1), nullptr, false, false, false), NBRMA_OK);
    ASSERT_EQ(nbrma_issued_ops_keep(p.ops, ticket(2, 2), req(12), true, false, false), NBRMA_OK);
    EXPECT_EQ(local_reports(p.ops), (std::vector<uint64_t>{2, 0}));
    nbrma_issued_ops_snapshot(p.ops);
    EXPECT_EQ(nbrma_issued_ops_sweep_started(p.ops), 3u);
    EXPECT_TRUE(nbrma_issued_ops_sweeping(p.ops));
    // kept during the sweep: not covered
    ASSERT_EQ(nbrma_issued_ops_keep(p.ops, ticket(3, 1), req(13), true, true, false), NBRMA_OK);
    EXPECT_EQ(nbrma_issued_ops_sweep_ended(p.ops), 3u);
    EXPECT_FALSE(nbrma_issued_ops_sweeping(p.ops));
    EXPECT_TRUE(nbrma_issued_ops_pending(p.ops));
    // S2/S4: 0 and 2 were reported locally already; 1 carries its local report
    EXPECT_EQ(swept(p.ops), (std::vector<report>{{0, req(10), false}, {1, nullptr, true},
                                                 {2, req(12), false}}));
    nbrma_issued_ops_forget_swept(p.ops);
    ASSERT_EQ(nbrma_issued_ops_count(p.ops), 1u);
    EXPECT_EQ(p.ops->ops[0].ticket.age, 3u);
    EXPECT_EQ(nbrma_issued_ops_local_pending(p.ops), 1u);
    // the next sweep: the one kept meanwhile, its local report with the remote one
    nbrma_issued_ops_snapshot(p.ops);
    EXPECT_EQ(flushes(p.ops), (std::vector<int>{1}));
    EXPECT_EQ(nbrma_issued_ops_sweep_started(p.ops), 1u);
    EXPECT_EQ(nbrma_issued_ops_sweep_ended(p.ops), 1u);
    EXPECT_EQ(swept(p.ops), (std::vector<report>{{3, req(13), true}}));
    nbrma_issued_ops_forget_swept(p.ops);
    EXPECT_EQ(nbrma_issued_ops_local_pending(p.ops), 0u);
    EXPECT_FALSE(nbrma_issued_ops_pending(p.ops));
}

TEST(issued_ops, after_a_failed_engine_call_the_reports_take_no_local_report)
{
    ops_ptr p(2);
    ASSERT_EQ(nbrma_issued_ops_keep(p.ops, ticket(0, 0), nullptr, true, false, false), NBRMA_OK);
    ASSERT_EQ(nbrma_issued_ops_keep(p.ops, ticket(1, 0), nullptr, true, false, false), NBRMA_OK);
    nbrma_issued_ops_sweep_started(p.ops);
    nbrma_issued_ops_sweep_ended(p.ops);
    EXPECT_EQ(swept(p.ops, false), (std::vector<report>{{0, nullptr, false}, {1, nullptr, false}}));
    EXPECT_EQ(nbrma_issued_ops_local_pending(p.ops), 2u);       // as the glue's counter was
}

TEST(issued_ops, a_sweep_whose_wait_failed_is_covered_again_by_the_next)
{
    ops_ptr p(2);
    ASSERT_EQ(nbrma_issued_ops_keep(p.ops, ticket(0, 1), nullptr, false, true, false), NBRMA_OK);
    nbrma_issued_ops_snapshot(p.ops);
    nbrma_issued_ops_sweep_started(p.ops);
    ASSERT_EQ(nbrma_issued_ops_keep(p.ops, ticket(1, 0), nullptr, false, false, false), NBRMA_OK);
    nbrma_issued_ops_sweep_ended(p.ops);        // released with an error: nothing reported
    EXPECT_EQ(nbrma_issued_ops_count(p.ops), 2u);
    nbrma_issued_ops_snapshot(p.ops);
    EXPECT_EQ(nbrma_issued_ops_sweep_started(p.ops), 2u);
    nbrma_issued_ops_sweep_ended(p.ops);
    EXPECT_EQ(swept(p.ops).size(), 2u);
    nbrma_issued_ops_forget_swept(p.ops);
    EXPECT_EQ(nbrma_issued_ops_count(p.ops), 0u);
}

// The glue's arrays and functions before the move (completion_sweep.c), as
// plain C++: issued operations, the sweep's snapshot, its per-rank targets.
struct old_glue {
    struct op {
        nbrma_op_ticket ticket;
        void *user_req;
        bool local_done, local_reported, by_endpoint, complete_at_local;
    };
    std::vector<op> issued;
    size_t n_local_pending = 0;
    bool sweeping = false;
    size_t n_swept = 0;
    std::vector<unsigned char> sweep_target;

    explicit old_glue(int n_ranks) : sweep_target(static_cast<size_t>(n_ranks)) {}

    void track(nbrma_op_ticket t, void *r, bool local_done, bool by_endpoint, bool at_local)
    {
        issued.push_back(op{t, r, local_done, false, by_endpoint, at_local});
        n_local_pending += local_done;
    }
    bool take_local_report(op *o)
    {
        if (o->local_reported)
            return false;
        o->local_reported = true;
        n_local_pending -= o->local_done;
        return true;
    }
    std::vector<uint64_t> report_local()
    {
        std::vector<uint64_t> ages;
        for (size_t i = issued.size(); n_local_pending > 0 && i-- > 0;)
            if (issued[i].local_done && !issued[i].local_reported && take_local_report(&issued[i]))
                ages.push_back(issued[i].ticket.age);
        return ages;
    }
    // start_sweep up to the ledger's call: the endpoints and the counters' kind
    std::vector<int> snapshot(bool *all_at_local)
    {
        std::vector<int> ranks;
        std::fill(sweep_target.begin(), sweep_target.end(), 0);
        *all_at_local = true;
        for (const op &o : issued) {
            if (o.by_endpoint)
                sweep_target[static_cast<size_t>(o.ticket.target)] = 1;
            *all_at_local &= o.complete_at_local;
        }
        for (size_t r = 0; r < sweep_target.size(); r++)
            if (sweep_target[r])
                ranks.push_back(static_cast<int>(r));
        return ranks;
    }
};

TEST(issued_ops, random_programs_match_the_glue_s_former_arrays)
{
    std::mt19937_64 rng(20261127);
    auto chance = [&](int percent) { return static_cast<int>(rng() % 100) < percent; };
    constexpr int n_ranks = 5;
    size_t sweeps = 0, reports = 0;

    for (int program = 0; program < 500; program++) {
        ops_ptr p(n_ranks);
        old_glue m(n_ranks);
        uint64_t age = 0;
        auto issue = [&] {
            const nbrma_op_ticket t = ticket(age++, static_cast<int>(rng() % n_ranks));
            void *r = chance(30) ? req(1000 + t.age) : nullptr;
            const bool local_done = chance(60), by_endpoint = chance(50), at_local = chance(70);
            ASSERT_EQ(nbrma_issued_ops_reserve(p.ops), NBRMA_OK);
            ASSERT_EQ(nbrma_issued_ops_keep(p.ops, t, r, local_done, by_endpoint, at_local), NBRMA_OK);
            m.track(t, r, local_done, by_endpoint, at_local);
        };
        for (int step = 0; step < 200; step++) {
            const int what = static_cast<int>(rng() % 10);
            if (what < 4) {
                issue();
            } else if (what == 4) {
                // a local flush, or the sweep's rounds: the local reports due
                ASSERT_EQ(local_reports(p.ops), m.report_local());
            } else if (!m.sweeping) {
                // sweep_poll without a sweep: start one if anything is kept
                if (m.issued.empty())
                    continue;
                bool all_at_local;
                const std::vector<int> ranks = m.snapshot(&all_at_local);
                ASSERT_EQ(nbrma_issued_ops_snapshot(p.ops), all_at_local);
                ASSERT_EQ(flushes(p.ops), ranks);
                if (chance(10))
                    continue;   // a ledger call failed: the wait is cancelled
                m.sweeping = true;
                m.n_swept = m.issued.size();
                ASSERT_EQ(nbrma_issued_ops_sweep_started(p.ops), m.n_swept);
                if (chance(10)) {       // the ledger's call_back failed
                    m.sweeping = false;
                    nbrma_issued_ops_sweep_ended(p.ops);
                }
                sweeps++;
            } else if (chance(50)) {
                // the sweep's wait was released
                m.sweeping = false;
                ASSERT_EQ(nbrma_issued_ops_sweep_ended(p.ops), m.n_swept);
                if (chance(10))
                    continue;   // with an error: nothing reported
                // the report; engine calls may fail from some point on, and
                // reporting may issue later operations
                const size_t fail_at = chance(20) ? rng() % (m.n_swept + 1) : SIZE_MAX;
                bool ok = true;
                size_t cursor = 0;
                nbrma_issued_op op;
                bool with_local;
                for (size_t i = 0; i < m.n_swept; i++) {
                    old_glue::op o = m.issued[i];
                    bool model_with_local = ok && m.take_local_report(&o);
                    ASSERT_TRUE(nbrma_issued_ops_next_swept(p.ops, &cursor, ok, &op, &with_local));
                    ASSERT_EQ(op.ticket.age, o.ticket.age);
                    ASSERT_EQ(op.request, o.user_req);
                    ASSERT_EQ(with_local, model_with_local);
                    if (ok && i == fail_at)
                        ok = false;
                    if (ok && chance(10))
                        issue();
                    reports++;
                }
                ASSERT_FALSE(nbrma_issued_ops_next_swept(p.ops, &cursor, ok, &op, &with_local));
                m.issued.erase(m.issued.begin(), m.issued.begin() + static_cast<long>(m.n_swept));
                m.n_swept = 0;
                nbrma_issued_ops_forget_swept(p.ops);
                if (ok) {
                    ASSERT_EQ(local_reports(p.ops), m.report_local());
                }
            } else {
                // a poll while the wait is out: local reports for a waiting local flush
                if (m.n_local_pending > 0 && chance(50)) {
                    ASSERT_EQ(local_reports(p.ops), m.report_local());
                }
            }
            ASSERT_EQ(nbrma_issued_ops_count(p.ops), m.issued.size());
            ASSERT_EQ(nbrma_issued_ops_local_pending(p.ops), m.n_local_pending);
            ASSERT_EQ(nbrma_issued_ops_sweeping(p.ops), m.sweeping);
            ASSERT_EQ(nbrma_issued_ops_pending(p.ops), !m.issued.empty() || m.sweeping);
            for (size_t i = 0; i < m.issued.size(); i++)
                ASSERT_EQ(p.ops->ops[i].ticket.age, m.issued[i].ticket.age);
        }
    }
    EXPECT_GT(sweeps, 1000u);
    EXPECT_GT(reports, 10000u);
}

} // namespace
