/*
 * mpich-nbrma: what MPICH does without the component (the code behind the
 * hooks in ch4_rma.h and ch4_win.h), for calls a window kind adds nothing to;
 * and the requests, completed by the ledger (ledger_adapter.h), of windows
 * whose epochs MPICH keeps (engine windows: epochs/sync_calls.c, operations.c).
 */

#ifndef NBRMA_MPICH_PATH_H_INCLUDED
#define NBRMA_MPICH_PATH_H_INCLUDED

#include "nbrma_win.h"

int MPIDI_NBRMA_mpich_rma(const MPIDI_NBRMA_rma_op_t * op, MPIR_Win * win);
int MPIDI_NBRMA_mpich_sync(const MPIDI_NBRMA_sync_call_t * call, MPIR_Win * win);
/* Whether MPICH's own code may perform `op` with an active message rather
 * than UCX RDMA ("may": an RDMA operation answered so only waits longer). */
bool MPIDI_NBRMA_mpich_may_use_am(MPIR_Win * win, const MPIDI_NBRMA_rma_op_t * op);

/* Starts the nonblocking flush `call` (epoch calls: MPI_ERR_RMA_SYNC). It
 * completes once (1) the UCX RDMA issued before it to its targets completed,
 * as endpoint flushes tell (UCX has no local-only one, so local flushes wait
 * too), and (2) MPIDIG's per-target counters show every active-message
 * operation acknowledged (sent, if local): never early, though later
 * operations can delay it. also_flush (per rank, may be NULL): targets the
 * component issued RDMA to that MPICH does not know of. */
int MPIDI_NBRMA_flush_request_start(const MPIDI_NBRMA_sync_call_t * call, MPIR_Win * win,
                                    const bool * also_flush, MPIR_Request ** request);
/* After `op` was issued toward `target`: if it asks for remote completion
 * (MPIX_Rrput & co.), *op->request becomes one that also waits for a flush of
 * the target's endpoint started now, since UCX RDMA requests complete at the
 * origin. On error the request is left as it was (the operation's own). */
int MPIDI_NBRMA_remote_request_wrap(MPIR_Win * win, int target, const MPIDI_NBRMA_rma_op_t * op);

/* MPIDI_NBRMA_mpich_win_ops (nbrma_win.h) is defined here. */

#endif /* NBRMA_MPICH_PATH_H_INCLUDED */
