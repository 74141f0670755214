/*
 * mpich-nbrma: the meetings of MPIDIG's window creation and free that the
 * component's own collectives already held (patches 0039, 0040). MPIDIG ends
 * MPI_Win_create, _allocate and _allocate_shared and begins MPI_Win_free
 * with a barrier. Where the component's last collective on the window came
 * at the same point (its key exchange after MPICH's set-up, its allreduce at
 * the free after each process finished its epochs), every process has
 * already passed what the barrier waits for, and MPIDIG skips it
 * (MPIDI_NBRMA_win_met, mpidi_nbrma_hooks.h).
 */

#ifndef NBRMA_WIN_MEETING_H_INCLUDED
#define NBRMA_WIN_MEETING_H_INCLUDED

/* The component's collective on `win` that just completed was MPIDIG's
 * meeting of this creation or free; nothing after it, up to MPIDIG's
 * barrier, needs another process. */
void MPIDI_NBRMA_win_meeting_held(MPIR_Win * win);

#endif /* NBRMA_WIN_MEETING_H_INCLUDED */
