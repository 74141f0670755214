/*
 * mpich-nbrma: the glue of the completion ledger (ledger_adapter.h).
 *
 * The ledger is one per process, made at the first wait. Its peers are UCX
 * endpoints (their addresses): an endpoint flush covers every window's
 * operations toward that process on that VNI. All of this runs under MPICH's
 * global critical section (the bindings and the progress engine hold it);
 * UCX calls take the VCI lock as the UCX netmod does.
 *
 * A wait starts its endpoint flushes as it gathers its parts and looks at
 * its outside parts once. What is complete then is never registered: on
 * shared memory a blocking flush is an endpoint flush and a look at MPIDIG's
 * counters. What is not becomes a waiter of the ledger, kept here in a
 * `waiting_t` with the outside parts the poller checks.
 */

#include "mpidimpl.h"
#include "ucx_impl.h"
#include "nbrma_ledger.h"
#include "nbrma_ledger_adapter.h"
#include "nbrma_array.h"
#include "nbrma_completion.h"
#include "nbrma_progress.h"

/* The paths a blocking flush on shared memory never takes stay out of its
 * way (their frames and spills cost it about a third). */
#if defined(__GNUC__)
#define SLOW_PATH __attribute__((noinline, cold))
#else
#define SLOW_PATH
#endif

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
    MPIDI_NBRMA_outside_part_t *parts;  /* the wait's, taken over */
    size_t n_parts;
    struct waiting *prev, *next;
} waiting_t;

/* An endpoint flush started and not finished yet. */
typedef struct {
    nbrma_peer_key peer;
    uint64_t seq;
    void *ucx_req;
    int vni;
} flush_in_flight_t;

static nbrma_ledger *ledger;
static waiting_t *waits;        /* not released yet */
static waiting_t *spare;        /* freed, for the next wait */
static MPIDI_NBRMA_ledger_task_t *tasks;
static flush_in_flight_t *flushes;
static size_t n_flushes, flushes_room;
static int callback_errno;      /* a callback's error, for the next progress call */

static int poll_ledger(int *made_progress);

static MPIDI_NBRMA_poller_t ledger_poller = {.poll = poll_ledger };

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
    MPL_free(w->parts);
    w->next = spare;
    spare = w;
}

static SLOW_PATH int make_ledger(void)
{
    int mpi_errno = MPI_SUCCESS;

    ledger = nbrma_ledger_create();
    MPIR_ERR_CHKANDJUMP(ledger == NULL, mpi_errno, MPI_ERR_NO_MEM, "**nomem");
  fn_exit:
    return mpi_errno;
  fn_fail:
    goto fn_exit;
}

/* --- gathering what a wait needs ------------------------------------------ */

void MPIDI_NBRMA_ledger_wait_init(MPIDI_NBRMA_ledger_wait_t * w, MPIR_Win * win)
{
    *w = (MPIDI_NBRMA_ledger_wait_t) {
    .win = win,.vni = MPIDI_UCX_get_win_vni(win)};
}

void MPIDI_NBRMA_ledger_cancel(MPIDI_NBRMA_ledger_wait_t * w)
{
    MPL_free(w->open);
    MPL_free(w->parts);
}

static void first_error(MPIDI_NBRMA_ledger_wait_t * w, int error)
{
    if (w->error == MPI_SUCCESS)
        w->error = error;
}

/* Room for one more flush in flight, in the wait and here. */
static SLOW_PATH int room_for_flush(MPIDI_NBRMA_ledger_wait_t * w)
{
    int mpi_errno = MPIDI_NBRMA_reserve_one((void **) &flushes, n_flushes, &flushes_room,
                                            sizeof(*flushes), 16);

    if (mpi_errno == MPI_SUCCESS)
        mpi_errno = MPIDI_NBRMA_reserve_one((void **) &w->open, w->n_open, &w->cap_open,
                                            sizeof(*w->open), 4);
    return mpi_errno;
}

