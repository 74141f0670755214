/*
 * mpich-nbrma: notified RMA with counters (notify.h).
 */

#include "mpidimpl.h"
#include "nbrma_win.h"
#include "nbrma_am.h"
#include "nbrma_array.h"
#include "nbrma_ledger_adapter.h"
#include "nbrma_request.h"
#include "notify.h"
#include "notify_wire.h"
#include "counter_memory.h"
#include "nbrma_ucx_lanes.h"

/* An increment to send once its operation completed (a ledger wait). */
typedef struct {
    MPIR_Win *win;
    int target;
    int idx;
} outgoing_notify_t;

static int handler_id = -1;

/* A request waiting for a counter to reach a value. */
typedef struct {
    int idx;
    MPI_Count value;
    MPIR_Request *req;
} notify_wait_t;

typedef struct notify_window {
    MPIR_Win *win;
    MPIDI_NBRMA_counter_memory_t memory;        /* the counters, read and changed atomically:
                                                 * peers add to them with UCX atomics */
    int n_counters;
    notify_wait_t *waits;       /* in the order they were made */
    size_t n_waits, cap_waits;
    struct notify_window *next;
} notify_window_t;

static notify_window_t *windows;

/* The increment offered for the put or get MPIDIG sends next (rule R7,
 * patches 0037 and 0038): counter index + 1, 0 for none. Per thread: the
 * offer and MPIDIG's take are one call chain of the thread that issues the
 * operation. `offered`, set at the first offer, spares the active-message
 * puts and gets of a program that never notifies the thread-local access. */
#ifdef MPL_TLS
static MPL_TLS int offered_notice;
#else
static int offered_notice;
#endif
static bool offered;

/* Looks at the counters that requests wait for at every poll of the ledger
 * while any does (UCX's atomics change them without telling this process). */
static MPIDI_NBRMA_ledger_task_t waits_task;

bool MPIDI_NBRMA_notify_possible(MPIR_Win * win)
{
    return !MPIDI_NBRMA_win_ops(win)->local_free;
}

static notify_window_t *find(MPIR_Win * win)
{
    notify_window_t *nw;

    for (nw = windows; nw && nw->win != win; nw = nw->next);
    return nw;
}

/* *nw: the counters of `win` here, or the error of a window without. */
static int counters_of(MPIR_Win * win, notify_window_t ** nw)
{
    int mpi_errno = MPI_SUCCESS;

    MPIR_ERR_CHKANDJUMP(!MPIDI_NBRMA_notify_possible(win), mpi_errno, MPI_ERR_WIN,
                        "**nbrmanonotify");
    *nw = find(win);
    MPIR_ERR_CHKANDJUMP(*nw == NULL, mpi_errno, MPI_ERR_WIN, "**nbrmanocounters");
  fn_exit:
    return mpi_errno;
  fn_fail:
    goto fn_exit;
}

/* The same, and `idx` one of them. */
static int counter_at(MPIR_Win * win, int idx, notify_window_t ** nw)
{
    int mpi_errno = counters_of(win, nw);

    MPIR_ERR_CHECK(mpi_errno);
    MPIR_ERR_CHKANDJUMP2(idx < 0 || idx >= (*nw)->n_counters, mpi_errno, MPI_ERR_ARG,
                         "**nbrmacounteridx", "**nbrmacounteridx %d %d", idx, (*nw)->n_counters);
  fn_exit:
    return mpi_errno;
  fn_fail:
    goto fn_exit;
}

static MPI_Count counter_value(notify_window_t * nw, int idx)
{
    return __atomic_load_n(&nw->memory.counters[idx], __ATOMIC_ACQUIRE);
}

/* The requests whose counter reached their value complete, in order. */
static void release_reached(notify_window_t * nw)
{
    size_t kept = 0;

    for (size_t i = 0; i < nw->n_waits; i++) {
        notify_wait_t w = nw->waits[i];
        if (counter_value(nw, w.idx) >= w.value)
            MPID_Request_complete(w.req);
        else
            nw->waits[kept++] = w;
    }
    nw->n_waits = kept;
}

