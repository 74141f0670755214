/*
 * mpich-nbrma: nonblocking flushes (MPIX_Win_iflush, _iflush_local,
 * _iflush_all, _iflush_local_all).
 *
 * A flush request is complete once (1) every UCX RDMA operation issued before
 * the call (to its target, or to all) has completed, which nonblocking
 * ucp_ep_flush_nbx() calls, one per target endpoint, started at call time tell
 * us, and
 * (2) every active-message operation (accumulates, operations on dynamic
 * windows, ...) to its targets is complete, which MPIDIG tracks with per-target
 * counters: acknowledged by the target for a flush, sent for a local flush.
 * UCX has no local-only flush, so a local flush waits for (1) as a flush does,
 * like MPICH's blocking MPI_Win_flush_local.
 *
 * The AM counters count outstanding operations, not issued ones, so (2) also
 * waits for operations issued after the flush: the request never completes
 * early, but a stream of later AM operations can delay it. The engine's flush
 * ages (per-operation stamps) remove that delay; until then this is the
 * conservative rule.
 *
 * Flushes to all targets flush each endpoint, not the worker: with UCX 1.13.1
 * on this project's machines a worker flush sometimes completes before a large
 * put to one of several peers has read its origin buffer. Vanilla MPICH's
 * MPI_Win_flush_all and MPI_Win_flush_local_all, which flush the worker, show
 * it (4 ranks, 4 MiB puts, the buffer overwritten after the flush: the target
 * receives the new bytes in about one run of three); endpoint flushes do not.
 *
 * Pending requests sit in one list driven by a progress hook, which MPICH runs
 * from MPI_Wait/MPI_Test and friends. All of this runs under MPICH's global
 * critical section (the binding and the progress engine hold it).
 */

#include "mpidimpl.h"
#include "ucx_impl.h"
#include "mpidi_nbrma_hooks.h"
#include "nbrma_core.h"
#include "nbrma_epochs.h"
#include "nbrma_memhandle.h"

/* neither a rank nor MPI_PROC_NULL (-1 in MPICH) */
#define MPIDI_NBRMA_ALL_TARGETS (-2)

typedef struct MPIDI_NBRMA_pending_flush {
    MPIR_Request *req;
    MPIR_Win *win;
    int target;                 /* window rank, or MPIDI_NBRMA_ALL_TARGETS */
    bool local;                 /* only local completion is asked for */
    void **ucx_flush_reqs;      /* endpoint flushes still in progress ... */
    int n_ucx_flush_reqs;       /* ... the first n of them */
    int vni;
    struct MPIDI_NBRMA_pending_flush *next;
} MPIDI_NBRMA_pending_flush_t;

static MPIDI_NBRMA_pending_flush_t *pending_flushes;

static int poll_pending_flushes(int *made_progress);

static MPIDI_NBRMA_hook_t flush_hook = { .poll = poll_pending_flushes, .id = -1 };

int MPIDI_NBRMA_ucx_flush_test(void **reqs, int *n_reqs, int vni, int *mpi_errno_out)
{
    int mpi_errno = MPI_SUCCESS;
    ucs_status_t failure = UCS_OK;

    MPID_THREAD_CS_ENTER(VCI, MPIDI_VCI(vni).lock);
    for (int i = 0; i < *n_reqs;) {
        ucs_status_t status = ucp_request_check_status(reqs[i]);
        if (status == UCS_INPROGRESS) {
            i++;
            continue;
        }
        if (status != UCS_OK)
            failure = status;
        ucp_request_free(reqs[i]);
        reqs[i] = reqs[--*n_reqs];
    }
    MPID_THREAD_CS_EXIT(VCI, MPIDI_VCI(vni).lock);
    MPIDI_UCX_CHK_STATUS(failure);

  fn_exit:
    *mpi_errno_out = mpi_errno;
    return *n_reqs == 0;
  fn_fail:
    goto fn_exit;
}

/* Non-zero once the UCX flushes started for `pf` have completed. The progress
 * engine that runs this hook also progresses the UCX worker. */
static int ucx_flush_test(MPIDI_NBRMA_pending_flush_t * pf, int *mpi_errno_out)
{
    return MPIDI_NBRMA_ucx_flush_test(pf->ucx_flush_reqs, &pf->n_ucx_flush_reqs, pf->vni,
                                      mpi_errno_out);
}

/* Whether MPIDIG has no incomplete active-message operation toward the flush's
 * target(s). Targets without a target object have none. */
static bool am_ops_complete(MPIDI_NBRMA_pending_flush_t * pf)
{
    MPIDIG_win_target_t *t;

    if (pf->target == MPIDI_NBRMA_ALL_TARGETS)
        return pf->local ? MPIDIG_win_check_all_targets_local_completed(pf->win)
            : MPIDIG_win_check_all_targets_remote_completed(pf->win);
    t = MPIDIG_win_target_find(pf->win, pf->target);
    if (t == NULL)
        return true;
    if (pf->local)
        return MPIR_cc_get(t->local_cmpl_cnts) == 0;
    return MPIR_cc_get(t->remote_cmpl_cnts) == 0 && MPIR_cc_get(t->remote_acc_cmpl_cnts) == 0;
}

