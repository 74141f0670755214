/*
 * mpich-nbrma: the RMA requests the component hands out; its blocking waits.
 */

#ifndef NBRMA_REQUEST_H_INCLUDED
#define NBRMA_REQUEST_H_INCLUDED

/* A new RMA request with two references: the one its completion drops
 * (MPID_Request_complete) and the caller's. */
int MPIDI_NBRMA_request_create(MPIR_Request ** req_out);
/* A created request never handed out nor completed: both references go. */
void MPIDI_NBRMA_request_discard(MPIR_Request * req);
/* A request complete at once (as for MPI_Rput to MPI_PROC_NULL). */
int MPIDI_NBRMA_request_create_complete(MPIR_Request ** req_out);
/* While the agent runs (on), new requests are kept until complete, so that it
 * sees whether the application waits for its own work; off drops them. Under
 * MPICH's critical section or the agent's guard, as the requests. */
void MPIDI_NBRMA_requests_track(bool on);
bool MPIDI_NBRMA_requests_outstanding(void);
/* Whether any is kept, complete or not: a load, where pruning costs too much
 * (every exit from MPI while the agent asks: rule P6). */
bool MPIDI_NBRMA_requests_kept(void);

/* Waits with full progress, drops the caller's reference, returns its error. */
int MPIDI_NBRMA_request_wait(MPIR_Request * req);

#endif /* NBRMA_REQUEST_H_INCLUDED */
