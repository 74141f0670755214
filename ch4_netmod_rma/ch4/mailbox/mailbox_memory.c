/*
 * mpich-nbrma: the memory behind windows' mailboxes, kept across windows
 * (mailbox_memory.h says why).
 *
 * A kept mapping is found again by the peer's endpoint, the address and the
 * packed key: a segment the peer released and made anew has another key (its
 * shared-memory id), so a stale mapping is never taken for a new segment; it
 * only keeps the old pages attached until it is the oldest unused one.
 */

#include "mpidimpl.h"
#include "ucx_impl.h"
#include "ucx_memory.h"
#include "mailbox_memory.h"

#define SPARE_SEGMENTS 4
#define SPARE_MAPPINGS 16

struct MPIDI_NBRMA_mailbox_mapping {
    ucp_ep_h ep;
    uint64_t addr;
    size_t key_bytes;
    void *key;                  /* a copy of the packed key */
    ucp_rkey_h rkey;            /* keeps the pages attached */
    void *ptr;
    int users;                  /* windows mapping it now */
    MPIDI_NBRMA_mailbox_mapping_t *next;        /* in `mappings`, most recently used first */
};

static struct {
    void *segment;
    size_t bytes;
} spare[SPARE_SEGMENTS];
static int n_spare;

static MPIDI_NBRMA_mailbox_mapping_t *mappings;
static int n_unused;
static bool finalize_registered;

static void destroy(MPIDI_NBRMA_mailbox_mapping_t * m)
{
    ucp_rkey_destroy(m->rkey);
    MPL_free(m->key);
    MPL_free(m);
}

/* Before MPID_Finalize: rkeys live in the UCX worker's memory pools. A
 * mapping still used by a window the program never freed goes too: no RMA
 * follows MPI_Finalize. */
static int release_all(void *unused)
{
    (void) unused;
    while (mappings) {
        MPIDI_NBRMA_mailbox_mapping_t *m = mappings;
        mappings = m->next;
        destroy(m);
    }
    n_unused = 0;
    while (n_spare > 0)
        MPIDI_NBRMA_memory_free(MPIDI_UCX_global.context, spare[--n_spare].segment);
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
    for (int i = 0; i < n_spare; i++)
        if (spare[i].bytes == bytes) {
            void *segment = spare[i].segment;
            spare[i] = spare[--n_spare];
            return segment;
        }
    return MPIDI_NBRMA_memory_alloc(MPIDI_UCX_global.context, bytes);
}

void MPIDI_NBRMA_mailbox_segment_put(void *segment, size_t bytes)
{
    if (n_spare == SPARE_SEGMENTS) {
        MPIDI_NBRMA_memory_free(MPIDI_UCX_global.context, segment);
        return;
    }
    register_finalize();
    spare[n_spare].segment = segment;
    spare[n_spare++].bytes = bytes;
}

MPIDI_NBRMA_mailbox_mapping_t *MPIDI_NBRMA_mailbox_map(ucp_ep_h ep, uint64_t addr,
                                                       const void *key, size_t key_bytes,
                                                       void **ptr)
{
    MPIDI_NBRMA_mailbox_mapping_t *m, **link;

    for (link = &mappings; (m = *link) != NULL; link = &m->next)
        if (m->ep == ep && m->addr == addr && m->key_bytes == key_bytes &&
            memcmp(m->key, key, key_bytes) == 0) {
            *link = m->next;    /* to the front: most recently used */
            m->next = mappings;
            mappings = m;
            n_unused -= m->users == 0;
            m->users++;
            *ptr = m->ptr;
            return m;
        }
    m = MPL_calloc(1, sizeof(*m), MPL_MEM_RMA);
    if (m == NULL || (m->key = MPL_malloc(key_bytes, MPL_MEM_RMA)) == NULL) {
        MPL_free(m);
        return NULL;
    }
    if (ucp_ep_rkey_unpack(ep, key, &m->rkey) != UCS_OK) {
        MPL_free(m->key);
        MPL_free(m);
        return NULL;
    }
    if (ucp_rkey_ptr(m->rkey, addr, &m->ptr) != UCS_OK) {
        destroy(m);
        return NULL;
    }
    memcpy(m->key, key, key_bytes);
    m->ep = ep;
    m->addr = addr;
    m->key_bytes = key_bytes;
    m->users = 1;
    m->next = mappings;
    mappings = m;
    register_finalize();
    *ptr = m->ptr;
    return m;
}

void MPIDI_NBRMA_mailbox_unmap(MPIDI_NBRMA_mailbox_mapping_t * mapping)
{
    MPIDI_NBRMA_mailbox_mapping_t *m, **link, **oldest = NULL;

    if (--mapping->users > 0 || ++n_unused <= SPARE_MAPPINGS)
        return;
    /* one unused mapping too many: the least recently used goes */
    for (link = &mappings; (m = *link) != NULL; link = &m->next)
        if (m->users == 0)
            oldest = link;
    m = *oldest;
    *oldest = m->next;
    n_unused--;
    destroy(m);
}