static int poll_waits(MPIDI_NBRMA_ledger_task_t * task, bool *again)
{
    (void) task;
    *again = false;
    for (notify_window_t * nw = windows; nw; nw = nw->next) {
        release_reached(nw);
        *again = *again || nw->n_waits > 0;
    }
    return MPI_SUCCESS;
}

int MPIR_Win_create_notify_impl(MPIR_Win * win, int n)
{
    int mpi_errno = MPI_SUCCESS;
    MPIR_Errflag_t errflag = MPIR_ERR_NONE;
    /* every process decides alike: the largest and smallest number, and
     * whether any process has counters already */
    int mine[3] = { n, -n, find(win) != NULL }, all[3];
    notify_window_t *nw = NULL;

    MPIR_ERR_CHKANDJUMP(!MPIDI_NBRMA_notify_possible(win), mpi_errno, MPI_ERR_WIN,
                        "**nbrmanonotify");
    mpi_errno = MPIR_Allreduce(mine, all, 3, MPI_INT, MPI_MAX, win->comm_ptr, &errflag);
    MPIR_ERR_CHECK(mpi_errno);
    MPIR_ERR_CHKANDJUMP(errflag, mpi_errno, MPI_ERR_OTHER, "**coll_fail");
    MPIR_ERR_CHKANDJUMP(all[2], mpi_errno, MPI_ERR_WIN, "**nbrmacounterstwice");
    MPIR_ERR_CHKANDJUMP2(all[0] != -all[1], mpi_errno, MPI_ERR_ARG, "**nbrmacountersdiffer",
                         "**nbrmacountersdiffer %d %d", -all[1], all[0]);
    nw = MPL_calloc(1, sizeof(*nw), MPL_MEM_RMA);
    MPIR_ERR_CHKANDJUMP(nw == NULL, mpi_errno, MPI_ERR_NO_MEM, "**nomem");
    mpi_errno = MPIDI_NBRMA_counter_memory_create(win, n, &nw->memory);
    MPIR_ERR_CHECK(mpi_errno);
    nw->win = win;
    nw->n_counters = n;
    nw->next = windows;
    windows = nw;

  fn_exit:
    return mpi_errno;
  fn_fail:
    MPL_free(nw);
    goto fn_exit;
}

/* An increment for counter `idx` of `win` is due (a notification message
 * arrived, a put that carried one placed its data, a get that carried one
 * sent its reply): applied after the data it notifies, which is in place or
 * was read. Dropped where the window or its counters went before it came, or
 * for an index the origin checked against counters of another size. */
static void increment_arrived(MPIR_Win * win, int idx)
{
    notify_window_t *nw = win ? find(win) : NULL;

    if (nw == NULL || idx < 0 || idx >= nw->n_counters)
        return;
    __atomic_fetch_add(&nw->memory.counters[idx], 1, __ATOMIC_ACQ_REL);
    release_reached(nw);
}

int MPIDI_NBRMA_notice_take(void)
{
    int notice;

    if (!offered)
        return 0;
    notice = offered_notice;
    offered_notice = 0;
    return notice;
}

void MPIDI_NBRMA_notice_apply(MPIR_Win * win, int notice)
{
    increment_arrived(win, notice - 1);
}

static int notify_target_msg_cb(void *am_hdr, void *data, MPI_Aint data_sz, uint32_t attr,
                                MPIR_Request ** req)
{
    int mpi_errno = MPI_SUCCESS;
    nbrma_notify_msg_t msg;
    MPIR_Win *win;

    (void) data;
    (void) data_sz;
    /* the window first: that settles the handler's request either way */
    memcpy(&msg, am_hdr, sizeof(msg));
    win = MPIDI_NBRMA_am_window(msg.win_id, attr, req);
    MPIR_ERR_CHKANDJUMP1(nbrma_notify_decode(am_hdr, sizeof(msg), &msg) != 0, mpi_errno,
                         MPI_ERR_INTERN, "**nbrmaengine", "**nbrmaengine %s",
                         "malformed notification");
    increment_arrived(win, msg.notify_id);

  fn_exit:
    return mpi_errno;
  fn_fail:
    goto fn_exit;
}

