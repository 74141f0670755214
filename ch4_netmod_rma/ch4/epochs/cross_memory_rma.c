/*
 * mpich-nbrma: puts and gets of an engine window that the origin's CPU
 * performs alone toward peers on this host (rule R1), complete at both ends
 * when they return (R10), where UCX would emulate them with active messages
 * that wait for the target (memory UCX did not allocate; shared windows have
 * no UCX keys) or copy through more calls and a flush. Toward memory mapped
 * here a memcpy or MPIR_Localcopy; else, via process_vm_writev (mailbox.h),
 * one system call for contiguous data from MPIR_CVAR_NBRMA_CROSS_MEMORY_MIN_BYTES
 * on. Accumulates must stay atomic with the target's own: only on mapped
 * memory do they take the CPU's atomics, which the owner uses too (rule R3,
 * the end of this file).
 */

#include "mpidimpl.h"
#include "ucx_impl.h"
#include "epoch_win.h"
#include "cross_memory.h"
#include "narrow_atomics.h"
#include "native_atomics.h"
#include "ucx_memory.h"
#include "nbrma_ucx_lanes.h"

/* Whether a peer's UCX lanes may map this process's UCX memory (what UCX sees,
 * not MPICH's node, which MPIR_CVAR_ODD_EVEN_CLIQUES splits). */
static bool peer_may_map(MPIR_Win * win)
{
    bool may = false;

    for (int rank = 0; rank < win->comm_ptr->local_size && !may; rank++)
        may = rank != win->comm_ptr->rank && MPIDI_NBRMA_win_lanes_map_memory(win, rank);
    return may;
}

/* Gathers what MPICH and UCX say of each window memory; peer_reach.c decides. */
int MPIDI_NBRMA_cross_memory_rma_decide(MPIDI_NBRMA_epoch_win_t * ew)
{
    int mpi_errno = MPI_SUCCESS;
    MPIR_Win *win = ew->win;
    int nprocs = win->comm_ptr->local_size;
    MPIDIG_win_shared_info_t *shared = MPIDIG_WIN(win, mmap_addr) ?
        MPIDIG_WIN(win, shared_table) : NULL;
    bool ucx = MPIDI_UCX_WIN(win).info_table != NULL;
    nbrma_peer_facts_t *facts = NULL;

    /* whatever this process's own setting: a peer's may differ */
    ew->mapped_here = win->size > 0 &&
        (shared || (ucx && MPIDI_NBRMA_memory_find(win->base, win->size, NULL) &&
                    peer_may_map(win)));
    if (!ew->wants_cross_memory_rma)
        goto fn_exit;
    facts = MPL_calloc(nprocs, sizeof(*facts), MPL_MEM_RMA);
    MPIR_ERR_CHKANDJUMP(facts == NULL, mpi_errno, MPI_ERR_NO_MEM, "**nomem");
    for (int rank = 0; rank < nprocs; rank++) {
        int on_node = shared ? MPIDIU_win_rank_to_intra_rank(win, rank,
                                                             MPIDI_WIN(win, winattr)) : -1;
        MPIDI_UCX_win_info_t *info = ucx ? &MPIDI_UCX_WIN_INFO(win, rank) : NULL;
        void *mapped;

        if (on_node >= 0 && shared[on_node].size > 0) {
            facts[rank].shared_base = shared[on_node].shm_base_addr;
            facts[rank].shared_disp_unit = shared[on_node].disp_unit;
        }
        if (info == NULL)
            continue;
        facts[rank].has_key = info->rkey != NULL && info->addr != 0;
        facts[rank].pid = nbrma_mailboxes_readable_pid(ew->mailbox, rank);
        if (MPIDI_NBRMA_ucx_window_mapped(win, rank, &mapped)) {
            facts[rank].ucx_base = mapped;
            facts[rank].ucx_disp_unit = info->disp;
        }
    }
    MPIR_ERR_CHKANDJUMP(nbrma_peer_reach_decide(facts, nprocs, win->comm_ptr->rank,
                                                ew->mapped_here, &ew->reach) != 0, mpi_errno,
                        MPI_ERR_NO_MEM, "**nomem");
    /* rule R1 asks whether the system call is slower than UCX's path (where
     * the window has one: UCX keys); measured once per process */
    if (ew->reach.n_cross_memory_peers > 0) {
        ew->cross_memory_call_ns = nbrma_cross_memory_call_ns();
        ew->cross_memory_call_slow = ucx &&
            ew->cross_memory_call_ns > ew->cross_memory_call_max_ns;
    }

  fn_exit:
    MPL_free(facts);
    return mpi_errno;
  fn_fail:
    goto fn_exit;
}

/* MPICH's check: a builtin type's size comes from its handle, inline. */
static inline size_t data_bytes(int count, MPI_Datatype datatype)
{
    size_t bytes;

    MPIDI_Datatype_check_size(datatype, count, bytes);
    return bytes;
}

