// Unit tests of the engine: one test (or a few) per rule of the paper, per
// reorder flag and its exclusions, per error of the C interface, and the
// paper's section VII-B example. Messages are delivered under test control.
#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

#include "sim_world.hpp"

using nbrma_sim::message;
using nbrma_sim::msg_kind;
using nbrma_sim::request;
using nbrma_sim::sim_op;
using nbrma_sim::world;

namespace {

bool done(const request *r) { return r->completions == 1; }

std::function<bool(const message &)> kind_from_to(msg_kind kind, int from, int to)
{
    return [=](const message &m) { return m.kind == kind && m.from == from && m.to == to; };
}

std::function<bool(const message &)> kind_is(msg_kind kind)
{
    return [=](const message &m) { return m.kind == kind; };
}

class two_procs : public ::testing::Test {
  protected:
    void TearDown() override { EXPECT_TRUE(w.failures().empty()) << w.failures().front(); }
    world w{2};
};

class three_procs : public ::testing::Test {
  protected:
    void TearDown() override { EXPECT_TRUE(w.failures().empty()) << w.failures().front(); }
    world w{3};
};

}  // namespace

// --- the C interface: wrong use is reported precisely --------------------------

TEST(c_interface, create_rejects_bad_arguments)
{
    nbrma_transport t{};
    nbrma_engine *e = nullptr;
    EXPECT_EQ(nbrma_engine_create(0, 2, &t, &e), NBRMA_ERR_ARG);  // no functions
    EXPECT_EQ(nbrma_engine_create(0, 2, nullptr, &e), NBRMA_ERR_ARG);
    EXPECT_EQ(e, nullptr);
    EXPECT_EQ(nbrma_ifence(nullptr, 0, nullptr), NBRMA_ERR_ARG);
    EXPECT_EQ(nbrma_has_pending_epochs(nullptr), 0);
    EXPECT_STREQ(nbrma_strerror(NBRMA_ERR_SYNC), "wrong synchronization of RMA calls");
}

TEST(c_interface, create_rejects_rank_outside_window)
{
    nbrma_engine *e = nullptr;
    nbrma_transport t{};
    t.ctx = nullptr;
    t.send_grant = [](void *, int, uint64_t) { return 0; };
    t.send_done = [](void *, int, uint64_t) { return 0; };
    t.send_lock_request = [](void *, int, uint64_t, int) { return 0; };
    t.send_lock_release = [](void *, int, uint64_t) { return 0; };
    t.send_fence_arrival = [](void *, int, uint64_t) { return 0; };
    t.issue_op = [](void *, int, void *, nbrma_op_ticket) { return 0; };
    t.request_complete = [](void *, void *, int) {};
    EXPECT_EQ(nbrma_engine_create(2, 2, &t, &e), NBRMA_ERR_RANK);
    EXPECT_EQ(nbrma_engine_create(-1, 2, &t, &e), NBRMA_ERR_RANK);
    ASSERT_EQ(nbrma_engine_create(1, 2, &t, &e), NBRMA_OK);
    nbrma_engine_free(e);
}

TEST_F(two_procs, wrong_synchronization_is_an_error)
{
    nbrma_engine *p0 = w.e(0);
    const int one = 1;
    EXPECT_EQ(nbrma_icomplete(p0, nullptr), NBRMA_ERR_SYNC) << "complete without start";
    EXPECT_EQ(nbrma_iwait(p0, nullptr), NBRMA_ERR_SYNC) << "wait without post";
    int flag = 0;
    EXPECT_EQ(nbrma_test(p0, &flag), NBRMA_ERR_SYNC) << "test without post";
    EXPECT_EQ(nbrma_iunlock(p0, 1, nullptr), NBRMA_ERR_SYNC) << "unlock without lock";
    EXPECT_EQ(nbrma_iunlock_all(p0, nullptr), NBRMA_ERR_SYNC) << "unlock_all without lock_all";
    EXPECT_EQ(nbrma_op_record(p0, 1, nullptr), NBRMA_ERR_SYNC) << "operation outside any epoch";
    EXPECT_EQ(nbrma_iflush(p0, 1, 0, nullptr), NBRMA_ERR_SYNC) << "flush outside a passive epoch";
    EXPECT_EQ(nbrma_iflush(p0, NBRMA_ALL_RANKS, 0, nullptr), NBRMA_ERR_SYNC);

    ASSERT_EQ(nbrma_ilock(p0, NBRMA_LOCK_SHARED, 1, 0, nullptr), NBRMA_OK);
    EXPECT_EQ(nbrma_ifence(p0, 0, nullptr), NBRMA_ERR_SYNC) << "ifence inside a lock epoch";
    EXPECT_EQ(nbrma_ilock(p0, NBRMA_LOCK_SHARED, 1, 0, nullptr), NBRMA_ERR_SYNC) << "lock twice";
    EXPECT_EQ(nbrma_ilock_all(p0, 0, nullptr), NBRMA_ERR_SYNC);
    EXPECT_EQ(nbrma_istart(p0, &one, 1, 0, nullptr), NBRMA_ERR_SYNC);
    EXPECT_EQ(nbrma_iflush(p0, 0, 0, nullptr), NBRMA_ERR_SYNC) << "flush toward a rank not locked";
    EXPECT_EQ(nbrma_iflush(p0, 1, 0, nullptr), NBRMA_OK);
    EXPECT_EQ(nbrma_op_record(p0, 0, nullptr), NBRMA_ERR_SYNC) << "operation toward a rank not locked";
    ASSERT_EQ(nbrma_iunlock(p0, 1, nullptr), NBRMA_OK);

    ASSERT_EQ(nbrma_ipost(p0, &one, 1, 0, nullptr), NBRMA_OK);
    EXPECT_EQ(nbrma_ilock(p0, NBRMA_LOCK_SHARED, 1, 0, nullptr), NBRMA_ERR_SYNC) << "lock while exposed by post";
    EXPECT_EQ(nbrma_ifence(p0, 0, nullptr), NBRMA_ERR_SYNC);
    EXPECT_EQ(nbrma_ipost(p0, &one, 1, 0, nullptr), NBRMA_ERR_SYNC);
    ASSERT_EQ(nbrma_iwait(p0, nullptr), NBRMA_OK);

    ASSERT_EQ(nbrma_ifence(p0, 0, nullptr), NBRMA_OK);
    ASSERT_EQ(w.record_op(0, 1, 0), NBRMA_OK);  // the fence epoch is in use now
    EXPECT_EQ(nbrma_ilock(p0, NBRMA_LOCK_EXCLUSIVE, 1, 0, nullptr), NBRMA_ERR_SYNC) << "lock while exposed by fence";
    EXPECT_EQ(nbrma_ipost(p0, &one, 1, 0, nullptr), NBRMA_ERR_SYNC);
    EXPECT_EQ(nbrma_istart(p0, &one, 1, 0, nullptr), NBRMA_ERR_SYNC);
    EXPECT_EQ(nbrma_iflush(p0, 1, 0, nullptr), NBRMA_ERR_SYNC) << "flush in a fence epoch";
    ASSERT_EQ(nbrma_ifence(p0, NBRMA_MODE_NOSUCCEED, nullptr), NBRMA_OK);
    EXPECT_EQ(nbrma_op_record(p0, 1, nullptr), NBRMA_ERR_SYNC) << "operation after a NOSUCCEED fence";
}

TEST_F(two_procs, bad_arguments_and_ranks)
{
    nbrma_engine *p0 = w.e(0);
    const int out_of_range[] = {2};
    const int duplicate[] = {1, 1};
    EXPECT_EQ(nbrma_ipost(p0, out_of_range, 1, 0, nullptr), NBRMA_ERR_RANK);
    EXPECT_EQ(nbrma_istart(p0, duplicate, 2, 0, nullptr), NBRMA_ERR_ARG);
    EXPECT_EQ(nbrma_istart(p0, nullptr, 1, 0, nullptr), NBRMA_ERR_ARG);
    EXPECT_EQ(nbrma_ilock(p0, 7, 1, 0, nullptr), NBRMA_ERR_ARG);
    EXPECT_EQ(nbrma_ilock(p0, NBRMA_LOCK_SHARED, 5, 0, nullptr), NBRMA_ERR_RANK);
    EXPECT_EQ(nbrma_iunlock(p0, -3, nullptr), NBRMA_ERR_RANK);
    EXPECT_EQ(nbrma_iflush(p0, 9, 0, nullptr), NBRMA_ERR_RANK);
    EXPECT_EQ(nbrma_set_reorder_flags(p0, 0x10), NBRMA_ERR_ARG);
    EXPECT_EQ(nbrma_test(p0, nullptr), NBRMA_ERR_ARG);
    ASSERT_EQ(nbrma_ilock_all(p0, 0, nullptr), NBRMA_OK);
    EXPECT_EQ(nbrma_op_record(p0, 2, nullptr), NBRMA_ERR_RANK);
    // -1 is MPI_PROC_NULL in MPICH, not "every target" (NBRMA_ALL_RANKS)
    EXPECT_EQ(nbrma_iflush(p0, -1, 0, nullptr), NBRMA_ERR_RANK);
    int ready = 0;
    EXPECT_EQ(nbrma_flush_ready(p0, -1, 0, &ready), NBRMA_ERR_RANK);
    EXPECT_EQ(nbrma_flush_ready(p0, NBRMA_ALL_RANKS, 0, &ready), NBRMA_OK);
    EXPECT_EQ(ready, 1) << "nothing outstanding";
    EXPECT_EQ(nbrma_on_done(p0, 7, 1), NBRMA_ERR_RANK);
    EXPECT_EQ(nbrma_on_done(p0, 1, 99), NBRMA_ERR_INTERN) << "done nobody expects";
    EXPECT_EQ(nbrma_on_lock_release(p0, 1, 1), NBRMA_ERR_INTERN) << "release of a lock never granted";
}

TEST_F(two_procs, pending_epochs_are_reported)
{
    const int one = 1;
    EXPECT_EQ(nbrma_has_pending_epochs(w.e(0)), 0);
    ASSERT_EQ(nbrma_istart(w.e(0), &one, 1, 0, nullptr), NBRMA_OK);
    EXPECT_EQ(nbrma_has_pending_epochs(w.e(0)), 1);
    ASSERT_EQ(nbrma_icomplete(w.e(0), nullptr), NBRMA_OK);
    EXPECT_EQ(nbrma_has_pending_epochs(w.e(0)), 1) << "closed but not granted yet";
    const int zero = 0;
    ASSERT_EQ(nbrma_ipost(w.e(1), &zero, 1, 0, nullptr), NBRMA_OK);
    ASSERT_EQ(nbrma_iwait(w.e(1), nullptr), NBRMA_OK);
    w.deliver_all();
    EXPECT_EQ(nbrma_has_pending_epochs(w.e(0)), 0);
    EXPECT_EQ(nbrma_has_pending_epochs(w.e(1)), 0);
}

// Rule R8's stream as the engine counts it (nbrma_op_in_stream): `max`
// operations toward a target since none was outstanding there, or more than
// `max` in the burst before; per target; 0 for `max`: always.
TEST_F(two_procs, a_stream_is_max_counted_since_idle_or_more_in_the_burst_before)
{
    nbrma_engine *p0 = w.e(0);
    const uint64_t max = 2;
    auto issue = [&](uint64_t count) {
        nbrma_op_ticket t{};
        int issued = 0;
        EXPECT_EQ(nbrma_op_issue_direct(p0, 1, count, &t, &issued), NBRMA_OK);
        EXPECT_EQ(issued, 1);
        return t;
    };
    EXPECT_EQ(nbrma_op_in_stream(p0, 1, max), 0);
    EXPECT_EQ(nbrma_op_in_stream(p0, 1, 0), 1);
    EXPECT_EQ(nbrma_op_in_stream(p0, 5, 0), 0) << "outside the window";
    EXPECT_EQ(nbrma_op_in_stream(nullptr, 1, 0), 0);
    ASSERT_EQ(nbrma_ilock_all(p0, 0, nullptr), NBRMA_OK);
    w.deliver_all();
    nbrma_op_ticket a = issue(1);
    EXPECT_EQ(nbrma_op_in_stream(p0, 1, max), 0) << "one of two";
    nbrma_op_ticket b = issue(1);
    EXPECT_EQ(nbrma_op_in_stream(p0, 1, max), 1) << "two of two";
    EXPECT_EQ(nbrma_op_in_stream(p0, 0, max), 0) << "per target";
    ASSERT_EQ(nbrma_op_completed(p0, a), NBRMA_OK);
    EXPECT_EQ(nbrma_op_in_stream(p0, 1, max), 1) << "the burst goes on while one is outstanding";
    ASSERT_EQ(nbrma_op_completed(p0, b), NBRMA_OK);
    EXPECT_EQ(nbrma_op_in_stream(p0, 1, max), 0) << "a burst of max, not more";
    ASSERT_EQ(nbrma_op_completed(p0, issue(3)), NBRMA_OK);
    EXPECT_EQ(nbrma_op_in_stream(p0, 1, max), 1) << "a batch of 3 before";
    ASSERT_EQ(nbrma_op_completed(p0, issue(1)), NBRMA_OK);
    EXPECT_EQ(nbrma_op_in_stream(p0, 1, max), 0) << "a burst of one before";
    ASSERT_EQ(nbrma_iunlock_all(p0, nullptr), NBRMA_OK);
    w.deliver_all();
}

// MPI_Win_free refuses open epochs but may drive closed ones to completion; a
// fence epoch without operations may be ended by the free.
TEST_F(two_procs, open_epochs_are_told_apart_from_pending_ones)
{
    const int one = 1;
    EXPECT_EQ(nbrma_has_open_epochs(nullptr), 0);
    EXPECT_EQ(nbrma_has_open_epochs(w.e(0)), 0);
    ASSERT_EQ(nbrma_istart(w.e(0), &one, 1, 0, nullptr), NBRMA_OK);
    EXPECT_EQ(nbrma_has_open_epochs(w.e(0)), 1);
    ASSERT_EQ(nbrma_icomplete(w.e(0), nullptr), NBRMA_OK);
    EXPECT_EQ(nbrma_has_open_epochs(w.e(0)), 0) << "closed, though not complete";
    EXPECT_EQ(nbrma_has_pending_epochs(w.e(0)), 1);
    ASSERT_EQ(nbrma_ilock(w.e(1), NBRMA_LOCK_SHARED, 0, 0, nullptr), NBRMA_OK);
    EXPECT_EQ(nbrma_has_open_epochs(w.e(1)), 1);
    ASSERT_EQ(nbrma_iunlock(w.e(1), 0, nullptr), NBRMA_OK);
    EXPECT_EQ(nbrma_has_open_epochs(w.e(1)), 0);
    w.deliver_all();

    for (int r = 0; r < 2; r++)
        ASSERT_EQ(nbrma_ifence(w.e(r), 0, nullptr), NBRMA_OK);
    w.deliver_all();
    EXPECT_EQ(nbrma_has_open_epochs(w.e(0)), 0) << "a fence epoch without operations";
    ASSERT_EQ(w.record_op(0, 1, 0), NBRMA_OK);
    EXPECT_EQ(nbrma_has_open_epochs(w.e(0)), 1) << "a fence epoch in use";
}

// --- rules 1 and 2: any mix of calls; completion only through the request -----