int MPIDI_NBRMA_notify_register_handlers(void)
{
    return MPIDI_NBRMA_am_register(notify_target_msg_cb, &handler_id);
}

int MPIR_Win_get_notify_impl(MPIR_Win * win, int idx, MPI_Count * value)
{
    /* increments that arrived meanwhile: a polling loop needs no other call */
    int mpi_errno = MPID_Progress_test(NULL);

    notify_window_t *nw;

    if (mpi_errno == MPI_SUCCESS)
        mpi_errno = counter_at(win, idx, &nw);
    if (mpi_errno == MPI_SUCCESS)
        *value = counter_value(nw, idx);
    return mpi_errno;
}

int MPIR_Win_set_notify_impl(MPIR_Win * win, int idx, MPI_Count value)
{
    notify_window_t *nw;
    int mpi_errno = counter_at(win, idx, &nw);

    if (mpi_errno == MPI_SUCCESS) {
        __atomic_store_n(&nw->memory.counters[idx], value, __ATOMIC_RELEASE);
        release_reached(nw);
    }
    return mpi_errno;
}

int MPIR_Win_notify_request_impl(MPIR_Win * win, int idx, MPI_Count value,
                                 MPIR_Request ** request)
{
    notify_window_t *nw;
    int mpi_errno = counter_at(win, idx, &nw);
    MPIR_Request *req = NULL;

    MPIR_ERR_CHECK(mpi_errno);
    mpi_errno = MPIDI_NBRMA_reserve_one((void **) &nw->waits, nw->n_waits, &nw->cap_waits,
                                        sizeof(*nw->waits), 4);
    MPIR_ERR_CHECK(mpi_errno);
    mpi_errno = MPIDI_NBRMA_request_create(&req);
    MPIR_ERR_CHECK(mpi_errno);
    nw->waits[nw->n_waits++] = (notify_wait_t) {.idx = idx,.value = value,.req = req };
    release_reached(nw);
    *request = req;
    if (nw->n_waits)
        mpi_errno = MPIDI_NBRMA_ledger_each_poll(&waits_task, NULL, poll_waits);

  fn_exit:
    return mpi_errno;
  fn_fail:
    goto fn_exit;
}

/* The increment's operation completed: it goes, unless the operation failed
 * (which it reported to no one: the counter would claim data that is not
 * there). A UCX atomic where this process has the target's key, else an
 * active message. */
static int send_notification(void *arg, int error)
{
    outgoing_notify_t *n = arg;
    nbrma_notify_msg_t msg;
    int mpi_errno = MPI_SUCCESS;
    notify_window_t *nw = find(n->win);

    if (error == MPI_SUCCESS &&
        !(nw && MPIDI_NBRMA_counter_memory_add(&nw->memory, n->win, n->target, n->idx, false))) {
        nbrma_notify_encode(&msg, MPIDIG_WIN(n->win, win_id), n->idx);
        mpi_errno = MPIDI_NBRMA_am_send(n->win, n->target, handler_id, &msg, sizeof(msg));
    }
    MPL_free(n);
    return mpi_errno;
}

/* The increment of counter `idx` at `target` follows the operation whose
 * request is `data_req` (taken over) once it completed. */
static int notify_after(MPIR_Win * win, int target, int idx, MPIR_Request * data_req)
{
    int mpi_errno = MPI_SUCCESS;
    outgoing_notify_t *n = MPL_malloc(sizeof(*n), MPL_MEM_RMA);
    MPIDI_NBRMA_ledger_wait_t wait;

    MPIR_ERR_CHKANDJUMP(n == NULL, mpi_errno, MPI_ERR_NO_MEM, "**nomem");
    *n = (outgoing_notify_t) {
    .win = win,.target = target,.idx = idx};
    /* complete already (shared memory, a local target): sent at once */
    MPIDI_NBRMA_ledger_wait_init(&wait, win);
    mpi_errno = MPIDI_NBRMA_ledger_need_request(&wait, data_req);
    if (mpi_errno != MPI_SUCCESS) {
        MPIDI_NBRMA_ledger_cancel(&wait);
        MPIR_ERR_CHECK(mpi_errno);
    }
    mpi_errno = MPIDI_NBRMA_ledger_call_back(&wait, send_notification, n);

  fn_exit:
    return mpi_errno;
  fn_fail:
    MPL_free(n);
    MPIR_Request_free(data_req);
    goto fn_exit;
}

