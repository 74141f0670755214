/*
 * mpich-nbrma: dynamic windows that carry the engine (unless the info key
 * mpich_nbrma_epochs=false or MPIR_CVAR_NBRMA_EPOCHS=0: dynamic_win.c). Its
 * operations take MPICH's path behind the rkey cache's RDMA. Whole and pulled
 * epochs carry addresses, performed only inside a region attached at the
 * target (attached_bytes). Ordered operations take the cache's way at issue
 * (operations.c routes again after an ordered wait); thread-scope flushes also
 * flush the endpoint. Memory comes after creation: no cross-memory copies or
 * UCX atomics (epochs/window.c: memory_at_creation), but mailboxes, which need
 * no window memory.
 */

#include "mpidimpl.h"
#include "ucx_impl.h"
#include "dynamic_win.h"

int MPIDI_NBRMA_dynamic_epochs_win_create(MPIR_Win * win, MPIR_Info * info)
{
    int mpi_errno = MPIDI_NBRMA_dynamic_win_create(win, info);
    MPIDI_NBRMA_dynamic_win_t *dw = MPIDI_NBRMA_dynamic_win(win);

    MPIR_ERR_CHECK(mpi_errno);
    /* replaces the window's state with the engine's, or leaves dw's */
    mpi_errno = MPIDI_NBRMA_epochs_win_create(win, info);
    MPIR_ERR_CHECK(mpi_errno);
    if (MPIDI_NBRMA_WIN_STATE(win) != &dw->state)
        MPIDI_NBRMA_epochs_win_adopt(win, &MPIDI_NBRMA_dynamic_epochs_win_ops, dw,
                                     MPIDI_NBRMA_rkey_cache_issue, MPIDI_NBRMA_rkey_cache_has_key,
                                     MPIDI_NBRMA_attached_bytes);

  fn_exit:
    return mpi_errno;
  fn_fail:
    if (dw) {
        MPIDI_NBRMA_dynamic_state_free(dw, win);
        MPIDIG_WIN(win, nbrma) = NULL;
    }
    goto fn_exit;
}

/* A blocking call that completes operations flushed the endpoints, so the
 * cached-rkey RDMA is complete: rkeys of regions detached meanwhile go now. */
static int dynamic_epochs_sync(const MPIDI_NBRMA_sync_call_t * call, MPIR_Win * win)
{
    int mpi_errno = MPIDI_NBRMA_epochs_sync(call, win);
    int targets;

    if (mpi_errno == MPI_SUCCESS && MPIDI_NBRMA_dynamic_win(win)->rdma.retired &&
        nbrma_sync_completes(call->kind, call->rank, &targets))
        mpi_errno = MPIDI_NBRMA_rdma_complete(win, targets);
    return mpi_errno;
}

static int dynamic_epochs_get_info(MPIR_Win * win, MPIR_Info ** info_p_p)
{
    int mpi_errno = MPIDI_NBRMA_epochs_get_info(win, info_p_p);

    if (mpi_errno == MPI_SUCCESS)
        mpi_errno = MPIDI_NBRMA_dynamic_info(MPIDI_NBRMA_dynamic_win(win), *info_p_p);
    return mpi_errno;
}

/* The engine completed every operation, RDMA included, before the processes
 * met (finish_own). */
static int dynamic_epochs_free(MPIR_Win ** win_ptr, int *handled)
{
    MPIR_Win *win = *win_ptr;
    MPIDI_NBRMA_dynamic_win_t *dw = MPIDI_NBRMA_dynamic_win(win);
    int mpi_errno = MPIDI_NBRMA_epochs_win_free(win_ptr, handled);

    if (mpi_errno == MPI_SUCCESS)
        MPIDI_NBRMA_dynamic_state_free(dw, win);
    return mpi_errno;
}

const MPIDI_NBRMA_win_ops_t MPIDI_NBRMA_dynamic_epochs_win_ops = {
    .rma = MPIDI_NBRMA_epochs_rma,
    .sync = dynamic_epochs_sync,
    .start_sync = MPIDI_NBRMA_epochs_start_sync,
    .get_info = dynamic_epochs_get_info,
    .set_info = MPIDI_NBRMA_epochs_set_info,
    .finish_own = MPIDI_NBRMA_epochs_win_finish_own,
    .free = dynamic_epochs_free,
    .attach = MPIDI_NBRMA_rkey_cache_attach,
    .detach = MPIDI_NBRMA_rkey_cache_detach,
    .carries_engine = true,
};
