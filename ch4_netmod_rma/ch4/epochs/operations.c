/*
 * mpich-nbrma: the RMA operations of engine windows.
 *
 * Most find their epoch active and granted and go at once on their route
 * (op_route.c), counted by the engine (the first toward a target) or by
 * direct_ops.c. The others are recorded, holding their datatype and op
 * references, until the engine issues them (transport.issue_op).
 */

#include "mpidimpl.h"
#include "ucx_impl.h"
#include "epoch_win.h"
#include "nbrma_mpich_path.h"
#include "nbrma_request.h"
#include "native_atomics.h"
#include "narrow_atomics.h"
#include "notify.h"
#include <inttypes.h>

/* The descriptors leave the handles a call does not have at 0. */
#define HELD_DATATYPE(dt) ((dt) != 0 && (dt) != MPI_DATATYPE_NULL)
#define HELD_OP(op) ((op) != 0 && (op) != MPI_OP_NULL)

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

void MPIDI_NBRMA_recorded_op_free(MPIDI_NBRMA_recorded_op_t * rec)
{
    op_refs(&rec->op, false);
    MPL_free(rec);
}

/* A copy the kernel refuses takes the next route. An ordered operation the
 * application issues first waits (ordered_ops.c); a replayed one was let go
 * already (held_records.c). */
static int perform(MPIDI_NBRMA_epoch_win_t * ew, const MPIDI_NBRMA_rma_op_t * op, bool may_wait,
                   nbrma_route * taken)
{
    int mpi_errno = MPI_SUCCESS;
    bool issued = true;
    /* the route lives in *taken from the start: a copy at the end would load
     * 8 bytes that two 4-byte stores just wrote, which the processor cannot
     * forward, and stall the hot path until the store buffer drained */
    nbrma_route *route = taken;

    *route = MPIDI_NBRMA_route(ew, op, may_wait, true);

    if (may_wait && MPIDI_NBRMA_ordered(ew, op)) {
        /* the wait progresses: on a dynamic window a key that arrived or went
         * meanwhile changes the way, which is then waited for again */
        nbrma_way waited;
        do {
            waited = route->travels;
            mpi_errno = MPIDI_NBRMA_ordered_wait(ew, op, waited);
            MPIR_ERR_CHECK(mpi_errno);
            *route = MPIDI_NBRMA_route(ew, op, may_wait, true);
        } while (route->travels != waited);
    }
    if (route->path == NBRMA_PATH_CROSS_MEMORY && !MPIDI_NBRMA_cross_memory_rma(ew, op))
        *route = MPIDI_NBRMA_route(ew, op, may_wait, false);
    switch (route->path) {
        case NBRMA_PATH_CROSS_MEMORY:
            break;      /* copied */
        case NBRMA_PATH_MAPPED_ATOMICS:
            mpi_errno = MPIDI_NBRMA_mapped_atomics(ew, op, &issued);
            break;
        case NBRMA_PATH_UCX_ATOMICS:
            mpi_errno = MPIDI_NBRMA_native_atomics_issue(op, ew->win, &issued);
            break;
        case NBRMA_PATH_NARROW_ATOMICS:
            mpi_errno = MPIDI_NBRMA_narrow_atomics_issue(op, ew->win, &issued);
            break;
        case NBRMA_PATH_MPICH_MESSAGE:
            mpi_errno = op->kind == MPIDI_NBRMA_OP_PUT
                ? MPIDIG_mpi_put(op->origin_addr, op->origin_count, op->origin_datatype,
                                 op->target_rank, op->target_disp, op->target_count,
                                 op->target_datatype, ew->win)
                : MPIDIG_mpi_get(op->result_addr, op->result_count, op->result_datatype,
                                 op->target_rank, op->target_disp, op->target_count,
                                 op->target_datatype, ew->win);
            break;
        default:
            mpi_errno = ew->mpich_path_rma(op, ew->win);
            break;
    }
    MPIR_ERR_CHECK(mpi_errno);
    /* the issuers test what the route's facts said: they cannot decline */
    MPIR_ERR_CHKANDJUMP(!issued, mpi_errno, MPI_ERR_INTERN, "**intern");
    if (MPIDI_NBRMA_needs_target_cpu(ew, *route, op->target_rank))
        MPIDI_NBRMA_mailbox_cpu_wanted(ew->mailbox, op->target_rank);
    MPIDI_NBRMA_ordered_note(ew, op->target_rank, route->leaves);
  fn_exit:
    return mpi_errno;
  fn_fail:
    goto fn_exit;
}

