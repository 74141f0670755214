/*
 * mpich-nbrma: flushes of the calling thread's operations on engine windows
 * with the info key mpi_win_scope=thread (Quo Vadis MPI RMA, section 2.1).
 * The rules are the core's (nbrma_thread_marks.h); here operations are noted
 * and the ledger waits for what the core names. Without memory for its marks
 * a window flushes with process scope from then on (MPI_Win_get_info says so).
 */

#include "mpidimpl.h"
#include "epoch_win.h"
#include "nbrma_mpich_path.h"

static void note(MPIDI_NBRMA_epoch_win_t * ew, int rank, unsigned bits)
{
    if (!nbrma_thread_marks_note(ew->thread_marks, NBRMA_THREAD_SELF, rank, bits))
        ew->thread_scope = false;
}

void MPIDI_NBRMA_thread_scope_note_performed(MPIDI_NBRMA_epoch_win_t * ew,
                                             const MPIDI_NBRMA_rma_op_t * op, nbrma_path path)
{
    if (ew->thread_scope)
        note(ew, op->target_rank, path == NBRMA_PATH_MPICH_MESSAGE ||
             (path == NBRMA_PATH_MPICH && MPIDI_NBRMA_mpich_may_use_am(ew->win, op)) ?
             NBRMA_MARK_RDMA | NBRMA_MARK_AM : NBRMA_MARK_RDMA);
}

void MPIDI_NBRMA_thread_scope_note_recorded(MPIDI_NBRMA_epoch_win_t * ew, int rank)
{
    if (ew->thread_scope)
        note(ew, rank, NBRMA_MARK_ENGINE);
}

void MPIDI_NBRMA_thread_scope_flushed(MPIDI_NBRMA_epoch_win_t * ew, int rank)
{
    if (ew->thread_scope)
        nbrma_thread_marks_flushed(ew->thread_marks, NBRMA_THREAD_SELF, rank);
}

static int thread_wait(MPIDI_NBRMA_epoch_win_t * ew, int rank, MPIDI_NBRMA_ledger_wait_t * wait)
{
    int mpi_errno = MPI_SUCCESS;
    size_t cursor = 0;
    int target;
    bool needs_am;

    MPIDI_NBRMA_ledger_wait_init(wait, ew->win);
    while (mpi_errno == MPI_SUCCESS &&
           nbrma_thread_marks_next(ew->thread_marks, NBRMA_THREAD_SELF, rank, &cursor, &target,
                                   &needs_am)) {
        /* a dynamic window's rkey cache issues RDMA MPICH does not know of */
        mpi_errno = MPIDI_NBRMA_ledger_need_endpoint(wait, target, ew->own_rdma_for != NULL);
        if (mpi_errno == MPI_SUCCESS && needs_am)
            mpi_errno = MPIDI_NBRMA_ledger_need_am(wait, target, false);
    }
    if (mpi_errno != MPI_SUCCESS)
        MPIDI_NBRMA_ledger_cancel(wait);
    return mpi_errno;
}

int MPIDI_NBRMA_thread_scope_flush(MPIDI_NBRMA_epoch_win_t * ew,
                                   const MPIDI_NBRMA_sync_call_t * call, bool blocking,
                                   bool *done)
{
    int mpi_errno = MPI_SUCCESS;
    MPIDI_NBRMA_ledger_wait_t wait;
    int ready;

    *done = false;
    if (!ew->thread_scope ||
        !nbrma_thread_marks_may_flush(ew->thread_marks, NBRMA_THREAD_SELF, call->rank))
        goto fn_exit;
    /* the engine reports wrong use; other threads' operations are not this
     * flush's concern */
    mpi_errno = MPIDI_NBRMA_engine_errno(ew, nbrma_flush_ready(ew->engine, call->rank,
                                                               call->local, &ready));
    MPIR_ERR_CHECK(mpi_errno);
    mpi_errno = thread_wait(ew, call->rank, &wait);
    MPIR_ERR_CHECK(mpi_errno);
    if (blocking) {
        /* lets other threads into MPI: what they issue meanwhile is not
         * this flush's to wait for */
        mpi_errno = MPIDI_NBRMA_ledger_block(&wait, true);
        MPIR_ERR_CHECK(mpi_errno);
    } else {
        /* done here if complete at once, else the engine's process-scope
         * flush; the endpoint flushes started here go on inside UCX */
        bool released;

        mpi_errno = MPIDI_NBRMA_ledger_done_now(&wait, &released);
        MPIR_ERR_CHECK(mpi_errno);
        if (!released)
            goto fn_exit;
    }
    MPIDI_NBRMA_thread_scope_flushed(ew, call->rank);
    *done = true;

  fn_exit:
    return mpi_errno;
  fn_fail:
    goto fn_exit;
}