TEST_F(two_procs, pscw_operations_wait_for_the_grant_and_requests_for_completion)
{
    const int zero = 0, one = 1;
    request *start = w.new_request(0), *complete = w.new_request(0);
    ASSERT_EQ(nbrma_istart(w.e(0), &one, 1, 0, start), NBRMA_OK);
    EXPECT_TRUE(done(start)) << "opening requests complete at once";
    sim_op *op = nullptr;
    ASSERT_EQ(w.record_op(0, 1, 0, &op), NBRMA_OK);
    ASSERT_EQ(nbrma_icomplete(w.e(0), complete), NBRMA_OK);
    EXPECT_FALSE(op->issued) << "the target has not posted";
    EXPECT_FALSE(done(complete));

    request *post = w.new_request(1), *wait = w.new_request(1);
    ASSERT_EQ(nbrma_ipost(w.e(1), &zero, 1, 0, post), NBRMA_OK);  // blocking post: done at once
    ASSERT_TRUE(done(post));
    ASSERT_EQ(nbrma_iwait(w.e(1), wait), NBRMA_OK);
    ASSERT_TRUE(w.deliver_first(kind_from_to(msg_kind::grant, 1, 0)));
    EXPECT_TRUE(op->issued);
    ASSERT_TRUE(w.deliver_first(kind_is(msg_kind::op)));
    EXPECT_TRUE(op->performed);
    EXPECT_FALSE(done(complete)) << "rule 2: not complete before the operation completed";
    EXPECT_EQ(w.count_in_flight(kind_is(msg_kind::done)), 0u) << "no done before the operation completed";
    ASSERT_TRUE(w.deliver_first(kind_is(msg_kind::op_ack)));
    EXPECT_TRUE(done(complete));
    EXPECT_FALSE(done(wait)) << "the target still waits for the done";
    ASSERT_TRUE(w.deliver_first(kind_from_to(msg_kind::done, 0, 1)));
    EXPECT_TRUE(done(wait));
    EXPECT_TRUE(w.in_flight().empty());
}

namespace {

// MPI_Wait on one request: progress (here: delivery) until it completed.
bool wait_for(world &w, const request *r)
{
    while (r->completions == 0) {
        if (w.in_flight().empty())
            return false;
        w.deliver(0);
    }
    return true;
}

}  // namespace

TEST_F(two_procs, blocking_and_nonblocking_calls_mix_freely)
{
    // Rule 1: P0 opens blocking and closes nonblocking, P1 the other way round;
    // a blocking call is the nonblocking one plus a wait on its request.
    const int zero = 0, one = 1;
    request *start = w.new_request(0), *complete = w.new_request(0);
    request *post = w.new_request(1), *wait = w.new_request(1);
    ASSERT_EQ(nbrma_istart(w.e(0), &one, 1, 0, start), NBRMA_OK);
    ASSERT_TRUE(wait_for(w, start)) << "blocking start returns without the target";
    ASSERT_EQ(w.record_op(0, 1, 0), NBRMA_OK);
    ASSERT_EQ(nbrma_icomplete(w.e(0), complete), NBRMA_OK);
    ASSERT_EQ(nbrma_ipost(w.e(1), &zero, 1, 0, post), NBRMA_OK);
    ASSERT_EQ(nbrma_iwait(w.e(1), wait), NBRMA_OK);
    ASSERT_TRUE(wait_for(w, wait)) << "blocking wait";
    EXPECT_TRUE(done(complete)) << "the done that ended the wait left after the origin's completion";
    ASSERT_TRUE(done(post));
}

TEST_F(two_procs, win_test_closes_only_a_completed_exposure)
{
    const int zero = 0, one = 1;
    ASSERT_EQ(nbrma_ipost(w.e(1), &zero, 1, 0, nullptr), NBRMA_OK);
    int flag = -1;
    ASSERT_EQ(nbrma_test(w.e(1), &flag), NBRMA_OK);
    EXPECT_EQ(flag, 0);
    ASSERT_EQ(nbrma_istart(w.e(0), &one, 1, 0, nullptr), NBRMA_OK);
    ASSERT_EQ(nbrma_icomplete(w.e(0), nullptr), NBRMA_OK);
    w.deliver_all();
    ASSERT_EQ(nbrma_test(w.e(1), &flag), NBRMA_OK);
    EXPECT_EQ(flag, 1);
    EXPECT_EQ(nbrma_iwait(w.e(1), nullptr), NBRMA_ERR_SYNC) << "test closed the epoch";
}

// --- rule 3: FIFO matching through the counter triple ---------------------------

TEST_F(two_procs, access_and_exposure_epochs_match_in_fifo_order)
{
    const int zero = 0, one = 1;
    std::vector<std::pair<std::uint64_t, std::uint64_t>> matched;  // (origin epoch seq, target epoch seq)
    w.on_pscw_performed = [&](const sim_op &op, const nbrma::epoch &exposure) {
        matched.emplace_back(op.epoch_seq, exposure.seq);
    };
    ASSERT_EQ(nbrma_set_reorder_flags(w.e(1), NBRMA_REORDER_EXPOSURE_AFTER_EXPOSURE), NBRMA_OK);
    // The target runs three exposures ahead; the origin catches up later.
    for (int k = 0; k < 3; ++k) {
        ASSERT_EQ(nbrma_ipost(w.e(1), &zero, 1, 0, nullptr), NBRMA_OK);
        ASSERT_EQ(nbrma_iwait(w.e(1), nullptr), NBRMA_OK);
    }
    EXPECT_EQ(w.impl(1).triple(0).exposures_opened, 3u);
    w.deliver_all();
    EXPECT_EQ(w.impl(0).triple(1).accesses_granted, 3u) << "grants persist until the origin catches up";
    for (int k = 0; k < 3; ++k) {
        ASSERT_EQ(nbrma_istart(w.e(0), &one, 1, 0, nullptr), NBRMA_OK);
        ASSERT_EQ(w.record_op(0, 1, k), NBRMA_OK);
        ASSERT_EQ(nbrma_icomplete(w.e(0), nullptr), NBRMA_OK);
    }
    w.deliver_all();
    ASSERT_EQ(matched.size(), 3u);
    for (std::size_t k = 0; k < 3; ++k)
        EXPECT_EQ(matched[k], (std::pair<std::uint64_t, std::uint64_t>(k + 1, k + 1)));
    EXPECT_FALSE(nbrma_has_pending_epochs(w.e(0)));
    EXPECT_FALSE(nbrma_has_pending_epochs(w.e(1)));
}

TEST_F(three_procs, paper_section_7b_example)
{
    // P0 opens six access epochs toward T0..T5; P1 is in T0,T1,T2,T3,T5 and P2
    // in T4,T5. P2 opens its second exposure long before P0 catches up.
    const std::vector<std::vector<int>> groups = {{1}, {1}, {1}, {1}, {2}, {1, 2}};
    const int zero = 0;
    std::vector<std::pair<int, std::uint64_t>> performed;  // (target, target's epoch seq) per op
    w.on_pscw_performed = [&](const sim_op &op, const nbrma::epoch &exposure) {
        EXPECT_EQ(static_cast<std::uint64_t>(op.tag), op.epoch_seq);
        performed.emplace_back(op.target, exposure.seq);
    };
    ASSERT_EQ(nbrma_set_reorder_flags(w.e(2), NBRMA_REORDER_EXPOSURE_AFTER_EXPOSURE), NBRMA_OK);
    for (int k = 0; k < 2; ++k) {
        ASSERT_EQ(nbrma_ipost(w.e(2), &zero, 1, 0, nullptr), NBRMA_OK);
        ASSERT_EQ(nbrma_iwait(w.e(2), nullptr), NBRMA_OK);
    }
    w.deliver_all();
    EXPECT_EQ(w.impl(0).triple(2).accesses_granted, 2u) << "P2's second grant is waiting for P0";
    EXPECT_EQ(w.impl(0).triple(2).accesses_requested, 0u);

    // P0 opens all six epochs; P1 posts only later.
    std::vector<request *> completes;
    for (std::size_t k = 0; k < groups.size(); ++k) {
        ASSERT_EQ(nbrma_istart(w.e(0), groups[k].data(), static_cast<int>(groups[k].size()), 0, nullptr), NBRMA_OK);
        for (int target : groups[k])
            ASSERT_EQ(w.record_op(0, target, static_cast<int>(k + 1)), NBRMA_OK);
        completes.push_back(w.new_request(0));
        ASSERT_EQ(nbrma_icomplete(w.e(0), completes.back()), NBRMA_OK);
    }
    w.deliver_all();
    EXPECT_EQ(w.impl(0).deferred_count(), 5u) << "rule 4: the rest waits behind T0, which P1 has not granted";
    for (int k = 0; k < 5; ++k) {
        ASSERT_EQ(nbrma_ipost(w.e(1), &zero, 1, 0, nullptr), NBRMA_OK);
        ASSERT_EQ(nbrma_iwait(w.e(1), nullptr), NBRMA_OK);
    }
    w.deliver_all();
    for (request *r : completes)
        EXPECT_TRUE(done(r));
    // The 6th access epoch is the 5th toward P1 and the 2nd toward P2.
    const std::vector<std::pair<int, std::uint64_t>> expected = {{1, 1}, {1, 2}, {1, 3}, {1, 4}, {2, 1}, {1, 5}, {2, 2}};
    std::vector<std::pair<int, std::uint64_t>> sorted_performed = performed;
    std::sort(sorted_performed.begin(), sorted_performed.end());
    std::vector<std::pair<int, std::uint64_t>> sorted_expected = expected;
    std::sort(sorted_expected.begin(), sorted_expected.end());
    EXPECT_EQ(sorted_performed, sorted_expected);
    EXPECT_EQ(w.impl(0).triple(1).accesses_requested, 5u);
    EXPECT_EQ(w.impl(0).triple(2).accesses_requested, 2u);
    EXPECT_EQ(w.impl(1).triple(0).exposures_opened, 5u);
    for (int r = 0; r < 3; ++r)
        EXPECT_FALSE(nbrma_has_pending_epochs(w.e(r))) << r;
}

// --- rule 4: serial activation; overlapping epochs stay concurrent -----------------

TEST_F(two_procs, next_epoch_activates_only_after_the_previous_completed)
{
    const int zero = 0, one = 1;
    ASSERT_EQ(nbrma_istart(w.e(0), &one, 1, 0, nullptr), NBRMA_OK);
    ASSERT_EQ(nbrma_icomplete(w.e(0), nullptr), NBRMA_OK);
    ASSERT_EQ(nbrma_ipost(w.e(0), &one, 1, 0, nullptr), NBRMA_OK);
    std::size_t deferred = 0, active = 0;
    ASSERT_EQ(nbrma_epoch_counts(w.e(0), &deferred, &active), NBRMA_OK);
    EXPECT_EQ(deferred, 1u);
    EXPECT_EQ(active, 1u);
    EXPECT_EQ(w.count_in_flight(kind_from_to(msg_kind::grant, 0, 1)), 0u) << "deferred exposure granted early";
    ASSERT_EQ(nbrma_ipost(w.e(1), &zero, 1, 0, nullptr), NBRMA_OK);
    ASSERT_EQ(nbrma_iwait(w.e(1), nullptr), NBRMA_OK);
    ASSERT_TRUE(w.deliver_first(kind_from_to(msg_kind::grant, 1, 0)));
    EXPECT_EQ(w.impl(0).deferred_count(), 0u) << "the access epoch completed, the exposure follows";
    EXPECT_EQ(w.count_in_flight(kind_from_to(msg_kind::grant, 0, 1)), 1u);
}

TEST_F(two_procs, epochs_open_together_are_active_together)
{
    // Blocking post; start; complete; wait on both sides needs both epochs of a
    // process active at once, or it deadlocks.
    const int zero = 0, one = 1;
    const int peer[] = {one, zero};
    for (int r = 0; r < 2; ++r) {
        ASSERT_EQ(nbrma_ipost(w.e(r), &peer[r], 1, 0, nullptr), NBRMA_OK);
        ASSERT_EQ(nbrma_istart(w.e(r), &peer[r], 1, 0, nullptr), NBRMA_OK);
        EXPECT_EQ(w.impl(r).deferred_count(), 0u);
        EXPECT_EQ(w.impl(r).active_count(), 2u);
    }
    request *complete[2], *wait[2];
    for (int r = 0; r < 2; ++r) {
        ASSERT_EQ(w.record_op(r, peer[r], 0), NBRMA_OK);
        complete[r] = w.new_request(r);
        wait[r] = w.new_request(r);
        ASSERT_EQ(nbrma_icomplete(w.e(r), complete[r]), NBRMA_OK);
    }
    w.deliver_all();
    for (int r = 0; r < 2; ++r) {
        EXPECT_TRUE(done(complete[r]));
        ASSERT_EQ(nbrma_iwait(w.e(r), wait[r]), NBRMA_OK);
        EXPECT_TRUE(done(wait[r]));
    }
}

TEST_F(two_procs, locks_toward_several_targets_overlap)
{
    ASSERT_EQ(nbrma_ilock(w.e(0), NBRMA_LOCK_EXCLUSIVE, 1, 0, nullptr), NBRMA_OK);
    ASSERT_EQ(nbrma_ilock(w.e(0), NBRMA_LOCK_EXCLUSIVE, 0, 0, nullptr), NBRMA_OK);
    EXPECT_EQ(w.impl(0).deferred_count(), 0u);
    EXPECT_EQ(w.count_in_flight(kind_from_to(msg_kind::lock_request, 0, 1)), 1u);
    request *u1 = w.new_request(0), *u0 = w.new_request(0);
    ASSERT_EQ(nbrma_iunlock(w.e(0), 1, u1), NBRMA_OK);
    ASSERT_EQ(nbrma_iunlock(w.e(0), 0, u0), NBRMA_OK);
    EXPECT_TRUE(done(u0)) << "self lock granted through the loopback";
    w.deliver_all();
    EXPECT_TRUE(done(u1));
}

// --- rule 5: a fence that closes an epoch is a barrier, without blocking -------------

TEST_F(three_procs, fence_activates_next_epoch_after_all_arrivals)
{
    std::vector<request *> first(3), second(3);
    for (int r = 0; r < 3; ++r) {
        first[r] = w.new_request(r);
        ASSERT_EQ(nbrma_ifence(w.e(r), 0, first[r]), NBRMA_OK);
    }
    w.deliver_all();
    for (int r = 0; r < 3; ++r)
        EXPECT_TRUE(done(first[r]));
    sim_op *op01 = nullptr, *late = nullptr;
    ASSERT_EQ(w.record_op(0, 1, 0, &op01), NBRMA_OK);
    EXPECT_TRUE(op01->issued);
    for (int r = 0; r < 3; ++r) {
        second[r] = w.new_request(r);
        ASSERT_EQ(nbrma_ifence(w.e(r), 0, second[r]), NBRMA_OK);  // returns at once
    }
    ASSERT_EQ(w.record_op(0, 2, 1, &late), NBRMA_OK);
    EXPECT_FALSE(late->issued) << "epoch 2 is deferred behind the barrier";
    // Everything except P2's arrivals.
    while (w.deliver_first([](const message &m) { return !(m.kind == msg_kind::fence_arrival && m.from == 2); }))
        ;
    EXPECT_FALSE(done(second[0]));
    EXPECT_FALSE(done(second[1]));
    EXPECT_FALSE(late->issued);
    EXPECT_TRUE(op01->acked);
    w.deliver_all();
    for (int r = 0; r < 3; ++r)
        EXPECT_TRUE(done(second[r]));
    EXPECT_TRUE(late->acked);
    EXPECT_EQ(w.impl(0).fence_barriers_passed(), 2u);
}

