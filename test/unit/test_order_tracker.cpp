// The ordering's bookkeeping (core/include/nbrma_order_tracker.h) without
// MPI: rules T1-T3 one by one, the sequences the glue (ordered_ops.c) runs,
// then random programs of notes and waits over several ranks checked against
// a plain model of the glue's former bookkeeping, with rule O1's step
// compared with nbrma_order_step_for on the model's ways at every step.

#include <gtest/gtest.h>

#include <random>
#include <vector>

#include "nbrma_core.h"
#include "nbrma_order_tracker.h"

namespace {

constexpr unsigned none = NBRMA_WAY_NONE;
constexpr unsigned ucx = NBRMA_WAY_UCX;
constexpr unsigned unfenced = NBRMA_WAY_UNFENCED;
constexpr unsigned both = ucx | unfenced;
constexpr nbrma_way ways[] = {NBRMA_WAY_NONE, NBRMA_WAY_UCX, NBRMA_WAY_UNFENCED};

struct tracker_ptr {
    nbrma_order_tracker *t = nullptr;
    explicit tracker_ptr(int n_ranks)
    {
        EXPECT_EQ(nbrma_order_tracker_create(n_ranks, &t), NBRMA_OK);
    }
    ~tracker_ptr() { nbrma_order_tracker_destroy(t); }
};

// The glue's step toward completion (complete_step) once its ledger wait was
// released: begin one toward `rank` unless one is in progress, then end it.
void wait_completes(nbrma_order_tracker *t, int rank)
{
    if (nbrma_order_tracker_waiting(t) < 0) {
        ASSERT_EQ(nbrma_order_tracker_begin_wait(t, rank), NBRMA_OK);
    }
    nbrma_order_tracker_wait_ended(t, rank);
}

TEST(order_tracker, every_target_starts_with_both_ways_an_unknown_past)
{
    tracker_ptr p(3);
    for (int r = 0; r < 3; r++) {
        EXPECT_EQ(nbrma_order_tracker_in_flight(p.t, r), both);
        for (nbrma_way w : ways)
            EXPECT_EQ(nbrma_order_tracker_step(p.t, r, w), nbrma_order_step_for(both, w));
        EXPECT_EQ(nbrma_order_tracker_step(p.t, r, NBRMA_WAY_UCX), NBRMA_ORDER_COMPLETE_FIRST);
    }
    EXPECT_EQ(nbrma_order_tracker_waiting(p.t), -1);
}

TEST(order_tracker, create_refuses_bad_arguments)
{
    nbrma_order_tracker *t = reinterpret_cast<nbrma_order_tracker *>(1);
    EXPECT_EQ(nbrma_order_tracker_create(-1, &t), NBRMA_ERR_ARG);
    EXPECT_EQ(t, nullptr);
    EXPECT_EQ(nbrma_order_tracker_create(4, nullptr), NBRMA_ERR_ARG);
    ASSERT_EQ(nbrma_order_tracker_create(0, &t), NBRMA_OK);
    EXPECT_EQ(nbrma_order_tracker_begin_wait(t, 0), NBRMA_ERR_RANK);
    nbrma_order_tracker_destroy(t);
    nbrma_order_tracker_destroy(nullptr);
}

TEST(order_tracker, notes_add_ways_and_a_completed_wait_clears_them)
{
    tracker_ptr p(2);
    wait_completes(p.t, 0);
    EXPECT_EQ(nbrma_order_tracker_in_flight(p.t, 0), none);
    EXPECT_EQ(nbrma_order_tracker_in_flight(p.t, 1), both);       // the other rank's stay
    EXPECT_EQ(nbrma_order_tracker_step(p.t, 0, NBRMA_WAY_UNFENCED), NBRMA_ORDER_GO);

    nbrma_order_tracker_note(p.t, 0, NBRMA_WAY_NONE);   // performed at return
    EXPECT_EQ(nbrma_order_tracker_in_flight(p.t, 0), none);
    nbrma_order_tracker_note(p.t, 0, NBRMA_WAY_UCX);
    EXPECT_EQ(nbrma_order_tracker_in_flight(p.t, 0), ucx);
    EXPECT_EQ(nbrma_order_tracker_step(p.t, 0, NBRMA_WAY_UCX), NBRMA_ORDER_FENCE);
    EXPECT_EQ(nbrma_order_tracker_step(p.t, 0, NBRMA_WAY_UNFENCED), NBRMA_ORDER_COMPLETE_FIRST);
    EXPECT_EQ(nbrma_order_tracker_step(p.t, 0, NBRMA_WAY_NONE), NBRMA_ORDER_COMPLETE_FIRST);
    nbrma_order_tracker_note(p.t, 0, NBRMA_WAY_UCX);
    EXPECT_EQ(nbrma_order_tracker_in_flight(p.t, 0), ucx);
    nbrma_order_tracker_note(p.t, 0, NBRMA_WAY_UNFENCED);
    EXPECT_EQ(nbrma_order_tracker_in_flight(p.t, 0), both);
    EXPECT_EQ(nbrma_order_tracker_step(p.t, 0, NBRMA_WAY_UCX), NBRMA_ORDER_COMPLETE_FIRST);

    wait_completes(p.t, 0);
    EXPECT_EQ(nbrma_order_tracker_in_flight(p.t, 0), none);
    EXPECT_EQ(nbrma_order_tracker_waiting(p.t), -1);
}

TEST(order_tracker, one_wait_at_a_time_toward_one_rank)
{
    tracker_ptr p(3);
    ASSERT_EQ(nbrma_order_tracker_begin_wait(p.t, 1), NBRMA_OK);
    EXPECT_EQ(nbrma_order_tracker_waiting(p.t), 1);
    EXPECT_EQ(nbrma_order_tracker_begin_wait(p.t, 2), NBRMA_ERR_SYNC);
    EXPECT_EQ(nbrma_order_tracker_begin_wait(p.t, 1), NBRMA_ERR_SYNC);
    EXPECT_EQ(nbrma_order_tracker_waiting(p.t), 1);      // refused: nothing changed
    nbrma_order_tracker_wait_ended(p.t, 1);
    EXPECT_EQ(nbrma_order_tracker_waiting(p.t), -1);
    EXPECT_EQ(nbrma_order_tracker_begin_wait(p.t, 3), NBRMA_ERR_RANK);
    EXPECT_EQ(nbrma_order_tracker_begin_wait(p.t, -1), NBRMA_ERR_RANK);
    EXPECT_EQ(nbrma_order_tracker_waiting(p.t), -1);
}

TEST(order_tracker, a_note_toward_the_waiting_rank_after_the_wait_began_is_not_covered)
{
    for (nbrma_way w : {NBRMA_WAY_UCX, NBRMA_WAY_UNFENCED}) {
        tracker_ptr p(2);
        ASSERT_EQ(nbrma_order_tracker_begin_wait(p.t, 0), NBRMA_OK);
        nbrma_order_tracker_note(p.t, 0, w);
        nbrma_order_tracker_wait_ended(p.t, 0);
        EXPECT_EQ(nbrma_order_tracker_in_flight(p.t, 0), both);  // nothing cleared
        EXPECT_EQ(nbrma_order_tracker_waiting(p.t), -1);         // the next wait is begun anew
        // the next wait covers that note
        wait_completes(p.t, 0);
        EXPECT_EQ(nbrma_order_tracker_in_flight(p.t, 0), none);
    }
}

TEST(order_tracker, notes_that_do_not_spoil_a_wait)
{
    tracker_ptr p(3);
    ASSERT_EQ(nbrma_order_tracker_begin_wait(p.t, 0), NBRMA_OK);
    nbrma_order_tracker_note(p.t, 0, NBRMA_WAY_NONE);   // nothing left in flight
    nbrma_order_tracker_note(p.t, 1, NBRMA_WAY_UNFENCED);       // another rank
    nbrma_order_tracker_note(p.t, 5, NBRMA_WAY_UCX);    // outside the window: ignored
    nbrma_order_tracker_wait_ended(p.t, 0);
    EXPECT_EQ(nbrma_order_tracker_in_flight(p.t, 0), none);
    EXPECT_EQ(nbrma_order_tracker_in_flight(p.t, 1), both);
    EXPECT_EQ(nbrma_order_tracker_in_flight(p.t, 2), both);
}

TEST(order_tracker, a_note_made_during_an_earlier_wait_does_not_spoil_the_next)
{
    tracker_ptr p(1);
    ASSERT_EQ(nbrma_order_tracker_begin_wait(p.t, 0), NBRMA_OK);
    nbrma_order_tracker_note(p.t, 0, NBRMA_WAY_UCX);
    nbrma_order_tracker_wait_ended(p.t, 0);
    ASSERT_EQ(nbrma_order_tracker_begin_wait(p.t, 0), NBRMA_OK);
    nbrma_order_tracker_wait_ended(p.t, 0);
    EXPECT_EQ(nbrma_order_tracker_in_flight(p.t, 0), none);
}

TEST(order_tracker, a_wait_toward_another_rank_ends_and_clears_nothing)
{
    tracker_ptr p(2);
    ASSERT_EQ(nbrma_order_tracker_begin_wait(p.t, 1), NBRMA_OK);
    // an operation toward rank 0 asks while rank 1's wait is in progress:
    // once released it ends, and rank 0's wait is begun at its next step
    nbrma_order_tracker_wait_ended(p.t, 0);
    EXPECT_EQ(nbrma_order_tracker_waiting(p.t), -1);
    EXPECT_EQ(nbrma_order_tracker_in_flight(p.t, 0), both);
    EXPECT_EQ(nbrma_order_tracker_in_flight(p.t, 1), both);
    wait_completes(p.t, 0);
    EXPECT_EQ(nbrma_order_tracker_in_flight(p.t, 0), none);
    EXPECT_EQ(nbrma_order_tracker_in_flight(p.t, 1), both);
}

TEST(order_tracker, a_cancelled_wait_clears_nothing)
{
    tracker_ptr p(2);
    ASSERT_EQ(nbrma_order_tracker_begin_wait(p.t, 1), NBRMA_OK);
    nbrma_order_tracker_cancel_wait(p.t);
    EXPECT_EQ(nbrma_order_tracker_waiting(p.t), -1);
    EXPECT_EQ(nbrma_order_tracker_in_flight(p.t, 1), both);
    nbrma_order_tracker_wait_ended(p.t, 1);     // no wait in progress: nothing
    EXPECT_EQ(nbrma_order_tracker_in_flight(p.t, 1), both);
}

TEST(order_tracker, ranks_are_independent)
{
    tracker_ptr p(4);
    for (int r = 0; r < 4; r++)
        wait_completes(p.t, r);
    nbrma_order_tracker_note(p.t, 1, NBRMA_WAY_UCX);
    nbrma_order_tracker_note(p.t, 2, NBRMA_WAY_UNFENCED);
    nbrma_order_tracker_note(p.t, 3, NBRMA_WAY_UCX);
    nbrma_order_tracker_note(p.t, 3, NBRMA_WAY_UNFENCED);
    const unsigned expect[] = {none, ucx, unfenced, both};
    for (int r = 0; r < 4; r++) {
        EXPECT_EQ(nbrma_order_tracker_in_flight(p.t, r), expect[r]) << "rank " << r;
        for (nbrma_way w : ways)
            EXPECT_EQ(nbrma_order_tracker_step(p.t, r, w), nbrma_order_step_for(expect[r], w));
    }
    EXPECT_EQ(nbrma_order_tracker_step(p.t, 0, NBRMA_WAY_UNFENCED), NBRMA_ORDER_GO);
    EXPECT_EQ(nbrma_order_tracker_step(p.t, 1, NBRMA_WAY_UCX), NBRMA_ORDER_FENCE);
    EXPECT_EQ(nbrma_order_tracker_step(p.t, 2, NBRMA_WAY_UCX), NBRMA_ORDER_COMPLETE_FIRST);
    wait_completes(p.t, 2);
    EXPECT_EQ(nbrma_order_tracker_in_flight(p.t, 1), ucx);
    EXPECT_EQ(nbrma_order_tracker_in_flight(p.t, 2), none);
    EXPECT_EQ(nbrma_order_tracker_in_flight(p.t, 3), both);
}

// Outside the window the past counts as unknown: both ways.
TEST(order_tracker, ranks_outside_the_window_count_as_unknown)
{
    tracker_ptr p(2);
    EXPECT_EQ(nbrma_order_tracker_in_flight(p.t, -1), both);
    EXPECT_EQ(nbrma_order_tracker_in_flight(p.t, 2), both);
    EXPECT_EQ(nbrma_order_tracker_step(p.t, 2, NBRMA_WAY_UCX), NBRMA_ORDER_COMPLETE_FIRST);
}

// The glue's ordered put, accumulate (an active message), put toward one
// target, as ordered_ops.c runs them: the first waits for the unknown past,
// the second goes (nothing in flight), the third waits for the active
// message, a fourth UCX put behind it is fenced.
TEST(order_tracker, the_glue_sequence_of_an_ordered_window)
{
    tracker_ptr p(2);
    const int rank = 1;
    EXPECT_EQ(nbrma_order_tracker_step(p.t, rank, NBRMA_WAY_UCX), NBRMA_ORDER_COMPLETE_FIRST);
    wait_completes(p.t, rank);
    EXPECT_EQ(nbrma_order_tracker_in_flight(p.t, rank), none);
    nbrma_order_tracker_note(p.t, rank, NBRMA_WAY_UCX);         // the put went
    EXPECT_EQ(nbrma_order_tracker_step(p.t, rank, NBRMA_WAY_UNFENCED),
              NBRMA_ORDER_COMPLETE_FIRST);
    // the wait for the put begins; the accumulate goes once it was released
    ASSERT_EQ(nbrma_order_tracker_begin_wait(p.t, rank), NBRMA_OK);
    EXPECT_EQ(nbrma_order_tracker_in_flight(p.t, rank), ucx);
    nbrma_order_tracker_wait_ended(p.t, rank);
    EXPECT_EQ(nbrma_order_tracker_step(p.t, rank, NBRMA_WAY_UNFENCED), NBRMA_ORDER_GO);
    nbrma_order_tracker_note(p.t, rank, NBRMA_WAY_UNFENCED);    // the accumulate went
    EXPECT_EQ(nbrma_order_tracker_step(p.t, rank, NBRMA_WAY_UCX), NBRMA_ORDER_COMPLETE_FIRST);
    wait_completes(p.t, rank);
    EXPECT_EQ(nbrma_order_tracker_step(p.t, rank, NBRMA_WAY_UCX), NBRMA_ORDER_GO);
    nbrma_order_tracker_note(p.t, rank, NBRMA_WAY_UCX);
    EXPECT_EQ(nbrma_order_tracker_step(p.t, rank, NBRMA_WAY_UCX), NBRMA_ORDER_FENCE);
}

// The glue's bookkeeping before the tracker (ordered_ops.c's
// MPIDI_NBRMA_order), kept as the model.
struct model {
    std::vector<unsigned char> in_flight;
    int waiting_rank = -1;
    bool noted_since = false;

