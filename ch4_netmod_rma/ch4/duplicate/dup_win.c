/*
 * mpich-nbrma: duplicated windows (MPIX_Win_dup_with_info; Schuchart et al.,
 * "Quo Vadis MPI RMA?", EuroMPI'21, section 3). A duplicate is another handle
 * to its parent's window (same memory, peers, epochs, requests): its table
 * forwards every call to the parent's (MPIDI_NBRMA_win_ops: MPICH's for a
 * parent without component state). Only the per-handle keys differ
 * (MPIDI_NBRMA_handle_keys_t travels with each operation). Creating and freeing
 * a duplicate is local; hooks/win_hooks.c keeps a freed parent for its live
 * duplicates (dup_count, dup_keep_parent).
 */

#include "mpidimpl.h"
#include "nbrma_win.h"
#include "nbrma_settings.h"
#include "nbrma_window_object.h"
#include "dup_parents.h"

typedef struct {
    MPIDI_NBRMA_win_state_t state;      /* ops: MPIDI_NBRMA_dup_win_ops */
    nbrma_dup_parent_t *parent; /* lives while it has duplicates */
    MPIDI_NBRMA_handle_keys_t keys;     /* this handle's */
    bool wants_assert_intrinsic;
    bool wants_order;
} dup_win_t;

/* the windows with duplicates here (dup_parents.h: their win is an MPIR_Win) */
static nbrma_dup_parents_t parents;

static dup_win_t *dup_win(MPIR_Win * win)
{
    return (dup_win_t *) MPIDI_NBRMA_WIN_STATE(win);
}

static bool parent_intrinsic(MPIR_Win * parent, const MPIDI_NBRMA_intrinsic_query_t * query)
{
    const MPIDI_NBRMA_win_ops_t *ops = MPIDI_NBRMA_win_ops(parent);
    return ops->op_intrinsic && ops->op_intrinsic(parent, query);
}

/* The assert holds where the parent has intrinsic accumulates at all: 8-byte
 * sums stand for them (every window with UCX atomics routes those). */
static bool assert_in_force(const dup_win_t * dw)
{
    MPIDI_NBRMA_intrinsic_query_t sum = {.n = 1,.max_count = 1,.datatype = MPI_INT64_T };

    sum.ops[0].kind = MPIDI_NBRMA_OP_ACCUMULATE;
    sum.ops[0].op = MPI_SUM;
    return dw->wants_assert_intrinsic && parent_intrinsic(dw->parent->win, &sum);
}

static void read_keys(dup_win_t * dw, MPIR_Info * info)
{
    MPIDI_NBRMA_info_get_bool(info, MPIDI_NBRMA_INFO_ASSERT_INTRINSIC,
                              &dw->wants_assert_intrinsic);
    MPIDI_NBRMA_info_get_bool(info, MPIDI_NBRMA_INFO_WIN_ORDER, &dw->wants_order);
    dw->keys.assert_intrinsic = assert_in_force(dw);
    dw->keys.order = dw->wants_order && MPIDI_NBRMA_win_ops(dw->parent->win)->orders;
}

static int dup_rma(const MPIDI_NBRMA_rma_op_t * op, MPIR_Win * win)
{
    dup_win_t *dw = dup_win(win);
    MPIDI_NBRMA_rma_op_t on_parent = *op;

    on_parent.dup_keys = &dw->keys;
    return MPIDI_NBRMA_win_ops(dw->parent->win)->rma(&on_parent, dw->parent->win);
}

static int dup_sync(const MPIDI_NBRMA_sync_call_t * call, MPIR_Win * win)
{
    MPIR_Win *parent = dup_win(win)->parent->win;
    return MPIDI_NBRMA_win_ops(parent)->sync(call, parent);
}

static int dup_start_sync(const MPIDI_NBRMA_sync_call_t * call, MPIR_Win * win,
                          MPIR_Request ** request)
{
    MPIR_Win *parent = dup_win(win)->parent->win;
    return MPIDI_NBRMA_win_ops(parent)->start_sync(call, parent, request);
}

/* The parent's keys (through the parent's kind), then this handle's own. */
static int dup_get_info(MPIR_Win * win, MPIR_Info ** info_p_p)
{
    dup_win_t *dw = dup_win(win);
    const MPIDI_NBRMA_info_entry_t keys[] = {
        INFO_BOOL(MPIDI_NBRMA_INFO_ASSERT_INTRINSIC, dw->keys.assert_intrinsic),
        INFO_BOOL(MPIDI_NBRMA_INFO_WIN_ORDER, dw->keys.order),
        INFO_BOOL("mpix_win_duplicate", true),
    };
    int mpi_errno = MPID_Win_get_info(dw->parent->win, info_p_p);

    if (mpi_errno == MPI_SUCCESS)
        mpi_errno = MPIDI_NBRMA_info_set_all(*info_p_p, INFO_ENTRIES(keys));
    return mpi_errno;
}

