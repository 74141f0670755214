/*
 * mpich-nbrma: the glue between MPICH's CH4 (UCX netmod) and the
 * nonblocking-epoch engine of core/ (nbrma_core.h).
 *
 * Which windows: a window made by MPI_Win_create, _allocate or _allocate_shared
 * gets an engine when it is created (MPIDI_NBRMA_win_init_hook, patch 0016),
 * unless its info key "mpich_nbrma_epochs" is "false" or, without the key, the
 * environment variable MPICH_NBRMA_EPOCHS is 0 (MPICH's own synchronization
 * then, and no MPIX_Win_i* epoch calls). Dynamic windows keep
 * MPICH's own synchronization: they are the parents of memory-handle windows
 * and get the rkey cache for RDMA on attached memory, whose state lives in the
 * same window field (nbrma_memhandle.c). The decision must be the same on
 * every process of the window, as the creation is collective.
 *
 * What the engine takes over: every synchronization call of the window (the
 * hooks of patch 0014 send them here; a blocking call is the nonblocking one plus
 * a wait on its request, so both kinds mix freely, paper rule 1). RMA calls
 * (patch 0013) are recorded in the engine, which issues them through MPICH's own
 * MPIDI_<op> functions once their epoch is active and granted; when it already
 * is (the common case), an operation without a request of its own goes at once
 * and the engine only counts it (nbrma_op_issue_direct). MPIDIG's epoch
 * state is parked at "lock_all" for the life of the window, so that its
 * per-operation epoch checks let the engine's operations through; the engine does
 * the checking.
 *
 * Protocol messages (grant, done, lock request/release, fence arrival, and a
 * lock request that carries a whole epoch's puts and accumulates) travel as
 * MPIDIG active messages of one handler registered by the component. Handlers
 * run inside MPICH's progress engine, also inside the blocking spin loops, which
 * do not run progress hooks: the engine advances from there.
 *
 * Completion of issued operations: UCX RDMA completes with a nonblocking
 * endpoint flush, MPIDIG's active-message operations with its per-target
 * counters. A "completion probe" per window snapshots the operations issued so
 * far, flushes the endpoints of their targets and, once the flushes finished and
 * MPIDIG has no incomplete active-message operation left on the window, reports
 * the snapshot to the engine. A progress hook runs the probes; it is active only
 * while some window has unreported operations.
 *
 * Reentrancy: the engine must not be entered from its own transport functions.
 * Issuing an operation may run MPICH's progress, and so a handler of ours, while
 * the engine is busy: such messages wait in the window's inbox and are delivered
 * as soon as the engine call returns (engine_call).
 *
 * Everything here runs under MPICH's global critical section.
 */

#include "mpidimpl.h"
#include "ucx_impl.h"
#include "mpidi_nbrma_hooks.h"
#include "nbrma_core.h"
#include "nbrma_epochs.h"
#include "nbrma_memhandle.h"
#include <inttypes.h>
#include <stdarg.h>
#include <time.h>

_Static_assert(NBRMA_MODE_NOCHECK == MPI_MODE_NOCHECK, "MPI value");
_Static_assert(NBRMA_MODE_NOSTORE == MPI_MODE_NOSTORE, "MPI value");
_Static_assert(NBRMA_MODE_NOPUT == MPI_MODE_NOPUT, "MPI value");
_Static_assert(NBRMA_MODE_NOPRECEDE == MPI_MODE_NOPRECEDE, "MPI value");
_Static_assert(NBRMA_MODE_NOSUCCEED == MPI_MODE_NOSUCCEED, "MPI value");
_Static_assert(NBRMA_LOCK_EXCLUSIVE == MPI_LOCK_EXCLUSIVE, "MPI value");
_Static_assert(NBRMA_LOCK_SHARED == MPI_LOCK_SHARED, "MPI value");

#define EPOCHS_INFO_KEY "mpich_nbrma_epochs"

/* The reorder flags of the nonblocking-epochs paper (section VI-B), by the
 * names the paper gives their info keys. */
static const struct {
    const char *key;
    unsigned flag;
} reorder_keys[] = {
    {"MPI_WIN_ACCESS_AFTER_ACCESS_REORDER", NBRMA_REORDER_ACCESS_AFTER_ACCESS},
    {"MPI_WIN_ACCESS_AFTER_EXPOSURE_REORDER", NBRMA_REORDER_ACCESS_AFTER_EXPOSURE},
    {"MPI_WIN_EXPOSURE_AFTER_EXPOSURE_REORDER", NBRMA_REORDER_EXPOSURE_AFTER_EXPOSURE},
    {"MPI_WIN_EXPOSURE_AFTER_ACCESS_REORDER", NBRMA_REORDER_EXPOSURE_AFTER_ACCESS},
};

typedef enum {
    CTRL_GRANT,
    CTRL_DONE,
    CTRL_LOCK_REQUEST,
    CTRL_LOCK_RELEASE,
    CTRL_FENCE_ARRIVAL,
    CTRL_LOCK_EPOCH     /* a lock request with a whole epoch behind it */
} ctrl_kind_t;

/* The one protocol message; `from` is filled in by the sender. */
typedef struct {
    uint64_t win_id;
    uint64_t value;
    int32_t kind;
    int32_t lock_type;
    int32_t from;
} ctrl_msg_t;

/* A whole lock epoch (transport.pack_lock_epoch), as it is sent and kept:
 * the header, then n_ops descriptors, then each operation's data at a
 * 16-byte aligned offset. The whole buffer is at most WHOLE_EPOCH_MAX_BYTES,
 * so that it travels as one eager active-message header. */
typedef struct {
    ctrl_msg_t ctrl;            /* kind CTRL_LOCK_EPOCH */
    uint32_t n_ops;
    uint32_t bytes;             /* the whole buffer */
} whole_epoch_t;

typedef struct {
    int32_t kind;               /* MPIDI_NBRMA_OP_PUT or _ACCUMULATE */
    int32_t datatype;           /* a predefined MPI_Datatype, origin = target */
    int32_t op;                 /* a predefined MPI_Op (accumulate) */
    int32_t count;
    int64_t target_disp;
} whole_epoch_op_t;

#define WHOLE_EPOCH_MAX_BYTES 4096
#define WHOLE_EPOCH_ALIGN(n) (((n) + 15) & ~(size_t) 15)
#define WHOLE_EPOCH_INFO_KEY "mpich_nbrma_whole_lock_epochs"
#define WHOLE_EPOCH_COUNT_INFO_KEY "mpich_nbrma_whole_lock_epochs_sent"

/* A protocol message waiting for the engine; payload: CTRL_LOCK_EPOCH's copy. */
typedef struct {
    ctrl_msg_t msg;
    void *payload;
} inbox_msg_t;

/* An RMA call recorded in the engine until its epoch lets it go. */
typedef struct {
    MPIDI_NBRMA_rma_op_t op;    /* op.request is NULL: issued without a request */
    MPIR_Request *user_req;     /* the request of MPI_Rput & co., or NULL */
    int *granted_flag;          /* set: no operation, only a mark that the epoch
                                 * was granted (set to 1 when "issued") */
} recorded_op_t;

/* An issued operation whose completion is not reported to the engine yet. */
typedef struct {
    nbrma_op_ticket ticket;
    MPIR_Request *user_req;
} issued_op_t;

typedef struct MPIDI_NBRMA_epoch_win {
    MPIDI_NBRMA_win_state_t state;      /* kind MPIDI_NBRMA_WIN_EPOCHS */
    MPIR_Win *win;
    nbrma_engine *engine;
    unsigned reorder_flags;
    int vni;
    int busy;                   /* inside an engine call */
    int issue_errno;            /* MPI error of the operation whose issue failed */
    bool whole_lock_epochs;     /* pack lock epochs closed before activation */
    uint64_t whole_lock_epochs_sent;

    issued_op_t *issued;        /* in issue order */
    size_t n_issued, cap_issued;
    /* the completion probe: the first n_probed issued operations are covered
     * by the endpoint flushes in probe_reqs */
    bool probing;
    size_t n_probed;
    void **probe_reqs;
    int n_probe_reqs;
    unsigned char *probe_target;        /* per rank: an operation toward it is covered */

    inbox_msg_t *inbox;         /* messages that arrived while busy */
    size_t n_inbox, cap_inbox;

    struct MPIDI_NBRMA_epoch_win *next_polled; /* in polled_wins while n_issued > 0 */
    bool polled;
} MPIDI_NBRMA_epoch_win_t;

