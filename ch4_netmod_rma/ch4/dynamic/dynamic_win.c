/*
 * mpich-nbrma: the state of a dynamic window's memory (attached regions,
 * memory handles, the rkey cache), made for every dynamic window, and the
 * operations table of those without the engine (mpich_nbrma_epochs=false,
 * MPIR_CVAR_NBRMA_EPOCHS=0; the others: dynamic_epochs.c). Their
 * synchronization is MPICH's; unlocks and flushes first complete the
 * component's RDMA, which MPIDIG does not know of (rdma.c).
 */

#include "mpidimpl.h"
#include "ucx_impl.h"
#include "dynamic_win.h"
#include "nbrma_mpich_path.h"
#include "nbrma_settings.h"

int MPIDI_NBRMA_dynamic_win_create(MPIR_Win * win, MPIR_Info * info)
{
    int mpi_errno = MPI_SUCCESS;
    int nprocs = win->comm_ptr->local_size;
    bool rkey_cache = MPIR_CVAR_NBRMA_DYNAMIC_RDMA;
    MPIDI_NBRMA_dynamic_win_t *dw = MPL_calloc(1, sizeof(*dw), MPL_MEM_RMA);

    MPIR_ERR_CHKANDJUMP(dw == NULL, mpi_errno, MPI_ERR_NO_MEM, "**nomem");
    dw->state.ops = &MPIDI_NBRMA_dynamic_win_ops;
    dw->state.dynamic = dw;
    MPIDI_NBRMA_info_get_bool(info, MPIDI_NBRMA_INFO_DYNAMIC_RDMA, &rkey_cache);
    MPIR_ERR_CHKANDJUMP(!nbrma_rdma_targets_init(&dw->rdma, nprocs) ||
                        (rkey_cache && !nbrma_cached_regions_init(&dw->cached, nprocs)),
                        mpi_errno, MPI_ERR_NO_MEM, "**nomem");
    MPIDIG_WIN(win, nbrma) = dw;

  fn_exit:
    return mpi_errno;
  fn_fail:
    if (dw)
        MPIDI_NBRMA_dynamic_state_free(dw, win);        /* nothing attached or retired yet */
    goto fn_exit;
}

/* A request to complete at the target joins an endpoint flush (mpich_path.h). */
static int dynamic_rma(const MPIDI_NBRMA_rma_op_t * op, MPIR_Win * win)
{
    int mpi_errno = MPIDI_NBRMA_rkey_cache_issue(op, win);

    if (mpi_errno == MPI_SUCCESS)
        mpi_errno = MPIDI_NBRMA_remote_request_wrap(win, op->target_rank, op);
    return mpi_errno;
}

static int dynamic_sync(const MPIDI_NBRMA_sync_call_t * call, MPIR_Win * win)
{
    int mpi_errno = MPI_SUCCESS;
    int targets;

    if (nbrma_sync_completes(call->kind, call->rank, &targets)) {
        mpi_errno = MPIDI_NBRMA_rdma_complete(win, targets);
        MPIR_ERR_CHECK(mpi_errno);
    }
    mpi_errno = MPIDI_NBRMA_mpich_sync(call, win);
  fn_exit:
    return mpi_errno;
  fn_fail:
    goto fn_exit;
}

/* Only nonblocking flushes (MPICH keeps the epochs); they also flush the
 * endpoints of the component's RDMA. */
static int dynamic_start_sync(const MPIDI_NBRMA_sync_call_t * call, MPIR_Win * win,
                              MPIR_Request ** request)
{
    return MPIDI_NBRMA_flush_request_start(call, win, MPIDI_NBRMA_dynamic_win(win)->rdma.pending,
                                           request);
}

int MPIDI_NBRMA_dynamic_info(MPIDI_NBRMA_dynamic_win_t * dw, MPIR_Info * info)
{
    const MPIDI_NBRMA_info_entry_t keys[] = {
        INFO_INT("mpix_memhandle_registrations", dw->registrations.count),
        INFO_INT("mpix_memhandle_windows", dw->children.count),
        INFO_BOOL(MPIDI_NBRMA_INFO_DYNAMIC_RDMA, MPIDI_NBRMA_rkey_cache_on(dw)),
        INFO_INT("mpich_nbrma_attached_registrations", dw->num_registered),
        INFO_INT("mpich_nbrma_dynamic_rdma_ops", dw->rdma_ops),
    };

    return MPIDI_NBRMA_info_set_all(info, INFO_ENTRIES(keys));
}

static int dynamic_get_info(MPIR_Win * win, MPIR_Info ** info_p_p)
{
    int mpi_errno = MPIDI_NM_mpi_win_get_info(win, info_p_p);

    /* without the engine: no ordered operations (README: ordered operations) */
    if (mpi_errno == MPI_SUCCESS)
        mpi_errno = MPIDI_NBRMA_info_set_bool(*info_p_p, MPIDI_NBRMA_INFO_EPOCHS, false);
    if (mpi_errno == MPI_SUCCESS)
        mpi_errno = MPIDI_NBRMA_info_set_bool(*info_p_p, MPIDI_NBRMA_INFO_WIN_ORDER, false);
    if (mpi_errno == MPI_SUCCESS)
        mpi_errno = MPIDI_NBRMA_dynamic_info(MPIDI_NBRMA_dynamic_win(win), *info_p_p);
    return mpi_errno;
}

void MPIDI_NBRMA_dynamic_state_free(MPIDI_NBRMA_dynamic_win_t * dw, MPIR_Win * win)
{
    nbrma_memhandle_windows_orphan(&dw->children, MPIDI_NBRMA_rkey_destroy);
    MPIDI_NBRMA_rdma_destroy_retired(dw, NBRMA_ALL_RANKS);
    MPIDI_NBRMA_registrations_free(dw);
    MPIDI_NBRMA_rkey_cache_free(dw);
    nbrma_rdma_targets_free(&dw->rdma);
    MPL_free(dw);
}

/* MPI_Win_free is collective: every process completes its RDMA here, then
 * frees the memory's state; MPICH frees the rest. */
static int dynamic_free(MPIR_Win ** win_ptr, int *handled)
{
    int mpi_errno = MPI_SUCCESS;
    MPIR_Win *win = *win_ptr;

    *handled = 0;
    mpi_errno = MPIDI_NBRMA_rdma_complete(win, NBRMA_ALL_RANKS);
    MPIR_ERR_CHECK(mpi_errno);
    MPIDI_NBRMA_dynamic_state_free(MPIDI_NBRMA_dynamic_win(win), win);
    MPIDIG_WIN(win, nbrma) = NULL;

  fn_exit:
    return mpi_errno;
  fn_fail:
    goto fn_exit;
}

const MPIDI_NBRMA_win_ops_t MPIDI_NBRMA_dynamic_win_ops = {
    .rma = dynamic_rma,
    .sync = dynamic_sync,
    .start_sync = dynamic_start_sync,
    .get_info = dynamic_get_info,
    .set_info = MPIDI_NM_mpi_win_set_info,
    .free = dynamic_free,
    .attach = MPIDI_NBRMA_rkey_cache_attach,
    .detach = MPIDI_NBRMA_rkey_cache_detach,
};
