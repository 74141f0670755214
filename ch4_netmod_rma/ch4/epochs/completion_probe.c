/*
 * mpich-nbrma: the completion probe of engine windows: when operations the
 * engine counted as issued are complete at their targets.
 *
 * A window's probe snapshots the operations issued so far, flushes the
 * endpoints of their targets and, once those flushes finished and MPIDIG has
 * no incomplete active-message operation left on the window, reports the
 * snapshot to the engine (nbrma_op_completed) and completes the requests of
 * MPI_Rput & co. among them. The component's progress hook runs the probes of
 * every window with unreported operations; blocking calls run their window's
 * probe themselves.
 */

#include "mpidimpl.h"
#include "epoch_win.h"
#include "nbrma_progress.h"

static MPIDI_NBRMA_epoch_win_t *polled_wins;

static int poll_probes(int *made_progress);

static MPIDI_NBRMA_poller_t probe_poller = { .poll = poll_probes };

int MPIDI_NBRMA_probe_reserve(MPIDI_NBRMA_epoch_win_t * ew)
{
    return MPIDI_NBRMA_reserve_one((void **) &ew->issued, ew->n_issued, &ew->cap_issued,
                                   sizeof(*ew->issued), 64);
}

int MPIDI_NBRMA_probe_track(MPIDI_NBRMA_epoch_win_t * ew, nbrma_op_ticket ticket,
                            MPIR_Request * user_req, bool local_done)
{
    ew->issued[ew->n_issued] = (MPIDI_NBRMA_issued_op_t) {
    .ticket = ticket,.user_req = user_req,.local_done = local_done};
    ew->n_issued++;
    ew->n_local_pending += local_done;
    if (!ew->polled) {
        ew->polled = true;
        ew->next_polled = polled_wins;
        polled_wins = ew;
    }
    return MPIDI_NBRMA_poller_wake(&probe_poller);
}

/* Each operation is reported locally complete once (the engine counts the
 * reports), before its remote completion report. */
static int report_local(MPIDI_NBRMA_epoch_win_t * ew, MPIDI_NBRMA_issued_op_t * op)
{
    int rc;

    if (op->local_reported)
        return NBRMA_OK;
    op->local_reported = true;
    if (op->local_done)
        ew->n_local_pending--;
    ENGINE_CALL(ew, rc, nbrma_op_local_completed(ew->engine, op->ticket));
    return rc;
}

/* From the newest: the pending ones were issued since the last report (a
 * direct issue reports its own at once), so a burst of puts costs O(1) each
 * however many issued operations wait for the probe. Order does not matter:
 * the engine counts local reports per target. */
int MPIDI_NBRMA_probe_report_local(MPIDI_NBRMA_epoch_win_t * ew)
{
    int rc = NBRMA_OK;

    for (size_t i = ew->n_issued; ew->n_local_pending > 0 && rc == NBRMA_OK && i-- > 0;)
        if (ew->issued[i].local_done && !ew->issued[i].local_reported)
            rc = report_local(ew, &ew->issued[i]);
    return MPIDI_NBRMA_engine_errno(ew, rc);
}

void MPIDI_NBRMA_probe_forget(MPIDI_NBRMA_epoch_win_t * ew)
{
    for (MPIDI_NBRMA_epoch_win_t ** link = &polled_wins; *link; link = &(*link)->next_polled) {
        if (*link == ew) {
            *link = ew->next_polled;
            break;
        }
    }
    ew->polled = false;
}

static int start_probe(MPIDI_NBRMA_epoch_win_t * ew)
{
    int mpi_errno = MPI_SUCCESS;
    MPIR_Win *win = ew->win;
    int nprocs = win->comm_ptr->local_size;

    ew->probing = true;
    ew->n_probed = ew->n_issued;
    memset(ew->probe_target, 0, nprocs);
    for (size_t i = 0; i < ew->n_probed; i++)
        ew->probe_target[ew->issued[i].ticket.target] = 1;
    for (int rank = 0; rank < nprocs; rank++) {
        if (!ew->probe_target[rank])
            continue;
        mpi_errno = MPIDI_NBRMA_ep_flushes_start(&ew->probe_flushes, win, rank, NULL);
        MPIR_ERR_CHECK(mpi_errno);
    }

  fn_exit:
    return mpi_errno;
  fn_fail:
    goto fn_exit;
}

