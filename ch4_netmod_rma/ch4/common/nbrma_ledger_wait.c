/*
 * mpich-nbrma: loops that wait for the completion ledger (ledger_adapter.h):
 * a blocking wait, a wait that completes at once or not at all, and one
 * round of either, which spins on the UCX worker while endpoint flushes are
 * in flight. They use the adapter's public calls only.
 */

#include "mpidimpl.h"
#include "ucx_impl.h"
#include "nbrma_ledger_adapter.h"
#include "nbrma_progress.h"

typedef struct {
    bool released;
    int error;
} blocked_t;

static int unblock(void *arg, int error)
{
    blocked_t *b = arg;

    b->released = true;
    b->error = error;
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

/* Whether some wait was released while spinning. */
static bool spin_while_flushing(int vni)
{
    uint64_t start, last_event, now;
    ucp_worker_h worker = MPIDI_UCX_global.ctx[vni].worker;

    if (MPIDI_NBRMA_ledger_poll())
        return true;
    if (!MPIDI_NBRMA_ledger_flushing(&vni))
        return false;
    start = last_event = now = MPIDI_NBRMA_monotonic_ns();
    while (now - last_event < IDLE_NS && now - start < SPIN_NS) {
        unsigned events;

        MPID_THREAD_CS_ENTER(VCI, MPIDI_VCI(vni).lock);
        events = ucp_worker_progress(worker);
        MPID_THREAD_CS_EXIT(VCI, MPIDI_VCI(vni).lock);
        if (MPIDI_NBRMA_ledger_poll())
            return true;
        if (!MPIDI_NBRMA_ledger_flushing(&vni))
            return false;
        now = MPIDI_NBRMA_monotonic_ns();
        if (events)
            last_event = now;
        else
            MPIDI_NBRMA_progress_idle();
    }
    return false;
}

int MPIDI_NBRMA_ledger_wait_round(bool yield)
{
    int vni;

    if (MPIDI_NBRMA_ledger_flushing(&vni) && spin_while_flushing(vni))
        return MPI_SUCCESS;
    return yield ? MPIDI_NBRMA_progress_blocking_round() : MPIDI_NBRMA_progress_wait_round();
}

int MPIDI_NBRMA_ledger_block(MPIDI_NBRMA_ledger_wait_t * w, bool yield)
{
    int mpi_errno;
    blocked_t b = { false, MPI_SUCCESS };

    if (MPIDI_NBRMA_ledger_complete_as_gathered(w))
        return w->error;        /* shared memory: nothing to wait for */
    mpi_errno = MPIDI_NBRMA_ledger_call_back(w, unblock, &b);
    while (mpi_errno == MPI_SUCCESS && !b.released) {
        mpi_errno = MPIDI_NBRMA_ledger_wait_round(yield);
        if (mpi_errno == MPI_SUCCESS)
            MPIDI_NBRMA_ledger_poll();  /* the round's progress may not have run the hook */
    }
    if (!b.released)
        MPIDI_NBRMA_ledger_forget_arg(&b);      /* b is gone once we return */
    return mpi_errno ? mpi_errno : b.error;
}

int MPIDI_NBRMA_ledger_done_now(MPIDI_NBRMA_ledger_wait_t * w, bool *done)
{
    blocked_t b = { false, MPI_SUCCESS };
    int mpi_errno = MPIDI_NBRMA_ledger_call_back(w, unblock, &b);

    *done = mpi_errno == MPI_SUCCESS && b.released;
    if (!b.released)
        MPIDI_NBRMA_ledger_forget_arg(&b);      /* released later into the void */
    return mpi_errno ? mpi_errno : *done ? b.error : MPI_SUCCESS;
}
