/*
 * mpich-nbrma: nonblocking flushes of windows without the engine
 * (flush_requests.h).
 *
 * A flush request is complete once (1) every UCX RDMA operation issued before
 * the call (to its target, or to all) has completed, which the endpoint
 * flushes the completion ledger numbers tell (ledger_adapter.h), and (2)
 * every active-message operation (accumulates, operations on dynamic
 * windows, ...) to its targets is complete, which MPIDIG tracks with
 * per-target counters: acknowledged by the target for a flush, sent for a
 * local flush. UCX has no local-only flush, so a local flush waits for (1) as
 * a flush does, like MPICH's blocking MPI_Win_flush_local.
 *
 * MPIDIG's counters count outstanding operations, not issued ones, so (2) also
 * waits for operations issued after the flush: the request never completes
 * early, but a stream of later active-message operations can delay it. The
 * engine's flush ages do not have that delay.
 */

#include "mpidimpl.h"
#include "ucx_impl.h"
#include "nbrma_flush_requests.h"
#include "nbrma_ledger_adapter.h"
#include "nbrma_request.h"

/* A flush to one target is valid inside lock_all, or inside a lock epoch that
 * holds a lock on that target. */
static int check_passive_epoch(MPIR_Win * win, int target)
{
    int mpi_errno = MPI_SUCCESS;

    MPIDIG_EPOCH_CHECK_PASSIVE(win, mpi_errno, goto fn_fail);
    if (target != NBRMA_ALL_RANKS &&
        MPIDIG_WIN(win, sync).access_epoch_type == MPIDIG_EPOTYPE_LOCK) {
        MPIDIG_win_target_t *t = MPIDIG_win_target_find(win, target);
        MPIR_ERR_CHKANDJUMP(t == NULL, mpi_errno, MPI_ERR_RMA_SYNC, "**rmasync");
        MPIDIG_EPOCH_CHECK_TARGET_LOCK(t, mpi_errno, goto fn_fail);
    }

  fn_exit:
    return mpi_errno;
  fn_fail:
    goto fn_exit;
}

/* What the request waits for: (1) and (2) above, toward call->rank. */
static int need_flush(const MPIDI_NBRMA_sync_call_t * call, MPIR_Win * win,
                      const bool * also_flush, MPIDI_NBRMA_ledger_wait_t * wait)
{
    int mpi_errno = MPI_SUCCESS;
    int first = call->rank, last = call->rank;

    if (call->rank == NBRMA_ALL_RANKS) {
        first = 0;
        last = win->comm_ptr->local_size - 1;
    }
    for (int r = first; r <= last && mpi_errno == MPI_SUCCESS; r++)
        mpi_errno = MPIDI_NBRMA_ledger_need_endpoint(wait, r, also_flush && also_flush[r]);
    if (mpi_errno == MPI_SUCCESS)
        mpi_errno = MPIDI_NBRMA_ledger_need_am(wait, call->rank, call->local);
    return mpi_errno;
}

int MPIDI_NBRMA_flush_request_start(const MPIDI_NBRMA_sync_call_t * call, MPIR_Win * win,
                                    const bool * also_flush, MPIR_Request ** request)
{
    int mpi_errno = MPI_SUCCESS;
    MPIR_Request *req = NULL;
    MPIDI_NBRMA_ledger_wait_t wait;

    MPIR_FUNC_ENTER;

    /* the windows' tables refuse the other calls, each saying why */
    MPIR_ERR_CHKANDJUMP(call->kind != MPIDI_NBRMA_SYNC_FLUSH, mpi_errno, MPI_ERR_INTERN,
                        "**intern");
    mpi_errno = check_passive_epoch(win, call->rank);
    MPIR_ERR_CHECK(mpi_errno);
    mpi_errno = MPIDI_NBRMA_request_create(&req);
    MPIR_ERR_CHECK(mpi_errno);
    MPIDI_NBRMA_ledger_wait_init(&wait, win);
    mpi_errno = need_flush(call, win, also_flush, &wait);
    if (mpi_errno == MPI_SUCCESS)
        mpi_errno = MPIDI_NBRMA_ledger_complete_request(&wait, req);
    else
        MPIDI_NBRMA_ledger_cancel(&wait);
    MPIR_ERR_CHECK(mpi_errno);
    *request = req;

  fn_exit:
    MPIR_FUNC_EXIT;
    return mpi_errno;
  fn_fail:
    if (req)
        MPIDI_NBRMA_request_discard(req);
    goto fn_exit;
}
