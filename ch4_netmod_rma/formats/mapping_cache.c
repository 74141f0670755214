/*
 * mpich-nbrma: spare mailbox segments and peers' mappings kept across
 * windows (mapping_cache.h).
 */

#include "mapping_cache.h"
#include <stdlib.h>
#include <string.h>

void *nbrma_spare_segments_take(nbrma_spare_segments_t * spares, size_t bytes)
{
    for (int i = 0; i < spares->n; i++)
        if (spares->slot[i].bytes == bytes) {
            void *segment = spares->slot[i].segment;
            spares->slot[i] = spares->slot[--spares->n];
            return segment;
        }
    return NULL;
}

bool nbrma_spare_segments_keep(nbrma_spare_segments_t * spares, void *segment, size_t bytes)
{
    if (spares->n == spares->cap)
        return false;
    spares->slot[spares->n].segment = segment;
    spares->slot[spares->n++].bytes = bytes;
    return true;
}

void *nbrma_spare_segments_pop(nbrma_spare_segments_t * spares)
{
    return spares->n > 0 ? spares->slot[--spares->n].segment : NULL;
}

static void destroy(nbrma_mapping_cache_t * cache, nbrma_kept_mapping_t * m)
{
    cache->release(m->handle);
    free(m->key);
    free(m);
}

nbrma_kept_mapping_t *nbrma_mapping_cache_use(nbrma_mapping_cache_t * cache, const void *endpoint,
                                              uint64_t addr, const void *key, size_t key_bytes)
{
    nbrma_kept_mapping_t *m, **link;

    for (link = &cache->mru; (m = *link) != NULL; link = &m->next)
        if (m->endpoint == endpoint && m->addr == addr && m->key_bytes == key_bytes &&
            memcmp(m->key, key, key_bytes) == 0) {
            *link = m->next;    /* to the front: most recently used */
            m->next = cache->mru;
            cache->mru = m;
            cache->n_unused -= m->users == 0;
            m->users++;
            return m;
        }
    return NULL;
}

nbrma_kept_mapping_t *nbrma_mapping_new(const void *endpoint, uint64_t addr, const void *key,
                                        size_t key_bytes)
{
    nbrma_kept_mapping_t *m = calloc(1, sizeof(*m));

    /* (a key of no bytes still gets memory: NULL means none left) */
    if (m == NULL || (m->key = malloc(key_bytes ? key_bytes : 1)) == NULL) {
        free(m);
        return NULL;
    }
    if (key_bytes > 0)
        memcpy(m->key, key, key_bytes);
    m->endpoint = endpoint;
    m->addr = addr;
    m->key_bytes = key_bytes;
    return m;
}

void nbrma_mapping_discard(nbrma_kept_mapping_t * mapping)
{
    free(mapping->key);
    free(mapping);
}

void nbrma_mapping_cache_add(nbrma_mapping_cache_t * cache, nbrma_kept_mapping_t * mapping,
                             void *handle, void *ptr)
{
    mapping->handle = handle;
    mapping->ptr = ptr;
    mapping->users = 1;
    mapping->next = cache->mru;
    cache->mru = mapping;
}

nbrma_kept_mapping_t *nbrma_mapping_cache_get(nbrma_mapping_cache_t * cache, const void *endpoint,
                                              uint64_t addr, const void *key, size_t key_bytes,
                                              bool (*map) (const void *endpoint, uint64_t addr,
                                                           const void *key, void **handle,
                                                           void **ptr))
{
    nbrma_kept_mapping_t *m = nbrma_mapping_cache_use(cache, endpoint, addr, key, key_bytes);
    void *handle, *ptr;

    if (m)
        return m;
    m = nbrma_mapping_new(endpoint, addr, key, key_bytes);
    if (m == NULL)
        return NULL;
    if (!map(endpoint, addr, key, &handle, &ptr)) {
        nbrma_mapping_discard(m);
        return NULL;
    }
    nbrma_mapping_cache_add(cache, m, handle, ptr);
    return m;
}

void nbrma_mapping_cache_unuse(nbrma_mapping_cache_t * cache, nbrma_kept_mapping_t * mapping)
{
    nbrma_kept_mapping_t *m, **link, **oldest = NULL;

    if (--mapping->users > 0 || ++cache->n_unused <= cache->max_unused)
        return;
    /* one unused mapping too many: the least recently used goes */
    for (link = &cache->mru; (m = *link) != NULL; link = &m->next)
        if (m->users == 0)
            oldest = link;
    m = *oldest;
    *oldest = m->next;
    cache->n_unused--;
    destroy(cache, m);
}

void nbrma_mapping_cache_clear(nbrma_mapping_cache_t * cache)
{
    while (cache->mru) {
        nbrma_kept_mapping_t *m = cache->mru;
        cache->mru = m->next;
        destroy(cache, m);
    }
    cache->n_unused = 0;
}