static int ctrl_handler_id = -1;
static MPIDI_NBRMA_epoch_win_t *polled_wins;

static int poll_probes(int *made_progress);

static MPIDI_NBRMA_hook_t probe_hook = { .poll = poll_probes, .id = -1 };

/* MPICH_NBRMA_TRACE=1: one line on stderr per protocol message, issued
 * operation, completion report and synchronization call, for debugging hangs. */
static int trace_enabled = -1;

/* Only a test of trace_enabled on the operation path while tracing is off. */
#define trace(ew, ...) do { if (trace_enabled != 0) trace_line(ew, __VA_ARGS__); } while (0)

static void trace_line(MPIDI_NBRMA_epoch_win_t * ew, const char *fmt, ...)
{
    va_list args;

    if (trace_enabled < 0) {
        const char *env = getenv("MPICH_NBRMA_TRACE");
        trace_enabled = env && !strcmp(env, "1");
    }
    if (!trace_enabled)
        return;
    fprintf(stderr, "[nbrma %d w%" PRIx64 " %.6f] ", ew->win->comm_ptr->rank,
            (uint64_t) MPIDIG_WIN(ew->win, win_id), MPI_Wtime());
    va_start(args, fmt);
    vfprintf(stderr, fmt, args);
    va_end(args);
    fputc('\n', stderr);
}

static MPIDI_NBRMA_epoch_win_t *epoch_win(MPIR_Win * win)
{
    MPIDI_NBRMA_win_state_t *state = MPIDI_NBRMA_WIN_STATE(win);
    return state && state->kind == MPIDI_NBRMA_WIN_EPOCHS ? (MPIDI_NBRMA_epoch_win_t *) state :
        NULL;
}

bool MPIDI_NBRMA_win_has_engine(MPIR_Win * win)
{
    return epoch_win(win) != NULL;
}

/* --- errors --------------------------------------------------------------- */

/* The MPI error for an engine return code. */
static int engine_errno(MPIDI_NBRMA_epoch_win_t * ew, int rc)
{
    int mpi_errno = MPI_SUCCESS;

    switch (rc) {
        case NBRMA_OK:
            return MPI_SUCCESS;
        case NBRMA_ERR_SYNC:
            MPIR_ERR_SET(mpi_errno, MPI_ERR_RMA_SYNC, "**rmasync");
            break;
        case NBRMA_ERR_ARG:
            MPIR_ERR_SET(mpi_errno, MPI_ERR_ARG, "**arg");
            break;
        case NBRMA_ERR_RANK:
            MPIR_ERR_SET(mpi_errno, MPI_ERR_RANK, "**rank");
            break;
        case NBRMA_ERR_NOMEM:
            MPIR_ERR_SET(mpi_errno, MPI_ERR_NO_MEM, "**nomem");
            break;
        default:
            if (rc >= NBRMA_ERR_TRANSPORT_BASE && ew->issue_errno != MPI_SUCCESS) {
                mpi_errno = ew->issue_errno;
                ew->issue_errno = MPI_SUCCESS;
            } else {
                MPIR_ERR_SET1(mpi_errno, MPI_ERR_INTERN, "**nbrmaengine", "**nbrmaengine %s",
                              nbrma_strerror(rc));
            }
    }
    return mpi_errno;
}

/* --- the transport the engine talks through ---------------------------------- */

/* The engine's code for an MPI error of the transport; the error itself is
 * kept for engine_errno. */
static int transport_rc(MPIDI_NBRMA_epoch_win_t * ew, int mpi_errno)
{
    if (mpi_errno == MPI_SUCCESS)
        return NBRMA_OK;
    ew->issue_errno = mpi_errno;
    return NBRMA_ERR_TRANSPORT_BASE;
}

/* Sends a protocol message of `bytes` bytes that begins with `msg` (more than
 * the header only for a whole lock epoch); the header is filled in here. */
static int send_ctrl_msg(MPIDI_NBRMA_epoch_win_t * ew, int peer, ctrl_msg_t * msg, size_t bytes,
                         ctrl_kind_t kind, uint64_t value, int lock_type)
{
    MPIR_Win *win = ew->win;
    int vci = MPIDI_WIN(win, am_vci);

    msg->win_id = MPIDIG_WIN(win, win_id);
    msg->value = value;
    msg->kind = kind;
    msg->lock_type = lock_type;
    msg->from = win->comm_ptr->rank;
    trace(ew, "send kind %d to %d value %" PRIu64 " (%zu bytes)", kind, peer, value, bytes);
    return transport_rc(ew, MPIDI_NM_am_send_hdr(peer, win->comm_ptr, ctrl_handler_id, msg, bytes,
                                                 vci, vci));
}

static int send_ctrl(MPIDI_NBRMA_epoch_win_t * ew, int peer, ctrl_kind_t kind, uint64_t value,
                     int lock_type)
{
    ctrl_msg_t msg;
    return send_ctrl_msg(ew, peer, &msg, sizeof(msg), kind, value, lock_type);
}

static int tp_send_grant(void *ctx, int peer, uint64_t granted)
{
    return send_ctrl(ctx, peer, CTRL_GRANT, granted, 0);
}

static int tp_send_done(void *ctx, int peer, uint64_t access_id)
{
    return send_ctrl(ctx, peer, CTRL_DONE, access_id, 0);
}

static int tp_send_lock_request(void *ctx, int peer, uint64_t access_id, int lock_type)
{
    return send_ctrl(ctx, peer, CTRL_LOCK_REQUEST, access_id, lock_type);
}

static int tp_send_lock_release(void *ctx, int peer, uint64_t access_id)
{
    return send_ctrl(ctx, peer, CTRL_LOCK_RELEASE, access_id, 0);
}

static int tp_send_fence_arrival(void *ctx, int peer, uint64_t fence_seq)
{
    return send_ctrl(ctx, peer, CTRL_FENCE_ARRIVAL, fence_seq, 0);
}

/* The descriptors of nbrma_rma_hooks.c leave the handles a call does not have
 * at 0. */
#define HELD_DATATYPE(dt) ((dt) != 0 && (dt) != MPI_DATATYPE_NULL)
#define HELD_OP(op) ((op) != 0 && (op) != MPI_OP_NULL)

/* A recorded operation may be issued after its call returned: it holds its
 * datatypes and reduction operation until then (hold), then lets them go. */
static void op_refs(const MPIDI_NBRMA_rma_op_t * op, bool hold)
{
    const MPI_Datatype types[] = { op->origin_datatype, op->result_datatype,
        op->target_datatype
    };

    for (int i = 0; i < 3; i++) {
        if (!HELD_DATATYPE(types[i]))
            continue;
        if (hold)
            MPIR_Datatype_add_ref_if_not_builtin(types[i]);
        else
            MPIR_Datatype_release_if_not_builtin(types[i]);
    }
    if (HELD_OP(op->op)) {
        if (hold)
            MPIR_Op_add_ref_if_not_builtin(op->op);
        else
            MPIR_Op_release_if_not_builtin(op->op);
    }
}

/* Room for one more element in a growing array of `n` elements (doubling,
 * `first_cap` at first); MPI error code. */
static int reserve_one(void **array, size_t n, size_t * cap, size_t elem_size, size_t first_cap)
{
    int mpi_errno = MPI_SUCCESS;

    if (n == *cap) {
        size_t new_cap = *cap ? 2 * *cap : first_cap;
        void *grown = MPL_realloc(*array, new_cap * elem_size, MPL_MEM_RMA);
        MPIR_ERR_CHKANDJUMP(grown == NULL, mpi_errno, MPI_ERR_NO_MEM, "**nomem");
        *array = grown;
        *cap = new_cap;
    }
  fn_fail:
    return mpi_errno;
}

/* Room for one more issued operation; MPI error code. */
static int reserve_issued(MPIDI_NBRMA_epoch_win_t * ew)
{
    return reserve_one((void **) &ew->issued, ew->n_issued, &ew->cap_issued,
                       sizeof(*ew->issued), 64);
}

/* Keeps the ticket of an issued operation (room reserved) until the
 * completion probe reports it, and makes sure the probe runs. */
static int track_issued(MPIDI_NBRMA_epoch_win_t * ew, nbrma_op_ticket ticket,
                        MPIR_Request * user_req)
{
    ew->issued[ew->n_issued].ticket = ticket;
    ew->issued[ew->n_issued].user_req = user_req;
    ew->n_issued++;
    if (!ew->polled) {
        ew->polled = true;
        ew->next_polled = polled_wins;
        polled_wins = ew;
    }
    return MPIDI_NBRMA_hook_activate(&probe_hook);
}

