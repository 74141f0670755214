/*
 * mpich-nbrma: what windows' mailboxes keep across windows
 * (../os/kept_segments.h says why): this process's spare segments,
 * matched by size, and the peers' segments mapped here, found again by
 * (endpoint, address, packed key) and dropped least recently used first
 * once more than a limit of them is unused. MPICH- and UCX-free so that the
 * bookkeeping is tested without MPI (test/unit/test_mapping_cache.cpp): the
 * endpoint is an opaque key, and what keeps a mapping is an opaque handle
 * released through the caller's callback (../os/kept_segments.c makes,
 * attaches and detaches the segments).
 */

#ifndef NBRMA_MAPPING_CACHE_H_INCLUDED
#define NBRMA_MAPPING_CACHE_H_INCLUDED

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* A spare segment: its memory and its size. */
typedef struct {
    void *segment;
    size_t bytes;
} nbrma_spare_segment_t;

/* At most `cap` spare segments in the caller's slot[]: n of them kept. */
typedef struct {
    nbrma_spare_segment_t *slot;
    int cap, n;
} nbrma_spare_segments_t;

/* A kept segment of exactly `bytes`, no longer kept, or NULL. */
void *nbrma_spare_segments_take(nbrma_spare_segments_t * spares, size_t bytes);
/* Keeps `segment` of `bytes`; false (not kept: the caller frees it) when
 * `cap` are kept already. */
bool nbrma_spare_segments_keep(nbrma_spare_segments_t * spares, void *segment, size_t bytes);
/* The last kept segment, no longer kept, or NULL when none is (emptying the
 * pool, newest first). */
void *nbrma_spare_segments_pop(nbrma_spare_segments_t * spares);

/* A peer's segment mapped here. */
typedef struct nbrma_kept_mapping {
    const void *endpoint;       /* through which it was mapped (opaque) */
    uint64_t addr;              /* its address at the peer */
    size_t key_bytes;
    void *key;                  /* a copy of the packed key */
    void *handle;               /* keeps it mapped (the rkey); the callback releases it */
    void *ptr;                  /* where it is mapped here */
    int users;                  /* windows mapping it now */
    struct nbrma_kept_mapping *next;    /* most recently used first */
} nbrma_kept_mapping_t;

/* The kept mappings: `mru` most recently used first, `n_unused` of them
 * used by no window; beyond `max_unused` such, the least recently used goes
 * through release(handle). Zero but for max_unused and release is empty. */
typedef struct {
    nbrma_kept_mapping_t *mru;
    int n_unused;
    int max_unused;
    void (*release) (void *handle);
} nbrma_mapping_cache_t;

/* The kept mapping of the same endpoint, address and key bytes, moved to the
 * front and used once more; NULL when there is none. A segment made anew has
 * another key: a stale mapping never matches it. */
nbrma_kept_mapping_t *nbrma_mapping_cache_use(nbrma_mapping_cache_t * cache, const void *endpoint,
                                              uint64_t addr, const void *key, size_t key_bytes);

/* A new mapping's record with a copy of the key, not yet in the cache (the
 * caller maps between this and nbrma_mapping_cache_add, or discards it);
 * NULL when there is no memory. */
nbrma_kept_mapping_t *nbrma_mapping_new(const void *endpoint, uint64_t addr, const void *key,
                                        size_t key_bytes);
/* Frees a record of nbrma_mapping_new that never entered a cache (its
 * handle, if any, is the caller's to release). */
void nbrma_mapping_discard(nbrma_kept_mapping_t * mapping);
/* The record enters the cache at the front, used once, with its handle and
 * where it is mapped. */
void nbrma_mapping_cache_add(nbrma_mapping_cache_t * cache, nbrma_kept_mapping_t * mapping,
                             void *handle, void *ptr);

/* The kept mapping of the same endpoint, address and key bytes
 * (nbrma_mapping_cache_use), or else a new one that map() makes: given the
 * endpoint, address and key, it maps them and gives the handle that keeps
 * them mapped and where (true), or maps nothing (false). NULL when map()
 * fails or there is no memory: nothing kept. */
nbrma_kept_mapping_t *nbrma_mapping_cache_get(nbrma_mapping_cache_t * cache, const void *endpoint,
                                              uint64_t addr, const void *key, size_t key_bytes,
                                              bool (*map) (const void *endpoint, uint64_t addr,
                                                           const void *key, void **handle,
                                                           void **ptr));

/* A window no longer uses `mapping`. When that leaves more than max_unused
 * mappings unused, the least recently used of them (perhaps this one) is
 * released and freed. */
void nbrma_mapping_cache_unuse(nbrma_mapping_cache_t * cache, nbrma_kept_mapping_t * mapping);

/* Releases and frees every mapping, used or not, from the front. */
void nbrma_mapping_cache_clear(nbrma_mapping_cache_t * cache);

#ifdef __cplusplus
}
#endif

#endif /* NBRMA_MAPPING_CACHE_H_INCLUDED */
