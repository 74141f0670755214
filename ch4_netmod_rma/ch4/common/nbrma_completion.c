/*
 * mpich-nbrma: endpoint flushes, MPIDIG's completion counters and UCX request
 * waits (completion.h). UCX calls take the VCI lock as the UCX netmod does.
 */

#include "mpidimpl.h"
#include "ucx_impl.h"
#include "mpidi_nbrma_hooks.h"
#include "nbrma_completion.h"
#include "nbrma_progress.h"

int MPIDI_NBRMA_ep_flushes_init(MPIDI_NBRMA_ep_flushes_t * flushes, MPIR_Win * win)
{
    int mpi_errno = MPI_SUCCESS;

    flushes->n = 0;
    flushes->vni = MPIDI_UCX_get_win_vni(win);
    flushes->reqs = MPL_malloc(win->comm_ptr->local_size * sizeof(void *), MPL_MEM_RMA);
    MPIR_ERR_CHKANDJUMP(flushes->reqs == NULL, mpi_errno, MPI_ERR_NO_MEM, "**nomem");
  fn_exit:
    return mpi_errno;
  fn_fail:
    goto fn_exit;
}

void MPIDI_NBRMA_ep_flushes_destroy(MPIDI_NBRMA_ep_flushes_t * flushes)
{
    MPIDI_NBRMA_ep_flushes_abandon(flushes);
    MPL_free(flushes->reqs);
    flushes->reqs = NULL;
}

int MPIDI_NBRMA_ep_flushes_start(MPIDI_NBRMA_ep_flushes_t * flushes, MPIR_Win * win, int rank,
                                 const bool * also_flush)
{
    int mpi_errno = MPI_SUCCESS;
    int first = rank, last = rank, vni = flushes->vni;
    ucs_status_t failure = UCS_OK;

    /* windows without UCX RDMA of MPICH's (no info_table) only use active
     * messages, unless the component issued RDMA on them */
    if (MPIDI_UCX_WIN(win).info_table == NULL && also_flush == NULL)
        goto fn_exit;
    if (rank == NBRMA_ALL_RANKS) {
        first = 0;
        last = win->comm_ptr->local_size - 1;
    }
    MPID_THREAD_CS_ENTER(VCI, MPIDI_VCI(vni).lock);
    for (int r = first; r <= last; r++) {
        ucp_request_param_t param = { 0 };
        ucs_status_ptr_t status_ptr;

        if (!MPIDI_UCX_is_reachable_target(r, win, MPIDI_WIN(win, winattr)) &&
            !(also_flush && also_flush[r]))
            continue;
        status_ptr = ucp_ep_flush_nbx(MPIDI_UCX_WIN_TO_EP(win, r, vni), &param);
        if (UCS_PTR_IS_ERR(status_ptr)) {
            failure = UCS_PTR_STATUS(status_ptr);
            break;
        }
        if (status_ptr != NULL)
            flushes->reqs[flushes->n++] = status_ptr;
    }
    MPID_THREAD_CS_EXIT(VCI, MPIDI_VCI(vni).lock);
    MPIDI_UCX_CHK_STATUS(failure);

  fn_exit:
    return mpi_errno;
  fn_fail:
    goto fn_exit;
}

bool MPIDI_NBRMA_ep_flushes_test(MPIDI_NBRMA_ep_flushes_t * flushes, int *mpi_errno_out)
{
    int mpi_errno = MPI_SUCCESS;
    ucs_status_t failure = UCS_OK;

    MPID_THREAD_CS_ENTER(VCI, MPIDI_VCI(flushes->vni).lock);
    for (int i = 0; i < flushes->n;) {
        ucs_status_t status = ucp_request_check_status(flushes->reqs[i]);
        if (status == UCS_INPROGRESS) {
            i++;
            continue;
        }
        if (status != UCS_OK)
            failure = status;
        ucp_request_free(flushes->reqs[i]);
        flushes->reqs[i] = flushes->reqs[--flushes->n];
    }
    MPID_THREAD_CS_EXIT(VCI, MPIDI_VCI(flushes->vni).lock);
    MPIDI_UCX_CHK_STATUS(failure);

  fn_exit:
    *mpi_errno_out = mpi_errno;
    return flushes->n == 0;
  fn_fail:
    goto fn_exit;
}

