/*
 * mpich-nbrma: the hooks of a window's life: init of the process (handler
 * registration), window creation (the kind's state), free, info, attach and
 * detach. Creation picks the kind; everything after goes through the
 * window's operations table.
 */

#include "mpidimpl.h"
#include "mpidi_nbrma_hooks.h"
#include "nbrma_win.h"
#include "nbrma_flush_requests.h"

/* Every process registers the same handlers in the same order, once: MPICH
 * cannot unregister handlers, and MPID_Init may run again (sessions). */
int MPIDI_NBRMA_init_hook(void)
{
    static bool registered;
    int mpi_errno = MPI_SUCCESS;

    if (registered)
        return MPI_SUCCESS;
    mpi_errno = MPIDI_NBRMA_epochs_register_handlers();
    if (mpi_errno == MPI_SUCCESS)
        mpi_errno = MPIDI_NBRMA_rkey_cache_register_handlers();
    registered = (mpi_errno == MPI_SUCCESS);
    return mpi_errno;
}

int MPIDI_NBRMA_win_init_hook(MPIR_Win * win, MPIR_Info * info)
{
    if (win->create_flavor == MPI_WIN_FLAVOR_DYNAMIC)
        return MPIDI_NBRMA_dynamic_win_create(win, info);
    return MPIDI_NBRMA_epochs_win_create(win, info);
}

int MPIDI_NBRMA_win_free_hook(MPIR_Win ** win_ptr, int *handled)
{
    int mpi_errno = MPI_SUCCESS;
    MPIDI_NBRMA_win_state_t *state;

    MPIR_FUNC_ENTER;

    *handled = 0;
    /* no request may outlive its window: windows without the engine (with or
     * without state) have nonblocking flushes */
    mpi_errno = MPIDI_NBRMA_flush_requests_settle(*win_ptr);
    MPIR_ERR_CHECK(mpi_errno);
    state = MPIDI_NBRMA_WIN_STATE(*win_ptr);
    if (state)
        mpi_errno = state->ops->free(win_ptr, handled);

  fn_exit:
    MPIR_FUNC_EXIT;
    return mpi_errno;
  fn_fail:
    goto fn_exit;
}

int MPIDI_NBRMA_win_get_info(MPIR_Win * win, MPIR_Info ** info_p_p)
{
    return MPIDI_NBRMA_WIN_STATE(win)->ops->get_info(win, info_p_p);
}

int MPIDI_NBRMA_win_set_info(MPIR_Win * win, MPIR_Info * info)
{
    return MPIDI_NBRMA_WIN_STATE(win)->ops->set_info(win, info);
}

int MPIDI_NBRMA_win_attach_hook(MPIR_Win * win, void *base, MPI_Aint size)
{
    MPIDI_NBRMA_win_state_t *state = MPIDI_NBRMA_WIN_STATE(win);
    return state && state->ops->attach ? state->ops->attach(win, base, size) : MPI_SUCCESS;
}

int MPIDI_NBRMA_win_detach_hook(MPIR_Win * win, const void *base)
{
    MPIDI_NBRMA_win_state_t *state = MPIDI_NBRMA_WIN_STATE(win);
    return state && state->ops->detach ? state->ops->detach(win, base) : MPI_SUCCESS;
}
