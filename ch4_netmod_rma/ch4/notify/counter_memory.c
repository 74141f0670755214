/* mpich-nbrma: notification counters in UCX memory (counter_memory.h). */

#include "mpidimpl.h"
#include "ucx_impl.h"
#include "counter_memory.h"
#include "nbrma_key_exchange.h"
#include "ucx_memory.h"
#include "nbrma_ledger_adapter.h"

int MPIDI_NBRMA_counter_memory_create(MPIR_Win * win, int n, MPIDI_NBRMA_counter_memory_t ** cm_out)
{
    int mpi_errno = MPI_SUCCESS;
    MPIR_Comm *comm = win->comm_ptr;
    size_t bytes = (size_t) (n > 0 ? n : 1) * sizeof(int64_t);
    MPIDI_NBRMA_counter_memory_t *cm = MPL_calloc(1, sizeof(*cm), MPL_MEM_RMA);
    nbrma_counter_published_t mine = { 0 }, *all = NULL;
    void *key = NULL;
    size_t key_bytes;
    ucp_mem_h mem_h;

    MPIR_ERR_CHKANDJUMP(cm == NULL, mpi_errno, MPI_ERR_NO_MEM, "**nomem");
    cm->counters = MPIDI_NBRMA_memory_alloc(MPIDI_UCX_global.context, bytes);
    cm->ucx_allocated = cm->counters != NULL;
    if (cm->ucx_allocated) {
        memset(cm->counters, 0, bytes);
        if (MPIDI_NBRMA_memory_find(cm->counters, bytes, &mem_h) &&
            ucp_rkey_pack(MPIDI_UCX_global.context, mem_h, &key, &key_bytes) == UCS_OK)
            mine.key_bytes = key_bytes;
        else
            key = NULL;
    } else {
        cm->counters = MPL_calloc(1, bytes, MPL_MEM_RMA);
        MPIR_ERR_CHKANDJUMP(cm->counters == NULL, mpi_errno, MPI_ERR_NO_MEM, "**nomem");
    }
    mine.addr = (uint64_t) (uintptr_t) cm->counters;
    all = MPL_malloc(comm->local_size * sizeof(*all), MPL_MEM_RMA);
    MPIR_ERR_CHKANDJUMP(all == NULL, mpi_errno, MPI_ERR_NO_MEM, "**nomem");
    mpi_errno = MPIDI_NBRMA_exchange_keys(comm, &mine, sizeof(mine), all,
                                          offsetof(nbrma_counter_published_t, key_bytes), key,
                                          &cm->keys, &cm->key_stride);
    MPIR_ERR_CHECK(mpi_errno);
    MPIR_ERR_CHKANDJUMP(!nbrma_counter_peers_init(&cm->peers, all, comm->local_size, comm->rank),
                        mpi_errno, MPI_ERR_NO_MEM, "**nomem");
    *cm_out = cm;

  fn_exit:
    if (key)
        ucp_rkey_buffer_release(key);
    MPL_free(all);
    return mpi_errno;
  fn_fail:
    if (cm)
        MPIDI_NBRMA_counter_memory_free(cm);
    goto fn_exit;
}

bool MPIDI_NBRMA_counter_memory_add(MPIDI_NBRMA_counter_memory_t * cm, MPIR_Win * win,
                                    int target, int idx, bool behind_data)
{
    /* the operand must stay valid until UCX has read it, which over an
     * emulated transport may be after the call returned: a constant is */
    static const uint64_t one = 1;
    int vni = MPIDI_UCX_get_win_vni(win);
    ucp_ep_h ep = MPIDI_UCX_WIN_TO_EP(win, target, vni);
    ucp_request_param_t param = {
        .op_attr_mask = UCP_OP_ATTR_FIELD_DATATYPE,
        .datatype = ucp_dt_make_contig(sizeof(uint64_t))
    };
    ucp_rkey_h rkey = NULL;
    ucs_status_ptr_t status_ptr;

    MPID_THREAD_CS_ENTER(VCI, MPIDI_VCI(vni).lock);
    /* the target's key, unpacked with the first increment toward it */
    if (nbrma_counter_peers_to_unpack(&cm->peers, target)) {
        const char *packed = cm->keys + (size_t) target * cm->key_stride;
        ucs_status_t status = ucp_ep_rkey_unpack(ep, packed, &rkey);
        nbrma_counter_peers_unpacked_as(&cm->peers, target, status == UCS_OK, rkey);
    }
    rkey = nbrma_counter_peers_key(&cm->peers, target);
    if (rkey == NULL ||
        (behind_data && ucp_worker_fence(MPIDI_UCX_global.ctx[vni].worker) != UCS_OK)) {
        MPID_THREAD_CS_EXIT(VCI, MPIDI_VCI(vni).lock);
        return false;
    }
    status_ptr = ucp_atomic_op_nbx(ep, UCP_ATOMIC_OP_ADD, &one, 1,
                                   nbrma_counter_peers_word(&cm->peers, target, idx), rkey, &param);
    /* nobody waits for it: the operation it notifies of is complete or
     * ahead of it, and the target learns of the increment by reading the
     * counter */
    if (UCS_PTR_IS_PTR(status_ptr))
        ucp_request_free(status_ptr);
    MPID_THREAD_CS_EXIT(VCI, MPIDI_VCI(vni).lock);
    return !UCS_PTR_IS_ERR(status_ptr);
}

int MPIDI_NBRMA_counter_memory_quiesce(MPIDI_NBRMA_counter_memory_t * cm, MPIR_Win * win)
{
    int mpi_errno = MPI_SUCCESS;
    MPIDI_NBRMA_ledger_wait_t wait;

    MPIDI_NBRMA_ledger_wait_init(&wait, win);
    for (int r = 0; r < cm->peers.nprocs && mpi_errno == MPI_SUCCESS; r++)
        if (nbrma_counter_peers_unpacked(&cm->peers, r))
            mpi_errno = MPIDI_NBRMA_ledger_need_endpoint(&wait, r, true);
    if (mpi_errno != MPI_SUCCESS) {
        MPIDI_NBRMA_ledger_cancel(&wait);
        return mpi_errno;
    }
    return MPIDI_NBRMA_ledger_block(&wait, false);
}

void MPIDI_NBRMA_counter_memory_free(MPIDI_NBRMA_counter_memory_t * cm)
{
    nbrma_counter_peers_free(&cm->peers, MPIDI_NBRMA_rkey_destroy);
    if (cm->ucx_allocated)
        MPIDI_NBRMA_memory_free(MPIDI_UCX_global.context, cm->counters);
    else
        MPL_free(cm->counters);
    MPL_free(cm->keys);
    MPL_free(cm);
}
