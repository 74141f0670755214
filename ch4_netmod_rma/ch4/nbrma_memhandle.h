/*
 * mpich-nbrma: memory-handle windows (MPIX_Memhandle_create,
 * MPIX_Win_from_memhandle, MPIX_Memhandle_release), after Schuchart et al.,
 * "Quo Vadis MPI RMA?", EuroMPI'21, section 4.2 and Listing 5.
 *
 * Two kinds of window state (nbrma_win_hooks.h):
 *  - the parent: a dynamic window with memory exposed through it by this
 *    process (registrations) or memory-handle windows made from it here
 *    (children). Its synchronization calls first complete the children's RDMA,
 *    because the children's passive-target epoch is the parent's.
 *  - the memory-handle window: one target, one remote region, one rkey.
 */

#ifndef NBRMA_MEMHANDLE_H_INCLUDED
#define NBRMA_MEMHANDLE_H_INCLUDED

#include "nbrma_win_hooks.h"

typedef struct MPIDI_NBRMA_registration {
    uint64_t generation;        /* unique in this process, written into the handle */
    void *base;
    MPI_Aint size;
    ucp_mem_h mem_h;            /* NULL for an empty region */
    struct MPIDI_NBRMA_registration *next;
} MPIDI_NBRMA_registration_t;

struct MPIDI_NBRMA_memhandle_win;

typedef struct MPIDI_NBRMA_parent {
    MPIDI_NBRMA_win_state_t state;      /* MPIDI_NBRMA_WIN_MEMHANDLE_PARENT */
    MPIDI_NBRMA_registration_t *registrations;
    int num_registrations;
    struct MPIDI_NBRMA_memhandle_win *children;
    int num_children;
    /* per rank of the parent: RDMA issued through a child and not flushed yet */
    bool *rdma_pending;
    int num_rdma_pending;
} MPIDI_NBRMA_parent_t;

typedef struct MPIDI_NBRMA_memhandle_win {
    MPIDI_NBRMA_win_state_t state;      /* MPIDI_NBRMA_WIN_MEMHANDLE */
    MPIR_Win *win;
    MPIR_Win *parent;           /* NULL once the parent has been freed */
    int target;                 /* the owner, a rank of the parent */
    uint64_t remote_base;       /* the owner's address of displacement 0 */
    uint64_t generation;        /* of the owner's registration */
    ucp_rkey_h rkey;            /* NULL: no RDMA to this target (self, empty, unreachable) */
    struct MPIDI_NBRMA_memhandle_win *next_sibling;
} MPIDI_NBRMA_memhandle_win_t;

int MPIDI_NBRMA_memhandle_rma(const MPIDI_NBRMA_rma_op_t * op, MPIR_Win * win);
int MPIDI_NBRMA_memhandle_sync(const MPIDI_NBRMA_sync_call_t * call, MPIR_Win * win);
int MPIDI_NBRMA_parent_sync(const MPIDI_NBRMA_sync_call_t * call, MPIR_Win * win);
int MPIDI_NBRMA_memhandle_get_info(MPIR_Win * win, MPIR_Info ** info_p_p);
/* Frees a memory-handle window, or the component's state of a parent; *handled
 * says whether the window itself is gone. */
int MPIDI_NBRMA_memhandle_win_free(MPIR_Win ** win_ptr, int *handled);

#endif /* NBRMA_MEMHANDLE_H_INCLUDED */
