/*
 * mpich-nbrma: when RMA operations issued on a window are complete.
 *
 * Two mechanisms carry operations in MPICH's CH4/UCX: UCX RDMA, complete once
 * a nonblocking flush of the target's endpoint finished (ucp_ep_flush_nbx),
 * and MPIDIG active messages, complete once MPIDIG's per-target counters say
 * so. The completion probes of engine windows (epochs/completion_probe.c)
 * and their direct operations use both through this file; the ledger adapter
 * (ledger_adapter.c) numbers its own endpoint flushes and reads MPIDIG's
 * counters here.
 *
 * Endpoint flushes, not worker flushes: with UCX 1.13.1 on this project's
 * machines a worker flush sometimes completed before a large put to one of
 * several peers had read its origin buffer (4 ranks, 4 MiB puts).
 */

#ifndef NBRMA_COMPLETION_H_INCLUDED
#define NBRMA_COMPLETION_H_INCLUDED

#include "nbrma_win.h"

/* Endpoint flushes in progress, at most one per rank of the window. */
typedef struct MPIDI_NBRMA_ep_flushes {
    void **reqs;
    int n;
    int vni;
} MPIDI_NBRMA_ep_flushes_t;

int MPIDI_NBRMA_ep_flushes_init(MPIDI_NBRMA_ep_flushes_t * flushes, MPIR_Win * win);
/* Frees the flushes still in progress (they finish on their own) and the room. */
void MPIDI_NBRMA_ep_flushes_destroy(MPIDI_NBRMA_ep_flushes_t * flushes);
/* Starts a nonblocking flush of the endpoint of `rank` (NBRMA_ALL_RANKS: of
 * every rank) where MPICH's UCX RDMA reaches it on `win`, or where
 * also_flush[rank] says the component issued RDMA to it (may be NULL). */
int MPIDI_NBRMA_ep_flushes_start(MPIDI_NBRMA_ep_flushes_t * flushes, MPIR_Win * win, int rank,
                                 const bool * also_flush);
/* Whether every started flush finished (the finished ones are freed). A
 * failed flush sets *mpi_errno_out. */
bool MPIDI_NBRMA_ep_flushes_test(MPIDI_NBRMA_ep_flushes_t * flushes, int *mpi_errno_out);
/* The same, but keeps the UCX worker going while the targets answer, within
 * limits (see completion.c). */
bool MPIDI_NBRMA_ep_flushes_finish(MPIDI_NBRMA_ep_flushes_t * flushes, int *mpi_errno_out);
/* Lets the started flushes go on inside UCX without waiting for them, and
 * empties the set. */
void MPIDI_NBRMA_ep_flushes_abandon(MPIDI_NBRMA_ep_flushes_t * flushes);

/* Whether MPIDIG has no incomplete active-message operation on `win` toward
 * `rank` (or all ranks): acknowledged by the target, or only sent if `local`. */
bool MPIDI_NBRMA_am_ops_complete(MPIR_Win * win, int rank, bool local);

/* Waits for a UCX request (NULL: done already) on the worker of `vni`, which
 * the caller holds the VCI lock of. */
int MPIDI_NBRMA_ucx_wait(ucs_status_ptr_t request, int vni);

#endif /* NBRMA_COMPLETION_H_INCLUDED */
