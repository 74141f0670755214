/*
 * mpich-nbrma: operations of engine windows that the engine has not counted
 * yet (epoch_win.h says why). The core's grant cache (nbrma_grant_cache.h)
 * counts them; this file hands them to the engine and completes them in the
 * ledger.
 */

#include "mpidimpl.h"
#include "epoch_win.h"
#include "nbrma_request.h"
#include <inttypes.h>

/* The endpoint flushes in `wait`, and MPIDIG's operations toward `rank`
 * (sent only, if `local`): blocking if `done` is NULL, else *done if complete
 * at once. */
static int wait_with_am(MPIDI_NBRMA_ledger_wait_t * wait, int rank, bool local, int mpi_errno,
                        bool *done)
{
    if (mpi_errno == MPI_SUCCESS)
        mpi_errno = MPIDI_NBRMA_ledger_need_am(wait, rank, local);
    if (mpi_errno != MPI_SUCCESS) {
        MPIDI_NBRMA_ledger_cancel(wait);
        return mpi_errno;
    }
    return done ? MPIDI_NBRMA_ledger_done_now(wait, done) : MPIDI_NBRMA_ledger_block(wait, false);
}

int MPIDI_NBRMA_direct_complete_uncounted(MPIDI_NBRMA_epoch_win_t * ew, int rank)
{
    MPIDI_NBRMA_ledger_wait_t wait;

    MPIDI_NBRMA_ledger_wait_init(&wait, ew->win);
    return wait_with_am(&wait, rank, false,
                        MPIDI_NBRMA_ledger_need_endpoint(&wait, rank, ew->own_rdma_for != NULL),
                        NULL);
}

void MPIDI_NBRMA_direct_granted(MPIDI_NBRMA_epoch_win_t * ew, int rank)
{
    if (nbrma_fence_grants_every_rank(ew->engine))
        nbrma_grant_cache_granted_all(ew->grants);
    else
        nbrma_grant_cache_granted(ew->grants, rank);
}

int MPIDI_NBRMA_direct_hand_over(MPIDI_NBRMA_epoch_win_t * ew, bool forget_grants)
{
    int mpi_errno = MPI_SUCCESS, rank;
    uint64_t count;
    bool local_done, by_endpoint;

    while (nbrma_grant_cache_last_counted(ew->grants, &rank, &count, &local_done,
                                          &by_endpoint)) {
        int rc, issued = 0;
        nbrma_op_ticket ticket;

        mpi_errno = MPIDI_NBRMA_sweep_reserve(ew);
        MPIR_ERR_CHECK(mpi_errno);
        ENGINE_CALL(ew, rc, nbrma_op_issue_direct(ew->engine, rank, count, &ticket, &issued));
        mpi_errno = MPIDI_NBRMA_engine_errno(ew, rc);
        MPIR_ERR_CHECK(mpi_errno);
        /* the grant holds until the synchronization call that follows */
        MPIR_ERR_CHKANDJUMP1(!issued, mpi_errno, MPI_ERR_INTERN, "**nbrmaengine",
                             "**nbrmaengine %s", "counted operations lost their epoch");
        EPOCH_TRACE(ew, "hand over %" PRIu64 " direct ops to %d age %" PRIu64, ticket.count,
                    rank, ticket.age);
        nbrma_grant_cache_forget(ew->grants, rank);
        mpi_errno = MPIDI_NBRMA_sweep_track(ew, ticket, NULL, local_done, by_endpoint, false);
        MPIR_ERR_CHECK(mpi_errno);
    }
    if (forget_grants)
        nbrma_grant_cache_forget_grants(ew->grants);

  fn_exit:
    return mpi_errno;
  fn_fail:
    goto fn_exit;
}

/* Whether the cache counted operations a flush toward `rank` covers; if so,
 * starts the endpoint flushes they need in `wait`. */
