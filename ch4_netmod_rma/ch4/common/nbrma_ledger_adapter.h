/*
 * mpich-nbrma: the glue of the completion ledger (core/include/nbrma_ledger.h).
 *
 * A request handed to the adapter completes once what it waits for is
 * complete: endpoint flushes, which the ledger numbers per peer and shares
 * among the requests that ask before one starts, and outside parts that the
 * ledger cannot see (MPIDIG's active-message counters, an operation's own
 * request), which the adapter checks. One poller drives it all. The rules
 * (which flush covers which request, when a request is released) are the
 * ledger's; the adapter starts and tests UCX flushes, reads MPIDIG's
 * counters and completes requests.
 *
 * Nonblocking flushes of windows without the engine (flush_requests.c) and
 * remote-completing requests (remote_requests.c) wait here.
 */

#ifndef NBRMA_LEDGER_ADAPTER_H_INCLUDED
#define NBRMA_LEDGER_ADAPTER_H_INCLUDED

#include "nbrma_win.h"

/* What a request waits for, toward window rank `target` of its window
 * (NBRMA_ALL_RANKS: every rank). */
typedef struct MPIDI_NBRMA_ledger_needs {
    int target;
    /* Endpoints to flush: where MPICH's UCX RDMA reaches the target on this
     * window, where also_flush[rank] says the component issued RDMA (may be
     * NULL), or, with every_endpoint, the target's endpoint whatever. */
    const bool *also_flush;
    bool every_endpoint;
    /* MPIDIG's active-message operations toward the target: acknowledged, or
     * sent only if am_local */
    bool am_counters;
    bool am_local;
    /* an operation's own request (NULL: none), whose error becomes the
     * waiting request's; the adapter takes over the caller's reference */
    MPIR_Request *op_req;
} MPIDI_NBRMA_ledger_needs_t;

/* `req` (a request of MPIDI_NBRMA_request_create) completes once everything
 * `needs` says is complete. On error nothing was started and `req` and
 * needs->op_req are left to the caller. */
int MPIDI_NBRMA_ledger_wait_for(MPIR_Win * win, const MPIDI_NBRMA_ledger_needs_t * needs,
                                MPIR_Request * req);

/* Completes every request of `win` still waiting (MPI_Win_free). */
int MPIDI_NBRMA_ledger_settle(MPIR_Win * win);

#endif /* NBRMA_LEDGER_ADAPTER_H_INCLUDED */
