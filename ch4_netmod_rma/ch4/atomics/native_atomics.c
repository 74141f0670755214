/*
 * mpich-nbrma: accumulates as UCX atomics (native_atomics.h), one
 * ucp_atomic_op_nbx per element on the target's endpoint. Contiguous buffers
 * are used in place (UCX reads the operand and writes the fetched value there
 * until the endpoint flush that completes the operation); a non-contiguous
 * origin or result goes through a packed copy, and the call then waits for its
 * atomics (done at once on shared memory); a non-contiguous target is walked
 * as an iovec.
 */

#include "mpidimpl.h"
#include "ucx_impl.h"
#include "native_atomics.h"
#include "nbrma_completion.h"
#include "ucx_memory.h"
#include "segments.h"

nbrma_element_t MPIDI_NBRMA_element_of(MPI_Datatype datatype)
{
    MPI_Datatype basic = datatype;
    nbrma_element_t element = { NBRMA_CLASS_NONE, 0 };
    MPI_Aint size;

    if (datatype == MPI_DATATYPE_NULL)
        return element;
    if (!HANDLE_IS_BUILTIN(datatype))
        MPIR_Datatype_get_basic_type(datatype, basic);
    switch (basic) {
        case MPI_CHAR:
            element.cls = NBRMA_CLASS_CHAR;
            break;
        case MPI_SIGNED_CHAR:
        case MPI_SHORT:
        case MPI_INT:
        case MPI_LONG:
        case MPI_LONG_LONG_INT:
        case MPI_INT8_T:
        case MPI_INT16_T:
        case MPI_INT32_T:
        case MPI_INT64_T:
        case MPI_AINT:
        case MPI_OFFSET:
        case MPI_COUNT:
            element.cls = NBRMA_CLASS_SIGNED;
            break;
        case MPI_UNSIGNED_CHAR:
        case MPI_UNSIGNED_SHORT:
        case MPI_UNSIGNED:
        case MPI_UNSIGNED_LONG:
        case MPI_UNSIGNED_LONG_LONG:
        case MPI_UINT8_T:
        case MPI_UINT16_T:
        case MPI_UINT32_T:
        case MPI_UINT64_T:
            element.cls = NBRMA_CLASS_UNSIGNED;
            break;
        case MPI_FLOAT:
        case MPI_DOUBLE:
            element.cls = NBRMA_CLASS_FLOAT;
            break;
        default:
            return element;
    }
    MPIR_Datatype_get_size_macro(basic, size);
    element.size = (unsigned) size;
    return element;
}

static const ucp_atomic_op_t ucp_opcodes[] = {
    [NBRMA_UCX_ADD] = UCP_ATOMIC_OP_ADD,
    [NBRMA_UCX_AND] = UCP_ATOMIC_OP_AND,
    [NBRMA_UCX_OR] = UCP_ATOMIC_OP_OR,
    [NBRMA_UCX_XOR] = UCP_ATOMIC_OP_XOR,
    [NBRMA_UCX_SWAP] = UCP_ATOMIC_OP_SWAP,
    [NBRMA_UCX_CSWAP] = UCP_ATOMIC_OP_CSWAP
};

bool MPIDI_NBRMA_native_atomics_routed(MPIDI_NBRMA_op_kind_t kind, MPI_Datatype target_datatype,
                                       MPI_Op op)
{
    nbrma_atomic_kind_t atomic_kind;

    return MPIDI_NBRMA_atomic_kind_of(kind, &atomic_kind) &&
        nbrma_ucx_atomics_routed(atomic_kind, MPIDI_NBRMA_element_of(target_datatype),
                                 MPIDI_NBRMA_reduce_op_of(op));
}

bool MPIDI_NBRMA_native_atomics_possible(MPIR_Win * win, bool wanted)
{
    return wanted && MPIDI_UCX_WIN(win).info_table != NULL &&
        (MPIDI_WIN(win, winattr) & MPIDI_WINATTR_NM_REACHABLE) &&
        (win->size == 0 || MPIDI_NBRMA_memory_find(win->base, win->size, NULL));
}

