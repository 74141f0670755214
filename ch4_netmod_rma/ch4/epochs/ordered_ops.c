/*
 * mpich-nbrma: mpi_win_order=true on engine windows (Quo Vadis MPI RMA,
 * section 2.2): operations toward one target are performed in issue order, so
 * a put then an accumulate to the same location need no flush in between.
 *
 * Replays and whole or pulled epochs keep their order; the transport does not:
 * ucp_worker_fence orders UCX operations only among themselves, not against
 * active messages or cross-memory copies. Rule O1 (core/src/route.cpp)
 * compares an ordered operation's way (op_route.c) with those in flight: it
 * goes, a fence, or a ledger wait. Direct calls wait here; a replay, which may
 * run inside a UCX callback, is held (held_records.c). The bookkeeping is the
 * core's order tracker (nbrma_order_tracker.h, T1-T3).
 */

#include "mpidimpl.h"
#include "ucx_impl.h"
#include "epoch_win.h"
#include "nbrma_progress.h"

static int fence(MPIR_Win * win)
{
    int mpi_errno = MPI_SUCCESS;
    int vni = MPIDI_UCX_get_win_vni(win);
    ucs_status_t status;

    MPID_THREAD_CS_ENTER(VCI, MPIDI_VCI(vni).lock);
    status = ucp_worker_fence(MPIDI_UCX_global.ctx[vni].worker);
    MPID_THREAD_CS_EXIT(VCI, MPIDI_VCI(vni).lock);
    MPIDI_UCX_CHK_STATUS(status);
  fn_exit:
    return mpi_errno;
  fn_fail:
    goto fn_exit;
}

/* Starts the ledger's wait for what is in flight toward `rank` (one rank at a
 * time), or takes the released one; the tracker says what it covered. */
static int complete_step(MPIDI_NBRMA_epoch_win_t * ew, int rank)
{
    int mpi_errno = MPI_SUCCESS;
    nbrma_order_tracker *order = ew->order;

    if (nbrma_order_tracker_waiting(order) < 0) {
        unsigned past = nbrma_order_tracker_in_flight(order, rank);
        MPIDI_NBRMA_ledger_wait_t wait;

        MPIDI_NBRMA_ledger_wait_init(&wait, ew->win);
        if (past & NBRMA_WAY_UCX)
            mpi_errno = MPIDI_NBRMA_ledger_need_endpoint(&wait, rank, false);
        if ((past & NBRMA_WAY_UNFENCED) && mpi_errno == MPI_SUCCESS)
            mpi_errno = MPIDI_NBRMA_ledger_need_am(&wait, rank, false);
        /* cannot be refused here, but a refusal would leave the wait untracked */
        if (mpi_errno == MPI_SUCCESS)
            mpi_errno = MPIDI_NBRMA_engine_errno(ew, nbrma_order_tracker_begin_wait(order, rank));
        if (mpi_errno != MPI_SUCCESS) {
            MPIDI_NBRMA_ledger_cancel(&wait);
            MPIR_ERR_CHECK(mpi_errno);
        }
        ew->order_wait.released = false;
        mpi_errno = MPIDI_NBRMA_ledger_call_back(&wait, MPIDI_NBRMA_ledger_mark_released,
                                                 &ew->order_wait);
        if (mpi_errno != MPI_SUCCESS) {
            nbrma_order_tracker_cancel_wait(order);
            MPIR_ERR_CHECK(mpi_errno);
        }
    }
    if (!ew->order_wait.released)
        goto fn_exit;
    mpi_errno = ew->order_wait.error;
    /* clears rank's ways if the wait covered them all */
    nbrma_order_tracker_wait_ended(order, rank);
    MPIR_ERR_CHECK(mpi_errno);

  fn_exit:
    return mpi_errno;
  fn_fail:
    goto fn_exit;
}

/* Whether `op` may go now, performed after everything issued toward its
 * target before it. With may_wait it waits until so; without (inside UCX
 * callbacks), it only starts and tests what it needs. */
static int ready_now(MPIDI_NBRMA_epoch_win_t * ew, const MPIDI_NBRMA_rma_op_t * op,
                     nbrma_way travels, bool may_wait, bool *ready)
{
    int mpi_errno = MPI_SUCCESS;
    int rank = op->target_rank;

    *ready = false;
    if (ew->order == NULL) {
        /* every target starts with both ways in flight: what went before is unknown */
        int rc = nbrma_order_tracker_create(ew->win->comm_ptr->local_size, &ew->order);

        mpi_errno = MPIDI_NBRMA_engine_errno(ew, rc);
        MPIR_ERR_CHECK(mpi_errno);
    }
    switch (nbrma_order_tracker_step(ew->order, rank, travels)) {
        case NBRMA_ORDER_GO:
            *ready = true;
            goto fn_exit;
        case NBRMA_ORDER_FENCE:
            mpi_errno = fence(ew->win);
            MPIR_ERR_CHECK(mpi_errno);
            *ready = true;
            goto fn_exit;
        default:
            break;
    }
    for (;;) {
        mpi_errno = complete_step(ew, rank);
        MPIR_ERR_CHECK(mpi_errno);
        *ready = nbrma_order_tracker_in_flight(ew->order, rank) == NBRMA_WAY_NONE;
        if (*ready || !may_wait)
            break;
        mpi_errno = MPIDI_NBRMA_progress_wait_round();
        MPIR_ERR_CHECK(mpi_errno);
    }

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
                             bool behind_held, bool *ready)
{
    *ready = false;
    if (behind_held && MPIDI_NBRMA_held_toward(ew, op->target_rank))
        return MPI_SUCCESS;
    return ready_now(ew, op, MPIDI_NBRMA_route(ew, op, false, true).travels, false, ready);
}

void MPIDI_NBRMA_ordered_note(MPIDI_NBRMA_epoch_win_t * ew, int rank, nbrma_way way)
{
    if (ew->order)
        nbrma_order_tracker_note(ew->order, rank, way);
}
