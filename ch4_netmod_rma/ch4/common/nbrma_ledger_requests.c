/*
 * mpich-nbrma: requests that the completion ledger completes on windows
 * whose epochs MPICH keeps (ledger_requests.h).
 */

#include "mpidimpl.h"
#include "ucx_impl.h"
#include "nbrma_ledger_requests.h"
#include "nbrma_ledger_adapter.h"
#include "nbrma_request.h"

/* What a request waits for, registered in `wait`. */
typedef int (*need_fn) (MPIDI_NBRMA_ledger_wait_t * wait, const void *arg);

/* *request: a new request that the ledger completes once what `need`
 * registered is complete. */
static int ledger_request(MPIR_Win * win, need_fn need, const void *arg,
                          MPIR_Request ** request)
{
    int mpi_errno = MPI_SUCCESS;
    MPIR_Request *req = NULL;
    MPIDI_NBRMA_ledger_wait_t wait;

    mpi_errno = MPIDI_NBRMA_request_create(&req);
    MPIR_ERR_CHECK(mpi_errno);
    MPIDI_NBRMA_ledger_wait_init(&wait, win);
    mpi_errno = need(&wait, arg);
    if (mpi_errno == MPI_SUCCESS)
        mpi_errno = MPIDI_NBRMA_ledger_complete_request(&wait, req);
    else
        MPIDI_NBRMA_ledger_cancel(&wait);
    MPIR_ERR_CHECK(mpi_errno);
    *request = req;

  fn_exit:
    return mpi_errno;
  fn_fail:
    if (req)
        MPIDI_NBRMA_request_discard(req);
    goto fn_exit;
}

/* A flush to one target is valid inside lock_all, or inside a lock epoch that
 * holds a lock on that target. */
static int check_passive_epoch(MPIR_Win * win, int target)
{
    int mpi_errno = MPI_SUCCESS;

    MPIDIG_EPOCH_CHECK_PASSIVE(win, mpi_errno, goto fn_fail);
    if (target != NBRMA_ALL_RANKS &&
        MPIDIG_WIN(win, sync).access_epoch_type == MPIDIG_EPOTYPE_LOCK) {
        MPIDIG_win_target_t *t = MPIDIG_win_target_find(win, target);
        MPIR_ERR_CHKANDJUMP(t == NULL, mpi_errno, MPI_ERR_RMA_SYNC, "**rmasync");
        MPIDIG_EPOCH_CHECK_TARGET_LOCK(t, mpi_errno, goto fn_fail);
    }

  fn_exit:
    return mpi_errno;
  fn_fail:
    goto fn_exit;
}

typedef struct {
    const MPIDI_NBRMA_sync_call_t *call;
    const bool *also_flush;
} flush_need_t;

/* A flush waits for (1) and (2) of ledger_requests.h toward call->rank. */
static int need_flush(MPIDI_NBRMA_ledger_wait_t * wait, const void *arg)
{
    const flush_need_t *flush = arg;
    int mpi_errno = MPI_SUCCESS;
    int first = flush->call->rank, last = flush->call->rank;

    if (flush->call->rank == NBRMA_ALL_RANKS) {
        first = 0;
        last = wait->win->comm_ptr->local_size - 1;
    }
    for (int r = first; r <= last && mpi_errno == MPI_SUCCESS; r++)
        mpi_errno = MPIDI_NBRMA_ledger_need_endpoint(wait, r,
                                                     flush->also_flush && flush->also_flush[r]);
    if (mpi_errno == MPI_SUCCESS)
        mpi_errno = MPIDI_NBRMA_ledger_need_am(wait, flush->call->rank, flush->call->local);
    return mpi_errno;
}

int MPIDI_NBRMA_flush_request_start(const MPIDI_NBRMA_sync_call_t * call, MPIR_Win * win,
                                    const bool * also_flush, MPIR_Request ** request)
{
    flush_need_t flush = {.call = call,.also_flush = also_flush };
    int mpi_errno = MPI_SUCCESS;

    MPIR_FUNC_ENTER;
    /* the nonblocking epoch calls need the engine, which the window's
     * creation turned off */
    MPIR_ERR_CHKANDJUMP1(call->kind != NBRMA_SYNC_FLUSH, mpi_errno, MPI_ERR_RMA_SYNC,
                         "**nbrmaepochsoff", "**nbrmaepochsoff %s",
                         nbrma_sync_nonblocking_name(call->kind));
    mpi_errno = check_passive_epoch(win, call->rank);
    if (mpi_errno == MPI_SUCCESS)
        mpi_errno = ledger_request(win, need_flush, &flush, request);

  fn_exit:
    MPIR_FUNC_EXIT;
    return mpi_errno;
  fn_fail:
    goto fn_exit;
}

typedef struct {
    int target;
    MPIR_Request *own;
} remote_need_t;

/* A remote request waits for the operation's own request and a flush of the
 * target's endpoint that starts now. */
static int need_remote(MPIDI_NBRMA_ledger_wait_t * wait, const void *arg)
{
    const remote_need_t *remote = arg;
    int mpi_errno = MPIDI_NBRMA_ledger_need_endpoint(wait, remote->target, true);

    if (mpi_errno == MPI_SUCCESS)
        mpi_errno = MPIDI_NBRMA_ledger_need_request(wait, remote->own);
    return mpi_errno;
}

int MPIDI_NBRMA_remote_request_wrap(MPIR_Win * win, int target, const MPIDI_NBRMA_rma_op_t * op)
{
    remote_need_t remote;

    if (!op->remote_completion)
        return MPI_SUCCESS;
    remote.target = target;
    remote.own = *op->request;
    return ledger_request(win, need_remote, &remote, op->request);
}
