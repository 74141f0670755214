/*
 * mpich-nbrma: the bookkeeping of the rkey cache of dynamic windows
 * (ch4/dynamic/rkey_cache.c; its messages: rkey_wire.h). At a target, the
 * regions attached to the window: range, generation, registration and the
 * origins that got the region's rkey (told of its detach). At an origin, per
 * target, the regions it holds an rkey for, and when a miss asks the target
 * for one. Ranks come from other processes' messages: their bounds are
 * checked here. MPICH- and UCX-free so that the bookkeeping is tested without
 * MPI (test/unit/test_rkey_regions.cpp): UCX's memory handle, packed rkey and
 * unpacked rkey are opaque pointers that the glue makes and releases; nothing
 * here looks at them or frees them.
 */

#ifndef NBRMA_RKEY_REGIONS_H_INCLUDED
#define NBRMA_RKEY_REGIONS_H_INCLUDED

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "rkey_wire.h"

#ifdef __cplusplus
extern "C" {
#endif

/* --- this process as a target ------------------------------------------- */

/* A region attached to the window, [base, base + size). */
typedef struct nbrma_attached_region {
    uint64_t base, size;
    uint64_t generation;        /* unique in the process: names the region in messages */
    /* the glue's registration, made when an origin first asks (opaque here) */
    void *mem_h;                /* NULL until registered */
    bool mem_h_owned;           /* false: the mapping of a UCX allocation */
    void *packed_rkey;          /* NULL until registered; sent to each origin that asks */
    size_t packed_rkey_bytes;
    bool refused;               /* UCX would not register it: active messages only */
    int nprocs;
    unsigned char *sent_to;     /* per rank of the window: got the rkey */
    struct nbrma_attached_region *next;
} nbrma_attached_region_t;

/* Newest first: of regions that overlap, lookups and detach find the one
 * attached last. All zero is empty. */
typedef struct {
    nbrma_attached_region_t *newest;
} nbrma_attached_regions_t;

/* A new region, unregistered and sent to none of `nprocs` ranks; NULL (the
 * list unchanged) when there is no memory. */
nbrma_attached_region_t *nbrma_attached_regions_add(nbrma_attached_regions_t * list,
                                                    uint64_t base, uint64_t size,
                                                    uint64_t generation, int nprocs);

/* The newest region containing [addr, addr + len), or NULL. A length of 0 is
 * contained from a region's base up to and including its end; a query for
 * the region holding one address asks for len 1. */
nbrma_attached_region_t *nbrma_attached_regions_find(const nbrma_attached_regions_t * list,
                                                     uint64_t addr, uint64_t len);

/* Unlinks the newest region that begins at `base` (MPI_Win_detach) and gives
 * it to the caller, who tells its origins, unregisters it and frees it with
 * nbrma_attached_region_free; NULL when no region begins there. */
nbrma_attached_region_t *nbrma_attached_regions_remove(nbrma_attached_regions_t * list,
                                                       uint64_t base);

/* Unlinks and gives the newest region, NULL when empty (emptying at free). */
nbrma_attached_region_t *nbrma_attached_regions_pop(nbrma_attached_regions_t * list);

/* `origin` got the region's rkey; false (nothing noted) outside the ranks. */
bool nbrma_attached_region_note_origin(nbrma_attached_region_t * region, int origin);

/* Whether the region is still to be registered: neither registered nor
 * refused (a refusal is final: its operations keep active messages). */
static inline bool nbrma_attached_region_unasked(const nbrma_attached_region_t * region)
{
    return region->packed_rkey == NULL && !region->refused;
}

/* The glue mapped the region (`mem_h`, `mem_h_owned`) and packed its rkey
 * (`packed_rkey`, NULL when packing failed). Records the registration and
 * returns true, or marks the region refused and returns false when there is
 * no packed rkey or it exceeds `max_rkey_bytes`: then the mapping and the
 * packed rkey stay the caller's to release. */
bool nbrma_attached_region_registered(nbrma_attached_region_t * region, void *mem_h,
                                      bool mem_h_owned, void *packed_rkey,
                                      size_t packed_rkey_bytes, size_t max_rkey_bytes);

/* The reply to `origin`'s query that `region` (registered) answers: its
 * range, generation and rkey length in *reply (the other fields untouched),
 * and `origin` noted to be told at detach. Returns the packed rkey, which
 * follows the reply. */
const void *nbrma_attached_region_answer(nbrma_attached_region_t * region, int origin,
                                         nbrma_rkey_msg_t * reply);

/* The lowest rank >= `from` that got the rkey, -1 when none does. */
int nbrma_attached_region_next_origin(const nbrma_attached_region_t * region, int from);

/* Frees an unlinked region's record; its registration is the caller's. */
void nbrma_attached_region_free(nbrma_attached_region_t * region);

/* --- this process as an origin ------------------------------------------ */

/* A target's region that this process holds an rkey for. */
typedef struct nbrma_cached_region {
    uint64_t base, size, generation;
    void *rkey;                 /* the glue's unpacked rkey (opaque here) */
    struct nbrma_cached_region *next;
} nbrma_cached_region_t;

/* Per target: its regions, newest first, and whether to ask it for a key. */
typedef struct {
    nbrma_cached_region_t *newest;
    unsigned char misses;       /* since the last query, counted up to 2 */
    bool query_pending;         /* one query at a time */
} nbrma_rkey_target_t;

/* target[0 .. ntargets): NULL when the cache is off (all zero). */
typedef struct {
    nbrma_rkey_target_t *target;
    int ntargets;
} nbrma_cached_regions_t;

/* An empty cache toward `ntargets` ranks; false (still off) when there is no
 * memory. */
bool nbrma_cached_regions_init(nbrma_cached_regions_t * cache, int ntargets);

/* The newest region of `target` containing [addr, addr + bytes) (edges as in
 * nbrma_attached_regions_find), or NULL; NULL outside the targets too. */
nbrma_cached_region_t *nbrma_cached_regions_find(const nbrma_cached_regions_t * cache, int target,
                                                 uint64_t addr, uint64_t bytes);

/* Whether a region of `generation` from `target` is cached (a second reply
 * about it changes nothing). */
bool nbrma_cached_regions_has(const nbrma_cached_regions_t * cache, int target,
                              uint64_t generation);

/* Caches a target's region with its rkey; false (the rkey still the
 * caller's) outside the targets or when there is no memory. */
bool nbrma_cached_regions_add(nbrma_cached_regions_t * cache, int target, uint64_t base,
                              uint64_t size, uint64_t generation, void *rkey);

/* The target detached `generation`: its newest region of that generation
 * leaves the cache and *rkey is the caller's to destroy; false (*rkey
 * untouched) when none is cached. */
bool nbrma_cached_regions_drop(nbrma_cached_regions_t * cache, int target, uint64_t generation,
                               void **rkey);

/* An operation toward `target` found no key and goes MPICH's way. Whether
 * to ask for one now: no query is in flight and this is the second miss
 * since the last query (a window that carries one operation to a target
 * would pay a query, a registration and an invalidation for nothing). While
 * a query is in flight misses are not counted. */
bool nbrma_cached_regions_miss(nbrma_cached_regions_t * cache, int target);

/* The query the last miss asked for left: the next waits for its answer. */
void nbrma_cached_regions_query_sent(nbrma_cached_regions_t * cache, int target);

/* `target` answered (a key or "no region"): another query may go. */
void nbrma_cached_regions_answered(nbrma_cached_regions_t * cache, int target);

/* Gives every cached rkey to release(), newest first per target from target
 * 0 on, frees the cache and leaves it off. */
void nbrma_cached_regions_free(nbrma_cached_regions_t * cache, void (*release) (void *rkey));

#ifdef __cplusplus
}
#endif

#endif /* NBRMA_RKEY_REGIONS_H_INCLUDED */
