/*
 * mpich-nbrma: loops that wait for the completion ledger (ledger_adapter.h):
 * a blocking wait, a wait that completes at once or not at all, and one
 * round of either, which spins on the UCX worker while endpoint flushes are
 * in flight. They use the adapter's public calls, and read the flushes in
 * flight and a wait's open flushes through the core (nbrma_ledger_flights.h).
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

/* Where UCX emulates RDMA with active messages (user memory on this
 * project's machines), a large put moves one fragment per target
 * acknowledgement, a few fragments per progress call: a 1 MB put needed about
 * 15 calls of MPI_Test 50 us apart, so an epoch's completion waited for the
 * application's 15th test. Going on while acknowledgements keep coming
 * completes it in one. The spin stops when nothing arrived for IDLE_NS (the
 * target is busy outside MPI: spinning would not help) or after SPIN_NS in
 * all, which bounds what one round can cost. Its idle rounds are the
 * waiting loop's idle rounds (MPIDI_NBRMA_progress_idle): counted apart, the
 * 5 us spins between the loop's own rounds looked like pauses to it, which
 * then never gave the core to a target waiting for it on the same core. With
 * real RDMA the flushes finish in hardware and the first check succeeds. */
#define IDLE_NS 5000u      /* 5 us */
#define SPIN_NS 200000u    /* 200 us */

/* Whether the spin ended because something completed: a wait was released,
 * or the last flush in flight finished (the caller's own test then decides,
 * without a further progress round: callgrind, put + flush on a create
 * window, that round was about 330 of the flush's 1700 instructions; the
 * ledger was looked at after the last progress). False when it ended by its
 * time bounds (os/wait_pacing.h, which reads the clock every few rounds
 * only). It begins with progress, not with a look at the ledger: the
 * waiting loops look after every round, and only progress completes a
 * flush in flight (two looks of about 60 instructions each per blocking
 * flush on a create window, callgrind). */
static bool spin_while_flushing(int vni)
{
    ucp_worker_h worker = MPIDI_UCX_global.ctx[vni].worker;
    nbrma_bounded_spin spin;
    unsigned events;

    nbrma_bounded_spin_begin(&spin, IDLE_NS, SPIN_NS);
    do {
        MPID_THREAD_CS_ENTER(VCI, MPIDI_VCI(vni).lock);
        events = ucp_worker_progress(worker);
        MPID_THREAD_CS_EXIT(VCI, MPIDI_VCI(vni).lock);
        if (MPIDI_NBRMA_ledger_poll() || !nbrma_flights_vni(&MPIDI_NBRMA_ledger_state.flights, &vni))
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

/* A blocking wait of endpoint flushes only (MPI_Win_flush toward targets
 * that UCX reaches by emulated RDMA or over tcp): the ledger's numbers say
 * when they finished, and no waiter is registered, released and freed for
 * it (about 500 instructions of the 3600 of a put + flush on a create
 * window, callgrind). */
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

/* A blocking wait of outside parts only (MPIDIG's counters, operations'
 * requests: a flush toward a target that MPICH's active messages reach)
 * looks at its parts itself and registers no waiter: osu_cas_latency -w
 * create -s flush_local spent about 600 of the origin's 5400 instructions
 * per iteration on the waiter's registration, release and free
 * (callgrind; vanilla's whole iteration: 3300). */
static int block_on_parts(MPIDI_NBRMA_ledger_wait_t * w, bool yield)
{
    int mpi_errno = MPI_SUCCESS, error;

    if (w->parts.n == 1 && w->am_target) {
        /* MPIDIG's counters toward one target alone (a flush toward a target
         * that MPICH's active messages reach, its fetch_and_op's): the
         * target object gathering looked up, not a lookup at every round
         * (osu_fop_latency -w create -s flush, callgrind: about 250 of the
         * origin's 4,170 instructions per iteration, vanilla's whole
         * iteration 3,040). Not kept for waits that outlive their call:
         * MPIDIG frees the object in MPI_Win_unlock. */
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

/* A wait that did not complete as gathered: a waiter released by the ledger,
 * the ledger's numbers for a wait of endpoint flushes only, or its own look
 * at a wait of outside parts only. */
static __attribute__ ((noinline))
int block_until_released(MPIDI_NBRMA_ledger_wait_t * w, bool yield)
{
    int mpi_errno;
    MPIDI_NBRMA_ledger_release_t b = { false, MPI_SUCCESS };

    /* a wait of its own, as MPICH's loops begin theirs (patch 0030): the idle
     * time of earlier waits does not count, or a put + flush loop yielded
     * the processor every 10 us of flushing in all */
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

/* The shared-memory case, nothing to wait for, costs only its test: with the
 * waiting inlined here, the register saves of the wait cost every blocking
 * flush 4 instructions (callgrind, put + flush). */
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