TEST_F(two_procs, unused_fence_epoch_is_tentative)
{
    // MPI_Win_fence(0) followed by other epochs, or by MPI_Win_free, without
    // any operation in between: allowed, as in MPICH.
    for (int r = 0; r < 2; ++r)
        ASSERT_EQ(nbrma_ifence(w.e(r), 0, nullptr), NBRMA_OK);
    w.deliver_all();
    EXPECT_EQ(nbrma_has_pending_epochs(w.e(0)), 0);
    ASSERT_EQ(nbrma_ilock(w.e(0), NBRMA_LOCK_SHARED, 1, 0, nullptr), NBRMA_OK);
    ASSERT_EQ(w.record_op(0, 1, 0), NBRMA_OK);
    ASSERT_EQ(nbrma_iunlock(w.e(0), 1, nullptr), NBRMA_OK);
    w.deliver_all();
    EXPECT_EQ(nbrma_has_pending_epochs(w.e(0)), 0);
    // A fence epoch with an operation in it is a real epoch.
    const int zero = 0;
    for (int r = 0; r < 2; ++r)
        ASSERT_EQ(nbrma_ifence(w.e(r), 0, nullptr), NBRMA_OK);
    w.deliver_all();
    ASSERT_EQ(w.record_op(1, 0, 0), NBRMA_OK);
    EXPECT_EQ(nbrma_has_pending_epochs(w.e(1)), 1);
    EXPECT_EQ(nbrma_istart(w.e(1), &zero, 1, 0, nullptr), NBRMA_ERR_SYNC);
    EXPECT_EQ(nbrma_has_pending_epochs(w.e(0)), 0);
}

TEST_F(two_procs, fence_closing_waits_for_the_epoch_operations)
{
    for (int r = 0; r < 2; ++r)
        ASSERT_EQ(nbrma_ifence(w.e(r), 0, nullptr), NBRMA_OK);
    w.deliver_all();
    sim_op *op = nullptr;
    ASSERT_EQ(w.record_op(0, 1, 0, &op), NBRMA_OK);
    request *closing1 = w.new_request(1);
    ASSERT_EQ(nbrma_ifence(w.e(0), NBRMA_MODE_NOSUCCEED, nullptr), NBRMA_OK);
    ASSERT_EQ(nbrma_ifence(w.e(1), NBRMA_MODE_NOSUCCEED, closing1), NBRMA_OK);
    // P0's arrival may not leave before its operation completed remotely.
    EXPECT_EQ(w.count_in_flight(kind_from_to(msg_kind::fence_arrival, 0, 1)), 0u);
    while (w.deliver_first([](const message &m) { return m.kind != msg_kind::op_ack; }))
        ;
    EXPECT_TRUE(op->performed);
    EXPECT_FALSE(done(closing1));
    w.deliver_all();
    EXPECT_TRUE(done(closing1));
    EXPECT_FALSE(nbrma_has_pending_epochs(w.e(0)));
}

// Rule G3: a fence epoch has one slot for every process. Operations recorded
// while it waits for its barrier leave, when it passes, in recording order
// whatever their targets, each with its own target in its ticket; a ticket
// that names no process of the window is refused.
TEST_F(three_procs, a_fence_epoch_replays_its_operations_in_recording_order)
{
    for (int r = 0; r < 3; ++r)
        ASSERT_EQ(nbrma_ifence(w.e(r), 0, nullptr), NBRMA_OK);
    w.deliver_all();
    std::vector<request *> fence(3);
    fence[0] = w.new_request(0);
    ASSERT_EQ(nbrma_ifence(w.e(0), 0, fence[0]), NBRMA_OK);
    const int targets[] = {2, 1, 2, 0, 1};
    std::vector<sim_op *> recorded;
    for (int target : targets) {
        sim_op *op = nullptr;
        ASSERT_EQ(w.record_op(0, target, 0, &op), NBRMA_OK);
        EXPECT_FALSE(op->issued) << "deferred behind the barrier";
        recorded.push_back(op);
    }
    for (int r = 1; r < 3; ++r) {
        fence[r] = w.new_request(r);
        ASSERT_EQ(nbrma_ifence(w.e(r), 0, fence[r]), NBRMA_OK);
    }
    while (w.deliver_first([](const message &m) { return m.kind == msg_kind::fence_arrival; }))
        ;
    std::vector<std::pair<std::uint64_t, sim_op *>> sent;
    w.count_in_flight([&](const message &m) {
        if (m.kind == msg_kind::op && m.from == 0)
            sent.emplace_back(m.seq, m.op);
        return false;
    });
    std::sort(sent.begin(), sent.end());
    ASSERT_EQ(sent.size(), recorded.size());
    for (std::size_t i = 0; i < sent.size(); ++i) {
        EXPECT_EQ(sent[i].second, recorded[i]) << "issued in recording order";
        EXPECT_EQ(sent[i].second->ticket.target, targets[i]);
    }
    nbrma_op_ticket forged = recorded[0]->ticket;
    forged.target = 3;
    EXPECT_EQ(nbrma_op_completed(w.e(0), forged), NBRMA_ERR_ARG) << "no such process";
    forged.target = -2;
    EXPECT_EQ(nbrma_op_completed(w.e(0), forged), NBRMA_ERR_ARG);
    w.deliver_all();
    for (int r = 0; r < 3; ++r)
        EXPECT_TRUE(done(fence[r]));
    for (sim_op *op : recorded)
        EXPECT_TRUE(op->acked);
    ASSERT_EQ(nbrma_ifence(w.e(0), NBRMA_MODE_NOSUCCEED, nullptr), NBRMA_OK);
    for (int r = 1; r < 3; ++r)
        ASSERT_EQ(nbrma_ifence(w.e(r), NBRMA_MODE_NOSUCCEED, nullptr), NBRMA_OK);
    w.deliver_all();
    EXPECT_FALSE(nbrma_has_pending_epochs(w.e(0)));
}

// Rule F3: a fence called with nothing outstanding while the open fence
// epoch is active renews that epoch in place: it waits for its barrier with
// its request held and holds the window (pending), a second fence called
// before that barrier passed sends nothing until it does, and the renewed
// epoch grants every rank once its barrier passed.
TEST_F(two_procs, a_fence_with_nothing_outstanding_renews_the_open_epoch)
{
    for (int r = 0; r < 2; ++r)
        ASSERT_EQ(nbrma_ifence(w.e(r), 0, nullptr), NBRMA_OK);
    w.deliver_all();
    request *second = w.new_request(0), *third = w.new_request(0);
    ASSERT_EQ(nbrma_ifence(w.e(0), 0, second), NBRMA_OK);
    EXPECT_FALSE(done(second));
    EXPECT_EQ(nbrma_has_pending_epochs(w.e(0)), 1) << "its barrier has not passed";
    EXPECT_EQ(nbrma_fence_grants_every_rank(w.e(0)), 0);
    sim_op *early = nullptr;
    ASSERT_EQ(w.record_op(0, 1, 0, &early), NBRMA_OK);
    EXPECT_FALSE(early->issued) << "recorded before the barrier passed";
    ASSERT_EQ(nbrma_ifence(w.e(0), 0, third), NBRMA_OK);
    EXPECT_EQ(w.count_in_flight(kind_from_to(msg_kind::fence_arrival, 0, 1)), 1u)
        << "the third fence's arrival waits for the second's barrier";
    for (int r = 0; r < 2; ++r)
        ASSERT_EQ(nbrma_ifence(w.e(1), 0, nullptr), NBRMA_OK);
    w.deliver_all();
    EXPECT_TRUE(done(second));
    EXPECT_TRUE(done(third));
    EXPECT_TRUE(early->acked);
    EXPECT_EQ(w.impl(0).fence_barriers_passed(), 3u);
    EXPECT_EQ(nbrma_fence_grants_every_rank(w.e(0)), 1);
    EXPECT_EQ(nbrma_has_pending_epochs(w.e(0)), 0) << "an unused fence epoch whose barrier passed";
}

// --- the four reorder flags and their exclusions ----------------------------------

namespace {

struct flag_case {
    unsigned flag;
    bool first_is_access;   // otherwise exposure toward P1
    bool second_is_access;  // otherwise exposure toward P2
};

// Opens a first epoch toward P1 that cannot complete (P1 never answers) and a
// second one toward P2; returns whether the second was activated.
bool second_epoch_activates(unsigned flags, const flag_case &c)
{
    world w(3);
    const int one = 1, two = 2;
    EXPECT_EQ(nbrma_set_reorder_flags(w.e(0), flags), NBRMA_OK);
    if (c.first_is_access) {
        EXPECT_EQ(nbrma_istart(w.e(0), &one, 1, 0, nullptr), NBRMA_OK);
        EXPECT_EQ(nbrma_icomplete(w.e(0), nullptr), NBRMA_OK);
    } else {
        EXPECT_EQ(nbrma_ipost(w.e(0), &one, 1, 0, nullptr), NBRMA_OK);
        EXPECT_EQ(nbrma_iwait(w.e(0), nullptr), NBRMA_OK);
    }
    if (c.second_is_access)
        EXPECT_EQ(nbrma_istart(w.e(0), &two, 1, 0, nullptr), NBRMA_OK);
    else
        EXPECT_EQ(nbrma_ipost(w.e(0), &two, 1, 0, nullptr), NBRMA_OK);
    EXPECT_TRUE(w.failures().empty());
    return w.impl(0).deferred_count() == 0;
}

}  // namespace

TEST(reorder_flags, each_flag_relaxes_exactly_its_case)
{
    const flag_case cases[] = {
        {NBRMA_REORDER_ACCESS_AFTER_ACCESS, true, true},
        {NBRMA_REORDER_ACCESS_AFTER_EXPOSURE, false, true},
        {NBRMA_REORDER_EXPOSURE_AFTER_EXPOSURE, false, false},
        {NBRMA_REORDER_EXPOSURE_AFTER_ACCESS, true, false},
    };
    const unsigned all = 0xF;
    for (const flag_case &c : cases) {
        EXPECT_FALSE(second_epoch_activates(0, c)) << "flag " << c.flag << ": serial by default";
        EXPECT_TRUE(second_epoch_activates(c.flag, c)) << "flag " << c.flag;
        EXPECT_FALSE(second_epoch_activates(all & ~c.flag, c)) << "flag " << c.flag << ": the other flags do not relax it";
    }
}

TEST(reorder_flags, later_epoch_may_complete_first)
{
    world w(3);
    const int one = 1, two = 2, zero = 0;
    ASSERT_EQ(nbrma_set_reorder_flags(w.e(0), NBRMA_REORDER_ACCESS_AFTER_ACCESS), NBRMA_OK);
    request *first = w.new_request(0), *second = w.new_request(0);
    ASSERT_EQ(nbrma_istart(w.e(0), &one, 1, 0, nullptr), NBRMA_OK);
    ASSERT_EQ(w.record_op(0, 1, 1), NBRMA_OK);
    ASSERT_EQ(nbrma_icomplete(w.e(0), first), NBRMA_OK);
    ASSERT_EQ(nbrma_istart(w.e(0), &two, 1, 0, nullptr), NBRMA_OK);
    ASSERT_EQ(w.record_op(0, 2, 2), NBRMA_OK);
    ASSERT_EQ(nbrma_icomplete(w.e(0), second), NBRMA_OK);
    ASSERT_EQ(nbrma_ipost(w.e(2), &zero, 1, 0, nullptr), NBRMA_OK);
    ASSERT_EQ(nbrma_iwait(w.e(2), nullptr), NBRMA_OK);
    w.deliver_all();
    EXPECT_TRUE(done(second)) << "E(k+1) progressed and completed while E(k) waits for its target";
    EXPECT_FALSE(done(first));
    ASSERT_EQ(nbrma_ipost(w.e(1), &zero, 1, 0, nullptr), NBRMA_OK);
    ASSERT_EQ(nbrma_iwait(w.e(1), nullptr), NBRMA_OK);
    w.deliver_all();
    EXPECT_TRUE(done(first));
    EXPECT_TRUE(w.failures().empty());
}

TEST(reorder_flags, access_after_access_covers_lock_epochs)
{
    world w(3);
    ASSERT_EQ(nbrma_set_reorder_flags(w.e(0), NBRMA_REORDER_ACCESS_AFTER_ACCESS), NBRMA_OK);
    ASSERT_EQ(nbrma_ilock(w.e(0), NBRMA_LOCK_SHARED, 1, 0, nullptr), NBRMA_OK);
    ASSERT_EQ(w.record_op(0, 1, 0), NBRMA_OK);
    ASSERT_EQ(nbrma_iunlock(w.e(0), 1, nullptr), NBRMA_OK);
    ASSERT_EQ(nbrma_ilock(w.e(0), NBRMA_LOCK_SHARED, 2, 0, nullptr), NBRMA_OK);
    EXPECT_EQ(w.count_in_flight(kind_from_to(msg_kind::lock_request, 0, 2)), 1u);
    // But never two of my locks toward the same target at once.
    ASSERT_EQ(nbrma_iunlock(w.e(0), 2, nullptr), NBRMA_OK);
    ASSERT_EQ(nbrma_ilock(w.e(0), NBRMA_LOCK_SHARED, 1, 0, nullptr), NBRMA_OK);
    EXPECT_EQ(w.count_in_flight(kind_from_to(msg_kind::lock_request, 0, 1)), 1u);
    EXPECT_EQ(w.impl(0).deferred_count(), 1u);
    w.deliver_all();
    ASSERT_EQ(nbrma_iunlock(w.e(0), 1, nullptr), NBRMA_OK);
    w.deliver_all();
    EXPECT_FALSE(nbrma_has_pending_epochs(w.e(0)));
    EXPECT_TRUE(w.failures().empty());
}

// Rule F1: under A_A_A_R and A_A_E_R both, a lock epoch after a NOSUCCEED
// fence completes toward a ready peer while a late process has not reached
// the fence; under either flag alone, or none, it waits for the barrier.
TEST(reorder_flags, lock_epochs_overtake_a_fence_under_both_access_flags)
{
    const unsigned both = NBRMA_REORDER_ACCESS_AFTER_ACCESS | NBRMA_REORDER_ACCESS_AFTER_EXPOSURE;
    for (unsigned flags : {0u, unsigned(NBRMA_REORDER_ACCESS_AFTER_ACCESS),
                           unsigned(NBRMA_REORDER_ACCESS_AFTER_EXPOSURE), both, 0xFu}) {
        world w(3);
        ASSERT_EQ(nbrma_set_reorder_flags(w.e(0), flags), NBRMA_OK);
        for (int r = 0; r < 3; ++r)
            ASSERT_EQ(nbrma_ifence(w.e(r), NBRMA_MODE_NOPRECEDE, nullptr), NBRMA_OK);
        w.deliver_all();
        sim_op *fence_op = nullptr, *lock_op = nullptr;
        ASSERT_EQ(w.record_op(0, 2, 0, &fence_op), NBRMA_OK);  // the fence epoch holds an operation
        request *fence[3] = {w.new_request(0), w.new_request(1), w.new_request(2)};
        for (int r = 0; r < 2; ++r)  // P2 is late
            ASSERT_EQ(nbrma_ifence(w.e(r), NBRMA_MODE_NOSUCCEED, fence[r]), NBRMA_OK);
        request *unlocked = w.new_request(0);
        ASSERT_EQ(nbrma_ilock(w.e(0), NBRMA_LOCK_EXCLUSIVE, 1, 0, nullptr), NBRMA_OK);
        ASSERT_EQ(w.record_op(0, 1, 1, &lock_op), NBRMA_OK);
        ASSERT_EQ(nbrma_iunlock(w.e(0), 1, unlocked), NBRMA_OK);
        w.deliver_all();
        EXPECT_FALSE(done(fence[0]) || done(fence[1])) << "flags " << flags << ": the barrier waits for P2";
        EXPECT_TRUE(fence_op->acked) << "flags " << flags << ": the fence epoch ended before its arrival left";
        EXPECT_EQ(done(unlocked), (flags & both) == both) << "flags " << flags;
        EXPECT_EQ(lock_op->issued, (flags & both) == both) << "flags " << flags;
        ASSERT_EQ(nbrma_ifence(w.e(2), NBRMA_MODE_NOSUCCEED, fence[2]), NBRMA_OK);
        w.deliver_all();
        for (int r = 0; r < 3; ++r)
            EXPECT_TRUE(done(fence[r])) << "flags " << flags << ", P" << r;
        EXPECT_TRUE(done(unlocked) && lock_op->acked) << "flags " << flags;
        EXPECT_EQ(nbrma_has_pending_epochs(w.e(0)), 0);
        EXPECT_EQ(w.impl(0).fence_barriers_passed(), 2u);
        EXPECT_TRUE(w.failures().empty());
    }
}

