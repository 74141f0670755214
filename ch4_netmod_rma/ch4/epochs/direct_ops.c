/*
 * mpich-nbrma: operations of engine windows that the engine has not counted
 * yet (epoch_win.h says why and when they exist).
 *
 * Per rank: whether operations may go without the engine (direct_granted),
 * how many went since (direct_count) and how many of those were not locally
 * complete at issue (direct_not_local). Lists of the ranks where either is set
 * keep every step proportional to the targets used, not to the window's size.
 */

#include "mpidimpl.h"
#include "ucx_impl.h"
#include "epoch_win.h"
#include "nbrma_ledger_adapter.h"
#include <inttypes.h>

int MPIDI_NBRMA_direct_init(MPIDI_NBRMA_epoch_win_t * ew)
{
    int mpi_errno = MPI_SUCCESS;
    int nprocs = ew->win->comm_ptr->local_size;

    ew->direct_granted = MPL_calloc(nprocs, 1, MPL_MEM_RMA);
    ew->granted_ranks = MPL_malloc(nprocs * sizeof(int), MPL_MEM_RMA);
    ew->direct_count = MPL_calloc(nprocs, sizeof(uint64_t), MPL_MEM_RMA);
    ew->direct_not_local = MPL_calloc(nprocs, sizeof(uint64_t), MPL_MEM_RMA);
    ew->direct_ranks = MPL_malloc(nprocs * sizeof(int), MPL_MEM_RMA);
    MPIR_ERR_CHKANDJUMP(!ew->direct_granted || !ew->granted_ranks || !ew->direct_count ||
                        !ew->direct_not_local || !ew->direct_ranks, mpi_errno, MPI_ERR_NO_MEM,
                        "**nomem");

  fn_exit:
    return mpi_errno;
  fn_fail:
    goto fn_exit;
}

void MPIDI_NBRMA_direct_destroy(MPIDI_NBRMA_epoch_win_t * ew)
{
    MPL_free(ew->direct_granted);
    MPL_free(ew->granted_ranks);
    MPL_free(ew->direct_count);
    MPL_free(ew->direct_not_local);
    MPL_free(ew->direct_ranks);
}

void MPIDI_NBRMA_direct_note_grant(MPIDI_NBRMA_epoch_win_t * ew, int rank)
{
    if (!ew->direct_granted[rank]) {
        ew->direct_granted[rank] = 1;
        ew->granted_ranks[ew->n_granted_ranks++] = rank;
    }
}

void MPIDI_NBRMA_direct_count(MPIDI_NBRMA_epoch_win_t * ew, int rank, bool local_done)
{
    if (ew->direct_count[rank]++ == 0)
        ew->direct_ranks[ew->n_direct_ranks++] = rank;
    ew->direct_not_local[rank] += !local_done;
}

static void forget(MPIDI_NBRMA_epoch_win_t * ew, int i)
{
    int rank = ew->direct_ranks[i];

    ew->direct_count[rank] = 0;
    ew->direct_not_local[rank] = 0;
    ew->direct_ranks[i] = ew->direct_ranks[--ew->n_direct_ranks];
}

int MPIDI_NBRMA_direct_hand_over(MPIDI_NBRMA_epoch_win_t * ew, bool forget_grants)
{
    int mpi_errno = MPI_SUCCESS;

    while (ew->n_direct_ranks > 0) {
        int i = ew->n_direct_ranks - 1, rank = ew->direct_ranks[i], rc, issued = 0;
        nbrma_op_ticket ticket;
        bool local_done = ew->direct_not_local[rank] == 0;

        mpi_errno = MPIDI_NBRMA_sweep_reserve(ew);
        MPIR_ERR_CHECK(mpi_errno);
        ENGINE_CALL(ew, rc, nbrma_op_issue_direct(ew->engine, rank, ew->direct_count[rank],
                                                  &ticket, &issued));
        mpi_errno = MPIDI_NBRMA_engine_errno(ew, rc);
        MPIR_ERR_CHECK(mpi_errno);
        /* the grant holds until the synchronization call that follows */
        MPIR_ERR_CHKANDJUMP1(!issued, mpi_errno, MPI_ERR_INTERN, "**nbrmaengine",
                             "**nbrmaengine %s", "counted operations lost their epoch");
        EPOCH_TRACE(ew, "hand over %" PRIu64 " direct ops to %d age %" PRIu64, ticket.count,
                    rank, ticket.age);
        forget(ew, i);
        mpi_errno = MPIDI_NBRMA_sweep_track(ew, ticket, NULL, local_done);
        MPIR_ERR_CHECK(mpi_errno);
    }
    if (forget_grants) {
        for (int i = 0; i < ew->n_granted_ranks; i++)
            ew->direct_granted[ew->granted_ranks[i]] = 0;
        ew->n_granted_ranks = 0;
    }

  fn_exit:
    return mpi_errno;
  fn_fail:
    goto fn_exit;
}

/* Whether a blocking flush toward `rank` (or all) completes the counted
 * operations toward r: a local one only if some are not locally complete. */
static bool flush_covers(const MPIDI_NBRMA_epoch_win_t * ew, int r, int rank, bool local)
{
    return (rank == NBRMA_ALL_RANKS || r == rank) && !(local && ew->direct_not_local[r] == 0);
}

int MPIDI_NBRMA_direct_complete(MPIDI_NBRMA_epoch_win_t * ew, int rank, bool local)
{
    int mpi_errno = MPI_SUCCESS;
    MPIDI_NBRMA_ledger_wait_t wait;
    bool any = false;

    MPIDI_NBRMA_ledger_wait_init(&wait, ew->win);
    for (int i = 0; i < ew->n_direct_ranks && mpi_errno == MPI_SUCCESS; i++) {
        int r = ew->direct_ranks[i];
        if (!flush_covers(ew, r, rank, local))
            continue;
        any = true;
        mpi_errno = MPIDI_NBRMA_ledger_need_endpoint(&wait, r, false);
    }
    if (!any)
        goto fn_exit;
    if (mpi_errno == MPI_SUCCESS)
        mpi_errno = MPIDI_NBRMA_ledger_need_am(&wait, rank, false);
    if (mpi_errno != MPI_SUCCESS) {
        MPIDI_NBRMA_ledger_cancel(&wait);
        MPIR_ERR_CHECK(mpi_errno);
    }
    /* on shared memory this is done at once; a network needs the targets'
     * answers, and active-message operations MPICH's progress */
    mpi_errno = MPIDI_NBRMA_ledger_block(&wait, false);
    MPIR_ERR_CHECK(mpi_errno);
    for (int i = ew->n_direct_ranks; i-- > 0;)
        if (flush_covers(ew, ew->direct_ranks[i], rank, local))
            forget(ew, i);

  fn_exit:
    return mpi_errno;
  fn_fail:
    goto fn_exit;
}