/* Only this handle's keys: the window's are shared by every handle. */
static int dup_set_info(MPIR_Win * win, MPIR_Info * info)
{
    read_keys(dup_win(win), info);
    return MPI_SUCCESS;
}

static bool dup_op_intrinsic(MPIR_Win * win, const MPIDI_NBRMA_intrinsic_query_t * query)
{
    return parent_intrinsic(dup_win(win)->parent->win, query);
}

int MPIR_Win_dup_with_info_impl(MPIR_Win * win, MPIR_Info * info, MPIR_Win ** newwin)
{
    int mpi_errno = MPI_SUCCESS;
    MPIDI_NBRMA_win_state_t *state = MPIDI_NBRMA_WIN_STATE(win);
    /* a duplicate of a duplicate is one of its parent (maybe freed already) */
    const dup_win_t *source = state && state->ops == &MPIDI_NBRMA_dup_win_ops ? dup_win(win) : NULL;
    nbrma_dup_parent_t *parent;
    dup_win_t *dw = NULL;
    MPIR_Win *dup = NULL;

    MPIR_FUNC_ENTER;

    parent = source ? source->parent : nbrma_dup_parents_get(&parents, win);
    MPIR_ERR_CHKANDJUMP(parent == NULL, mpi_errno, MPI_ERR_NO_MEM, "**nomem");
    win = parent->win;
    dw = MPL_calloc(1, sizeof(*dw), MPL_MEM_RMA);
    MPIR_ERR_CHKANDJUMP(dw == NULL, mpi_errno, MPI_ERR_NO_MEM, "**nomem");
    dw->state.ops = &MPIDI_NBRMA_dup_win_ops;
    dw->parent = parent;
    /* the source handle's keys (the paper's rule), then `info` over them */
    if (source) {
        dw->wants_assert_intrinsic = source->wants_assert_intrinsic;
        dw->wants_order = source->wants_order;
        dw->keys = source->keys;
    } else {
        MPIR_Info *parent_info = NULL;
        mpi_errno = MPID_Win_get_info(win, &parent_info);
        MPIR_ERR_CHECK(mpi_errno);
        read_keys(dw, parent_info);
        MPIR_Info_free_impl(parent_info);
    }
    if (info)
        read_keys(dw, info);
    /* the parent's generic fields (MPI_Win_get_attr answers as for it) and a
     * copy of its device part for the MPICH calls the hooks do not take
     * (MPI_Win_shared_query); all state changes go through the table */
    mpi_errno = MPIDI_NBRMA_window_object_create(win, &dup);
    MPIR_ERR_CHECK(mpi_errno);
    dup->base = win->base;
    dup->size = win->size;
    dup->disp_unit = win->disp_unit;
    dup->create_flavor = win->create_flavor;
    dup->model = win->model;
    dup->dev = win->dev;
    MPIDIG_WIN(dup, nbrma) = dw;
    parent->live_dups++;
    *newwin = dup;

  fn_exit:
    MPIR_FUNC_EXIT;
    return mpi_errno;
  fn_fail:
    MPL_free(dw);
    if (parent)
        nbrma_dup_parents_unused(&parents, parent);
    goto fn_exit;
}

/* Local: the window stays with its other handles. A memory-handle window
 * whose handle was freed before (dup_keep_parent) goes with its last one. */
static int dup_free(MPIR_Win ** win_ptr, int *handled)
{
    MPIR_Win *win = *win_ptr;
    dup_win_t *dw = dup_win(win);
    nbrma_dup_parent_t *p = dw->parent;
    void *orphan;
    MPIR_Win *parent;
    int parent_handled;

    MPL_free(dw);
    MPIDI_NBRMA_window_object_free(win);
    *handled = 1;
    nbrma_dup_parents_release(&parents, p, &orphan);
    if (orphan == NULL)
        return MPI_SUCCESS;
    parent = orphan;
    return MPIDI_NBRMA_WIN_STATE(parent)->ops->free(&parent, &parent_handled);
}

int MPIDI_NBRMA_dup_count(MPIR_Win * win)
{
    return nbrma_dup_parents_count(&parents, win);
}

void MPIDI_NBRMA_dup_keep_parent(MPIR_Win * win)
{
    nbrma_dup_parents_orphan(&parents, win);
}

const MPIDI_NBRMA_win_ops_t MPIDI_NBRMA_dup_win_ops = {
    .rma = dup_rma,
    .sync = dup_sync,
    .start_sync = dup_start_sync,
    .get_info = dup_get_info,
    .set_info = dup_set_info,
    .free = dup_free,
    .op_intrinsic = dup_op_intrinsic,
    .local_free = true,
};
