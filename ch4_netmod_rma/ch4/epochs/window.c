/*
 * mpich-nbrma: engine windows: creation, free, info keys, and their
 * operations table.
 *
 * A window of any flavor gets an engine unless its info key
 * mpich_nbrma_epochs, or else MPIR_CVAR_NBRMA_EPOCHS, says no (dynamic
 * windows: dynamic/dynamic_epochs.c). The creation is collective: the
 * decision must be the same on every process. Once the memory is known, the
 * processes agree whether accumulates go to UCX atomics (native_atomics.h).
 */

#include "mpidimpl.h"
#include "epoch_win.h"
#include "nbrma_mpich_path.h"
#include "nbrma_progress.h"
#include "nbrma_settings.h"
#include "user_strings.h"
#include "native_atomics.h"
#include "narrow_atomics.h"
#include "ucx_memory.h"

/* Not a dynamic window's memory, attached later. */
static bool memory_at_creation(const MPIDI_NBRMA_epoch_win_t * ew)
{
    return ew->win->create_flavor != MPI_WIN_FLAVOR_DYNAMIC;
}

/* target_bytes as MPIDIG's handlers address the window (base, displacement unit). */
static bool window_bytes(MPIR_Win * win, int64_t target_disp, size_t len, char **addr)
{
    MPI_Aint offset;

    if (target_disp < 0 || win->disp_unit <= 0 || target_disp > win->size / win->disp_unit)
        return false;
    offset = (MPI_Aint) win->disp_unit * (MPI_Aint) target_disp;
    if ((MPI_Aint) len > win->size - offset)
        return false;
    *addr = (char *) MPIDIG_win_base_at_target(win) + offset;
    return true;
}

_Static_assert(NBRMA_N_REORDER_KEYS == 4, "MPIDI_NBRMA_epochs_get_info reports each");

static bool info_bool(void *info, const char *key, bool *on)
{
    return MPIDI_NBRMA_info_get_bool(info, key, on);
}

/* The settings MPI_Win_set_info may change. */
static int apply_window_info(MPIDI_NBRMA_epoch_win_t * ew, MPIR_Info * info)
{
    unsigned flags = nbrma_reorder_flags_from_info(ew->reorder_flags, info_bool, info);

    MPIDI_NBRMA_info_get_bool(info, MPIDI_NBRMA_INFO_WHOLE_LOCK_EPOCHS, &ew->whole_lock_epochs);
    MPIDI_NBRMA_info_get_bool(info, MPIDI_NBRMA_INFO_PULLED_EPOCHS, &ew->pulled_epochs);
    MPIDI_NBRMA_info_get_bool(info, MPIDI_NBRMA_INFO_ASSERT_INTRINSIC,
                              &ew->wants_assert_intrinsic);
    MPIDI_NBRMA_info_get_bool(info, MPIDI_NBRMA_INFO_WIN_ORDER, &ew->win_order);
    if (flags != ew->reorder_flags) {
        int rc = nbrma_set_reorder_flags(ew->engine, flags);
        if (rc != NBRMA_OK)
            return MPIDI_NBRMA_engine_errno(ew, rc);
        ew->reorder_flags = flags;
    }
    return MPI_SUCCESS;
}

/* Collective; the exchange also agrees on *agreed (NULL: nothing). */
static int mailbox_create(MPIDI_NBRMA_epoch_win_t * ew, unsigned *agreed)
{
    return MPIDI_NBRMA_mailbox_create(ew->win, ew->wants_mailbox, MPIDI_NBRMA_epochs_deliver_mail,
                                      ew, agreed, &ew->mailbox);
}

static void free_state(MPIDI_NBRMA_epoch_win_t * ew)
{
    MPIDI_NBRMA_lock_retry_forget(ew);
    nbrma_inbox_destroy(ew->inbox);
    MPIDI_NBRMA_held_free(ew);
    /* MPI_Win_free settled the ledger's waits of the window first */
    nbrma_order_tracker_destroy(ew->order);
    nbrma_engine_free(ew->engine);
    nbrma_peer_reach_free(&ew->reach);
    if (ew->mailbox)
        MPIDI_NBRMA_mailbox_free(ew->mailbox);
    nbrma_issued_ops_destroy(ew->issued);
    nbrma_grant_cache_destroy(ew->grants);
    nbrma_thread_marks_destroy(ew->thread_marks);
    MPIDI_NBRMA_group_ranks_release(ew);
    MPL_free(ew->lanes_of);
    MPL_free(ew);
}

