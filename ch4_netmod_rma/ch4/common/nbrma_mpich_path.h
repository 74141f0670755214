/*
 * mpich-nbrma: what MPICH does for an RMA operation or a synchronization call
 * without the component (the code behind the hooks in ch4_rma.h and
 * ch4_win.h). A window kind runs it for the calls it has nothing to add to.
 */

#ifndef NBRMA_MPICH_PATH_H_INCLUDED
#define NBRMA_MPICH_PATH_H_INCLUDED

#include "nbrma_win.h"

int MPIDI_NBRMA_mpich_rma(const MPIDI_NBRMA_rma_op_t * op, MPIR_Win * win);
int MPIDI_NBRMA_mpich_sync(const MPIDI_NBRMA_sync_call_t * call, MPIR_Win * win);
/* Whether MPICH's own code may perform `op` with an active message rather
 * than UCX RDMA ("may": an RDMA operation answered so only waits longer). */
bool MPIDI_NBRMA_mpich_may_use_am(MPIR_Win * win, const MPIDI_NBRMA_rma_op_t * op);

/* MPIDI_NBRMA_mpich_win_ops (nbrma_win.h), the table of windows without
 * component state, is defined here. */

#endif /* NBRMA_MPICH_PATH_H_INCLUDED */
