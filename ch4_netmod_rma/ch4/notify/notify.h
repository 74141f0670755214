/*
 * mpich-nbrma: notified RMA with counters (Intel MPI's MPIX_Win_create_notify
 * family; the MPI Forum's notified-RMA proposal; Quo Vadis MPI RMA, section
 * 5.2): per window and process, counters that notifying operations of other
 * processes increment, and requests that complete when a counter reaches a
 * value.
 *
 * The origin issues the operation through the window's table with a request
 * of its own (the remote-completing twin of a put or accumulate, a plain
 * request-based get, whose completion means the data was read), offering the
 * increment to the code that issues it: where the core's rule R6
 * (nbrma_notice_rides) allows, the increment follows the data at once as a
 * UCX atomic on the target's endpoint, and no request is made. Where R6 does
 * not and the target's CPU applies the put anyway (an active message, RDMA
 * that UCX emulates over tcp), a contiguous put goes as MPIDIG's active
 * message with the increment inside (rule R7, patch 0037): the target
 * applies it after the data, and no request is made either. Otherwise,
 * once the request completes, the completion ledger's callback increments
 * the target's counter: a UCX atomic add where this process has the key of
 * the target's counters (counter_memory.h), an active message otherwise.
 */

#ifndef NBRMA_NOTIFY_H_INCLUDED
#define NBRMA_NOTIFY_H_INCLUDED

#include "nbrma_win.h"
#include "nbrma_route.h"

/* The counter increment of a notified operation, offered to the code that
 * issues the operation (MPIDI_NBRMA_rma_op_t's notify_behind). */
typedef struct MPIDI_NBRMA_notify_behind {
    MPIR_Win *win;
    struct MPIDI_NBRMA_counter_memory *memory;  /* win's counters, found by the call */
    int idx;
    bool sent;                  /* it followed the data, or went inside its message */
} MPIDI_NBRMA_notify_behind_t;

int MPIDI_NBRMA_notify_register_handlers(void);
/* MPIR_Win_create_notify_impl (collective: `n` counters at every process of
 * `win`), _free_notify_impl (collective: the counters go; this process's
 * increments still pending leave first), _get_notify_impl, _set_notify_impl
 * and _notify_request_impl (a request that completes once counter `idx`
 * holds at least `value`) are the bindings' (MPICH's generated prototypes). */
/* MPIX_Put_notify & co.: `op` (a put, get or accumulate; its request and
 * notify_behind fields are set here) through the window's table, and the
 * increment of counter `idx` at its target behind it or once it completed. */
int MPIDI_NBRMA_notify_rma(MPIDI_NBRMA_rma_op_t * op, int idx, MPIR_Win * win);
/* Called by the issuer right after it performed an operation that carries
 * `nb`, which took `route` toward `target`: sends the increment at once, as
 * a UCX atomic behind the data, if rule R6 allows it and UCX takes it
 * (nb->sent, and the result). */
bool MPIDI_NBRMA_notify_send_behind(MPIDI_NBRMA_notify_behind_t * nb, int target,
                                    nbrma_route route);
/* Rule R7 (nbrma_notice_in_message) for the put or get `op` that carries
 * `nb` and would take *route: whether the increment goes inside the
 * operation's own active message instead; then *route says how it travels. */
bool MPIDI_NBRMA_notice_in_message(MPIDI_NBRMA_notify_behind_t * nb,
                                   const MPIDI_NBRMA_rma_op_t * op, nbrma_route * route);
/* Sends such a put or get as MPIDIG's active message with the increment in
 * its header (patches 0037, 0038): the target applies a put's after the data,
 * before the acknowledgement that completes the put here, and a get's once
 * the reply that carries the data was sent. nb->sent then. */
int MPIDI_NBRMA_notify_in_message(MPIDI_NBRMA_notify_behind_t * nb,
                                  const MPIDI_NBRMA_rma_op_t * op);
/* At MPI_Win_free, after the ledger's waits on `win` (and so this process's
 * pending increments) were settled: completes its waiting requests with
 * MPI_ERR_WIN and forgets its counters. */
int MPIDI_NBRMA_notify_forget_window(MPIR_Win * win);

#endif /* NBRMA_NOTIFY_H_INCLUDED */