int MPIDI_NBRMA_epochs_win_create(MPIR_Win * win, MPIR_Info * info)
{
    int mpi_errno = MPI_SUCCESS;
    MPIDI_NBRMA_epoch_win_t *ew = NULL;
    nbrma_transport transport = MPIDI_NBRMA_epochs_transport;
    bool enabled = MPIR_CVAR_NBRMA_EPOCHS;
    int rc;

    MPIR_FUNC_ENTER;

    MPIDI_NBRMA_info_get_bool(info, MPIDI_NBRMA_INFO_EPOCHS, &enabled);
    if (!enabled)
        goto fn_exit;

    ew = MPL_calloc(1, sizeof(*ew), MPL_MEM_RMA);
    MPIR_ERR_CHKANDJUMP(ew == NULL, mpi_errno, MPI_ERR_NO_MEM, "**nomem");
    ew->state.ops = &MPIDI_NBRMA_epochs_win_ops;
    ew->win = win;
    ew->mpich_path_rma = MPIDI_NBRMA_mpich_rma;
    ew->target_bytes = window_bytes;
    ew->whole_lock_epochs = MPIR_CVAR_NBRMA_WHOLE_LOCK_EPOCHS;
    ew->pulled_epochs = MPIR_CVAR_NBRMA_PULLED_EPOCHS;
    ew->wants_native_atomics = MPIR_CVAR_NBRMA_NATIVE_ATOMICS;
    MPIDI_NBRMA_info_get_bool(info, MPIDI_NBRMA_INFO_NATIVE_ATOMICS, &ew->wants_native_atomics);
    ew->wants_mailbox = MPIR_CVAR_NBRMA_MAILBOXES;
    MPIDI_NBRMA_info_get_bool(info, MPIDI_NBRMA_INFO_MAILBOXES, &ew->wants_mailbox);
    ew->wants_cross_memory_rma = MPIR_CVAR_NBRMA_CROSS_MEMORY_RMA;
    MPIDI_NBRMA_info_get_bool(info, MPIDI_NBRMA_INFO_CROSS_MEMORY_RMA, &ew->wants_cross_memory_rma);
    ew->cross_memory_min_bytes = MPIR_CVAR_NBRMA_CROSS_MEMORY_MIN_BYTES < 0 ? 0 :
        (size_t) MPIR_CVAR_NBRMA_CROSS_MEMORY_MIN_BYTES;
    MPIDI_NBRMA_info_get_size(info, MPIDI_NBRMA_INFO_CROSS_MEMORY_MIN_BYTES,
                              &ew->cross_memory_min_bytes);
    ew->cross_memory_call_max_ns = MPIR_CVAR_NBRMA_CROSS_MEMORY_CALL_MAX_NS < 0 ? SIZE_MAX :
        (size_t) MPIR_CVAR_NBRMA_CROSS_MEMORY_CALL_MAX_NS;
    MPIDI_NBRMA_info_get_size(info, MPIDI_NBRMA_INFO_CROSS_MEMORY_CALL_MAX_NS,
                              &ew->cross_memory_call_max_ns);
    ew->mapped_atomics_min_bytes = MPIR_CVAR_NBRMA_MAPPED_ATOMICS_MIN_BYTES < 0 ? SIZE_MAX :
        (size_t) MPIR_CVAR_NBRMA_MAPPED_ATOMICS_MIN_BYTES;
    MPIDI_NBRMA_info_get_size(info, MPIDI_NBRMA_INFO_MAPPED_ATOMICS_MIN_BYTES,
                              &ew->mapped_atomics_min_bytes);
    ew->message_ops_max = MPIR_CVAR_NBRMA_MESSAGE_OPS_MAX < 0 ? 0 :
        (size_t) MPIR_CVAR_NBRMA_MESSAGE_OPS_MAX;
    MPIDI_NBRMA_info_get_size(info, MPIDI_NBRMA_INFO_MESSAGE_OPS_MAX, &ew->message_ops_max);
    /* fixed: a thread's operations before a change would not have been noted */
    ew->thread_scope = MPIDI_NBRMA_info_is(info, MPIDI_NBRMA_INFO_WIN_SCOPE, "thread");
    ew->issued = nbrma_issued_ops_create(win->comm_ptr->local_size);
    ew->grants = nbrma_grant_cache_create(win->comm_ptr->local_size);
    ew->inbox = nbrma_inbox_create(MPIDI_NBRMA_epochs_transport.drop_payload, ew);
    if (ew->thread_scope)
        ew->thread_marks = nbrma_thread_marks_create(win->comm_ptr->local_size);
    MPIR_ERR_CHKANDJUMP(!ew->issued || !ew->grants || !ew->inbox ||
                        (ew->thread_scope && !ew->thread_marks), mpi_errno, MPI_ERR_NO_MEM,
                        "**nomem");
    transport.ctx = ew;
    rc = nbrma_engine_create(win->comm_ptr->rank, win->comm_ptr->local_size, &transport,
                             &ew->engine);
    mpi_errno = MPIDI_NBRMA_engine_errno(ew, rc);
    MPIR_ERR_CHECK(mpi_errno);
    /* flush_local waits for local completion only (operations.c says when) */
    mpi_errno = MPIDI_NBRMA_engine_errno(ew, nbrma_set_local_completion_reports(ew->engine, 1));
    MPIR_ERR_CHECK(mpi_errno);
    mpi_errno = apply_window_info(ew, info);
    MPIR_ERR_CHECK(mpi_errno);
    /* no memory_ready call where the memory comes later: mailboxes now */
    if (!memory_at_creation(ew)) {
        mpi_errno = mailbox_create(ew, NULL);
        MPIR_ERR_CHECK(mpi_errno);
    }

    /* MPIDIG's per-operation checks see lock_all; the engine decides */
    MPIDIG_WIN(win, sync).access_epoch_type = MPIDIG_EPOTYPE_LOCK_ALL;
    MPIDIG_WIN(win, nbrma) = ew;

  fn_exit:
    MPIR_FUNC_EXIT;
    return mpi_errno;
  fn_fail:
    if (ew)
        free_state(ew);
    goto fn_exit;
}

