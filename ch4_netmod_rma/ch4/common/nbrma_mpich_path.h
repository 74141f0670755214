/*
 * mpich-nbrma: what MPICH does for an RMA operation or a synchronization call
 * without the component (the code behind the hooks in ch4_rma.h and
 * ch4_win.h). A window kind runs it for the calls it has nothing to add to.
 *
 * And the requests of windows whose epochs MPICH itself keeps (windows
 * without the engine, dynamic windows, memory-handle windows), which the
 * completion ledger completes (ledger_adapter.h). Engine windows have the
 * engine's flush ages and their operations' remote completion instead
 * (epochs/sync_calls.c, epochs/operations.c).
 *
 * Nonblocking flushes (MPIX_Win_iflush, _iflush_local, _iflush_all,
 * _iflush_local_all): complete once (1) every UCX RDMA operation issued
 * before the call (to its target, or to all) has completed, which the
 * endpoint flushes the ledger numbers tell, and (2) every active-message
 * operation (accumulates, operations on dynamic windows, ...) to its targets
 * is complete, which MPIDIG tracks with per-target counters: acknowledged by
 * the target for a flush, sent for a local flush. UCX has no local-only
 * flush, so a local flush waits for (1) as a flush does, like MPICH's
 * blocking MPI_Win_flush_local. MPIDIG's counters count outstanding
 * operations, not issued ones, so (2) also waits for operations issued after
 * the flush: the request never completes early, but a stream of later
 * active-message operations can delay it.
 *
 * Requests that complete at the target (MPIX_Rrput, MPIX_Rraccumulate,
 * MPIX_Rrget_accumulate): MPICH's UCX RDMA and the component's RDMA on
 * dynamic windows complete a request once UCX is done with the origin
 * buffer; MPIDIG's active-message operations complete theirs with the
 * target's acknowledgement. A remote request is complete once the
 * operation's own request is and a flush of the target's UCX endpoint,
 * started right after the operation, finished: that flush covers the RDMA
 * (and UCX's emulation of it) issued before it toward that target, not the
 * operations issued after.
 *
 * MPI_Win_free completes what is still pending through
 * MPIDI_NBRMA_ledger_finish_window.
 */

#ifndef NBRMA_MPICH_PATH_H_INCLUDED
#define NBRMA_MPICH_PATH_H_INCLUDED

#include "nbrma_win.h"

int MPIDI_NBRMA_mpich_rma(const MPIDI_NBRMA_rma_op_t * op, MPIR_Win * win);
int MPIDI_NBRMA_mpich_sync(const MPIDI_NBRMA_sync_call_t * call, MPIR_Win * win);
/* Whether MPICH's own code may perform `op` with an active message rather
 * than UCX RDMA ("may": an RDMA operation answered so only waits longer). */
bool MPIDI_NBRMA_mpich_may_use_am(MPIR_Win * win, const MPIDI_NBRMA_rma_op_t * op);

/* Starts the flush `call` (any other kind is an epoch call that such windows
 * do not offer: MPI_ERR_RMA_SYNC, naming the call). also_flush (per rank,
 * may be NULL) names targets the component issued RDMA to that MPICH does
 * not know of. */
int MPIDI_NBRMA_flush_request_start(const MPIDI_NBRMA_sync_call_t * call, MPIR_Win * win,
                                    const bool * also_flush, MPIR_Request ** request);
/* After `op` was issued on `win` toward `target`: if it asks for remote
 * completion, its *op->request is replaced by one that completes once that
 * request has and the operation is complete at the target. On error the
 * request is left as it was (the operation's own, still valid). */
int MPIDI_NBRMA_remote_request_wrap(MPIR_Win * win, int target, const MPIDI_NBRMA_rma_op_t * op);

/* MPIDI_NBRMA_mpich_win_ops (nbrma_win.h), the table of windows without
 * component state, is defined here. */

#endif /* NBRMA_MPICH_PATH_H_INCLUDED */
