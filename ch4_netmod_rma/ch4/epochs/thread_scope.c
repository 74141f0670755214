/*
 * mpich-nbrma: flushes of the calling thread's operations on engine windows
 * with the info key mpi_win_scope=thread (Quo Vadis MPI RMA, section 2.1).
 *
 * Each thread that issues operations on such a window has a slot: per target,
 * what kind of operations it issued since its own last flush there.
 *   THREAD_OPS_RDMA    performed by UCX RDMA or atomics, or copied by the
 *                      CPU: an endpoint flush completes them
 *   THREAD_OPS_AM      performed by MPICH's code where that may send active
 *                      messages: MPIDIG's per-target counters complete them
 *                      (they count every thread's operations: the flush also
 *                      waits for other threads' active messages to that target)
 *   THREAD_OPS_ENGINE  recorded in the engine, to be issued once an epoch is
 *                      granted: the engine's flush ages, which know no threads,
 *                      complete them (a process-scope flush)
 * A thread-scope flush whose slot holds no THREAD_OPS_ENGINE bit toward its
 * targets completes the thread's operations itself and never waits for
 * operations other threads recorded in the engine or issued by RDMA elsewhere;
 * anything else is a process-scope flush, which completes a superset and so
 * is correct for either scope.
 *
 * Slots are indexed by a process-wide thread number given at a thread's first
 * operation on any thread-scope window; the first MAX_SLOTS threads of the
 * process have one, later threads flush with process scope. A window whose
 * slot could not be allocated flushes with process scope from then on (and
 * says so in MPI_Win_get_info). Everything runs
 * under MPICH's global critical section, as the rest of the engine windows.
 */

#include "mpidimpl.h"
#include "ucx_impl.h"
#include "epoch_win.h"
#include "nbrma_ledger_adapter.h"
#include "nbrma_mpich_path.h"

#define MAX_SLOTS 64

enum {
    THREAD_OPS_RDMA = 1,
    THREAD_OPS_AM = 2,
    THREAD_OPS_ENGINE = 4
};

struct MPIDI_NBRMA_thread_slot {
    unsigned char *pending;     /* per rank: THREAD_OPS_* since the last flush */
    int *ranks, n_ranks;        /* where pending != 0 */
};

static int next_thread_number;
static __thread int thread_number = -1;

/* The calling thread's slot of `ew` (allocated at its first use), or NULL. */
static MPIDI_NBRMA_thread_slot_t *my_slot(MPIDI_NBRMA_epoch_win_t * ew, bool create)
{
    MPIDI_NBRMA_thread_slot_t *slot;
    int nprocs = ew->win->comm_ptr->local_size;

    if (thread_number < 0) {
        if (!create)
            return NULL;
        thread_number = __atomic_fetch_add(&next_thread_number, 1, __ATOMIC_RELAXED);
    }
    if (thread_number >= MAX_SLOTS)
        return NULL;
    slot = &ew->thread_slots[thread_number];
    if (slot->pending == NULL && create) {
        /* without memory the thread flushes with process scope */
        slot->ranks = MPL_malloc(nprocs * sizeof(int), MPL_MEM_RMA);
        if (slot->ranks)
            slot->pending = MPL_calloc(nprocs, 1, MPL_MEM_RMA);
        if (slot->pending == NULL) {
            MPL_free(slot->ranks);
            slot->ranks = NULL;
        }
    }
    return slot->pending ? slot : NULL;
}

int MPIDI_NBRMA_thread_scope_init(MPIDI_NBRMA_epoch_win_t * ew)
{
    int mpi_errno = MPI_SUCCESS;

    ew->thread_slots = MPL_calloc(MAX_SLOTS, sizeof(MPIDI_NBRMA_thread_slot_t), MPL_MEM_RMA);
    MPIR_ERR_CHKANDJUMP(ew->thread_slots == NULL, mpi_errno, MPI_ERR_NO_MEM, "**nomem");
  fn_exit:
    return mpi_errno;
  fn_fail:
    goto fn_exit;
}

void MPIDI_NBRMA_thread_scope_free(MPIDI_NBRMA_epoch_win_t * ew)
{
    if (ew->thread_slots == NULL)
        return;
    for (int i = 0; i < MAX_SLOTS; i++) {
        MPIDI_NBRMA_thread_slot_t *slot = &ew->thread_slots[i];
        if (slot->pending == NULL)
            continue;
        MPL_free(slot->pending);
        MPL_free(slot->ranks);
    }
    MPL_free(ew->thread_slots);
    ew->thread_slots = NULL;
}

static void note(MPIDI_NBRMA_epoch_win_t * ew, int rank, unsigned char bits)
{
    MPIDI_NBRMA_thread_slot_t *slot = my_slot(ew, true);

    if (slot == NULL) {
        /* A thread beyond the slots flushes with process scope. Without
         * memory for a slot, the window's flushes all do from now on: this
         * thread's operations go unnoted, and its flushes must not find
         * "nothing issued". */
        if (thread_number < MAX_SLOTS)
            ew->thread_scope = false;
        return;
    }
    if (slot->pending[rank] == 0)
        slot->ranks[slot->n_ranks++] = rank;
    slot->pending[rank] |= bits;
}

