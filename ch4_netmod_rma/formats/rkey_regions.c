/*
 * mpich-nbrma: the rkey cache's attached and cached regions
 * (rkey_regions.h).
 */

#include "rkey_regions.h"
#include <stdlib.h>

/* [addr, addr + len) inside [base, base + size), without wrapping */
static bool contains(uint64_t base, uint64_t size, uint64_t addr, uint64_t len)
{
    return addr >= base && addr - base <= size && len <= size - (addr - base);
}

/* --- this process as a target ------------------------------------------- */

nbrma_attached_region_t *nbrma_attached_regions_add(nbrma_attached_regions_t * list,
                                                    uint64_t base, uint64_t size,
                                                    uint64_t generation, int nprocs)
{
    nbrma_attached_region_t *r = calloc(1, sizeof(*r));

    /* (no ranks still get memory: NULL means none left) */
    if (r == NULL || (r->sent_to = calloc(nprocs > 0 ? nprocs : 1, 1)) == NULL) {
        free(r);
        return NULL;
    }
    r->base = base;
    r->size = size;
    r->generation = generation;
    r->nprocs = nprocs;
    r->next = list->newest;
    list->newest = r;
    return r;
}

nbrma_attached_region_t *nbrma_attached_regions_find(const nbrma_attached_regions_t * list,
                                                     uint64_t addr, uint64_t len)
{
    for (nbrma_attached_region_t * r = list->newest; r; r = r->next)
        if (contains(r->base, r->size, addr, len))
            return r;
    return NULL;
}

nbrma_attached_region_t *nbrma_attached_regions_remove(nbrma_attached_regions_t * list,
                                                       uint64_t base)
{
    for (nbrma_attached_region_t ** link = &list->newest; *link; link = &(*link)->next)
        if ((*link)->base == base) {
            nbrma_attached_region_t *r = *link;
            *link = r->next;
            r->next = NULL;
            return r;
        }
    return NULL;
}

nbrma_attached_region_t *nbrma_attached_regions_pop(nbrma_attached_regions_t * list)
{
    nbrma_attached_region_t *r = list->newest;

    if (r) {
        list->newest = r->next;
        r->next = NULL;
    }
    return r;
}

bool nbrma_attached_region_note_origin(nbrma_attached_region_t * region, int origin)
{
    if (origin < 0 || origin >= region->nprocs)
        return false;
    region->sent_to[origin] = 1;
    return true;
}

bool nbrma_attached_region_registered(nbrma_attached_region_t * region, void *mem_h,
                                      bool mem_h_owned, void *packed_rkey,
                                      size_t packed_rkey_bytes, size_t max_rkey_bytes)
{
    if (packed_rkey == NULL || packed_rkey_bytes > max_rkey_bytes) {
        region->refused = true;
        return false;
    }
    region->mem_h = mem_h;
    region->mem_h_owned = mem_h_owned;
    region->packed_rkey = packed_rkey;
    region->packed_rkey_bytes = packed_rkey_bytes;
    return true;
}

const void *nbrma_attached_region_answer(nbrma_attached_region_t * region, int origin,
                                         nbrma_rkey_msg_t * reply)
{
    reply->base = region->base;
    reply->size = region->size;
    reply->generation = region->generation;
    reply->rkey_bytes = (uint16_t) region->packed_rkey_bytes;
    nbrma_attached_region_note_origin(region, origin);
    return region->packed_rkey;
}

int nbrma_attached_region_next_origin(const nbrma_attached_region_t * region, int from)
{
    for (int rank = from < 0 ? 0 : from; rank < region->nprocs; rank++)
        if (region->sent_to[rank])
            return rank;
    return -1;
}

void nbrma_attached_region_free(nbrma_attached_region_t * region)
{
    free(region->sent_to);
    free(region);
}

/* --- this process as an origin ------------------------------------------ */

/* The target's state, NULL when the cache is off or `target` is no rank:
 * ranks come from other processes' messages. */
static nbrma_rkey_target_t *target_of(const nbrma_cached_regions_t * cache, int target)
{
    if (cache->target == NULL || target < 0 || target >= cache->ntargets)
        return NULL;
    return &cache->target[target];
}

bool nbrma_cached_regions_init(nbrma_cached_regions_t * cache, int ntargets)
{
    cache->target = calloc(ntargets > 0 ? ntargets : 1, sizeof(*cache->target));
    cache->ntargets = cache->target ? ntargets : 0;
    return cache->target != NULL;
}

nbrma_cached_region_t *nbrma_cached_regions_find(const nbrma_cached_regions_t * cache, int target,
                                                 uint64_t addr, uint64_t bytes)
{
    nbrma_rkey_target_t *t = target_of(cache, target);

    for (nbrma_cached_region_t * c = t ? t->newest : NULL; c; c = c->next)
        if (contains(c->base, c->size, addr, bytes))
            return c;
    return NULL;
}

bool nbrma_cached_regions_has(const nbrma_cached_regions_t * cache, int target,
                              uint64_t generation)
{
    nbrma_rkey_target_t *t = target_of(cache, target);

    for (nbrma_cached_region_t * c = t ? t->newest : NULL; c; c = c->next)
        if (c->generation == generation)
            return true;
    return false;
}

bool nbrma_cached_regions_add(nbrma_cached_regions_t * cache, int target, uint64_t base,
                              uint64_t size, uint64_t generation, void *rkey)
{
    nbrma_rkey_target_t *t = target_of(cache, target);
    nbrma_cached_region_t *c = t ? malloc(sizeof(*c)) : NULL;

    if (c == NULL)
        return false;
    c->base = base;
    c->size = size;
    c->generation = generation;
    c->rkey = rkey;
    c->next = t->newest;
    t->newest = c;
    return true;
}

bool nbrma_cached_regions_drop(nbrma_cached_regions_t * cache, int target, uint64_t generation,
                               void **rkey)
{
    nbrma_rkey_target_t *t = target_of(cache, target);

    for (nbrma_cached_region_t ** link = t ? &t->newest : NULL; link && *link;
         link = &(*link)->next) {
        nbrma_cached_region_t *c = *link;
        if (c->generation == generation) {
            *link = c->next;
            *rkey = c->rkey;
            free(c);
            return true;
        }
    }
    return false;
}

bool nbrma_cached_regions_miss(nbrma_cached_regions_t * cache, int target)
{
    nbrma_rkey_target_t *t = target_of(cache, target);

    if (t == NULL || t->query_pending)
        return false;
    /* only "2 or more" matters: the count stops there (a target that RDMA
     * does not pay toward misses on and on) */
    if (t->misses < 2)
        t->misses++;
    return t->misses >= 2;
}

void nbrma_cached_regions_query_sent(nbrma_cached_regions_t * cache, int target)
{
    nbrma_rkey_target_t *t = target_of(cache, target);

    if (t) {
        t->query_pending = true;
        t->misses = 0;
    }
}

void nbrma_cached_regions_answered(nbrma_cached_regions_t * cache, int target)
{
    nbrma_rkey_target_t *t = target_of(cache, target);

    if (t)
        t->query_pending = false;
}

void nbrma_cached_regions_free(nbrma_cached_regions_t * cache, void (*release) (void *rkey))
{
    for (int i = 0; cache->target && i < cache->ntargets; i++)
        while (cache->target[i].newest) {
            nbrma_cached_region_t *c = cache->target[i].newest;
            cache->target[i].newest = c->next;
            release(c->rkey);
            free(c);
        }
    free(cache->target);
    cache->target = NULL;
    cache->ntargets = 0;
}
