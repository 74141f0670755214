/*
 * mpich-nbrma: nonblocking flushes of windows without the engine
 * (flush_requests.h).
 *
 * A flush request is complete once (1) every UCX RDMA operation issued before
 * the call (to its target, or to all) has completed, which endpoint flushes
 * started at call time tell, and (2) every active-message operation
 * (accumulates, operations on dynamic windows, ...) to its targets is
 * complete, which MPIDIG tracks with per-target counters: acknowledged by the
 * target for a flush, sent for a local flush. UCX has no local-only flush, so
 * a local flush waits for (1) as a flush does, like MPICH's blocking
 * MPI_Win_flush_local.
 *
 * MPIDIG's counters count outstanding operations, not issued ones, so (2) also
 * waits for operations issued after the flush: the request never completes
 * early, but a stream of later active-message operations can delay it. The
 * engine's flush ages do not have that delay.
 *
 * Pending requests sit in one list, driven by the component's progress hook.
 * All of this runs under MPICH's global critical section (the binding and the
 * progress engine hold it).
 */

#include "mpidimpl.h"
#include "ucx_impl.h"
#include "nbrma_flush_requests.h"
#include "nbrma_completion.h"
#include "nbrma_progress.h"
#include "nbrma_request.h"

typedef struct pending_flush {
    MPIR_Request *req;
    MPIR_Win *win;
    int target;                 /* window rank, or NBRMA_ALL_RANKS */
    bool local;                 /* only local completion is asked for */
    MPIDI_NBRMA_ep_flushes_t ep_flushes;
    struct pending_flush *next;
} pending_flush_t;

static pending_flush_t *pending_flushes;

static int poll_pending_flushes(int *made_progress);

static MPIDI_NBRMA_poller_t flush_poller = { .poll = poll_pending_flushes };

static int poll_pending_flushes(int *made_progress)
{
    pending_flush_t **link = &pending_flushes;

    while (*link) {
        pending_flush_t *pf = *link;
        int flush_errno = MPI_SUCCESS;

        if (!MPIDI_NBRMA_ep_flushes_test(&pf->ep_flushes, &flush_errno) ||
            !MPIDI_NBRMA_am_ops_complete(pf->win, pf->target, pf->local)) {
            link = &pf->next;
            continue;
        }
        *link = pf->next;
        if (flush_errno != MPI_SUCCESS)
            pf->req->status.MPI_ERROR = flush_errno;
        MPID_Request_complete(pf->req);
        MPIDI_NBRMA_ep_flushes_destroy(&pf->ep_flushes);
        MPL_free(pf);
        if (made_progress)
            *made_progress = 1;
    }
    return pending_flushes ? MPI_SUCCESS : MPIDI_NBRMA_poller_sleep(&flush_poller);
}

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
    pending_flush_t *pf = NULL;
    MPIR_Request *req = NULL;

    MPIR_FUNC_ENTER;

    MPIR_ERR_CHKANDJUMP(call->kind != MPIDI_NBRMA_SYNC_FLUSH, mpi_errno, MPI_ERR_RMA_SYNC,
                        "**nbrmanoengine");
    mpi_errno = check_passive_epoch(win, call->rank);
    MPIR_ERR_CHECK(mpi_errno);
    /* first, so that a failure here leaves nothing half started */
    mpi_errno = MPIDI_NBRMA_poller_wake(&flush_poller);
    MPIR_ERR_CHECK(mpi_errno);

    mpi_errno = MPIDI_NBRMA_request_create(&req);
    MPIR_ERR_CHECK(mpi_errno);
    pf = MPL_calloc(1, sizeof(*pf), MPL_MEM_RMA);
    MPIR_ERR_CHKANDJUMP(pf == NULL, mpi_errno, MPI_ERR_NO_MEM, "**nomem");
    pf->req = req;
    pf->win = win;
    pf->target = call->rank;
    pf->local = call->local;
    mpi_errno = MPIDI_NBRMA_ep_flushes_init(&pf->ep_flushes, win);
    MPIR_ERR_CHECK(mpi_errno);
    mpi_errno = MPIDI_NBRMA_ep_flushes_start(&pf->ep_flushes, win, call->rank, also_flush);
    MPIR_ERR_CHECK(mpi_errno);

    /* from here on the pending list owns the request's completion */
    pf->next = pending_flushes;
    pending_flushes = pf;
    *request = req;

    /* Complete at once what is already complete, so that a flush with nothing
     * outstanding costs no trip through the progress engine. */
    mpi_errno = poll_pending_flushes(NULL);

  fn_exit:
    MPIR_FUNC_EXIT;
    return mpi_errno;
  fn_fail:
    if (pf) {
        if (pf->ep_flushes.reqs)
            MPIDI_NBRMA_ep_flushes_destroy(&pf->ep_flushes);
        MPL_free(pf);
    }
    if (req)
        MPIDI_NBRMA_request_discard(req);
    goto fn_exit;
}

static bool has_pending_flush(MPIR_Win * win)
{
    for (pending_flush_t * pf = pending_flushes; pf; pf = pf->next)
        if (pf->win == win)
            return true;
    return false;
}

int MPIDI_NBRMA_flush_requests_settle(MPIR_Win * win)
{
    int mpi_errno = MPI_SUCCESS;
    int vci = MPIDI_WIN(win, am_vci);

    /* MPICH's blocking RMA spin loops do not run progress hooks: poll here */
    while (has_pending_flush(win)) {
        mpi_errno = poll_pending_flushes(NULL);
        MPIR_ERR_CHECK(mpi_errno);
        if (!has_pending_flush(win))
            break;
        mpi_errno = MPIDI_progress_test_vci(vci);
        MPIR_ERR_CHECK(mpi_errno);
        MPIDI_NBRMA_progress_idle();
    }

  fn_exit:
    return mpi_errno;
  fn_fail:
    goto fn_exit;
}