/* Where UCX emulates RDMA with active messages (user memory on this
 * project's machines), a large put moves one fragment per target
 * acknowledgement, a few fragments per progress call: a 1 MB put needed about
 * 15 calls of MPI_Test 50 us apart, so an epoch's completion waited for the
 * application's 15th test. Going on while acknowledgements keep coming
 * completes it in one. The spin stops when nothing arrived for IDLE_NS (the
 * target is busy outside MPI: spinning would not help) or after SPIN_NS in
 * all, which bounds what a test call can cost. Its idle rounds are the
 * waiting loop's idle rounds (MPIDI_NBRMA_progress_idle): counted apart, the
 * 5 us spins between the loop's own rounds looked like pauses to it, which
 * then never gave the core to a target waiting for it on the same core. With
 * real RDMA the flushes finish in hardware and the first check succeeds. */
#define IDLE_NS 5000u      /* 5 us */
#define SPIN_NS 200000u    /* 200 us */

bool MPIDI_NBRMA_ep_flushes_finish(MPIDI_NBRMA_ep_flushes_t * flushes, int *mpi_errno_out)
{
    uint64_t start, last_event, now;
    ucp_worker_h worker = MPIDI_UCX_global.ctx[flushes->vni].worker;

    /* with shared memory the flushes are done at once: no clock for them */
    if (MPIDI_NBRMA_ep_flushes_test(flushes, mpi_errno_out))
        return true;
    start = last_event = now = MPIDI_NBRMA_monotonic_ns();
    while (now - last_event < IDLE_NS && now - start < SPIN_NS) {
        unsigned events;

        MPID_THREAD_CS_ENTER(VCI, MPIDI_VCI(flushes->vni).lock);
        events = ucp_worker_progress(worker);
        MPID_THREAD_CS_EXIT(VCI, MPIDI_VCI(flushes->vni).lock);
        if (MPIDI_NBRMA_ep_flushes_test(flushes, mpi_errno_out))
            return true;
        now = MPIDI_NBRMA_monotonic_ns();
        if (events)
            last_event = now;
        else
            MPIDI_NBRMA_progress_idle();
    }
    return false;
}

void MPIDI_NBRMA_ep_flushes_abandon(MPIDI_NBRMA_ep_flushes_t * flushes)
{
    if (flushes->n == 0)
        return;
    MPID_THREAD_CS_ENTER(VCI, MPIDI_VCI(flushes->vni).lock);
    for (int i = 0; i < flushes->n; i++)
        ucp_request_free(flushes->reqs[i]);
    MPID_THREAD_CS_EXIT(VCI, MPIDI_VCI(flushes->vni).lock);
    flushes->n = 0;
}

bool MPIDI_NBRMA_am_ops_complete(MPIR_Win * win, int rank, bool local)
{
    MPIDIG_win_target_t *t;

    if (rank == NBRMA_ALL_RANKS)
        return local ? MPIDIG_win_check_all_targets_local_completed(win)
            : MPIDIG_win_check_all_targets_remote_completed(win);
    t = MPIDIG_win_target_find(win, rank);
    if (t == NULL)
        return true;    /* no target object: no operation */
    if (local)
        return MPIR_cc_get(t->local_cmpl_cnts) == 0;
    return MPIR_cc_get(t->remote_cmpl_cnts) == 0 && MPIR_cc_get(t->remote_acc_cmpl_cnts) == 0;
}

int MPIDI_NBRMA_ucx_wait(ucs_status_ptr_t request, int vni)
{
    int mpi_errno = MPI_SUCCESS;
    ucs_status_t status = UCS_OK;

    if (UCS_PTR_IS_ERR(request))
        status = UCS_PTR_STATUS(request);
    else if (request != NULL) {
        while ((status = ucp_request_check_status(request)) == UCS_INPROGRESS)
            if (ucp_worker_progress(MPIDI_UCX_global.ctx[vni].worker) == 0)
                MPIDI_NBRMA_progress_idle();
        ucp_request_free(request);
    }
    MPIDI_UCX_CHK_STATUS(status);

  fn_exit:
    return mpi_errno;
  fn_fail:
    goto fn_exit;
}
