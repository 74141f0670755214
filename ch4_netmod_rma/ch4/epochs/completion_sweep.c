/*
 * mpich-nbrma: the completion sweep of engine windows: when operations the
 * engine counted as issued are complete at their targets.
 *
 * A window's sweep snapshots the operations issued so far and hands the
 * completion ledger a wait for them (ledger_adapter.h): the endpoints of
 * their targets flushed where they left UCX operations, and no incomplete
 * active-message operation of MPIDIG's left on the window (none not sent
 * yet, if every one of them is complete at local completion: rule R5,
 * operations.c). Once the ledger
 * released it, the sweep reports the snapshot to the engine
 * (nbrma_op_completed) and completes the requests of MPI_Rput & co. among
 * them. While a window has unreported operations the
 * ledger's poller runs its sweep at every poll; blocking calls run it
 * themselves.
 */

#include "mpidimpl.h"
#include "epoch_win.h"
#include "nbrma_ledger_adapter.h"

static int sweep_each_poll(MPIDI_NBRMA_ledger_task_t * task, bool *again);

int MPIDI_NBRMA_sweep_reserve(MPIDI_NBRMA_epoch_win_t * ew)
{
    return MPIDI_NBRMA_reserve_one((void **) &ew->issued, ew->n_issued, &ew->cap_issued,
                                   sizeof(*ew->issued), 64);
}

int MPIDI_NBRMA_sweep_track(MPIDI_NBRMA_epoch_win_t * ew, nbrma_op_ticket ticket,
                            MPIR_Request * user_req, bool local_done, bool by_endpoint,
                            bool complete_at_local)
{
    ew->issued[ew->n_issued] = (MPIDI_NBRMA_issued_op_t) {
    .ticket = ticket,.user_req = user_req,.local_done = local_done,.by_endpoint = by_endpoint,
            .complete_at_local = complete_at_local};
    ew->n_issued++;
    ew->n_local_pending += local_done;
    return MPIDI_NBRMA_ledger_each_poll(&ew->sweep_task, ew->win, sweep_each_poll);
}

/* Each operation is reported locally complete once (the engine counts the
 * reports), alone or with its remote completion: whether that report is
 * still due, taken now. */
static bool take_local_report(MPIDI_NBRMA_epoch_win_t * ew, MPIDI_NBRMA_issued_op_t * op)
{
    if (op->local_reported)
        return false;
    op->local_reported = true;
    ew->n_local_pending -= op->local_done;
    return true;
}

static int report_local(MPIDI_NBRMA_epoch_win_t * ew, MPIDI_NBRMA_issued_op_t * op)
{
    int rc = NBRMA_OK;

    if (take_local_report(ew, op))
        ENGINE_CALL(ew, rc, nbrma_op_local_completed(ew->engine, op->ticket));
    return rc;
}

/* From the newest: the pending ones were issued since the last report (the
 * sweep's rounds and local flushes report them), so a burst of puts costs
 * O(1) each however many issued operations wait for the sweep. Order does
 * not matter: the engine counts local reports per target. */
int MPIDI_NBRMA_sweep_report_local(MPIDI_NBRMA_epoch_win_t * ew)
{
    int rc = NBRMA_OK;

    for (size_t i = ew->n_issued; ew->n_local_pending > 0 && rc == NBRMA_OK && i-- > 0;)
        if (ew->issued[i].local_done && !ew->issued[i].local_reported)
            rc = report_local(ew, &ew->issued[i]);
    return MPIDI_NBRMA_engine_errno(ew, rc);
}

static int start_sweep(MPIDI_NBRMA_epoch_win_t * ew)
{
    int mpi_errno = MPI_SUCCESS;
    MPIR_Win *win = ew->win;
    int nprocs = win->comm_ptr->local_size;
    MPIDI_NBRMA_ledger_wait_t wait;
    bool all_at_local = true;

    MPIDI_NBRMA_ledger_wait_init(&wait, win);
    memset(ew->sweep_target, 0, nprocs);
    for (size_t i = 0; i < ew->n_issued; i++) {
        if (ew->issued[i].by_endpoint)
            ew->sweep_target[ew->issued[i].ticket.target] = 1;
        all_at_local &= ew->issued[i].complete_at_local;
    }
    for (int rank = 0; rank < nprocs && mpi_errno == MPI_SUCCESS; rank++)
        if (ew->sweep_target[rank])
            mpi_errno = MPIDI_NBRMA_ledger_need_endpoint(&wait, rank, ew->own_rdma_for != NULL);
    /* MPIDIG's counters say no more than "every active message of the
     * window": the local ones do for a snapshot of operations that are all
     * complete at local completion, the remote ones for any other */
    if (mpi_errno == MPI_SUCCESS)
        mpi_errno = MPIDI_NBRMA_ledger_need_am(&wait, NBRMA_ALL_RANKS, all_at_local);
    if (mpi_errno != MPI_SUCCESS) {
        MPIDI_NBRMA_ledger_cancel(&wait);
        goto fn_exit;
    }
    ew->sweeping = true;
    ew->sweep.released = false;
    ew->n_swept = ew->n_issued;
    mpi_errno = MPIDI_NBRMA_ledger_call_back(&wait, MPIDI_NBRMA_ledger_mark_released, &ew->sweep);
    if (mpi_errno != MPI_SUCCESS)
        ew->sweeping = false;

  fn_exit:
    return mpi_errno;
}

