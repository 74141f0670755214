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

static void release_rkey(void *rkey)
{
    ucp_rkey_destroy(rkey);
}

static nbrma_spare_segment_t spare_slots[SPARE_SEGMENTS];
static nbrma_spare_segments_t spares = {.slot = spare_slots,.cap = SPARE_SEGMENTS };
static nbrma_mapping_cache_t mappings = {.max_unused = SPARE_MAPPINGS,.release = release_rkey };
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

MPIDI_NBRMA_mailbox_mapping_t *MPIDI_NBRMA_mailbox_map(ucp_ep_h ep, uint64_t addr,
                                                       const void *key, size_t key_bytes,
                                                       void **ptr)
{
    nbrma_kept_mapping_t *m = nbrma_mapping_cache_use(&mappings, ep, addr, key, key_bytes);
    ucp_rkey_h rkey;
    void *mapped;

    if (m) {
        *ptr = m->ptr;
        return m;
    }
    m = nbrma_mapping_new(ep, addr, key, key_bytes);
    if (m == NULL)
        return NULL;
    if (ucp_ep_rkey_unpack(ep, key, &rkey) != UCS_OK) {
        nbrma_mapping_discard(m);
        return NULL;
    }
    if (ucp_rkey_ptr(rkey, addr, &mapped) != UCS_OK) {
        ucp_rkey_destroy(rkey);
        nbrma_mapping_discard(m);
        return NULL;
    }
    nbrma_mapping_cache_add(&mappings, m, rkey, mapped);
    register_finalize();
    *ptr = mapped;
    return m;
}

void MPIDI_NBRMA_mailbox_unmap(MPIDI_NBRMA_mailbox_mapping_t * mapping)
{
    nbrma_mapping_cache_unuse(&mappings, mapping);
}
