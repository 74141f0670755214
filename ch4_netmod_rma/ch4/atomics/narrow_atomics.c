/* mpich-nbrma: narrow atomics (narrow_atomics.h), and the CPU's atomics on
 * memory mapped at both ends (rule R3). */

#include "mpidimpl.h"
#include "ucx_impl.h"
#include "narrow_atomics.h"
#include "native_atomics.h"
#include "segments.h"
#include "nbrma_completion.h"
#include "nbrma_ucx_lanes.h"

/* Only atomic lanes of the CPU's own transports count (nbrma_ucx_lanes.h); an
 * unreadable lane counts as a network adapter's. Without one (tcp) UCX emulates
 * atomics with messages the target's CPU answers: atomic, but no help: the
 * target is needed anyway, a compare-and-swap loop takes two round trips where
 * MPICH's active message takes one, and the target pays a compare-and-swap
 * per word of every such accumulate it applies. So tcp does not count. */
bool MPIDI_NBRMA_narrow_atomics_possible(MPIR_Win * win)
{
    bool cpu = true;

    /* this process's own memory: the CPU's whatever UCX's self lane says */
    for (int r = 0; r < win->comm_ptr->local_size && cpu; r++)
        cpu = r == win->comm_ptr->rank || MPIDI_NBRMA_win_lanes_on_cpu(win, r, "amo#");
    return cpu;
}

/* The first guess for the next update of a word (narrow_ops.h); VCI lock. */
static nbrma_word_guess_t last_swap;

typedef struct {
    ucp_ep_h ep;
    ucp_rkey_h rkey;
    int vni;
} word_swap_t;

/* UCX's compare-and-swap of a word (nbrma_word_cswap_fn): UCX swaps in what
 * the reply buffer holds if the word equals the operand, and returns the word
 * there. Holds the VCI lock. */
static int swap_word(void *ctx, uint64_t word_addr, uint64_t expected, uint64_t desired,
                     uint64_t * found)
{
    const word_swap_t *s = ctx;
    ucp_request_param_t param = {
        .op_attr_mask = UCP_OP_ATTR_FIELD_DATATYPE | UCP_OP_ATTR_FIELD_REPLY_BUFFER,
        .datatype = ucp_dt_make_contig(8),
        .reply_buffer = found
    };

    *found = desired;
    return MPIDI_NBRMA_ucx_wait(ucp_atomic_op_nbx(s->ep, UCP_ATOMIC_OP_CSWAP, &expected, 1,
                                                  word_addr, s->rkey, &param), s->vni);
}

/* Where a small routed accumulate would update: its plan (atomic_rules.h),
 * the target's first element and the lower bounds of the origin and result
 * buffers; false if it is not one (MPICH's path takes it). */
typedef struct {
    nbrma_narrow_plan_t plan;
    uint64_t addr;
    MPI_Aint o_lb, r_lb;
} narrow_update_t;

static bool eligible(const MPIDI_NBRMA_rma_op_t * op, MPIR_Win * win, narrow_update_t * u)
{
    nbrma_atomic_kind_t kind;
    MPI_Aint target_bytes, t_lb = 0;
    MPIDI_UCX_win_info_t *info;

    u->o_lb = u->r_lb = 0;
    if (op->request || op->target_rank == MPI_PROC_NULL ||
        !MPIDI_NBRMA_atomic_kind_of(op->kind, &kind))
        return false;
    MPIR_Datatype_get_size_macro(op->target_datatype, target_bytes);
    if (!nbrma_narrow_plan(kind, MPIDI_NBRMA_reduce_op_of(op->op),
                           MPIDI_NBRMA_element_of(op->target_datatype),
                           (size_t) (target_bytes * op->target_count),
                           MPIDI_NBRMA_NARROW_MAX_ELEMENTS, &u->plan))
        return false;
    info = &MPIDI_UCX_WIN_INFO(win, op->target_rank);
    /* contiguous only: the rest is MPICH's (atomic at the target) */
    if (info->rkey == NULL || !MPIDI_NBRMA_contiguous_lb(op->target_datatype, &t_lb) ||
        (u->plan.origin_in_place && !MPIDI_NBRMA_contiguous_lb(op->origin_datatype, &u->o_lb)) ||
        (u->plan.result_in_place && !MPIDI_NBRMA_contiguous_lb(op->result_datatype, &u->r_lb)))
        return false;
    u->addr = info->addr + (uint64_t) (op->target_disp * info->disp) + (uint64_t) t_lb;
    return nbrma_narrow_range_fits(u->addr, u->plan.n, u->plan.esize);
}

bool MPIDI_NBRMA_narrow_atomics_eligible(const MPIDI_NBRMA_rma_op_t * op, MPIR_Win * win)
{
    narrow_update_t u;

    return eligible(op, win, &u);
}

