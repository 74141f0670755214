/*
 * mpich-nbrma: the component's MPIDIG active messages, header-only. Handlers
 * are registered at init, in the same order on every process.
 */

#ifndef NBRMA_AM_H_INCLUDED
#define NBRMA_AM_H_INCLUDED

int MPIDI_NBRMA_am_register(MPIDIG_am_target_msg_cb target_msg_cb, int *handler_id);
/* `hdr`: one eager active-message header. */
int MPIDI_NBRMA_am_send(MPIR_Win * win, int peer, int handler_id, const void *hdr, size_t bytes);
/* The window with MPIDIG id `win_id`, or NULL when it is gone (MPI_Win_free is
 * not synchronized with every message); settles the handler's request. */
MPIR_Win *MPIDI_NBRMA_am_window(uint64_t win_id, uint32_t attr, MPIR_Request ** req);

#endif /* NBRMA_AM_H_INCLUDED */
