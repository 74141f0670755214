/*
 * mpich-nbrma: operations toward one target performed in issue order
 * (info key mpi_win_order=true, Quo Vadis MPI RMA, section 2.2).
 *
 * An operation travels one of two ways in CH4/UCX: UCX RDMA or atomics on the
 * target's endpoint, or a way UCX cannot order against them (an MPIDIG active
 * message applied by the target's CPU, or a copy this process's CPU makes by
 * cross-memory attach). ucp_worker_fence orders UCX's RDMA and atomics among
 * themselves; nothing orders the two ways against each other (UCX 1.13 orders
 * neither its lanes nor active messages against RMA). So an ordered operation
 * finds, per target, the ways of the operations issued before it, and the
 * core's rule (nbrma_order_step_for, rule O1 of core/src/route.cpp) says:
 *   nothing in flight: it goes; UCX only and it goes by UCX too: a fence;
 *   anything else: what is in flight completes first (an endpoint flush,
 *   MPIDIG's acknowledgements), which costs a round trip and, for active
 *   messages, the target's progress.
 * Every operation on the window is noted once the tracker exists, ordered or
 * not (a duplicated handle may order what another handle issued before);
 * before that, a target's past is unknown and counts as both ways.
 */

#ifndef NBRMA_ORDER_H_INCLUDED
#define NBRMA_ORDER_H_INCLUDED

#include "nbrma_win.h"
#include "nbrma_route.h"        /* nbrma_way, and the rule of what an ordered operation needs */

typedef struct MPIDI_NBRMA_order {
    unsigned char *in_flight;   /* per rank: NBRMA_WAY_* bits since the last completion */
    /* the completion wait in the ledger (one rank at a time) */
    int waiting_rank;           /* its rank, or -1 */
    bool wait_released;
    int wait_error;
    bool noted_since;           /* an operation toward waiting_rank was noted after
                                 * the wait began: it does not cover that one */
} MPIDI_NBRMA_order_t;

int MPIDI_NBRMA_order_create(MPIR_Win * win, MPIDI_NBRMA_order_t ** order_out);
void MPIDI_NBRMA_order_free(MPIDI_NBRMA_order_t * order);
/* Whether an operation toward `rank` that goes `way` (UCX or OTHER) may be
 * issued now and be performed after every operation issued toward `rank`
 * before it. With may_wait it waits until so (*ready is then true); without,
 * it only starts and tests what it needs (callers inside UCX callbacks). */
int MPIDI_NBRMA_order_ready(MPIDI_NBRMA_order_t * order, MPIR_Win * win, int rank,
                            nbrma_way way, bool may_wait, bool *ready);
/* An operation toward `rank` was issued and left `way` in flight (NONE:
 * performed). */
void MPIDI_NBRMA_order_note(MPIDI_NBRMA_order_t * order, int rank, nbrma_way way);

#endif /* NBRMA_ORDER_H_INCLUDED */
