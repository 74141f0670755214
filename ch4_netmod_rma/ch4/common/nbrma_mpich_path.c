/*
 * mpich-nbrma: MPICH's own code for the component's operation and call
 * descriptors (ch4_rma.h, ch4_win.h without the patch-set's hooks), the
 * ledger's requests on windows whose epochs MPICH keeps, and their table.
 */

#include "mpidimpl.h"
#include "ucx_impl.h"
#include "nbrma_mpich_path.h"
#include "nbrma_ledger_adapter.h"
#include "nbrma_request.h"

#ifndef MPIDI_CH4_DIRECT_NETMOD
#error "mpich-nbrma supports the CH4 UCX netmod without a shared-memory module only"
#endif

/* Mirrors 4.0.2's netmod/ucx/ucx_rma.h (MPIDI_NM_mpi_put/_get, _do_put/_get):
 * a put goes by RDMA to a target with a key when the target datatype is
 * contiguous, a get when both are; accumulates always go as active messages. */
bool MPIDI_NBRMA_mpich_may_use_am(MPIR_Win * win, const MPIDI_NBRMA_rma_op_t * op)
{
    MPIDI_winattr_t winattr = MPIDI_WIN(win, winattr);
    bool origin_contig, target_contig;

    if (op->kind != MPIDI_NBRMA_OP_PUT && op->kind != MPIDI_NBRMA_OP_GET)
        return true;
    if (op->target_rank == win->comm_ptr->rank)
        return false;   /* a local copy */
    if (!MPIDI_UCX_is_reachable_target(op->target_rank, win, winattr) ||
        MPIR_GPU_query_pointer_is_dev(op->origin_addr))
        return true;
    MPIDI_Datatype_check_contig(op->origin_datatype, origin_contig);
    MPIDI_Datatype_check_contig(op->target_datatype, target_contig);
    return !target_contig || (op->kind == MPIDI_NBRMA_OP_GET && !origin_contig);
}

int MPIDI_NBRMA_mpich_rma(const MPIDI_NBRMA_rma_op_t * op, MPIR_Win * win)
{
    MPIR_Request **req = op->request;

    switch (op->kind) {
        case MPIDI_NBRMA_OP_PUT:
            return req ? MPIDI_rput(op->origin_addr, op->origin_count, op->origin_datatype,
                                    op->target_rank, op->target_disp, op->target_count,
                                    op->target_datatype, win, req)
                : MPIDI_put(op->origin_addr, op->origin_count, op->origin_datatype,
                            op->target_rank, op->target_disp, op->target_count,
                            op->target_datatype, win);
        case MPIDI_NBRMA_OP_GET:
            return req ? MPIDI_rget(op->result_addr, op->result_count, op->result_datatype,
                                    op->target_rank, op->target_disp, op->target_count,
                                    op->target_datatype, win, req)
                : MPIDI_get(op->result_addr, op->result_count, op->result_datatype,
                            op->target_rank, op->target_disp, op->target_count,
                            op->target_datatype, win);
        case MPIDI_NBRMA_OP_ACCUMULATE:
            return req ? MPIDI_raccumulate(op->origin_addr, op->origin_count, op->origin_datatype,
                                           op->target_rank, op->target_disp, op->target_count,
                                           op->target_datatype, op->op, win, req)
                : MPIDI_accumulate(op->origin_addr, op->origin_count, op->origin_datatype,
                                   op->target_rank, op->target_disp, op->target_count,
                                   op->target_datatype, op->op, win);
        case MPIDI_NBRMA_OP_GET_ACCUMULATE:
            return req ? MPIDI_rget_accumulate(op->origin_addr, op->origin_count,
                                               op->origin_datatype, op->result_addr,
                                               op->result_count, op->result_datatype,
                                               op->target_rank, op->target_disp,
                                               op->target_count, op->target_datatype, op->op,
                                               win, req)
                : MPIDI_get_accumulate(op->origin_addr, op->origin_count, op->origin_datatype,
                                       op->result_addr, op->result_count, op->result_datatype,
                                       op->target_rank, op->target_disp, op->target_count,
                                       op->target_datatype, op->op, win);
        case MPIDI_NBRMA_OP_FETCH_AND_OP:
            return MPIDI_fetch_and_op(op->origin_addr, op->result_addr, op->target_datatype,
                                      op->target_rank, op->target_disp, op->op, win);
        case MPIDI_NBRMA_OP_COMPARE_AND_SWAP:
            return MPIDI_compare_and_swap(op->origin_addr, op->compare_addr, op->result_addr,
                                          op->target_datatype, op->target_rank, op->target_disp,
                                          win);
    }
    MPIR_Assert(0);
    return MPI_ERR_INTERN;
}

