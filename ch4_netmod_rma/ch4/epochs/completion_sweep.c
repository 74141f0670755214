/*
 * mpich-nbrma: the completion sweep of engine windows: when operations the
 * engine counted as issued are complete at their targets.
 *
 * A sweep snapshots the issued operations and waits in the completion ledger
 * for their endpoint flushes and MPIDIG's active messages; then it reports
 * them and completes their requests. The ledger's poller runs it while
 * operations are unreported; blocking calls run it themselves. What a sweep
 * covers and reports is the core's (nbrma_issued_ops.h, rules S1-S4).
 */

#include "mpidimpl.h"
#include "epoch_win.h"

static int sweep_each_poll(MPIDI_NBRMA_ledger_task_t * task, bool *again);

int MPIDI_NBRMA_sweep_track(MPIDI_NBRMA_epoch_win_t * ew, nbrma_op_ticket ticket,
                            MPIR_Request * user_req, bool local_done, bool by_endpoint,
                            bool complete_at_local)
{
    /* the callers reserved room before they issued it */
    nbrma_issued_ops_keep_reserved(ew->issued, ticket, user_req, local_done, by_endpoint,
                                   complete_at_local);
    return MPIDI_NBRMA_ledger_each_poll(&ew->sweep_task, ew->win, sweep_each_poll);
}

/* The core names the pending ones from the newest: a burst of puts costs O(1)
 * each however many operations wait for the sweep. Order does not matter: the
 * engine counts local reports per target. */
int MPIDI_NBRMA_sweep_report_local(MPIDI_NBRMA_epoch_win_t * ew)
{
    int rc = NBRMA_OK;
    size_t cursor = nbrma_issued_ops_count(ew->issued);
    nbrma_op_ticket ticket;

    while (rc == NBRMA_OK && nbrma_issued_ops_next_local(ew->issued, &cursor, &ticket))
        ENGINE_CALL(ew, rc, nbrma_op_local_completed(ew->engine, ticket));
    return MPIDI_NBRMA_engine_errno(ew, rc);
}

static int start_sweep(MPIDI_NBRMA_epoch_win_t * ew)
{
    int mpi_errno = MPI_SUCCESS, rank;
    MPIDI_NBRMA_ledger_wait_t wait;
    bool all_at_local = nbrma_issued_ops_snapshot(ew->issued);
    size_t cursor = 0, n_swept;

    /* with the order of R9's copies before the notices that follow the sweep */
    MPIDI_NBRMA_ledger_wait_init(&wait, ew->win);
    while (mpi_errno == MPI_SUCCESS && nbrma_issued_ops_next_flush(ew->issued, &cursor, &rank))
        mpi_errno = MPIDI_NBRMA_ledger_need_endpoint(&wait, rank, ew->own_rdma_for != NULL);
    /* MPIDIG's counters cover every active message of the window: the local
     * ones suffice where the snapshot is all complete at local completion */
    if (mpi_errno == MPI_SUCCESS)
        mpi_errno = MPIDI_NBRMA_ledger_need_am(&wait, NBRMA_ALL_RANKS, all_at_local);
    if (mpi_errno != MPI_SUCCESS) {
        MPIDI_NBRMA_ledger_cancel(&wait);
        return mpi_errno;
    }
    ew->sweep.released = false;
    n_swept = nbrma_issued_ops_sweep_started(ew->issued);
    mpi_errno = MPIDI_NBRMA_ledger_call_back(&wait, MPIDI_NBRMA_ledger_mark_released, &ew->sweep);
    if (mpi_errno != MPI_SUCCESS)
        nbrma_issued_ops_sweep_ended(ew->issued);
    else
        EPOCH_TRACE(ew, "sweep starts: %zu operations", n_swept);
    return mpi_errno;
}

int MPIDI_NBRMA_sweep_poll(MPIDI_NBRMA_epoch_win_t * ew, int *made_progress)
{
    int mpi_errno = MPI_SUCCESS;
    int rc = NBRMA_OK;
    size_t cursor = 0, n_done;
    nbrma_issued_op op;
    bool with_local;

    if (ew->call_depth)
        goto fn_exit;
    if (!nbrma_issued_ops_sweeping(ew->issued)) {
        if (nbrma_issued_ops_count(ew->issued) == 0)
            goto fn_exit;
        mpi_errno = start_sweep(ew);
        MPIR_ERR_CHECK(mpi_errno);
    }
    if (!ew->sweep.released) {
        /* meanwhile local reports only for a nonblocking local flush that
         * waits for them (a blocking one reports itself) */
        if (nbrma_issued_ops_local_pending(ew->issued) > 0 &&
            nbrma_local_flush_waiting(ew->engine))
            mpi_errno = MPIDI_NBRMA_sweep_report_local(ew);
        goto fn_exit;
    }
    n_done = nbrma_issued_ops_sweep_ended(ew->issued);
    mpi_errno = ew->sweep.error;
    MPIR_ERR_CHECK(mpi_errno);
    EPOCH_TRACE(ew, "sweep reports %zu operations", n_done);

    /* Reporting can activate later epochs, whose operations are issued at
     * once: they are kept after the swept ones, for the next sweep. */
    if (made_progress)
        *made_progress = 1;
    while (nbrma_issued_ops_next_swept(ew->issued, &cursor, rc == NBRMA_OK, &op, &with_local)) {
        if (op.request)
            MPID_Request_complete((MPIR_Request *) op.request);
        /* a local report still due goes with the remote one: one engine call */
        if (rc == NBRMA_OK)
            ENGINE_CALL(ew, rc, with_local ? nbrma_op_completed_with_local(ew->engine, op.ticket)
                        : nbrma_op_completed(ew->engine, op.ticket));
    }
    nbrma_issued_ops_forget_swept(ew->issued);
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

/* Inside an engine call (a nested progress call) it waits. */
static int sweep_each_poll(MPIDI_NBRMA_ledger_task_t * task, bool *again)
{
    MPIDI_NBRMA_epoch_win_t *ew = MPL_container_of(task, MPIDI_NBRMA_epoch_win_t, sweep_task);
    int mpi_errno = MPIDI_NBRMA_sweep_poll(ew, NULL);

    *again = ew->call_depth || nbrma_issued_ops_pending(ew->issued);
    return mpi_errno;
}

/* Rounds of MPIDI_NBRMA_ledger_wait_round: the UCX worker alone while
 * endpoint flushes are in flight, MPICH's whole progress for MPIDIG's
 * acknowledgements. Operations that reporting issues, and held ordered
 * records (tried at the ledger's polls), are completed too. */
int MPIDI_NBRMA_sweep_complete_all(MPIDI_NBRMA_epoch_win_t * ew)
{
    int mpi_errno = MPI_SUCCESS;

    while (nbrma_issued_ops_count(ew->issued) > 0 || MPIDI_NBRMA_held_count(ew) > 0) {
        mpi_errno = MPIDI_NBRMA_sweep_poll(ew, NULL);
        MPIR_ERR_CHECK(mpi_errno);
        if (nbrma_issued_ops_count(ew->issued) == 0 && MPIDI_NBRMA_held_count(ew) == 0)
            break;
        mpi_errno = MPIDI_NBRMA_ledger_wait_round(false);
        MPIR_ERR_CHECK(mpi_errno);
    }

  fn_exit:
    return mpi_errno;
  fn_fail:
    goto fn_exit;
}
