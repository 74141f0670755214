/*
 * mpich-nbrma: the bookkeeping of a dynamic window's memory besides the rkey
 * cache (rkey_regions.h), for ch4/dynamic/: the generations that name
 * registered memory, the registrations this process exposes through memory
 * handles (memhandle.c), per target rank the RDMA the component issued and
 * not completed yet, whether RDMA toward it pays, and the rkeys that wait
 * for that RDMA (rdma.c), and the memory-handle windows made from the
 * window, with their address and range checks (memhandle_win.c). MPICH- and
 * UCX-free so that it is tested without MPI (test/unit/test_dynamic_tables.cpp):
 * UCX's memory handles and rkeys are opaque pointers that the glue makes and
 * releases; nothing here looks at them or frees them.
 */

#ifndef NBRMA_DYNAMIC_MEMORY_H_INCLUDED
#define NBRMA_DYNAMIC_MEMORY_H_INCLUDED

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* --- generations ------------------------------------------------------------ */

/* A new generation for registered memory (memory-handle registrations,
 * attached regions): unique in this process over all windows, never 0 (the
 * first is 1). Callers hold MPICH's global critical section. */
uint64_t nbrma_next_generation(void);

/* --- memory exposed through memory handles -------------------------------- */

typedef struct nbrma_registration {
    uint64_t generation;        /* unique in this process, written into the handle */
    void *base;
    uint64_t size;
    void *mem_h;                /* the glue's (opaque here); NULL for an empty region */
    bool mem_h_owned;           /* false: the mapping of a UCX allocation */
    struct nbrma_registration *next;
} nbrma_registration_t;

/* Newest first. All zero is empty. */
typedef struct {
    nbrma_registration_t *newest;
    int count;
} nbrma_registrations_t;

/* A record not in any table yet (all zero but base and size), NULL when
 * there is no memory; it goes with free() (or nbrma_registration_free). */
nbrma_registration_t *nbrma_registration_new(void *base, uint64_t size);
void nbrma_registration_free(nbrma_registration_t * reg);
/* Puts a record made by nbrma_registration_new in the table. */
void nbrma_registrations_add(nbrma_registrations_t * table, nbrma_registration_t * reg);
/* The registration of `generation`, NULL when there is none. */
nbrma_registration_t *nbrma_registrations_find(const nbrma_registrations_t * table,
                                               uint64_t generation);
/* Unlinks the registration of `generation` and gives it to the caller (who
 * unregisters it and frees the record), NULL when there is none. */
nbrma_registration_t *nbrma_registrations_remove(nbrma_registrations_t * table,
                                                 uint64_t generation);
/* Unlinks and gives the newest, NULL when empty (emptying at free). */
nbrma_registration_t *nbrma_registrations_pop(nbrma_registrations_t * table);

/* --- per target: the component's RDMA ------------------------------------- */

/* An rkey that may go only once the RDMA toward its target completed. */
typedef struct nbrma_retired_rkey {
    int target;
    void *rkey;                 /* the glue's (opaque here) */
    struct nbrma_retired_rkey *next;
} nbrma_retired_rkey_t;

enum { NBRMA_RDMA_PAYS_UNKNOWN = 0, NBRMA_RDMA_PAYS = 1, NBRMA_RDMA_DOES_NOT_PAY = 2 };

/* pending and pays: per rank 0 .. ntargets). All zero is off (no memory). */
typedef struct {
    bool *pending;              /* RDMA issued toward the rank, not completed yet */
    unsigned char *pays;        /* NBRMA_RDMA_PAYS_*: learnt once per rank */
    int ntargets;
    int npending;               /* ranks with pending set */
    nbrma_retired_rkey_t *retired;      /* newest first */
} nbrma_rdma_targets_t;

/* Toward `ntargets` ranks, nothing pending or learnt; false (all zero) when
 * there is no memory. */
bool nbrma_rdma_targets_init(nbrma_rdma_targets_t * t, int ntargets);
/* Frees the tables; the retired rkeys must have been taken
 * (nbrma_rdma_targets_take_retired). */
void nbrma_rdma_targets_free(nbrma_rdma_targets_t * t);

/* Whether `target` is a rank RDMA may go to: one of the window's `nprocs`
 * other than this process (`self`); MPI_PROC_NULL, negative, is not. */
static inline bool nbrma_rdma_remote_rank(int target, int self, int nprocs)
{
    return target >= 0 && target < nprocs && target != self;
}

/* RDMA went toward `target` (per operation). */
static inline void nbrma_rdma_targets_issued(nbrma_rdma_targets_t * t, int target)
{
    if (!t->pending[target]) {
        t->pending[target] = true;
        t->npending++;
    }
}

/* Whether RDMA toward `rank` (a rank, or the caller's sentinel `all`) is
 * pending; *first .. *last: the ranks to complete. Ranks outside the table
 * have nothing pending. */
