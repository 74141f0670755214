/*
 * mpich-nbrma: what MPIDIG and UCX say of an operation's completion. UCX RDMA
 * is complete once a flush of the target's endpoint finished (started and
 * numbered by the completion ledger: ledger_adapter.h); MPIDIG active
 * messages once MPIDIG's per-target counters say so, which this file reads.
 */

#ifndef NBRMA_COMPLETION_H_INCLUDED
#define NBRMA_COMPLETION_H_INCLUDED

#include "nbrma_win.h"

/* Whether MPIDIG has no incomplete active-message operation on `win` toward
 * `rank` (or all ranks): acknowledged by the target, or only sent if `local`. */
bool MPIDI_NBRMA_am_ops_complete(MPIR_Win * win, int rank, bool local);

/* The same toward one rank, whose MPIDIG target object (NULL: no operation
 * went there) the caller looked up once, saving a hash lookup per look: MPIDIG
 * frees it only in MPI_Win_unlock and MPI_Win_free, which no wait makes. */
static inline bool MPIDI_NBRMA_am_target_complete(const MPIDIG_win_target_t * t, bool local)
{
    if (t == NULL)
        return true;
    if (local)
        return MPIR_cc_get(t->local_cmpl_cnts) == 0;
    return MPIR_cc_get(t->remote_cmpl_cnts) == 0 && MPIR_cc_get(t->remote_acc_cmpl_cnts) == 0;
}

/* Waits for a UCX request (NULL: done already) on the worker of `vni`, which
 * the caller holds the VCI lock of. */
int MPIDI_NBRMA_ucx_wait(ucs_status_ptr_t request, int vni);

#endif /* NBRMA_COMPLETION_H_INCLUDED */
