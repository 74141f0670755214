/*
 * mpich-nbrma: dynamic windows and the memory-handle windows made from them
 * (internal to ch4/dynamic/). MPICH 4.0.2 sends every operation on a dynamic
 * window as an active message (the origin knows no registration of attached
 * memory); the rkey cache (rkey_cache.c) and memory handles (memhandle*.c;
 * "Quo Vadis MPI RMA?", section 4.2) give that memory to UCX RDMA (rdma.c).
 * All runs under MPICH's global critical section (the bindings hold it); UCX
 * calls take the VCI lock as the UCX netmod does.
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
    /* memory handles exposed here (mem_h: a ucp_mem_h), windows made from them */
    nbrma_registrations_t registrations;
    nbrma_memhandle_windows_t children;
    /* per rank (rdma.c): RDMA not flushed yet, whether it pays, rkeys waiting */
    nbrma_rdma_targets_t rdma;
    /* the rkey cache (rkey_regions.h); cached.target == NULL when it is off */
    nbrma_attached_regions_t attached;  /* this process as a target */
    int num_registered;         /* attached regions registered with UCX */
    nbrma_cached_regions_t cached;      /* this process as an origin */
    uint64_t rdma_ops;          /* operations that went with a cached rkey */
} MPIDI_NBRMA_dynamic_win_t;

typedef struct MPIDI_NBRMA_memhandle_win {
    MPIDI_NBRMA_win_state_t state;      /* ops: MPIDI_NBRMA_memhandle_win_ops */
    /* in the parent's children; rkey (a ucp_rkey_h) NULL: no RDMA to the
     * target (self, empty, unreachable, or RDMA does not pay) */
    nbrma_memhandle_window_t entry;
} MPIDI_NBRMA_memhandle_win_t;

static inline MPIDI_NBRMA_dynamic_win_t *MPIDI_NBRMA_dynamic_win(MPIR_Win * win)
{
    MPIDI_NBRMA_win_state_t *state = MPIDI_NBRMA_WIN_STATE(win);
    return state ? state->dynamic : NULL;
}

/* --- rdma.c --- */
/* What RDMA carries: a put or get, both sides contiguous, nonempty, in host memory. */
typedef struct {
    bool is_put;
    void *local_buf;
    size_t bytes;
    MPI_Aint target_true_lb;    /* offset of the first target byte */
} MPIDI_NBRMA_rdma_args_t;

bool MPIDI_NBRMA_rdma_eligible(const MPIDI_NBRMA_rma_op_t * op, MPIDI_NBRMA_rdma_args_t * args);
int MPIDI_NBRMA_rdma_transfer(MPIR_Win * win, int target, ucp_rkey_h rkey,
                              const MPIDI_NBRMA_rdma_args_t * args, uint64_t remote_addr,
                              MPIR_Request ** request);
/* Whether RDMA toward `target` pays (its put/get lanes are not tcp's). */
bool MPIDI_NBRMA_rdma_pays(MPIDI_NBRMA_dynamic_win_t * dw, MPIR_Win * win, int target);
int MPIDI_NBRMA_rdma_complete(MPIR_Win * win, int rank);
/* `rkey` goes once the RDMA toward `target` completed (now if none is pending). */
void MPIDI_NBRMA_rdma_retire_rkey(MPIDI_NBRMA_dynamic_win_t * dw, int target, ucp_rkey_h rkey);
void MPIDI_NBRMA_rdma_destroy_retired(MPIDI_NBRMA_dynamic_win_t * dw, int rank);

/* --- rkey_cache.c --- */
/* by RDMA with a cached rkey or MPICH's way; a request completes at the origin */
int MPIDI_NBRMA_rkey_cache_issue(const MPIDI_NBRMA_rma_op_t * op, MPIR_Win * win);
/* whether MPIDI_NBRMA_rkey_cache_issue would take `op` by RDMA now */
bool MPIDI_NBRMA_rkey_cache_has_key(const MPIDI_NBRMA_rma_op_t * op, MPIR_Win * win);
int MPIDI_NBRMA_rkey_cache_attach(MPIR_Win * win, void *base, MPI_Aint size);
/* target_bytes of a dynamic engine window (epochs/epoch_win.h): whether the
 * bytes at address target_disp lie inside one attached region. */
bool MPIDI_NBRMA_attached_bytes(MPIR_Win * win, int64_t target_disp, size_t len, char **addr);
int MPIDI_NBRMA_rkey_cache_detach(MPIR_Win * win, const void *base);
void MPIDI_NBRMA_rkey_cache_free(MPIDI_NBRMA_dynamic_win_t * dw);
static inline bool MPIDI_NBRMA_rkey_cache_on(const MPIDI_NBRMA_dynamic_win_t * dw)
{
    return dw && dw->cached.target != NULL;
}

/* --- memhandle.c --- */
/* MPI_ERR_WIN unless `win` is a dynamic window with state (*dw_out). */
int MPIDI_NBRMA_memhandle_parent(MPIR_Win * win, MPIDI_NBRMA_dynamic_win_t ** dw_out);
int MPIDI_NBRMA_memhandle_decode(const void *memhandle, MPIR_Win * parent,
                                 nbrma_memhandle_header_t * hdr);
void MPIDI_NBRMA_registrations_free(MPIDI_NBRMA_dynamic_win_t * dw);

/* --- dynamic_win.c --- */
/* Frees the memory's state (RDMA complete already); its memory-handle windows
 * here lose their target: later calls fail with MPI_ERR_WIN, MPI_Win_free works. */
void MPIDI_NBRMA_dynamic_state_free(MPIDI_NBRMA_dynamic_win_t * dw, MPIR_Win * win);
int MPIDI_NBRMA_dynamic_info(MPIDI_NBRMA_dynamic_win_t * dw, MPIR_Info * info);

#endif /* NBRMA_DYNAMIC_WIN_H_INCLUDED */
