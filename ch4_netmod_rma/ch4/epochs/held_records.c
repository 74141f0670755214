/*
 * mpich-nbrma: replayed ordered records (ordered_ops.c) whose target has
 * earlier operations in flight that only their completion orders. A replay may
 * run inside a UCX callback, where nothing may wait: the record is held in the
 * core's queue (nbrma_held_queue.h: a target's later records wait behind its
 * first), whose heads are tried at the completion ledger's polls.
 */

#include "mpidimpl.h"
#include "epoch_win.h"
#include <inttypes.h>

static int release_each_poll(MPIDI_NBRMA_ledger_task_t * task, bool *again);

static int hold(MPIDI_NBRMA_epoch_win_t * ew, MPIDI_NBRMA_recorded_op_t * rec,
                nbrma_op_ticket ticket)
{
    int mpi_errno = MPI_SUCCESS;

    if (ew->held == NULL)
        ew->held = nbrma_held_queue_create();
    MPIR_ERR_CHKANDJUMP(ew->held == NULL ||
                        !nbrma_held_queue_hold(ew->held, rec->op.target_rank, rec, ticket),
                        mpi_errno, MPI_ERR_NO_MEM, "**nomem");
    EPOCH_TRACE(ew, "hold op to %d age %" PRIu64 " behind earlier ones", ticket.target,
                ticket.age);
    /* what they wait for completes in the ledger: tried at each of its polls */
    mpi_errno = MPIDI_NBRMA_ledger_each_poll(&ew->held_task, ew->win, release_each_poll);
    MPIR_ERR_CHECK(mpi_errno);
  fn_exit:
    return mpi_errno;
  fn_fail:
    goto fn_exit;
}

static int release_ready(MPIDI_NBRMA_epoch_win_t * ew)
{
    int mpi_errno = MPI_SUCCESS;
    size_t cursor = 0;
    void *head;

    while (ew->held && !ew->call_depth &&
           nbrma_held_queue_next_head(ew->held, &cursor, &head)) {
        MPIDI_NBRMA_recorded_op_t *rec = head;
        nbrma_op_ticket ticket;
        bool ready = false;

        mpi_errno = MPIDI_NBRMA_ordered_test(ew, &rec->op, false, &ready);
        MPIR_ERR_CHECK(mpi_errno);
        if (!ready)
            continue;
        nbrma_held_queue_take(ew->held, &cursor, &head, &ticket);
        mpi_errno = MPIDI_NBRMA_issue_recorded(ew, rec, ticket);
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
    int mpi_errno = release_ready(ew);

    *again = MPIDI_NBRMA_held_count(ew) > 0;
    return mpi_errno;
}

int MPIDI_NBRMA_issue_or_hold(MPIDI_NBRMA_epoch_win_t * ew, MPIDI_NBRMA_recorded_op_t * rec,
                              nbrma_op_ticket ticket)
{
    bool ready = true;
    int mpi_errno = MPI_SUCCESS;

    if (rec->ordered && !rec->granted_flag) {
        mpi_errno = MPIDI_NBRMA_ordered_test(ew, &rec->op, true, &ready);
        if (mpi_errno == MPI_SUCCESS && !ready)
            mpi_errno = hold(ew, rec, ticket);
        if (mpi_errno != MPI_SUCCESS)
            return MPIDI_NBRMA_drop_recorded(rec, mpi_errno);
    }
    return ready ? MPIDI_NBRMA_issue_recorded(ew, rec, ticket) : MPI_SUCCESS;
}

void MPIDI_NBRMA_held_free(MPIDI_NBRMA_epoch_win_t * ew)
{
    void *rec;

    if (ew->held == NULL)
        return;
    while (nbrma_held_queue_drop(ew->held, &rec))
        MPIDI_NBRMA_recorded_op_free(rec);
    nbrma_held_queue_destroy(ew->held);
    ew->held = NULL;
}
