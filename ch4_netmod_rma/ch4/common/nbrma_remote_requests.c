/*
 * mpich-nbrma: requests that complete at the target (remote_requests.h).
 *
 * Pending requests sit in one list, driven by the component's progress hook.
 * All of this runs under MPICH's global critical section (the bindings and
 * the progress engine hold it); UCX calls take the VCI lock as the UCX netmod
 * does.
 */

#include "mpidimpl.h"
#include "ucx_impl.h"
#include "nbrma_remote_requests.h"
#include "nbrma_progress.h"
#include "nbrma_request.h"

typedef struct pending_remote {
    MPIR_Request *req;          /* the caller's */
    MPIR_Request *op_req;       /* the operation's own; NULL once complete */
    void *ep_flush;             /* UCX request of the endpoint flush; NULL once done */
    int vni;
    MPIR_Win *win;
    int ep_flush_errno;
    struct pending_remote *next;
} pending_remote_t;

static pending_remote_t *pending_remotes;

static int poll_pending_remotes(int *made_progress);

static MPIDI_NBRMA_poller_t remote_poller = {.poll = poll_pending_remotes };

/* Whether both halves are done; each is released as it finishes. */
static bool remote_done(pending_remote_t * pr)
{
    if (pr->ep_flush) {
        ucs_status_t status;

        MPID_THREAD_CS_ENTER(VCI, MPIDI_VCI(pr->vni).lock);
        status = ucp_request_check_status(pr->ep_flush);
        if (status != UCS_INPROGRESS) {
            ucp_request_free(pr->ep_flush);
            pr->ep_flush = NULL;
        }
        MPID_THREAD_CS_EXIT(VCI, MPIDI_VCI(pr->vni).lock);
        if (status != UCS_INPROGRESS && status != UCS_OK)
            MPIR_ERR_SET(pr->ep_flush_errno, MPI_ERR_OTHER, "**ucx_nm_status");
    }
    if (pr->op_req && MPIR_Request_is_complete(pr->op_req)) {
        if (pr->ep_flush_errno == MPI_SUCCESS)
            pr->ep_flush_errno = pr->op_req->status.MPI_ERROR;
        MPIR_Request_free(pr->op_req);
        pr->op_req = NULL;
    }
    return pr->ep_flush == NULL && pr->op_req == NULL;
}

static int poll_pending_remotes(int *made_progress)
{
    pending_remote_t **link = &pending_remotes;

    while (*link) {
        pending_remote_t *pr = *link;

        if (!remote_done(pr)) {
            link = &pr->next;
            continue;
        }
        *link = pr->next;
        pr->req->status.MPI_ERROR = pr->ep_flush_errno;
        MPID_Request_complete(pr->req);
        MPL_free(pr);
        if (made_progress)
            *made_progress = 1;
    }
    return pending_remotes ? MPI_SUCCESS : MPIDI_NBRMA_poller_sleep(&remote_poller);
}

int MPIDI_NBRMA_remote_request_wrap(MPIR_Win * win, int target, MPIR_Request ** request)
{
    int mpi_errno = MPI_SUCCESS;
    pending_remote_t *pr = NULL;
    MPIR_Request *req = NULL;
    ucs_status_ptr_t status_ptr;
    ucp_request_param_t param = { 0 };

    MPIR_FUNC_ENTER;

    mpi_errno = MPIDI_NBRMA_poller_wake(&remote_poller);
    MPIR_ERR_CHECK(mpi_errno);
    mpi_errno = MPIDI_NBRMA_request_create(&req);
    MPIR_ERR_CHECK(mpi_errno);
    pr = MPL_calloc(1, sizeof(*pr), MPL_MEM_RMA);
    MPIR_ERR_CHKANDJUMP(pr == NULL, mpi_errno, MPI_ERR_NO_MEM, "**nomem");
    pr->vni = MPIDI_UCX_get_win_vni(win);
    MPID_THREAD_CS_ENTER(VCI, MPIDI_VCI(pr->vni).lock);
    status_ptr = ucp_ep_flush_nbx(MPIDI_UCX_WIN_TO_EP(win, target, pr->vni), &param);
    MPID_THREAD_CS_EXIT(VCI, MPIDI_VCI(pr->vni).lock);
    if (UCS_PTR_IS_ERR(status_ptr))
        MPIDI_UCX_CHK_STATUS(UCS_PTR_STATUS(status_ptr));
    /* from here on nothing fails: the pending list owns both halves */
    pr->ep_flush = status_ptr;  /* NULL: done at once */
    pr->req = req;
    pr->op_req = *request;
    pr->win = win;
    pr->next = pending_remotes;
    pending_remotes = pr;
    *request = req;
    /* what is complete already (shared memory) costs no progress call */
    mpi_errno = poll_pending_remotes(NULL);

  fn_exit:
    MPIR_FUNC_EXIT;
    return mpi_errno;
  fn_fail:
    MPL_free(pr);
    if (req)
        MPIDI_NBRMA_request_discard(req);
    goto fn_exit;
}

static bool has_pending_remote(MPIR_Win * win)
{
    for (pending_remote_t * pr = pending_remotes; pr; pr = pr->next)
        if (pr->win == win)
            return true;
    return false;
}

int MPIDI_NBRMA_remote_requests_settle(MPIR_Win * win)
{
    int mpi_errno = MPI_SUCCESS;

    /* MPICH's blocking RMA spin loops do not run progress hooks: poll here */
    while (has_pending_remote(win)) {
        mpi_errno = poll_pending_remotes(NULL);
        MPIR_ERR_CHECK(mpi_errno);
        if (!has_pending_remote(win))
            break;
        mpi_errno = MPIDI_NBRMA_progress_wait_round();
        MPIR_ERR_CHECK(mpi_errno);
    }

  fn_exit:
    return mpi_errno;
  fn_fail:
    goto fn_exit;
}