/* Performs a recorded operation with MPICH's own code and keeps its ticket
 * until the completion probe reports it. */
static int tp_issue_op(void *ctx, int target, void *record, nbrma_op_ticket ticket)
{
    MPIDI_NBRMA_epoch_win_t *ew = ctx;
    recorded_op_t *rec = record;
    int mpi_errno;

    MPIR_Assert(rec->op.target_rank == target);
    ew->issue_errno = reserve_issued(ew);
    if (ew->issue_errno != MPI_SUCCESS)
        goto fn_fail;
    if (rec->granted_flag) {
        /* a mark, nothing to perform; it completes through the probe as an
         * operation would, which costs an endpoint flush of my own endpoint */
        *rec->granted_flag = 1;
    } else {
        mpi_errno = MPIDI_NBRMA_rma_default(&rec->op, ew->win);
        if (mpi_errno != MPI_SUCCESS) {
            ew->issue_errno = mpi_errno;
            goto fn_fail;
        }
    }
    trace(ew, "issue %s to %d age %" PRIu64, rec->granted_flag ? "mark" : "op", target,
          ticket.age);
    mpi_errno = track_issued(ew, ticket, rec->user_req);
    if (mpi_errno != MPI_SUCCESS) {
        ew->issue_errno = mpi_errno;
        goto fn_fail;
    }
    op_refs(&rec->op, false);
    MPL_free(rec);
    return NBRMA_OK;

  fn_fail:
    if (rec->user_req) {
        rec->user_req->status.MPI_ERROR = ew->issue_errno;
        MPID_Request_complete(rec->user_req);
    }
    op_refs(&rec->op, false);
    MPL_free(rec);
    return NBRMA_ERR_TRANSPORT_BASE;
}

/* Cookies are requests of ours; the engine reports them once its state is
 * consistent. */
static void tp_request_complete(void *ctx, void *cookie, int status)
{
    MPIR_Request *req = cookie;

    trace(ctx, "request %p complete", cookie);
    if (status != NBRMA_OK)
        MPIR_ERR_SET1(req->status.MPI_ERROR, MPI_ERR_INTERN, "**nbrmaengine",
                      "**nbrmaengine %s", nbrma_strerror(status));
    MPID_Request_complete(req);
}

/* --- whole lock epochs ---------------------------------------------------- */

/* Whether a recorded operation can travel inside a whole epoch: a put or
 * accumulate without request of its own, of a contiguous predefined type the
 * same at both ends, with a predefined operation valid for it. Anything else
 * (gets, fetches, derived types, marks) keeps the usual lock protocol. */
static bool whole_epoch_takes(const recorded_op_t * rec)
{
    const MPIDI_NBRMA_rma_op_t *op = &rec->op;

    if (rec->granted_flag || rec->user_req || op->origin_count < 0)
        return false;
    if (op->kind != MPIDI_NBRMA_OP_PUT && op->kind != MPIDI_NBRMA_OP_ACCUMULATE)
        return false;
    if (!HANDLE_IS_BUILTIN(op->origin_datatype) || op->origin_datatype != op->target_datatype ||
        op->origin_count != op->target_count)
        return false;
    if (op->kind == MPIDI_NBRMA_OP_ACCUMULATE) {
        if (!HANDLE_IS_BUILTIN(op->op))
            return false;
        if (op->op != MPI_REPLACE && op->op != MPI_NO_OP &&
            (*MPIR_OP_HDL_TO_DTYPE_FN(op->op)) (op->origin_datatype) != MPI_SUCCESS)
            return false;
    }
    return true;
}

/* The layout of whole_epoch_t, for the packing and the applying side: where
 * the data begins, and how much an operation of `count` predefined `datatype`
 * carries. */
static size_t whole_epoch_data_offset(size_t n_ops)
{
    return WHOLE_EPOCH_ALIGN(sizeof(whole_epoch_t) + n_ops * sizeof(whole_epoch_op_t));
}

static size_t whole_epoch_op_bytes(int count, MPI_Datatype datatype)
{
    return (size_t) count * MPIR_Datatype_get_basic_size(datatype);
}

/* Packs the epoch's operations, data copied, or declines (*payload NULL). */
static int tp_pack_lock_epoch(void *ctx, int peer, int lock_type, void *const *records, size_t n,
                              void **payload)
{
    MPIDI_NBRMA_epoch_win_t *ew = ctx;
    size_t bytes = whole_epoch_data_offset(n);
    whole_epoch_t *whole;
    whole_epoch_op_t *desc;
    char *data;

    (void) lock_type;
    *payload = NULL;
    if (!ew->whole_lock_epochs)
        return NBRMA_OK;
    for (size_t i = 0; i < n; i++) {
        if (!whole_epoch_takes(records[i]))
            return NBRMA_OK;
        const recorded_op_t *rec = records[i];
        bytes += WHOLE_EPOCH_ALIGN(whole_epoch_op_bytes(rec->op.origin_count,
                                                        rec->op.origin_datatype));
        if (bytes > WHOLE_EPOCH_MAX_BYTES)
            return NBRMA_OK;
    }
    whole = MPL_malloc(bytes, MPL_MEM_RMA);
    if (whole == NULL)
        return NBRMA_OK;        /* the lock protocol needs no memory of this size */
    whole->n_ops = (uint32_t) n;
    whole->bytes = (uint32_t) bytes;
    desc = (whole_epoch_op_t *) (whole + 1);
    data = (char *) whole + whole_epoch_data_offset(n);
    for (size_t i = 0; i < n; i++) {
        recorded_op_t *rec = records[i];
        size_t len = whole_epoch_op_bytes(rec->op.origin_count, rec->op.origin_datatype);

        desc[i].kind = rec->op.kind;
        desc[i].datatype = rec->op.origin_datatype;
        desc[i].op = rec->op.kind == MPIDI_NBRMA_OP_ACCUMULATE ? rec->op.op : MPI_OP_NULL;
        desc[i].count = rec->op.origin_count;
        desc[i].target_disp = rec->op.target_disp;
        if (len > 0)
            memcpy(data, rec->op.origin_addr, len);
        data += WHOLE_EPOCH_ALIGN(len);
        op_refs(&rec->op, false);
        MPL_free(rec);
    }
    ew->whole_lock_epochs_sent++;
    trace(ew, "pack whole lock epoch to %d: %zu ops, %zu bytes", peer, n, bytes);
    *payload = whole;
    return NBRMA_OK;
}

static int tp_send_lock_epoch(void *ctx, int peer, uint64_t access_id, int lock_type,
                              void *payload)
{
    whole_epoch_t *whole = payload;
    int rc = send_ctrl_msg(ctx, peer, &whole->ctrl, whole->bytes, CTRL_LOCK_EPOCH, access_id,
                           lock_type);
    MPL_free(whole);
    return rc;
}

/* At the grant, under the lock: the operations as MPIDIG's target handlers
 * would perform them (same base, displacement unit and reduction). */
static int tp_apply_lock_epoch(void *ctx, int origin, void *payload)
{
    MPIDI_NBRMA_epoch_win_t *ew = ctx;
    MPIR_Win *win = ew->win;
    whole_epoch_t *whole = payload;
    const whole_epoch_op_t *desc = (const whole_epoch_op_t *) (whole + 1);
    char *data = (char *) whole + whole_epoch_data_offset(whole->n_ops);
    char *base = (char *) MPIDIG_win_base_at_target(win);
    int mpi_errno = MPI_SUCCESS;

    trace(ew, "apply whole lock epoch of %d: %u ops", origin, whole->n_ops);
    for (uint32_t i = 0; i < whole->n_ops && mpi_errno == MPI_SUCCESS; i++) {
        char *target = base + win->disp_unit * desc[i].target_disp;
        size_t len = whole_epoch_op_bytes(desc[i].count, desc[i].datatype);

        if (desc[i].kind == MPIDI_NBRMA_OP_PUT)
            memcpy(target, data, len);
        else
            mpi_errno = MPIDIG_compute_acc_op(data, desc[i].count, desc[i].datatype, target,
                                              desc[i].count, desc[i].datatype, desc[i].op,
                                              MPIDIG_ACC_SRCBUF_DEFAULT);
        data += WHOLE_EPOCH_ALIGN(len);
    }
    MPL_free(whole);
    return transport_rc(ew, mpi_errno);
}

