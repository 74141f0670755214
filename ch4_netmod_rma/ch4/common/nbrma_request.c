/*
 * mpich-nbrma: creating, discarding and waiting for the component's RMA
 * requests (request.h).
 */

#include "mpidimpl.h"
#include "nbrma_request.h"
#include "nbrma_array.h"

/* The requests made while the progress agent runs, each with a reference of
 * this list's, until the agent finds them complete. */
static struct {
    bool on;
    MPIR_Request **reqs;
    size_t n, cap;
} outstanding;

/* Drops the complete ones (all: every one). */
static void prune(bool all)
{
    size_t kept = 0;

    for (size_t i = 0; i < outstanding.n; i++) {
        MPIR_Request *req = outstanding.reqs[i];
        if (all || MPIR_Request_is_complete(req))
            MPIR_Request_free(req);
        else
            outstanding.reqs[kept++] = req;
    }
    outstanding.n = kept;
}

/* A request the list cannot take (no memory) goes untracked: the agent then
 * takes the application for idle a little early, and serves it paced. */
static void track(MPIR_Request * req)
{
    if (outstanding.n == outstanding.cap)
        prune(false);
    if (MPIDI_NBRMA_reserve_one((void **) &outstanding.reqs, outstanding.n, &outstanding.cap,
                                sizeof(*outstanding.reqs), 16) != MPI_SUCCESS)
        return;
    MPIR_Request_add_ref(req);
    outstanding.reqs[outstanding.n++] = req;
}

static void untrack(MPIR_Request * req)
{
    for (size_t i = 0; i < outstanding.n; i++)
        if (outstanding.reqs[i] == req) {
            outstanding.reqs[i] = outstanding.reqs[--outstanding.n];
            MPIR_Request_free(req);
            return;
        }
}

void MPIDI_NBRMA_requests_track(bool on)
{
    if (!on) {
        prune(true);
        MPL_free(outstanding.reqs);
        outstanding.reqs = NULL;
        outstanding.cap = 0;
    }
    outstanding.on = on;
}

bool MPIDI_NBRMA_requests_outstanding(void)
{
    prune(false);
    return outstanding.n > 0;
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
    if (outstanding.on)
        untrack(req);
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
