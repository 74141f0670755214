// The ordering's bookkeeping of one engine window
// (include/nbrma_order_tracker.h): one byte of way bits per rank, as the
// glue's own array was, and the one wait with whether its rank was noted
// since it began.

#include "nbrma_order_tracker.h"
#include "nbrma_core.h"         // NBRMA_OK, NBRMA_ERR_*

#include <cstring>
#include <memory>
#include <new>

namespace {

// T1: what was issued before the tracker existed is unknown
constexpr unsigned char unknown_past = NBRMA_WAY_UCX | NBRMA_WAY_UNFENCED;

} // namespace

struct nbrma_order_tracker {
    int n_ranks = 0;
    std::unique_ptr<unsigned char[]> in_flight; // per rank: NBRMA_WAY_* bits (T1)
    int waiting = -1;           // the rank of the wait in progress (T2), or -1
    bool noted_since = false;   // an operation toward `waiting` was noted after the
                                // wait began: the wait does not cover it (T3)

    bool in_window(int rank) const
    {
        return rank >= 0 && rank < n_ranks;
    }
};

extern "C" {

int nbrma_order_tracker_create(int n_ranks, nbrma_order_tracker **tracker)
{
    if (tracker == nullptr)
        return NBRMA_ERR_ARG;
    *tracker = nullptr;
    if (n_ranks < 0)
        return NBRMA_ERR_ARG;
    std::unique_ptr<nbrma_order_tracker> t(new(std::nothrow) nbrma_order_tracker);
    if (!t)
        return NBRMA_ERR_NOMEM;
    t->in_flight.reset(new(std::nothrow) unsigned char[static_cast<size_t>(n_ranks)]);
    if (!t->in_flight)
        return NBRMA_ERR_NOMEM;
    t->n_ranks = n_ranks;
    std::memset(t->in_flight.get(), unknown_past, static_cast<size_t>(n_ranks));
    *tracker = t.release();
    return NBRMA_OK;
}

void nbrma_order_tracker_destroy(nbrma_order_tracker *tracker)
{
    delete tracker;
}

void nbrma_order_tracker_note(nbrma_order_tracker *tracker, int rank, nbrma_way way)
{
    if (!tracker->in_window(rank))
        return;
    tracker->in_flight[rank] |= static_cast<unsigned char>(way);
    if (rank == tracker->waiting && way != NBRMA_WAY_NONE)
        tracker->noted_since = true;
}

unsigned nbrma_order_tracker_in_flight(const nbrma_order_tracker *tracker, int rank)
{
    return tracker->in_window(rank) ? tracker->in_flight[rank] : unknown_past;
}

nbrma_order_step nbrma_order_tracker_step(const nbrma_order_tracker *tracker, int rank,
                                          nbrma_way travels)
{
    return nbrma_order_step_for(nbrma_order_tracker_in_flight(tracker, rank), travels);
}

int nbrma_order_tracker_waiting(const nbrma_order_tracker *tracker)
{
    return tracker->waiting;
}

int nbrma_order_tracker_begin_wait(nbrma_order_tracker *tracker, int rank)
{
    if (tracker->waiting >= 0)
        return NBRMA_ERR_SYNC;
    if (!tracker->in_window(rank))
        return NBRMA_ERR_RANK;
    tracker->waiting = rank;
    tracker->noted_since = false;
    return NBRMA_OK;
}

void nbrma_order_tracker_cancel_wait(nbrma_order_tracker *tracker)
{
    tracker->waiting = -1;
}

void nbrma_order_tracker_wait_ended(nbrma_order_tracker *tracker, int rank)
{
    if (tracker->waiting < 0)
        return;
    // T3: the wait covers what was issued toward its rank before it began;
    // a wait toward another rank clears nothing (its rank begins anew)
    if (tracker->waiting == rank && !tracker->noted_since)
        tracker->in_flight[rank] = NBRMA_WAY_NONE;
    tracker->waiting = -1;
}

}       // extern "C"
