/*
 * mpich-nbrma core: the records of ordered operations (mpi_win_order=true,
 * Quo Vadis MPI RMA, section 2.2) that an engine window holds because they
 * may not go yet. The engine replays an epoch's records in their order,
 * possibly inside a UCX callback where nothing may wait; an ordered record
 * whose target still has earlier operations in flight that only their
 * completion orders is held here instead, and the rules are:
 *
 *   H1  held records keep their replay order;
 *   H2  only the first record held toward a target (its head) may go, once
 *       what was issued before it is complete (the glue asks the transport's
 *       order, nbrma_route.h's nbrma_order_step_for); the target's later
 *       records wait behind it, even where they alone could go;
 *   H3  an ordered operation toward a target with held records, replayed or
 *       called directly by the application, waits behind them.
 *
 * The glue performs a taken record at once (held_records.c). Plain C
 * interface, no MPICH header: unit-tested without MPI
 * (test/unit/test_held_queue.cpp). Not thread-safe: the glue calls it under
 * MPICH's global critical section.
 */

#ifndef NBRMA_HELD_QUEUE_H_INCLUDED
#define NBRMA_HELD_QUEUE_H_INCLUDED

#include <stdbool.h>
#include <stddef.h>

#include "nbrma_core.h"         /* nbrma_op_ticket */

#ifdef __cplusplus
extern "C" {
#endif

typedef struct nbrma_held_queue nbrma_held_queue;

/* NULL when out of memory. */
nbrma_held_queue *nbrma_held_queue_create(void);
void nbrma_held_queue_destroy(nbrma_held_queue * queue);

/* Holds `record` (the glue's, with its engine ticket) toward `target`
 * behind everything held so far. False when out of memory. */
bool nbrma_held_queue_hold(nbrma_held_queue * queue, int target, void *record,
                           nbrma_op_ticket ticket);

/* H3: whether records toward `target` are held. */
bool nbrma_held_queue_toward(const nbrma_held_queue * queue, int target);

/* Records held. */
size_t nbrma_held_queue_size(const nbrma_held_queue * queue);

/* H1, H2: the next head in replay order, from *cursor = 0 on; false when
 * there is none. */
bool nbrma_held_queue_next_head(const nbrma_held_queue * queue, size_t * cursor, void **record);

/* Takes the head the last nbrma_held_queue_next_head call with this cursor
 * returned, to be performed now; the next call goes on from there (the
 * target's next record, now its head, included). */
void nbrma_held_queue_take(nbrma_held_queue * queue, size_t * cursor, void **record,
                           nbrma_op_ticket * ticket);

/* Takes any held record, to be dropped (the window is freed); false when
 * there is none. */
bool nbrma_held_queue_drop(nbrma_held_queue * queue, void **record);

#ifdef __cplusplus
}
#endif
#endif /* NBRMA_HELD_QUEUE_H_INCLUDED */