static const nbrma_transport transport_template = {
    .send_grant = tp_send_grant,
    .send_done = tp_send_done,
    .send_lock_request = tp_send_lock_request,
    .send_lock_release = tp_send_lock_release,
    .send_fence_arrival = tp_send_fence_arrival,
    .issue_op = tp_issue_op,
    .request_complete = tp_request_complete,
    .pack_lock_epoch = tp_pack_lock_epoch,
    .send_lock_epoch = tp_send_lock_epoch,
    .apply_lock_epoch = tp_apply_lock_epoch,
};

/* --- calling the engine ---------------------------------------------------- */

static int deliver(MPIDI_NBRMA_epoch_win_t * ew, const ctrl_msg_t * msg, void *payload)
{
    switch (msg->kind) {
        case CTRL_LOCK_EPOCH:
            return nbrma_on_lock_epoch(ew->engine, msg->from, msg->value, msg->lock_type, payload);
        case CTRL_GRANT:
            return nbrma_on_grant(ew->engine, msg->from, msg->value);
        case CTRL_DONE:
            return nbrma_on_done(ew->engine, msg->from, msg->value);
        case CTRL_LOCK_REQUEST:
            return nbrma_on_lock_request(ew->engine, msg->from, msg->value, msg->lock_type);
        case CTRL_LOCK_RELEASE:
            return nbrma_on_lock_release(ew->engine, msg->from, msg->value);
        case CTRL_FENCE_ARRIVAL:
            return nbrma_on_fence_arrival(ew->engine, msg->from, msg->value);
    }
    return NBRMA_ERR_INTERN;
}

/* Every call into the engine goes through here: `call` runs with ew->busy
 * raised, its code lands in `rc`, and then the messages that arrived meanwhile
 * are delivered. */
#define ENGINE_CALL(ew, rc, call)                       \
    do {                                                \
        (ew)->busy++;                                   \
        (rc) = (call);                                  \
        (ew)->busy--;                                   \
        if ((rc) == NBRMA_OK && !(ew)->busy)            \
            (rc) = drain_inbox(ew);                     \
    } while (0)

static int drain_inbox(MPIDI_NBRMA_epoch_win_t * ew)
{
    int rc = NBRMA_OK;

    while (rc == NBRMA_OK && ew->n_inbox > 0) {
        inbox_msg_t in = ew->inbox[0];
        ew->n_inbox--;
        memmove(ew->inbox, ew->inbox + 1, ew->n_inbox * sizeof(*ew->inbox));
        ew->busy++;
        rc = deliver(ew, &in.msg, in.payload);
        ew->busy--;
    }
    return rc;
}

/* The active-message handler of the protocol messages. */
static int ctrl_target_msg_cb(void *am_hdr, void *data, MPI_Aint data_sz, uint32_t attr,
                              MPIR_Request ** req)
{
    int mpi_errno = MPI_SUCCESS;
    ctrl_msg_t msg;
    MPIR_Win *win;
    MPIDI_NBRMA_epoch_win_t *ew;
    void *payload = NULL;
    int rc;

    MPIR_FUNC_ENTER;

    (void) data;
    (void) data_sz;
    if (attr & MPIDIG_AM_ATTR__IS_ASYNC)
        *req = NULL;
    memcpy(&msg, am_hdr, sizeof(msg));
    win = (MPIR_Win *) MPIDIU_map_lookup(MPIDI_global.win_map, msg.win_id);
    /* A release may arrive after the target freed its window: MPI_Win_free only
     * waits for what the target itself is owed. Nothing is left to do then. */
    if (win == NULL || (ew = epoch_win(win)) == NULL)
        goto fn_exit;

    trace(ew, "recv kind %d from %d value %" PRIu64 "%s", msg.kind, msg.from, msg.value,
          ew->busy ? " (inbox)" : "");
    if (msg.kind == CTRL_LOCK_EPOCH) {
        /* the engine keeps the epoch until it grants the lock */
        uint32_t bytes = ((const whole_epoch_t *) am_hdr)->bytes;
        payload = MPL_malloc(bytes, MPL_MEM_RMA);
        MPIR_ERR_CHKANDJUMP(payload == NULL, mpi_errno, MPI_ERR_NO_MEM, "**nomem");
        memcpy(payload, am_hdr, bytes);
    }
    if (ew->busy) {
        mpi_errno = reserve_one((void **) &ew->inbox, ew->n_inbox, &ew->cap_inbox,
                                sizeof(*ew->inbox), 16);
        MPIR_ERR_CHECK(mpi_errno);
        ew->inbox[ew->n_inbox].msg = msg;
        ew->inbox[ew->n_inbox].payload = payload;
        ew->n_inbox++;
        payload = NULL;
        goto fn_exit;
    }
    /* from here on the engine's, also if it reports an error */
    ENGINE_CALL(ew, rc, deliver(ew, &msg, payload));
    payload = NULL;
    mpi_errno = engine_errno(ew, rc);
    MPIR_ERR_CHECK(mpi_errno);

  fn_exit:
    MPIR_FUNC_EXIT;
    return mpi_errno;
  fn_fail:
    MPL_free(payload);
    goto fn_exit;
}

/* --- completion probes ----------------------------------------------------- */

static void unlist_polled(MPIDI_NBRMA_epoch_win_t * ew)
{
    for (MPIDI_NBRMA_epoch_win_t ** link = &polled_wins; *link; link = &(*link)->next_polled) {
        if (*link == ew) {
            *link = ew->next_polled;
            break;
        }
    }
    ew->polled = false;
}

static int start_probe(MPIDI_NBRMA_epoch_win_t * ew)
{
    int mpi_errno = MPI_SUCCESS;
    MPIR_Win *win = ew->win;
    int nprocs = win->comm_ptr->local_size;

    ew->probing = true;
    ew->n_probed = ew->n_issued;
    if (MPIDI_UCX_WIN(win).info_table == NULL)
        goto fn_exit;   /* no UCX RDMA on this window: only active messages */
    memset(ew->probe_target, 0, nprocs);
    for (size_t i = 0; i < ew->n_probed; i++)
        ew->probe_target[ew->issued[i].ticket.target] = 1;
    for (int rank = 0; rank < nprocs; rank++) {
        if (!ew->probe_target[rank])
            continue;
        mpi_errno = MPIDI_NBRMA_ucx_flush_start(win, rank, rank, ew->vni, ew->probe_reqs,
                                                &ew->n_probe_reqs);
        MPIR_ERR_CHECK(mpi_errno);
    }

  fn_exit:
    return mpi_errno;
  fn_fail:
    goto fn_exit;
}

static double monotonic_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

/* While the target answers, keep the UCX worker going until the probe's
 * endpoint flushes finish, within limits. Where UCX emulates RDMA with active
 * messages (user memory on this project's machines: see
 * osu_extensions/README.md), a large put moves one fragment per target
 * acknowledgement, that is a few fragments per progress call: a 1 MB put
 * needed about 15 calls of MPI_Test 50 us apart, so an epoch's completion
 * waited for the application's 15th test. Going on while acknowledgements keep
 * coming completes it in one. The spin stops when nothing arrived for
 * PROBE_IDLE_US (the target is busy outside MPI: spinning would not help) or
 * after PROBE_SPIN_US in all, which bounds what a test call can cost. With
 * real RDMA the flushes finish in hardware and the first check succeeds. */
#define PROBE_IDLE_US 5.0
#define PROBE_SPIN_US 200.0

static bool finish_endpoint_flushes(MPIDI_NBRMA_epoch_win_t * ew, int *mpi_errno_out)
{
    double start = monotonic_us(), last_event = start, now = start;
    ucp_worker_h worker = MPIDI_UCX_global.ctx[ew->vni].worker;

    while (now - last_event < PROBE_IDLE_US && now - start < PROBE_SPIN_US) {
        unsigned events;

        MPID_THREAD_CS_ENTER(VCI, MPIDI_VCI(ew->vni).lock);
        events = ucp_worker_progress(worker);
        MPID_THREAD_CS_EXIT(VCI, MPIDI_VCI(ew->vni).lock);
        if (MPIDI_NBRMA_ucx_flush_test(ew->probe_reqs, &ew->n_probe_reqs, ew->vni,
                                       mpi_errno_out))
            return true;
        now = monotonic_us();
        if (events)
            last_event = now;
    }
    return false;
}