/* MPIX_Put_notify & co.: rule R7 may send a put as MPIDIG's active message
 * with the increment inside (notify.h); else perform(). Apart from perform()
 * so that the hot path of MPI_Put + MPI_Win_flush pays nothing for it. */
static int perform_notified(MPIDI_NBRMA_epoch_win_t * ew, const MPIDI_NBRMA_rma_op_t * op,
                            nbrma_route * taken)
{
    int mpi_errno = MPI_SUCCESS;
    nbrma_route route = MPIDI_NBRMA_route(ew, op, true, true);

    if (!MPIDI_NBRMA_notice_in_message(op->notify_behind, op, &route))
        return perform(ew, op, true, taken);
    if (MPIDI_NBRMA_ordered(ew, op)) {
        mpi_errno = MPIDI_NBRMA_ordered_wait(ew, op, route.travels);
        MPIR_ERR_CHECK(mpi_errno);
    }
    mpi_errno = MPIDI_NBRMA_notify_in_message(op->notify_behind, op);
    MPIR_ERR_CHECK(mpi_errno);
    MPIDI_NBRMA_mailbox_cpu_wanted(ew->mailbox, op->target_rank);
    *taken = route;
    MPIDI_NBRMA_ordered_note(ew, op->target_rank, route.leaves);
  fn_exit:
    return mpi_errno;
  fn_fail:
    goto fn_exit;
}

/* Right after `op` was performed: a put or get that UCX completed in its call
 * (else MPICH's netmod marked it MPIDI_UCX_WIN_SYNC_FLUSH_LOCAL; gets by patch
 * 0040), no active message toward the target waiting. Anything else is
 * locally complete with its remote completion. */
static bool locally_complete(MPIDI_NBRMA_epoch_win_t * ew, const MPIDI_NBRMA_rma_op_t * op)
{
    MPIR_Win *win = ew->win;
    MPIDI_UCX_win_target_sync_t *sync;

    /* a dynamic window's rkey cache RDMA: nothing here tracks its local completion */
    if ((op->kind != MPIDI_NBRMA_OP_PUT && op->kind != MPIDI_NBRMA_OP_GET) || ew->own_rdma_for)
        return false;
    sync = MPIDI_UCX_WIN(win).target_sync ? &MPIDI_UCX_WIN(win).target_sync[op->target_rank]
        : NULL;
    if (sync && sync->need_sync == MPIDI_UCX_WIN_SYNC_FLUSH_LOCAL) {
        /* ours replace MPICH's flushes, which would clear the mark: left, every
         * later put or get to the target would count as in flight. Set as for
         * a put complete at once, so that the next one tells its own state. */
        sync->need_sync = MPIDI_UCX_WIN_SYNC_FLUSH;
        return false;
    }
    return MPIDI_NBRMA_am_ops_complete(win, op->target_rank, true);
}

/* Rule R5 (the done follows on the same channel: message_send.c). Grant-cache
 * batches always wait for their remote completion. */
static bool complete_at_local(MPIDI_NBRMA_epoch_win_t * ew, nbrma_route route,
                              nbrma_op_ticket ticket, const MPIR_Request * user_req)
{
    bool to_self = ticket.target == ew->win->comm_ptr->rank;

    /* the engine's answer is a search: asked only where it can matter */
    return route.leaves == NBRMA_WAY_UNFENCED &&
        nbrma_complete_at_local(route, to_self, nbrma_op_epoch_ends_by_notice(ew->engine, ticket),
                                user_req != NULL);
}

