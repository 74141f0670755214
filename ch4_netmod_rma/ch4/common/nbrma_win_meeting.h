/*
 * mpich-nbrma: MPIDIG's meeting of MPI_Win_free that the component's own
 * collective already held (patch 0039). MPIDIG begins MPI_Win_free with a
 * barrier; where the component's allreduce at the free came at the same
 * point (each process enters it with its own epochs finished), every
 * process has already passed what the barrier waits for, and MPIDIG skips
 * it (MPIDI_NBRMA_win_met, mpidi_nbrma_hooks.h).
 *
 * Not at creation: the barrier that ends MPIDIG's MPI_Win_create was
 * skipped for a while after the engine window's key exchange (its last
 * collective), and iflush_target -n 4 across the two hosts then hung in 2
 * of 6 runs. A process that leaves that allgather first may send messages
 * for the new window while a slower one still progresses inside the
 * allgather, before the rest of its set-up: the barrier keeps every
 * process out of the window until all have finished creating it.
 */

#ifndef NBRMA_WIN_MEETING_H_INCLUDED
#define NBRMA_WIN_MEETING_H_INCLUDED

/* The component's collective on `win` that just completed was MPIDIG's
 * meeting of this free; nothing after it, up to MPIDIG's barrier, needs
 * another process. */
void MPIDI_NBRMA_win_meeting_held(MPIR_Win * win);

#endif /* NBRMA_WIN_MEETING_H_INCLUDED */
