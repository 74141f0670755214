/*
 * mpich-nbrma: the entry points of the hooks in ch4_rma.h and ch4_win.h.
 *
 * Each MPID_ RMA operation and synchronization call of a window whose
 * MPIDIG_WIN(win, nbrma) is set arrives here with its own arguments, becomes a
 * descriptor (nbrma_win_hooks.h) and goes to the handler of the window's kind.
 * A kind that has nothing to add to a call runs MPICH's own code for it: the
 * *_default functions below are what ch4_rma.h/ch4_win.h do without the hook.
 */

#include "mpidimpl.h"
#include "ucx_impl.h"
#include "mpidi_nbrma_hooks.h"
#include "nbrma_win_hooks.h"
#include "nbrma_memhandle.h"
#include "nbrma_epochs.h"

#ifndef MPIDI_CH4_DIRECT_NETMOD
#error "mpich-nbrma supports the CH4 UCX netmod without a shared-memory module only"
#endif

int MPIDI_NBRMA_rma(const MPIDI_NBRMA_rma_op_t * op, MPIR_Win * win)
{
    switch (MPIDI_NBRMA_WIN_STATE(win)->kind) {
        case MPIDI_NBRMA_WIN_MEMHANDLE:
            return MPIDI_NBRMA_memhandle_rma(op, win);
        case MPIDI_NBRMA_WIN_EPOCHS:
            return MPIDI_NBRMA_epochs_rma(op, win);
        case MPIDI_NBRMA_WIN_MEMHANDLE_PARENT:
            return MPIDI_NBRMA_dynamic_rma(op, win);
        default:
            return MPIDI_NBRMA_rma_default(op, win);
    }
}

int MPIDI_NBRMA_sync(const MPIDI_NBRMA_sync_call_t * call, MPIR_Win * win)
{
    switch (MPIDI_NBRMA_WIN_STATE(win)->kind) {
        case MPIDI_NBRMA_WIN_MEMHANDLE:
            return MPIDI_NBRMA_memhandle_sync(call, win);
        case MPIDI_NBRMA_WIN_MEMHANDLE_PARENT:
            return MPIDI_NBRMA_parent_sync(call, win);
        case MPIDI_NBRMA_WIN_EPOCHS:
            return MPIDI_NBRMA_epochs_sync(call, win);
        default:
            return MPIDI_NBRMA_sync_default(call, win);
    }
}

int MPIDI_NBRMA_rma_default(const MPIDI_NBRMA_rma_op_t * op, MPIR_Win * win)
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

int MPIDI_NBRMA_sync_default(const MPIDI_NBRMA_sync_call_t * call, MPIR_Win * win)
{
    MPIDI_workq_vci_progress();

    switch (call->kind) {
        case MPIDI_NBRMA_SYNC_FENCE:
            return MPIDI_NM_mpi_win_fence(call->assert, win);
        case MPIDI_NBRMA_SYNC_POST:
            return MPIDI_NM_mpi_win_post(call->group, call->assert, win);
        case MPIDI_NBRMA_SYNC_START:
            return MPIDI_NM_mpi_win_start(call->group, call->assert, win);
        case MPIDI_NBRMA_SYNC_COMPLETE:
            return MPIDI_NM_mpi_win_complete(win);
        case MPIDI_NBRMA_SYNC_WAIT:
            return MPIDI_NM_mpi_win_wait(win);
        case MPIDI_NBRMA_SYNC_TEST:
            return MPIDI_NM_mpi_win_test(win, call->flag);
        case MPIDI_NBRMA_SYNC_LOCK:
            return MPIDI_NM_mpi_win_lock(call->lock_type, call->rank, call->assert, win, NULL);
        case MPIDI_NBRMA_SYNC_UNLOCK:
            return MPIDI_NM_mpi_win_unlock(call->rank, win, NULL);
        case MPIDI_NBRMA_SYNC_LOCK_ALL:
            return MPIDI_NM_mpi_win_lock_all(call->assert, win);
        case MPIDI_NBRMA_SYNC_UNLOCK_ALL:
            return MPIDI_NM_mpi_win_unlock_all(win);
        case MPIDI_NBRMA_SYNC_FLUSH:
            return MPIDI_NM_mpi_win_flush(call->rank, win, NULL);
        case MPIDI_NBRMA_SYNC_FLUSH_ALL:
            return MPIDI_NM_mpi_win_flush_all(win);
        case MPIDI_NBRMA_SYNC_FLUSH_LOCAL:
            return MPIDI_NM_mpi_win_flush_local(call->rank, win, NULL);
        case MPIDI_NBRMA_SYNC_FLUSH_LOCAL_ALL:
            return MPIDI_NM_mpi_win_flush_local_all(win);
        case MPIDI_NBRMA_SYNC_SYNC:
            return MPIDI_NM_mpi_win_sync(win);
    }
    MPIR_Assert(0);
    return MPI_ERR_INTERN;
}

