/*
 * mpich-nbrma: RDMA the component issues on a dynamic window (memory-handle
 * windows, cached rkeys) and its completion: MPIDIG does not know of it, so
 * unlocks, flushes and the free of a memory-handle window complete it here.
 */

#include "mpidimpl.h"
#include "ucx_impl.h"
#include "dynamic_win.h"
#include "nbrma_ledger_adapter.h"
#include "nbrma_request.h"
#include "nbrma_ucx_lanes.h"

bool MPIDI_NBRMA_rdma_eligible(const MPIDI_NBRMA_rma_op_t * op, MPIDI_NBRMA_rdma_args_t * args)
{
    MPIDI_NBRMA_local_buffer_t local = MPIDI_NBRMA_local_buffer(op);
    int local_contig, target_contig;
    size_t local_bytes, target_bytes;
    MPI_Aint local_true_lb, target_true_lb;

    if (op->kind != MPIDI_NBRMA_OP_PUT && op->kind != MPIDI_NBRMA_OP_GET)
        return false;
    MPIDI_Datatype_check_origin_target_contig_size_lb(local.datatype, op->target_datatype,
                                                      local.count, op->target_count,
                                                      local_contig, target_contig,
                                                      local_bytes, target_bytes,
                                                      local_true_lb, target_true_lb);
    (void) target_bytes;
    if (!local_contig || !target_contig || local_bytes == 0 ||
        MPIR_GPU_query_pointer_is_dev(local.addr))
        return false;
    args->is_put = op->kind == MPIDI_NBRMA_OP_PUT;
    args->local_buf = (char *) MPIR_get_contig_ptr(local.addr, local_true_lb);
    args->bytes = local_bytes;
    args->target_true_lb = target_true_lb;
    return true;
}

/* Not over tcp: UCX emulates put and get there with messages the target's CPU
 * answers, as MPICH's active messages, and a flush costs one more round trip.
 * Decided once per target (UCX prints its lane table for it). */
bool MPIDI_NBRMA_rdma_pays(MPIDI_NBRMA_dynamic_win_t * dw, MPIR_Win * win, int target)
{
    int lanes, emulated;

    if (nbrma_rdma_targets_pays(&dw->rdma, target) != NBRMA_RDMA_PAYS_UNKNOWN)
        return nbrma_rdma_targets_pays(&dw->rdma, target) == NBRMA_RDMA_PAYS;
    MPIDI_NBRMA_win_rma_lanes(win, target, &lanes, &emulated);
    return nbrma_rdma_targets_learn(&dw->rdma, target, lanes, emulated);
}

static void rdma_request_done(void *ucp_request, ucs_status_t status, void *user_data)
{
    MPIR_Request *req = user_data;

    if (status != UCS_OK)
        req->status.MPI_ERROR = MPI_ERR_OTHER;
    MPID_Request_complete(req);
    ucp_request_free(ucp_request);
}