// Rule F1 keeps the fence's semantics: a fence that holds operations, or is
// still open, does not activate before its barrier; an exposure never
// overtakes a fence; a fence never overtakes an earlier epoch.
TEST(reorder_flags, f1_lets_nothing_else_overtake_a_fence)
{
    const int zero = 0, one = 1;
    {  // exposure after a NOSUCCEED fence, every flag on
        world w(3);
        ASSERT_EQ(nbrma_set_reorder_flags(w.e(1), 0xF), NBRMA_OK);
        for (int r = 0; r < 3; ++r)
            ASSERT_EQ(nbrma_ifence(w.e(r), NBRMA_MODE_NOPRECEDE, nullptr), NBRMA_OK);
        w.deliver_all();
        for (int r = 0; r < 2; ++r)
            ASSERT_EQ(nbrma_ifence(w.e(r), NBRMA_MODE_NOSUCCEED, nullptr), NBRMA_OK);
        ASSERT_EQ(nbrma_ipost(w.e(1), &zero, 1, 0, nullptr), NBRMA_OK);
        ASSERT_EQ(nbrma_iwait(w.e(1), nullptr), NBRMA_OK);
        w.deliver_all();
        EXPECT_EQ(w.impl(1).deferred_count(), 1u) << "the exposure waits for the barrier";
        EXPECT_EQ(w.count_in_flight(kind_is(msg_kind::grant)), 0u);
        ASSERT_EQ(nbrma_ifence(w.e(2), NBRMA_MODE_NOSUCCEED, nullptr), NBRMA_OK);
        w.deliver_all();
        EXPECT_EQ(w.impl(1).deferred_count(), 0u);
    }
    {  // a fence still open (fence(0), not ended by another epoch) waits for its barrier
        world w(3);
        ASSERT_EQ(nbrma_set_reorder_flags(w.e(0), 0xF), NBRMA_OK);
        for (int r = 0; r < 3; ++r)
            ASSERT_EQ(nbrma_ifence(w.e(r), NBRMA_MODE_NOPRECEDE, nullptr), NBRMA_OK);
        w.deliver_all();
        request *open_fence = w.new_request(0);
        ASSERT_EQ(nbrma_ifence(w.e(0), 0, open_fence), NBRMA_OK);
        w.deliver_all();
        EXPECT_FALSE(done(open_fence));
        EXPECT_EQ(nbrma_has_pending_epochs(w.e(0)), 1) << "its barrier has not passed";
        // Ended by a lock epoch, it may, once that epoch is closed: the lock
        // waits for its target's arrival at the fence, not for the late P2.
        sim_op *op = nullptr;
        request *unlocked = w.new_request(0);
        ASSERT_EQ(nbrma_ilock(w.e(0), NBRMA_LOCK_SHARED, 1, 0, nullptr), NBRMA_OK);
        ASSERT_EQ(w.record_op(0, 1, 1, &op), NBRMA_OK);
        w.deliver_all();
        EXPECT_EQ(w.impl(0).deferred_count(), 1u) << "the open lock epoch waits";
        ASSERT_EQ(nbrma_iunlock(w.e(0), 1, unlocked), NBRMA_OK);
        w.deliver_all();
        EXPECT_EQ(w.impl(0).deferred_count(), 0u);
        EXPECT_FALSE(op->issued) << "P1 has not arrived at the fence";
        ASSERT_EQ(nbrma_ifence(w.e(1), NBRMA_MODE_NOSUCCEED, nullptr), NBRMA_OK);
        w.deliver_all();
        EXPECT_TRUE(op->issued && done(unlocked)) << "P1 arrived; P2 is still late";
        EXPECT_EQ(w.impl(0).fence_barriers_passed(), 1u);
    }
    {  // a fence after an access epoch waits for it, every flag on
        world w(2);
        ASSERT_EQ(nbrma_set_reorder_flags(w.e(0), 0xF), NBRMA_OK);
        ASSERT_EQ(nbrma_istart(w.e(0), &one, 1, 0, nullptr), NBRMA_OK);
        ASSERT_EQ(nbrma_icomplete(w.e(0), nullptr), NBRMA_OK);
        ASSERT_EQ(nbrma_ifence(w.e(0), NBRMA_MODE_NOSUCCEED, nullptr), NBRMA_OK);
        EXPECT_EQ(w.count_in_flight(kind_is(msg_kind::fence_arrival)), 0u) << "fence reached too early";
        EXPECT_EQ(w.impl(0).deferred_count(), 1u);
    }
}

TEST(reorder_flags, apart_from_f1_never_apply_next_to_fence_or_lock_all)
{
    const unsigned all = 0xF;
    const int one = 1;
    {  // access epoch, then lock_all
        world w(2);
        ASSERT_EQ(nbrma_set_reorder_flags(w.e(0), all), NBRMA_OK);
        ASSERT_EQ(nbrma_istart(w.e(0), &one, 1, 0, nullptr), NBRMA_OK);
        ASSERT_EQ(nbrma_icomplete(w.e(0), nullptr), NBRMA_OK);
        ASSERT_EQ(nbrma_ilock_all(w.e(0), 0, nullptr), NBRMA_OK);
        EXPECT_EQ(w.impl(0).deferred_count(), 1u);
    }
    {  // lock_all, then lock
        world w(2);
        ASSERT_EQ(nbrma_set_reorder_flags(w.e(0), all), NBRMA_OK);
        ASSERT_EQ(nbrma_ilock_all(w.e(0), 0, nullptr), NBRMA_OK);
        ASSERT_EQ(w.record_op(0, 1, 0), NBRMA_OK);
        ASSERT_EQ(nbrma_iunlock_all(w.e(0), nullptr), NBRMA_OK);
        ASSERT_EQ(nbrma_ilock(w.e(0), NBRMA_LOCK_SHARED, 0, 0, nullptr), NBRMA_OK);
        EXPECT_EQ(w.impl(0).deferred_count(), 1u);
        w.deliver_all();
        EXPECT_EQ(w.impl(0).deferred_count(), 0u);
    }
    {  // exposure, then fence; fence, then exposure
        world w(2);
        ASSERT_EQ(nbrma_set_reorder_flags(w.e(0), all), NBRMA_OK);
        ASSERT_EQ(nbrma_ipost(w.e(0), &one, 1, 0, nullptr), NBRMA_OK);
        ASSERT_EQ(nbrma_iwait(w.e(0), nullptr), NBRMA_OK);
        ASSERT_EQ(nbrma_ifence(w.e(0), NBRMA_MODE_NOSUCCEED, nullptr), NBRMA_OK);
        EXPECT_EQ(w.count_in_flight(kind_is(msg_kind::fence_arrival)), 0u) << "fence reached too early";
        ASSERT_EQ(nbrma_ipost(w.e(0), &one, 1, 0, nullptr), NBRMA_OK);
        EXPECT_EQ(w.impl(0).deferred_count(), 2u);
    }
}

// --- passive target ------------------------------------------------------------------

TEST_F(three_procs, exclusive_lock_excludes_and_self_lock_is_real)
{
    request *mine = w.new_request(0);
    ASSERT_EQ(nbrma_ilock(w.e(0), NBRMA_LOCK_EXCLUSIVE, 0, 0, nullptr), NBRMA_OK);
    EXPECT_TRUE(w.impl(0).locks().holds(0)) << "locking myself acquires my lock";
    ASSERT_EQ(nbrma_ilock(w.e(1), NBRMA_LOCK_SHARED, 0, 0, nullptr), NBRMA_OK);
    sim_op *op = nullptr;
    ASSERT_EQ(w.record_op(1, 0, 0, &op), NBRMA_OK);
    w.deliver_all();
    EXPECT_FALSE(op->issued) << "P1 was granted while P0 holds its own lock exclusively";
    ASSERT_EQ(nbrma_iunlock(w.e(0), 0, mine), NBRMA_OK);
    EXPECT_TRUE(done(mine));
    w.deliver_all();
    EXPECT_TRUE(op->acked);
}

TEST(passive_target, a_waiting_exclusive_lock_is_not_overtaken_by_shared_ones)
{
    world w(4);
    ASSERT_EQ(nbrma_ilock(w.e(1), NBRMA_LOCK_SHARED, 0, 0, nullptr), NBRMA_OK);
    w.deliver_all();
    ASSERT_EQ(nbrma_ilock(w.e(2), NBRMA_LOCK_EXCLUSIVE, 0, 0, nullptr), NBRMA_OK);
    w.deliver_all();
    ASSERT_EQ(nbrma_ilock(w.e(3), NBRMA_LOCK_SHARED, 0, 0, nullptr), NBRMA_OK);
    w.deliver_all();
    EXPECT_FALSE(w.impl(0).locks().holds(3)) << "shared request overtook a waiting exclusive one";
    EXPECT_EQ(w.impl(0).locks().waiting_count(), 2u);
    ASSERT_EQ(nbrma_iunlock(w.e(1), 0, nullptr), NBRMA_OK);
    w.deliver_all();
    EXPECT_EQ(w.impl(0).locks().exclusive_holder(), 2);
    EXPECT_FALSE(w.impl(0).locks().holds(3));
    ASSERT_EQ(nbrma_iunlock(w.e(2), 0, nullptr), NBRMA_OK);
    w.deliver_all();
    EXPECT_TRUE(w.impl(0).locks().holds(3));
    EXPECT_TRUE(w.failures().empty());
}

TEST_F(three_procs, shared_unlock_does_not_wait_for_other_holders)
{
    request *u0 = w.new_request(0);
    ASSERT_EQ(nbrma_ilock(w.e(0), NBRMA_LOCK_SHARED, 2, 0, nullptr), NBRMA_OK);
    ASSERT_EQ(nbrma_ilock(w.e(1), NBRMA_LOCK_SHARED, 2, 0, nullptr), NBRMA_OK);
    w.deliver_all();
    EXPECT_EQ(w.impl(2).locks().shared_holder_count(), 2u);
    ASSERT_EQ(w.record_op(0, 2, 0), NBRMA_OK);
    ASSERT_EQ(nbrma_iunlock(w.e(0), 2, u0), NBRMA_OK);
    w.deliver_all();
    EXPECT_TRUE(done(u0)) << "P1 still holds its shared lock; P0's unlock must not wait for it";
    EXPECT_TRUE(w.impl(2).locks().holds(1));
}

TEST_F(two_procs, no_exposure_while_locked_and_no_lock_while_exposed)
{
    const int zero = 0;
    ASSERT_EQ(nbrma_ilock(w.e(0), NBRMA_LOCK_EXCLUSIVE, 1, 0, nullptr), NBRMA_OK);
    w.deliver_all();
    ASSERT_TRUE(w.impl(1).locks().holds(0));
    ASSERT_EQ(nbrma_ipost(w.e(1), &zero, 1, 0, nullptr), NBRMA_OK);
    EXPECT_EQ(w.impl(1).deferred_count(), 1u) << "window exposed while locked";
    ASSERT_EQ(nbrma_iunlock(w.e(0), 1, nullptr), NBRMA_OK);
    w.deliver_all();
    EXPECT_EQ(w.impl(1).active_exposure_count(), 1u);
    // Now P0's next lock waits for the exposure to end, and its id follows
    // the exposure's in the counter.
    const int one = 1;
    ASSERT_EQ(nbrma_istart(w.e(0), &one, 1, 0, nullptr), NBRMA_OK);
    ASSERT_EQ(nbrma_icomplete(w.e(0), nullptr), NBRMA_OK);
    ASSERT_EQ(nbrma_ilock(w.e(0), NBRMA_LOCK_SHARED, 1, 0, nullptr), NBRMA_OK);
    ASSERT_EQ(nbrma_iunlock(w.e(0), 1, nullptr), NBRMA_OK);
    w.deliver_all();
    EXPECT_EQ(w.impl(1).locks().waiting_count(), 1u) << "lock granted while exposed";
    ASSERT_EQ(nbrma_iwait(w.e(1), nullptr), NBRMA_OK);
    w.deliver_all();
    EXPECT_EQ(w.impl(1).triple(0).exposures_opened, 3u);
    EXPECT_FALSE(nbrma_has_pending_epochs(w.e(0)));
    EXPECT_FALSE(nbrma_has_pending_epochs(w.e(1)));
}

TEST_F(two_procs, lock_grants_follow_the_origin_access_order)
{
    // Rule 3 for locks: P0's lock (access id 2) reaches P1 before P1 even
    // posted for P0's access epoch (id 1). Granting it first would hand P0's
    // PSCW epoch a grant meant for the lock.
    const int zero = 0, one = 1;
    ASSERT_EQ(nbrma_set_reorder_flags(w.e(0), NBRMA_REORDER_ACCESS_AFTER_ACCESS), NBRMA_OK);
    ASSERT_EQ(nbrma_istart(w.e(0), &one, 1, 0, nullptr), NBRMA_OK);
    ASSERT_EQ(w.record_op(0, 1, 1), NBRMA_OK);
    ASSERT_EQ(nbrma_icomplete(w.e(0), nullptr), NBRMA_OK);
    ASSERT_EQ(nbrma_ilock(w.e(0), NBRMA_LOCK_EXCLUSIVE, 1, 0, nullptr), NBRMA_OK);
    ASSERT_EQ(w.record_op(0, 1, 2), NBRMA_OK);
    ASSERT_EQ(nbrma_iunlock(w.e(0), 1, nullptr), NBRMA_OK);
    w.deliver_all();
    EXPECT_EQ(w.impl(1).locks().waiting_count(), 1u);
    EXPECT_EQ(w.impl(1).triple(0).exposures_opened, 0u);
    ASSERT_EQ(nbrma_ipost(w.e(1), &zero, 1, 0, nullptr), NBRMA_OK);
    ASSERT_EQ(nbrma_iwait(w.e(1), nullptr), NBRMA_OK);
    w.deliver_all();
    EXPECT_EQ(w.impl(1).triple(0).exposures_opened, 2u);
    EXPECT_FALSE(nbrma_has_pending_epochs(w.e(0)));
    EXPECT_FALSE(nbrma_has_pending_epochs(w.e(1)));
}