static inline bool contiguous(const void *buf, MPI_Datatype datatype, uint64_t * start)
{
    MPI_Aint true_lb;

    if (!MPIDI_NBRMA_contiguous_lb(datatype, &true_lb))
        return false;
    *start = (uint64_t) (uintptr_t) buf + (uint64_t) true_lb;
    return true;
}

/* NULL where the target's window memory is not mapped here. */
static char *mapped_target(MPIDI_NBRMA_epoch_win_t * ew, const MPIDI_NBRMA_rma_op_t * op)
{
    return nbrma_peer_reach_copy_target(&ew->reach, op->target_rank, ew->win->comm_ptr->rank,
                                        op->target_disp);
}

/* False, nothing copied, if the sides' sizes differ (MPICH's path reports it). */
static bool mapped_copy(char *target, const MPIDI_NBRMA_rma_op_t * op)
{
    bool put = op->kind == MPIDI_NBRMA_OP_PUT;
    MPIDI_NBRMA_local_buffer_t mine = MPIDI_NBRMA_local_buffer(op);
    void *buf = (void *) mine.addr;
    MPI_Datatype datatype = mine.datatype;
    size_t bytes = data_bytes(op->target_count, op->target_datatype);
    uint64_t local, remote;

    if (data_bytes(mine.count, datatype) != bytes)
        return false;
    if (contiguous(buf, datatype, &local) && contiguous(target, op->target_datatype, &remote) &&
        !MPIR_GPU_query_pointer_is_dev(buf)) {
        /* most puts and gets: skips MPIR_Localcopy's datatype engine */
        if (put)
            memcpy((void *) (uintptr_t) remote, (const void *) (uintptr_t) local, bytes);
        else
            memcpy((void *) (uintptr_t) local, (const void *) (uintptr_t) remote, bytes);
    } else if ((put ? MPIR_Localcopy(buf, mine.count, datatype, target, op->target_count,
                                     op->target_datatype)
                : MPIR_Localcopy(target, op->target_count, op->target_datatype, buf,
                                 mine.count, datatype)) != MPI_SUCCESS) {
        return false;
    }
    /* seen before whatever this process stores next (the done in the target's mailbox) */
    __atomic_thread_fence(__ATOMIC_RELEASE);
    return true;
}

/* Where a put or get by cross-memory attach would copy, if it can. */
static bool eligible(MPIDI_NBRMA_epoch_win_t * ew, const MPIDI_NBRMA_rma_op_t * op,
                     uint64_t * pid, uint64_t * local, uint64_t * remote, size_t * bytes)
{
    MPIR_Win *win = ew->win;
    MPIDI_NBRMA_local_buffer_t mine = MPIDI_NBRMA_local_buffer(op);
    uint64_t target;
    MPIDI_UCX_win_info_t *info;

    if ((*pid = nbrma_peer_reach_pid(&ew->reach, op->target_rank)) == 0)
        return false;
    /* whether a small copy should go so is the route's question (R1) */
    *bytes = data_bytes(mine.count, mine.datatype);
    info = &MPIDI_UCX_WIN_INFO(win, op->target_rank);
    target = info->addr + (uint64_t) op->target_disp * info->disp;
    return contiguous(mine.addr, mine.datatype, local) &&
        contiguous((const void *) (uintptr_t) target, op->target_datatype, remote) &&
        data_bytes(op->target_count, op->target_datatype) == *bytes;
    /* else MPICH's path, which also reports a mismatch */
}

bool MPIDI_NBRMA_cross_memory_rma_eligible(MPIDI_NBRMA_epoch_win_t * ew,
                                           const MPIDI_NBRMA_rma_op_t * op)
{
    uint64_t pid, local, remote;
    size_t bytes;

    return (op->kind == MPIDI_NBRMA_OP_PUT || op->kind == MPIDI_NBRMA_OP_GET) &&
        (mapped_target(ew, op) != NULL || eligible(ew, op, &pid, &local, &remote, &bytes));
}

bool MPIDI_NBRMA_cross_memory_rma(MPIDI_NBRMA_epoch_win_t * ew, const MPIDI_NBRMA_rma_op_t * op)
{
    uint64_t pid, local, remote;
    size_t bytes;
    char *target = mapped_target(ew, op);

    if (target)
        return mapped_copy(target, op);
    if (!eligible(ew, op, &pid, &local, &remote, &bytes))
        return false;
    if (bytes == 0)
        return true;
    if (op->kind == MPIDI_NBRMA_OP_PUT)
        return nbrma_cross_memory_write(pid, remote, (const void *) (uintptr_t) local, bytes) == 0;
    return nbrma_cross_memory_read(pid, (void *) (uintptr_t) local, remote, bytes) == 0;
}