int MPIDI_NBRMA_rdma_transfer(MPIR_Win * win, int target, ucp_rkey_h rkey,
                              const MPIDI_NBRMA_rdma_args_t * args, uint64_t remote_addr,
                              MPIR_Request ** request)
{
    int mpi_errno = MPI_SUCCESS;
    MPIDI_NBRMA_dynamic_win_t *dw = MPIDI_NBRMA_dynamic_win(win);
    int vni = MPIDI_UCX_get_win_vni(win);
    ucp_ep_h ep = MPIDI_UCX_WIN_TO_EP(win, target, vni);
    ucs_status_ptr_t status_ptr;
    ucs_status_t status;
    MPIR_Request *req = NULL;

    if (request == NULL) {
        MPID_THREAD_CS_ENTER(VCI, MPIDI_VCI(vni).lock);
        status = args->is_put ? ucp_put_nbi(ep, args->local_buf, args->bytes, remote_addr, rkey)
            : ucp_get_nbi(ep, args->local_buf, args->bytes, remote_addr, rkey);
        MPID_THREAD_CS_EXIT(VCI, MPIDI_VCI(vni).lock);
        MPIDI_UCX_CHK_STATUS(status);
    } else {
        ucp_request_param_t param = {
            .op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA,
            .cb.send = rdma_request_done
        };
        mpi_errno = MPIDI_NBRMA_request_create(&req);
        MPIR_ERR_CHECK(mpi_errno);
        param.user_data = req;
        MPID_THREAD_CS_ENTER(VCI, MPIDI_VCI(vni).lock);
        status_ptr = args->is_put ?
            ucp_put_nbx(ep, args->local_buf, args->bytes, remote_addr, rkey, &param)
            : ucp_get_nbx(ep, args->local_buf, args->bytes, remote_addr, rkey, &param);
        MPID_THREAD_CS_EXIT(VCI, MPIDI_VCI(vni).lock);
        if (UCS_PTR_IS_ERR(status_ptr)) {
            MPIDI_NBRMA_request_discard(req);
            MPIDI_UCX_CHK_STATUS(UCS_PTR_STATUS(status_ptr));
        }
        if (status_ptr == NULL)
            MPID_Request_complete(req); /* done at once: no callback comes */
        *request = req;
    }

    nbrma_rdma_targets_issued(&dw->rdma, target);

  fn_exit:
    return mpi_errno;
  fn_fail:
    goto fn_exit;
}

void MPIDI_NBRMA_rdma_destroy_retired(MPIDI_NBRMA_dynamic_win_t * dw, int rank)
{
    void *rkey;

    while ((rkey = nbrma_rdma_targets_take_retired(&dw->rdma, rank, NBRMA_ALL_RANKS)))
        ucp_rkey_destroy(rkey);
}

/* UCX must see no operation using an rkey it destroys, and the rkey cache
 * drops keys inside a UCX callback, where it may not wait: with RDMA toward
 * the target outstanding, the key waits for the next completion. */
void MPIDI_NBRMA_rdma_retire_rkey(MPIDI_NBRMA_dynamic_win_t * dw, int target, ucp_rkey_h rkey)
{
    /* nothing outstanding, or no memory to queue it: all that can be done */
    if (!nbrma_rdma_targets_retire(&dw->rdma, target, rkey))
        ucp_rkey_destroy(rkey);
}

int MPIDI_NBRMA_rdma_complete(MPIR_Win * win, int rank)
{
    int mpi_errno = MPI_SUCCESS;
    MPIDI_NBRMA_dynamic_win_t *dw = MPIDI_NBRMA_dynamic_win(win);
    MPIDI_NBRMA_ledger_wait_t wait;
    int first, last;

    if (dw == NULL || !nbrma_rdma_targets_to_complete(&dw->rdma, rank, NBRMA_ALL_RANKS, &first,
                                                      &last))
        goto fn_exit;
    /* endpoint flushes: a worker flush is not reliable here (ledger_adapter.h) */
    MPIDI_NBRMA_ledger_wait_init(&wait, win);
    for (int r = first; r <= last && mpi_errno == MPI_SUCCESS; r++)
        if (dw->rdma.pending[r])
            mpi_errno = MPIDI_NBRMA_ledger_need_endpoint(&wait, r, true);
    if (mpi_errno != MPI_SUCCESS) {
        MPIDI_NBRMA_ledger_cancel(&wait);
        MPIR_ERR_CHECK(mpi_errno);
    }
    mpi_errno = MPIDI_NBRMA_ledger_block(&wait, false);
    MPIR_ERR_CHECK(mpi_errno);

    nbrma_rdma_targets_completed(&dw->rdma, first, last);
    MPIDI_NBRMA_rdma_destroy_retired(dw, rank);

  fn_exit:
    return mpi_errno;
  fn_fail:
    goto fn_exit;
}