TEST_F(three_procs, a_waiting_lock_request_keeps_its_id_from_a_reordered_exposure)
{
    // P0's lock request reaches P1 while P1 is exposed to P2 and waits. P1
    // then posts to P0; E_A_E_R lets that exposure activate beside the first,
    // but P0 requested the lock first: the exposure must not take the lock's
    // access id (P0 would take the PSCW grant for its lock and put into a
    // window it does not hold).
    const int zero = 0, one = 1, two = 2;
    ASSERT_EQ(nbrma_set_reorder_flags(w.e(1), NBRMA_REORDER_EXPOSURE_AFTER_EXPOSURE), NBRMA_OK);
    ASSERT_EQ(nbrma_ipost(w.e(1), &two, 1, 0, nullptr), NBRMA_OK);
    ASSERT_EQ(nbrma_iwait(w.e(1), nullptr), NBRMA_OK);
    ASSERT_EQ(nbrma_ilock(w.e(0), NBRMA_LOCK_EXCLUSIVE, 1, 0, nullptr), NBRMA_OK);
    ASSERT_EQ(w.record_op(0, 1, 1), NBRMA_OK);
    ASSERT_EQ(nbrma_iunlock(w.e(0), 1, nullptr), NBRMA_OK);
    w.deliver_all();
    ASSERT_EQ(w.impl(1).locks().waiting_count(), 1u) << "lock granted while exposed";
    ASSERT_EQ(nbrma_ipost(w.e(1), &zero, 1, 0, nullptr), NBRMA_OK);
    ASSERT_EQ(nbrma_iwait(w.e(1), nullptr), NBRMA_OK);
    w.deliver_all();
    EXPECT_EQ(w.impl(1).triple(0).exposures_opened, 0u) << "the exposure took the lock's id";
    EXPECT_EQ(w.impl(1).active_exposure_count(), 1u);
    // P2's epoch ends the first exposure: the lock, then the second exposure.
    ASSERT_EQ(nbrma_istart(w.e(2), &one, 1, 0, nullptr), NBRMA_OK);
    ASSERT_EQ(nbrma_icomplete(w.e(2), nullptr), NBRMA_OK);
    w.deliver_all();
    EXPECT_FALSE(nbrma_has_pending_epochs(w.e(0))) << "the lock epoch did not end";
    EXPECT_EQ(w.impl(1).triple(0).exposures_opened, 2u);
    ASSERT_EQ(nbrma_istart(w.e(0), &one, 1, 0, nullptr), NBRMA_OK);
    ASSERT_EQ(w.record_op(0, 1, 2), NBRMA_OK);
    ASSERT_EQ(nbrma_icomplete(w.e(0), nullptr), NBRMA_OK);
    w.deliver_all();
    for (int r = 0; r < 3; ++r)
        EXPECT_FALSE(nbrma_has_pending_epochs(w.e(r))) << "rank " << r;
}

TEST_F(two_procs, nocheck_lock_sends_nothing)
{
    ASSERT_EQ(nbrma_ilock(w.e(0), NBRMA_LOCK_EXCLUSIVE, 1, NBRMA_MODE_NOCHECK, nullptr), NBRMA_OK);
    sim_op *op = nullptr;
    ASSERT_EQ(w.record_op(0, 1, 0, &op), NBRMA_OK);
    EXPECT_TRUE(op->issued);
    request *unlock = w.new_request(0);
    ASSERT_EQ(nbrma_iunlock(w.e(0), 1, unlock), NBRMA_OK);
    w.deliver_all();
    EXPECT_TRUE(done(unlock));
    EXPECT_EQ(w.impl(0).triple(1).accesses_requested, 0u);
    EXPECT_EQ(w.impl(1).triple(0).exposures_opened, 0u);
}

// --- operations issued without a record ------------------------------------------

TEST_F(two_procs, direct_issue_only_in_an_active_granted_epoch)
{
    nbrma_op_ticket ticket{};
    int issued = -1;
    EXPECT_EQ(nbrma_op_issue_direct(w.e(0), 1, 1, &ticket, &issued), NBRMA_ERR_SYNC) << "no epoch";
    EXPECT_EQ(nbrma_op_issue_direct(w.e(0), 7, 1, &ticket, &issued), NBRMA_ERR_RANK);
    EXPECT_EQ(nbrma_op_issue_direct(w.e(0), 1, 1, nullptr, &issued), NBRMA_ERR_ARG);
    ASSERT_EQ(nbrma_ilock(w.e(0), NBRMA_LOCK_EXCLUSIVE, 1, 0, nullptr), NBRMA_OK);
    ASSERT_EQ(nbrma_op_issue_direct(w.e(0), 1, 1, &ticket, &issued), NBRMA_OK);
    EXPECT_EQ(issued, 0) << "not granted yet: the caller must record the operation";
    w.deliver_all();  // lock request, grant
    ASSERT_EQ(nbrma_op_issue_direct(w.e(0), 1, 1, &ticket, &issued), NBRMA_OK);
    ASSERT_EQ(issued, 1);
    EXPECT_EQ(ticket.target, 1);
    // The direct operation counts like a recorded one: flush and unlock wait for it.
    request *flush = w.new_request(0);
    request *unlock = w.new_request(0);
    ASSERT_EQ(nbrma_iflush(w.e(0), 1, 0, flush), NBRMA_OK);
    ASSERT_EQ(nbrma_iunlock(w.e(0), 1, unlock), NBRMA_OK);
    EXPECT_EQ(w.count_in_flight(kind_is(msg_kind::lock_release)), 0u) << "no release before the operation completed";
    EXPECT_FALSE(done(flush));
    EXPECT_FALSE(done(unlock));
    ASSERT_EQ(nbrma_op_completed(w.e(0), ticket), NBRMA_OK);
    EXPECT_TRUE(done(flush));
    EXPECT_EQ(w.count_in_flight(kind_is(msg_kind::lock_release)), 1u);
    w.deliver_all();
    EXPECT_TRUE(done(unlock));
    EXPECT_FALSE(nbrma_has_pending_epochs(w.e(0)));
}

// The glue issues operations on a granted epoch without telling the engine and
// hands them over as one batch before the next call that depends on them.
TEST_F(two_procs, a_direct_batch_counts_as_its_operations)
{
    nbrma_op_ticket ticket{};
    int issued = -1;
    ASSERT_EQ(nbrma_ilock_all(w.e(0), 0, nullptr), NBRMA_OK);
    w.deliver_all();
    ASSERT_EQ(nbrma_op_issue_direct(w.e(0), 1, 1, &ticket, &issued), NBRMA_OK);
    ASSERT_EQ(issued, 1);
    EXPECT_EQ(nbrma_op_issue_direct(w.e(0), 1, 0, &ticket, &issued), NBRMA_ERR_ARG) << "an empty batch";
    nbrma_op_ticket batch{};
    ASSERT_EQ(nbrma_op_issue_direct(w.e(0), 1, 5, &batch, &issued), NBRMA_OK);
    ASSERT_EQ(issued, 1);
    EXPECT_EQ(batch.count, 5u);
    EXPECT_GT(batch.age, ticket.age);
    request *flush = w.new_request(0);
    ASSERT_EQ(nbrma_iflush(w.e(0), 1, 0, flush), NBRMA_OK);
    nbrma_op_ticket later{};
    ASSERT_EQ(nbrma_op_issue_direct(w.e(0), 1, 3, &later, &issued), NBRMA_OK);
    ASSERT_EQ(nbrma_op_completed(w.e(0), ticket), NBRMA_OK);
    EXPECT_FALSE(done(flush)) << "five older operations are outstanding";
    ASSERT_EQ(nbrma_op_completed(w.e(0), batch), NBRMA_OK);
    EXPECT_TRUE(done(flush)) << "the newer batch does not delay it";
    int ready = -1;
    ASSERT_EQ(nbrma_flush_ready(w.e(0), 1, 0, &ready), NBRMA_OK);
    EXPECT_EQ(ready, 0) << "three operations of the later batch";
    request *unlock = w.new_request(0);
    ASSERT_EQ(nbrma_iunlock_all(w.e(0), unlock), NBRMA_OK);
    w.deliver_all();
    EXPECT_FALSE(done(unlock));
    ASSERT_EQ(nbrma_op_completed(w.e(0), later), NBRMA_OK);
    w.deliver_all();
    EXPECT_TRUE(done(unlock));
    EXPECT_EQ(nbrma_op_completed(w.e(0), later), NBRMA_ERR_ARG) << "reported twice";
    EXPECT_FALSE(nbrma_has_pending_epochs(w.e(0)));
}

// Rule R10 for counted operations (nbrma_op_performed): an operation
// performed at its target when its call returned leaves the counts at once,
// whether anything waits for it (a flush, its closed epoch) or not.
TEST_F(two_procs, an_operation_performed_at_return_leaves_its_counts_at_once)
{
    nbrma_op_ticket quiet{}, flushed{}, closing{};
    int issued = -1, ready = -1;
    ASSERT_EQ(nbrma_ilock(w.e(0), NBRMA_LOCK_EXCLUSIVE, 1, 0, nullptr), NBRMA_OK);
    w.deliver_all();  // lock request, grant
    ASSERT_EQ(nbrma_op_issue_direct(w.e(0), 1, 1, &quiet, &issued), NBRMA_OK);
    ASSERT_EQ(issued, 1);
    ASSERT_EQ(nbrma_flush_ready(w.e(0), 1, 0, &ready), NBRMA_OK);
    EXPECT_EQ(ready, 0);
    // nothing waits: no settling, but the counts drop
    ASSERT_EQ(nbrma_op_performed(w.e(0), quiet), NBRMA_OK);
    ASSERT_EQ(nbrma_flush_ready(w.e(0), 1, 0, &ready), NBRMA_OK);
    EXPECT_EQ(ready, 1) << "nothing outstanding for a remote flush";
    ASSERT_EQ(nbrma_flush_ready(w.e(0), 1, 1, &ready), NBRMA_OK);
    EXPECT_EQ(ready, 1) << "nor for a local one";
    EXPECT_EQ(nbrma_op_performed(w.e(0), quiet), NBRMA_ERR_ARG) << "reported twice";
    // a flush made after the count (another thread's) waits for it
    ASSERT_EQ(nbrma_op_issue_direct(w.e(0), 1, 1, &flushed, &issued), NBRMA_OK);
    request *flush = w.new_request(0);
    ASSERT_EQ(nbrma_iflush(w.e(0), 1, 0, flush), NBRMA_OK);
    EXPECT_FALSE(done(flush));
    ASSERT_EQ(nbrma_op_performed(w.e(0), flushed), NBRMA_OK);
    EXPECT_TRUE(done(flush));
    // an epoch closed after the count ends once the operation is reported
    ASSERT_EQ(nbrma_op_issue_direct(w.e(0), 1, 1, &closing, &issued), NBRMA_OK);
    request *unlock = w.new_request(0);
    ASSERT_EQ(nbrma_iunlock(w.e(0), 1, unlock), NBRMA_OK);
    EXPECT_EQ(w.count_in_flight(kind_is(msg_kind::lock_release)), 0u);
    ASSERT_EQ(nbrma_op_performed(w.e(0), closing), NBRMA_OK);
    EXPECT_EQ(w.count_in_flight(kind_is(msg_kind::lock_release)), 1u);
    w.deliver_all();
    EXPECT_TRUE(done(unlock));
    EXPECT_FALSE(nbrma_has_pending_epochs(w.e(0)));
    EXPECT_EQ(nbrma_op_performed(nullptr, closing), NBRMA_ERR_ARG);
}

// A fence epoch used only by operations performed at return is a used fence
// (not tentative) and its closing fence passes without any completion report.
TEST_F(two_procs, a_fence_of_operations_performed_at_return_passes_at_once)
{
    for (int r = 0; r < 2; ++r)
        ASSERT_EQ(nbrma_ifence(w.e(r), 0, nullptr), NBRMA_OK);
    w.deliver_all();
    nbrma_op_ticket ticket{};
    int issued = -1;
    ASSERT_EQ(nbrma_op_issue_direct(w.e(0), 1, 1, &ticket, &issued), NBRMA_OK);
    ASSERT_EQ(issued, 1);
    ASSERT_EQ(nbrma_op_performed(w.e(0), ticket), NBRMA_OK);
    EXPECT_EQ(nbrma_ilock(w.e(0), NBRMA_LOCK_SHARED, 1, 0, nullptr), NBRMA_ERR_SYNC)
        << "the fence epoch was used: no other epoch may follow it without a fence";
    request *fence[2] = {w.new_request(0), w.new_request(1)};
    for (int r = 0; r < 2; ++r)
        ASSERT_EQ(nbrma_ifence(w.e(r), NBRMA_MODE_NOSUCCEED, fence[r]), NBRMA_OK);
    w.deliver_all();
    EXPECT_TRUE(done(fence[0]));
    EXPECT_TRUE(done(fence[1]));
}

// Rule G1: only an open fence epoch whose barrier passed grants every rank;
// the first operation, which asks the engine (G2), makes it a used epoch.
TEST_F(two_procs, a_fence_epoch_grants_every_rank_once_its_barrier_passed)
{
    nbrma_op_ticket ticket{};
    int issued = -1;
    EXPECT_EQ(nbrma_fence_grants_every_rank(w.e(0)), 0);
    ASSERT_EQ(nbrma_ifence(w.e(0), 0, nullptr), NBRMA_OK);
    EXPECT_EQ(nbrma_fence_grants_every_rank(w.e(0)), 0) << "the barrier has not passed";
    ASSERT_EQ(nbrma_ifence(w.e(1), 0, nullptr), NBRMA_OK);
    w.deliver_all();
    EXPECT_EQ(nbrma_fence_grants_every_rank(w.e(0)), 1);
    EXPECT_EQ(nbrma_fence_grants_every_rank(w.e(1)), 1);
    EXPECT_EQ(nbrma_has_open_epochs(w.e(0)), 0) << "tentative until used";
    ASSERT_EQ(nbrma_op_issue_first(w.e(0), 1, &ticket, &issued), NBRMA_OK);
    ASSERT_EQ(issued, 1);
    EXPECT_EQ(ticket.count, 0u);
    EXPECT_EQ(nbrma_has_open_epochs(w.e(0)), 1);
    EXPECT_EQ(nbrma_ilock(w.e(0), NBRMA_LOCK_SHARED, 1, 0, nullptr), NBRMA_ERR_SYNC)
        << "a used fence epoch is followed by a fence only";
    // rank 1's unused one may be ended by a lock epoch: no grant to every rank then
    ASSERT_EQ(nbrma_ilock(w.e(1), NBRMA_LOCK_SHARED, 0, 0, nullptr), NBRMA_OK);
    EXPECT_EQ(nbrma_fence_grants_every_rank(w.e(1)), 0);
    ASSERT_EQ(nbrma_iunlock(w.e(1), 0, nullptr), NBRMA_OK);
    ASSERT_EQ(nbrma_ifence(w.e(0), NBRMA_MODE_NOSUCCEED, nullptr), NBRMA_OK);
    EXPECT_EQ(nbrma_fence_grants_every_rank(w.e(0)), 0) << "NOSUCCEED opens nothing";
    w.deliver_all();
    EXPECT_EQ(nbrma_fence_grants_every_rank(w.e(0)), 0);
}