static int flush_is_complete(MPIDI_NBRMA_pending_flush_t * pf, int *mpi_errno_out)
{
    if (!ucx_flush_test(pf, mpi_errno_out))
        return 0;
    return am_ops_complete(pf);
}

static int poll_pending_flushes(int *made_progress)
{
    int mpi_errno = MPI_SUCCESS;
    MPIDI_NBRMA_pending_flush_t **link = &pending_flushes;

    while (*link) {
        MPIDI_NBRMA_pending_flush_t *pf = *link;
        int flush_errno = MPI_SUCCESS;

        if (!flush_is_complete(pf, &flush_errno)) {
            link = &pf->next;
            continue;
        }
        *link = pf->next;
        if (flush_errno != MPI_SUCCESS)
            pf->req->status.MPI_ERROR = flush_errno;
        MPID_Request_complete(pf->req);
        MPL_free(pf->ucx_flush_reqs);
        MPL_free(pf);
        if (made_progress)
            *made_progress = 1;
    }

    if (pending_flushes == NULL)
        mpi_errno = MPIDI_NBRMA_hook_deactivate(&flush_hook);
    return mpi_errno;
}

int MPIDI_NBRMA_hook_activate(MPIDI_NBRMA_hook_t * hook)
{
    int mpi_errno = MPI_SUCCESS;

    if (hook->id < 0) {
        mpi_errno = MPIR_Progress_hook_register(hook->poll, &hook->id);
        MPIR_ERR_CHECK(mpi_errno);
    }
    if (!hook->active) {
        mpi_errno = MPIR_Progress_hook_activate(hook->id);
        MPIR_ERR_CHECK(mpi_errno);
        hook->active = true;
    }

  fn_exit:
    return mpi_errno;
  fn_fail:
    goto fn_exit;
}

int MPIDI_NBRMA_hook_deactivate(MPIDI_NBRMA_hook_t * hook)
{
    int mpi_errno = MPI_SUCCESS;

    if (hook->active) {
        mpi_errno = MPIR_Progress_hook_deactivate(hook->id);
        hook->active = false;
    }
    return mpi_errno;
}

int MPIDI_NBRMA_ucx_flush_start(MPIR_Win * win, int first, int last, int vni,
                                void **reqs, int *n_reqs)
{
    int mpi_errno = MPI_SUCCESS;
    ucs_status_t failure = UCS_OK;

    MPID_THREAD_CS_ENTER(VCI, MPIDI_VCI(vni).lock);
    for (int rank = first; rank <= last; rank++) {
        ucp_request_param_t param = { 0 };
        ucs_status_ptr_t status_ptr;

        /* RDMA of MPICH's, or of ours on a dynamic window (memory handles,
         * cached rkeys) */
        if (!MPIDI_UCX_is_reachable_target(rank, win, MPIDI_WIN(win, winattr)) &&
            !MPIDI_NBRMA_rdma_pending(win, rank))
            continue;
        status_ptr = ucp_ep_flush_nbx(MPIDI_UCX_WIN_TO_EP(win, rank, vni), &param);
        if (UCS_PTR_IS_ERR(status_ptr)) {
            failure = UCS_PTR_STATUS(status_ptr);
            break;
        }
        if (status_ptr != NULL)
            reqs[(*n_reqs)++] = status_ptr;
    }
    MPID_THREAD_CS_EXIT(VCI, MPIDI_VCI(vni).lock);
    MPIDI_UCX_CHK_STATUS(failure);

  fn_exit:
    return mpi_errno;
  fn_fail:
    goto fn_exit;
}

/* Starts a nonblocking flush of the endpoint of each target that UCX RDMA
 * reaches (`target`, or all) and keeps the requests still in progress. */
static int start_ucx_flushes(MPIDI_NBRMA_pending_flush_t * pf)
{
    int mpi_errno = MPI_SUCCESS;
    MPIR_Win *win = pf->win;
    int first = pf->target, last = pf->target;

    /* Windows without UCX RDMA (no info_table) only use active messages,
     * unless the component issued RDMA on them (dynamic windows). */
    if (MPIDI_UCX_WIN(win).info_table == NULL &&
        !MPIDI_NBRMA_rdma_pending(win, pf->target == MPIDI_NBRMA_ALL_TARGETS ? -1 : pf->target))
        goto fn_exit;
    if (pf->target == MPIDI_NBRMA_ALL_TARGETS) {
        first = 0;
        last = win->comm_ptr->local_size - 1;
    }
    pf->ucx_flush_reqs = MPL_malloc((last - first + 1) * sizeof(void *), MPL_MEM_RMA);
    MPIR_ERR_CHKANDJUMP(pf->ucx_flush_reqs == NULL, mpi_errno, MPI_ERR_NO_MEM, "**nomem");
    mpi_errno = MPIDI_NBRMA_ucx_flush_start(win, first, last, pf->vni, pf->ucx_flush_reqs,
                                            &pf->n_ucx_flush_reqs);

  fn_exit:
    return mpi_errno;
  fn_fail:
    goto fn_exit;
}