/* Rule R6 for `nb`'s operation, which takes `route` toward `target`; never
 * toward this process, whose counters take no atomic (whether every UCX lane
 * toward the target runs on this CPU's transports). */
static bool notice_rides(MPIDI_NBRMA_notify_behind_t * nb, int target, nbrma_route route)
{
    bool to_self = target == nb->win->comm_ptr->rank;

    return nbrma_notice_rides(route, to_self, !to_self &&
                              MPIDI_NBRMA_win_lanes_on_cpu(nb->win, target, ""));
}

bool MPIDI_NBRMA_notify_send_behind(MPIDI_NBRMA_notify_behind_t * nb, int target,
                                    nbrma_route route)
{
    if (nb->sent)
        return true;    /* inside the operation's message (rule R7) */
    if (!notice_rides(nb, target, route))
        return false;
    nb->sent = MPIDI_NBRMA_counter_memory_add(&nb->counters->memory, nb->win, target, nb->idx,
                                              true);
    return nb->sent;
}

bool MPIDI_NBRMA_notice_in_message(MPIDI_NBRMA_notify_behind_t * nb,
                                   const MPIDI_NBRMA_rma_op_t * op, nbrma_route * route)
{
    int target = op->target_rank, lanes = 0, emulated = 0;
    bool to_self = target == nb->win->comm_ptr->rank, contiguous = false;
    MPI_Aint bytes = 0;

    /* a get's buffer is in the result fields (op_hooks.c) */
    if (op->kind == MPIDI_NBRMA_OP_PUT || op->kind == MPIDI_NBRMA_OP_GET) {
        MPIDI_Datatype_check_contig(op->target_datatype, contiguous);
        if (op->kind == MPIDI_NBRMA_OP_PUT)
            MPIDI_Datatype_check_size(op->origin_datatype, op->origin_count, bytes);
        else
            MPIDI_Datatype_check_size(op->result_datatype, op->result_count, bytes);
    }
    /* whether UCX's puts and gets toward the target run on tcp, where its CPU
     * answers them (UCX emulates gets with messages, and a tcp put lands when
     * the target reads its socket) */
    if (!to_self)
        MPIDI_NBRMA_win_rma_lanes(nb->win, target, &lanes, &emulated);
    /* MPIDIG sends no message for no data */
    return nbrma_notice_in_message(route, to_self, notice_rides(nb, target, *route),
                                   contiguous && bytes > 0, emulated > 0);
}

int MPIDI_NBRMA_notify_in_message(MPIDI_NBRMA_notify_behind_t * nb,
                                  const MPIDI_NBRMA_rma_op_t * op)
{
    int mpi_errno;

    offered_notice = nb->idx + 1;
    offered = true;
    if (op->kind == MPIDI_NBRMA_OP_PUT)
        mpi_errno = MPIDIG_mpi_put(op->origin_addr, op->origin_count, op->origin_datatype,
                                   op->target_rank, op->target_disp, op->target_count,
                                   op->target_datatype, nb->win);
    else
        mpi_errno = MPIDIG_mpi_get(op->result_addr, op->result_count, op->result_datatype,
                                   op->target_rank, op->target_disp, op->target_count,
                                   op->target_datatype, nb->win);
    /* MPIDIG took it into the message's header, unless it failed first */
    nb->sent = mpi_errno == MPI_SUCCESS && offered_notice == 0;
    offered_notice = 0;
    MPIR_ERR_CHKANDJUMP(mpi_errno == MPI_SUCCESS && !nb->sent, mpi_errno, MPI_ERR_INTERN,
                        "**intern");
  fn_exit:
    return mpi_errno;
  fn_fail:
    goto fn_exit;
}

