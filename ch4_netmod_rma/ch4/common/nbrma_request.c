/*
 * mpich-nbrma: creating, discarding and waiting for the component's RMA
 * requests (request.h).
 */

#include "mpidimpl.h"
#include "nbrma_request.h"

int MPIDI_NBRMA_request_create(MPIR_Request ** req_out)
{
    int mpi_errno = MPI_SUCCESS;
    MPIR_Request *req = MPIR_Request_create_from_pool_safe(MPIR_REQUEST_KIND__RMA, 0, 2);

    MPIR_ERR_CHKANDJUMP(req == NULL, mpi_errno, MPIX_ERR_NOREQ, "**nomemreq");
    *req_out = req;
  fn_exit:
    return mpi_errno;
  fn_fail:
    goto fn_exit;
}

void MPIDI_NBRMA_request_discard(MPIR_Request * req)
{
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
