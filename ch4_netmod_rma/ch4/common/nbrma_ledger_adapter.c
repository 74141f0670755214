/*
 * mpich-nbrma: the glue of the completion ledger (ledger_adapter.h): registered
 * waits and the poller. One ledger per process; its peers are UCX endpoints,
 * as an endpoint flush covers every window's operations toward that process
 * on that VNI. Runs under MPICH's global critical section; UCX calls take the
 * VCI lock as the UCX netmod does.
 */

#include "mpidimpl.h"
#include "ucx_impl.h"
#include "nbrma_ledger_state.h"
#include "nbrma_completion.h"
#include "nbrma_progress.h"

/* A wait the ledger has a waiter for (W1-W4 of the core). */
typedef nbrma_registered_wait waiting_t;

static MPIDI_NBRMA_ledger_task_t *tasks;
static int callback_errno;      /* a callback's error, for the next progress call */

static int poll_ledger(int *made_progress);

static MPIDI_NBRMA_poller_t ledger_poller = {.poll = poll_ledger,.own_work = true };

/* --- what the poller looks at --------------------------------------------- */

static void test_flushes(void)
{
    MPIDI_NBRMA_ledger_state_t *ls = &MPIDI_NBRMA_ledger_state;

    for (size_t i = 0; i < ls->flights.n;) {
        nbrma_flight *f = &ls->flights.v[i];
        ucs_status_t status;
        int flush_errno = MPI_SUCCESS;

        MPID_THREAD_CS_ENTER(VCI, MPIDI_VCI(f->vni).lock);
        status = ucp_request_check_status(f->handle);
        if (status != UCS_INPROGRESS)
            ucp_request_free(f->handle);
        MPID_THREAD_CS_EXIT(VCI, MPIDI_VCI(f->vni).lock);
        if (status == UCS_INPROGRESS) {
            i++;
            continue;
        }
        if (status != UCS_OK)
            MPIR_ERR_SET(flush_errno, MPI_ERR_OTHER, "**ucx_nm_status");
        nbrma_ledger_flush_finished(ls->ledger, f->peer, f->seq, flush_errno);
        nbrma_flights_remove(&ls->flights, i);
    }
}

/* Whether an outside part is done now (*error: its error). */
static bool part_done(MPIR_Win * win, const nbrma_outside_part * p, int *error)
{
    MPIR_Request *req = p->req;

    *error = MPI_SUCCESS;
    if (req == NULL)
        return MPIDI_NBRMA_am_ops_complete(win, p->rank, p->local);
    if (!MPIR_Request_is_complete(req))
        return false;
    *error = req->status.MPI_ERROR;
    return true;
}

/* As part_done; a done part leaves the list, its request freed. */
static bool part_taken(MPIR_Win * win, nbrma_outside_parts * parts, size_t i, int *error)
{
    if (!part_done(win, &parts->v[i], error))
        return false;
    if (parts->v[i].req)
        MPIR_Request_free(parts->v[i].req);
    nbrma_outside_parts_remove(parts, i);
    return true;
}

bool MPIDI_NBRMA_ledger_parts_done(MPIDI_NBRMA_ledger_wait_t * w)
{
    for (size_t i = 0; i < w->parts.n;) {
        int part_errno;

        if (!part_taken(w->win, &w->parts, i, &part_errno))
            i++;
        else if (w->error == MPI_SUCCESS)
            w->error = part_errno;
    }
    return w->parts.n == 0;
}

/* Reports the done parts of registered waits, once: a done part leaves. */
static void test_outside_parts(void)
{
    MPIDI_NBRMA_ledger_state_t *ls = &MPIDI_NBRMA_ledger_state;

    for (waiting_t * w = ls->waits.head; w; w = w->next) {
        for (size_t i = 0; i < w->parts.n;) {
            int part_errno;

            if (!part_taken(w->owner, &w->parts, i, &part_errno))
                i++;
            else
                nbrma_ledger_outside_done(ls->ledger, w->id, part_errno);
        }
    }
}

static void keep_error(int mpi_errno)
{
    if (mpi_errno && !callback_errno)
        callback_errno = mpi_errno;
}

static void act(waiting_t * w)
{
    switch (w->action) {
        case NBRMA_WAIT_REQUEST:
            ((MPIR_Request *) w->req)->status.MPI_ERROR = w->error;
            MPID_Request_complete((MPIR_Request *) w->req);
            break;
        case NBRMA_WAIT_CALLBACK:
            keep_error(w->done(w->arg, w->error));
            break;
        default:
            break;
    }
}

static bool complete_released(void)
{
    MPIDI_NBRMA_ledger_state_t *ls = &MPIDI_NBRMA_ledger_state;
    waiting_t *w;
    bool any = false;

    while (nbrma_waits_next_released(&ls->waits, ls->ledger, &w)) {
        any = true;
        /* the callback may start new waits: w is in no list meanwhile */
        act(w);
        nbrma_waits_free(&ls->waits, w);
    }
    return any;
}

/* Released waits act before the tasks run, so that a task whose wait this
 * look released (a completion sweep) goes on in this poll, not the next: in
 * PSCW, one progress round less before the done it lets leave. */
bool MPIDI_NBRMA_ledger_poll(void)
{
    MPIDI_NBRMA_ledger_state_t *ls = &MPIDI_NBRMA_ledger_state;
    bool released = false;

    if (ls->flights.n)
        test_flushes();
    if (nbrma_waits_any(&ls->waits)) {
        test_outside_parts();
        released = complete_released();
    }
    if (tasks) {
        nbrma_ledger_tasks_run(&tasks, keep_error);
        released |= nbrma_waits_any(&ls->waits) && complete_released();
    }
    return released;
}