// Rule G2: the first operation without a request goes uncounted (ticket
// count 0) wherever its epoch is active and granted, but toward a peer in a
// PSCW access epoch, whose done must follow its operations (R5, R8): there
// it gets a ticket as with nbrma_op_issue_direct. Uncounted, it holds
// nothing back: the lock's release leaves at once.
TEST_F(two_procs, a_first_operation_goes_uncounted_but_in_an_access_epoch)
{
    const int zero = 0, one = 1;
    nbrma_op_ticket ticket{};
    int issued = -1, ready = -1;

    EXPECT_EQ(nbrma_op_issue_first(w.e(0), 1, &ticket, &issued), NBRMA_ERR_SYNC) << "no epoch";
    ASSERT_EQ(nbrma_ilock(w.e(0), NBRMA_LOCK_EXCLUSIVE, 1, 0, nullptr), NBRMA_OK);
    ASSERT_EQ(nbrma_op_issue_first(w.e(0), 1, &ticket, &issued), NBRMA_OK);
    EXPECT_EQ(issued, 0) << "the lock is not granted yet";
    w.deliver_all();  // lock request, grant
    ASSERT_EQ(nbrma_op_issue_first(w.e(0), 1, &ticket, &issued), NBRMA_OK);
    ASSERT_EQ(issued, 1);
    EXPECT_EQ(ticket.count, 0u);
    ASSERT_EQ(nbrma_flush_ready(w.e(0), 1, 0, &ready), NBRMA_OK);
    EXPECT_EQ(ready, 1) << "nothing counted";
    request *unlock = w.new_request(0);
    ASSERT_EQ(nbrma_iunlock(w.e(0), 1, unlock), NBRMA_OK);
    EXPECT_EQ(w.count_in_flight(kind_is(msg_kind::lock_release)), 1u);
    w.deliver_all();
    EXPECT_TRUE(done(unlock));

    ASSERT_EQ(nbrma_ipost(w.e(1), &zero, 1, 0, nullptr), NBRMA_OK);
    ASSERT_EQ(nbrma_istart(w.e(0), &one, 1, 0, nullptr), NBRMA_OK);
    w.deliver_all();  // the grant
    ASSERT_EQ(nbrma_op_issue_first(w.e(0), 1, &ticket, &issued), NBRMA_OK);
    ASSERT_EQ(issued, 1);
    EXPECT_EQ(ticket.count, 1u) << "a PSCW access epoch toward a peer counts it";
    EXPECT_EQ(nbrma_op_epoch_ends_by_notice(w.e(0), ticket), 1);
    request *complete = w.new_request(0), *wait = w.new_request(1);
    ASSERT_EQ(nbrma_icomplete(w.e(0), complete), NBRMA_OK);
    ASSERT_EQ(nbrma_iwait(w.e(1), wait), NBRMA_OK);
    w.deliver_all();
    EXPECT_FALSE(done(complete)) << "the done waits for the counted operation";
    ASSERT_EQ(nbrma_op_completed(w.e(0), ticket), NBRMA_OK);
    w.deliver_all();
    EXPECT_TRUE(done(complete) && done(wait));

    for (int r = 0; r < 2; ++r)
        ASSERT_EQ(nbrma_ifence(w.e(r), 0, nullptr), NBRMA_OK);
    w.deliver_all();
    ASSERT_EQ(nbrma_op_issue_first(w.e(0), 1, &ticket, &issued), NBRMA_OK);
    ASSERT_EQ(issued, 1);
    EXPECT_EQ(ticket.count, 0u);
    EXPECT_EQ(nbrma_has_open_epochs(w.e(0)), 1) << "the fence epoch is used";
    for (int r = 0; r < 2; ++r)
        ASSERT_EQ(nbrma_ifence(w.e(r), NBRMA_MODE_NOSUCCEED, nullptr), NBRMA_OK);
    w.deliver_all();
    EXPECT_FALSE(nbrma_has_pending_epochs(w.e(0)));
}

// Rule R5's question to the engine: which tickets' epochs end toward their
// target with a notice sent after the operations, and need nothing else of
// their remote completion. Only an access epoch (PSCW) toward another
// process: lock and lock_all epochs allow flushes and end with a release
// that need not follow the data, fence epochs with arrivals to everyone.
TEST_F(two_procs, only_access_epochs_toward_a_peer_end_by_a_notice)
{
    const int zero = 0, one = 1;
    nbrma_op_ticket ticket{};
    int issued = -1;
    ASSERT_EQ(nbrma_ipost(w.e(1), &zero, 1, 0, nullptr), NBRMA_OK);
    ASSERT_EQ(nbrma_istart(w.e(0), &one, 1, 0, nullptr), NBRMA_OK);
    w.deliver_all();  // the grant
    ASSERT_EQ(nbrma_op_issue_direct(w.e(0), 1, 1, &ticket, &issued), NBRMA_OK);
    ASSERT_EQ(issued, 1);
    EXPECT_EQ(nbrma_op_epoch_ends_by_notice(w.e(0), ticket), 1) << "PSCW access epoch";
    EXPECT_EQ(nbrma_op_epoch_ends_by_notice(nullptr, ticket), 0);
    request *complete = w.new_request(0), *wait = w.new_request(1);
    ASSERT_EQ(nbrma_icomplete(w.e(0), complete), NBRMA_OK);
    ASSERT_EQ(nbrma_iwait(w.e(1), wait), NBRMA_OK);
    ASSERT_EQ(nbrma_op_completed(w.e(0), ticket), NBRMA_OK);
    w.deliver_all();
    ASSERT_TRUE(done(complete) && done(wait));
    EXPECT_EQ(nbrma_op_epoch_ends_by_notice(w.e(0), ticket), 0) << "its epoch is gone";

    ASSERT_EQ(nbrma_ilock(w.e(0), NBRMA_LOCK_SHARED, 1, 0, nullptr), NBRMA_OK);
    w.deliver_all();
    ASSERT_EQ(nbrma_op_issue_direct(w.e(0), 1, 1, &ticket, &issued), NBRMA_OK);
    ASSERT_EQ(issued, 1);
    EXPECT_EQ(nbrma_op_epoch_ends_by_notice(w.e(0), ticket), 0) << "a lock epoch";
    ASSERT_EQ(nbrma_op_completed(w.e(0), ticket), NBRMA_OK);
    ASSERT_EQ(nbrma_iunlock(w.e(0), 1, nullptr), NBRMA_OK);
    w.deliver_all();

    ASSERT_EQ(nbrma_ilock_all(w.e(0), 0, nullptr), NBRMA_OK);
    w.deliver_all();
    for (int target : {0, 1}) {
        ASSERT_EQ(nbrma_op_issue_direct(w.e(0), target, 1, &ticket, &issued), NBRMA_OK);
        ASSERT_EQ(issued, 1);
        EXPECT_EQ(nbrma_op_epoch_ends_by_notice(w.e(0), ticket), 0) << "lock_all, target " << target;
        ASSERT_EQ(nbrma_op_completed(w.e(0), ticket), NBRMA_OK);
    }
    ASSERT_EQ(nbrma_iunlock_all(w.e(0), nullptr), NBRMA_OK);
    w.deliver_all();

    for (int p : {0, 1})
        ASSERT_EQ(nbrma_ifence(w.e(p), 0, nullptr), NBRMA_OK);
    w.deliver_all();
    ASSERT_EQ(nbrma_op_issue_direct(w.e(0), 1, 1, &ticket, &issued), NBRMA_OK);
    ASSERT_EQ(issued, 1);
    EXPECT_EQ(nbrma_op_epoch_ends_by_notice(w.e(0), ticket), 0) << "a fence epoch";
    ASSERT_EQ(nbrma_op_completed(w.e(0), ticket), NBRMA_OK);
    for (int p : {0, 1})
        ASSERT_EQ(nbrma_ifence(w.e(p), NBRMA_MODE_NOSUCCEED, nullptr), NBRMA_OK);
    w.deliver_all();
    EXPECT_FALSE(nbrma_has_pending_epochs(w.e(0)));
}

TEST_F(two_procs, flush_ready_tells_whether_a_flush_would_complete_at_once)
{
    int ready = -1;
    EXPECT_EQ(nbrma_flush_ready(w.e(0), 1, 0, &ready), NBRMA_ERR_SYNC) << "no passive epoch";
    EXPECT_EQ(ready, 0);
    EXPECT_EQ(nbrma_flush_ready(w.e(0), 5, 0, &ready), NBRMA_ERR_RANK);
    EXPECT_EQ(nbrma_flush_ready(w.e(0), 1, 0, nullptr), NBRMA_ERR_ARG);
    EXPECT_EQ(nbrma_flush_ready(nullptr, 1, 0, &ready), NBRMA_ERR_ARG);
    ASSERT_EQ(nbrma_ilock(w.e(0), NBRMA_LOCK_SHARED, 1, 0, nullptr), NBRMA_OK);
    sim_op *held = nullptr;
    ASSERT_EQ(w.record_op(0, 1, 0, &held), NBRMA_OK);
    ASSERT_EQ(nbrma_flush_ready(w.e(0), 1, 0, &ready), NBRMA_OK);
    EXPECT_EQ(ready, 0) << "an operation held until the grant is outstanding";
    w.deliver_all();  // grant, the operation and its completion
    ASSERT_EQ(nbrma_flush_ready(w.e(0), 1, 0, &ready), NBRMA_OK);
    EXPECT_EQ(ready, 1);
    nbrma_op_ticket ticket{};
    int issued = 0;
    ASSERT_EQ(nbrma_op_issue_direct(w.e(0), 1, 1, &ticket, &issued), NBRMA_OK);
    ASSERT_EQ(issued, 1);
    ASSERT_EQ(nbrma_flush_ready(w.e(0), 1, 1, &ready), NBRMA_OK);
    EXPECT_EQ(ready, 0) << "a directly issued operation is outstanding too";
    ASSERT_EQ(nbrma_flush_ready(w.e(0), NBRMA_ALL_RANKS, 0, &ready), NBRMA_OK);
    EXPECT_EQ(ready, 0);
    ASSERT_EQ(nbrma_op_completed(w.e(0), ticket), NBRMA_OK);
    ASSERT_EQ(nbrma_flush_ready(w.e(0), 1, 0, &ready), NBRMA_OK);
    EXPECT_EQ(ready, 1);
    request *unlock = w.new_request(0);
    ASSERT_EQ(nbrma_iunlock(w.e(0), 1, unlock), NBRMA_OK);
    w.deliver_all();
    EXPECT_TRUE(done(unlock));
}

// --- flush ages ---------------------------------------------------------------------

TEST_F(two_procs, flush_waits_for_older_operations_only)
{
    ASSERT_EQ(nbrma_ilock(w.e(0), NBRMA_LOCK_SHARED, 1, 0, nullptr), NBRMA_OK);
    w.deliver_all();
    sim_op *older1 = nullptr, *older2 = nullptr, *newer = nullptr;
    ASSERT_EQ(w.record_op(0, 1, 0, &older1), NBRMA_OK);
    ASSERT_EQ(w.record_op(0, 1, 0, &older2), NBRMA_OK);
    request *flush = w.new_request(0);
    ASSERT_EQ(nbrma_iflush(w.e(0), 1, 0, flush), NBRMA_OK);
    ASSERT_EQ(w.record_op(0, 1, 0, &newer), NBRMA_OK);
    flush->check_on_completion = [&] {
        return older1->acked && older2->acked ? std::string() : std::string("flush completed before an older op");
    };
    // Complete the newer operation first: it must not count.
    ASSERT_TRUE(w.deliver_first([&](const message &m) { return m.op == newer; }));
    ASSERT_TRUE(w.deliver_first([&](const message &m) { return m.op == newer; }));
    EXPECT_FALSE(done(flush));
    ASSERT_TRUE(w.deliver_first([&](const message &m) { return m.op == older2; }));
    ASSERT_TRUE(w.deliver_first([&](const message &m) { return m.op == older2; }));
    EXPECT_FALSE(done(flush));
    ASSERT_TRUE(w.deliver_first([&](const message &m) { return m.op == older1; }));
    ASSERT_TRUE(w.deliver_first([&](const message &m) { return m.op == older1; }));
    EXPECT_TRUE(done(flush));
}

TEST_F(two_procs, local_flush_waits_for_local_completion_only)
{
    w.enable_local_reports();
    ASSERT_EQ(nbrma_ilock(w.e(0), NBRMA_LOCK_SHARED, 1, 0, nullptr), NBRMA_OK);
    w.deliver_all();
    ASSERT_EQ(w.record_op(0, 1, 0), NBRMA_OK);
    request *local = w.new_request(0), *remote = w.new_request(0);
    ASSERT_EQ(nbrma_iflush(w.e(0), 1, 1, local), NBRMA_OK);
    ASSERT_EQ(nbrma_iflush(w.e(0), 1, 0, remote), NBRMA_OK);
    EXPECT_EQ(nbrma_set_local_completion_reports(w.e(0), 0), NBRMA_ERR_ARG) << "operations in flight";
    ASSERT_TRUE(w.deliver_first(kind_is(msg_kind::op_local)));
    EXPECT_TRUE(done(local));
    EXPECT_FALSE(done(remote));
    w.deliver_all();
    EXPECT_TRUE(done(remote));
}

TEST_F(two_procs, a_remote_completion_report_may_carry_the_local_one)
{
    w.enable_local_reports();
    ASSERT_EQ(nbrma_ilock(w.e(0), NBRMA_LOCK_SHARED, 1, 0, nullptr), NBRMA_OK);
    w.deliver_all();
    sim_op *op = nullptr;
    ASSERT_EQ(w.record_op(0, 1, 0, &op), NBRMA_OK);
    EXPECT_EQ(nbrma_local_flush_waiting(w.e(0)), 0);
    request *local = w.new_request(0), *remote = w.new_request(0);
    ASSERT_EQ(nbrma_iflush(w.e(0), 1, 0, remote), NBRMA_OK);
    EXPECT_EQ(nbrma_local_flush_waiting(w.e(0)), 0) << "a remote flush only";
    ASSERT_EQ(nbrma_iflush(w.e(0), 1, 1, local), NBRMA_OK);
    EXPECT_EQ(nbrma_local_flush_waiting(w.e(0)), 1);
    // the acknowledgement before the local report: one call reports both
    ASSERT_TRUE(w.deliver_first(kind_is(msg_kind::op)));
    EXPECT_FALSE(done(local));
    ASSERT_TRUE(w.deliver_first(kind_is(msg_kind::op_ack)));
    EXPECT_TRUE(op->local_done);
    EXPECT_TRUE(done(local));
    EXPECT_TRUE(done(remote));
    EXPECT_EQ(nbrma_local_flush_waiting(w.e(0)), 0);
    w.deliver_all();   // the late local report changes nothing
    EXPECT_TRUE(done(local) && done(remote));
    EXPECT_EQ(nbrma_op_completed_with_local(w.e(0), op->ticket), NBRMA_ERR_ARG) << "reported twice";
}

TEST_F(two_procs, without_local_reports_a_local_flush_waits_for_remote_completion)
{
    ASSERT_EQ(nbrma_ilock(w.e(0), NBRMA_LOCK_SHARED, 1, 0, nullptr), NBRMA_OK);
    w.deliver_all();
    sim_op *op = nullptr;
    ASSERT_EQ(w.record_op(0, 1, 0, &op), NBRMA_OK);
    EXPECT_EQ(nbrma_op_local_completed(w.e(0), op->ticket), NBRMA_ERR_ARG);
    request *local = w.new_request(0);
    ASSERT_EQ(nbrma_iflush(w.e(0), 1, 1, local), NBRMA_OK);
    ASSERT_TRUE(w.deliver_first(kind_is(msg_kind::op)));
    EXPECT_FALSE(done(local));
    w.deliver_all();
    EXPECT_TRUE(done(local));
}

TEST_F(three_procs, flush_toward_one_target_ignores_the_others)
{
    ASSERT_EQ(nbrma_ilock_all(w.e(0), 0, nullptr), NBRMA_OK);
    w.deliver_all();
    sim_op *to1 = nullptr, *to2 = nullptr;
    ASSERT_EQ(w.record_op(0, 1, 0, &to1), NBRMA_OK);
    ASSERT_EQ(w.record_op(0, 2, 0, &to2), NBRMA_OK);
    request *flush1 = w.new_request(0), *flush_all = w.new_request(0), *empty = w.new_request(0);
    ASSERT_EQ(nbrma_iflush(w.e(0), 1, 0, flush1), NBRMA_OK);
    ASSERT_EQ(nbrma_iflush(w.e(0), NBRMA_ALL_RANKS, 1, flush_all), NBRMA_OK);
    ASSERT_EQ(nbrma_iflush(w.e(0), 0, 0, empty), NBRMA_OK);
    EXPECT_TRUE(done(empty)) << "nothing older toward P0";
    while (w.deliver_first([&](const message &m) { return m.op == to1; }))
        ;
    EXPECT_TRUE(done(flush1));
    EXPECT_FALSE(done(flush_all));
    w.deliver_all();
    EXPECT_TRUE(done(flush_all));
}

