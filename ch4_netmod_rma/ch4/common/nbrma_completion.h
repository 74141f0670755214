/*
 * mpich-nbrma: what MPIDIG and UCX say of an operation's completion.
 *
 * Two mechanisms carry operations in MPICH's CH4/UCX: UCX RDMA, complete once
 * a nonblocking flush of the target's endpoint finished (ucp_ep_flush_nbx,
 * started and numbered by the completion ledger: ledger_adapter.h), and
 * MPIDIG active messages, complete once MPIDIG's per-target counters say so,
 * which this file reads for the ledger.
 */

#ifndef NBRMA_COMPLETION_H_INCLUDED
#define NBRMA_COMPLETION_H_INCLUDED

#include "nbrma_win.h"

/* Whether MPIDIG has no incomplete active-message operation on `win` toward
 * `rank` (or all ranks): acknowledged by the target, or only sent if `local`. */
bool MPIDI_NBRMA_am_ops_complete(MPIR_Win * win, int rank, bool local);

/* The same toward one rank whose MPIDIG target object (MPIDIG_win_target_find,
 * a hash lookup of some 70 instructions; NULL: no operation went there) the
 * caller looked up once: MPIDIG frees it only in the window's
 * synchronization calls (MPI_Win_unlock, MPI_Win_free), which no wait makes. */
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