void MPIDI_NBRMA_epochs_win_adopt(MPIR_Win * win, const MPIDI_NBRMA_win_ops_t * ops,
                                  struct MPIDI_NBRMA_dynamic_win *dynamic,
                                  int (*mpich_path_rma) (const MPIDI_NBRMA_rma_op_t * op,
                                                         MPIR_Win * win),
                                  bool (*own_rdma_for) (const MPIDI_NBRMA_rma_op_t * op,
                                                        MPIR_Win * win),
                                  bool (*target_bytes) (MPIR_Win * win, int64_t target_disp,
                                                        size_t len, char **addr))
{
    MPIDI_NBRMA_epoch_win_t *ew = MPIDI_NBRMA_epoch_win(win);

    ew->state.ops = ops;
    ew->state.dynamic = dynamic;
    ew->mpich_path_rma = mpich_path_rma;
    ew->own_rdma_for = own_rdma_for;
    ew->target_bytes = target_bytes;
}

/* Before the processes meet: open epochs are MPI_ERR_RMA_SYNC (the window
 * stays usable); closed ones are completed. The engine serves through the
 * meeting (hooks/win_hooks.c): a peer may still need a lock grant from us, and
 * a request arriving after the engine is gone would leave it hanging. */
int MPIDI_NBRMA_epochs_win_finish_own(MPIR_Win * win)
{
    int mpi_errno = MPI_SUCCESS;
    MPIDI_NBRMA_epoch_win_t *ew = MPIDI_NBRMA_epoch_win(win);

    MPIR_FUNC_ENTER;

    MPIR_ERR_CHKANDJUMP(nbrma_has_open_epochs(ew->engine), mpi_errno, MPI_ERR_RMA_SYNC,
                        "**nbrmafreeopen");
    /* the whole progress engine, so that sweeps run too; peers may wait for
     * our other threads. MPIDIG's acknowledgements too (rule R5): one that
     * arrived after the free would find no window */
    while (nbrma_has_pending_epochs(ew->engine) || nbrma_issued_ops_pending(ew->issued) ||
           !MPIDI_NBRMA_am_ops_complete(win, NBRMA_ALL_RANKS, false)) {
        mpi_errno = MPIDI_NBRMA_progress_blocking_round();
        MPIR_ERR_CHECK(mpi_errno);
    }

  fn_exit:
    MPIR_FUNC_EXIT;
    return mpi_errno;
  fn_fail:
    goto fn_exit;
}

/* After the meeting every peer's epochs are complete (releases still in
 * flight are dropped on arrival); then MPICH frees the window as usual. */
int MPIDI_NBRMA_epochs_win_free(MPIR_Win ** win_ptr, int *handled)
{
    int mpi_errno = MPI_SUCCESS;
    MPIR_Win *win = *win_ptr;

    *handled = 0;
    /* the sweep's last poll, and any wait started since the free began */
    mpi_errno = MPIDI_NBRMA_ledger_finish_window(win);
    if (mpi_errno == MPI_SUCCESS) {
        free_state(MPIDI_NBRMA_epoch_win(win));
        MPIDIG_WIN(win, nbrma) = NULL;
        MPIDIG_WIN(win, sync).access_epoch_type = MPIDIG_EPOTYPE_NONE;
    }
    return mpi_errno;
}

