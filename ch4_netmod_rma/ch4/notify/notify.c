/* mpich-nbrma: notified RMA with counters (notify.h). */

#include "mpidimpl.h"
#include "nbrma_win.h"
#include "nbrma_am.h"
#include "nbrma_ledger_adapter.h"
#include "nbrma_request.h"
#include "notify.h"
#include "notify_wire.h"
#include "counter_memory.h"
#include "nbrma_ucx_lanes.h"
#include "native_atomics.h"
#include "nbrma_notify_counters.h"

/* An increment to send once its operation completed (a ledger wait). */
typedef struct {
    MPIR_Win *win;
    int target;
    int idx;
} outgoing_notify_t;

static int handler_id = -1;

/* Windows with counters here and requests waiting on them (rules N1-N4,
 * nbrma_notify_counters.h); an entry's user data is its counter memory. */
static nbrma_notify_table table;

/* Rule R7: the increment offered for the put or get MPIDIG sends next (counter
 * index + 1, 0: none). Per thread: offer and take are one call chain of the
 * issuing thread. `offered`, set at the first offer, spares a program that
 * never notifies the thread-local access in every active-message put and get. */
#ifdef MPL_TLS
static MPL_TLS int offered_notice;
#else
static int offered_notice;
#endif
static bool offered;

/* Looks at the counters that requests wait for at every poll of the ledger
 * while any does (UCX's atomics change them without telling this process). */
static MPIDI_NBRMA_ledger_task_t waits_task;

/* Whether `win` can carry counters: made collectively (it has an id the
 * target knows), not a memory-handle window or a duplicate. */
static bool notify_possible(MPIR_Win * win)
{
    return !MPIDI_NBRMA_win_ops(win)->local_free;
}

/* *c: the counters of `win` here, or the error of a window without; and
 * *idx one of them (N2) unless idx is NULL. */
static int counters_of(MPIR_Win * win, const int *idx, nbrma_notify_counters ** c)
{
    int mpi_errno = MPI_SUCCESS;

    MPIR_ERR_CHKANDJUMP(!notify_possible(win), mpi_errno, MPI_ERR_WIN,
                        "**nbrmanonotify");
    *c = nbrma_notify_table_find(&table, win);
    MPIR_ERR_CHKANDJUMP(*c == NULL, mpi_errno, MPI_ERR_WIN, "**nbrmanocounters");
    MPIR_ERR_CHKANDJUMP2(idx && !nbrma_notify_counters_has(*c, *idx), mpi_errno, MPI_ERR_ARG,
                         "**nbrmacounteridx", "**nbrmacounteridx %d %d", *idx,
                         nbrma_notify_counters_count(*c));
  fn_exit:
    return mpi_errno;
  fn_fail:
    goto fn_exit;
}

/* Its counter reached its value (N3), or the counters went first (N4). */
static void complete_wait(void *waiter, bool freed)
{
    MPIR_Request *req = waiter;

    if (freed)
        MPIR_ERR_SET(req->status.MPI_ERROR, MPI_ERR_WIN, "**nbrmanotifyfreed");
    MPID_Request_complete(req);
}

static int poll_waits(MPIDI_NBRMA_ledger_task_t * task, bool *again)
{
    (void) task;
    *again = nbrma_notify_table_poll(&table);
    return MPI_SUCCESS;
}

