/*
 * mpich-nbrma: mpi_win_order=true on engine windows (Quo Vadis MPI RMA,
 * section 2.2): operations toward one target are performed in the order the
 * application issued them, so that a put followed by an accumulate to the
 * same location needs no flush in between.
 *
 * The engine replays an epoch's recorded operations in their order, and
 * whole or pulled epochs are applied by the target in theirs; what remains is
 * the transport, which orders UCX's RDMA and atomics among themselves only
 * behind a fence (common/nbrma_order.h). Before an ordered operation goes,
 * the way its route travels (op_route.c: the same answer that issues it) is
 * compared with what is in flight toward its target;
 * where that needs earlier operations complete, a direct call waits here, and
 * a replay (which may run inside a UCX callback, where nothing may wait) is
 * held by held_records.c until they are. Direct calls wait behind held
 * records toward their target.
 */

#include "mpidimpl.h"
#include "ucx_impl.h"
#include "epoch_win.h"
#include "nbrma_progress.h"

/* `op` travels `travels` (its route, op_route.c). */
static int ready_now(MPIDI_NBRMA_epoch_win_t * ew, const MPIDI_NBRMA_rma_op_t * op,
                     nbrma_way travels, bool may_wait, bool *ready)
{
    int mpi_errno = MPI_SUCCESS;

    if (ew->order == NULL) {
        mpi_errno = MPIDI_NBRMA_order_create(ew->win, &ew->order);
        MPIR_ERR_CHECK(mpi_errno);
    }
    mpi_errno = MPIDI_NBRMA_order_ready(ew->order, ew->win, op->target_rank, travels, may_wait,
                                        ready);
  fn_exit:
    return mpi_errno;
  fn_fail:
    goto fn_exit;
}

int MPIDI_NBRMA_ordered_wait(MPIDI_NBRMA_epoch_win_t * ew, const MPIDI_NBRMA_rma_op_t * op,
                             nbrma_way travels)
{
    int mpi_errno = MPI_SUCCESS;
    bool ready;

    while (MPIDI_NBRMA_held_toward(ew, op->target_rank)) {
        mpi_errno = MPIDI_NBRMA_progress_wait_round();
        MPIR_ERR_CHECK(mpi_errno);
    }
    mpi_errno = ready_now(ew, op, travels, true, &ready);
  fn_exit:
    return mpi_errno;
  fn_fail:
    goto fn_exit;
}

int MPIDI_NBRMA_ordered_test(MPIDI_NBRMA_epoch_win_t * ew, const MPIDI_NBRMA_rma_op_t * op,
                             bool *ready)
{
    *ready = false;
    if (MPIDI_NBRMA_held_toward(ew, op->target_rank))
        return MPI_SUCCESS;
    return ready_now(ew, op, MPIDI_NBRMA_route(ew, op, false, true).travels, false, ready);
}

int MPIDI_NBRMA_ordered_head_ready(MPIDI_NBRMA_epoch_win_t * ew, const MPIDI_NBRMA_rma_op_t * op,
                                   bool *ready)
{
    return ready_now(ew, op, MPIDI_NBRMA_route(ew, op, false, true).travels, false, ready);
}

void MPIDI_NBRMA_ordered_note(MPIDI_NBRMA_epoch_win_t * ew, int rank, nbrma_way way)
{
    if (ew->order)
        MPIDI_NBRMA_order_note(ew->order, rank, way);
}

void MPIDI_NBRMA_ordered_free(MPIDI_NBRMA_epoch_win_t * ew)
{
    MPIDI_NBRMA_order_free(ew->order);
    ew->order = NULL;
}
