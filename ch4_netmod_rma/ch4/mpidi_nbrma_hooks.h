/*
 * mpich-nbrma: nonblocking RMA synchronization for MPICH's CH4 device.
 *
 * The entry points that the patch-set calls from MPICH's own code. Everything
 * declared here is internal to libmpi (hidden visibility).
 */

#ifndef MPIDI_NBRMA_HOOKS_H_INCLUDED
#define MPIDI_NBRMA_HOOKS_H_INCLUDED

/* Called first thing in MPID_Win_free(): drives every pending nonblocking
 * synchronization request of `win` to completion, so no request outlives its
 * window. */
int MPIDI_NBRMA_win_free_hook(MPIR_Win * win);

#endif /* MPIDI_NBRMA_HOOKS_H_INCLUDED */
