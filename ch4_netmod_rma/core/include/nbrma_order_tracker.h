/*
 * mpich-nbrma core: what the ordering of an engine window (mpi_win_order=true,
 * Quo Vadis MPI RMA, section 2.2) knows per target, and the one completion
 * wait it keeps. Before an ordered operation goes, rule O1 (nbrma_route.h's
 * nbrma_order_step_for) compares the way it travels with the ways in flight
 * toward its target; this object keeps those ways and says when a wait for
 * their completion covered them:
 *
 *   T1  every operation issued on the window adds the way it left in flight
 *       (NBRMA_WAY_* bits) to its target's ways, ordered or not (a duplicated
 *       handle may order what another handle issued before); before the
 *       tracker exists a target's past is unknown, so every target starts
 *       with both ways in flight;
 *   T2  one wait for completion at a time (the glue's: a ledger wait, an
 *       endpoint flush where UCX carried operations, MPIDIG's counters where
 *       active messages did), toward one rank; it covers what was issued
 *       toward that rank before it began;
 *   T3  the glue reports the wait's end on behalf of an operation toward a
 *       rank: if the wait was toward that rank and no operation toward it
 *       was noted after the wait began, its ways clear (with or without an
 *       error: the glue reports the error); a wait toward another rank ends
 *       without clearing anything. Either way no wait is in progress then:
 *       the next one begins toward the rank that asks.
 *
 * The glue (ch4/epochs/ordered_ops.c) keeps the ledger wait, its outcome and
 * the worker fence. Plain C interface, no MPICH header: unit-tested without
 * MPI (test/unit/test_order_tracker.cpp). Not thread-safe: the glue calls it
 * under MPICH's global critical section.
 */

#ifndef NBRMA_ORDER_TRACKER_H_INCLUDED
#define NBRMA_ORDER_TRACKER_H_INCLUDED

#include "nbrma_route.h"        /* nbrma_way, nbrma_order_step */

#ifdef __cplusplus
extern "C" {
#endif

typedef struct nbrma_order_tracker nbrma_order_tracker;

/* For a window of `n_ranks` ranks, each with both ways in flight (T1).
 * NBRMA_OK; NBRMA_ERR_ARG for a NULL `tracker` or a negative n_ranks;
 * NBRMA_ERR_NOMEM when out of memory (*tracker is then NULL). */
int nbrma_order_tracker_create(int n_ranks, nbrma_order_tracker ** tracker);
void nbrma_order_tracker_destroy(nbrma_order_tracker * tracker);

/* T1: an operation toward `rank` went and left `way` in flight
 * (NBRMA_WAY_NONE: it was performed when its call returned, which changes
 * nothing). Ranks outside the window are ignored. */
void nbrma_order_tracker_note(nbrma_order_tracker * tracker, int rank, nbrma_way way);

/* The ways (NBRMA_WAY_* bits) in flight toward `rank` since their last
 * completion; outside the window both, as for an unknown past. */
unsigned nbrma_order_tracker_in_flight(const nbrma_order_tracker * tracker, int rank);

/* O1 on the ways in flight toward `rank`: what an ordered operation toward
 * it that travels `travels` needs before it goes
 * (nbrma_order_step_for(nbrma_order_tracker_in_flight(rank), travels)). */
nbrma_order_step nbrma_order_tracker_step(const nbrma_order_tracker * tracker, int rank,
                                          nbrma_way travels);

/* The rank of the wait in progress (T2), or -1. */
int nbrma_order_tracker_waiting(const nbrma_order_tracker * tracker);

/* T2: a wait toward `rank` began; it covers what was noted toward `rank`
 * until now. NBRMA_ERR_SYNC while another wait is in progress,
 * NBRMA_ERR_RANK outside the window; both change nothing. */
int nbrma_order_tracker_begin_wait(nbrma_order_tracker * tracker, int rank);

/* The wait could not be handed to whatever completes it: none is in
 * progress, and nothing clears. */
void nbrma_order_tracker_cancel_wait(nbrma_order_tracker * tracker);

/* T3: the wait in progress ended (released, with or without an error), seen
 * on behalf of an operation toward `rank`. Without a wait in progress,
 * nothing happens. */
void nbrma_order_tracker_wait_ended(nbrma_order_tracker * tracker, int rank);

#ifdef __cplusplus
}
#endif
#endif /* NBRMA_ORDER_TRACKER_H_INCLUDED */
