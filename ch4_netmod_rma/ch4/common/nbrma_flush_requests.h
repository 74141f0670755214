/*
 * mpich-nbrma: nonblocking flushes (MPIX_Win_iflush, _iflush_local,
 * _iflush_all, _iflush_local_all) of windows whose epochs MPICH itself keeps:
 * windows without the engine and dynamic windows. Engine windows flush
 * through the engine's flush ages instead (epochs/sync_calls.c).
 */

#ifndef NBRMA_FLUSH_REQUESTS_H_INCLUDED
#define NBRMA_FLUSH_REQUESTS_H_INCLUDED

#include "nbrma_win.h"

/* Starts the flush `call` (kind MPIDI_NBRMA_SYNC_FLUSH; any other kind is an
 * epoch call that such windows do not offer: MPI_ERR_RMA_SYNC). also_flush
 * (per rank, may be NULL) names targets the component issued RDMA to that
 * MPICH does not know of. */
int MPIDI_NBRMA_flush_request_start(const MPIDI_NBRMA_sync_call_t * call, MPIR_Win * win,
                                    const bool * also_flush, MPIR_Request ** request);
/* MPI_Win_free completes what is still pending through
 * MPIDI_NBRMA_ledger_finish_window (ledger_adapter.h). */

#endif /* NBRMA_FLUSH_REQUESTS_H_INCLUDED */