int MPIDI_NBRMA_ledger_need_endpoint(MPIDI_NBRMA_ledger_wait_t * w, int rank, bool always)
{
    int mpi_errno = MPI_SUCCESS;
    MPIR_Win *win = w->win;
    nbrma_peer_key peer;
    ucp_request_param_t param = { 0 };
    ucs_status_ptr_t status_ptr;
    uint64_t seq;
    int flush_errno = MPI_SUCCESS;

    /* windows without UCX RDMA of MPICH's (no info_table) only use active
     * messages, unless the component issued RDMA on them */
    if (!always && (MPIDI_UCX_WIN(win).info_table == NULL ||
                    !MPIDI_UCX_is_reachable_target(rank, win, MPIDI_WIN(win, winattr))))
        goto fn_exit;
    if (ledger == NULL) {
        mpi_errno = make_ledger();
        MPIR_ERR_CHECK(mpi_errno);
    }
    peer = (nbrma_peer_key) MPIDI_UCX_WIN_TO_EP(win, rank, w->vni);
    MPID_THREAD_CS_ENTER(VCI, MPIDI_VCI(w->vni).lock);
    status_ptr = ucp_ep_flush_nbx((ucp_ep_h) peer, &param);
    MPID_THREAD_CS_EXIT(VCI, MPIDI_VCI(w->vni).lock);
    if (UCS_PTR_IS_ERR(status_ptr)) {
        /* the wait completes with this error, as after any failed part */
        MPIR_ERR_SET(flush_errno, MPI_ERR_OTHER, "**ucx_nm_status");
        first_error(w, flush_errno);
        status_ptr = NULL;
    }
    /* Numbered now, before any other flush starts: the same order as at
     * its start. One that finished at once while nothing is registered can
     * release nobody, and needs no number (a blocking flush on shared
     * memory then makes no ledger call). */
    if (status_ptr == NULL && waits == NULL)
        goto fn_exit;
    if ((status_ptr && (n_flushes == flushes_room || w->n_open == w->cap_open) &&
         room_for_flush(w) != MPI_SUCCESS) || !nbrma_ledger_start_flush(ledger, peer, &seq)) {
        if (status_ptr) {       /* cannot be waited for: let it go on inside UCX */
            MPID_THREAD_CS_ENTER(VCI, MPIDI_VCI(w->vni).lock);
            ucp_request_free(status_ptr);
            MPID_THREAD_CS_EXIT(VCI, MPIDI_VCI(w->vni).lock);
        }
        MPIR_ERR_SETANDJUMP(mpi_errno, MPI_ERR_NO_MEM, "**nomem");
    }
    if (status_ptr == NULL) {
        nbrma_ledger_flush_finished(ledger, peer, seq, flush_errno);
        goto fn_exit;
    }
    flushes[n_flushes++] = (flush_in_flight_t) {
    .peer = peer,.seq = seq,.ucx_req = status_ptr,.vni = w->vni};
    w->open[w->n_open++] = (struct MPIDI_NBRMA_open_flush) {
    .peer = peer,.seq = seq};

  fn_exit:
    return mpi_errno;
  fn_fail:
    first_error(w, mpi_errno);
    goto fn_exit;
}

static int add_part(MPIDI_NBRMA_ledger_wait_t * w, MPIDI_NBRMA_outside_part_t part)
{
    int mpi_errno = MPIDI_NBRMA_reserve_one((void **) &w->parts, w->n_parts, &w->cap_parts,
                                            sizeof(*w->parts), 2);

    if (mpi_errno == MPI_SUCCESS)
        w->parts[w->n_parts++] = part;
    else
        first_error(w, mpi_errno);
    return mpi_errno;
}

int MPIDI_NBRMA_ledger_need_am(MPIDI_NBRMA_ledger_wait_t * w, int rank, bool local)
{
    if (MPIDI_NBRMA_am_ops_complete(w->win, rank, local))
        return MPI_SUCCESS;
    return add_part(w, (MPIDI_NBRMA_outside_part_t) {
                    .rank = rank,.local = local});
}

int MPIDI_NBRMA_ledger_need_request(MPIDI_NBRMA_ledger_wait_t * w, MPIR_Request * op_req)
{
    return add_part(w, (MPIDI_NBRMA_outside_part_t) {
                    .req = op_req});
}

/* --- what the poller looks at --------------------------------------------- */

