/*
 * mpich-nbrma: windows whose epochs the nonblocking-epoch engine drives.
 *
 * Internal to libmpi. See nbrma_epochs.c for the design.
 */

#ifndef NBRMA_EPOCHS_H_INCLUDED
#define NBRMA_EPOCHS_H_INCLUDED

#include "nbrma_win_hooks.h"

/* Whether the engine drives the epochs of `win`. */
bool MPIDI_NBRMA_win_has_engine(MPIR_Win * win);

/* The RMA operations, synchronization calls, info and free of such windows. */
int MPIDI_NBRMA_epochs_rma(const MPIDI_NBRMA_rma_op_t * op, MPIR_Win * win);
int MPIDI_NBRMA_epochs_sync(const MPIDI_NBRMA_sync_call_t * call, MPIR_Win * win);
int MPIDI_NBRMA_epochs_get_info(MPIR_Win * win, MPIR_Info ** info_p_p);
int MPIDI_NBRMA_epochs_set_info(MPIR_Win * win, MPIR_Info * info);
int MPIDI_NBRMA_epochs_win_free(MPIR_Win * win);

/* MPIX_Win_iflush* on such a window; target is a window rank or NBRMA_ALL_RANKS
 * (nbrma_core.h). */
int MPIDI_NBRMA_epochs_iflush(MPIR_Win * win, int target, bool local, MPIR_Request ** request);

/* A progress hook that is active only while it has work (MPICH has few hook
 * slots, and every active hook runs in every progress call). Shared by the
 * flush requests of ordinary windows and the completion probes of engine
 * windows; defined in nbrma_flush.c. */
typedef struct MPIDI_NBRMA_hook {
    int (*poll) (int *made_progress);
    int id;                     /* -1 until registered at the first activation */
    bool active;
} MPIDI_NBRMA_hook_t;

int MPIDI_NBRMA_hook_activate(MPIDI_NBRMA_hook_t * hook);
int MPIDI_NBRMA_hook_deactivate(MPIDI_NBRMA_hook_t * hook);

/* *request = a request that is complete at once (as for MPI_Rput to
 * MPI_PROC_NULL). */
int MPIDI_NBRMA_complete_request(MPIR_Request ** request);

/* Nonblocking UCX endpoint flushes, shared by the flush requests of ordinary
 * windows and the completion probes of engine windows: starts a flush of the
 * endpoint of every rank in [first, last] that `win` reaches with UCX RDMA and
 * appends the requests still in progress to reqs (room for last-first+1). */
int MPIDI_NBRMA_ucx_flush_start(MPIR_Win * win, int first, int last, int vni,
                                void **reqs, int *n_reqs);
/* Frees the finished ones; returns non-zero once none is left. */
int MPIDI_NBRMA_ucx_flush_test(void **reqs, int *n_reqs, int vni, int *mpi_errno_out);

#endif /* NBRMA_EPOCHS_H_INCLUDED */