TEST_F(two_procs, flush_counts_operations_still_waiting_for_the_lock)
{
    ASSERT_EQ(nbrma_ilock(w.e(0), NBRMA_LOCK_EXCLUSIVE, 1, 0, nullptr), NBRMA_OK);
    sim_op *op = nullptr;
    ASSERT_EQ(w.record_op(0, 1, 0, &op), NBRMA_OK);
    request *flush = w.new_request(0);
    ASSERT_EQ(nbrma_iflush(w.e(0), 1, 0, flush), NBRMA_OK);
    EXPECT_FALSE(op->issued);
    EXPECT_FALSE(done(flush));
    w.deliver_all();
    EXPECT_TRUE(op->acked);
    EXPECT_TRUE(done(flush));
}

// --- grants written into counter memory -------------------------------------------------

TEST(remote_write_grants, grants_are_seen_by_the_progress_sweep)
{
    world w(2, /*grants_as_writes=*/true);
    const int zero = 0, one = 1;
    ASSERT_EQ(nbrma_istart(w.e(0), &one, 1, 0, nullptr), NBRMA_OK);
    sim_op *op = nullptr;
    ASSERT_EQ(w.record_op(0, 1, 0, &op), NBRMA_OK);
    ASSERT_EQ(nbrma_ipost(w.e(1), &zero, 1, 0, nullptr), NBRMA_OK);
    ASSERT_TRUE(w.deliver_first(kind_is(msg_kind::grant)));
    EXPECT_EQ(w.impl(0).triple(1).granted(), 1u) << "the write landed in P0's triple";
    EXPECT_FALSE(op->issued) << "nobody looked yet";
    EXPECT_EQ(w.progress(0), 1);
    EXPECT_TRUE(op->issued);
    EXPECT_EQ(w.progress(0), 0);
    ASSERT_EQ(nbrma_icomplete(w.e(0), nullptr), NBRMA_OK);
    ASSERT_EQ(nbrma_iwait(w.e(1), nullptr), NBRMA_OK);
    w.deliver_all();
    EXPECT_FALSE(nbrma_has_pending_epochs(w.e(0)));
    EXPECT_FALSE(nbrma_has_pending_epochs(w.e(1)));
    EXPECT_TRUE(w.failures().empty());
}

// --- transport failures come back as return codes --------------------------------

namespace {

int failing_issue(void *, int, void *, nbrma_op_ticket) { return NBRMA_ERR_TRANSPORT_BASE + 7; }
int quiet_send(void *, int, uint64_t) { return NBRMA_OK; }
int quiet_lock_request(void *, int, uint64_t, int) { return NBRMA_OK; }
void quiet_complete(void *, void *, int) {}

}  // namespace

TEST(c_interface, transport_errors_are_returned_not_thrown)
{
    nbrma_transport t{};
    t.send_grant = quiet_send;
    t.send_done = quiet_send;
    t.send_lock_request = quiet_lock_request;
    t.send_lock_release = quiet_send;
    t.send_fence_arrival = quiet_send;
    t.issue_op = failing_issue;
    t.request_complete = quiet_complete;
    nbrma_engine *e = nullptr;
    ASSERT_EQ(nbrma_engine_create(0, 1, &t, &e), NBRMA_OK);
    ASSERT_EQ(nbrma_ilock_all(e, NBRMA_MODE_NOCHECK, nullptr), NBRMA_OK);
    EXPECT_EQ(nbrma_op_record(e, 0, nullptr), NBRMA_ERR_TRANSPORT_BASE + 7);
    nbrma_engine_free(e);
}

// --- notifications ordered behind the data ------------------------------------------

TEST(ordered_notifications, done_leaves_at_close_behind_the_data)
{
    world w(2, false, /*ordered_notifications=*/true);
    const int zero = 0, one = 1;
    request *complete = w.new_request(0), *wait = w.new_request(1);
    ASSERT_EQ(nbrma_ipost(w.e(1), &zero, 1, 0, nullptr), NBRMA_OK);
    ASSERT_EQ(nbrma_iwait(w.e(1), wait), NBRMA_OK);
    w.deliver_all();
    ASSERT_EQ(nbrma_istart(w.e(0), &one, 1, 0, nullptr), NBRMA_OK);
    sim_op *op = nullptr;
    ASSERT_EQ(w.record_op(0, 1, 0, &op), NBRMA_OK);
    ASSERT_EQ(nbrma_icomplete(w.e(0), complete), NBRMA_OK);
    EXPECT_EQ(w.count_in_flight(kind_from_to(msg_kind::done, 0, 1)), 1u) << "no completion report needed first";
    EXPECT_FALSE(done(complete)) << "the origin's buffers are not free yet";
    ASSERT_TRUE(w.deliver_first(kind_is(msg_kind::op)));
    ASSERT_TRUE(w.deliver_first(kind_is(msg_kind::done)));
    EXPECT_TRUE(done(wait)) << "the target is done without the origin making progress";
    EXPECT_FALSE(done(complete));
    w.deliver_all();
    EXPECT_TRUE(done(complete));
    EXPECT_TRUE(w.failures().empty());
}

TEST(ordered_notifications, lock_release_leaves_at_unlock)
{
    world w(2, false, true);
    request *unlock = w.new_request(0);
    ASSERT_EQ(nbrma_ilock(w.e(0), NBRMA_LOCK_EXCLUSIVE, 1, 0, nullptr), NBRMA_OK);
    w.deliver_all();
    ASSERT_EQ(w.record_op(0, 1, 0), NBRMA_OK);
    ASSERT_EQ(nbrma_iunlock(w.e(0), 1, unlock), NBRMA_OK);
    EXPECT_EQ(w.count_in_flight(kind_is(msg_kind::lock_release)), 1u);
    EXPECT_FALSE(w.deliverable(w.in_flight().size() - 1)) << "the release waits behind the operation";
    w.deliver_all();
    EXPECT_TRUE(done(unlock));
    EXPECT_FALSE(w.impl(1).locks().is_locked());
    EXPECT_TRUE(w.failures().empty());
}

// --- whole lock epochs (nbrma_transport.pack_lock_epoch) ------------------------

// Two lock epochs toward one target, the second closed while it waits behind
// the first: the first runs the lock protocol, the second travels whole with
// its lock request, is performed under the lock, and its grant completes it.
TEST(whole_lock_epochs, a_deferred_closed_epoch_goes_with_its_lock_request)
{
    world w(2, false, false, true);
    request *first = w.new_request(0), *second = w.new_request(0);
    sim_op *a = nullptr, *b = nullptr, *c = nullptr;
    ASSERT_EQ(nbrma_ilock(w.e(0), NBRMA_LOCK_EXCLUSIVE, 1, 0, nullptr), NBRMA_OK);
    ASSERT_EQ(w.record_op(0, 1, 1, &a), NBRMA_OK);
    ASSERT_EQ(nbrma_iunlock(w.e(0), 1, first), NBRMA_OK);
    ASSERT_EQ(nbrma_ilock(w.e(0), NBRMA_LOCK_EXCLUSIVE, 1, 0, nullptr), NBRMA_OK);
    ASSERT_EQ(w.record_op(0, 1, 2, &b), NBRMA_OK);
    ASSERT_EQ(w.record_op(0, 1, 2, &c), NBRMA_OK);
    ASSERT_EQ(nbrma_iunlock(w.e(0), 1, second), NBRMA_OK);
    EXPECT_EQ(w.impl(0).deferred_count(), 1u);
    EXPECT_EQ(w.whole_epochs_sent(), 0u) << "the first epoch was open at its activation";

    // the first epoch: grant, operation, its completion, release
    while (!done(first))
        ASSERT_TRUE(w.deliver_first([](const message &m) { return m.kind != msg_kind::lock_epoch; }));
    EXPECT_EQ(w.whole_epochs_sent(), 1u);
    EXPECT_EQ(w.count_in_flight(kind_is(msg_kind::lock_epoch)), 1u);
    EXPECT_FALSE(b->performed) << "the whole epoch waits for the release of the first";
    EXPECT_FALSE(done(second));

    w.deliver_all();
    EXPECT_TRUE(a->performed && b->performed && c->performed);
    EXPECT_TRUE(done(second));
    EXPECT_FALSE(w.impl(1).locks().is_locked()) << "the target released the lock itself";
    EXPECT_FALSE(nbrma_has_pending_epochs(w.e(0)));
    EXPECT_TRUE(w.failures().empty()) << w.failures().front();
}

// Toward myself the payload takes the loopback and the lock is really taken:
// another process's exclusive lock keeps the whole epoch waiting.
TEST(whole_lock_epochs, toward_myself_waits_for_the_lock_like_a_request)
{
    world w(2, false, false, true);
    request *first = w.new_request(0), *second = w.new_request(0);
    sim_op *op = nullptr;
    ASSERT_EQ(nbrma_ilock(w.e(1), NBRMA_LOCK_EXCLUSIVE, 0, 0, nullptr), NBRMA_OK);
    w.deliver_all();
    ASSERT_EQ(w.impl(0).locks().exclusive_holder(), 1);

    ASSERT_EQ(nbrma_ilock(w.e(0), NBRMA_LOCK_SHARED, 1, 0, nullptr), NBRMA_OK);
    ASSERT_EQ(nbrma_iunlock(w.e(0), 1, first), NBRMA_OK);
    ASSERT_EQ(nbrma_ilock(w.e(0), NBRMA_LOCK_EXCLUSIVE, 0, 0, nullptr), NBRMA_OK);
    ASSERT_EQ(w.record_op(0, 0, 1, &op), NBRMA_OK);
    ASSERT_EQ(nbrma_iunlock(w.e(0), 0, second), NBRMA_OK);
    w.deliver_all();
    EXPECT_TRUE(done(first));
    EXPECT_EQ(w.whole_epochs_sent(), 1u);
    EXPECT_FALSE(op->performed) << "performed while another process held the lock";
    EXPECT_FALSE(done(second));

    ASSERT_EQ(nbrma_iunlock(w.e(1), 0, nullptr), NBRMA_OK);
    w.deliver_all();
    EXPECT_TRUE(op->performed);
    EXPECT_TRUE(done(second));
    EXPECT_FALSE(w.impl(0).locks().is_locked());
    EXPECT_TRUE(w.failures().empty()) << w.failures().front();
}

// A flush waits for the operations of a whole epoch that are older than it,
// until the grant reports them performed (reorder lets a later epoch be open
// while the whole one is in flight).
TEST(whole_lock_epochs, flush_waits_for_older_operations_sent_whole)
{
    world w(3, false, false, true);
    ASSERT_EQ(nbrma_set_reorder_flags(w.e(0), NBRMA_REORDER_ACCESS_AFTER_ACCESS), NBRMA_OK);
    request *flush = w.new_request(0), *whole = w.new_request(0);
    sim_op *op = nullptr;
    // keep the first epoch toward 1 active, so that the second one is deferred
    ASSERT_EQ(nbrma_ilock(w.e(0), NBRMA_LOCK_EXCLUSIVE, 1, 0, nullptr), NBRMA_OK);
    ASSERT_EQ(nbrma_iunlock(w.e(0), 1, nullptr), NBRMA_OK);
    ASSERT_EQ(nbrma_ilock(w.e(0), NBRMA_LOCK_EXCLUSIVE, 1, 0, nullptr), NBRMA_OK);
    ASSERT_EQ(w.record_op(0, 1, 1, &op), NBRMA_OK);
    ASSERT_EQ(nbrma_iunlock(w.e(0), 1, whole), NBRMA_OK);
    ASSERT_EQ(nbrma_ilock(w.e(0), NBRMA_LOCK_EXCLUSIVE, 2, 0, nullptr), NBRMA_OK);
    while (w.whole_epochs_sent() == 0)
        ASSERT_TRUE(w.deliver_first([](const message &m) { return m.kind != msg_kind::lock_epoch; }));
    ASSERT_EQ(nbrma_iflush(w.e(0), NBRMA_ALL_RANKS, 0, flush), NBRMA_OK);
    EXPECT_FALSE(done(flush)) << "the whole epoch's operation is older and not performed";
    w.deliver_all();
    EXPECT_TRUE(op->performed);
    EXPECT_TRUE(done(whole));
    EXPECT_TRUE(done(flush));
    ASSERT_EQ(nbrma_iunlock(w.e(0), 2, nullptr), NBRMA_OK);
    w.deliver_all();
    EXPECT_FALSE(nbrma_has_pending_epochs(w.e(0)));
    EXPECT_TRUE(w.failures().empty()) << w.failures().front();
}

// --- lazy locks (rule L1, nbrma_transport.defer_lock) ---------------------------

namespace {

std::size_t lock_messages(world &w)
{
    return w.count_in_flight(kind_is(msg_kind::lock_request)) +
        w.count_in_flight(kind_is(msg_kind::lock_epoch));
}

// One lock epoch toward 1 with `ops` operations, unlocked; returns its unlock.
request *lock_epoch_toward_1(world &w, int ops, std::vector<sim_op *> *recorded = nullptr)
{
    request *unlock = w.new_request(0);
    EXPECT_EQ(nbrma_ilock(w.e(0), NBRMA_LOCK_EXCLUSIVE, 1, 0, nullptr), NBRMA_OK);
    for (int i = 0; i < ops; ++i) {
        sim_op *op = nullptr;
        EXPECT_EQ(w.record_op(0, 1, i + 1, &op), NBRMA_OK);
        if (recorded)
            recorded->push_back(op);
    }
    EXPECT_EQ(lock_messages(w), 0u) << "the lock waits for the close";
    EXPECT_EQ(nbrma_iunlock(w.e(0), 1, unlock), NBRMA_OK);
    return unlock;
}

}  // namespace

// The lock, the operations and the release travel as one message once the
// application closes the epoch, and the grant completes it.
TEST(lazy_locks, an_epoch_waits_for_its_close_and_travels_whole)
{
    world w(2, false, false, true);
    w.set_lazy_locks(true);
    std::vector<sim_op *> ops;
    request *unlock = lock_epoch_toward_1(w, 2, &ops);
    EXPECT_EQ(w.count_in_flight(kind_is(msg_kind::lock_epoch)), 1u);
    EXPECT_EQ(w.count_in_flight(kind_is(msg_kind::lock_request)), 0u);
    w.deliver_all();
    EXPECT_TRUE(ops[0]->performed && ops[1]->performed);
    EXPECT_TRUE(done(unlock));
    EXPECT_EQ(w.whole_epochs_sent(), 1u);
    EXPECT_FALSE(w.impl(1).locks().is_locked());
    EXPECT_FALSE(nbrma_has_pending_epochs(w.e(0)));
    EXPECT_TRUE(w.failures().empty()) << w.failures().front();
}