int MPIDI_NBRMA_sweep_poll(MPIDI_NBRMA_epoch_win_t * ew, int *made_progress)
{
    int mpi_errno = MPI_SUCCESS;
    size_t n_done;
    int rc = NBRMA_OK;

    if (ew->call_depth)
        goto fn_exit;
    if (!ew->sweeping) {
        if (ew->n_issued == 0)
            goto fn_exit;
        mpi_errno = start_sweep(ew);
        MPIR_ERR_CHECK(mpi_errno);
        EPOCH_TRACE(ew, "sweep starts: %zu operations", ew->n_swept);
    }
    if (!ew->sweep.released) {
        /* until the sweep reports both at once, local reports only for a
         * local flush that waits for them (a blocking one reports itself) */
        if (ew->n_local_pending > 0 && nbrma_local_flush_waiting(ew->engine))
            mpi_errno = MPIDI_NBRMA_sweep_report_local(ew);
        goto fn_exit;
    }
    ew->sweeping = false;
    mpi_errno = ew->sweep.error;
    MPIR_ERR_CHECK(mpi_errno);

    /* Reporting can activate later epochs, whose operations are issued at once:
     * they are appended (the array may move, the first n_done entries stay),
     * and no new sweep starts until the swept ones are taken out below. */
    n_done = ew->n_swept;
    EPOCH_TRACE(ew, "sweep reports %zu operations", n_done);
    if (made_progress)
        *made_progress = 1;
    for (size_t i = 0; i < n_done; i++) {
        MPIDI_NBRMA_issued_op_t op = ew->issued[i];
        if (op.user_req)
            MPID_Request_complete(op.user_req);
        if (rc != NBRMA_OK)
            continue;
        /* a local report still due goes with the remote one: one engine call */
        if (take_local_report(ew, &op))
            ENGINE_CALL(ew, rc, nbrma_op_completed_with_local(ew->engine, op.ticket));
        else
            ENGINE_CALL(ew, rc, nbrma_op_completed(ew->engine, op.ticket));
    }
    ew->n_issued -= n_done;
    memmove(ew->issued, ew->issued + n_done, ew->n_issued * sizeof(*ew->issued));
    ew->n_swept = 0;
    mpi_errno = MPIDI_NBRMA_engine_errno(ew, rc);
    MPIR_ERR_CHECK(mpi_errno);
    /* those issued since the sweep started (reporting may have issued some) */
    mpi_errno = MPIDI_NBRMA_sweep_report_local(ew);
    MPIR_ERR_CHECK(mpi_errno);

  fn_exit:
    return mpi_errno;
  fn_fail:
    goto fn_exit;
}

/* The window's part of every poll of the ledger while it has unreported
 * operations. Inside an engine call (a nested progress call) it waits. */
static int sweep_each_poll(MPIDI_NBRMA_ledger_task_t * task, bool *again)
{
    MPIDI_NBRMA_epoch_win_t *ew = MPL_container_of(task, MPIDI_NBRMA_epoch_win_t, sweep_task);
    int mpi_errno = MPIDI_NBRMA_sweep_poll(ew, NULL);

    *again = ew->call_depth || ew->n_issued > 0 || ew->sweeping;
    return mpi_errno;
}

/* Runs the sweep until every issued operation is reported: spinning on the
 * UCX worker while the endpoint flushes are in flight, with no request and no
 * progress hook in between (MPIDI_NBRMA_ledger_wait_round); active-message
 * operations (MPIDIG) need the whole progress engine for their
 * acknowledgements. Reporting may activate later epochs and issue their
 * operations; they are completed too, and so are ordered records held behind
 * earlier operations (the ledger's polls in these rounds try them). */
int MPIDI_NBRMA_sweep_complete_all(MPIDI_NBRMA_epoch_win_t * ew)
{
    int mpi_errno = MPI_SUCCESS;

    while (ew->n_issued > 0 || MPIDI_NBRMA_held_count(ew) > 0) {
        mpi_errno = MPIDI_NBRMA_sweep_poll(ew, NULL);
        MPIR_ERR_CHECK(mpi_errno);
        if (ew->n_issued == 0 && MPIDI_NBRMA_held_count(ew) == 0)
            break;
        mpi_errno = MPIDI_NBRMA_ledger_wait_round(false);
        MPIR_ERR_CHECK(mpi_errno);
    }

  fn_exit:
    return mpi_errno;
  fn_fail:
    goto fn_exit;
}