int MPIDI_NBRMA_probe_poll(MPIDI_NBRMA_epoch_win_t * ew, int *made_progress)
{
    int mpi_errno = MPI_SUCCESS;
    size_t n_done;
    int rc = NBRMA_OK;

    if (ew->call_depth)
        goto fn_exit;
    mpi_errno = MPIDI_NBRMA_probe_report_local(ew);
    MPIR_ERR_CHECK(mpi_errno);
    if (!ew->probing) {
        if (ew->n_issued == 0)
            goto fn_exit;
        mpi_errno = start_probe(ew);
        MPIR_ERR_CHECK(mpi_errno);
        EPOCH_TRACE(ew, "probe starts: %zu operations, %d endpoint flushes pending",
                    ew->n_probed, ew->probe_flushes.n);
    }
    if (!MPIDI_NBRMA_ep_flushes_finish(&ew->probe_flushes, &mpi_errno))
        goto fn_exit;
    MPIR_ERR_CHECK(mpi_errno);
    if (!MPIDI_NBRMA_am_ops_complete(ew->win, NBRMA_ALL_RANKS, false))
        goto fn_exit;

    /* Reporting can activate later epochs, whose operations are issued at once:
     * they are appended (the array may move, the first n_done entries stay),
     * and no new probe starts until the probed ones are taken out below. */
    n_done = ew->n_probed;
    EPOCH_TRACE(ew, "probe reports %zu operations", n_done);
    if (made_progress)
        *made_progress = 1;
    for (size_t i = 0; i < n_done; i++) {
        MPIDI_NBRMA_issued_op_t op = ew->issued[i];
        if (op.user_req)
            MPID_Request_complete(op.user_req);
        if (rc == NBRMA_OK)
            rc = report_local(ew, &op);
        if (rc == NBRMA_OK)
            ENGINE_CALL(ew, rc, nbrma_op_completed(ew->engine, op.ticket));
    }
    ew->n_issued -= n_done;
    memmove(ew->issued, ew->issued + n_done, ew->n_issued * sizeof(*ew->issued));
    ew->probing = false;
    ew->n_probed = 0;
    mpi_errno = MPIDI_NBRMA_engine_errno(ew, rc);
    MPIR_ERR_CHECK(mpi_errno);

  fn_exit:
    return mpi_errno;
  fn_fail:
    goto fn_exit;
}

/* The poller: runs the probes of every window with unreported operations. */
static int poll_probes(int *made_progress)
{
    int mpi_errno = MPI_SUCCESS;
    MPIDI_NBRMA_epoch_win_t *ew = polled_wins;

    while (ew) {
        MPIDI_NBRMA_epoch_win_t *next = ew->next_polled;
        mpi_errno = MPIDI_NBRMA_probe_poll(ew, made_progress);
        MPIR_ERR_CHECK(mpi_errno);
        if (ew->n_issued == 0 && !ew->probing)
            MPIDI_NBRMA_probe_forget(ew);
        ew = next;
    }
    if (polled_wins == NULL)
        mpi_errno = MPIDI_NBRMA_poller_sleep(&probe_poller);

  fn_exit:
    return mpi_errno;
  fn_fail:
    goto fn_exit;
}

/* Flushes the issued operations' endpoints and spins on the UCX worker
 * (MPIDI_NBRMA_probe_poll does both), with no request and no progress hook in
 * between. Active-message operations (MPIDIG) need the whole progress engine
 * for their acknowledgements. Reporting may activate later epochs and issue
 * their operations; they are completed too, and so are ordered records held
 * behind earlier operations (their poller runs in the progress calls). */
int MPIDI_NBRMA_probe_complete_all(MPIDI_NBRMA_epoch_win_t * ew)
{
    int mpi_errno = MPI_SUCCESS;

    while (ew->n_issued > 0 || ew->n_held > 0) {
        mpi_errno = MPIDI_NBRMA_probe_poll(ew, NULL);
        MPIR_ERR_CHECK(mpi_errno);
        if ((ew->n_issued > 0 || ew->n_held > 0) && ew->probe_flushes.n == 0) {
            mpi_errno = MPIDI_NBRMA_progress_wait_round();
            MPIR_ERR_CHECK(mpi_errno);
        }
    }

  fn_exit:
    return mpi_errno;
  fn_fail:
    goto fn_exit;
}