static int mpich_flush(const MPIDI_NBRMA_sync_call_t * call, MPIR_Win * win)
{
    if (call->rank == NBRMA_ALL_RANKS)
        return call->local ? MPIDI_NM_mpi_win_flush_local_all(win)
            : MPIDI_NM_mpi_win_flush_all(win);
    return call->local ? MPIDI_NM_mpi_win_flush_local(call->rank, win, NULL)
        : MPIDI_NM_mpi_win_flush(call->rank, win, NULL);
}

int MPIDI_NBRMA_mpich_sync(const MPIDI_NBRMA_sync_call_t * call, MPIR_Win * win)
{
    MPIDI_workq_vci_progress();

    switch (call->kind) {
        case NBRMA_SYNC_FENCE:
            return MPIDI_NM_mpi_win_fence(call->assert, win);
        case NBRMA_SYNC_POST:
            return MPIDI_NM_mpi_win_post(call->group, call->assert, win);
        case NBRMA_SYNC_START:
            return MPIDI_NM_mpi_win_start(call->group, call->assert, win);
        case NBRMA_SYNC_COMPLETE:
            return MPIDI_NM_mpi_win_complete(win);
        case NBRMA_SYNC_WAIT:
            return MPIDI_NM_mpi_win_wait(win);
        case NBRMA_SYNC_TEST:
            return MPIDI_NM_mpi_win_test(win, call->flag);
        case NBRMA_SYNC_LOCK:
            return MPIDI_NM_mpi_win_lock(call->lock_type, call->rank, call->assert, win, NULL);
        case NBRMA_SYNC_UNLOCK:
            return MPIDI_NM_mpi_win_unlock(call->rank, win, NULL);
        case NBRMA_SYNC_LOCK_ALL:
            return MPIDI_NM_mpi_win_lock_all(call->assert, win);
        case NBRMA_SYNC_UNLOCK_ALL:
            return MPIDI_NM_mpi_win_unlock_all(win);
        case NBRMA_SYNC_FLUSH:
            return mpich_flush(call, win);
        case NBRMA_SYNC_SYNC:
            return MPIDI_NM_mpi_win_sync(win);
        case NBRMA_SYNC_KINDS:
            break;
    }
    MPIR_Assert(0);
    return MPI_ERR_INTERN;
}

/* --- requests the completion ledger completes (mpich_path.h) ---------------- */

/* *request = req, completed by the ledger once `wait` is; a gathering error
 * (gathered_errno) cancels the wait. On error req is discarded. */
static int ledger_request(MPIDI_NBRMA_ledger_wait_t * wait, int gathered_errno,
                          MPIR_Request * req, MPIR_Request ** request)
{
    int mpi_errno = gathered_errno;

    if (mpi_errno == MPI_SUCCESS)
        mpi_errno = MPIDI_NBRMA_ledger_complete_request(wait, req);
    else
        MPIDI_NBRMA_ledger_cancel(wait);
    MPIR_ERR_CHECK(mpi_errno);
    *request = req;

  fn_exit:
    return mpi_errno;
  fn_fail:
    MPIDI_NBRMA_request_discard(req);
    goto fn_exit;
}

/* A flush to one target is valid inside lock_all, or inside a lock epoch that
 * holds a lock on that target. */
static int check_passive_epoch(MPIR_Win * win, int target)
{
    int mpi_errno = MPI_SUCCESS;

    MPIDIG_EPOCH_CHECK_PASSIVE(win, mpi_errno, goto fn_fail);
    if (target != NBRMA_ALL_RANKS &&
        MPIDIG_WIN(win, sync).access_epoch_type == MPIDIG_EPOTYPE_LOCK) {
        MPIDIG_win_target_t *t = MPIDIG_win_target_find(win, target);
        MPIR_ERR_CHKANDJUMP(t == NULL, mpi_errno, MPI_ERR_RMA_SYNC, "**rmasync");
        MPIDIG_EPOCH_CHECK_TARGET_LOCK(t, mpi_errno, goto fn_fail);
    }

  fn_exit:
    return mpi_errno;
  fn_fail:
    goto fn_exit;
}

