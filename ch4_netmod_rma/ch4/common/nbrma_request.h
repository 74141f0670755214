/*
 * mpich-nbrma: the RMA requests that the component hands out (MPIX_Win_i*,
 * MPI_Rput & co. on its windows) and the waits of its blocking calls.
 */

#ifndef NBRMA_REQUEST_H_INCLUDED
#define NBRMA_REQUEST_H_INCLUDED

/* A new RMA request with two references: the one its completion drops
 * (MPID_Request_complete) and the caller's. */
int MPIDI_NBRMA_request_create(MPIR_Request ** req_out);
/* A request of MPIDI_NBRMA_request_create that was never handed out nor
 * completed: both references go. */
void MPIDI_NBRMA_request_discard(MPIR_Request * req);
/* *req_out = a request that is complete at once (as for MPI_Rput to
 * MPI_PROC_NULL). */
int MPIDI_NBRMA_request_create_complete(MPIR_Request ** req_out);
/* While the progress agent runs (on), the requests made are kept until they
 * complete, so that it can tell whether the application waits for work of
 * its own: MPIDI_NBRMA_requests_outstanding. Off drops them. Both under
 * MPICH's critical section or the agent's guard, as the requests. */
void MPIDI_NBRMA_requests_track(bool on);
bool MPIDI_NBRMA_requests_outstanding(void);
/* Whether any is kept, complete or not: a load, where pruning costs too much
 * (every exit from MPI while the agent asks: rule P6). */
bool MPIDI_NBRMA_requests_kept(void);

/* Waits for `req` with the whole progress engine (progress hooks included),
 * drops the caller's reference and returns the request's error. */
int MPIDI_NBRMA_request_wait(MPIR_Request * req);

#endif /* NBRMA_REQUEST_H_INCLUDED */
