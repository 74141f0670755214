/*
 * mpich-nbrma: MPIDIG's completion counters and UCX request waits
 * (completion.h). UCX calls take the VCI lock as the UCX netmod does.
 */

#include "mpidimpl.h"
#include "ucx_impl.h"
#include "mpidi_nbrma_hooks.h"
#include "nbrma_completion.h"

/* All ranks: walks the target objects MPIDIG made (one per target used), as
 * MPIDIG_win_check_all_targets_*_completed looks up every rank: O(P) at each
 * poll of a completion sweep, even for a PSCW round between two neighbours. */
bool MPIDI_NBRMA_am_ops_complete(MPIR_Win * win, int rank, bool local)
{
    MPIDIG_win_target_t *t, *tmp;

    if (rank == NBRMA_ALL_RANKS) {
        HASH_ITER(hash_handle, MPIDIG_WIN(win, targets), t, tmp)
            if (!MPIDI_NBRMA_am_target_complete(t, local))
                return false;
        return true;
    }
    return MPIDI_NBRMA_am_target_complete(MPIDIG_win_target_find(win, rank), local);
}

int MPIDI_NBRMA_ucx_wait(ucs_status_ptr_t request, int vni)
{
    int mpi_errno = MPI_SUCCESS;
    ucs_status_t status = UCS_OK;

    if (UCS_PTR_IS_ERR(request))
        status = UCS_PTR_STATUS(request);
    else if (request != NULL) {
        MPIDI_NBRMA_progress_wait_begins();     /* a wait of its own: its idle time from 0 */
        while ((status = ucp_request_check_status(request)) == UCS_INPROGRESS) {
            unsigned events = ucp_worker_progress(MPIDI_UCX_global.ctx[vni].worker);

            if (events) /* progress for the idle period, as MPICH's (patch 0042) */
                MPIDI_NBRMA_ucx_events_handled(events);
            else
                MPIDI_NBRMA_progress_idle();
        }
        ucp_request_free(request);
    }
    MPIDI_UCX_CHK_STATUS(status);

  fn_exit:
    return mpi_errno;
  fn_fail:
    goto fn_exit;
}
