/*
 * mpich-nbrma core: the completion ledger. One answer to "is what a wait
 * needs complete", whatever waits (a nonblocking flush of a window without
 * the engine, a remote-completing operation, an engine window's completion
 * sweep, a blocking flush, ...).
 *
 * The model is UCX's own (ucp_ep_ext_t's send_sn/cmpl_sn): one per-peer
 * object, made at first contact, holding two sequence numbers of endpoint
 * flushes, `started` and `finished`. The glue starts a flush of a peer's
 * endpoint and takes its number from the ledger; the flush finishes once
 * everything issued toward that peer before it started is complete. A
 * waiter that needs "what was issued toward peer p until now" needs the
 * flush the glue starts now; a flush that finishes releases every waiter at
 * or below its number (flushes may finish out of order: a later one covers
 * everything an earlier one does). What the ledger cannot see, because
 * another layer counts it (MPIDIG's active-message counters, an operation's
 * own request), is an outside part of the waiter, which the glue reports
 * done.
 *
 * A wait whose flushes and outside parts are all done when the glue first
 * looks needs no waiter at all: the glue registers one only for what is
 * still in flight, so that the common case (shared memory, where a flush
 * finishes at once) costs two calls here.
 *
 * The glue's adapter (ch4/common/nbrma_ledger_gather.c and _adapter.c) starts
 * the flushes, tells the ledger which finished, checks the outside parts and
 * acts on the released waiters; it holds no rule of its own. Plain C interface, no MPICH
 * or UCX header: unit-tested and simulated without MPI
 * (test/unit/test_ledger.cpp). Not thread-safe: the glue calls it under
 * MPICH's global critical section.
 */

#ifndef NBRMA_LEDGER_H_INCLUDED
#define NBRMA_LEDGER_H_INCLUDED

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct nbrma_ledger nbrma_ledger;

/* A peer: whatever identifies one endpoint to the glue (a UCX endpoint's
 * address), never 0. */
typedef uintptr_t nbrma_peer_key;

/* A waiter; 0 is never one, and the id of a released waiter names no other
 * waiter later. */
typedef uint64_t nbrma_waiter_id;

/* NULL when out of memory. */
nbrma_ledger *nbrma_ledger_create(void);
void nbrma_ledger_destroy(nbrma_ledger * ledger);

/* A flush of `peer`'s endpoint that the glue starts now: *seq is its
 * number. It covers everything issued toward `peer` before it, and so does
 * every flush started after it. False when out of memory (the peer's object
 * is made at first contact). */
bool nbrma_ledger_start_flush(nbrma_ledger * ledger, nbrma_peer_key peer, uint64_t * seq);

/* The flush `seq` of `peer` finished (`error` nonzero: failed, which every
 * waiter it releases reports). The glue reports the error of a flush that
 * finished before any waiter asked for it itself. */
void nbrma_ledger_flush_finished(nbrma_ledger * ledger, nbrma_peer_key peer, uint64_t seq,
                                 int error);

/* Whether flush `seq` of `peer`, or a later one, finished; if so, *error is
 * the first error of any flush of `peer` that finished (an endpoint whose
 * flush failed stays failed: UCX does not mend it), 0 if none failed. For a
 * wait of endpoint flushes only, which then needs no waiter. Not const: the
 * lookup remembers the peer, as for the glue's other calls. */
bool nbrma_ledger_flush_done(nbrma_ledger * ledger, nbrma_peer_key peer, uint64_t seq,
                             int *error);

/* A new waiter, holding `cookie` for the glue. It is released only after
 * nbrma_ledger_waiter_armed(), once every part added before is done: a
 * waiter without parts is released at arming. Returns 0 when out of memory. */
nbrma_waiter_id nbrma_ledger_waiter_new(nbrma_ledger * ledger, void *cookie);

/* The waiter needs flush `seq` of `peer` (started with
 * nbrma_ledger_start_flush) finished: nothing if it has already. Returns
 * false when out of memory (the waiter is then unchanged). */
bool nbrma_ledger_waiter_needs_flush(nbrma_ledger * ledger, nbrma_waiter_id waiter,
                                     nbrma_peer_key peer, uint64_t seq);

/* The waiter needs something only the glue can tell: one more outside part,
 * reported with nbrma_ledger_outside_done. */
void nbrma_ledger_waiter_needs_outside(nbrma_ledger * ledger, nbrma_waiter_id waiter);

/* No more parts: the waiter may be released. */
void nbrma_ledger_waiter_armed(nbrma_ledger * ledger, nbrma_waiter_id waiter);

/* The waiter fails with `error` (the glue's error code) whatever else it
 * waits for: reported with its release, the first error wins. For what went
 * wrong before the waiter existed (a flush that failed at once) or what the
 * ledger could not keep (no memory for a part). */
void nbrma_ledger_waiter_error(nbrma_ledger * ledger, nbrma_waiter_id waiter, int error);

/* One outside part of the waiter is done; a nonzero `error` (the glue's
 * error code) is reported with the waiter's release, the first one wins. */
void nbrma_ledger_outside_done(nbrma_ledger * ledger, nbrma_waiter_id waiter, int error);

/* A released waiter: its cookie and error (0: complete). False when none is
 * released and not yet taken. */
bool nbrma_ledger_next_released(nbrma_ledger * ledger, void **cookie, int *error);

/* Waiters not yet taken back through nbrma_ledger_next_released. */
size_t nbrma_ledger_waiters(const nbrma_ledger * ledger);

/* Peers the ledger has an object for (each made at first contact). */
size_t nbrma_ledger_peers(const nbrma_ledger * ledger);

/* Bytes a peer object costs, for the memory model of the simulator. */
size_t nbrma_ledger_peer_bytes(void);

#ifdef __cplusplus
}
#endif
#endif /* NBRMA_LEDGER_H_INCLUDED */