bool MPIDI_NBRMA_ucx_window_mapped(MPIR_Win * win, int rank, void **mapped)
{
    MPIDI_UCX_win_info_t *info = &MPIDI_UCX_WIN_INFO(win, rank);

    return info->rkey != NULL && info->addr != 0 &&
        ucp_rkey_ptr(info->rkey, info->addr, mapped) == UCS_OK;
}

bool MPIDI_NBRMA_native_atomics_by_origin(MPIR_Win * win)
{
    for (int peer = 0; peer < win->comm_ptr->local_size; peer++) {
        MPIDI_UCX_win_info_t *info = &MPIDI_UCX_WIN_INFO(win, peer);
        void *mapped;

        if (peer != win->comm_ptr->rank && info->rkey != NULL && info->addr != 0 &&
            !MPIDI_NBRMA_ucx_window_mapped(win, peer, &mapped))
            return false;
    }
    return true;
}

bool MPIDI_NBRMA_any_contiguous_lb(MPI_Datatype datatype, MPI_Aint * true_lb)
{
    int contig;

    MPIR_Datatype_is_contig(datatype, &contig);
    if (contig)
        MPIR_Datatype_get_true_lb(datatype, true_lb);
    return contig;
}

int MPIDI_NBRMA_segments_of(void *addr, MPI_Aint count, MPI_Datatype datatype, MPI_Aint bytes,
                            struct iovec *one, struct iovec **iov, MPI_Aint * n)
{
    int mpi_errno = MPI_SUCCESS;
    MPI_Aint true_lb, n_iov, got_bytes;

    *iov = NULL;
    if (MPIDI_NBRMA_contiguous_lb(datatype, &true_lb)) {
        *one = (struct iovec) {
        .iov_base = (char *) addr + true_lb,.iov_len = (size_t) bytes};
        *n = 1;
        goto fn_exit;
    }
    mpi_errno = MPIR_Typerep_iov_len(count, datatype, bytes, &n_iov);
    MPIR_ERR_CHECK(mpi_errno);
    *iov = MPL_malloc(n_iov * sizeof(**iov), MPL_MEM_RMA);
    MPIR_ERR_CHKANDJUMP(*iov == NULL, mpi_errno, MPI_ERR_NO_MEM, "**nomem");
    mpi_errno = MPIR_Typerep_to_iov(addr, count, datatype, 0, *iov, n_iov, bytes, n, &got_bytes);
    MPIR_ERR_CHECK(mpi_errno);
    MPIR_ERR_CHKANDJUMP(got_bytes != bytes, mpi_errno, MPI_ERR_INTERN, "**intern");
  fn_exit:
    return mpi_errno;
  fn_fail:
    goto fn_exit;
}

static int target_addresses(const MPIDI_NBRMA_rma_op_t * op, MPIR_Win * win, size_t esize,
                            size_t n, uint64_t * addrs)
{
    MPIDI_UCX_win_info_t *info = &MPIDI_UCX_WIN_INFO(win, op->target_rank);
    /* the window's base as the buffer: the segments hold target addresses */
    void *base = (void *) (uintptr_t) (info->addr + (uint64_t) (op->target_disp * info->disp));
    struct iovec one, *iov;
    MPI_Aint n_segments;
    int mpi_errno = MPIDI_NBRMA_segments_of(base, op->target_count, op->target_datatype,
                                            (MPI_Aint) (n * esize), &one, &iov, &n_segments);

    MPIR_ERR_CHECK(mpi_errno);
    MPIR_ERR_CHKANDJUMP(!nbrma_segments_element_addresses(iov ? iov : &one, (size_t) n_segments,
                                                          esize, addrs), mpi_errno,
                        MPI_ERR_TYPE, "**dtype");

  fn_exit:
    MPL_free(iov);
    return mpi_errno;
  fn_fail:
    goto fn_exit;
}

/* A buffer of `count` `datatype` as n contiguous elements: the buffer itself
 * when contiguous, else a packed copy in *copy (pack: with the values). */
