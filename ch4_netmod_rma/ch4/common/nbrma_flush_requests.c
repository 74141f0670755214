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

int MPIDI_NBRMA_flush_request_start(const MPIDI_NBRMA_sync_call_t * call, MPIR_Win * win,
                                    const bool * also_flush, MPIR_Request ** request)
{
    int mpi_errno = MPI_SUCCESS;
    MPIR_Request *req = NULL;
    MPIDI_NBRMA_ledger_needs_t needs = {
        .target = call->rank,.also_flush = also_flush,
        .am_counters = true,.am_local = call->local
    };

    MPIR_FUNC_ENTER;

    MPIR_ERR_CHKANDJUMP(call->kind != MPIDI_NBRMA_SYNC_FLUSH, mpi_errno, MPI_ERR_RMA_SYNC,
                        "**nbrmanoengine");
    mpi_errno = check_passive_epoch(win, call->rank);
    MPIR_ERR_CHECK(mpi_errno);
    mpi_errno = MPIDI_NBRMA_request_create(&req);
    MPIR_ERR_CHECK(mpi_errno);
    mpi_errno = MPIDI_NBRMA_ledger_wait_for(win, &needs, req);
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
