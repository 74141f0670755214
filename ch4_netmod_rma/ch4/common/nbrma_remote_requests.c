/*
 * mpich-nbrma: requests that complete at the target (remote_requests.h),
 * through the completion ledger (ledger_adapter.h): the operation's own
 * request and a flush of the target's endpoint that started after the
 * operation was issued.
 */

#include "mpidimpl.h"
#include "nbrma_remote_requests.h"
#include "nbrma_ledger_adapter.h"
#include "nbrma_request.h"

int MPIDI_NBRMA_remote_request_wrap(MPIR_Win * win, int target, MPIR_Request ** request)
{
    int mpi_errno = MPI_SUCCESS;
    MPIR_Request *req = NULL;
    MPIDI_NBRMA_ledger_wait_t wait;

    MPIR_FUNC_ENTER;

    mpi_errno = MPIDI_NBRMA_request_create(&req);
    MPIR_ERR_CHECK(mpi_errno);
    MPIDI_NBRMA_ledger_wait_init(&wait, win);
    mpi_errno = MPIDI_NBRMA_ledger_need_endpoint(&wait, target, true);
    if (mpi_errno == MPI_SUCCESS)
        mpi_errno = MPIDI_NBRMA_ledger_need_request(&wait, *request);
    if (mpi_errno == MPI_SUCCESS)
        mpi_errno = MPIDI_NBRMA_ledger_complete_request(&wait, req);
    else
        MPIDI_NBRMA_ledger_cancel(&wait);
    MPIR_ERR_CHECK(mpi_errno);
    *request = req;

  fn_exit:
    MPIR_FUNC_EXIT;
    return mpi_errno;
  fn_fail:
    if (req)
        MPIDI_NBRMA_request_discard(req);
    goto fn_exit;
}
