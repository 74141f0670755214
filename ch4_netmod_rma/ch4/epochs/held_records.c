/*
 * mpich-nbrma: records the engine replays on an engine window that must wait
 * before they go: ordered operations (ordered_ops.c) whose target has earlier
 * operations in flight that only their completion orders. A replay may run
 * inside a UCX callback, where nothing may wait: such a record is held here,
 * in replay order, and the first one toward each target is performed at a
 * poll of the completion ledger once what came before it completed; the
 * target's later records wait behind it.
 */

#include "mpidimpl.h"
#include "epoch_win.h"
#include "nbrma_ledger_adapter.h"
#include <inttypes.h>

static int release_each_poll(MPIDI_NBRMA_ledger_task_t * task, bool *again);

static int hold(MPIDI_NBRMA_epoch_win_t * ew, MPIDI_NBRMA_recorded_op_t * rec,
                nbrma_op_ticket ticket)
{
    int mpi_errno = MPIDI_NBRMA_reserve_one((void **) &ew->held, ew->n_held, &ew->cap_held,
                                            sizeof(*ew->held), 8);

    MPIR_ERR_CHECK(mpi_errno);
    ew->held[ew->n_held].rec = rec;
    ew->held[ew->n_held].ticket = ticket;
    ew->n_held++;
    EPOCH_TRACE(ew, "hold op to %d age %" PRIu64 " behind earlier ones", ticket.target,
                ticket.age);
    /* what the records wait for completes in the ledger: try them at each
     * of its polls */
    mpi_errno = MPIDI_NBRMA_ledger_each_poll(&ew->held_task, ew->win, release_each_poll);
    MPIR_ERR_CHECK(mpi_errno);
  fn_exit:
    return mpi_errno;
  fn_fail:
    goto fn_exit;
}

int MPIDI_NBRMA_held_release(MPIDI_NBRMA_epoch_win_t * ew)
{
    int mpi_errno = MPI_SUCCESS;

    /* the first held record toward each target may go once what was issued
     * before it is complete; the others stay behind it */
    for (size_t i = 0; i < ew->n_held && !ew->call_depth;) {
        MPIDI_NBRMA_held_op_t held = ew->held[i];
        bool first = true, ready = false;

        for (size_t j = 0; j < i && first; j++)
            first = ew->held[j].rec->op.target_rank != held.rec->op.target_rank;
        if (first) {
            mpi_errno = MPIDI_NBRMA_ordered_head_ready(ew, &held.rec->op, &ready);
            MPIR_ERR_CHECK(mpi_errno);
        }
        if (!ready) {
            i++;
            continue;
        }
        ew->n_held--;
        memmove(ew->held + i, ew->held + i + 1, (ew->n_held - i) * sizeof(*ew->held));
        mpi_errno = MPIDI_NBRMA_issue_recorded(ew, held.rec, held.ticket);
        MPIR_ERR_CHECK(mpi_errno);
    }

  fn_exit:
    return mpi_errno;
  fn_fail:
    goto fn_exit;
}

static int release_each_poll(MPIDI_NBRMA_ledger_task_t * task, bool *again)
{
    MPIDI_NBRMA_epoch_win_t *ew = MPL_container_of(task, MPIDI_NBRMA_epoch_win_t, held_task);
    int mpi_errno = MPIDI_NBRMA_held_release(ew);

    *again = ew->n_held > 0;
    return mpi_errno;
}

int MPIDI_NBRMA_issue_or_hold(MPIDI_NBRMA_epoch_win_t * ew, MPIDI_NBRMA_recorded_op_t * rec,
                              nbrma_op_ticket ticket)
{
    bool ready = true;
    int mpi_errno = MPI_SUCCESS;

    if (rec->ordered && !rec->granted_flag) {
        mpi_errno = MPIDI_NBRMA_ordered_test(ew, &rec->op, &ready);
        if (mpi_errno == MPI_SUCCESS && !ready)
            mpi_errno = hold(ew, rec, ticket);
        if (mpi_errno != MPI_SUCCESS)
            return MPIDI_NBRMA_drop_recorded(rec, mpi_errno);
    }
    return ready ? MPIDI_NBRMA_issue_recorded(ew, rec, ticket) : MPI_SUCCESS;
}

void MPIDI_NBRMA_held_free(MPIDI_NBRMA_epoch_win_t * ew)
{
    for (size_t i = 0; i < ew->n_held; i++)
        MPIDI_NBRMA_recorded_op_free(ew->held[i].rec);
    MPL_free(ew->held);
    ew->held = NULL;
    ew->n_held = ew->cap_held = 0;
}
