/*
 * mpich-nbrma: notified RMA with counters (Intel MPI's MPIX_Win_create_notify
 * family; the MPI Forum's notified-RMA proposal): per window and process,
 * counters that other processes' notifying operations increment, and requests
 * that complete when a counter reaches a value (rules N1-N4 of the core:
 * nbrma_notify_counters.h). The increment travels behind the data at once as
 * a UCX atomic where rule R6 allows (nbrma_notice_rides); else inside a
 * contiguous put's or get's own MPIDIG message where the target's CPU handles
 * the operation anyway (rule R7, patches 0037, 0038); else, once the
 * operation's request completed, as a UCX atomic add where this process has
 * the key of the target's counters (counter_memory.h), or an active message.
 */

#ifndef NBRMA_NOTIFY_H_INCLUDED
#define NBRMA_NOTIFY_H_INCLUDED

#include "nbrma_win.h"
#include "nbrma_route.h"

/* A notified operation's increment, offered to the code that issues the
 * operation (MPIDI_NBRMA_rma_op_t's notify_behind). */
typedef struct MPIDI_NBRMA_notify_behind {
    MPIR_Win *win;
    struct MPIDI_NBRMA_counter_memory *memory;  /* win's counters, found by the call */
    int idx;
    bool sent;                  /* it followed the data, or went inside its message */
} MPIDI_NBRMA_notify_behind_t;

int MPIDI_NBRMA_notify_register_handlers(void);
/* The MPIR_Win_*notify*_impl have MPICH's generated prototypes; create and free
 * are collective; a notify request completes once counter `idx` >= `value`. */
/* MPIX_Put_notify & co.: `op` (put, get or accumulate) through the window's
 * table with a request of its own (remote completion but for a get, whose
 * completion means the data was read), and counter `idx`'s increment. */
int MPIDI_NBRMA_notify_rma(MPIDI_NBRMA_rma_op_t * op, int idx, MPIR_Win * win);
/* The issuer, right after `nb`'s operation took `route` toward `target`: the
 * increment as a UCX atomic behind the data, if rule R6 allows and UCX takes
 * it (nb->sent, returned). */
bool MPIDI_NBRMA_notify_send_behind(MPIDI_NBRMA_notify_behind_t * nb, int target,
                                    nbrma_route route);
/* Rule R7 for `op`, which would take *route: whether the increment goes
 * inside the operation's own active message; then *route says how it goes. */
bool MPIDI_NBRMA_notice_in_message(MPIDI_NBRMA_notify_behind_t * nb,
                                   const MPIDI_NBRMA_rma_op_t * op, nbrma_route * route);
/* Sends such a put or get as MPIDIG's message with the increment in its
 * header: the target applies a put's after the data, before the ack that
 * completes the put here, a get's once the reply was sent. Sets nb->sent. */
int MPIDI_NBRMA_notify_in_message(MPIDI_NBRMA_notify_behind_t * nb,
                                  const MPIDI_NBRMA_rma_op_t * op);
/* MPI_Win_free, once the ledger's waits on `win` (this process's pending
 * increments) settled: waiting requests fail with MPI_ERR_WIN, counters go. */
int MPIDI_NBRMA_notify_forget_window(MPIR_Win * win);

#endif /* NBRMA_NOTIFY_H_INCLUDED */
