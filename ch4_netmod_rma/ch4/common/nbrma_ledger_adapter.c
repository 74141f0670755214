/*
 * mpich-nbrma: the glue of the completion ledger (ledger_adapter.h): waits
 * registered with the ledger, and its poller.
 *
 * The ledger is one per process, made at the first wait. Its peers are UCX
 * endpoints (their addresses): an endpoint flush covers every window's
 * operations toward that process on that VNI. All of this runs under MPICH's
 * global critical section (the bindings and the progress engine hold it);
 * UCX calls take the VCI lock as the UCX netmod does.
 *
 * A wait starts its endpoint flushes as it gathers its parts and looks at
 * its outside parts once (ledger_gather.c). What is complete then is never
 * registered: on shared memory a blocking flush is an endpoint flush and a
 * look at MPIDIG's counters. What is not becomes a waiter of the ledger,
 * kept here in a `waiting_t` with the outside parts the poller checks.
 */

#include "mpidimpl.h"
#include "ucx_impl.h"
#include "nbrma_ledger_state.h"
#include "nbrma_completion.h"
#include "nbrma_progress.h"

typedef enum {
    ACT_REQUEST,                /* complete `req` */
    ACT_CALLBACK,               /* call `done` */
    ACT_NOTHING                 /* nobody waits any more */
} wait_action_t;

/* A wait the ledger has a waiter for. */
typedef struct waiting {
    MPIR_Win *win;
    nbrma_waiter_id id;
    wait_action_t action;
    MPIR_Request *req;
    MPIDI_NBRMA_ledger_done_fn done;
    void *arg;
    int error;
    nbrma_outside_parts parts;  /* the wait's, taken over */
    struct waiting *prev, *next;
} waiting_t;

static waiting_t *spare;        /* freed, for the next wait */
static MPIDI_NBRMA_ledger_task_t *tasks;
static int callback_errno;      /* a callback's error, for the next progress call */

static int poll_ledger(int *made_progress);

static MPIDI_NBRMA_poller_t ledger_poller = {.poll = poll_ledger,.own_work = true };

static void link_wait(waiting_t ** list, waiting_t * w)
{
    w->prev = NULL;
    w->next = *list;
    if (*list)
        (*list)->prev = w;
    *list = w;
}

static void unlink_wait(waiting_t ** list, waiting_t * w)
{
    if (w->prev)
        w->prev->next = w->next;
    else
        *list = w->next;
    if (w->next)
        w->next->prev = w->prev;
}

static void free_waiting(waiting_t * w)
{
    nbrma_outside_parts_free(&w->parts);
    w->next = spare;
    spare = w;
}

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

/* The outside parts of registered waits that are done now (each reported
 * once: a done part leaves its wait). */
