/*
 * mpich-nbrma: requests that complete at the target (MPIX_Rrput,
 * MPIX_Rraccumulate, MPIX_Rrget_accumulate) on windows whose own requests
 * complete at the origin.
 *
 * MPICH's UCX RDMA and the component's RDMA on dynamic windows complete a
 * request once UCX is done with the origin buffer; MPIDIG's active-message
 * operations complete theirs with the target's acknowledgement. A remote
 * request is complete once the operation's own request is and a flush of the
 * target's UCX endpoint, started right after the operation, finished: that
 * flush covers the RDMA (and UCX's emulation of it) issued before it toward
 * that target, not the operations issued after. Engine windows do not need
 * this: their requests complete with the operation's remote completion
 * (epochs/operations.c).
 */

#ifndef NBRMA_REMOTE_REQUESTS_H_INCLUDED
#define NBRMA_REMOTE_REQUESTS_H_INCLUDED

#include "nbrma_win.h"

/* *request holds the request of an operation just issued on `win` toward
 * `target`; it is replaced by one that completes once that request has and
 * the operation is complete at the target. On error *request is left as it
 * was (the operation's own, still valid). */
int MPIDI_NBRMA_remote_request_wrap(MPIR_Win * win, int target, MPIR_Request ** request);
/* MPI_Win_free completes what is still pending through
 * MPIDI_NBRMA_ledger_finish_window (ledger_adapter.h). */

#endif /* NBRMA_REMOTE_REQUESTS_H_INCLUDED */
