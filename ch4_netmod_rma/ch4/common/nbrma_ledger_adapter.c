/*
 * mpich-nbrma: the glue of the completion ledger (ledger_adapter.h).
 *
 * The ledger is one per process, made at the first request that waits. Its
 * peers are UCX endpoints (their addresses): an endpoint flush covers every
 * window's operations toward that process on that VNI. All of this runs under
 * MPICH's global critical section (the bindings and the progress engine hold
 * it); UCX calls take the VCI lock as the UCX netmod does.
 */

#include "mpidimpl.h"
#include "ucx_impl.h"
#include "nbrma_ledger.h"
#include "nbrma_ledger_adapter.h"
#include "nbrma_completion.h"
#include "nbrma_progress.h"

/* A request waiting; the ledger's cookie. */
typedef struct ledger_wait {
    MPIR_Request *req;
    MPIR_Win *win;
    nbrma_waiter_id id;
    bool am_part;               /* MPIDIG's counters toward am_target still asked for */
    int am_target;
    bool am_local;
    MPIR_Request *op_req;       /* NULL: no such part, or done */
    struct ledger_wait *prev, *next;
} ledger_wait_t;

/* An endpoint flush the ledger asked for, started and not finished yet. */
typedef struct {
    nbrma_peer_key peer;
    uint64_t seq;
    void *ucx_req;
    int vni;
} flush_in_flight_t;

static nbrma_ledger *ledger;
static ledger_wait_t *waits;    /* every request not released yet */
static flush_in_flight_t *flushes;
static int n_flushes, flushes_room;

static int poll_ledger(int *made_progress);

static MPIDI_NBRMA_poller_t ledger_poller = {.poll = poll_ledger };

/* Starts the flushes the ledger wants, on the endpoints of `vni`: every one
 * it wants was asked for by the request being registered, whose window's VNI
 * this is. A flush done at once, or failed, is finished at once. */
static int start_wanted_flushes(int vni)
{
    int mpi_errno = MPI_SUCCESS;
    nbrma_peer_key peer;
    uint64_t seq;

    while (nbrma_ledger_flush_to_start(ledger, &peer, &seq)) {
        ucp_request_param_t param = { 0 };
        ucs_status_ptr_t status_ptr;
        int flush_errno = MPI_SUCCESS;

        if (n_flushes == flushes_room) {
            int room = flushes_room ? 2 * flushes_room : 16;
            flush_in_flight_t *more = MPL_realloc(flushes, room * sizeof(*flushes), MPL_MEM_RMA);
            if (more == NULL) {
                MPIR_ERR_SET(flush_errno, MPI_ERR_NO_MEM, "**nomem");
                nbrma_ledger_flush_finished(ledger, peer, seq, flush_errno);
                continue;
            }
            flushes = more;
            flushes_room = room;
        }
        MPID_THREAD_CS_ENTER(VCI, MPIDI_VCI(vni).lock);
        status_ptr = ucp_ep_flush_nbx((ucp_ep_h) peer, &param);
        MPID_THREAD_CS_EXIT(VCI, MPIDI_VCI(vni).lock);
        if (UCS_PTR_IS_ERR(status_ptr)) {
            MPIR_ERR_SET(flush_errno, MPI_ERR_OTHER, "**ucx_nm_status");
            nbrma_ledger_flush_finished(ledger, peer, seq, flush_errno);
        } else if (status_ptr == NULL) {
            nbrma_ledger_flush_finished(ledger, peer, seq, MPI_SUCCESS);
        } else {
            flushes[n_flushes++] = (flush_in_flight_t) {
            .peer = peer,.seq = seq,.ucx_req = status_ptr,.vni = vni};
        }
    }
    return mpi_errno;
}

static void test_flushes(void)
{
    for (int i = 0; i < n_flushes;) {
        flush_in_flight_t *f = &flushes[i];
        ucs_status_t status;
        int flush_errno = MPI_SUCCESS;

        MPID_THREAD_CS_ENTER(VCI, MPIDI_VCI(f->vni).lock);
        status = ucp_request_check_status(f->ucx_req);
        if (status != UCS_INPROGRESS)
            ucp_request_free(f->ucx_req);
        MPID_THREAD_CS_EXIT(VCI, MPIDI_VCI(f->vni).lock);
        if (status == UCS_INPROGRESS) {
            i++;
            continue;
        }
        if (status != UCS_OK)
            MPIR_ERR_SET(flush_errno, MPI_ERR_OTHER, "**ucx_nm_status");
        nbrma_ledger_flush_finished(ledger, f->peer, f->seq, flush_errno);
        flushes[i] = flushes[--n_flushes];
    }
}

/* The outside parts the glue sees done now. */
static void test_outside_parts(void)
{
    for (ledger_wait_t * w = waits; w; w = w->next) {
        if (w->am_part && MPIDI_NBRMA_am_ops_complete(w->win, w->am_target, w->am_local)) {
            w->am_part = false;
            nbrma_ledger_outside_done(ledger, w->id, MPI_SUCCESS);
        }
        if (w->op_req && MPIR_Request_is_complete(w->op_req)) {
            int op_errno = w->op_req->status.MPI_ERROR;

            MPIR_Request_free(w->op_req);
            w->op_req = NULL;
            nbrma_ledger_outside_done(ledger, w->id, op_errno);
        }
    }
}