int MPIDI_NBRMA_drop_recorded(MPIDI_NBRMA_recorded_op_t * rec, int mpi_errno)
{
    if (rec->user_req) {
        rec->user_req->status.MPI_ERROR = mpi_errno;
        MPID_Request_complete(rec->user_req);
    }
    MPIDI_NBRMA_recorded_op_free(rec);
    return mpi_errno;
}

int MPIDI_NBRMA_issue_recorded(MPIDI_NBRMA_epoch_win_t * ew, MPIDI_NBRMA_recorded_op_t * rec,
                               nbrma_op_ticket ticket)
{
    int mpi_errno = MPIDI_NBRMA_sweep_reserve(ew);

    MPIR_ERR_CHECK(mpi_errno);
    bool local_done = true;
    nbrma_route route = { NBRMA_PATH_CROSS_MEMORY, NBRMA_WAY_NONE, NBRMA_WAY_NONE };
    if (rec->granted_flag) {
        /* a mark: completes through the sweep as an operation would */
        *rec->granted_flag = 1;
    } else {
        mpi_errno = perform(ew, &rec->op, false, &route);
        MPIR_ERR_CHECK(mpi_errno);
        local_done = locally_complete(ew, &rec->op);
    }
    EPOCH_TRACE(ew, "issue %s to %d age %" PRIu64, rec->granted_flag ? "mark" : "op",
                ticket.target, ticket.age);
    /* inside an engine call: the local report waits for the next sweep */
    mpi_errno = MPIDI_NBRMA_sweep_track(ew, ticket, rec->user_req, local_done,
                                        MPIDI_NBRMA_needs_endpoint_flush(ew, route, ticket.target,
                                                                         local_done),
                                        complete_at_local(ew, route, ticket, rec->user_req));
    MPIR_ERR_CHECK(mpi_errno);

    MPIDI_NBRMA_recorded_op_free(rec);
  fn_exit:
    return mpi_errno;
  fn_fail:
    MPIDI_NBRMA_drop_recorded(rec, mpi_errno);
    goto fn_exit;
}

/* One the engine counts: with a request, or the first of a PSCW access epoch
 * (rule G2). If it fails, the engine is told it completed, so its epoch does
 * not wait forever. One performed at return (R10) is reported at once,
 * sparing a sweep. Its request (none where R6's increment followed at once)
 * is made after it, which counts for its epoch even if that fails. Not
 * inlined: that slowed the grant cache's path, the hot one of MPI_Put +
 * MPI_Win_flush. */
static __attribute__ ((noinline))
int issue_direct(MPIDI_NBRMA_epoch_win_t * ew, const MPIDI_NBRMA_rma_op_t * op,
                 nbrma_op_ticket ticket)
{
    int mpi_errno = MPIDI_NBRMA_sweep_reserve(ew), request_errno = MPI_SUCCESS;
    int rc;
    nbrma_route route;
    MPIR_Request *user_req = NULL;
    bool local_done;

    if (mpi_errno == MPI_SUCCESS)
        mpi_errno = op->notify_behind ? perform_notified(ew, op, &route)
            : perform(ew, op, true, &route);
    if (mpi_errno != MPI_SUCCESS) {
        ENGINE_CALL(ew, rc, nbrma_op_local_completed(ew->engine, ticket));
        ENGINE_CALL(ew, rc, nbrma_op_completed(ew->engine, ticket));
        return mpi_errno;
    }
    MPIDI_NBRMA_thread_scope_note_performed(ew, op, route.path);
    /* R10: nothing for the sweep to report (a request or a notification
     * takes the sweep's path, which completes them) */
    if (!op->request && !op->notify_behind && nbrma_performed_at_return(route)) {
        ENGINE_CALL(ew, rc, nbrma_op_performed(ew->engine, ticket));
        return MPIDI_NBRMA_engine_errno(ew, rc);
    }
    if (op->request &&
        !(op->notify_behind &&
          MPIDI_NBRMA_notify_send_behind(op->notify_behind, op->target_rank, route)))
        request_errno = MPIDI_NBRMA_request_create(&user_req);
    if (op->request)
        *op->request = user_req;
    EPOCH_TRACE(ew, "issue op to %d age %" PRIu64 " (direct)", op->target_rank, ticket.age);
    /* its local completion reaches the engine with the next sweep round or
     * local flush: not an engine call per operation */
    local_done = locally_complete(ew, op);
    mpi_errno = MPIDI_NBRMA_sweep_track(ew, ticket, user_req, local_done,
                                        MPIDI_NBRMA_needs_endpoint_flush(ew, route, op->target_rank,
                                                                         local_done),
                                        complete_at_local(ew, route, ticket, user_req));
    return request_errno != MPI_SUCCESS ? request_errno : mpi_errno;
}

