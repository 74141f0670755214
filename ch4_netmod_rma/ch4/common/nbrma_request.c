/*
 * mpich-nbrma: the component's RMA requests (request.h).
 */

#include "mpidimpl.h"
#include "nbrma_request.h"
#include "held_refs.h"

/* The requests made while the progress agent runs, each with a reference of
 * this table's, until the agent finds them complete (formats/held_refs.h). */
static struct {
    bool on;
    nbrma_held_refs reqs;
} outstanding;

static bool request_complete(void *req)
{
    return MPIR_Request_is_complete((MPIR_Request *) req);
}

static void request_free(void *req)
{
    MPIR_Request_free((MPIR_Request *) req);
}

/* A request the table cannot take (no memory) goes untracked: the agent then
 * takes the application for idle a little early, and serves it paced. */
static void track(MPIR_Request * req)
{
    if (!nbrma_held_refs_reserve(&outstanding.reqs, request_complete, request_free))
        return;
    MPIR_Request_add_ref(req);
    nbrma_held_refs_add(&outstanding.reqs, req);
}

void MPIDI_NBRMA_requests_track(bool on)
{
    if (!on) {
        nbrma_held_refs_prune(&outstanding.reqs, true, request_complete, request_free);
        nbrma_held_refs_free(&outstanding.reqs);
    }
    outstanding.on = on;
}

bool MPIDI_NBRMA_requests_outstanding(void)
{
    nbrma_held_refs_prune(&outstanding.reqs, false, request_complete, request_free);
    return outstanding.reqs.n > 0;
}

bool MPIDI_NBRMA_requests_kept(void)
{
    return outstanding.reqs.n > 0;
}

int MPIDI_NBRMA_request_create(MPIR_Request ** req_out)
{
    int mpi_errno = MPI_SUCCESS;
    MPIR_Request *req = MPIR_Request_create_from_pool_safe(MPIR_REQUEST_KIND__RMA, 0, 2);

    MPIR_ERR_CHKANDJUMP(req == NULL, mpi_errno, MPIX_ERR_NOREQ, "**nomemreq");
    if (outstanding.on)
        track(req);
    *req_out = req;
  fn_exit:
    return mpi_errno;
  fn_fail:
    goto fn_exit;
}

void MPIDI_NBRMA_request_discard(MPIR_Request * req)
{
    if (outstanding.on && nbrma_held_refs_remove(&outstanding.reqs, req))
        MPIR_Request_free(req);
    MPIR_Request_free(req);
    MPIR_Request_free(req);
}

int MPIDI_NBRMA_request_create_complete(MPIR_Request ** req_out)
{
    int mpi_errno = MPI_SUCCESS;

    *req_out = MPIR_Request_create_complete(MPIR_REQUEST_KIND__RMA);
    MPIR_ERR_CHKANDJUMP(*req_out == NULL, mpi_errno, MPIX_ERR_NOREQ, "**nomemreq");
  fn_exit:
    return mpi_errno;
  fn_fail:
    goto fn_exit;
}

int MPIDI_NBRMA_request_wait(MPIR_Request * req)
{
    int mpi_errno = MPIR_Wait_impl(req, MPI_STATUS_IGNORE);

    if (mpi_errno == MPI_SUCCESS)
        mpi_errno = req->status.MPI_ERROR;
    MPIR_Request_free(req);
    return mpi_errno;
}
