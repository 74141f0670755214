/*
 * mpich-nbrma: RDMA that the component issues on a dynamic window, through
 * its memory-handle windows or with cached rkeys, and its completion: MPIDIG
 * does not know of these operations, so the window's unlocks and flushes (and
 * the free of a memory-handle window) complete them here first.
 */

#include "mpidimpl.h"
#include "ucx_impl.h"
#include "dynamic_win.h"
#include "nbrma_ledger_adapter.h"
#include "nbrma_request.h"
#include "nbrma_ucx_lanes.h"

/* Registered memory that RDMA reaches (memory-handle registrations, attached
 * regions) is named by a generation, unique in this process over all windows. */
static uint64_t last_generation;

uint64_t MPIDI_NBRMA_next_generation(void)
{
    return ++last_generation;
}

bool MPIDI_NBRMA_rdma_eligible(const MPIDI_NBRMA_rma_op_t * op, MPIDI_NBRMA_rdma_args_t * args)
{
    bool is_put = op->kind == MPIDI_NBRMA_OP_PUT;
    const void *local_addr = is_put ? op->origin_addr : op->result_addr;
    int local_count = is_put ? op->origin_count : op->result_count;
    MPI_Datatype local_datatype = is_put ? op->origin_datatype : op->result_datatype;
    int local_contig, target_contig;
    size_t local_bytes, target_bytes;
    MPI_Aint local_true_lb, target_true_lb;

    if (op->kind != MPIDI_NBRMA_OP_PUT && op->kind != MPIDI_NBRMA_OP_GET)
        return false;
    MPIDI_Datatype_check_origin_target_contig_size_lb(local_datatype, op->target_datatype,
                                                      local_count, op->target_count,
                                                      local_contig, target_contig,
                                                      local_bytes, target_bytes,
                                                      local_true_lb, target_true_lb);
    (void) target_bytes;
    if (!local_contig || !target_contig || local_bytes == 0 ||
        MPIR_GPU_query_pointer_is_dev(local_addr))
        return false;
    args->is_put = is_put;
    args->local_buf = (char *) MPIR_get_contig_ptr(local_addr, local_true_lb);
    args->bytes = local_bytes;
    args->target_true_lb = target_true_lb;
    return true;
}

/* Not where UCX puts and gets over tcp: there it emulates them with messages
 * the target's CPU answers, as MPICH's active message does, and a flush costs
 * a round trip more (OSU osu_put_latency -w dynamic -s flush over tcp: 30 us
 * by the rkey cache against vanilla's 15). Looked at once per target (UCX
 * prints its lane table for it). */
enum { RDMA_PAYS_UNKNOWN = 0, RDMA_PAYS = 1, RDMA_DOES_NOT_PAY = 2 };

bool MPIDI_NBRMA_rdma_pays(MPIDI_NBRMA_dynamic_win_t * dw, MPIR_Win * win, int target)
{
    if (dw->rdma_pays[target] == RDMA_PAYS_UNKNOWN) {
        int lanes, emulated;

        MPIDI_NBRMA_win_rma_lanes(win, target, &lanes, &emulated);
        dw->rdma_pays[target] = lanes > 0 && emulated == 0 ? RDMA_PAYS : RDMA_DOES_NOT_PAY;
    }
    return dw->rdma_pays[target] == RDMA_PAYS;
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

    if (!dw->rdma_pending[target]) {
        dw->rdma_pending[target] = true;
        dw->num_rdma_pending++;
    }

  fn_exit:
    return mpi_errno;
  fn_fail:
    goto fn_exit;
}

/* Rkeys whose operations toward `rank` (or all) completed. */
static void destroy_retired_rkeys(MPIDI_NBRMA_dynamic_win_t * dw, int rank)
{
    for (MPIDI_NBRMA_retired_rkey_t ** link = &dw->retired; *link;) {
        MPIDI_NBRMA_retired_rkey_t *r = *link;
        if (rank != NBRMA_ALL_RANKS && r->target != rank) {
            link = &r->next;
            continue;
        }
        *link = r->next;
        ucp_rkey_destroy(r->rkey);
        MPL_free(r);
    }
}

/* UCX must see no operation still using an rkey when it is destroyed, and the
 * rkey cache drops keys inside a UCX callback, where waiting for one is not
 * allowed: with RDMA toward the target outstanding, the key waits for the next
 * completion. */
void MPIDI_NBRMA_rdma_retire_rkey(MPIDI_NBRMA_dynamic_win_t * dw, int target, ucp_rkey_h rkey)
{
    MPIDI_NBRMA_retired_rkey_t *r = NULL;

    if (dw->rdma_pending[target])
        r = MPL_malloc(sizeof(*r), MPL_MEM_RMA);
    if (r == NULL) {
        /* nothing outstanding, or no memory to wait: the operations with the
         * key were flushed, or destroying it now is all that can be done */
        ucp_rkey_destroy(rkey);
        return;
    }
    r->target = target;
    r->rkey = rkey;
    r->next = dw->retired;
    dw->retired = r;
}

int MPIDI_NBRMA_rdma_complete(MPIR_Win * win, int rank)
{
    int mpi_errno = MPI_SUCCESS;
    MPIDI_NBRMA_dynamic_win_t *dw = MPIDI_NBRMA_dynamic_win(win);
    MPIDI_NBRMA_ledger_wait_t wait;
    int first = rank, last = rank;

    if (dw == NULL || dw->num_rdma_pending == 0 ||
        (rank != NBRMA_ALL_RANKS && (rank < 0 || rank >= win->comm_ptr->local_size ||
                                     !dw->rdma_pending[rank])))
        goto fn_exit;
    if (rank == NBRMA_ALL_RANKS) {
        first = 0;
        last = win->comm_ptr->local_size - 1;
    }
    /* the endpoints of the targets RDMA went to: a worker flush is not
     * reliable here (ledger_adapter.h) */
    MPIDI_NBRMA_ledger_wait_init(&wait, win);
    for (int r = first; r <= last && mpi_errno == MPI_SUCCESS; r++)
        if (dw->rdma_pending[r])
            mpi_errno = MPIDI_NBRMA_ledger_need_endpoint(&wait, r, true);
    if (mpi_errno != MPI_SUCCESS) {
        MPIDI_NBRMA_ledger_cancel(&wait);
        MPIR_ERR_CHECK(mpi_errno);
    }
    mpi_errno = MPIDI_NBRMA_ledger_block(&wait, false);
    MPIR_ERR_CHECK(mpi_errno);

    for (int r = first; r <= last; r++) {
        if (!dw->rdma_pending[r])
            continue;
        dw->rdma_pending[r] = false;
        dw->num_rdma_pending--;
    }
    destroy_retired_rkeys(dw, rank);

  fn_exit:
    return mpi_errno;
  fn_fail:
    goto fn_exit;
}