static bool complete_released(void)
{
    void *cookie;
    int error;
    bool any = false;

    while (nbrma_ledger_next_released(ledger, &cookie, &error)) {
        ledger_wait_t *w = cookie;

        if (w->req == NULL) {   /* its registration failed: no request, not listed */
            MPL_free(w);
            continue;
        }
        if (w->prev)
            w->prev->next = w->next;
        else
            waits = w->next;
        if (w->next)
            w->next->prev = w->prev;
        w->req->status.MPI_ERROR = error;
        MPID_Request_complete(w->req);
        MPL_free(w);
        any = true;
    }
    return any;
}

static int poll_ledger(int *made_progress)
{
    test_flushes();
    test_outside_parts();
    if (complete_released() && made_progress)
        *made_progress = 1;
    return waits ? MPI_SUCCESS : MPIDI_NBRMA_poller_sleep(&ledger_poller);
}

/* Asks the ledger for a flush of each endpoint `needs` names. */
static int need_flushes(MPIR_Win * win, const MPIDI_NBRMA_ledger_needs_t * needs,
                        ledger_wait_t * w, int vni)
{
    int mpi_errno = MPI_SUCCESS;
    int first = needs->target, last = needs->target;

    if (needs->target == NBRMA_ALL_RANKS) {
        first = 0;
        last = win->comm_ptr->local_size - 1;
    }
    for (int r = first; r <= last; r++) {
        /* windows without UCX RDMA of MPICH's (no info_table) only use
         * active messages, unless the component issued RDMA on them */
        bool reached = MPIDI_UCX_WIN(win).info_table != NULL &&
            MPIDI_UCX_is_reachable_target(r, win, MPIDI_WIN(win, winattr));

        if (!needs->every_endpoint && !reached && !(needs->also_flush && needs->also_flush[r]))
            continue;
        if (!nbrma_ledger_waiter_needs_flush(ledger, w->id,
                                             (nbrma_peer_key) MPIDI_UCX_WIN_TO_EP(win, r, vni)))
            MPIR_ERR_SETANDJUMP(mpi_errno, MPI_ERR_NO_MEM, "**nomem");
    }

  fn_exit:
    return mpi_errno;
  fn_fail:
    goto fn_exit;
}

int MPIDI_NBRMA_ledger_wait_for(MPIR_Win * win, const MPIDI_NBRMA_ledger_needs_t * needs,
                                MPIR_Request * req)
{
    int mpi_errno = MPI_SUCCESS;
    int vni = MPIDI_UCX_get_win_vni(win);
    ledger_wait_t *w = NULL;

    MPIR_FUNC_ENTER;

    if (ledger == NULL) {
        ledger = nbrma_ledger_create();
        MPIR_ERR_CHKANDJUMP(ledger == NULL, mpi_errno, MPI_ERR_NO_MEM, "**nomem");
    }
    /* first, so that a failure here leaves nothing half started */
    mpi_errno = MPIDI_NBRMA_poller_wake(&ledger_poller);
    MPIR_ERR_CHECK(mpi_errno);
    w = MPL_calloc(1, sizeof(*w), MPL_MEM_RMA);
    MPIR_ERR_CHKANDJUMP(w == NULL, mpi_errno, MPI_ERR_NO_MEM, "**nomem");
    w->id = nbrma_ledger_waiter_new(ledger, w);
    MPIR_ERR_CHKANDJUMP(w->id == 0, mpi_errno, MPI_ERR_NO_MEM, "**nomem");
    mpi_errno = need_flushes(win, needs, w, vni);
    if (mpi_errno) {
        /* the flushes asked for are kept and shared by later waiters; this
         * one is released into the void once they finish */
        w->req = NULL;
        nbrma_ledger_waiter_armed(ledger, w->id);
        start_wanted_flushes(vni);
        goto fn_fail;
    }
    w->req = req;
    w->win = win;
    w->am_part = needs->am_counters;
    w->am_target = needs->target;
    w->am_local = needs->am_local;
    w->op_req = needs->op_req;
    if (w->am_part)
        nbrma_ledger_waiter_needs_outside(ledger, w->id);
    if (w->op_req)
        nbrma_ledger_waiter_needs_outside(ledger, w->id);
    /* from here on nothing fails: the ledger owns the request's completion */
    w->next = waits;
    if (waits)
        waits->prev = w;
    waits = w;
    nbrma_ledger_waiter_armed(ledger, w->id);
    mpi_errno = start_wanted_flushes(vni);
    /* Complete at once what is complete already (shared memory), so that
     * such a request costs no trip through the progress engine. */
    test_outside_parts();
    complete_released();

  fn_exit:
    MPIR_FUNC_EXIT;
    return mpi_errno;
  fn_fail:
    if (w && w->req == NULL)
        w = NULL;       /* still the ledger's cookie until its flushes finish */
    MPL_free(w);
    goto fn_exit;
}

static bool has_waits(MPIR_Win * win)
{
    for (ledger_wait_t * w = waits; w; w = w->next)
        if (w->win == win)
            return true;
    return false;
}

int MPIDI_NBRMA_ledger_settle(MPIR_Win * win)
{
    int mpi_errno = MPI_SUCCESS;

    /* MPICH's blocking RMA spin loops do not run progress hooks: poll here */
    while (has_waits(win)) {
        mpi_errno = poll_ledger(NULL);
        MPIR_ERR_CHECK(mpi_errno);
        if (!has_waits(win))
            break;
        mpi_errno = MPIDI_NBRMA_progress_wait_round();
        MPIR_ERR_CHECK(mpi_errno);
    }

  fn_exit:
    return mpi_errno;
  fn_fail:
    goto fn_exit;
}