int MPIDI_NBRMA_narrow_atomics_issue(const MPIDI_NBRMA_rma_op_t * op, MPIR_Win * win,
                                     bool *issued)
{
    int mpi_errno = MPI_SUCCESS;
    narrow_update_t u;
    word_swap_t s = {.vni = MPIDI_UCX_get_win_vni(win) };

    *issued = false;
    if (!eligible(op, win, &u))
        goto fn_exit;
    s.rkey = MPIDI_UCX_WIN_INFO(win, op->target_rank).rkey;
    MPID_THREAD_CS_ENTER(VCI, MPIDI_VCI(s.vni).lock);
    s.ep = MPIDI_UCX_WIN_TO_EP(win, op->target_rank, s.vni);
    mpi_errno = nbrma_narrow_update_words(u.addr, u.plan.n, u.plan.esize, u.plan.op,
                                          (const char *) op->origin_addr + u.o_lb,
                                          op->kind == MPIDI_NBRMA_OP_COMPARE_AND_SWAP ?
                                          op->compare_addr : NULL,
                                          op->kind == MPIDI_NBRMA_OP_ACCUMULATE ? NULL :
                                          (char *) op->result_addr + u.r_lb, &last_swap, s.rkey,
                                          swap_word, &s);
    MPID_THREAD_CS_EXIT(VCI, MPIDI_VCI(s.vni).lock);
    MPIR_ERR_CHECK(mpi_errno);
    MPIDI_UCX_win_need_remote_flush(win, op->target_rank);
    *issued = true;

  fn_exit:
    return mpi_errno;
  fn_fail:
    goto fn_exit;
}

bool MPIDI_NBRMA_cpu_atomics_routed(MPIDI_NBRMA_op_kind_t kind, MPI_Datatype target_datatype,
                                    MPI_Op op, bool wide)
{
    nbrma_atomic_kind_t atomic_kind;

    return MPIDI_NBRMA_atomic_kind_of(kind, &atomic_kind) &&
        nbrma_cpu_atomics_routed(atomic_kind, MPIDI_NBRMA_element_of(target_datatype),
                                 MPIDI_NBRMA_reduce_op_of(op), wide);
}

int MPIDI_NBRMA_cpu_atomics_apply(const void *origin, MPI_Aint origin_count,
                                  MPI_Datatype origin_datatype, void *target_addr,
                                  MPI_Aint target_count, MPI_Datatype target_datatype,
                                  MPI_Op op, void *fetched, bool wide, bool *applied)
{
    int mpi_errno = MPI_SUCCESS;
    nbrma_narrow_op_t nop;
    unsigned esize = nbrma_cpu_atomics_apply_size(MPIDI_NBRMA_reduce_op_of(op),
                                                  MPIDI_NBRMA_element_of(target_datatype), wide,
                                                  &nop);
    MPI_Aint bytes, n;
    struct iovec one, *iov = NULL;

    *applied = false;
    /* the origin's datatype only where its operand is read: MPI_NO_OP's
     * need not be a valid handle */
    if (esize == 0 || (nop != NBRMA_NARROW_NO_OP &&
                       nbrma_cpu_atomic_size(MPIDI_NBRMA_element_of(origin_datatype),
                                             wide) != esize))
        goto fn_exit;
    MPIR_Datatype_get_size_macro(target_datatype, bytes);
    bytes *= target_count;
    (void) origin_count;        /* the same bytes: MPICH checked the counts */
    mpi_errno = MPIDI_NBRMA_segments_of(target_addr, target_count, target_datatype, bytes, &one,
                                        &iov, &n);
    MPIR_ERR_CHECK(mpi_errno);
    nbrma_cpu_apply_segments(iov ? iov : &one, (size_t) n, origin, esize, nop, fetched);
    *applied = true;

  fn_exit:
    MPL_free(iov);
    return mpi_errno;
  fn_fail:
    goto fn_exit;
}

bool MPIDI_NBRMA_cpu_atomics_aligned(void *target_addr, MPI_Aint count, MPI_Datatype datatype)
{
    unsigned esize = nbrma_cpu_atomic_size(MPIDI_NBRMA_element_of(datatype), true);
    MPI_Aint bytes, n;
    struct iovec one, *iov = NULL;
    bool aligned;

    if (esize <= 1)
        return esize == 1;
    MPIR_Datatype_get_size_macro(datatype, bytes);
    aligned = MPIDI_NBRMA_segments_of(target_addr, count, datatype, bytes * count, &one, &iov,
                                      &n) == MPI_SUCCESS &&
        nbrma_segments_aligned(iov ? iov : &one, (size_t) n, esize);
    MPL_free(iov);
    return aligned;
}

int MPIDI_NBRMA_cpu_atomics_cswap(void *target_addr, const void *origin, void *compare_result,
                                  MPI_Datatype datatype, bool wide, bool *applied)
{
    nbrma_element_t element = MPIDI_NBRMA_element_of(datatype);
    unsigned esize = nbrma_cpu_atomic_size(element, wide);

    *applied = false;
    if (!nbrma_cpu_atomics_routed(NBRMA_ATOMIC_COMPARE_AND_SWAP, element, NBRMA_REDUCE_OTHER,
                                  wide))
        return MPI_SUCCESS;     /* MPICH's path reports a swap of floats */
    nbrma_cpu_cswap_packed(target_addr, esize, origin, compare_result);
    *applied = true;
    return MPI_SUCCESS;
}