/* Collective: the mailboxes' exchange also agrees on native atomics and
 * whether UCX's atomics are the CPU's everywhere (narrow atomics need both). */
static int epochs_memory_ready(MPIR_Win * win)
{
    enum { NATIVE = 1u, NARROW = 2u };
    MPIDI_NBRMA_epoch_win_t *ew = MPIDI_NBRMA_epoch_win(win);
    unsigned agreed = 0;
    int mpi_errno;

    /* the lanes are read only where this process could have native atomics */
    if (MPIDI_NBRMA_native_atomics_possible(win, ew->wants_native_atomics))
        agreed = NATIVE | (MPIDI_NBRMA_narrow_atomics_possible(win) ? NARROW : 0u);
    mpi_errno = mailbox_create(ew, &agreed);
    if (mpi_errno == MPI_SUCCESS)
        mpi_errno = MPIDI_NBRMA_cross_memory_rma_decide(ew);
    if (mpi_errno != MPI_SUCCESS)
        agreed = 0;
    ew->native_atomics = agreed & NATIVE;
    ew->narrow_atomics = (agreed & NARROW) && ew->native_atomics;
    ew->intrinsic_atomics = ew->native_atomics && MPIDI_NBRMA_native_atomics_by_origin(win);
    return mpi_errno;
}

static bool epochs_op_intrinsic(MPIR_Win * win, const MPIDI_NBRMA_intrinsic_query_t * query)
{
    for (size_t i = 0; i < query->n; i++)
        if (!MPIDI_NBRMA_op_intrinsic(MPIDI_NBRMA_epoch_win(win), query->ops[i].kind,
                                      query->datatype, query->ops[i].op))
            return false;
    return true;
}

/* With the CPU's atomics where origins may use them too (narrow atomics;
 * integers, float and double where peers map this memory: rule R3). */
static int epochs_apply_acc(MPIR_Win * win, const MPIDI_NBRMA_acc_apply_t * acc, bool *applied)
{
    MPIDI_NBRMA_epoch_win_t *ew = MPIDI_NBRMA_epoch_win(win);

    *applied = false;
    if (!ew->narrow_atomics && !ew->mapped_here)
        return MPI_SUCCESS;
    return MPIDI_NBRMA_cpu_atomics_apply(acc->origin, acc->origin_count, acc->origin_datatype,
                                         acc->target_addr, acc->target_count,
                                         acc->target_datatype, acc->op, acc->fetched,
                                         ew->mapped_here, applied);
}

static int epochs_apply_cswap(MPIR_Win * win, void *target_addr, const void *origin,
                              void *compare_result, MPI_Datatype datatype, bool *applied)
{
    MPIDI_NBRMA_epoch_win_t *ew = MPIDI_NBRMA_epoch_win(win);

    *applied = false;
    if (!ew->narrow_atomics && !ew->mapped_here)
        return MPI_SUCCESS;
    return MPIDI_NBRMA_cpu_atomics_cswap(target_addr, origin, compare_result, datatype,
                                         ew->mapped_here, applied);
}

int MPIDI_NBRMA_epochs_set_info(MPIR_Win * win, MPIR_Info * info)
{
    int mpi_errno = MPIDI_NM_mpi_win_set_info(win, info);
    if (mpi_errno == MPI_SUCCESS)
        mpi_errno = apply_window_info(MPIDI_NBRMA_epoch_win(win), info);
    return mpi_errno;
}

