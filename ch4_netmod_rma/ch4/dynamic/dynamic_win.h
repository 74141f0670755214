/*
 * mpich-nbrma: dynamic windows and the memory-handle windows made from them.
 * Internal to ch4/dynamic/.
 *
 * MPICH 4.0.2 sends every operation on a dynamic window as an active message:
 * the origin knows no registration of the target's attached memory. Two
 * things give that memory to UCX RDMA, and both need the dynamic window's
 * state:
 *   - the rkey cache (rkey_cache.c): origins fetch the rkey of an attached
 *     region from its target and put/get with RDMA from then on;
 *   - memory handles (memhandle.c, memhandle_win.c, after Schuchart et al.,
 *     "Quo Vadis MPI RMA?", EuroMPI'21, section 4.2): the owner exposes memory
 *     through the dynamic window and hands out a handle that carries its
 *     rkey; an origin makes a window of one target and one region from it.
 * Epochs stay MPICH's, on the dynamic window (the paper's rule for memory-handle
 * windows): its unlocks and flushes first complete the RDMA the component
 * issued (rdma.c), which MPIDIG does not know of.
 *
 * Everything runs under MPICH's global critical section (the bindings hold
 * it); UCX calls take the VCI lock as the UCX netmod does.
 */

#ifndef NBRMA_DYNAMIC_WIN_H_INCLUDED
#define NBRMA_DYNAMIC_WIN_H_INCLUDED

#include "nbrma_win.h"
#include "ucx_memory.h"
#include "rkey_regions.h"
#include "dynamic_memory.h"
#include "memhandle_codec.h"

typedef struct MPIDI_NBRMA_dynamic_win {
    MPIDI_NBRMA_win_state_t state;      /* ops: MPIDI_NBRMA_dynamic_win_ops */
    /* memory handles: exposed by this process (their mem_h: ucp_mem_h),
     * windows made from them here */
    nbrma_registrations_t registrations;
    nbrma_memhandle_windows_t children;
    /* RDMA issued by the component (rdma.c): per rank, not flushed yet,
     * whether it pays, rkeys (ucp_rkey_h) waiting for it */
    nbrma_rdma_targets_t rdma;
    /* the rkey cache (its bookkeeping: rkey_regions.h); cached.target == NULL
     * when it is off */
    nbrma_attached_regions_t attached;  /* this process as a target */
    int num_registered;         /* attached regions registered with UCX */
    nbrma_cached_regions_t cached;      /* this process as an origin */
    uint64_t rdma_ops;          /* operations that went with a cached rkey */
} MPIDI_NBRMA_dynamic_win_t;

typedef struct MPIDI_NBRMA_memhandle_win {
    MPIDI_NBRMA_win_state_t state;      /* ops: MPIDI_NBRMA_memhandle_win_ops */
    /* in the parent's children: parent (an MPIR_Win), target, where its
     * memory is, rkey (a ucp_rkey_h; NULL: no RDMA to this target: self,
     * empty, unreachable) */
    nbrma_memhandle_window_t entry;
} MPIDI_NBRMA_memhandle_win_t;

static inline MPIDI_NBRMA_dynamic_win_t *MPIDI_NBRMA_dynamic_win(MPIR_Win * win)
{
    MPIDI_NBRMA_win_state_t *state = MPIDI_NBRMA_WIN_STATE(win);
    return state ? state->dynamic : NULL;
}

/* --- rdma.c: RDMA issued by the component on a dynamic window ------------ */
/* What RDMA can carry: a put or get whose both sides are contiguous, nonempty
 * and in host memory. */
typedef struct {
    bool is_put;
    void *local_buf;
    size_t bytes;
    MPI_Aint target_true_lb;    /* offset of the first target byte */
} MPIDI_NBRMA_rdma_args_t;

bool MPIDI_NBRMA_rdma_eligible(const MPIDI_NBRMA_rma_op_t * op, MPIDI_NBRMA_rdma_args_t * args);
/* Starts the transfer toward `target`, a rank of dynamic window `win`, at
 * `remote_addr` with `rkey`; with a request if `request` is set. */