static void test_flushes(void)
{
    for (size_t i = 0; i < n_flushes;) {
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

/* Whether an outside part is done now (*error: its error). */
static bool part_done(MPIR_Win * win, const MPIDI_NBRMA_outside_part_t * p, int *error)
{
    *error = MPI_SUCCESS;
    if (p->req == NULL)
        return MPIDI_NBRMA_am_ops_complete(win, p->rank, p->local);
    if (!MPIR_Request_is_complete(p->req))
        return false;
    *error = p->req->status.MPI_ERROR;
    return true;
}

/* The outside parts of registered waits that are done now (each reported
 * once: a done part leaves its wait). */
static void test_outside_parts(void)
{
    for (waiting_t * w = waits; w; w = w->next) {
        for (size_t i = 0; i < w->n_parts;) {
            int part_errno;

            if (!part_done(w->win, &w->parts[i], &part_errno)) {
                i++;
                continue;
            }
            if (w->parts[i].req)
                MPIR_Request_free(w->parts[i].req);
            w->parts[i] = w->parts[--w->n_parts];
            nbrma_ledger_outside_done(ledger, w->id, part_errno);
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
    void *cookie;
    int error;
    bool any = false;

    while (nbrma_ledger_next_released(ledger, &cookie, &error)) {
        waiting_t *w = cookie;

        unlink_wait(&waits, w);
        w->error = error;
        any = true;
        /* the callback may start new waits: w is in no list meanwhile */
        act(w);
        free_waiting(w);
    }
    return any;
}

/* The tasks listed before this poll (a task listed while they run waits for
 * the next one). */
static void run_tasks(void)
{
    MPIDI_NBRMA_ledger_task_t *t = tasks;

    tasks = NULL;
    while (t) {
        MPIDI_NBRMA_ledger_task_t *next = t->next;
        bool again = false;

        keep_error(t->run(t, &again));
        if (again) {
            t->next = tasks;
            tasks = t;
        } else {
            t->listed = false;
        }
        t = next;
    }
}

/* One look at everything: true if some wait was released (only registered
 * waits are). */
static bool poll_once(void)
{
    if (n_flushes)
        test_flushes();
    if (waits)
        test_outside_parts();
    if (tasks)
        run_tasks();
    return waits && complete_released();
}

static int poll_ledger(int *made_progress)
{
    int mpi_errno;

    if (poll_once() && made_progress)
        *made_progress = 1;
    mpi_errno = callback_errno;
    callback_errno = MPI_SUCCESS;
    if (mpi_errno == MPI_SUCCESS && !waits && !tasks)
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
    int mpi_errno = MPI_SUCCESS;
    waiting_t *r;

    mpi_errno = MPIDI_NBRMA_poller_wake(&ledger_poller);
    MPIR_ERR_CHECK(mpi_errno);
    if (ledger == NULL) {
        mpi_errno = make_ledger();      /* a wait without flushes */
        MPIR_ERR_CHECK(mpi_errno);
    }
    r = spare;
    if (r)
        spare = r->next;
    else
        r = MPL_malloc(sizeof(*r), MPL_MEM_RMA);
    MPIR_ERR_CHKANDJUMP(r == NULL, mpi_errno, MPI_ERR_NO_MEM, "**nomem");
    *r = (waiting_t) {
    .win = w->win,.action = action};
    r->id = nbrma_ledger_waiter_new(ledger, r);
    if (r->id == 0) {
        free_waiting(r);
        MPIR_ERR_SETANDJUMP(mpi_errno, MPI_ERR_NO_MEM, "**nomem");
    }
    /* from here on nothing fails: a part the ledger had no memory for only
     * releases the waiter early, with that error */
    if (w->error)
        nbrma_ledger_waiter_error(ledger, r->id, w->error);
    for (size_t i = 0; i < w->n_open; i++)
        if (!nbrma_ledger_waiter_needs_flush(ledger, r->id, w->open[i].peer, w->open[i].seq))
            nbrma_ledger_waiter_error(ledger, r->id, MPI_ERR_NO_MEM);
    r->parts = w->parts;
    r->n_parts = w->n_parts;
    w->parts = NULL;
    for (size_t i = 0; i < r->n_parts; i++)
        nbrma_ledger_waiter_needs_outside(ledger, r->id);
    link_wait(&waits, r);
    nbrma_ledger_waiter_armed(ledger, r->id);
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
    bool done = w->n_open == 0;

    *registered = NULL;
    for (size_t i = 0; i < w->n_parts && done; i++) {
        int part_errno;

        done = part_done(w->win, &w->parts[i], &part_errno);
        first_error(w, part_errno);
    }
    if (!done)
        mpi_errno = register_open(w, action, registered);
    /* a request goes back to the caller only where it is the caller's
     * (complete_request's failure) */
    if (done || (mpi_errno && action != ACT_REQUEST))
        for (size_t i = 0; i < w->n_parts; i++)
            if (w->parts[i].req)
                MPIR_Request_free(w->parts[i].req);
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
    if (mpi_errno == MPI_SUCCESS) {
        task->run = run;
        task->win = win;
        task->listed = true;
        task->next = tasks;
        tasks = task;
    }
    return mpi_errno;
}

/* --- what the waiting loops (ledger_wait.c) ask ----------------------------- */

bool MPIDI_NBRMA_ledger_poll(void)
{
    return poll_once();
}

bool MPIDI_NBRMA_ledger_flushing(int *vni)
{
    if (n_flushes == 0)
        return false;
    *vni = flushes[0].vni;      /* MPICH runs one VNI here */
    return true;
}

void MPIDI_NBRMA_ledger_forget_arg(void *arg)
{
    for (waiting_t * w = waits; w; w = w->next)
        if (w->action == ACT_CALLBACK && w->arg == arg)
            w->action = ACT_NOTHING;
}

static bool has_waits(MPIR_Win * win)
{
    for (waiting_t * w = waits; w; w = w->next)
        if (w->win == win)
            return true;
    for (MPIDI_NBRMA_ledger_task_t * t = tasks; t; t = t->next)
        if (t->win == win)
            return true;
    return false;
}

int MPIDI_NBRMA_ledger_finish_window(MPIR_Win * win)
{
    int mpi_errno = MPI_SUCCESS;

    /* MPICH's blocking RMA spin loops do not run progress hooks: poll here */
    while (has_waits(win)) {
        poll_once();
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
