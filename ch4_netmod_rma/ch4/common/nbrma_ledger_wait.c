/*
 * mpich-nbrma: the loops waiting for the completion ledger (ledger_adapter.h).
 */

#include "mpidimpl.h"
#include "ucx_impl.h"
#include "nbrma_ledger_state.h"
#include "nbrma_progress.h"
#include "nbrma_completion.h"

int MPIDI_NBRMA_ledger_mark_released(void *arg, int error)
{
    MPIDI_NBRMA_ledger_release_t *r = arg;

    r->released = true;
    r->error = error;
    return MPI_SUCCESS;
}

/* Where UCX emulates RDMA with active messages, a large put moves a few
 * fragments per progress call: spinning while acknowledgements come completes
 * an epoch in one MPI_Test, until none came for IDLE_NS (the target is busy
 * outside MPI) or SPIN_NS in all. Idle rounds are the loop's
 * (MPIDI_NBRMA_progress_idle), or it never yields to a target on its core. */
#define IDLE_NS 5000u      /* 5 us */
#define SPIN_NS 200000u    /* 200 us */

/* True if a wait was released or the last flush in flight finished (then the
 * caller's test decides, with no more progress); false at its time bounds.
 * Begins with progress, not a look: the loops looked after their last round. */
static bool spin_while_flushing(int vni)
{
    nbrma_bounded_spin spin;
    unsigned events;

    nbrma_bounded_spin_begin(&spin, IDLE_NS, SPIN_NS);
    do {
        events = MPIDI_NBRMA_worker_progress(vni);
        if (MPIDI_NBRMA_ledger_poll() ||
            !nbrma_flights_vni(&MPIDI_NBRMA_ledger_state.flights, &vni))
            return true;
        if (events)     /* progress for the idle period, as MPICH's (patch 0042) */
            MPIDI_NBRMA_ucx_events_handled(events);
        else
            MPIDI_NBRMA_progress_idle();
    } while (nbrma_bounded_spin_goes_on(&spin, events != 0));
    return false;
}

/* A round; *looked: the ledger was looked at after its last progress. */
static inline int wait_round(bool yield, bool *looked)
{
    int vni;

    /* MPICH runs one VNI here: the oldest flush's */
    *looked = nbrma_flights_vni(&MPIDI_NBRMA_ledger_state.flights, &vni) &&
        spin_while_flushing(vni);
    if (*looked)
        return MPI_SUCCESS;
    return yield ? MPIDI_NBRMA_progress_blocking_round() : MPIDI_NBRMA_progress_wait_round();
}

int MPIDI_NBRMA_ledger_wait_round(bool yield)
{
    bool looked;

    return wait_round(yield, &looked);
}

/* A round of a blocking wait, then a poll of the ledger where the round did
 * not end with one: MPICH's progress may not have run the hook. */
static inline int wait_and_poll(bool yield)
{
    bool looked;
    int mpi_errno = wait_round(yield, &looked);

    if (mpi_errno == MPI_SUCCESS && !looked)
        MPIDI_NBRMA_ledger_poll();
    return mpi_errno;
}

/* Endpoint flushes only (MPI_Win_flush over emulated RDMA or tcp): the
 * ledger's numbers say when they finished; no waiter to register and free. */
static int block_on_flushes(MPIDI_NBRMA_ledger_wait_t * w, bool yield)
{
    int mpi_errno = MPI_SUCCESS, error;

    while (mpi_errno == MPI_SUCCESS &&
           !nbrma_open_flushes_finished(MPIDI_NBRMA_ledger_state.ledger, &w->open, &w->error))
        mpi_errno = wait_and_poll(yield);
    error = w->error;
    MPIDI_NBRMA_ledger_cancel(w);       /* flushes not waited for finish inside UCX */
    return mpi_errno ? mpi_errno : error;
}

/* Outside parts only (MPIDIG's counters, operations' requests): it looks at
 * them itself, sparing a waiter's registration and free on a hot path. */
static int block_on_parts(MPIDI_NBRMA_ledger_wait_t * w, bool yield)
{
    int mpi_errno = MPI_SUCCESS, error;

    if (w->parts.n == 1 && w->am_target) {
        /* one target's counters alone: the object gathering looked up, not
         * a hash lookup every round; valid within the call, as MPIDIG frees
         * it only in MPI_Win_unlock and MPI_Win_free */
        bool local = w->parts.v[0].local;

        while (mpi_errno == MPI_SUCCESS && !MPIDI_NBRMA_am_target_complete(w->am_target, local))
            mpi_errno = MPIDI_NBRMA_ledger_wait_round(yield);
        if (mpi_errno == MPI_SUCCESS)
            nbrma_outside_parts_remove(&w->parts, 0);
    }
    while (mpi_errno == MPI_SUCCESS && !MPIDI_NBRMA_ledger_parts_done(w))
        mpi_errno = MPIDI_NBRMA_ledger_wait_round(yield);
    MPIDI_NBRMA_ledger_parts_free_requests(w);  /* those left by an error */
    error = w->error;
    MPIDI_NBRMA_ledger_cancel(w);
    return mpi_errno ? mpi_errno : error;
}

/* A wait not complete as gathered: a waiter released by the ledger, the
 * ledger's numbers (flushes only), or its own look (outside parts only). */
static __attribute__ ((noinline))
int block_until_released(MPIDI_NBRMA_ledger_wait_t * w, bool yield)
{
    int mpi_errno;
    MPIDI_NBRMA_ledger_release_t b = { false, MPI_SUCCESS };

    /* a wait of its own, as MPICH's loops begin theirs (patch 0030): else the
     * idle time of earlier waits adds up and a put + flush loop yields */
    MPIDI_NBRMA_progress_wait_begins();
    if (w->parts.n == 0)
        return block_on_flushes(w, yield);
    if (w->open.n == 0)
        return block_on_parts(w, yield);
    mpi_errno = MPIDI_NBRMA_ledger_call_back(w, MPIDI_NBRMA_ledger_mark_released, &b);
    while (mpi_errno == MPI_SUCCESS && !b.released)
        mpi_errno = wait_and_poll(yield);
    if (!b.released)
        MPIDI_NBRMA_ledger_forget_arg(&b);      /* b is gone once we return */
    return mpi_errno ? mpi_errno : b.error;
}

/* Shared memory, nothing to wait for, costs only the test: the wait stays
 * out of line so its register saves do not burden every blocking flush. */
int MPIDI_NBRMA_ledger_block(MPIDI_NBRMA_ledger_wait_t * w, bool yield)
{
    if (MPIDI_NBRMA_ledger_complete_as_gathered(w))
        return w->error;
    return block_until_released(w, yield);
}

int MPIDI_NBRMA_ledger_done_now(MPIDI_NBRMA_ledger_wait_t * w, bool *done)
{
    MPIDI_NBRMA_ledger_release_t b = { false, MPI_SUCCESS };
    int mpi_errno = MPIDI_NBRMA_ledger_call_back(w, MPIDI_NBRMA_ledger_mark_released, &b);

    *done = mpi_errno == MPI_SUCCESS && b.released;
    if (!b.released)
        MPIDI_NBRMA_ledger_forget_arg(&b);      /* released later into the void */
    return mpi_errno ? mpi_errno : *done ? b.error : MPI_SUCCESS;
}