int MPIDI_NBRMA_notify_rma(MPIDI_NBRMA_rma_op_t * op, int idx, MPIR_Win * win)
{
    notify_window_t *nw;
    int mpi_errno = counter_at(win, idx, &nw);
    MPIR_Request *data_req = NULL;
    MPIDI_NBRMA_notify_behind_t behind;

    MPIR_ERR_CHECK(mpi_errno);
    behind = (MPIDI_NBRMA_notify_behind_t) {
    .win = win,.counters = nw,.idx = idx};
    if (op->target_rank == MPI_PROC_NULL)
        goto fn_exit;
    op->request = &data_req;
    op->remote_completion = op->kind != MPIDI_NBRMA_OP_GET;
    op->notify_behind = &behind;
    mpi_errno = MPIDI_NBRMA_win_ops(win)->rma(op, win);
    MPIR_ERR_CHECK(mpi_errno);
    /* sent behind the data: the issuer made no request */
    if (!behind.sent)
        mpi_errno = notify_after(win, op->target_rank, idx, data_req);

  fn_exit:
    return mpi_errno;
  fn_fail:
    goto fn_exit;
}

/* Unlinks and frees the counters of `win`; its waiting requests complete
 * with MPI_ERR_WIN. */
static void drop_counters(MPIR_Win * win)
{
    notify_window_t *nw;

    for (notify_window_t ** link = &windows; (nw = *link) != NULL; link = &nw->next) {
        if (nw->win != win)
            continue;
        *link = nw->next;
        for (size_t w = 0; w < nw->n_waits; w++) {
            MPIR_Request *req = nw->waits[w].req;
            MPIR_ERR_SET(req->status.MPI_ERROR, MPI_ERR_WIN, "**nbrmanotifyfreed");
            MPID_Request_complete(req);
        }
        MPL_free(nw->waits);
        MPIDI_NBRMA_counter_memory_free(&nw->memory);
        MPL_free(nw);
        return;
    }
}

/* Collective: every process's increments done at their targets (the
 * flushes of its UCX atomics, then a barrier), then the counters go. */
static int quiesce_and_drop(notify_window_t * nw)
{
    int mpi_errno = MPI_SUCCESS;
    MPIR_Errflag_t errflag = MPIR_ERR_NONE;
    MPIR_Win *win = nw->win;

    mpi_errno = MPIDI_NBRMA_counter_memory_quiesce(&nw->memory, win);
    MPIR_ERR_CHECK(mpi_errno);
    mpi_errno = MPIR_Barrier(win->comm_ptr, &errflag);
    MPIR_ERR_CHECK(mpi_errno);
    MPIR_ERR_CHKANDJUMP(errflag, mpi_errno, MPI_ERR_OTHER, "**coll_fail");
    drop_counters(win);

  fn_exit:
    return mpi_errno;
  fn_fail:
    goto fn_exit;
}

int MPIR_Win_free_notify_impl(MPIR_Win * win)
{
    int mpi_errno = MPI_SUCCESS;
    notify_window_t *nw;

    mpi_errno = counters_of(win, &nw);
    MPIR_ERR_CHECK(mpi_errno);
    /* this process's increments still waiting for their operations leave
     * (the ledger's waits on the window), then nobody sends any more */
    mpi_errno = MPIDI_NBRMA_ledger_finish_window(win);
    MPIR_ERR_CHECK(mpi_errno);
    mpi_errno = quiesce_and_drop(nw);

  fn_exit:
    return mpi_errno;
  fn_fail:
    goto fn_exit;
}

int MPIDI_NBRMA_notify_forget_window(MPIR_Win * win)
{
    /* the increments this process still sends on `win` went with the
     * ledger's waits, which MPI_Win_free settled first; those that went as
     * UCX atomics must reach their targets before anyone frees counters
     * (MPI_Win_free is collective, and every process has counters or none) */
    notify_window_t *nw = find(win);

    return nw ? quiesce_and_drop(nw) : MPI_SUCCESS;
}
