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

/* Memory attached to a dynamic window, registered when an origin first asks
 * for it so that origins can reach it with RDMA (the rkey cache, below). */
typedef struct MPIDI_NBRMA_attached_region {
    uint64_t generation;        /* unique in this process: names the region in messages */
    void *base;
    MPI_Aint size;
    ucp_mem_h mem_h;            /* NULL until registered */
    void *rkey_buf;             /* packed once, sent to each origin that asks */
    size_t rkey_bytes;
    bool refused;               /* UCX would not register it: active messages only */
    unsigned char *sent_to;     /* per rank: holds the rkey, is told of the detach */
    struct MPIDI_NBRMA_attached_region *next;
} MPIDI_NBRMA_attached_region_t;

/* An origin's copy of a target's attached region: its address range and the
 * unpacked rkey, kept until the target detaches the region or the window is
 * freed. */
typedef struct MPIDI_NBRMA_cached_rkey {
    int target;
    uint64_t base, size, generation;
    ucp_rkey_h rkey;
    struct MPIDI_NBRMA_cached_rkey *next;
} MPIDI_NBRMA_cached_rkey_t;

typedef struct MPIDI_NBRMA_parent {
    MPIDI_NBRMA_win_state_t state;      /* MPIDI_NBRMA_WIN_MEMHANDLE_PARENT */
    MPIDI_NBRMA_registration_t *registrations;
    int num_registrations;
    struct MPIDI_NBRMA_memhandle_win *children;
    int num_children;
    /* per rank of the parent: RDMA issued (through a child or with a cached
     * rkey) and not flushed yet */
    bool *rdma_pending;
    int num_rdma_pending;
    /* RDMA on the dynamic window itself; all NULL/0 when it is off */
    MPIDI_NBRMA_attached_region_t *attached;    /* this process as a target */
    int num_registered;         /* attached regions registered with UCX */
    MPIDI_NBRMA_cached_rkey_t **rkeys;  /* per target rank, this process as an origin */
    MPIDI_NBRMA_cached_rkey_t *retired; /* detached, RDMA with them not flushed yet */
    bool *rkey_query_pending;   /* per target rank: one query at a time */
    unsigned char *rkey_misses; /* per target rank: misses since the last query */
    uint64_t rdma_ops;          /* operations that went with a cached rkey */
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

/* RDMA on plain dynamic windows (the rkey cache): state made at the window's
 * creation unless turned off, the attach and detach hooks, the operations of a
 * dynamic window, and the handler of the cache's messages. */
int MPIDI_NBRMA_dynamic_win_init(MPIR_Win * win, MPIR_Info * info);
int MPIDI_NBRMA_dynamic_rma(const MPIDI_NBRMA_rma_op_t * op, MPIR_Win * win);
int MPIDI_NBRMA_rkey_msg_cb(void *am_hdr, void *data, MPI_Aint data_sz, uint32_t attr,
                            MPIR_Request ** req);
extern int MPIDI_NBRMA_rkey_handler_id;
/* Whether RDMA issued by the component on dynamic window `win` (through its
 * memory-handle windows or with cached rkeys) toward `rank` (-1: any rank) may
 * be incomplete: the nonblocking flushes must flush those endpoints too. */
bool MPIDI_NBRMA_rdma_pending(MPIR_Win * win, int rank);

#endif /* NBRMA_MEMHANDLE_H_INCLUDED */