/* Reports the probed operations once they are complete. */
static int poll_probe(MPIDI_NBRMA_epoch_win_t * ew, int *made_progress)
{
    int mpi_errno = MPI_SUCCESS;
    size_t n_done;
    int rc = NBRMA_OK;

    if (ew->busy)
        goto fn_exit;
    if (!ew->probing) {
        if (ew->n_issued == 0)
            goto fn_exit;
        mpi_errno = start_probe(ew);
        MPIR_ERR_CHECK(mpi_errno);
        trace(ew, "probe starts: %zu operations, %d endpoint flushes pending", ew->n_probed,
              ew->n_probe_reqs);
    }
    if (!MPIDI_NBRMA_ucx_flush_test(ew->probe_reqs, &ew->n_probe_reqs, ew->vni, &mpi_errno) &&
        !finish_endpoint_flushes(ew, &mpi_errno))
        goto fn_exit;
    MPIR_ERR_CHECK(mpi_errno);
    if (!MPIDIG_win_check_all_targets_remote_completed(ew->win))
        goto fn_exit;

    /* Reporting can activate later epochs, whose operations are issued at once:
     * they are appended (the array may move, the first n_done entries stay),
     * and no new probe starts until the probed ones are taken out below. */
    n_done = ew->n_probed;
    trace(ew, "probe reports %zu operations", n_done);
    if (made_progress)
        *made_progress = 1;
    for (size_t i = 0; i < n_done; i++) {
        issued_op_t op = ew->issued[i];
        if (op.user_req)
            MPID_Request_complete(op.user_req);
        if (rc == NBRMA_OK)
            ENGINE_CALL(ew, rc, nbrma_op_completed(ew->engine, op.ticket));
    }
    ew->n_issued -= n_done;
    memmove(ew->issued, ew->issued + n_done, ew->n_issued * sizeof(*ew->issued));
    ew->probing = false;
    ew->n_probed = 0;
    mpi_errno = engine_errno(ew, rc);
    MPIR_ERR_CHECK(mpi_errno);

  fn_exit:
    return mpi_errno;
  fn_fail:
    goto fn_exit;
}

/* The progress hook: runs the probes of every window with unreported
 * operations, and goes quiet when there is none. */
static int poll_probes(int *made_progress)
{
    int mpi_errno = MPI_SUCCESS;
    MPIDI_NBRMA_epoch_win_t *ew = polled_wins;

    while (ew) {
        MPIDI_NBRMA_epoch_win_t *next = ew->next_polled;
        mpi_errno = poll_probe(ew, made_progress);
        MPIR_ERR_CHECK(mpi_errno);
        if (ew->n_issued == 0 && !ew->probing)
            unlist_polled(ew);
        ew = next;
    }
    if (polled_wins == NULL)
        mpi_errno = MPIDI_NBRMA_hook_deactivate(&probe_hook);

  fn_exit:
    return mpi_errno;
  fn_fail:
    goto fn_exit;
}

/* --- requests -------------------------------------------------------------- */

static int new_request(MPIR_Request ** req_out)
{
    int mpi_errno = MPI_SUCCESS;
    /* two references: one the completion drops, one for the caller */
    MPIR_Request *req = MPIR_Request_create_from_pool_safe(MPIR_REQUEST_KIND__RMA, 0, 2);

    MPIR_ERR_CHKANDJUMP(req == NULL, mpi_errno, MPIX_ERR_NOREQ, "**nomemreq");
    *req_out = req;
  fn_fail:
    return mpi_errno;
}

/* A request the engine never took: both references go. */
static void drop_request(MPIR_Request * req)
{
    MPIR_Request_free(req);
    MPIR_Request_free(req);
}

/* The blocking calls: wait for the request of the nonblocking call, with the
 * whole progress engine (progress hooks included). */
static int wait_request(MPIR_Request * req)
{
    int mpi_errno = MPIR_Wait_impl(req, MPI_STATUS_IGNORE);
    if (mpi_errno == MPI_SUCCESS)
        mpi_errno = req->status.MPI_ERROR;
    MPIR_Request_free(req);
    return mpi_errno;
}

/* --- the synchronization calls -------------------------------------------- */

typedef struct {
    MPIDI_NBRMA_sync_kind_t kind;
    int rank, lock_type, assert;
    int *ranks, nranks;         /* post, start: window ranks of the group */
} engine_call_t;

/* Whether `kind` is one of the four flushes; if so, the engine's target
 * (`rank` or NBRMA_ALL_RANKS) and whether only local completion is asked. */
static bool flush_args(MPIDI_NBRMA_sync_kind_t kind, int rank, int *target, int *local_only)
{
    switch (kind) {
        case MPIDI_NBRMA_SYNC_FLUSH:
        case MPIDI_NBRMA_SYNC_FLUSH_LOCAL:
            *target = rank;
            break;
        case MPIDI_NBRMA_SYNC_FLUSH_ALL:
        case MPIDI_NBRMA_SYNC_FLUSH_LOCAL_ALL:
            *target = NBRMA_ALL_RANKS;
            break;
        default:
            return false;
    }
    *local_only = kind == MPIDI_NBRMA_SYNC_FLUSH_LOCAL || kind == MPIDI_NBRMA_SYNC_FLUSH_LOCAL_ALL;
    return true;
}

static int call_engine(MPIDI_NBRMA_epoch_win_t * ew, const engine_call_t * c, int *flag,
                       MPIR_Request * req)
{
    nbrma_engine *e = ew->engine;
    int rc;

    trace(ew, "sync kind %d rank %d request %p", c->kind, c->rank, (void *) req);

    switch (c->kind) {
        case MPIDI_NBRMA_SYNC_FENCE:
            ENGINE_CALL(ew, rc, nbrma_ifence(e, c->assert, req));
            break;
        case MPIDI_NBRMA_SYNC_POST:
            ENGINE_CALL(ew, rc, nbrma_ipost(e, c->ranks, c->nranks, c->assert, req));
            break;
        case MPIDI_NBRMA_SYNC_START:
            ENGINE_CALL(ew, rc, nbrma_istart(e, c->ranks, c->nranks, c->assert, req));
            break;
        case MPIDI_NBRMA_SYNC_COMPLETE:
            ENGINE_CALL(ew, rc, nbrma_icomplete(e, req));
            break;
        case MPIDI_NBRMA_SYNC_WAIT:
            ENGINE_CALL(ew, rc, nbrma_iwait(e, req));
            break;
        case MPIDI_NBRMA_SYNC_TEST:
            ENGINE_CALL(ew, rc, nbrma_test(e, flag));
            break;
        case MPIDI_NBRMA_SYNC_LOCK:
            ENGINE_CALL(ew, rc, nbrma_ilock(e, c->lock_type, c->rank, c->assert, req));
            break;
        case MPIDI_NBRMA_SYNC_UNLOCK:
            ENGINE_CALL(ew, rc, nbrma_iunlock(e, c->rank, req));
            break;
        case MPIDI_NBRMA_SYNC_LOCK_ALL:
            ENGINE_CALL(ew, rc, nbrma_ilock_all(e, c->assert, req));
            break;
        case MPIDI_NBRMA_SYNC_UNLOCK_ALL:
            ENGINE_CALL(ew, rc, nbrma_iunlock_all(e, req));
            break;
        case MPIDI_NBRMA_SYNC_FLUSH:
        case MPIDI_NBRMA_SYNC_FLUSH_LOCAL:
        case MPIDI_NBRMA_SYNC_FLUSH_ALL:
        case MPIDI_NBRMA_SYNC_FLUSH_LOCAL_ALL:{
                int target, local_only;
                flush_args(c->kind, c->rank, &target, &local_only);
                ENGINE_CALL(ew, rc, nbrma_iflush(e, target, local_only, req));
                break;
            }
        default:
            rc = NBRMA_ERR_INTERN;
    }
    return engine_errno(ew, rc);
}

/* The window ranks of `group`; MPI_ERR_GROUP if it is not a subset of the
 * window's group. */
static int group_ranks(MPIR_Win * win, MPIR_Group * group, int **ranks_out)
{
    int mpi_errno = MPI_SUCCESS;
    int *ranks = MPL_malloc(MPL_MAX(group->size, 1) * sizeof(int), MPL_MEM_RMA);

    MPIR_ERR_CHKANDJUMP(ranks == NULL, mpi_errno, MPI_ERR_NO_MEM, "**nomem");
    mpi_errno = MPIDIG_fill_ranks_in_win_grp(win, group, ranks);
    MPIR_ERR_CHECK(mpi_errno);
    for (int i = 0; i < group->size; i++)
        MPIR_ERR_CHKANDJUMP(ranks[i] == MPI_UNDEFINED, mpi_errno, MPI_ERR_GROUP,
                            "**nbrmagroup");
    *ranks_out = ranks;

  fn_exit:
    return mpi_errno;
  fn_fail:
    MPL_free(ranks);
    goto fn_exit;
}

