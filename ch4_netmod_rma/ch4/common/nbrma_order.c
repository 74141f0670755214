/*
 * mpich-nbrma: operations toward one target performed in issue order
 * (order.h).
 */

#include "mpidimpl.h"
#include "ucx_impl.h"
#include "nbrma_order.h"
#include "nbrma_ledger_adapter.h"
#include "nbrma_progress.h"

int MPIDI_NBRMA_order_create(MPIR_Win * win, MPIDI_NBRMA_order_t ** order_out)
{
    int mpi_errno = MPI_SUCCESS;
    int nprocs = win->comm_ptr->local_size;
    MPIDI_NBRMA_order_t *order = MPL_calloc(1, sizeof(*order), MPL_MEM_RMA);

    MPIR_ERR_CHKANDJUMP(order == NULL, mpi_errno, MPI_ERR_NO_MEM, "**nomem");
    order->waiting_rank = -1;
    order->in_flight = MPL_malloc(nprocs, MPL_MEM_RMA);
    MPIR_ERR_CHKANDJUMP(order->in_flight == NULL, mpi_errno, MPI_ERR_NO_MEM, "**nomem");
    /* what was issued before is unknown: either way may be in flight */
    memset(order->in_flight, NBRMA_WAY_UCX | NBRMA_WAY_UNFENCED, nprocs);
    *order_out = order;

  fn_exit:
    return mpi_errno;
  fn_fail:
    if (order)
        MPL_free(order->in_flight);
    MPL_free(order);
    goto fn_exit;
}

void MPIDI_NBRMA_order_free(MPIDI_NBRMA_order_t * order)
{
    if (order == NULL)
        return;
    /* MPI_Win_free settled the ledger's waits of the window first */
    MPL_free(order->in_flight);
    MPL_free(order);
}

/* ucp_worker_fence: UCX performs the RDMA and atomics issued on the worker
 * after it once those before it are performed. */
static int fence(MPIR_Win * win)
{
    int mpi_errno = MPI_SUCCESS;
    int vni = MPIDI_UCX_get_win_vni(win);
    ucs_status_t status;

    MPID_THREAD_CS_ENTER(VCI, MPIDI_VCI(vni).lock);
    status = ucp_worker_fence(MPIDI_UCX_global.ctx[vni].worker);
    MPID_THREAD_CS_EXIT(VCI, MPIDI_VCI(vni).lock);
    MPIDI_UCX_CHK_STATUS(status);
  fn_exit:
    return mpi_errno;
  fn_fail:
    goto fn_exit;
}

static int wait_released(void *arg, int error)
{
    MPIDI_NBRMA_order_t *order = arg;

    order->wait_released = true;
    order->wait_error = error;
    return MPI_SUCCESS;
}

/* One step toward the completion of what is in flight toward `rank`: starts
 * the ledger's wait for it (one rank at a time: an endpoint flush where UCX
 * carried operations, MPIDIG's counters where active messages did), or takes
 * the released one. */
static int complete_step(MPIDI_NBRMA_order_t * order, MPIR_Win * win, int rank)
{
    int mpi_errno = MPI_SUCCESS;
    unsigned char *past = &order->in_flight[rank];

    if (order->waiting_rank < 0) {
        MPIDI_NBRMA_ledger_wait_t wait;

        MPIDI_NBRMA_ledger_wait_init(&wait, win);
        if (*past & NBRMA_WAY_UCX)
            mpi_errno = MPIDI_NBRMA_ledger_need_endpoint(&wait, rank, false);
        if ((*past & NBRMA_WAY_UNFENCED) && mpi_errno == MPI_SUCCESS)
            mpi_errno = MPIDI_NBRMA_ledger_need_am(&wait, rank, false);
        if (mpi_errno != MPI_SUCCESS) {
            MPIDI_NBRMA_ledger_cancel(&wait);
            MPIR_ERR_CHECK(mpi_errno);
        }
        order->waiting_rank = rank;
        order->wait_released = false;
        order->noted_since = false;
        mpi_errno = MPIDI_NBRMA_ledger_call_back(&wait, wait_released, order);
        if (mpi_errno != MPI_SUCCESS) {
            order->waiting_rank = -1;
            MPIR_ERR_CHECK(mpi_errno);
        }
    }
    if (!order->wait_released)
        goto fn_exit;
    mpi_errno = order->wait_error;
    /* the wait covers what was issued toward its rank before it began */
    if (order->waiting_rank == rank && !order->noted_since)
        *past = NBRMA_WAY_NONE;
    order->waiting_rank = -1;   /* another rank's, or not all: ours next time */
    MPIR_ERR_CHECK(mpi_errno);

  fn_exit:
    return mpi_errno;
  fn_fail:
    goto fn_exit;
}

int MPIDI_NBRMA_order_ready(MPIDI_NBRMA_order_t * order, MPIR_Win * win, int rank,
                            nbrma_way way, bool may_wait, bool *ready)
{
    int mpi_errno = MPI_SUCCESS;
    unsigned char *past = &order->in_flight[rank];

    *ready = false;
    switch (nbrma_order_step_for(*past, way)) {
        case NBRMA_ORDER_GO:
            *ready = true;
            goto fn_exit;
        case NBRMA_ORDER_FENCE:
            mpi_errno = fence(win);
            MPIR_ERR_CHECK(mpi_errno);
            *ready = true;
            goto fn_exit;
        default:
            break;
    }
    for (;;) {
        mpi_errno = complete_step(order, win, rank);
        MPIR_ERR_CHECK(mpi_errno);
        if (*past == NBRMA_WAY_NONE || !may_wait)
            break;
        mpi_errno = MPIDI_NBRMA_progress_wait_round();
        MPIR_ERR_CHECK(mpi_errno);
    }
    *ready = *past == NBRMA_WAY_NONE;

  fn_exit:
    return mpi_errno;
  fn_fail:
    goto fn_exit;
}

void MPIDI_NBRMA_order_note(MPIDI_NBRMA_order_t * order, int rank, nbrma_way way)
{
    order->in_flight[rank] |= (unsigned char) way;
    if (rank == order->waiting_rank && way != NBRMA_WAY_NONE)
        order->noted_since = true;
}