/* --- the MPID_ hooks: arguments in, descriptor out ------------------------ */

#define NBRMA_TARGET_ARGS                                                       \
    .target_rank = target_rank, .target_disp = target_disp,                     \
    .target_count = target_count, .target_datatype = target_datatype
#define NBRMA_ORIGIN_ARGS                                                       \
    .origin_addr = origin_addr, .origin_count = origin_count,                   \
    .origin_datatype = origin_datatype
#define NBRMA_RESULT_ARGS                                                       \
    .result_addr = result_addr, .result_count = result_count,                   \
    .result_datatype = result_datatype

int MPIDI_NBRMA_put(const void *origin_addr, int origin_count, MPI_Datatype origin_datatype,
                    int target_rank, MPI_Aint target_disp, int target_count,
                    MPI_Datatype target_datatype, MPIR_Win * win)
{
    MPIDI_NBRMA_rma_op_t op = { .kind = MPIDI_NBRMA_OP_PUT, NBRMA_ORIGIN_ARGS, NBRMA_TARGET_ARGS };
    return MPIDI_NBRMA_rma(&op, win);
}

int MPIDI_NBRMA_rput(const void *origin_addr, int origin_count, MPI_Datatype origin_datatype,
                     int target_rank, MPI_Aint target_disp, int target_count,
                     MPI_Datatype target_datatype, MPIR_Win * win, MPIR_Request ** request)
{
    MPIDI_NBRMA_rma_op_t op = { .kind = MPIDI_NBRMA_OP_PUT, NBRMA_ORIGIN_ARGS, NBRMA_TARGET_ARGS,
        .request = request
    };
    return MPIDI_NBRMA_rma(&op, win);
}

/* A get's origin buffer is where the result goes. */
int MPIDI_NBRMA_get(void *origin_addr, int origin_count, MPI_Datatype origin_datatype,
                    int target_rank, MPI_Aint target_disp, int target_count,
                    MPI_Datatype target_datatype, MPIR_Win * win)
{
    MPIDI_NBRMA_rma_op_t op = { .kind = MPIDI_NBRMA_OP_GET, .result_addr = origin_addr,
        .result_count = origin_count, .result_datatype = origin_datatype, NBRMA_TARGET_ARGS
    };
    return MPIDI_NBRMA_rma(&op, win);
}

int MPIDI_NBRMA_rget(void *origin_addr, int origin_count, MPI_Datatype origin_datatype,
                     int target_rank, MPI_Aint target_disp, int target_count,
                     MPI_Datatype target_datatype, MPIR_Win * win, MPIR_Request ** request)
{
    MPIDI_NBRMA_rma_op_t op = { .kind = MPIDI_NBRMA_OP_GET, .result_addr = origin_addr,
        .result_count = origin_count, .result_datatype = origin_datatype, NBRMA_TARGET_ARGS,
        .request = request
    };
    return MPIDI_NBRMA_rma(&op, win);
}

int MPIDI_NBRMA_accumulate(const void *origin_addr, int origin_count,
                           MPI_Datatype origin_datatype, int target_rank, MPI_Aint target_disp,
                           int target_count, MPI_Datatype target_datatype, MPI_Op op_,
                           MPIR_Win * win)
{
    MPIDI_NBRMA_rma_op_t op = { .kind = MPIDI_NBRMA_OP_ACCUMULATE, NBRMA_ORIGIN_ARGS,
        NBRMA_TARGET_ARGS, .op = op_
    };
    return MPIDI_NBRMA_rma(&op, win);
}