int MPIDI_NBRMA_flush_request_start(const MPIDI_NBRMA_sync_call_t * call, MPIR_Win * win,
                                    const bool * also_flush, MPIR_Request ** request)
{
    int mpi_errno = MPI_SUCCESS;
    int first = call->rank, last = call->rank;
    MPIR_Request *req;
    MPIDI_NBRMA_ledger_wait_t wait;

    MPIR_FUNC_ENTER;
    /* nonblocking epoch calls need the engine, off on this window */
    MPIR_ERR_CHKANDJUMP1(call->kind != NBRMA_SYNC_FLUSH, mpi_errno, MPI_ERR_RMA_SYNC,
                         "**nbrmaepochsoff", "**nbrmaepochsoff %s",
                         nbrma_sync_nonblocking_name(call->kind));
    mpi_errno = check_passive_epoch(win, call->rank);
    MPIR_ERR_CHECK(mpi_errno);
    mpi_errno = MPIDI_NBRMA_request_create(&req);
    MPIR_ERR_CHECK(mpi_errno);
    /* the flush waits for (1) and (2) of mpich_path.h toward call->rank */
    if (call->rank == NBRMA_ALL_RANKS) {
        first = 0;
        last = win->comm_ptr->local_size - 1;
    }
    MPIDI_NBRMA_ledger_wait_init(&wait, win);
    for (int r = first; r <= last && mpi_errno == MPI_SUCCESS; r++)
        mpi_errno = MPIDI_NBRMA_ledger_need_endpoint(&wait, r, also_flush && also_flush[r]);
    if (mpi_errno == MPI_SUCCESS)
        mpi_errno = MPIDI_NBRMA_ledger_need_am(&wait, call->rank, call->local);
    mpi_errno = ledger_request(&wait, mpi_errno, req, request);

  fn_exit:
    MPIR_FUNC_EXIT;
    return mpi_errno;
  fn_fail:
    goto fn_exit;
}

int MPIDI_NBRMA_remote_request_wrap(MPIR_Win * win, int target, const MPIDI_NBRMA_rma_op_t * op)
{
    int mpi_errno = MPI_SUCCESS;
    MPIR_Request *req;
    MPIDI_NBRMA_ledger_wait_t wait;

    if (!op->remote_completion)
        goto fn_exit;
    mpi_errno = MPIDI_NBRMA_request_create(&req);
    MPIR_ERR_CHECK(mpi_errno);
    /* the operation's own request and a flush of its target's endpoint */
    MPIDI_NBRMA_ledger_wait_init(&wait, win);
    mpi_errno = MPIDI_NBRMA_ledger_need_endpoint(&wait, target, true);
    if (mpi_errno == MPI_SUCCESS)
        mpi_errno = MPIDI_NBRMA_ledger_need_request(&wait, *op->request);
    mpi_errno = ledger_request(&wait, mpi_errno, req, op->request);

  fn_exit:
    return mpi_errno;
  fn_fail:
    goto fn_exit;
}

/* --- the table of windows without component state ---------------------------
 * Windows whose epochs MPICH keeps (the engine off): MPICH's code, the
 * nonblocking flushes above, and remote-completing requests. */

static int mpich_win_rma(const MPIDI_NBRMA_rma_op_t * op, MPIR_Win * win)
{
    int mpi_errno = MPIDI_NBRMA_mpich_rma(op, win);

    if (mpi_errno == MPI_SUCCESS)
        mpi_errno = MPIDI_NBRMA_remote_request_wrap(win, op->target_rank, op);
    return mpi_errno;
}

/* No nonblocking epoch calls: MPICH keeps the epochs. */
static int mpich_win_start_sync(const MPIDI_NBRMA_sync_call_t * call, MPIR_Win * win,
                                MPIR_Request ** request)
{
    return MPIDI_NBRMA_flush_request_start(call, win, NULL, request);
}

/* MPICH frees the window; the component has nothing of it */
static int mpich_win_free(MPIR_Win ** win_ptr, int *handled)
{
    (void) win_ptr;
    *handled = 0;
    return MPI_SUCCESS;
}

const MPIDI_NBRMA_win_ops_t MPIDI_NBRMA_mpich_win_ops = {
    .rma = mpich_win_rma,
    .sync = MPIDI_NBRMA_mpich_sync,
    .start_sync = mpich_win_start_sync,
    .get_info = MPIDI_NM_mpi_win_get_info,
    .set_info = MPIDI_NM_mpi_win_set_info,
    .free = mpich_win_free,
};