/* Starts a synchronization call; *request_out is its request, or NULL when the
 * call has none (test) or nothing to do (MPI_PROC_NULL). */
static int start_sync(MPIDI_NBRMA_epoch_win_t * ew, const MPIDI_NBRMA_sync_call_t * call,
                      MPIR_Request ** request_out)
{
    int mpi_errno = MPI_SUCCESS;
    MPIR_Request *req = NULL;
    engine_call_t c = {
        .kind = call->kind, .rank = call->rank, .lock_type = call->lock_type,
        .assert = call->assert
    };

    *request_out = NULL;
    if (call->kind == MPIDI_NBRMA_SYNC_POST || call->kind == MPIDI_NBRMA_SYNC_START) {
        mpi_errno = group_ranks(ew->win, call->group, &c.ranks);
        MPIR_ERR_CHECK(mpi_errno);
        c.nranks = call->group->size;
    }
    if (call->kind == MPIDI_NBRMA_SYNC_TEST) {
        /* as MPIDIG's MPI_Win_test: let messages in first */
        mpi_errno = MPID_Progress_test(NULL);
        MPIR_ERR_CHECK(mpi_errno);
        mpi_errno = call_engine(ew, &c, call->flag, NULL);
        goto fn_exit;
    }
    mpi_errno = new_request(&req);
    MPIR_ERR_CHECK(mpi_errno);
    mpi_errno = call_engine(ew, &c, NULL, req);
    if (mpi_errno != MPI_SUCCESS) {
        drop_request(req);
        goto fn_fail;
    }
    *request_out = req;

  fn_exit:
    MPL_free(c.ranks);
    return mpi_errno;
  fn_fail:
    goto fn_exit;
}

static bool is_proc_null_call(const MPIDI_NBRMA_sync_call_t * call)
{
    switch (call->kind) {
        case MPIDI_NBRMA_SYNC_LOCK:
        case MPIDI_NBRMA_SYNC_UNLOCK:
        case MPIDI_NBRMA_SYNC_FLUSH:
        case MPIDI_NBRMA_SYNC_FLUSH_LOCAL:
            return call->rank == MPI_PROC_NULL;
        default:
            return false;
    }
}

/* MPI_Win_lock on my own rank returns holding the lock, so that the process
 * may load and store its window memory directly (MPI-3.1 11.5.3). The lock
 * epoch issues its operations once granted: a mark recorded in it tells when. */
static int wait_for_self_lock(MPIDI_NBRMA_epoch_win_t * ew, int self)
{
    int mpi_errno = MPI_SUCCESS;
    int granted = 0;
    recorded_op_t *mark = MPL_calloc(1, sizeof(*mark), MPL_MEM_RMA);
    int rc;

    MPIR_ERR_CHKANDJUMP(mark == NULL, mpi_errno, MPI_ERR_NO_MEM, "**nomem");
    mark->op.target_rank = self;
    mark->granted_flag = &granted;
    ENGINE_CALL(ew, rc, nbrma_op_record(ew->engine, self, mark));
    if (rc == NBRMA_ERR_SYNC || rc == NBRMA_ERR_RANK || rc == NBRMA_ERR_ARG)
        MPL_free(mark);         /* not taken */
    mpi_errno = engine_errno(ew, rc);
    MPIR_ERR_CHECK(mpi_errno);
    while (!granted) {
        mpi_errno = MPID_Progress_test(NULL);
        MPIR_ERR_CHECK(mpi_errno);
    }
  fn_fail:
    return mpi_errno;
}

/* Completes every issued operation the way MPICH's own blocking flush does:
 * flush their endpoints and spin on the UCX worker (poll_probe does both),
 * with no request and no progress hook in between. Active-message operations
 * (MPIDIG) need the whole progress engine for their acknowledgements.
 * Reporting may activate later epochs and issue their operations; they are
 * completed too. */
static int complete_issued_ops(MPIDI_NBRMA_epoch_win_t * ew)
{
    int mpi_errno = MPI_SUCCESS;

    while (ew->n_issued > 0) {
        mpi_errno = poll_probe(ew, NULL);
        MPIR_ERR_CHECK(mpi_errno);
        if (ew->n_issued > 0 && ew->n_probe_reqs == 0) {
            mpi_errno = MPID_Progress_test(NULL);
            MPIR_ERR_CHECK(mpi_errno);
        }
    }

  fn_exit:
    return mpi_errno;
  fn_fail:
    goto fn_exit;
}

/* The blocking flushes toward `target` (a rank or NBRMA_ALL_RANKS): most of
 * the time every operation they wait for was issued directly, and completing
 * those is all there is to do. *done is set when the engine holds nothing
 * older (no operation of a lock epoch still waiting for its grant, say);
 * otherwise the flush goes through a request. */
static int flush_at_once(MPIDI_NBRMA_epoch_win_t * ew, int target, int local_only, bool * done)
{
    int mpi_errno = MPI_SUCCESS;
    int ready = 0;

    *done = false;
    /* Completing issued operations is harmless even when the flush turns out
     * to be wrong use (no passive epoch, a bad rank): the engine reports that
     * afterwards, and each operation still completes once. */
    mpi_errno = complete_issued_ops(ew);
    MPIR_ERR_CHECK(mpi_errno);
    mpi_errno = engine_errno(ew, nbrma_flush_ready(ew->engine, target, local_only, &ready));
    MPIR_ERR_CHECK(mpi_errno);
    *done = ready;

  fn_exit:
    return mpi_errno;
  fn_fail:
    goto fn_exit;
}

/* The blocking calls of MPI_Win_* on an engine window. */
int MPIDI_NBRMA_epochs_sync(const MPIDI_NBRMA_sync_call_t * call, MPIR_Win * win)
{
    int mpi_errno = MPI_SUCCESS;
    MPIDI_NBRMA_epoch_win_t *ew = epoch_win(win);
    MPIR_Request *req;
    int flush_target, flush_local;

    MPIR_FUNC_ENTER;

    if (call->kind == MPIDI_NBRMA_SYNC_SYNC) {
        mpi_errno = MPIDI_NBRMA_sync_default(call, win);
        goto fn_exit;
    }
    if (is_proc_null_call(call))
        goto fn_exit;
    if (flush_args(call->kind, call->rank, &flush_target, &flush_local)) {
        bool done;
        mpi_errno = flush_at_once(ew, flush_target, flush_local, &done);
        MPIR_ERR_CHECK(mpi_errno);
        if (done)
            goto fn_exit;
    }
    mpi_errno = start_sync(ew, call, &req);
    MPIR_ERR_CHECK(mpi_errno);
    if (req && !MPIR_Request_is_complete(req) && ew->n_issued > 0) {
        /* the call waits for issued operations most of the time: flush their
         * endpoints now rather than at the first progress hook */
        mpi_errno = poll_probe(ew, NULL);
        if (mpi_errno != MPI_SUCCESS) {
            MPIR_Request_free(req);     /* mine; the engine keeps its own */
            goto fn_fail;
        }
    }
    if (req)
        mpi_errno = wait_request(req);
    MPIR_ERR_CHECK(mpi_errno);
    if (call->kind == MPIDI_NBRMA_SYNC_LOCK && call->rank == win->comm_ptr->rank &&
        !(call->assert & MPI_MODE_NOCHECK))
        mpi_errno = wait_for_self_lock(ew, call->rank);

  fn_exit:
    MPIR_FUNC_EXIT;
    return mpi_errno;
  fn_fail:
    goto fn_exit;
}

/* The MPIR_Win_i<call>_impl functions: the nonblocking calls. */
static int start_nonblocking(MPIR_Win * win, const MPIDI_NBRMA_sync_call_t * call,
                             MPIR_Request ** request)
{
    int mpi_errno = MPI_SUCCESS;
    MPIDI_NBRMA_epoch_win_t *ew = epoch_win(win);

    MPIR_FUNC_ENTER;

    MPIR_ERR_CHKANDJUMP(ew == NULL, mpi_errno, MPI_ERR_RMA_SYNC, "**nbrmanoengine");
    if (is_proc_null_call(call)) {
        mpi_errno = MPIDI_NBRMA_complete_request(request);
        goto fn_exit;
    }
    mpi_errno = start_sync(ew, call, request);
    MPIR_ERR_CHECK(mpi_errno);

  fn_exit:
    MPIR_FUNC_EXIT;
    return mpi_errno;
  fn_fail:
    goto fn_exit;
}