int MPIDI_NBRMA_raccumulate(const void *origin_addr, int origin_count,
                            MPI_Datatype origin_datatype, int target_rank, MPI_Aint target_disp,
                            int target_count, MPI_Datatype target_datatype, MPI_Op op_,
                            MPIR_Win * win, MPIR_Request ** request)
{
    MPIDI_NBRMA_rma_op_t op = { .kind = MPIDI_NBRMA_OP_ACCUMULATE, NBRMA_ORIGIN_ARGS,
        NBRMA_TARGET_ARGS, .op = op_, .request = request
    };
    return MPIDI_NBRMA_rma(&op, win);
}

int MPIDI_NBRMA_get_accumulate(const void *origin_addr, int origin_count,
                               MPI_Datatype origin_datatype, void *result_addr, int result_count,
                               MPI_Datatype result_datatype, int target_rank,
                               MPI_Aint target_disp, int target_count,
                               MPI_Datatype target_datatype, MPI_Op op_, MPIR_Win * win)
{
    MPIDI_NBRMA_rma_op_t op = { .kind = MPIDI_NBRMA_OP_GET_ACCUMULATE, NBRMA_ORIGIN_ARGS,
        NBRMA_RESULT_ARGS, NBRMA_TARGET_ARGS, .op = op_
    };
    return MPIDI_NBRMA_rma(&op, win);
}

int MPIDI_NBRMA_rget_accumulate(const void *origin_addr, int origin_count,
                                MPI_Datatype origin_datatype, void *result_addr,
                                int result_count, MPI_Datatype result_datatype, int target_rank,
                                MPI_Aint target_disp, int target_count,
                                MPI_Datatype target_datatype, MPI_Op op_, MPIR_Win * win,
                                MPIR_Request ** request)
{
    MPIDI_NBRMA_rma_op_t op = { .kind = MPIDI_NBRMA_OP_GET_ACCUMULATE, NBRMA_ORIGIN_ARGS,
        NBRMA_RESULT_ARGS, NBRMA_TARGET_ARGS, .op = op_, .request = request
    };
    return MPIDI_NBRMA_rma(&op, win);
}

/* The single-element atomics carry their datatype as the target datatype. */
int MPIDI_NBRMA_fetch_and_op(const void *origin_addr, void *result_addr, MPI_Datatype datatype,
                             int target_rank, MPI_Aint target_disp, MPI_Op op_, MPIR_Win * win)
{
    MPIDI_NBRMA_rma_op_t op = { .kind = MPIDI_NBRMA_OP_FETCH_AND_OP, .origin_addr = origin_addr,
        .result_addr = result_addr, .target_rank = target_rank, .target_disp = target_disp,
        .target_count = 1, .target_datatype = datatype, .op = op_
    };
    return MPIDI_NBRMA_rma(&op, win);
}

int MPIDI_NBRMA_compare_and_swap(const void *origin_addr, const void *compare_addr,
                                 void *result_addr, MPI_Datatype datatype, int target_rank,
                                 MPI_Aint target_disp, MPIR_Win * win)
{
    MPIDI_NBRMA_rma_op_t op = { .kind = MPIDI_NBRMA_OP_COMPARE_AND_SWAP,
        .origin_addr = origin_addr, .compare_addr = compare_addr, .result_addr = result_addr,
        .target_rank = target_rank, .target_disp = target_disp, .target_count = 1,
        .target_datatype = datatype
    };
    return MPIDI_NBRMA_rma(&op, win);
}

#define NBRMA_SYNC(win, ...) \
    MPIDI_NBRMA_sync(&(MPIDI_NBRMA_sync_call_t) { __VA_ARGS__ }, win)

int MPIDI_NBRMA_win_fence(int assert, MPIR_Win * win)
{
    return NBRMA_SYNC(win, .kind = MPIDI_NBRMA_SYNC_FENCE, .assert = assert);
}

int MPIDI_NBRMA_win_post(MPIR_Group * group, int assert, MPIR_Win * win)
{
    return NBRMA_SYNC(win, .kind = MPIDI_NBRMA_SYNC_POST, .group = group, .assert = assert);
}

int MPIDI_NBRMA_win_start(MPIR_Group * group, int assert, MPIR_Win * win)
{
    return NBRMA_SYNC(win, .kind = MPIDI_NBRMA_SYNC_START, .group = group, .assert = assert);
}

int MPIDI_NBRMA_win_complete(MPIR_Win * win)
{
    return NBRMA_SYNC(win, .kind = MPIDI_NBRMA_SYNC_COMPLETE);
}

int MPIDI_NBRMA_win_wait(MPIR_Win * win)
{
    return NBRMA_SYNC(win, .kind = MPIDI_NBRMA_SYNC_WAIT);
}

