/*
 * mpich-nbrma core: the completion ledger. One answer to "is what a request
 * waits for complete", whatever the request is (a nonblocking flush of a
 * window without the engine, a remote-completing operation, ...).
 *
 * The model is UCX's own (ucp_ep_ext_t's send_sn/cmpl_sn): one per-peer
 * object, made at first contact, holding two sequence numbers of endpoint
 * flushes, `started` and `finished`. A flush of a peer's endpoint finishes
 * once everything issued toward that peer before it started is complete, so
 * a waiter that needs "what was issued toward peer p until now" needs the
 * flush numbered started(p) + 1: the next one started. Every waiter that
 * asks before that flush starts shares it; a flush that finishes releases
 * every waiter at or below its number (flushes may finish out of order: a
 * later one covers everything an earlier one does). What the ledger cannot
 * see, because another layer counts it (MPIDIG's active-message counters, an
 * operation's own request), is an outside part of the waiter, which the glue
 * reports done.
 *
 * The glue's adapter (ch4/common/nbrma_completion.c) starts the flushes the
 * ledger asks for, tells it which finished, checks the outside parts and
 * completes the requests of released waiters; it holds no rule of its own.
 * Plain C interface, no MPICH or UCX header: unit-tested and simulated
 * without MPI (test/unit/test_ledger.cpp). Not thread-safe: the glue calls it
 * under MPICH's global critical section.
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

/* A waiter; 0 is never one. */
typedef uint64_t nbrma_waiter_id;

/* NULL when out of memory. */
nbrma_ledger *nbrma_ledger_create(void);
void nbrma_ledger_destroy(nbrma_ledger * ledger);

/* A new waiter, holding `cookie` for the glue. It is released only after
 * nbrma_ledger_waiter_armed(), once every part added before is done: a
 * waiter without parts is released at arming. Returns 0 when out of memory. */
nbrma_waiter_id nbrma_ledger_waiter_new(nbrma_ledger * ledger, void *cookie);

/* The waiter needs everything issued toward `peer` until now complete: the
 * next flush of that peer started from now on. Returns false when out of
 * memory (the waiter is then unchanged). */
bool nbrma_ledger_waiter_needs_flush(nbrma_ledger * ledger, nbrma_waiter_id waiter,
                                     nbrma_peer_key peer);

/* The waiter needs something only the glue can tell: one more outside part,
 * reported with nbrma_ledger_outside_done. */
void nbrma_ledger_waiter_needs_outside(nbrma_ledger * ledger, nbrma_waiter_id waiter);

/* No more parts: the waiter may be released. */
void nbrma_ledger_waiter_armed(nbrma_ledger * ledger, nbrma_waiter_id waiter);

/* One outside part of the waiter is done; a nonzero `error` (the glue's
 * error code) is reported with the waiter's release, the first one wins. */
void nbrma_ledger_outside_done(nbrma_ledger * ledger, nbrma_waiter_id waiter, int error);

/* A flush the glue must start now: its peer and number. False when none is
 * wanted. The ledger counts it started at once; a flush that could not start
 * is reported finished with its error. */
bool nbrma_ledger_flush_to_start(nbrma_ledger * ledger, nbrma_peer_key * peer, uint64_t * seq);

/* The flush `seq` of `peer` finished (`error` nonzero: failed, which every
 * waiter it releases reports). */
void nbrma_ledger_flush_finished(nbrma_ledger * ledger, nbrma_peer_key peer, uint64_t seq,
                                 int error);

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
