/*
 * mpich-nbrma: the memory behind windows' mailboxes, kept across windows
 * (kept_segments.h says why).
 */

#include <string.h>
#include "kept_segments.h"
#include "shared_segment.h"

static nbrma_spare_segment_t spare_slots[NBRMA_KEPT_SEGMENTS];
static nbrma_spare_segments_t spares = {.slot = spare_slots,.cap = NBRMA_KEPT_SEGMENTS };
static nbrma_mapping_cache_t mappings = {
    .max_unused = NBRMA_KEPT_MAPPINGS,.release = nbrma_segment_detach
};

void nbrma_kept_segments_release_all(void)
{
    void *segment;

    nbrma_mapping_cache_clear(&mappings);
    while ((segment = nbrma_spare_segments_pop(&spares)) != NULL)
        nbrma_segment_detach(segment);
}

void *nbrma_kept_segment_get(size_t bytes)
{
    void *segment = nbrma_spare_segments_take(&spares, bytes);

    return segment ? segment : nbrma_segment_create(bytes);
}

void nbrma_kept_segment_put(void *segment, size_t bytes)
{
    if (!nbrma_spare_segments_keep(&spares, segment, bytes))
        nbrma_segment_detach(segment);
}

/* A peer's segment attached here: it is its own handle. */
static bool map_segment(const void *peer, uint64_t addr, const void *key, void **handle,
                        void **ptr)
{
    nbrma_segment_key_t k;

    (void) peer;
    (void) addr;
    memcpy(&k, key, sizeof(k));
    *handle = *ptr = nbrma_segment_attach(&k);
    return *ptr != NULL;
}

nbrma_kept_mapping_t *nbrma_kept_mapping_get(const void *peer, uint64_t addr, const void *key,
                                             size_t key_bytes)
{
    if (key_bytes != sizeof(nbrma_segment_key_t))
        return NULL;
    return nbrma_mapping_cache_get(&mappings, peer, addr, key, key_bytes, map_segment);
}

void nbrma_kept_mapping_unuse(nbrma_kept_mapping_t * mapping)
{
    nbrma_mapping_cache_unuse(&mappings, mapping);
}