    explicit model(int n) : in_flight(n, static_cast<unsigned char>(both)) {}

    void note(int rank, nbrma_way way)
    {
        in_flight[rank] |= static_cast<unsigned char>(way);
        if (rank == waiting_rank && way != NBRMA_WAY_NONE)
            noted_since = true;
    }
    void begin(int rank)
    {
        waiting_rank = rank;
        noted_since = false;
    }
    void cancel() { waiting_rank = -1; }
    void released(int rank)
    {
        if (waiting_rank == rank && !noted_since)
            in_flight[rank] = NBRMA_WAY_NONE;
        waiting_rank = -1;
    }
};

TEST(order_tracker, random_programs_agree_with_the_glues_former_bookkeeping)
{
    constexpr int n_ranks = 4;
    for (unsigned seed = 0; seed < 500; seed++) {
        std::mt19937 rng(seed);
        tracker_ptr p(n_ranks);
        model m(n_ranks);
        for (int step = 0; step < 200; step++) {
            int rank = static_cast<int>(rng() % n_ranks);
            switch (rng() % 5) {
                case 0:
                case 1: {
                    nbrma_way w = ways[rng() % 3];
                    nbrma_order_tracker_note(p.t, rank, w);
                    m.note(rank, w);
                    break;
                }
                case 2:
                    // the glue begins a wait only when none is in progress
                    if (m.waiting_rank < 0) {
                        ASSERT_EQ(nbrma_order_tracker_begin_wait(p.t, rank), NBRMA_OK);
                        m.begin(rank);
                    } else {
                        ASSERT_EQ(nbrma_order_tracker_begin_wait(p.t, rank), NBRMA_ERR_SYNC);
                    }
                    break;
                case 3:
                    if (m.waiting_rank >= 0) {
                        nbrma_order_tracker_wait_ended(p.t, rank);
                        m.released(rank);
                    }
                    break;
                default:
                    if (m.waiting_rank >= 0 && rng() % 4 == 0) {
                        nbrma_order_tracker_cancel_wait(p.t);
                        m.cancel();
                    }
                    break;
            }
            ASSERT_EQ(nbrma_order_tracker_waiting(p.t), m.waiting_rank)
                << "seed " << seed << " step " << step;
            for (int r = 0; r < n_ranks; r++) {
                ASSERT_EQ(nbrma_order_tracker_in_flight(p.t, r), m.in_flight[r])
                    << "seed " << seed << " step " << step << " rank " << r;
                for (nbrma_way w : ways)
                    ASSERT_EQ(nbrma_order_tracker_step(p.t, r, w),
                              nbrma_order_step_for(m.in_flight[r], w))
                        << "seed " << seed << " step " << step << " rank " << r;
            }
        }
    }
}

} // namespace
