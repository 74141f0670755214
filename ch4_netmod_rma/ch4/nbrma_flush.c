/*
 * mpich-nbrma: nonblocking flushes (MPIX_Win_iflush_all).
 *
 * A flush request is complete once (1) every UCX RDMA operation issued on the
 * window's worker before the call has completed remotely, which a nonblocking
 * ucp_worker_flush_nbx() started at call time tells us, and (2) every active-
 * message operation (accumulates, operations on dynamic windows, ...) has been
 * acknowledged by its target, which MPIDIG tracks with per-target counters.
 *
 * The AM counters count outstanding operations, not issued ones, so (2) also
 * waits for operations issued after the flush: the request never completes
 * early, but a stream of later AM operations can delay it. The engine's flush
 * ages (per-operation stamps) remove that delay; until then this is the
 * conservative rule.
 *
 * Pending requests sit in one list driven by a progress hook, which MPICH runs
 * from MPI_Wait/MPI_Test and friends. All of this runs under MPICH's global
 * critical section (the binding and the progress engine hold it).
 */

#include "mpidimpl.h"
#include "ucx_impl.h"
#include "mpidi_nbrma_hooks.h"

typedef struct MPIDI_NBRMA_pending_flush {
    MPIR_Request *req;
    MPIR_Win *win;
    void *ucx_flush_req;        /* NULL once the worker flush has completed */
    int vni;
    struct MPIDI_NBRMA_pending_flush *next;
} MPIDI_NBRMA_pending_flush_t;

static MPIDI_NBRMA_pending_flush_t *pending_flushes;
static int flush_hook_id = -1;
static int flush_hook_active;

static int poll_pending_flushes(int *made_progress);

/* Non-zero once the worker flush started for `pf` has completed. */
static int ucx_flush_test(MPIDI_NBRMA_pending_flush_t * pf, int *mpi_errno_out)
{
    int mpi_errno = MPI_SUCCESS;
    ucs_status_t status;

    if (pf->ucx_flush_req == NULL)
        return 1;

    ucp_worker_progress(MPIDI_UCX_global.ctx[pf->vni].worker);
    status = ucp_request_check_status(pf->ucx_flush_req);
    if (status == UCS_INPROGRESS)
        return 0;

    ucp_request_free(pf->ucx_flush_req);
    pf->ucx_flush_req = NULL;
    MPIDI_UCX_CHK_STATUS(status);

  fn_exit:
    *mpi_errno_out = mpi_errno;
    return 1;
  fn_fail:
    goto fn_exit;
}

static int flush_is_complete(MPIDI_NBRMA_pending_flush_t * pf, int *mpi_errno_out)
{
    if (!ucx_flush_test(pf, mpi_errno_out))
        return 0;
    return MPIDIG_win_check_all_targets_remote_completed(pf->win);
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
        MPL_free(pf);
        if (made_progress)
            *made_progress = 1;
    }

    if (pending_flushes == NULL && flush_hook_active) {
        mpi_errno = MPIR_Progress_hook_deactivate(flush_hook_id);
        flush_hook_active = 0;
    }
    return mpi_errno;
}

static int activate_flush_hook(void)
{
    int mpi_errno = MPI_SUCCESS;

    if (flush_hook_id < 0) {
        mpi_errno = MPIR_Progress_hook_register(poll_pending_flushes, &flush_hook_id);
        MPIR_ERR_CHECK(mpi_errno);
    }
    if (!flush_hook_active) {
        mpi_errno = MPIR_Progress_hook_activate(flush_hook_id);
        MPIR_ERR_CHECK(mpi_errno);
        flush_hook_active = 1;
    }

  fn_exit:
    return mpi_errno;
  fn_fail:
    goto fn_exit;
}

/* Starts a nonblocking flush of the window's UCX worker; NULL in *ucx_req when
 * there was nothing to wait for. */
static int start_ucx_flush(MPIR_Win * win, int vni, void **ucx_req)
{
    int mpi_errno = MPI_SUCCESS;
    ucp_request_param_t param = { 0 };
    ucs_status_ptr_t status_ptr;

    *ucx_req = NULL;
    /* Windows without UCX RDMA (info_table == NULL) only use active messages. */
    if (MPIDI_UCX_WIN(win).info_table == NULL)
        goto fn_exit;

    MPID_THREAD_CS_ENTER(VCI, MPIDI_VCI(vni).lock);
    status_ptr = ucp_worker_flush_nbx(MPIDI_UCX_global.ctx[vni].worker, &param);
    MPID_THREAD_CS_EXIT(VCI, MPIDI_VCI(vni).lock);

    if (UCS_PTR_IS_ERR(status_ptr))
        MPIDI_UCX_CHK_STATUS(UCS_PTR_STATUS(status_ptr));
    else if (status_ptr != NULL)
        *ucx_req = status_ptr;

  fn_exit:
    return mpi_errno;
  fn_fail:
    goto fn_exit;
}

int MPIR_Win_iflush_all_impl(MPIR_Win * win, MPIR_Request ** request)
{
    int mpi_errno = MPI_SUCCESS;
    MPIDI_NBRMA_pending_flush_t *pf = NULL;
    MPIR_Request *req = NULL;
    int vni;

    MPIR_FUNC_ENTER;

    MPIDIG_EPOCH_CHECK_PASSIVE(win, mpi_errno, goto fn_fail);

    req = MPIR_Request_create_from_pool_safe(MPIR_REQUEST_KIND__RMA, 0, 2);
    MPIR_ERR_CHKANDJUMP(req == NULL, mpi_errno, MPIX_ERR_NOREQ, "**nomemreq");

    pf = MPL_malloc(sizeof(*pf), MPL_MEM_RMA);
    MPIR_ERR_CHKANDJUMP(pf == NULL, mpi_errno, MPI_ERR_NO_MEM, "**nomem");
    pf->req = req;
    pf->win = win;
    pf->vni = vni = MPIDI_UCX_get_win_vni(win);

    mpi_errno = start_ucx_flush(win, vni, &pf->ucx_flush_req);
    MPIR_ERR_CHECK(mpi_errno);

    pf->next = pending_flushes;
    pending_flushes = pf;
    pf = NULL;
    mpi_errno = activate_flush_hook();
    MPIR_ERR_CHECK(mpi_errno);

    /* Complete at once what is already complete, so that a flush with nothing
     * outstanding costs no trip through the progress engine. */
    mpi_errno = poll_pending_flushes(NULL);
    MPIR_ERR_CHECK(mpi_errno);

    *request = req;

  fn_exit:
    MPIR_FUNC_EXIT;
    return mpi_errno;
  fn_fail:
    if (pf) {
        MPL_free(pf);
        if (req) {
            /* drop both references: the request was never handed out */
            MPIR_Request_free(req);
            MPIR_Request_free(req);
        }
    }
    goto fn_exit;
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