int MPIR_Win_create_notify_impl(MPIR_Win * win, int n)
{
    int mpi_errno = MPI_SUCCESS;
    MPIR_Errflag_t errflag = MPIR_ERR_NONE;
    int mine[3], all[3], verdict;
    MPIDI_NBRMA_counter_memory_t *cm = NULL;

    MPIR_ERR_CHKANDJUMP(!notify_possible(win), mpi_errno, MPI_ERR_WIN,
                        "**nbrmanonotify");
    /* every process decides alike (N1) */
    nbrma_notify_vote(n, nbrma_notify_table_find(&table, win) != NULL, mine);
    mpi_errno = MPIR_Allreduce(mine, all, 3, MPI_INT, MPI_MAX, win->comm_ptr, &errflag);
    MPIR_ERR_CHECK(mpi_errno);
    MPIR_ERR_CHKANDJUMP(errflag, mpi_errno, MPI_ERR_OTHER, "**coll_fail");
    verdict = nbrma_notify_verdict(all);
    MPIR_ERR_CHKANDJUMP(verdict == NBRMA_ERR_SYNC, mpi_errno, MPI_ERR_WIN, "**nbrmacounterstwice");
    MPIR_ERR_CHKANDJUMP2(verdict != NBRMA_OK, mpi_errno, MPI_ERR_ARG, "**nbrmacountersdiffer",
                         "**nbrmacountersdiffer %d %d", -all[1], all[0]);
    mpi_errno = MPIDI_NBRMA_counter_memory_create(win, n, &cm);
    MPIR_ERR_CHECK(mpi_errno);
    /* the verdict ruled out a second entry and n < 0 (the bindings): only
     * memory may lack */
    MPIR_ERR_CHKANDJUMP(nbrma_notify_table_add(&table, win, n, cm->counters, cm, complete_wait,
                                               NULL) != NBRMA_OK, mpi_errno, MPI_ERR_NO_MEM,
                        "**nomem");

  fn_exit:
    return mpi_errno;
  fn_fail:
    if (cm)
        MPIDI_NBRMA_counter_memory_free(cm);
    goto fn_exit;
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

/* After a put's data was placed or a get's reply sent; dropped where the
 * window's counters went first (N2). */
void MPIDI_NBRMA_notice_apply(MPIR_Win * win, int notice)
{
    nbrma_notify_table_arrived(&table, win, notice - 1);
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
    nbrma_notify_table_arrived(&table, win, msg.notify_id);

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

    nbrma_notify_counters *c;

    if (mpi_errno == MPI_SUCCESS)
        mpi_errno = counters_of(win, &idx, &c);
    if (mpi_errno == MPI_SUCCESS)
        *value = nbrma_notify_counters_get(c, idx);
    return mpi_errno;
}

int MPIR_Win_set_notify_impl(MPIR_Win * win, int idx, MPI_Count value)
{
    nbrma_notify_counters *c;
    int mpi_errno = counters_of(win, &idx, &c);

    if (mpi_errno == MPI_SUCCESS)
        nbrma_notify_counters_set(c, idx, value);
    return mpi_errno;
}

int MPIR_Win_notify_request_impl(MPIR_Win * win, int idx, MPI_Count value,
                                 MPIR_Request ** request)
{
    nbrma_notify_counters *c;
    int mpi_errno = counters_of(win, &idx, &c);
    MPIR_Request *req = NULL;

    MPIR_ERR_CHECK(mpi_errno);
    mpi_errno = MPIDI_NBRMA_request_create(&req);
    MPIR_ERR_CHECK(mpi_errno);
    /* the index was checked: only memory may lack; it may complete at once */
    if (nbrma_notify_counters_wait(c, idx, value, req) != NBRMA_OK) {
        MPIDI_NBRMA_request_discard(req);
        MPIR_ERR_SETANDJUMP(mpi_errno, MPI_ERR_NO_MEM, "**nomem");
    }
    *request = req;
    if (nbrma_notify_counters_waiting(c))
        mpi_errno = MPIDI_NBRMA_ledger_each_poll(&waits_task, NULL, poll_waits);

  fn_exit:
    return mpi_errno;
  fn_fail:
    goto fn_exit;
}

/* The operation completed: the increment goes unless it failed (the counter
 * would claim data that is not there). A UCX atomic where this process has the
 * target's key, else an active message. */
static int send_notification(void *arg, int error)
{
    outgoing_notify_t *n = arg;
    nbrma_notify_msg_t msg;
    int mpi_errno = MPI_SUCCESS;
    nbrma_notify_counters *c = nbrma_notify_table_find(&table, n->win);
    MPIDI_NBRMA_counter_memory_t *cm = c ? nbrma_notify_counters_user(c) : NULL;

    if (error == MPI_SUCCESS &&
        !(cm && MPIDI_NBRMA_counter_memory_add(cm, n->win, n->target, n->idx, false))) {
        nbrma_notify_encode(&msg, MPIDIG_WIN(n->win, win_id), n->idx);
        mpi_errno = MPIDI_NBRMA_am_send(n->win, n->target, handler_id, &msg, sizeof(msg));
    }
    MPL_free(n);
    return mpi_errno;
}

/* The increment follows once the operation of `data_req` (taken over) completed. */
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

/* Rule R6; never toward this process, whose counters take no atomic. UCX's
 * shared-memory lanes perform a put or get within its call only on window
 * memory UCX maps here: on other memory (MPI_Win_create over malloc) UCX
 * emulates them with messages the target's CPU answers later. */
static bool notice_rides(MPIDI_NBRMA_notify_behind_t * nb, int target, nbrma_route route)
{
    bool to_self = target == nb->win->comm_ptr->rank;
    void *mapped;

    return nbrma_notice_rides(route, to_self, !to_self && MPIDI_UCX_WIN(nb->win).info_table &&
                              MPIDI_NBRMA_ucx_window_mapped(nb->win, target, &mapped) &&
                              MPIDI_NBRMA_win_lanes_on_cpu(nb->win, target, ""));
}

bool MPIDI_NBRMA_notify_send_behind(MPIDI_NBRMA_notify_behind_t * nb, int target,
                                    nbrma_route route)
{
    if (nb->sent)
        return true;    /* inside the operation's message (rule R7) */
    if (!notice_rides(nb, target, route))
        return false;
    nb->sent = MPIDI_NBRMA_counter_memory_add(nb->memory, nb->win, target, nb->idx, true);
    return nb->sent;
}

bool MPIDI_NBRMA_notice_in_message(MPIDI_NBRMA_notify_behind_t * nb,
                                   const MPIDI_NBRMA_rma_op_t * op, nbrma_route * route)
{
    int target = op->target_rank, lanes = 0, emulated = 0;
    bool to_self = target == nb->win->comm_ptr->rank, contiguous = false;
    MPI_Aint bytes = 0;

    if (op->kind == MPIDI_NBRMA_OP_PUT || op->kind == MPIDI_NBRMA_OP_GET) {
        MPIDI_NBRMA_local_buffer_t local = MPIDI_NBRMA_local_buffer(op);

        MPIDI_Datatype_check_contig(op->target_datatype, contiguous);
        MPIDI_Datatype_check_size(local.datatype, local.count, bytes);
    }
    /* whether UCX's RMA toward the target needs its CPU (tcp: UCX emulates gets
     * with messages, and a put lands when the target reads its socket) */
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
    nbrma_notify_counters *c;
    int mpi_errno = counters_of(win, &idx, &c);
    MPIR_Request *data_req = NULL;
    MPIDI_NBRMA_notify_behind_t behind;

    MPIR_ERR_CHECK(mpi_errno);
    behind = (MPIDI_NBRMA_notify_behind_t) {
    .win = win,.memory = nbrma_notify_counters_user(c),.idx = idx};
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

/* Collective: every process's UCX increments flushed, a barrier, then the
 * counters go and their waiting requests fail with MPI_ERR_WIN (N4). */
static int quiesce_and_drop(MPIR_Win * win, nbrma_notify_counters * c)
{
    int mpi_errno = MPI_SUCCESS;
    MPIR_Errflag_t errflag = MPIR_ERR_NONE;
    MPIDI_NBRMA_counter_memory_t *cm = nbrma_notify_counters_user(c);

    mpi_errno = MPIDI_NBRMA_counter_memory_quiesce(cm, win);
    MPIR_ERR_CHECK(mpi_errno);
    mpi_errno = MPIR_Barrier(win->comm_ptr, &errflag);
    MPIR_ERR_CHECK(mpi_errno);
    MPIR_ERR_CHKANDJUMP(errflag, mpi_errno, MPI_ERR_OTHER, "**coll_fail");
    nbrma_notify_table_remove(&table, c);
    MPIDI_NBRMA_counter_memory_free(cm);

  fn_exit:
    return mpi_errno;
  fn_fail:
    goto fn_exit;
}

int MPIR_Win_free_notify_impl(MPIR_Win * win)
{
    int mpi_errno = MPI_SUCCESS;
    nbrma_notify_counters *c;

    mpi_errno = counters_of(win, NULL, &c);
    MPIR_ERR_CHECK(mpi_errno);
    /* this process's increments still waiting for their operations leave first */
    mpi_errno = MPIDI_NBRMA_ledger_finish_window(win);
    MPIR_ERR_CHECK(mpi_errno);
    mpi_errno = quiesce_and_drop(win, c);

  fn_exit:
    return mpi_errno;
  fn_fail:
    goto fn_exit;
}

int MPIDI_NBRMA_notify_forget_window(MPIR_Win * win)
{
    /* pending increments went with the ledger's waits, settled first; those
     * sent as UCX atomics must land before anyone frees counters (collective:
     * every process has counters or none) */
    nbrma_notify_counters *c = nbrma_notify_table_find(&table, win);

    return c ? quiesce_and_drop(win, c) : MPI_SUCCESS;
}