/* --- accumulates with the CPU's atomics on mapped memory (rule R3) -------- */

typedef struct {
    char *target;
    const char *origin;
    char *result;
} mapped_update_t;

static bool contiguous_at(const void *buf, MPI_Datatype datatype, const char **at)
{
    uint64_t start;

    if (!contiguous(buf, datatype, &start))
        return false;
    *at = (const char *) (uintptr_t) start;
    return true;
}

/* Where `op` would update; false if this path does not take it. */
static bool mapped_update(MPIDI_NBRMA_epoch_win_t * ew, const MPIDI_NBRMA_rma_op_t * op,
                          mapped_update_t * u)
{
    bool fetch = op->kind != MPIDI_NBRMA_OP_ACCUMULATE;
    bool single = op->kind == MPIDI_NBRMA_OP_FETCH_AND_OP ||
        op->kind == MPIDI_NBRMA_OP_COMPARE_AND_SWAP;
    size_t target_bytes;

    if ((u->target = nbrma_peer_reach_atomics_target(&ew->reach, op->target_rank,
                                                     op->target_disp)) == NULL ||
        !MPIDI_NBRMA_cpu_atomics_routed(op->kind, op->target_datatype, op->op, true))
        return false;
    /* single elements of the target's type; else packed layouts of as many bytes */
    target_bytes = data_bytes(op->target_count, op->target_datatype);
    u->origin = op->origin_addr;
    u->result = op->result_addr;
    if (!single) {
        if (op->op != MPI_NO_OP &&
            (!contiguous_at(op->origin_addr, op->origin_datatype, &u->origin) ||
             data_bytes(op->origin_count, op->origin_datatype) != target_bytes))
            return false;
        if (fetch && (!contiguous_at(op->result_addr, op->result_datatype,
                                     (const char **) &u->result) ||
                      data_bytes(op->result_count, op->result_datatype) != target_bytes))
            return false;
    }
    /* two origins must not update one element with plain loads and stores */
    return MPIDI_NBRMA_cpu_atomics_aligned(u->target, op->target_count, op->target_datatype);
}

/* The last look's find: the route looks right before perform() performs, so
 * MPIDI_NBRMA_mapped_atomics need not work it out again on the hot path. Every
 * look overwrites it (a descriptor reused at the same address is looked at
 * anew); taken once. Under MPICH's global critical section, as all the glue. */
static struct {
    const MPIDI_NBRMA_epoch_win_t *ew;
    const MPIDI_NBRMA_rma_op_t *op;
    mapped_update_t u;
} last_look;

bool MPIDI_NBRMA_mapped_atomics_eligible(MPIDI_NBRMA_epoch_win_t * ew,
                                         const MPIDI_NBRMA_rma_op_t * op)
{
    bool eligible = mapped_update(ew, op, &last_look.u);

    last_look.ew = eligible ? ew : NULL;
    last_look.op = eligible ? op : NULL;
    return eligible;
}

static bool take_update(MPIDI_NBRMA_epoch_win_t * ew, const MPIDI_NBRMA_rma_op_t * op,
                        mapped_update_t * u)
{
    if (last_look.ew == ew && last_look.op == op) {
        *u = last_look.u;
        last_look.ew = NULL;
        last_look.op = NULL;
        return true;
    }
    return mapped_update(ew, op, u);
}

int MPIDI_NBRMA_mapped_atomics(MPIDI_NBRMA_epoch_win_t * ew, const MPIDI_NBRMA_rma_op_t * op,
                               bool *performed)
{
    mapped_update_t u;
    int mpi_errno = MPI_SUCCESS;

    *performed = false;
    if (!take_update(ew, op, &u))
        return MPI_SUCCESS;
    if (op->kind == MPIDI_NBRMA_OP_COMPARE_AND_SWAP) {
        MPI_Aint size;
        MPIR_Datatype_get_size_macro(op->target_datatype, size);
        memcpy(u.result, op->compare_addr, (size_t) size);
        mpi_errno = MPIDI_NBRMA_cpu_atomics_cswap(u.target, u.origin, u.result,
                                                  op->target_datatype, true, performed);
    } else {
        /* a fetch_and_op's operand is one element of the target's type */
        bool fop = op->kind == MPIDI_NBRMA_OP_FETCH_AND_OP;
        mpi_errno = MPIDI_NBRMA_cpu_atomics_apply(op->op == MPI_NO_OP ? NULL : u.origin,
                                                  fop ? 1 : op->origin_count,
                                                  fop ? op->target_datatype : op->origin_datatype,
                                                  u.target, op->target_count,
                                                  op->target_datatype, op->op,
                                                  op->kind == MPIDI_NBRMA_OP_ACCUMULATE ? NULL :
                                                  u.result, true, performed);
    }
    return mpi_errno;
}
