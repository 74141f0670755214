/*
 * mpich-nbrma: notified RMA with counters (Intel MPI's MPIX_Win_create_notify
 * family; the MPI Forum's notified-RMA proposal; Quo Vadis MPI RMA, section
 * 5.2): per window and process, counters that notifying operations of other
 * processes increment, and requests that complete when a counter reaches a
 * value.
 *
 * The origin issues the operation through the window's table with a request
 * of its own (the remote-completing twin of a put or accumulate, a plain
 * request-based get, whose completion means the data was read); once the
 * request completes, the completion ledger's callback increments the
 * target's counter: a UCX atomic add where this process has the key of the
 * target's counters (counter_memory.h), an active message otherwise.
 */

#ifndef NBRMA_NOTIFY_H_INCLUDED
#define NBRMA_NOTIFY_H_INCLUDED

int MPIDI_NBRMA_notify_register_handlers(void);
/* Whether `win` can carry counters: made collectively (it has an id the
 * target knows), not a memory-handle window or a duplicate. */
bool MPIDI_NBRMA_notify_possible(MPIR_Win * win);
/* Collective: `n` counters at every process of `win`. */
int MPIDI_NBRMA_notify_create(MPIR_Win * win, int n);
/* Collective: the counters go; this process's increments still pending
 * leave first. */
int MPIDI_NBRMA_notify_free(MPIR_Win * win);
/* Whether `win` has a counter `idx` here (an error code if not). */
int MPIDI_NBRMA_notify_check(MPIR_Win * win, int idx);
int MPIDI_NBRMA_notify_get(MPIR_Win * win, int idx, MPI_Count * value);
int MPIDI_NBRMA_notify_set(MPIR_Win * win, int idx, MPI_Count value);
/* A request that completes once counter `idx` holds at least `value`. */
int MPIDI_NBRMA_notify_request(MPIR_Win * win, int idx, MPI_Count value,
                               MPIR_Request ** request);
/* The increment of counter `idx` at `target` follows the operation whose
 * request is `data_req` (taken over). */
int MPIDI_NBRMA_notify_after(MPIR_Win * win, int target, int idx, MPIR_Request * data_req);
/* At MPI_Win_free, after the ledger's waits on `win` (and so this process's
 * pending increments) were settled: completes its waiting requests with
 * MPI_ERR_WIN and forgets its counters. */
int MPIDI_NBRMA_notify_forget_window(MPIR_Win * win);

#endif /* NBRMA_NOTIFY_H_INCLUDED */