/* MPICH's hints, then the settings in force on this window and its counts. */
int MPIDI_NBRMA_epochs_get_info(MPIR_Win * win, MPIR_Info ** info_p_p)
{
    MPIDI_NBRMA_epoch_win_t *ew = MPIDI_NBRMA_epoch_win(win);
    size_t deferred = 0, active = 0;
    int mpi_errno = MPIDI_NM_mpi_win_get_info(win, info_p_p);

    nbrma_epoch_counts(ew->engine, &deferred, &active);
    const MPIDI_NBRMA_info_entry_t keys[] = {
        INFO_BOOL(MPIDI_NBRMA_INFO_EPOCHS, true),
        INFO_STRING(MPIDI_NBRMA_INFO_WIN_SCOPE, ew->thread_scope ? "thread" : "process"),
        INFO_BOOL(nbrma_reorder_keys[0].key, ew->reorder_flags & nbrma_reorder_keys[0].flag),
        INFO_BOOL(nbrma_reorder_keys[1].key, ew->reorder_flags & nbrma_reorder_keys[1].flag),
        INFO_BOOL(nbrma_reorder_keys[2].key, ew->reorder_flags & nbrma_reorder_keys[2].flag),
        INFO_BOOL(nbrma_reorder_keys[3].key, ew->reorder_flags & nbrma_reorder_keys[3].flag),
        INFO_BOOL(MPIDI_NBRMA_INFO_WHOLE_LOCK_EPOCHS, ew->whole_lock_epochs),
        INFO_INT(MPIDI_NBRMA_INFO_WHOLE_LOCK_EPOCHS_SENT, ew->whole_lock_epochs_sent),
        INFO_BOOL(MPIDI_NBRMA_INFO_UCX_MEMORY,
                  win->size > 0 && MPIDI_NBRMA_memory_find(win->base, win->size, NULL)),
        INFO_BOOL(MPIDI_NBRMA_INFO_NATIVE_ATOMICS, ew->native_atomics),
        INFO_BOOL(MPIDI_NBRMA_INFO_NARROW_ATOMICS, ew->narrow_atomics),
        INFO_BOOL(MPIDI_NBRMA_INFO_ASSERT_INTRINSIC, MPIDI_NBRMA_assert_intrinsic(ew)),
        INFO_BOOL(MPIDI_NBRMA_INFO_WIN_ORDER, ew->win_order),
        INFO_BOOL(MPIDI_NBRMA_INFO_MAILBOXES, ew->mailbox != NULL),
        INFO_INT(MPIDI_NBRMA_INFO_MAILBOX_PEERS, nbrma_mailboxes_peers(ew->mailbox)),
        INFO_BOOL(MPIDI_NBRMA_INFO_PULLED_EPOCHS, ew->pulled_epochs),
        INFO_INT(MPIDI_NBRMA_INFO_PULLED_EPOCHS_SENT, ew->pulled_epochs_sent),
        INFO_INT(MPIDI_NBRMA_INFO_READABLE_PEERS, nbrma_mailboxes_readable_peers(ew->mailbox)),
        INFO_BOOL(MPIDI_NBRMA_INFO_CROSS_MEMORY_RMA, ew->wants_cross_memory_rma),
        INFO_INT(MPIDI_NBRMA_INFO_CROSS_MEMORY_PEERS, ew->reach.n_cross_memory_peers),
        INFO_INT(MPIDI_NBRMA_INFO_MAPPED_PEERS, ew->reach.n_mapped_peers),
        INFO_INT(MPIDI_NBRMA_INFO_CROSS_MEMORY_MIN_BYTES, ew->cross_memory_min_bytes),
        INFO_INT(MPIDI_NBRMA_INFO_CROSS_MEMORY_CALL_MAX_NS, ew->cross_memory_call_max_ns),
        INFO_INT(MPIDI_NBRMA_INFO_CROSS_MEMORY_CALL_NS, ew->cross_memory_call_ns),
        INFO_INT(MPIDI_NBRMA_INFO_MAPPED_ATOMICS_MIN_BYTES, ew->mapped_atomics_min_bytes),
        INFO_INT(MPIDI_NBRMA_INFO_MESSAGE_OPS_MAX, ew->message_ops_max),
        INFO_INT(MPIDI_NBRMA_INFO_DEFERRED_EPOCHS, deferred),
        INFO_INT(MPIDI_NBRMA_INFO_ACTIVE_EPOCHS, active),
    };

    if (mpi_errno == MPI_SUCCESS)
        mpi_errno = MPIDI_NBRMA_info_set_all(*info_p_p, INFO_ENTRIES(keys));
    return mpi_errno;
}

const MPIDI_NBRMA_win_ops_t MPIDI_NBRMA_epochs_win_ops = {
    .rma = MPIDI_NBRMA_epochs_rma,
    .sync = MPIDI_NBRMA_epochs_sync,
    .start_sync = MPIDI_NBRMA_epochs_start_sync,
    .get_info = MPIDI_NBRMA_epochs_get_info,
    .set_info = MPIDI_NBRMA_epochs_set_info,
    .finish_own = MPIDI_NBRMA_epochs_win_finish_own,
    .free = MPIDI_NBRMA_epochs_win_free,
    .memory_ready = epochs_memory_ready,
    .apply_acc = epochs_apply_acc,
    .apply_cswap = epochs_apply_cswap,
    .op_intrinsic = epochs_op_intrinsic,
    .orders = true,
    .carries_engine = true,
};