static int contiguous_view(const void *buf, int count, MPI_Datatype datatype, size_t bytes,
                           bool pack, const char **view, void **copy)
{
    int mpi_errno = MPI_SUCCESS;
    MPI_Aint true_lb, packed;

    *copy = NULL;
    if (MPIDI_NBRMA_contiguous_lb(datatype, &true_lb)) {
        *view = (const char *) buf + true_lb;
        goto fn_exit;
    }
    *copy = MPL_malloc(bytes, MPL_MEM_RMA);
    MPIR_ERR_CHKANDJUMP(*copy == NULL, mpi_errno, MPI_ERR_NO_MEM, "**nomem");
    if (pack) {
        mpi_errno = MPIR_Typerep_pack(buf, count, datatype, 0, *copy, bytes, &packed);
        MPIR_ERR_CHECK(mpi_errno);
    }
    *view = *copy;
  fn_exit:
    return mpi_errno;
  fn_fail:
    goto fn_exit;
}

/* Whether `op` goes to UCX atomics; its kind, opcode, element size, count. */
static bool eligible(const MPIDI_NBRMA_rma_op_t * op, MPIR_Win * win,
                     nbrma_atomic_kind_t * atomic_kind, ucp_atomic_op_t * opcode, size_t * esize,
                     size_t * n)
{
    MPI_Aint target_bytes;
    nbrma_ucx_op_t ucx_op;

    if (op->request || op->target_rank == MPI_PROC_NULL ||
        !MPIDI_NBRMA_atomic_kind_of(op->kind, atomic_kind) ||
        !nbrma_ucx_atomic_op(*atomic_kind, MPIDI_NBRMA_reduce_op_of(op->op), &ucx_op))
        return false;
    *opcode = ucp_opcodes[ucx_op];
    *esize = nbrma_ucx_atomic_size(MPIDI_NBRMA_element_of(op->target_datatype));
    if (*esize == 0 || MPIDI_UCX_WIN_INFO(win, op->target_rank).rkey == NULL)
        return false;
    MPIR_Datatype_get_size_macro(op->target_datatype, target_bytes);
    *n = nbrma_ucx_atomic_count(*atomic_kind, (size_t) (target_bytes * op->target_count),
                                (unsigned) *esize, op->compare_addr, op->result_addr);
    return *n != 0;
}

bool MPIDI_NBRMA_native_atomics_eligible(const MPIDI_NBRMA_rma_op_t * op, MPIR_Win * win)
{
    nbrma_atomic_kind_t atomic_kind;
    ucp_atomic_op_t opcode;
    size_t esize, n;

    return eligible(op, win, &atomic_kind, &opcode, &esize, &n);
}

/* Target addresses kept on the stack: fetch_and_op and compare_and_swap have
 * one (OSU's latency tests issue nothing else); longer accumulates allocate. */
#define INLINE_ADDRESSES 16

