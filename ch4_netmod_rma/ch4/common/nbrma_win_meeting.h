/*
 * mpich-nbrma: MPIDIG's meeting of MPI_Win_free that the component's own
 * collective already held (patch 0039): each process enters that allreduce
 * with its epochs finished, so all have passed what MPIDIG's barrier waits for
 * and it is skipped (MPIDI_NBRMA_win_met, mpidi_nbrma_hooks.h). Not at
 * creation: after the key exchange a fast process may send messages for the
 * new window while a slower one is still setting it up; the barrier keeps
 * every process out until all have created it.
 */

#ifndef NBRMA_WIN_MEETING_H_INCLUDED
#define NBRMA_WIN_MEETING_H_INCLUDED

/* The component's collective on `win` that just completed was this free's
 * meeting: nothing up to MPIDIG's barrier needs another process. */
void MPIDI_NBRMA_win_meeting_held(MPIR_Win * win);

#endif /* NBRMA_WIN_MEETING_H_INCLUDED */
