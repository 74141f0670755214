/*
 * mpich-nbrma: the component's active messages (nbrma_am.h). All of them are
 * header-only: a handler has everything in am_hdr and completes at once.
 */

#include "mpidimpl.h"
#include "nbrma_am.h"

int MPIDI_NBRMA_am_register(MPIDIG_am_target_msg_cb target_msg_cb, int *handler_id)
{
    int mpi_errno = MPI_SUCCESS;

    *handler_id = MPIDIG_am_reg_cb_dynamic(NULL, target_msg_cb);
    MPIR_ERR_CHKANDJUMP(*handler_id < 0, mpi_errno, MPI_ERR_INTERN, "**nbrmaamid");
  fn_exit:
    return mpi_errno;
  fn_fail:
    goto fn_exit;
}

int MPIDI_NBRMA_am_send(MPIR_Win * win, int peer, int handler_id, const void *hdr, size_t bytes)
{
    int vci = MPIDI_WIN(win, am_vci);

    return MPIDI_NM_am_send_hdr(peer, win->comm_ptr, handler_id, hdr, bytes, vci, vci);
}

MPIR_Win *MPIDI_NBRMA_am_window(uint64_t win_id, uint32_t attr, MPIR_Request ** req)
{
    if (attr & MPIDIG_AM_ATTR__IS_ASYNC)
        *req = NULL;
    return (MPIR_Win *) MPIDIU_map_lookup(MPIDI_global.win_map, win_id);
}