#define NBRMA_START(win, request, ...) \
    start_nonblocking(win, &(MPIDI_NBRMA_sync_call_t) { __VA_ARGS__ }, request)

int MPIR_Win_ifence_impl(int assert, MPIR_Win * win, MPIR_Request ** request)
{
    return NBRMA_START(win, request, .kind = MPIDI_NBRMA_SYNC_FENCE, .assert = assert);
}

int MPIR_Win_ipost_impl(MPIR_Group * group, int assert, MPIR_Win * win, MPIR_Request ** request)
{
    return NBRMA_START(win, request, .kind = MPIDI_NBRMA_SYNC_POST, .group = group,
                       .assert = assert);
}

int MPIR_Win_istart_impl(MPIR_Group * group, int assert, MPIR_Win * win, MPIR_Request ** request)
{
    return NBRMA_START(win, request, .kind = MPIDI_NBRMA_SYNC_START, .group = group,
                       .assert = assert);
}

int MPIR_Win_icomplete_impl(MPIR_Win * win, MPIR_Request ** request)
{
    return NBRMA_START(win, request, .kind = MPIDI_NBRMA_SYNC_COMPLETE);
}

int MPIR_Win_iwait_impl(MPIR_Win * win, MPIR_Request ** request)
{
    return NBRMA_START(win, request, .kind = MPIDI_NBRMA_SYNC_WAIT);
}

int MPIR_Win_ilock_impl(int lock_type, int rank, int assert, MPIR_Win * win,
                        MPIR_Request ** request)
{
    return NBRMA_START(win, request, .kind = MPIDI_NBRMA_SYNC_LOCK, .lock_type = lock_type,
                       .rank = rank, .assert = assert);
}

int MPIR_Win_iunlock_impl(int rank, MPIR_Win * win, MPIR_Request ** request)
{
    return NBRMA_START(win, request, .kind = MPIDI_NBRMA_SYNC_UNLOCK, .rank = rank);
}

int MPIR_Win_ilock_all_impl(int assert, MPIR_Win * win, MPIR_Request ** request)
{
    return NBRMA_START(win, request, .kind = MPIDI_NBRMA_SYNC_LOCK_ALL, .assert = assert);
}

int MPIR_Win_iunlock_all_impl(MPIR_Win * win, MPIR_Request ** request)
{
    return NBRMA_START(win, request, .kind = MPIDI_NBRMA_SYNC_UNLOCK_ALL);
}

int MPIDI_NBRMA_epochs_iflush(MPIR_Win * win, int target, bool local, MPIR_Request ** request)
{
    MPIDI_NBRMA_sync_call_t call = { .rank = target };

    if (target == NBRMA_ALL_RANKS)
        call.kind = local ? MPIDI_NBRMA_SYNC_FLUSH_LOCAL_ALL : MPIDI_NBRMA_SYNC_FLUSH_ALL;
    else
        call.kind = local ? MPIDI_NBRMA_SYNC_FLUSH_LOCAL : MPIDI_NBRMA_SYNC_FLUSH;
    return start_nonblocking(win, &call, request);
}

/* --- RMA operations ---------------------------------------------------------- */

/* Performs an operation the engine counted as issued (nbrma_op_issue_direct).
 * If MPICH cannot perform it, the engine is told it completed, so that its
 * epoch does not wait for it forever, and the call returns the error. */
static int issue_direct(MPIDI_NBRMA_epoch_win_t * ew, const MPIDI_NBRMA_rma_op_t * op,
                        nbrma_op_ticket ticket)
{
    int mpi_errno = reserve_issued(ew);
    int rc;

    if (mpi_errno == MPI_SUCCESS)
        mpi_errno = MPIDI_NBRMA_rma_default(op, ew->win);
    if (mpi_errno != MPI_SUCCESS) {
        ENGINE_CALL(ew, rc, nbrma_op_completed(ew->engine, ticket));
        return mpi_errno;
    }
    trace(ew, "issue op to %d age %" PRIu64 " (direct)", op->target_rank, ticket.age);
    return track_issued(ew, ticket, NULL);
}

int MPIDI_NBRMA_epochs_rma(const MPIDI_NBRMA_rma_op_t * op, MPIR_Win * win)
{
    int mpi_errno = MPI_SUCCESS;
    MPIDI_NBRMA_epoch_win_t *ew = epoch_win(win);
    recorded_op_t *rec = NULL;
    int rc;

    MPIR_FUNC_ENTER;

    if (op->target_rank == MPI_PROC_NULL) {
        /* the bindings return early for MPI_PROC_NULL; kept for direct callers */
        if (op->request)
            mpi_errno = MPIDI_NBRMA_complete_request(op->request);
        goto fn_exit;
    }
    if (op->request == NULL && !ew->busy) {
        /* most operations: the epoch is active and granted, so the operation
         * goes at once, without a record */
        nbrma_op_ticket ticket;
        int issued;
        ENGINE_CALL(ew, rc, nbrma_op_issue_direct(ew->engine, op->target_rank, &ticket, &issued));
        mpi_errno = engine_errno(ew, rc);
        MPIR_ERR_CHECK(mpi_errno);
        if (issued) {
            mpi_errno = issue_direct(ew, op, ticket);
            goto fn_exit;
        }
    }
    rec = MPL_calloc(1, sizeof(*rec), MPL_MEM_RMA);
    MPIR_ERR_CHKANDJUMP(rec == NULL, mpi_errno, MPI_ERR_NO_MEM, "**nomem");
    rec->op = *op;
    rec->op.request = NULL;
    if (op->request) {
        /* completes with the operation's remote completion, which implies the
         * local completion the request stands for */
        mpi_errno = new_request(&rec->user_req);
        MPIR_ERR_CHECK(mpi_errno);
    }
    op_refs(&rec->op, true);

    ENGINE_CALL(ew, rc, nbrma_op_record(ew->engine, op->target_rank, rec));
    if (rc == NBRMA_ERR_SYNC || rc == NBRMA_ERR_RANK || rc == NBRMA_ERR_ARG) {
        /* the engine did not take it */
        op_refs(&rec->op, false);
        if (rec->user_req)
            drop_request(rec->user_req);
        MPL_free(rec);
        rec = NULL;
        mpi_errno = engine_errno(ew, rc);
        goto fn_fail;
    }
    if (op->request)
        *op->request = rec->user_req;   /* rec may be gone: user_req is ours */
    mpi_errno = engine_errno(ew, rc);
    MPIR_ERR_CHECK(mpi_errno);

  fn_exit:
    MPIR_FUNC_EXIT;
    return mpi_errno;
  fn_fail:
    goto fn_exit;
}

/* --- window life ------------------------------------------------------------- */

static int register_handlers(void)
{
    int mpi_errno = MPI_SUCCESS;

    if (ctrl_handler_id < 0) {
        /* Every process registers all of the component's handlers, in the same
         * order, at its first window of any kind, so that the dynamic ids are the
         * same everywhere whichever windows a process creates later. */
        ctrl_handler_id = MPIDIG_am_reg_cb_dynamic(NULL, ctrl_target_msg_cb);
        MPIR_ERR_CHKANDJUMP(ctrl_handler_id < 0, mpi_errno, MPI_ERR_INTERN, "**nbrmaamid");
        MPIDI_NBRMA_rkey_handler_id = MPIDIG_am_reg_cb_dynamic(NULL, MPIDI_NBRMA_rkey_msg_cb);
        MPIR_ERR_CHKANDJUMP(MPIDI_NBRMA_rkey_handler_id < 0, mpi_errno, MPI_ERR_INTERN,
                            "**nbrmaamid");
    }
  fn_fail:
    return mpi_errno;
}

static bool info_bool(MPIR_Info * info, const char *key, bool *value)
{
    char buf[MPI_MAX_INFO_VAL + 1];
    int flag = 0;

    if (info == NULL || MPIR_Info_get_impl(info, key, MPI_MAX_INFO_VAL, buf, &flag) != MPI_SUCCESS
        || !flag)
        return false;
    if (!strcmp(buf, "true") || !strcmp(buf, "1"))
        *value = true;
    else if (!strcmp(buf, "false") || !strcmp(buf, "0"))
        *value = false;
    else
        return false;
    return true;
}