/* Its request completes with the remote completion, which implies the local
 * one: MPI_Rput's request is MPIX_Rrput's here. */
static int record(MPIDI_NBRMA_epoch_win_t * ew, const MPIDI_NBRMA_rma_op_t * op)
{
    int mpi_errno = MPI_SUCCESS;
    MPIDI_NBRMA_recorded_op_t *rec = MPL_calloc(1, sizeof(*rec), MPL_MEM_RMA);
    MPIR_Request *user_req = NULL;
    int rc;

    MPIR_ERR_CHKANDJUMP(rec == NULL, mpi_errno, MPI_ERR_NO_MEM, "**nomem");
    rec->op = *op;
    rec->ordered = MPIDI_NBRMA_ordered(ew, op);
    rec->op.request = NULL;
    rec->op.dup_keys = NULL;    /* checked already; the duplicate may go before the replay */
    rec->op.notify_behind = NULL;       /* on the caller's stack; the request notifies */
    if (op->request) {
        mpi_errno = MPIDI_NBRMA_request_create(&user_req);
        MPIR_ERR_CHECK(mpi_errno);
        rec->user_req = user_req;
    }
    op_refs(&rec->op, true);

    ENGINE_CALL(ew, rc, nbrma_op_record(ew->engine, op->target_rank, rec));
    if (nbrma_op_record_refused(rc)) {
        MPIDI_NBRMA_recorded_op_free(rec);
        rec = NULL;
        if (user_req)
            MPIDI_NBRMA_request_discard(user_req);
        mpi_errno = MPIDI_NBRMA_engine_errno(ew, rc);
        goto fn_exit;
    }
    /* rec may be gone already (issued at once); user_req is ours */
    if (op->request)
        *op->request = user_req;
    MPIDI_NBRMA_thread_scope_note_recorded(ew, op->target_rank);
    mpi_errno = MPIDI_NBRMA_engine_errno(ew, rc);
    /* its grant lets it go, with the agent too */
    if (mpi_errno == MPI_SUCCESS)
        mpi_errno = MPIDI_NBRMA_mailboxes_own_work_begins();

  fn_exit:
    return mpi_errno;
  fn_fail:
    MPL_free(rec);
    goto fn_exit;
}

/* `uncounted_ok` (no request): rule G2, uncounted where its epoch allows
 * (ticket->count 0). */
static int ask_engine(MPIDI_NBRMA_epoch_win_t * ew, int rank, bool uncounted_ok,
                      nbrma_op_ticket * ticket, int *issued)
{
    int rc;

    if (uncounted_ok)
        ENGINE_CALL(ew, rc, nbrma_op_issue_first(ew->engine, rank, ticket, issued));
    else
        ENGINE_CALL(ew, rc, nbrma_op_issue_direct(ew->engine, rank, 1, ticket, issued));
    return MPIDI_NBRMA_engine_errno(ew, rc);
}

/* Asks again if a grant arrived in my mailbox since the last progress call:
 * operations issued without other MPI calls then go directly instead of all
 * being recorded and replayed at the close. A load when nothing arrived. */
