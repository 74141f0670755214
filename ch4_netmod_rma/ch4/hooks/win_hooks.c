/*
 * mpich-nbrma: the hooks of a window's life: process init (handlers, the CPU
 * transactions switch), creation (which picks the kind), free, info, attach
 * and detach; after creation everything goes through the kind's table.
 */

#include "mpidimpl.h"
#include "mpidi_nbrma_hooks.h"
#include "nbrma_win.h"
#include "nbrma_ledger_adapter.h"
#include "notify.h"
#include "nbrma_win_meeting.h"
#include "nbrma_progress.h"
#include "cpu_transactions.h"

/* Every process registers the same handlers in the same order, once: MPICH
 * cannot unregister handlers, and MPID_Init may run again (sessions). */
int MPIDI_NBRMA_init_hook(void)
{
    static bool registered;
    int mpi_errno = MPI_SUCCESS;

    nbrma_cpu_transactions_enable(MPIR_CVAR_NBRMA_CPU_TRANSACTIONS);
    if (registered)
        return MPI_SUCCESS;
    mpi_errno = MPIDI_NBRMA_epochs_register_handlers();
    if (mpi_errno == MPI_SUCCESS)
        mpi_errno = MPIDI_NBRMA_rkey_cache_register_handlers();
    if (mpi_errno == MPI_SUCCESS)
        mpi_errno = MPIDI_NBRMA_notify_register_handlers();
    registered = (mpi_errno == MPI_SUCCESS);
    return mpi_errno;
}

int MPIDI_NBRMA_win_init_hook(MPIR_Win * win, MPIR_Info * info)
{
    int mpi_errno = win->create_flavor == MPI_WIN_FLAVOR_DYNAMIC ?
        MPIDI_NBRMA_dynamic_epochs_win_create(win, info) :
        MPIDI_NBRMA_epochs_win_create(win, info);

    /* the progress agent arms while windows exist */
    if (mpi_errno == MPI_SUCCESS)
        MPIDI_NBRMA_agent_windows(+1);
    return mpi_errno;
}

/* Windows kept for duplicates after their collective free, in free order (the
 * same everywhere); MPI_Finalize frees them before MPICH's device goes. */
typedef struct kept_window {
    MPIR_Win *win;
    struct kept_window *next;
} kept_window_t;

static kept_window_t *kept_windows, *last_kept;

static int free_kept_windows(void *extra)
{
    (void) extra;
    while (kept_windows) {
        kept_window_t *k = kept_windows;
        MPIR_Win *win = k->win;

        LL_DELETE(kept_windows, last_kept, k);
        MPL_free(k);
        /* the window's last collective: no duplicate counts any more */
        if (MPID_Win_free(&win) != MPI_SUCCESS)
            MPL_internal_error_printf("mpich-nbrma: MPI_Finalize could not free a window "
                                      "that had duplicates\n");
    }
    return 0;
}

/* *kept: `win` stays for its live duplicates. A collective window asks every
 * process (a peer may hold one when this one has none), then stays everywhere
 * until MPI_Finalize. That allreduce is MPI_Win_free's meeting: each process
 * enters it with its epochs complete (finish_own), serving peers meanwhile.
 * A memory-handle window stays until its last duplicate here goes. */
static int keep_for_duplicates(MPIR_Win * win, bool local, int *kept)
{
    int mpi_errno = MPI_SUCCESS;
    int mine = MPIDI_NBRMA_dup_count(win), anywhere = mine;
    MPIR_Errflag_t errflag = MPIR_ERR_NONE;
    static bool callback_added;
    kept_window_t *k;

    *kept = 0;
    if (!local) {
        mpi_errno = MPIR_Allreduce_impl(&mine, &anywhere, 1, MPI_INT, MPI_MAX, win->comm_ptr,
                                        &errflag);
        MPIR_ERR_CHECK(mpi_errno);
    }
    if (anywhere == 0)
        goto fn_exit;
    if (local) {
        MPIDI_NBRMA_dup_keep_parent(win);
        *kept = 1;
        goto fn_exit;
    }
    k = MPL_malloc(sizeof(*k), MPL_MEM_RMA);
    MPIR_ERR_CHKANDJUMP(k == NULL, mpi_errno, MPI_ERR_NO_MEM, "**nomem");
    k->win = win;
    LL_APPEND(kept_windows, last_kept, k);
    if (!callback_added) {
        MPIR_Add_finalize(free_kept_windows, NULL, MPIR_FINALIZE_CALLBACK_PRIO + 1);
        callback_added = true;
    }
    *kept = 1;

  fn_exit:
    return mpi_errno;
  fn_fail:
    goto fn_exit;
}

int MPIDI_NBRMA_win_free_hook(MPIR_Win ** win_ptr, int *handled)
{
    int mpi_errno = MPI_SUCCESS;
    const MPIDI_NBRMA_win_ops_t *ops;

    MPIR_FUNC_ENTER;

    *handled = 0;
    /* no request may outlive its window (also without the engine: nonblocking
     * flushes, remote-completing requests) */
    mpi_errno = MPIDI_NBRMA_ledger_finish_window(*win_ptr);
    MPIR_ERR_CHECK(mpi_errno);
    mpi_errno = MPIDI_NBRMA_notify_forget_window(*win_ptr);
    MPIR_ERR_CHECK(mpi_errno);
    ops = MPIDI_NBRMA_win_ops(*win_ptr);
    /* a window that stays for duplicates here keeps its epochs going */
    if (!ops->local_free && ops->finish_own && MPIDI_NBRMA_dup_count(*win_ptr) == 0) {
        mpi_errno = ops->finish_own(*win_ptr);
        MPIR_ERR_CHECK(mpi_errno);
    }
    mpi_errno = keep_for_duplicates(*win_ptr, ops->local_free, handled);
    MPIR_ERR_CHECK(mpi_errno);
    if (*handled)
        goto fn_exit;
    /* every process entered that allreduce with its epochs finished:
     * MPIDIG's barrier would only repeat it */
    if (!ops->local_free && ops->finish_own)
        MPIDI_NBRMA_win_meeting_held(*win_ptr);
    mpi_errno = ops->free(win_ptr, handled);
    /* the local kinds were not made by the init hook, nor counted */
    if (mpi_errno == MPI_SUCCESS && !ops->local_free)
        MPIDI_NBRMA_agent_windows(-1);

  fn_exit:
    MPIR_FUNC_EXIT;
    return mpi_errno;
  fn_fail:
    goto fn_exit;
}

int MPIDI_NBRMA_win_get_info(MPIR_Win * win, MPIR_Info ** info_p_p)
{
    return MPIDI_NBRMA_WIN_STATE(win)->ops->get_info(win, info_p_p);
}

int MPIDI_NBRMA_win_set_info(MPIR_Win * win, MPIR_Info * info)
{
    return MPIDI_NBRMA_WIN_STATE(win)->ops->set_info(win, info);
}

int MPIDI_NBRMA_win_attach_hook(MPIR_Win * win, void *base, MPI_Aint size)
{
    const MPIDI_NBRMA_win_ops_t *ops = MPIDI_NBRMA_win_ops(win);
    return ops->attach ? ops->attach(win, base, size) : MPI_SUCCESS;
}

int MPIDI_NBRMA_win_detach_hook(MPIR_Win * win, const void *base)
{
    const MPIDI_NBRMA_win_ops_t *ops = MPIDI_NBRMA_win_ops(win);
    return ops->detach ? ops->detach(win, base) : MPI_SUCCESS;
}
