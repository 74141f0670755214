/*
 * mpich-nbrma: request-based notification (Quo Vadis MPI RMA, section 5.2):
 * a put or accumulate that carries a notification id, and a request at the
 * target that completes once a matching operation is complete there.
 *
 * The origin issues the operation as its remote-completing twin (MPIX_Rrput,
 * MPIX_Rraccumulate) through the window's table, and keeps the request; once
 * the request completes (the data is in the target's window), the
 * completion ledger's callback sends the notification as an active message.
 * The target counts arrivals per id: each MPIX_Win_wait_notify takes one, so
 * N notifying operations complete N waits, in any order of arrivals and
 * waits.
 */

#ifndef NBRMA_NOTIFY_H_INCLUDED
#define NBRMA_NOTIFY_H_INCLUDED

int MPIDI_NBRMA_notify_register_handlers(void);
/* Whether `win` can carry notifications: made collectively (it has an id the
 * target knows), not a memory-handle window or a duplicate. */
bool MPIDI_NBRMA_notify_possible(MPIR_Win * win);
/* The notification `notify_id` to `target` follows the operation whose
 * remote-completing request is `data_req` (taken over). */
int MPIDI_NBRMA_notify_after(MPIR_Win * win, int target, int notify_id, MPIR_Request * data_req);
/* A request that completes with the next notification `notify_id` on `win`. */
int MPIDI_NBRMA_notify_wait(MPIR_Win * win, int notify_id, MPIR_Request ** request);
/* At MPI_Win_free, after the ledger's waits on `win` (and so this process's
 * pending notifications) were settled: completes its unmatched waits with
 * MPI_ERR_WIN and forgets its counts. */
int MPIDI_NBRMA_notify_forget_window(MPIR_Win * win);

#endif /* NBRMA_NOTIFY_H_INCLUDED */
