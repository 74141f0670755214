/*
 * mpich-nbrma: the memory behind windows' mailboxes, kept across windows
 * (mailbox_memory.h says why). The bookkeeping (spares matched by size,
 * mappings most recently used first, the eviction) is
 * ../../formats/mapping_cache.c; the segments are ../../os/shared_segment.c.
 *
 * A kept mapping is found again by the peer's endpoint, the address and the
 * key: a segment the peer released and made anew has another key (its id
 * and cookie), so a stale mapping is never taken for a new segment; it only
 * keeps the old pages attached until it is the oldest unused one.
 */

#include "mpidimpl.h"
#include "mapping_cache.h"
#include "mailbox_memory.h"
#include "shared_segment.h"

#define SPARE_SEGMENTS 4
#define SPARE_MAPPINGS 16

static nbrma_spare_segment_t spare_slots[SPARE_SEGMENTS];
static nbrma_spare_segments_t spares = {.slot = spare_slots,.cap = SPARE_SEGMENTS };
static nbrma_mapping_cache_t mappings = {
    .max_unused = SPARE_MAPPINGS,.release = nbrma_segment_detach
};
static bool finalize_registered;

/* At MPI_Finalize. A mapping still used by a window the program never freed
 * goes too: no RMA follows MPI_Finalize. */
static int release_all(void *unused)
{
    void *segment;

    (void) unused;
    nbrma_mapping_cache_clear(&mappings);
    while ((segment = nbrma_spare_segments_pop(&spares)) != NULL)
        nbrma_segment_detach(segment);
    finalize_registered = false;
    return 0;
}

static void register_finalize(void)
{
    if (!finalize_registered) {
        MPIR_Add_finalize(release_all, NULL, MPIR_FINALIZE_CALLBACK_PRIO + 1);
        finalize_registered = true;
    }
}

void *MPIDI_NBRMA_mailbox_segment_get(size_t bytes)
{
    void *segment = nbrma_spare_segments_take(&spares, bytes);

    return segment ? segment : nbrma_segment_create(bytes);
}

void MPIDI_NBRMA_mailbox_segment_put(void *segment, size_t bytes)
{
    if (!nbrma_spare_segments_keep(&spares, segment, bytes)) {
        nbrma_segment_detach(segment);
        return;
    }
    register_finalize();
}

/* A peer's segment attached here: it is its own handle. */
static bool map_segment(const void *ep, uint64_t addr, const void *key, void **handle, void **ptr)
{
    nbrma_segment_key_t k;

    (void) ep;
    (void) addr;
    memcpy(&k, key, sizeof(k));
    *handle = *ptr = nbrma_segment_attach(&k);
    return *ptr != NULL;
}

MPIDI_NBRMA_mailbox_mapping_t *MPIDI_NBRMA_mailbox_map(const void *ep, uint64_t addr,
                                                       const void *key, size_t key_bytes)
{
    nbrma_kept_mapping_t *m;

    if (key_bytes != sizeof(nbrma_segment_key_t))
        return NULL;
    m = nbrma_mapping_cache_get(&mappings, ep, addr, key, key_bytes, map_segment);
    if (m)
        register_finalize();    /* (registered already if the mapping was kept) */
    return m;
}

void MPIDI_NBRMA_mailbox_unmap(MPIDI_NBRMA_mailbox_mapping_t * mapping)
{
    nbrma_mapping_cache_unuse(&mappings, mapping);
}