/* A flush to one target is valid inside lock_all, or inside a lock epoch that
 * holds a lock on that target. */
static int check_passive_epoch(MPIR_Win * win, int target)
{
    int mpi_errno = MPI_SUCCESS;

    MPIDIG_EPOCH_CHECK_PASSIVE(win, mpi_errno, goto fn_fail);
    if (target != MPIDI_NBRMA_ALL_TARGETS &&
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

/* The common body of the four MPIR_Win_iflush*_impl calls. */
static int start_flush(MPIR_Win * win, int target, bool local, MPIR_Request ** request)
{
    int mpi_errno = MPI_SUCCESS;
    MPIDI_NBRMA_pending_flush_t *pf = NULL;
    MPIR_Request *req = NULL;

    MPIR_FUNC_ENTER;

    if (MPIDI_NBRMA_win_has_engine(win)) {
        /* the engine's flush ages: later operations never delay the request */
        mpi_errno = MPIDI_NBRMA_epochs_iflush(win, target == MPIDI_NBRMA_ALL_TARGETS ?
                                              NBRMA_ALL_RANKS : target, local, request);
        goto fn_exit;
    }
    mpi_errno = check_passive_epoch(win, target);
    MPIR_ERR_CHECK(mpi_errno);
    /* first, so that a failure here leaves nothing half started */
    mpi_errno = MPIDI_NBRMA_hook_activate(&flush_hook);
    MPIR_ERR_CHECK(mpi_errno);

    req = MPIR_Request_create_from_pool_safe(MPIR_REQUEST_KIND__RMA, 0, 2);
    MPIR_ERR_CHKANDJUMP(req == NULL, mpi_errno, MPIX_ERR_NOREQ, "**nomemreq");
    pf = MPL_calloc(1, sizeof(*pf), MPL_MEM_RMA);
    MPIR_ERR_CHKANDJUMP(pf == NULL, mpi_errno, MPI_ERR_NO_MEM, "**nomem");
    pf->req = req;
    pf->win = win;
    pf->target = target;
    pf->local = local;
    pf->vni = MPIDI_UCX_get_win_vni(win);
    mpi_errno = start_ucx_flushes(pf);
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
        /* endpoint flushes already started finish on their own */
        for (int i = 0; i < pf->n_ucx_flush_reqs; i++)
            ucp_request_free(pf->ucx_flush_reqs[i]);
        MPL_free(pf->ucx_flush_reqs);
        MPL_free(pf);
    }
    if (req) {
        /* drop both references: the request was never handed out */
        MPIR_Request_free(req);
        MPIR_Request_free(req);
    }
    goto fn_exit;
}

int MPIDI_NBRMA_complete_request(MPIR_Request ** request)
{
    int mpi_errno = MPI_SUCCESS;

    *request = MPIR_Request_create_complete(MPIR_REQUEST_KIND__RMA);
    MPIR_ERR_CHKANDJUMP(*request == NULL, mpi_errno, MPIX_ERR_NOREQ, "**nomemreq");

  fn_fail:
    return mpi_errno;
}

int MPIR_Win_iflush_impl(int rank, MPIR_Win * win, MPIR_Request ** request)
{
    if (rank == MPI_PROC_NULL)
        return MPIDI_NBRMA_complete_request(request);
    return start_flush(win, rank, false, request);
}

int MPIR_Win_iflush_local_impl(int rank, MPIR_Win * win, MPIR_Request ** request)
{
    if (rank == MPI_PROC_NULL)
        return MPIDI_NBRMA_complete_request(request);
    return start_flush(win, rank, true, request);
}

int MPIR_Win_iflush_all_impl(MPIR_Win * win, MPIR_Request ** request)
{
    return start_flush(win, MPIDI_NBRMA_ALL_TARGETS, false, request);
}

int MPIR_Win_iflush_local_all_impl(MPIR_Win * win, MPIR_Request ** request)
{
    return start_flush(win, MPIDI_NBRMA_ALL_TARGETS, true, request);
}

static int has_pending_flush(MPIR_Win * win)
{
    for (MPIDI_NBRMA_pending_flush_t * pf = pending_flushes; pf; pf = pf->next)
        if (pf->win == win)
            return 1;
    return 0;
}

int MPIDI_NBRMA_win_free_hook(MPIR_Win * win)
{
    int mpi_errno = MPI_SUCCESS;
    int vci = MPIDI_WIN(win, am_vci);

    MPIR_FUNC_ENTER;

    /* Blocking RMA spin loops do not run progress hooks: poll explicitly. */
    while (has_pending_flush(win)) {
        mpi_errno = poll_pending_flushes(NULL);
        MPIR_ERR_CHECK(mpi_errno);
        if (!has_pending_flush(win))
            break;
        mpi_errno = MPIDI_progress_test_vci(vci);
        MPIR_ERR_CHECK(mpi_errno);
    }

  fn_exit:
    MPIR_FUNC_EXIT;
    return mpi_errno;
  fn_fail:
    goto fn_exit;
}