static inline bool nbrma_rdma_targets_to_complete(const nbrma_rdma_targets_t * t, int rank,
                                                  int all, int *first, int *last)
{
    if (t->npending == 0)
        return false;
    if (rank == all) {
        *first = 0;
        *last = t->ntargets - 1;
        return true;
    }
    if (rank < 0 || rank >= t->ntargets || !t->pending[rank])
        return false;
    *first = *last = rank;
    return true;
}

/* The RDMA toward ranks first .. last completed. */
void nbrma_rdma_targets_completed(nbrma_rdma_targets_t * t, int first, int last);

/* Whether RDMA toward `target` pays, NBRMA_RDMA_PAYS_UNKNOWN until learnt. */
static inline int nbrma_rdma_targets_pays(const nbrma_rdma_targets_t * t, int target)
{
    return t->pays[target];
}

/* Learns it from the target's put/get lanes: some, none of them emulated
 * (tcp's are: UCX answers them with the target's CPU). Returns whether it pays. */
static inline bool nbrma_rdma_targets_learn(nbrma_rdma_targets_t * t, int target, int lanes,
                                            int emulated)
{
    t->pays[target] = lanes > 0 && emulated == 0 ? NBRMA_RDMA_PAYS : NBRMA_RDMA_DOES_NOT_PAY;
    return t->pays[target] == NBRMA_RDMA_PAYS;
}

/* Keeps `rkey` (not NULL) until the RDMA toward `target` completes. False
 * (the rkey still the caller's, to destroy now) when none is pending or there
 * is no memory. */
bool nbrma_rdma_targets_retire(nbrma_rdma_targets_t * t, int target, void *rkey);

/* Unlinks and gives one retired rkey toward `rank` (any when rank == all),
 * newest first; NULL when none is left. */
void *nbrma_rdma_targets_take_retired(nbrma_rdma_targets_t * t, int rank, int all);

/* --- memory-handle windows ------------------------------------------------- */

/* What a memory-handle window made here (MPIX_Win_from_memhandle) knows of
 * its one target; the glue's window embeds it. */
typedef struct nbrma_memhandle_window {
    void *parent;               /* the glue's dynamic window; NULL once it has been freed */
    int target;                 /* the owner, a rank of the parent */
    uint64_t remote_base;       /* the owner's address of displacement 0 */
    uint64_t generation;        /* of the owner's registration */
    void *rkey;                 /* the glue's; NULL: no RDMA to this target */
    struct nbrma_memhandle_window *next_sibling;
} nbrma_memhandle_window_t;

/* The memory-handle windows made here from one dynamic window, newest first.
 * All zero is empty. */
typedef struct {
    nbrma_memhandle_window_t *newest;
    int count;
} nbrma_memhandle_windows_t;

void nbrma_memhandle_windows_add(nbrma_memhandle_windows_t * table,
                                 nbrma_memhandle_window_t * w);
/* Unlinks `w` (MPI_Win_free of the memory-handle window); nothing when it
 * is not in the table. */
void nbrma_memhandle_windows_remove(nbrma_memhandle_windows_t * table,
                                    nbrma_memhandle_window_t * w);
/* The parent goes while its memory-handle windows live: each loses its
 * parent (later calls on it fail; its MPI_Win_free still works) and its
 * rkey, handed to `release_rkey` (not called for NULL); the table is empty
 * after. */
void nbrma_memhandle_windows_orphan(nbrma_memhandle_windows_t * table,
                                    void (*release_rkey) (void *rkey));

/* The owner's address of displacement `disp` (in units of `disp_unit`). */
static inline uint64_t nbrma_memhandle_window_address(const nbrma_memhandle_window_t * w,
                                                      int64_t disp, int64_t disp_unit)
{
    return w->remote_base + (uint64_t) (disp * disp_unit);
}


/* Whether the target bytes of `count` elements of a datatype (lb and extent
 * of its true data, extent) at displacement `disp` lie inside a window of
 * `size` bytes; [*lo, *hi): those bytes (not set for count 0, which is
 * always inside). */
static inline bool nbrma_target_range_inside(int64_t disp, int64_t disp_unit, int64_t count,
                                             int64_t true_lb, int64_t true_extent,
                                             int64_t extent, int64_t size, int64_t *lo,
                                             int64_t *hi)
{
    if (count == 0)
        return true;
    *lo = disp * disp_unit + true_lb;
    *hi = *lo + true_extent;
    if (extent >= 0)
        *hi += (count - 1) * extent;
    else
        *lo += (count - 1) * extent;
    return *lo >= 0 && *hi <= size;
}

#ifdef __cplusplus
}
#endif

#endif /* NBRMA_DYNAMIC_MEMORY_H_INCLUDED */