static bool gather_covered(MPIDI_NBRMA_epoch_win_t * ew, int rank, bool local,
                           MPIDI_NBRMA_ledger_wait_t * wait, int *mpi_errno)
{
    size_t cursor = 0;
    int target;
    bool by_endpoint;
    uint64_t seq;

    *mpi_errno = MPI_SUCCESS;
    /* an earlier nonblocking local flush finished: what it covered is
     * locally complete (nbrma_grant_cache.h says why this matters) */
    if (local && nbrma_grant_cache_local_flush_in_flight(ew->grants, rank, &seq) &&
        (seq == 0 || MPIDI_NBRMA_ledger_flush_succeeded(ew->win, rank, seq)) &&
        MPIDI_NBRMA_am_ops_complete(ew->win, rank, true))
        nbrma_grant_cache_local_flush_finished(ew->grants, rank);
    if (!nbrma_grant_cache_next_covered(ew->grants, rank, local, &cursor, &target, &by_endpoint))
        return false;
    /* with the order of R9's copies before what follows the flush */
    MPIDI_NBRMA_ledger_wait_init(wait, ew->win);
    /* active messages alone need only MPICH's counters: an endpoint flush
     * would cost a round trip more over tcp */
    do
        if (by_endpoint)
            *mpi_errno = MPIDI_NBRMA_ledger_need_endpoint(wait, target, ew->own_rdma_for != NULL);
    while (*mpi_errno == MPI_SUCCESS &&
           nbrma_grant_cache_next_covered(ew->grants, rank, local, &cursor, &target,
                                          &by_endpoint));
    return true;
}

int MPIDI_NBRMA_direct_iflush(MPIDI_NBRMA_epoch_win_t * ew, int rank, bool local,
                              MPIR_Request ** request)
{
    MPIDI_NBRMA_ledger_wait_t wait;
    MPIR_Request *req = NULL;
    int mpi_errno;
    uint64_t seq = 0;   /* no endpoint flush in flight */

    if (!gather_covered(ew, rank, local, &wait, &mpi_errno))
        return MPIDI_NBRMA_request_create_complete(request);
    if (mpi_errno == MPI_SUCCESS)
        mpi_errno = MPIDI_NBRMA_ledger_need_am(&wait, rank, local);
    if (mpi_errno == MPI_SUCCESS && MPIDI_NBRMA_ledger_complete_as_gathered(&wait)) {
        /* complete at once (shared memory): as a blocking flush */
        mpi_errno = wait.error;
        MPIDI_NBRMA_ledger_cancel(&wait);
        if (mpi_errno != MPI_SUCCESS)
            return mpi_errno;
        nbrma_grant_cache_flushed(ew->grants, rank, local);
        return MPIDI_NBRMA_request_create_complete(request);
    }
    if (mpi_errno == MPI_SUCCESS)
        mpi_errno = MPIDI_NBRMA_request_create(&req);
    if (mpi_errno != MPI_SUCCESS) {
        MPIDI_NBRMA_ledger_cancel(&wait);
        return mpi_errno;
    }
    /* they stay counted: the next flush or synchronization call looks at them
     * again (complete by then, at once); a local flush notes what it covers */
    if (local)
        (void) MPIDI_NBRMA_ledger_open_flush(&wait, rank, &seq);
    mpi_errno = MPIDI_NBRMA_ledger_complete_request(&wait, req);
    if (mpi_errno != MPI_SUCCESS) {
        MPIDI_NBRMA_request_discard(req);
        return mpi_errno;
    }
    if (local)
        nbrma_grant_cache_local_flush_began(ew->grants, rank, seq);
    *request = req;
    return MPI_SUCCESS;
}

int MPIDI_NBRMA_direct_complete(MPIDI_NBRMA_epoch_win_t * ew, int rank, bool local, bool *done)
{
    int mpi_errno;
    MPIDI_NBRMA_ledger_wait_t wait;
    bool completed = true;

    if (!gather_covered(ew, rank, local, &wait, &mpi_errno))
        goto fn_exit;
    mpi_errno = wait_with_am(&wait, rank, local, mpi_errno, done ? &completed : NULL);
    if (mpi_errno == MPI_SUCCESS && completed)
        nbrma_grant_cache_flushed(ew->grants, rank, local);
  fn_exit:
    if (done)
        *done = completed;
    return mpi_errno;
}