// A flush needs the epoch active: its lock request leaves then, and the guess
// was wrong, so the next lock epoch toward that peer asks for its lock at once.
TEST(lazy_locks, a_flush_activates_the_epoch_and_later_ones_lock_at_once)
{
    world w(2, false, false, true);
    w.set_lazy_locks(true);
    request *flush = w.new_request(0), *unlock = w.new_request(0);
    sim_op *op = nullptr;
    ASSERT_EQ(nbrma_ilock(w.e(0), NBRMA_LOCK_EXCLUSIVE, 1, 0, nullptr), NBRMA_OK);
    ASSERT_EQ(w.record_op(0, 1, 1, &op), NBRMA_OK);
    EXPECT_EQ(lock_messages(w), 0u);
    ASSERT_EQ(nbrma_iflush(w.e(0), 1, 0, flush), NBRMA_OK);
    EXPECT_EQ(w.count_in_flight(kind_is(msg_kind::lock_request)), 1u);
    w.deliver_all();
    EXPECT_TRUE(op->performed);
    EXPECT_TRUE(done(flush));
    ASSERT_EQ(nbrma_iunlock(w.e(0), 1, unlock), NBRMA_OK);
    w.deliver_all();
    EXPECT_TRUE(done(unlock));
    ASSERT_EQ(nbrma_ilock(w.e(0), NBRMA_LOCK_EXCLUSIVE, 1, 0, nullptr), NBRMA_OK);
    EXPECT_EQ(w.count_in_flight(kind_is(msg_kind::lock_request)), 1u) << "eager after a wrong guess";
    ASSERT_EQ(nbrma_iunlock(w.e(0), 1, nullptr), NBRMA_OK);
    w.deliver_all();
    EXPECT_EQ(w.whole_epochs_sent(), 0u);
    EXPECT_FALSE(nbrma_has_pending_epochs(w.e(0)));
    EXPECT_TRUE(w.failures().empty()) << w.failures().front();
}

// An operation that could not travel whole (here: the transport refuses from
// the second one on) activates the epoch at once, with the first one issued
// after the grant, not before.
TEST(lazy_locks, an_operation_that_cannot_travel_whole_activates_the_epoch)
{
    world w(2, false, false, true);
    w.set_lazy_locks(true, 2);
    request *unlock = w.new_request(0);
    sim_op *a = nullptr, *b = nullptr;
    ASSERT_EQ(nbrma_ilock(w.e(0), NBRMA_LOCK_SHARED, 1, 0, nullptr), NBRMA_OK);
    ASSERT_EQ(w.record_op(0, 1, 1, &a), NBRMA_OK);
    EXPECT_EQ(lock_messages(w), 0u);
    ASSERT_EQ(w.record_op(0, 1, 2, &b), NBRMA_OK);
    EXPECT_EQ(w.count_in_flight(kind_is(msg_kind::lock_request)), 1u);
    EXPECT_FALSE(a->issued || b->issued) << "issued before the grant";
    ASSERT_EQ(nbrma_iunlock(w.e(0), 1, unlock), NBRMA_OK);
    w.deliver_all();
    EXPECT_TRUE(a->performed && b->performed);
    EXPECT_TRUE(done(unlock));
    EXPECT_EQ(w.whole_epochs_sent(), 0u);
    EXPECT_TRUE(w.failures().empty()) << w.failures().front();
}

// An epoch opened behind it activates it (the application may wait for the
// later one first) without counting as a wrong guess; toward myself and
// toward a lock word the lock is taken at once.
TEST(lazy_locks, only_alone_toward_a_peer_that_locks_by_message)
{
    world w(3, false, false, true, true);
    w.set_lazy_locks(true);
    ASSERT_FALSE(world::word_reaches(0, 1));
    ASSERT_TRUE(world::word_reaches(0, 2));
    ASSERT_EQ(nbrma_ilock(w.e(0), NBRMA_LOCK_EXCLUSIVE, 1, 0, nullptr), NBRMA_OK);
    EXPECT_EQ(lock_messages(w), 0u);
    ASSERT_EQ(nbrma_ilock(w.e(0), NBRMA_LOCK_EXCLUSIVE, 2, 0, nullptr), NBRMA_OK);
    EXPECT_EQ(w.count_in_flight(kind_is(msg_kind::lock_request)), 1u) << "the epoch behind activated it";
    EXPECT_EQ(w.lock_words()[2], -1) << "2's lock word taken at once";
    ASSERT_EQ(nbrma_iunlock(w.e(0), 2, nullptr), NBRMA_OK);
    ASSERT_EQ(nbrma_iunlock(w.e(0), 1, nullptr), NBRMA_OK);
    w.deliver_all();
    request *unlock = lock_epoch_toward_1(w, 1);
    EXPECT_EQ(w.count_in_flight(kind_is(msg_kind::lock_epoch)), 1u) << "still lazy toward 1";
    w.deliver_all();
    EXPECT_TRUE(done(unlock));
    ASSERT_EQ(nbrma_ilock(w.e(0), NBRMA_LOCK_EXCLUSIVE, 0, 0, nullptr), NBRMA_OK);
    EXPECT_EQ(w.lock_words()[0], -1) << "my own lock at once";
    ASSERT_EQ(nbrma_iunlock(w.e(0), 0, nullptr), NBRMA_OK);
    w.deliver_all();
    EXPECT_FALSE(nbrma_has_pending_epochs(w.e(0)));
    EXPECT_TRUE(w.failures().empty()) << w.failures().front();
}

// A flush toward another target does not need the lazy epoch: it stays
// unactivated, travels whole at its close, and the guess was not wrong (the
// next lock epoch toward that peer waits lazily too). flush_all does need it.
TEST(lazy_locks, a_flush_toward_another_target_leaves_it_lazy)
{
    world w(3, false, false, true, true);
    w.set_lazy_locks(true);
    ASSERT_TRUE(world::word_reaches(0, 2));
    request *flush = w.new_request(0), *unlock = w.new_request(0), *all = w.new_request(0);
    sim_op *to2 = nullptr, *to1 = nullptr;
    ASSERT_EQ(nbrma_ilock(w.e(0), NBRMA_LOCK_SHARED, 2, 0, nullptr), NBRMA_OK);
    ASSERT_EQ(w.record_op(0, 2, 1, &to2), NBRMA_OK);
    ASSERT_EQ(nbrma_ilock(w.e(0), NBRMA_LOCK_EXCLUSIVE, 1, 0, nullptr), NBRMA_OK);
    ASSERT_EQ(w.record_op(0, 1, 1, &to1), NBRMA_OK);
    ASSERT_EQ(nbrma_iflush(w.e(0), 2, 0, flush), NBRMA_OK);
    EXPECT_EQ(lock_messages(w), 0u) << "a flush toward 2 activated the epoch toward 1";
    w.deliver_all();
    EXPECT_TRUE(to2->performed);
    EXPECT_TRUE(done(flush));
    EXPECT_FALSE(to1->issued);
    ASSERT_EQ(nbrma_iunlock(w.e(0), 1, unlock), NBRMA_OK);
    EXPECT_EQ(w.count_in_flight(kind_is(msg_kind::lock_epoch)), 1u);
    w.deliver_all();
    EXPECT_TRUE(to1->performed);
    EXPECT_TRUE(done(unlock));
    ASSERT_EQ(nbrma_ilock(w.e(0), NBRMA_LOCK_EXCLUSIVE, 1, 0, nullptr), NBRMA_OK);
    ASSERT_EQ(w.record_op(0, 1, 1, &to1), NBRMA_OK);
    EXPECT_EQ(lock_messages(w), 0u) << "still lazy toward 1";
    ASSERT_EQ(nbrma_iflush(w.e(0), NBRMA_ALL_RANKS, 0, all), NBRMA_OK);
    EXPECT_EQ(w.count_in_flight(kind_is(msg_kind::lock_request)), 1u) << "flush_all activates it";
    w.deliver_all();
    EXPECT_TRUE(to1->performed);
    EXPECT_TRUE(done(all));
    ASSERT_EQ(nbrma_iunlock(w.e(0), 1, nullptr), NBRMA_OK);
    ASSERT_EQ(nbrma_iunlock(w.e(0), 2, nullptr), NBRMA_OK);
    w.deliver_all();
    EXPECT_EQ(w.whole_epochs_sent(), 1u);
    EXPECT_FALSE(nbrma_has_pending_epochs(w.e(0)));
    EXPECT_TRUE(w.failures().empty()) << w.failures().front();
}

// A whole epoch the target refuses (an operation outside its window) is
// still released and granted: the target reports the error, the origin's
// unlock completes instead of waiting forever.
TEST(lazy_locks, a_refused_whole_epoch_still_ends_at_its_origin)
{
    world w(2, false, false, true);
    w.set_lazy_locks(true);
    w.refuse_whole_epochs(true);
    request *unlock = lock_epoch_toward_1(w, 1);
    ASSERT_EQ(w.count_in_flight(kind_is(msg_kind::lock_epoch)), 1u);
    w.deliver_all();
    ASSERT_EQ(w.failures().size(), 1u) << "the target reports the refusal";
    EXPECT_NE(w.failures().front().find("lock_epoch"), std::string::npos) << w.failures().front();
    EXPECT_TRUE(done(unlock)) << "granted all the same";
    EXPECT_FALSE(w.impl(1).locks().is_locked());
    EXPECT_FALSE(nbrma_has_pending_epochs(w.e(0)));
}

// --- pulled access epochs (nbrma_transport.pack_access_epoch) -------------------

namespace {

// The simulator pulls toward the targets word_reaches names: 0 -> 2 does,
// 0 -> 1 does not.
world pulling_world() { return world(3, false, false, false, false, true); }

bool to_rank(const message &m, int rank) { return m.to == rank; }

}  // namespace

// The origin closes before the grant reached it and then makes no call: the
// target alone performs the operations and ends its exposure.
TEST(pulled_access_epochs, closed_before_the_grant_the_target_ends_the_epoch_alone)
{
    world w = pulling_world();
    request *complete = w.new_request(0), *wait = w.new_request(2);
    sim_op *a = nullptr, *b = nullptr;
    const int origin[] = {0}, target[] = {2};
    ASSERT_EQ(nbrma_ipost(w.e(2), origin, 1, 0, nullptr), NBRMA_OK);
    ASSERT_EQ(nbrma_istart(w.e(0), target, 1, 0, nullptr), NBRMA_OK);
    ASSERT_EQ(w.record_op(0, 2, 1, &a), NBRMA_OK);
    ASSERT_EQ(w.record_op(0, 2, 1, &b), NBRMA_OK);
    ASSERT_EQ(nbrma_icomplete(w.e(0), complete), NBRMA_OK);
    ASSERT_EQ(nbrma_iwait(w.e(2), wait), NBRMA_OK);
    EXPECT_EQ(w.pulled_epochs_sent(), 1u);
    EXPECT_EQ(w.count_in_flight(kind_is(msg_kind::access_epoch)), 1u);

    // nothing reaches the origin's engine: it computes
    while (w.deliver_first([](const message &m) { return to_rank(m, 2); })) {
    }
    EXPECT_TRUE(a->performed && b->performed);
    EXPECT_TRUE(done(wait));
    EXPECT_FALSE(done(complete)) << "the origin has not heard back yet";

    w.deliver_all();
    EXPECT_TRUE(done(complete));
    EXPECT_EQ(w.count_in_flight(kind_is(msg_kind::done)), 0u);
    EXPECT_FALSE(nbrma_has_pending_epochs(w.e(0)));
    EXPECT_FALSE(nbrma_has_pending_epochs(w.e(2)));
    EXPECT_TRUE(w.failures().empty()) << w.failures().front();
}

// The pulled epoch may reach the target before its post: it waits, by access
// id, for the exposure it matches, and FIFO matching holds for the next one.
TEST(pulled_access_epochs, arriving_before_the_post_waits_for_its_exposure)
{
    world w = pulling_world();
    request *first = w.new_request(0), *second = w.new_request(0);
    request *wait1 = w.new_request(2), *wait2 = w.new_request(2);
    sim_op *a = nullptr, *b = nullptr;
    const int origin[] = {0}, target[] = {2};
    ASSERT_EQ(nbrma_istart(w.e(0), target, 1, 0, nullptr), NBRMA_OK);
    ASSERT_EQ(w.record_op(0, 2, 1, &a), NBRMA_OK);
    ASSERT_EQ(nbrma_icomplete(w.e(0), first), NBRMA_OK);
    ASSERT_EQ(nbrma_istart(w.e(0), target, 1, 0, nullptr), NBRMA_OK);
    ASSERT_EQ(w.record_op(0, 2, 2, &b), NBRMA_OK);
    ASSERT_EQ(nbrma_icomplete(w.e(0), second), NBRMA_OK);
    w.deliver_all();
    EXPECT_FALSE(a->performed) << "performed before the target exposed its window";

    ASSERT_EQ(nbrma_ipost(w.e(2), origin, 1, 0, nullptr), NBRMA_OK);
    ASSERT_EQ(nbrma_iwait(w.e(2), wait1), NBRMA_OK);
    EXPECT_TRUE(a->performed);
    EXPECT_FALSE(b->performed) << "the second epoch matched the first exposure";
    EXPECT_TRUE(done(wait1));
    ASSERT_EQ(nbrma_ipost(w.e(2), origin, 1, 0, nullptr), NBRMA_OK);
    ASSERT_EQ(nbrma_iwait(w.e(2), wait2), NBRMA_OK);
    w.deliver_all();
    EXPECT_TRUE(b->performed && done(wait2));
    EXPECT_TRUE(done(first) && done(second));
    EXPECT_EQ(w.pulled_epochs_sent(), 2u);
    EXPECT_TRUE(w.failures().empty()) << w.failures().front();
}

// One epoch toward a target that can pull (2) and one that cannot (1): the
// second keeps the grant, operations and done of the usual protocol.
TEST(pulled_access_epochs, only_toward_targets_the_transport_offers)
{
    world w = pulling_world();
    request *complete = w.new_request(0);
    sim_op *to1 = nullptr, *to2 = nullptr;
    const int origin[] = {0}, targets[] = {1, 2};
    ASSERT_EQ(nbrma_ipost(w.e(1), origin, 1, 0, nullptr), NBRMA_OK);
    ASSERT_EQ(nbrma_ipost(w.e(2), origin, 1, 0, nullptr), NBRMA_OK);
    ASSERT_EQ(nbrma_istart(w.e(0), targets, 2, 0, nullptr), NBRMA_OK);
    ASSERT_EQ(w.record_op(0, 1, 1, &to1), NBRMA_OK);
    ASSERT_EQ(w.record_op(0, 2, 1, &to2), NBRMA_OK);
    ASSERT_EQ(nbrma_icomplete(w.e(0), complete), NBRMA_OK);
    EXPECT_EQ(w.pulled_epochs_sent(), 1u);
    w.deliver_all();
    EXPECT_TRUE(to1->performed && to2->performed);
    EXPECT_TRUE(done(complete));
    EXPECT_TRUE(w.failures().empty()) << w.failures().front();
}

// Granted before the close: nothing to gain, the operations leave as usual.
TEST(pulled_access_epochs, not_offered_once_granted)
{
    world w = pulling_world();
    request *complete = w.new_request(0);
    const int origin[] = {0}, target[] = {2};
    ASSERT_EQ(nbrma_ipost(w.e(2), origin, 1, 0, nullptr), NBRMA_OK);
    ASSERT_EQ(nbrma_istart(w.e(0), target, 1, 0, nullptr), NBRMA_OK);
    w.deliver_all();
    ASSERT_EQ(w.record_op(0, 2, 1), NBRMA_OK);
    ASSERT_EQ(nbrma_icomplete(w.e(0), complete), NBRMA_OK);
    w.deliver_all();
    EXPECT_EQ(w.pulled_epochs_sent(), 0u);
    EXPECT_TRUE(done(complete));
    EXPECT_TRUE(w.failures().empty()) << w.failures().front();
}

// An "applied" report for an access the origin never sent, or twice, is a
// protocol error, not a completion.
TEST(pulled_access_epochs, stray_applied_reports_are_refused)
{
    world w = pulling_world();
    EXPECT_EQ(nbrma_on_access_applied(w.e(0), 2, 1), NBRMA_ERR_INTERN);
    EXPECT_EQ(nbrma_on_access_applied(w.e(0), 0, 1), NBRMA_ERR_RANK);
    EXPECT_EQ(nbrma_on_access_epoch(w.e(0), 2, 1, nullptr), NBRMA_ERR_ARG);
}