int MPIDI_NBRMA_win_test(MPIR_Win * win, int *flag)
{
    return NBRMA_SYNC(win, .kind = MPIDI_NBRMA_SYNC_TEST, .flag = flag);
}

int MPIDI_NBRMA_win_lock(int lock_type, int rank, int assert, MPIR_Win * win)
{
    return NBRMA_SYNC(win, .kind = MPIDI_NBRMA_SYNC_LOCK, .lock_type = lock_type, .rank = rank,
                      .assert = assert);
}

int MPIDI_NBRMA_win_unlock(int rank, MPIR_Win * win)
{
    return NBRMA_SYNC(win, .kind = MPIDI_NBRMA_SYNC_UNLOCK, .rank = rank);
}

int MPIDI_NBRMA_win_lock_all(int assert, MPIR_Win * win)
{
    return NBRMA_SYNC(win, .kind = MPIDI_NBRMA_SYNC_LOCK_ALL, .assert = assert);
}

int MPIDI_NBRMA_win_unlock_all(MPIR_Win * win)
{
    return NBRMA_SYNC(win, .kind = MPIDI_NBRMA_SYNC_UNLOCK_ALL);
}

int MPIDI_NBRMA_win_flush(int rank, MPIR_Win * win)
{
    return NBRMA_SYNC(win, .kind = MPIDI_NBRMA_SYNC_FLUSH, .rank = rank);
}

int MPIDI_NBRMA_win_flush_all(MPIR_Win * win)
{
    return NBRMA_SYNC(win, .kind = MPIDI_NBRMA_SYNC_FLUSH_ALL);
}

int MPIDI_NBRMA_win_flush_local(int rank, MPIR_Win * win)
{
    return NBRMA_SYNC(win, .kind = MPIDI_NBRMA_SYNC_FLUSH_LOCAL, .rank = rank);
}

int MPIDI_NBRMA_win_flush_local_all(MPIR_Win * win)
{
    return NBRMA_SYNC(win, .kind = MPIDI_NBRMA_SYNC_FLUSH_LOCAL_ALL);
}

int MPIDI_NBRMA_win_sync(MPIR_Win * win)
{
    return NBRMA_SYNC(win, .kind = MPIDI_NBRMA_SYNC_SYNC);
}

int MPIDI_NBRMA_win_get_info(MPIR_Win * win, MPIR_Info ** info_p_p)
{
    switch (MPIDI_NBRMA_WIN_STATE(win)->kind) {
        case MPIDI_NBRMA_WIN_MEMHANDLE:
        case MPIDI_NBRMA_WIN_MEMHANDLE_PARENT:
            return MPIDI_NBRMA_memhandle_get_info(win, info_p_p);
        case MPIDI_NBRMA_WIN_EPOCHS:
            return MPIDI_NBRMA_epochs_get_info(win, info_p_p);
        default:
            return MPIDI_NM_mpi_win_get_info(win, info_p_p);
    }
}

int MPIDI_NBRMA_win_set_info(MPIR_Win * win, MPIR_Info * info)
{
    /* a memory-handle window has no hints of its own (MPIDIG has no state for it) */
    if (MPIDI_NBRMA_WIN_STATE(win)->kind == MPIDI_NBRMA_WIN_MEMHANDLE)
        return MPI_SUCCESS;
    if (MPIDI_NBRMA_WIN_STATE(win)->kind == MPIDI_NBRMA_WIN_EPOCHS)
        return MPIDI_NBRMA_epochs_set_info(win, info);
    return MPIDI_NM_mpi_win_set_info(win, info);
}

int MPIDI_NBRMA_win_free_state(MPIR_Win ** win_ptr, int *handled)
{
    switch (MPIDI_NBRMA_WIN_STATE(*win_ptr)->kind) {
        case MPIDI_NBRMA_WIN_MEMHANDLE:
        case MPIDI_NBRMA_WIN_MEMHANDLE_PARENT:
            return MPIDI_NBRMA_memhandle_win_free(win_ptr, handled);
        case MPIDI_NBRMA_WIN_EPOCHS:
            *handled = 0;       /* MPICH frees the rest */
            return MPIDI_NBRMA_epochs_win_free(*win_ptr);
        default:
            *handled = 0;
            return MPI_SUCCESS;
    }
}
