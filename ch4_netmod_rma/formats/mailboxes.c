/*
 * mpich-nbrma: a window's mailboxes as one process sees them (mailboxes.h).
 */

#include "mailboxes.h"
#include <stdlib.h>
#include <string.h>

/* Two allocations (a window's creation allocates little: each allocation
 * and free is about 200 instructions): the structure with ring_of, and
 * peer with rank_of_ring once the number of rings is known. */
nbrma_mailboxes_t *nbrma_mailboxes_new(const int *node_of, int nprocs, int my_rank,
                                       nbrma_mailboxes_deliver_t deliver, void *ctx)
{
    nbrma_mailboxes_t *m = calloc(1, sizeof(*m) + (size_t) nprocs * sizeof(int));

    if (m == NULL)
        return NULL;
    m->ring_of = (int *) (m + 1);
    m->my_rank = my_rank;
    m->nprocs = nprocs;
    m->deliver = deliver;
    m->ctx = ctx;
    m->nrings = nbrma_mailbox_rings(node_of, nprocs, node_of[my_rank], m->ring_of);
    m->peer = calloc(m->nrings, sizeof(*m->peer) + sizeof(int));
    if (m->peer == NULL) {
        nbrma_mailboxes_free(m, NULL);
        return NULL;
    }
    m->rank_of_ring = (int *) (m->peer + m->nrings);
    for (int r = 0; r < nprocs; r++)
        if (m->ring_of[r] >= 0)
            m->rank_of_ring[m->ring_of[r]] = r;
    return m;
}

size_t nbrma_mailboxes_bytes(const nbrma_mailboxes_t * m)
{
    return nbrma_mailbox_bytes(m->nrings);
}

void nbrma_mailboxes_own(nbrma_mailboxes_t * m, void *memory)
{
    memset(memory, 0, nbrma_mailboxes_bytes(m));
    m->mine = memory;
}

bool nbrma_mailboxes_wants(const nbrma_mailboxes_t * m, int peer)
{
    return peer != m->my_rank && m->ring_of[peer] >= 0;
}

void nbrma_mailboxes_mapped(nbrma_mailboxes_t * m, int peer, nbrma_mailbox_t * box,
                            struct nbrma_kept_mapping *mapping, uint64_t pid, bool readable)
{
    nbrma_mailbox_peer_t *p = &m->peer[m->ring_of[peer]];

    p->box = box;
    p->mapping = mapping;
    p->pid = pid;
    p->readable_pid = readable ? pid : 0;
    m->n_mapped++;
    m->n_readable += p->readable_pid != 0;
}

bool nbrma_mailboxes_sleep_list(nbrma_mailboxes_t * list, uint64_t how)
{
    for (nbrma_mailboxes_t * m = list; m; m = m->next)
        if (m->mine && !nbrma_mailbox_sleep(m->mine, m->doorbell_seen, how)) {
            nbrma_mailboxes_awake_list(list);
            return false;
        }
    return true;
}

bool nbrma_mailboxes_wake_for_all_list(nbrma_mailboxes_t * list)
{
    bool changed = false;

    for (nbrma_mailboxes_t * m = list; m; m = m->next)
        if (m->mine)
            changed = nbrma_mailbox_wake_for_all(m->mine) || changed;
    return changed;
}

void nbrma_mailboxes_agent_serves_list(nbrma_mailboxes_t * list, bool serves)
{
    for (nbrma_mailboxes_t * m = list; m; m = m->next)
        if (m->mine)
            nbrma_mailbox_set_agent_serves(m->mine, serves);
}

void nbrma_mailboxes_awake_list(nbrma_mailboxes_t * list)
{
    for (nbrma_mailboxes_t * m = list; m; m = m->next)
        if (m->mine)
            nbrma_mailbox_awake(m->mine);
}

void nbrma_mailboxes_unmark_away_list(nbrma_mailboxes_t * list)
{
    for (nbrma_mailboxes_t * m = list; m; m = m->next)
        if (m->mine)
            nbrma_mailbox_unmark_away(m->mine);
}

int nbrma_mailboxes_reaching_all_list(const nbrma_mailboxes_t * list)
{
    int n = 0;

    for (const nbrma_mailboxes_t * m = list; m; m = m->next)
        n += m->mine && m->n_mapped == m->nprocs - 1;
    return n;
}

void nbrma_mailboxes_free(nbrma_mailboxes_t * m, void (*unmap) (struct nbrma_kept_mapping *))
{
    for (int ring = 0; m->peer && ring < m->nrings; ring++)
        if (m->peer[ring].mapping)
            unmap(m->peer[ring].mapping);
    free(m->peer);              /* rank_of_ring with it */
    free(m);                    /* ring_of with it */
}

void nbrma_mailboxes_link(nbrma_mailboxes_t ** list, nbrma_mailboxes_t * m)
{
    m->next = *list;
    *list = m;
}

bool nbrma_mailboxes_unlink(nbrma_mailboxes_t ** list, nbrma_mailboxes_t * m)
{
    nbrma_mailboxes_t **link;

    for (link = list; *link; link = &(*link)->next)
        if (*link == m) {
            *link = m->next;
            break;
        }
    return *list != NULL;
}

int nbrma_mailboxes_read(nbrma_mailboxes_t * m, int *arrived)
{
    for (int ring = 0; ring < m->nrings; ring++) {
        nbrma_ring_msg_t msg;
        int rc;

        if (ring == m->ring_of[m->my_rank])
            continue;   /* no process writes to itself */

        while ((rc = nbrma_ring_receive(&m->mine->ring[ring], &msg)) == NBRMA_RING_MESSAGE) {
            if (arrived)
                *arrived = 1;
            rc = m->deliver(m->ctx, m->rank_of_ring[ring], &msg);
            if (rc != 0)
                return rc;
        }
        if (rc == NBRMA_RING_MALFORMED)
            return NBRMA_RING_MALFORMED;
    }
    return 0;
}