void MPIDI_NBRMA_thread_scope_note_performed(MPIDI_NBRMA_epoch_win_t * ew,
                                             const MPIDI_NBRMA_rma_op_t * op, bool by_mpich)
{
    if (ew->thread_scope)
        note(ew, op->target_rank, by_mpich && MPIDI_NBRMA_mpich_may_use_am(ew->win, op) ?
             THREAD_OPS_RDMA | THREAD_OPS_AM : THREAD_OPS_RDMA);
}

void MPIDI_NBRMA_thread_scope_note_recorded(MPIDI_NBRMA_epoch_win_t * ew, int rank)
{
    if (ew->thread_scope)
        note(ew, rank, THREAD_OPS_ENGINE);
}

static bool covers(int rank, int r)
{
    return rank == NBRMA_ALL_RANKS || rank == r;
}

void MPIDI_NBRMA_thread_scope_flushed(MPIDI_NBRMA_epoch_win_t * ew, int rank)
{
    MPIDI_NBRMA_thread_slot_t *slot = ew->thread_scope ? my_slot(ew, false) : NULL;

    if (slot == NULL)
        return;
    for (int i = slot->n_ranks; i-- > 0;) {
        int r = slot->ranks[i];
        if (!covers(rank, r))
            continue;
        slot->pending[r] = 0;
        slot->ranks[i] = slot->ranks[--slot->n_ranks];
    }
}

/* Whether the calling thread may flush toward `rank` by itself: a
 * thread-scope window, a slot, and nothing of the thread's in the engine. */
static bool thread_may_flush(MPIDI_NBRMA_epoch_win_t * ew, int rank,
                             MPIDI_NBRMA_thread_slot_t ** slot_out)
{
    MPIDI_NBRMA_thread_slot_t *slot = ew->thread_scope ? my_slot(ew, false) : NULL;

    if (slot == NULL) {
        /* a thread without operations on a thread-scope window: nothing to
         * complete (unless it is beyond the slots and unnoted) */
        *slot_out = NULL;
        return ew->thread_scope && thread_number < MAX_SLOTS;
    }
    for (int i = 0; i < slot->n_ranks; i++)
        if (covers(rank, slot->ranks[i]) && (slot->pending[slot->ranks[i]] & THREAD_OPS_ENGINE))
            return false;
    *slot_out = slot;
    return true;
}

/* The ledger's wait for the slot's operations toward the targets `rank`
 * covers: their endpoints flushed, and MPIDIG's counters where the thread's
 * operations may have used active messages (they count every thread's: the
 * flush also waits for other threads' active messages to that target). */
static int slot_wait(MPIDI_NBRMA_epoch_win_t * ew, MPIDI_NBRMA_thread_slot_t * slot, int rank,
                     MPIDI_NBRMA_ledger_wait_t * wait)
{
    int mpi_errno = MPI_SUCCESS;

    MPIDI_NBRMA_ledger_wait_init(wait, ew->win);
    for (int i = 0; slot && i < slot->n_ranks && mpi_errno == MPI_SUCCESS; i++) {
        int r = slot->ranks[i];
        if (!covers(rank, r))
            continue;
        mpi_errno = MPIDI_NBRMA_ledger_need_endpoint(wait, r, false);
        if (mpi_errno == MPI_SUCCESS && (slot->pending[r] & THREAD_OPS_AM))
            mpi_errno = MPIDI_NBRMA_ledger_need_am(wait, r, false);
    }
    if (mpi_errno != MPI_SUCCESS)
        MPIDI_NBRMA_ledger_cancel(wait);
    return mpi_errno;
}

int MPIDI_NBRMA_thread_scope_flush(MPIDI_NBRMA_epoch_win_t * ew,
                                   const MPIDI_NBRMA_sync_call_t * call, bool blocking,
                                   bool *done)
{
    int mpi_errno = MPI_SUCCESS;
    MPIDI_NBRMA_thread_slot_t *slot;
    MPIDI_NBRMA_ledger_wait_t wait;
    int ready;

    *done = false;
    if (!thread_may_flush(ew, call->rank, &slot))
        goto fn_exit;
    /* wrong use (no passive epoch toward the target, a bad rank) is the
     * engine's to report; whether it holds other threads' operations is not
     * this flush's concern */
    mpi_errno = MPIDI_NBRMA_engine_errno(ew, nbrma_flush_ready(ew->engine, call->rank,
                                                               call->local, &ready));
    MPIR_ERR_CHECK(mpi_errno);
    mpi_errno = slot_wait(ew, slot, call->rank, &wait);
    MPIR_ERR_CHECK(mpi_errno);
    if (blocking) {
        /* On shared memory it is released at once. The waits let the
         * process's other threads into MPI: what they issue meanwhile is not
         * this flush's to wait for. */
        mpi_errno = MPIDI_NBRMA_ledger_block(&wait, true);
        MPIR_ERR_CHECK(mpi_errno);
    } else {
        /* A nonblocking flush completes here when the thread's operations
         * are complete at the call; otherwise it goes to the engine (process
         * scope), whose request the progress engine completes. The endpoint
         * flushes started here go on inside UCX. */
        bool released;

        mpi_errno = MPIDI_NBRMA_ledger_done_now(&wait, &released);
        MPIR_ERR_CHECK(mpi_errno);
        if (!released)
            goto fn_exit;
    }
    MPIDI_NBRMA_thread_scope_flushed(ew, call->rank);
    *done = true;

  fn_exit:
    return mpi_errno;
  fn_fail:
    goto fn_exit;
}