static void test_outside_parts(void)
{
    MPIDI_NBRMA_ledger_state_t *ls = &MPIDI_NBRMA_ledger_state;

    for (waiting_t * w = ls->waits; w; w = w->next) {
        for (size_t i = 0; i < w->parts.n;) {
            int part_errno;

            if (!part_done(w->win, &w->parts.v[i], &part_errno)) {
                i++;
                continue;
            }
            if (w->parts.v[i].req)
                MPIR_Request_free(w->parts.v[i].req);
            nbrma_outside_parts_remove(&w->parts, i);
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
        case ACT_REQUEST:
            w->req->status.MPI_ERROR = w->error;
            MPID_Request_complete(w->req);
            break;
        case ACT_CALLBACK:
            keep_error(w->done(w->arg, w->error));
            break;
        default:
            break;
    }
}

static bool complete_released(void)
{
    MPIDI_NBRMA_ledger_state_t *ls = &MPIDI_NBRMA_ledger_state;
    void *cookie;
    int error;
    bool any = false;

    while (nbrma_ledger_next_released(ls->ledger, &cookie, &error)) {
        waiting_t *w = cookie;

        unlink_wait(&ls->waits, w);
        w->error = error;
        any = true;
        /* the callback may start new waits: w is in no list meanwhile */
        act(w);
        free_waiting(w);
    }
    return any;
}

/* One look at everything: true if some wait was released (only registered
 * waits are). */
bool MPIDI_NBRMA_ledger_poll(void)
{
    MPIDI_NBRMA_ledger_state_t *ls = &MPIDI_NBRMA_ledger_state;

    if (ls->flights.n)
        test_flushes();
    if (ls->waits)
        test_outside_parts();
    if (tasks)
        nbrma_ledger_tasks_run(&tasks, keep_error);
    return ls->waits && complete_released();
}

static int poll_ledger(int *made_progress)
{
    MPIDI_NBRMA_ledger_state_t *ls = &MPIDI_NBRMA_ledger_state;
    int mpi_errno;

    if (MPIDI_NBRMA_ledger_poll() && made_progress)
        *made_progress = 1;
    mpi_errno = callback_errno;
    callback_errno = MPI_SUCCESS;
    if (mpi_errno == MPI_SUCCESS && !ls->waits && !tasks)
        mpi_errno = MPIDI_NBRMA_poller_sleep(&ledger_poller);
    return mpi_errno;
}

/* --- arming --------------------------------------------------------------- */

/* A waiter of the ledger for what is still open (flushes in flight, outside
 * parts not done), armed; the action is the caller's to set before the next
 * complete_released. On error nothing is kept and the request parts go back
 * to the caller (the flushes in flight finish without a waiter). */
static SLOW_PATH int register_open(MPIDI_NBRMA_ledger_wait_t * w, wait_action_t action,
                                   waiting_t ** registered)
{
    MPIDI_NBRMA_ledger_state_t *ls = &MPIDI_NBRMA_ledger_state;
    int mpi_errno = MPI_SUCCESS;
    waiting_t *r;

    mpi_errno = MPIDI_NBRMA_poller_wake(&ledger_poller);
    MPIR_ERR_CHECK(mpi_errno);
    mpi_errno = MPIDI_NBRMA_ledger_make();      /* for a wait without flushes */
    MPIR_ERR_CHECK(mpi_errno);
    r = spare;
    if (r)
        spare = r->next;
    else
        r = MPL_malloc(sizeof(*r), MPL_MEM_RMA);
    MPIR_ERR_CHKANDJUMP(r == NULL, mpi_errno, MPI_ERR_NO_MEM, "**nomem");
    *r = (waiting_t) {
    .win = w->win,.action = action};
    r->id = nbrma_ledger_waiter_new(ls->ledger, r);
    if (r->id == 0) {
        free_waiting(r);
        MPIR_ERR_SETANDJUMP(mpi_errno, MPI_ERR_NO_MEM, "**nomem");
    }
    /* from here on nothing fails: a part the ledger had no memory for only
     * releases the waiter early, with that error */
    if (w->error)
        nbrma_ledger_waiter_error(ls->ledger, r->id, w->error);
    for (size_t i = 0; i < w->open.n; i++)
        if (!nbrma_ledger_waiter_needs_flush(ls->ledger, r->id, w->open.v[i].peer,
                                             w->open.v[i].seq))
            nbrma_ledger_waiter_error(ls->ledger, r->id, MPI_ERR_NO_MEM);
    r->parts = w->parts;
    w->parts = (nbrma_outside_parts) {
    0};
    for (size_t i = 0; i < r->parts.n; i++)
        nbrma_ledger_waiter_needs_outside(ls->ledger, r->id);
    link_wait(&ls->waits, r);
    nbrma_ledger_waiter_armed(ls->ledger, r->id);
    *registered = r;

  fn_exit:
    return mpi_errno;
  fn_fail:
    goto fn_exit;
}

/* Arms the wait. Complete at once: *registered NULL, its error in *error (the
 * request parts released). Otherwise the waiting_t the ledger will release. */
static int arm(MPIDI_NBRMA_ledger_wait_t * w, wait_action_t action, waiting_t ** registered,
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
    /* a request goes back to the caller only where it is the caller's
     * (complete_request's failure) */
    if (done || (mpi_errno && action != ACT_REQUEST))
        for (size_t i = 0; i < w->parts.n; i++)
            if (w->parts.v[i].req)
                MPIR_Request_free(w->parts.v[i].req);
    *error = w->error;
    MPIDI_NBRMA_ledger_cancel(w);       /* what is left of the wait */
    return mpi_errno;
}

int MPIDI_NBRMA_ledger_complete_request(MPIDI_NBRMA_ledger_wait_t * w, MPIR_Request * req)
{
    waiting_t *r;
    int error;
    int mpi_errno = arm(w, ACT_REQUEST, &r, &error);

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
    mpi_errno = arm(w, ACT_CALLBACK, &r, &error);
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
    MPIDI_NBRMA_ledger_state_t *ls = &MPIDI_NBRMA_ledger_state;

    for (waiting_t * w = ls->waits; w; w = w->next)
        if (w->action == ACT_CALLBACK && w->arg == arg)
            w->action = ACT_NOTHING;
}

static bool has_waits(MPIR_Win * win)
{
    MPIDI_NBRMA_ledger_state_t *ls = &MPIDI_NBRMA_ledger_state;

    for (waiting_t * w = ls->waits; w; w = w->next)
        if (w->win == win)
            return true;
    return nbrma_ledger_tasks_of(tasks, win);
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