static int poll_ledger(int *made_progress)
{
    MPIDI_NBRMA_ledger_state_t *ls = &MPIDI_NBRMA_ledger_state;
    int mpi_errno;

    if (MPIDI_NBRMA_ledger_poll() && made_progress)
        *made_progress = 1;
    mpi_errno = callback_errno;
    callback_errno = MPI_SUCCESS;
    if (mpi_errno == MPI_SUCCESS && !nbrma_waits_any(&ls->waits) && !tasks)
        mpi_errno = MPIDI_NBRMA_poller_sleep(&ledger_poller);
    return mpi_errno;
}

/* --- arming --------------------------------------------------------------- */

/* An armed waiter (W1) for what is still open; the caller sets its action
 * before the next complete_released. On error nothing is kept, the request
 * parts go back to the caller, the flushes finish without a waiter. */
static SLOW_PATH int register_open(MPIDI_NBRMA_ledger_wait_t * w, nbrma_wait_action action,
                                   waiting_t ** registered)
{
    MPIDI_NBRMA_ledger_state_t *ls = &MPIDI_NBRMA_ledger_state;
    int mpi_errno = MPI_SUCCESS;

    mpi_errno = MPIDI_NBRMA_poller_wake(&ledger_poller);
    MPIR_ERR_CHECK(mpi_errno);
    mpi_errno = MPIDI_NBRMA_ledger_make();      /* for a wait without flushes */
    MPIR_ERR_CHECK(mpi_errno);
    *registered = nbrma_waits_register(&ls->waits, ls->ledger, w->win, action, w->error,
                                       &w->open, &w->parts, MPI_ERR_NO_MEM);
    MPIR_ERR_CHKANDJUMP(*registered == NULL, mpi_errno, MPI_ERR_NO_MEM, "**nomem");

  fn_exit:
    return mpi_errno;
  fn_fail:
    goto fn_exit;
}

/* Arms the wait. Complete at once: *registered NULL, its error in *error (the
 * request parts released). Otherwise the waiting_t the ledger will release. */
static int arm(MPIDI_NBRMA_ledger_wait_t * w, nbrma_wait_action action, waiting_t ** registered,
               int *error)
{
    int mpi_errno = MPI_SUCCESS;
    bool done = w->open.n == 0;

    *registered = NULL;
    for (size_t i = 0; i < w->parts.n && done; i++) {
        int part_errno;

        done = part_done(w->win, &w->parts.v[i], &part_errno);
        MPIDI_NBRMA_ledger_first_error(w, part_errno);
    }
    if (!done)
        mpi_errno = register_open(w, action, registered);
    /* requests go back only where they are the caller's (complete_request) */
    if (done || (mpi_errno && action != NBRMA_WAIT_REQUEST))
        MPIDI_NBRMA_ledger_parts_free_requests(w);
    *error = w->error;
    MPIDI_NBRMA_ledger_cancel(w);       /* what is left of the wait */
    return mpi_errno;
}

int MPIDI_NBRMA_ledger_complete_request(MPIDI_NBRMA_ledger_wait_t * w, MPIR_Request * req)
{
    waiting_t *r;
    int error;
    int mpi_errno = arm(w, NBRMA_WAIT_REQUEST, &r, &error);

    if (mpi_errno == MPI_SUCCESS && r == NULL) {
        req->status.MPI_ERROR = error;
        MPID_Request_complete(req);
    } else if (r) {
        r->req = req;
        complete_released();    /* released at arming: its parts were done */
    }
    return mpi_errno;
}

int MPIDI_NBRMA_ledger_call_back(MPIDI_NBRMA_ledger_wait_t * w,
                                 MPIDI_NBRMA_ledger_done_fn done, void *arg)
{
    waiting_t *r;
    int error, mpi_errno;

    if (MPIDI_NBRMA_ledger_complete_as_gathered(w))
        return done(arg, w->error);
    mpi_errno = arm(w, NBRMA_WAIT_CALLBACK, &r, &error);
    if (mpi_errno) {
        done(arg, mpi_errno);
        return mpi_errno;
    }
    if (r == NULL)
        return done(arg, error);
    r->done = done;
    r->arg = arg;
    complete_released();
    return MPI_SUCCESS;
}

int MPIDI_NBRMA_ledger_each_poll(MPIDI_NBRMA_ledger_task_t * task, MPIR_Win * win,
                                 int (*run) (MPIDI_NBRMA_ledger_task_t * task, bool *again))
{
    int mpi_errno;

    if (task->listed)
        return MPI_SUCCESS;
    mpi_errno = MPIDI_NBRMA_poller_wake(&ledger_poller);
    if (mpi_errno == MPI_SUCCESS)
        nbrma_ledger_tasks_add(&tasks, task, win, run);
    return mpi_errno;
}

/* --- what the waiting loops (ledger_wait.c) ask ----------------------------- */

void MPIDI_NBRMA_ledger_forget_arg(void *arg)
{
    nbrma_waits_forget_arg(&MPIDI_NBRMA_ledger_state.waits, arg);
}

static bool has_waits(MPIR_Win * win)
{
    return nbrma_waits_of(&MPIDI_NBRMA_ledger_state.waits, win) ||
        nbrma_ledger_tasks_of(tasks, win);
}

int MPIDI_NBRMA_ledger_finish_window(MPIR_Win * win)
{
    int mpi_errno = MPI_SUCCESS;

    /* MPICH's blocking RMA spin loops do not run progress hooks: poll here */
    while (has_waits(win)) {
        MPIDI_NBRMA_ledger_poll();
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
