/*
 * mpich-nbrma: the memory behind windows' mailboxes, kept across windows
 * (mailbox_memory.h says why). The bookkeeping (spares matched by size,
 * mappings most recently used first, the eviction) is
 * ../../formats/mapping_cache.c; here are the UCX calls.
 *
 * A kept mapping is found again by the peer's endpoint, the address and the
 * packed key: a segment the peer released and made anew has another key (its
 * shared-memory id), so a stale mapping is never taken for a new segment; it
 * only keeps the old pages attached until it is the oldest unused one.
 */

#include "mpidimpl.h"
#include "ucx_impl.h"
#include "ucx_memory.h"
#include "mapping_cache.h"
#include "mailbox_memory.h"

#define SPARE_SEGMENTS 4
#define SPARE_MAPPINGS 16

static nbrma_spare_segment_t spare_slots[SPARE_SEGMENTS];
static nbrma_spare_segments_t spares = {.slot = spare_slots,.cap = SPARE_SEGMENTS };
static nbrma_mapping_cache_t mappings = {.max_unused = SPARE_MAPPINGS,.release = MPIDI_NBRMA_rkey_destroy };
static bool finalize_registered;

/* Before MPID_Finalize: rkeys live in the UCX worker's memory pools. A
 * mapping still used by a window the program never freed goes too: no RMA
 * follows MPI_Finalize. */
static int release_all(void *unused)
{
    void *segment;

    (void) unused;
    nbrma_mapping_cache_clear(&mappings);
    while ((segment = nbrma_spare_segments_pop(&spares)) != NULL)
        MPIDI_NBRMA_memory_free(MPIDI_UCX_global.context, segment);
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

    return segment ? segment : MPIDI_NBRMA_memory_alloc(MPIDI_UCX_global.context, bytes);
}

void MPIDI_NBRMA_mailbox_segment_put(void *segment, size_t bytes)
{
    if (!nbrma_spare_segments_keep(&spares, segment, bytes)) {
        MPIDI_NBRMA_memory_free(MPIDI_UCX_global.context, segment);
        return;
    }
    register_finalize();
}

/* UCX's pointer to a peer's segment, and the rkey that keeps it mapped. */
static bool map_segment(const void *ep, uint64_t addr, const void *key, void **rkey, void **ptr)
{
    ucp_rkey_h unpacked;

    if (ucp_ep_rkey_unpack((ucp_ep_h) ep, key, &unpacked) != UCS_OK)
        return false;
    if (ucp_rkey_ptr(unpacked, addr, ptr) != UCS_OK) {
        ucp_rkey_destroy(unpacked);
        return false;
    }
    *rkey = unpacked;
    return true;
}

MPIDI_NBRMA_mailbox_mapping_t *MPIDI_NBRMA_mailbox_map(ucp_ep_h ep, uint64_t addr,
                                                       const void *key, size_t key_bytes)
{
    nbrma_kept_mapping_t *m = nbrma_mapping_cache_get(&mappings, ep, addr, key, key_bytes,
                                                      map_segment);

    if (m)
        register_finalize();    /* (registered already if the mapping was kept) */
    return m;
}

void MPIDI_NBRMA_mailbox_unmap(MPIDI_NBRMA_mailbox_mapping_t * mapping)
{
    nbrma_mapping_cache_unuse(&mappings, mapping);
}