int MPIDI_NBRMA_rdma_transfer(MPIR_Win * win, int target, ucp_rkey_h rkey,
                              const MPIDI_NBRMA_rdma_args_t * args, uint64_t remote_addr,
                              MPIR_Request ** request);
/* Whether RDMA toward `target` pays (its put/get lanes are not tcp's). */
bool MPIDI_NBRMA_rdma_pays(MPIDI_NBRMA_dynamic_win_t * dw, MPIR_Win * win, int target);
/* Completes at their targets the RDMA operations issued toward `rank` (or
 * NBRMA_ALL_RANKS); nothing outstanding costs a test. */
int MPIDI_NBRMA_rdma_complete(MPIR_Win * win, int rank);
/* `rkey` goes once the RDMA toward `target` completed (now, if none is
 * outstanding). */
void MPIDI_NBRMA_rdma_retire_rkey(MPIDI_NBRMA_dynamic_win_t * dw, int target, ucp_rkey_h rkey);
/* Destroys the retired rkeys toward `rank` (all: NBRMA_ALL_RANKS). */
void MPIDI_NBRMA_rdma_destroy_retired(MPIDI_NBRMA_dynamic_win_t * dw, int rank);

/* --- rkey_cache.c --- */
/* an operation by RDMA with a cached rkey or by MPICH's code; its request
 * completes at the origin (the engine's path) */
int MPIDI_NBRMA_rkey_cache_issue(const MPIDI_NBRMA_rma_op_t * op, MPIR_Win * win);
/* whether MPIDI_NBRMA_rkey_cache_issue would take `op` by RDMA now */
bool MPIDI_NBRMA_rkey_cache_has_key(const MPIDI_NBRMA_rma_op_t * op, MPIR_Win * win);
int MPIDI_NBRMA_rkey_cache_attach(MPIR_Win * win, void *base, MPI_Aint size);
/* The target_bytes of a dynamic engine window (epochs/epoch_win.h): the
 * bytes at address target_disp lie inside one attached region. */
bool MPIDI_NBRMA_attached_bytes(MPIR_Win * win, int64_t target_disp, size_t len, char **addr);
int MPIDI_NBRMA_rkey_cache_detach(MPIR_Win * win, const void *base);
void MPIDI_NBRMA_rkey_cache_free(MPIDI_NBRMA_dynamic_win_t * dw);
static inline bool MPIDI_NBRMA_rkey_cache_on(const MPIDI_NBRMA_dynamic_win_t * dw)
{
    return dw && dw->cached.target != NULL;
}

/* --- memhandle.c --- */
/* *dw_out = the state of `win` if it can be the parent of memory handles (a
 * dynamic window); MPI_ERR_WIN otherwise. */
int MPIDI_NBRMA_memhandle_parent(MPIR_Win * win, MPIDI_NBRMA_dynamic_win_t ** dw_out);
/* Reads and checks a handle for use with the dynamic window `parent`. */
int MPIDI_NBRMA_memhandle_decode(const void *memhandle, MPIR_Win * parent,
                                 nbrma_memhandle_header_t * hdr);
void MPIDI_NBRMA_registrations_free(MPIDI_NBRMA_dynamic_win_t * dw);

/* --- dynamic_win.c --- */
/* The memory's state of a dynamic window goes (its RDMA complete already):
 * registrations, rkey cache, rkeys kept for RDMA since completed; its
 * memory-handle windows here lose their target. */
void MPIDI_NBRMA_dynamic_state_free(MPIDI_NBRMA_dynamic_win_t * dw, MPIR_Win * win);
/* MPI_Win_get_info's keys of the memory's state */
int MPIDI_NBRMA_dynamic_info(MPIDI_NBRMA_dynamic_win_t * dw, MPIR_Info * info);

#endif /* NBRMA_DYNAMIC_WIN_H_INCLUDED */