int MPIDI_NBRMA_native_atomics_issue(const MPIDI_NBRMA_rma_op_t * op, MPIR_Win * win,
                                     bool *issued)
{
    /* the operand of a NO_OP fetch, and where the old values of a swap go
     * that nobody reads (MPI_Accumulate with MPI_REPLACE) */
    static const uint64_t zero;
    static uint64_t discarded;

    int mpi_errno = MPI_SUCCESS;
    nbrma_atomic_kind_t atomic_kind;
    ucp_atomic_op_t opcode;
    size_t esize, n;
    bool fetch = op->kind != MPIDI_NBRMA_OP_ACCUMULATE;
    const char *origin = NULL, *result_view = NULL;
    void *origin_copy = NULL, *result_copy = NULL;
    uint64_t inline_addrs[INLINE_ADDRESSES], *addrs = inline_addrs;
    ucs_status_ptr_t *pending = NULL;
    size_t n_pending = 0;
    int vni = MPIDI_UCX_get_win_vni(win);
    ucp_rkey_h rkey;
    ucs_status_t failure = UCS_OK;

    *issued = false;
    if (!eligible(op, win, &atomic_kind, &opcode, &esize, &n))
        goto fn_exit;
    rkey = MPIDI_UCX_WIN_INFO(win, op->target_rank).rkey;

    if (!nbrma_ucx_single_buffers(atomic_kind, op->op == MPI_NO_OP, op->origin_addr,
                                  op->compare_addr, op->result_addr, esize, &origin,
                                  &result_view)) {
        if (op->op != MPI_NO_OP) {
            mpi_errno = contiguous_view(op->origin_addr, op->origin_count, op->origin_datatype,
                                        n * esize, true, &origin, &origin_copy);
            MPIR_ERR_CHECK(mpi_errno);
        }
        if (fetch) {
            mpi_errno = contiguous_view(op->result_addr, op->result_count, op->result_datatype,
                                        n * esize, false, &result_view, &result_copy);
            MPIR_ERR_CHECK(mpi_errno);
        }
    }
    if (n > INLINE_ADDRESSES) {
        addrs = MPL_malloc(n * sizeof(*addrs), MPL_MEM_RMA);
        MPIR_ERR_CHKANDJUMP(addrs == NULL, mpi_errno, MPI_ERR_NO_MEM, "**nomem");
    }
    mpi_errno = target_addresses(op, win, esize, n, addrs);
    MPIR_ERR_CHECK(mpi_errno);
    if (origin_copy || result_copy) {
        pending = MPL_malloc(n * sizeof(*pending), MPL_MEM_RMA);
        MPIR_ERR_CHKANDJUMP(pending == NULL, mpi_errno, MPI_ERR_NO_MEM, "**nomem");
    }

    MPID_THREAD_CS_ENTER(VCI, MPIDI_VCI(vni).lock);
    ucp_ep_h ep = MPIDI_UCX_WIN_TO_EP(win, op->target_rank, vni);
    for (size_t i = 0; i < n; i++) {
        ucp_request_param_t param = {
            .op_attr_mask = UCP_OP_ATTR_FIELD_DATATYPE,
            .datatype = ucp_dt_make_contig(esize)
        };
        ucs_status_ptr_t sp;

        if (fetch || opcode == UCP_ATOMIC_OP_SWAP) {
            param.op_attr_mask |= UCP_OP_ATTR_FIELD_REPLY_BUFFER;
            param.reply_buffer = fetch ? (void *) (result_view + i * esize) : &discarded;
        }
        sp = ucp_atomic_op_nbx(ep, opcode, origin ? origin + i * esize : (const void *) &zero,
                               1, addrs[i], rkey, &param);
        if (UCS_PTR_IS_ERR(sp)) {
            failure = UCS_PTR_STATUS(sp);
            break;
        }
        if (sp == NULL)
            continue;
        if (pending)
            pending[n_pending++] = sp;
        else
            ucp_request_free(sp);       /* completes on its own; the flush waits for it */
    }
    MPIDI_UCX_win_need_remote_flush(win, op->target_rank);
    /* the copies must outlive their atomics */
    for (size_t i = 0; i < n_pending; i++) {
        int err = MPIDI_NBRMA_ucx_wait(pending[i], vni);
        if (mpi_errno == MPI_SUCCESS)
            mpi_errno = err;
    }
    MPID_THREAD_CS_EXIT(VCI, MPIDI_VCI(vni).lock);
    MPIDI_UCX_CHK_STATUS(failure);
    MPIR_ERR_CHECK(mpi_errno);
    if (result_copy) {
        MPI_Aint unpacked;
        mpi_errno = MPIR_Typerep_unpack(result_copy, n * esize, op->result_addr,
                                        op->result_count, op->result_datatype, 0, &unpacked);
        MPIR_ERR_CHECK(mpi_errno);
    }
    *issued = true;

  fn_exit:
    if (addrs != inline_addrs)
        MPL_free(addrs);
    MPL_free(pending);
    MPL_free(origin_copy);
    MPL_free(result_copy);
    return mpi_errno;
  fn_fail:
    goto fn_exit;
}