/* The window's settings that may change with MPI_Win_set_info: the reorder
 * flags and whether closed lock epochs travel whole. */
static int apply_window_info(MPIDI_NBRMA_epoch_win_t * ew, MPIR_Info * info)
{
    unsigned flags = ew->reorder_flags;

    info_bool(info, WHOLE_EPOCH_INFO_KEY, &ew->whole_lock_epochs);
    for (size_t i = 0; i < sizeof(reorder_keys) / sizeof(reorder_keys[0]); i++) {
        bool on;
        if (info_bool(info, reorder_keys[i].key, &on))
            flags = on ? (flags | reorder_keys[i].flag) : (flags & ~reorder_keys[i].flag);
    }
    if (flags != ew->reorder_flags) {
        int rc = nbrma_set_reorder_flags(ew->engine, flags);
        if (rc != NBRMA_OK)
            return engine_errno(ew, rc);
        ew->reorder_flags = flags;
    }
    return MPI_SUCCESS;
}

int MPIDI_NBRMA_win_init_hook(MPIR_Win * win, MPIR_Info * info)
{
    int mpi_errno = MPI_SUCCESS;
    MPIDI_NBRMA_epoch_win_t *ew = NULL;
    nbrma_transport transport = transport_template;
    bool enabled = true;
    const char *env = getenv("MPICH_NBRMA_EPOCHS");
    int nprocs = win->comm_ptr->local_size;
    int rc;

    MPIR_FUNC_ENTER;

    mpi_errno = register_handlers();
    MPIR_ERR_CHECK(mpi_errno);
    if (win->create_flavor == MPI_WIN_FLAVOR_DYNAMIC) {
        /* MPICH's own synchronization, RDMA through the rkey cache */
        mpi_errno = MPIDI_NBRMA_dynamic_win_init(win, info);
        goto fn_exit;
    }
    if (env && !strcmp(env, "0"))
        enabled = false;
    info_bool(info, EPOCHS_INFO_KEY, &enabled);
    if (!enabled)
        goto fn_exit;

    ew = MPL_calloc(1, sizeof(*ew), MPL_MEM_RMA);
    MPIR_ERR_CHKANDJUMP(ew == NULL, mpi_errno, MPI_ERR_NO_MEM, "**nomem");
    ew->state.kind = MPIDI_NBRMA_WIN_EPOCHS;
    ew->win = win;
    ew->vni = MPIDI_UCX_get_win_vni(win);
    env = getenv("MPICH_NBRMA_WHOLE_LOCK_EPOCHS");
    ew->whole_lock_epochs = !(env && !strcmp(env, "0"));
    ew->probe_reqs = MPL_malloc(nprocs * sizeof(void *), MPL_MEM_RMA);
    ew->probe_target = MPL_malloc(nprocs, MPL_MEM_RMA);
    MPIR_ERR_CHKANDJUMP(!ew->probe_reqs || !ew->probe_target, mpi_errno, MPI_ERR_NO_MEM,
                        "**nomem");
    transport.ctx = ew;
    rc = nbrma_engine_create(win->comm_ptr->rank, nprocs, &transport, &ew->engine);
    mpi_errno = engine_errno(ew, rc);
    MPIR_ERR_CHECK(mpi_errno);
    mpi_errno = apply_window_info(ew, info);
    MPIR_ERR_CHECK(mpi_errno);

    /* MPIDIG's per-operation checks see a lock_all epoch for the window's
     * whole life; the engine decides when an operation may go. */
    MPIDIG_WIN(win, sync).access_epoch_type = MPIDIG_EPOTYPE_LOCK_ALL;
    MPIDIG_WIN(win, nbrma) = ew;

  fn_exit:
    MPIR_FUNC_EXIT;
    return mpi_errno;
  fn_fail:
    if (ew) {
        nbrma_engine_free(ew->engine);
        MPL_free(ew->probe_reqs);
        MPL_free(ew->probe_target);
        MPL_free(ew);
    }
    goto fn_exit;
}

/* MPI_Win_free: epochs still open are an error (MPI_ERR_RMA_SYNC, the window
 * stays usable); epochs the application closed but the engine has not
 * completed yet (nonblocking closes not waited for) are driven to completion
 * first. The engine then keeps serving its peers until every process of the
 * window got this far: a peer may still need a lock grant from this process
 * to end its own epochs (a lock request that arrives after the engine is gone
 * would be lost, and the peer would never reach the free). Then MPICH frees
 * the window as usual. */
int MPIDI_NBRMA_epochs_win_free(MPIR_Win * win)
{
    int mpi_errno = MPI_SUCCESS;
    MPIDI_NBRMA_epoch_win_t *ew = epoch_win(win);
    MPIR_Request *barrier = NULL;

    MPIR_FUNC_ENTER;

    MPIR_ERR_CHKANDJUMP(nbrma_has_open_epochs(ew->engine), mpi_errno, MPI_ERR_RMA_SYNC,
                        "**nbrmafreeopen");
    /* the whole progress engine, hooks included, so that probes run too */
    while (nbrma_has_pending_epochs(ew->engine) || ew->n_issued > 0 || ew->probing) {
        mpi_errno = MPID_Progress_test(NULL);
        MPIR_ERR_CHECK(mpi_errno);
    }
    /* Every peer's epochs are complete once it enters this barrier; releases
     * still in flight may arrive after the free and are dropped. */
    mpi_errno = MPIR_Ibarrier_impl(win->comm_ptr, &barrier);
    MPIR_ERR_CHECK(mpi_errno);
    if (barrier) {      /* NULL: complete already */
        mpi_errno = wait_request(barrier);
        MPIR_ERR_CHECK(mpi_errno);
    }

    if (ew->polled)
        unlist_polled(ew);
    nbrma_engine_free(ew->engine);
    MPL_free(ew->issued);
    MPL_free(ew->inbox);
    MPL_free(ew->probe_reqs);
    MPL_free(ew->probe_target);
    MPL_free(ew);
    MPIDIG_WIN(win, nbrma) = NULL;
    MPIDIG_WIN(win, sync).access_epoch_type = MPIDIG_EPOTYPE_NONE;

  fn_exit:
    MPIR_FUNC_EXIT;
    return mpi_errno;
  fn_fail:
    goto fn_exit;
}

/* --- info -------------------------------------------------------------------- */

int MPIDI_NBRMA_epochs_set_info(MPIR_Win * win, MPIR_Info * info)
{
    int mpi_errno = MPIDI_NM_mpi_win_set_info(win, info);
    if (mpi_errno == MPI_SUCCESS)
        mpi_errno = apply_window_info(epoch_win(win), info);
    return mpi_errno;
}

/* What is in force: MPICH's hints, that the engine drives the epochs, the
 * four reorder flags, whether closed lock epochs travel whole and how many
 * did. */
int MPIDI_NBRMA_epochs_get_info(MPIR_Win * win, MPIR_Info ** info_p_p)
{
    int mpi_errno = MPIDI_NM_mpi_win_get_info(win, info_p_p);
    MPIDI_NBRMA_epoch_win_t *ew = epoch_win(win);

    MPIR_ERR_CHECK(mpi_errno);
    mpi_errno = MPIR_Info_set_impl(*info_p_p, EPOCHS_INFO_KEY, "true");
    MPIR_ERR_CHECK(mpi_errno);
    for (size_t i = 0; i < sizeof(reorder_keys) / sizeof(reorder_keys[0]); i++) {
        mpi_errno = MPIR_Info_set_impl(*info_p_p, reorder_keys[i].key,
                                       (ew->reorder_flags & reorder_keys[i].flag) ? "true" :
                                       "false");
        MPIR_ERR_CHECK(mpi_errno);
    }
    mpi_errno = MPIR_Info_set_impl(*info_p_p, WHOLE_EPOCH_INFO_KEY,
                                   ew->whole_lock_epochs ? "true" : "false");
    MPIR_ERR_CHECK(mpi_errno);
    {
        char count[24];
        snprintf(count, sizeof(count), "%" PRIu64, ew->whole_lock_epochs_sent);
        mpi_errno = MPIR_Info_set_impl(*info_p_p, WHOLE_EPOCH_COUNT_INFO_KEY, count);
        MPIR_ERR_CHECK(mpi_errno);
    }
  fn_fail:
    return mpi_errno;
}