static int ask_to_issue(MPIDI_NBRMA_epoch_win_t * ew, int rank, bool uncounted_ok,
                        nbrma_op_ticket * ticket, int *issued)
{
    int arrived = 0;
    int mpi_errno = ask_engine(ew, rank, uncounted_ok, ticket, issued);

    if (mpi_errno == MPI_SUCCESS && !*issued)
        mpi_errno = MPIDI_NBRMA_mailbox_poll(ew->mailbox, &arrived, false);
    if (mpi_errno == MPI_SUCCESS && arrived)
        mpi_errno = ask_engine(ew, rank, uncounted_ok, ticket, issued);
    return mpi_errno;
}

/* The grant cache's path, the hot one of MPI_Put + MPI_Win_flush: counted in
 * the cache, or nowhere if performed at return (R10). */
MPL_STATIC_INLINE_PREFIX int issue_uncounted(MPIDI_NBRMA_epoch_win_t * ew,
                                             const MPIDI_NBRMA_rma_op_t * op)
{
    nbrma_route route;
    bool local_done;
    int mpi_errno = perform(ew, op, true, &route);

    if (mpi_errno != MPI_SUCCESS)
        return mpi_errno;
    MPIDI_NBRMA_thread_scope_note_performed(ew, op, route.path);
    /* R10: nothing for a flush to wait for */
    if (nbrma_performed_at_return(route))
        return MPI_SUCCESS;
    local_done = locally_complete(ew, op);
    return MPIDI_NBRMA_direct_count(ew, op->target_rank, local_done,
                                    MPIDI_NBRMA_needs_endpoint_flush(ew, route, op->target_rank,
                                                                     local_done));
}

int MPIDI_NBRMA_epochs_rma(const MPIDI_NBRMA_rma_op_t * op, MPIR_Win * win)
{
    int mpi_errno = MPI_SUCCESS;
    MPIDI_NBRMA_epoch_win_t *ew = MPIDI_NBRMA_epoch_win(win);

    MPIR_FUNC_ENTER;

    MPIR_ERR_CHKANDJUMP((op->dup_keys ? op->dup_keys->assert_intrinsic
                         : MPIDI_NBRMA_assert_intrinsic(ew))
                        && op->kind != MPIDI_NBRMA_OP_PUT &&
                        op->kind != MPIDI_NBRMA_OP_GET &&
                        !MPIDI_NBRMA_op_intrinsic(ew, op->kind, op->target_datatype, op->op),
                        mpi_errno, MPI_ERR_OP, "**nbrmanotintrinsic");
    if (op->target_rank == MPI_PROC_NULL) {
        /* the bindings return early for MPI_PROC_NULL; kept for direct callers */
        if (op->request)
            mpi_errno = MPIDI_NBRMA_request_create_complete(op->request);
        goto fn_exit;
    }
    /* the grant cache counts operations, not requests */
    if (op->request == NULL && !ew->call_depth &&
        nbrma_grant_cache_may_issue(ew->grants, op->target_rank)) {
        mpi_errno = issue_uncounted(ew, op);
        goto fn_exit;
    }
    if (!ew->call_depth) {
        nbrma_op_ticket ticket;
        int issued;

        mpi_errno = ask_to_issue(ew, op->target_rank, op->request == NULL, &ticket, &issued);
        MPIR_ERR_CHECK(mpi_errno);
        if (issued) {
            MPIDI_NBRMA_direct_granted(ew, op->target_rank);    /* active, granted */
            mpi_errno = ticket.count == 0 ? issue_uncounted(ew, op) : issue_direct(ew, op, ticket);
            goto fn_exit;
        }
    }
    mpi_errno = record(ew, op);

  fn_exit:
    MPIR_FUNC_EXIT;
    return mpi_errno;
  fn_fail:
    goto fn_exit;
}

bool MPIDI_NBRMA_epochs_granted_now(MPIR_Win * win, int target)
{
    MPIDI_NBRMA_epoch_win_t *ew = MPIDI_NBRMA_epoch_win(win);

    return !ew->call_depth && nbrma_grant_cache_may_issue(ew->grants, target);
}

int MPIDI_NBRMA_epochs_count_rdma(MPIR_Win * win, int target)
{
    return MPIDI_NBRMA_direct_count(MPIDI_NBRMA_epoch_win(win), target, false, true);
}
