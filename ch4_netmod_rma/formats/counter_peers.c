/*
 * mpich-nbrma: where each process keeps its notification counters
 * (counter_peers.h).
 */

#include "counter_peers.h"
#include <stdlib.h>

bool nbrma_counter_peers_init(nbrma_counter_peers_t * peers,
                              const nbrma_counter_published_t * all, int nprocs, int self)
{
    peers->nprocs = 0;
    peers->peer = calloc(nprocs > 0 ? (size_t) nprocs : 1, sizeof(*peers->peer));
    if (peers->peer == NULL)
        return false;
    peers->nprocs = nprocs;
    for (int r = 0; r < nprocs; r++)
        peers->peer[r] = (nbrma_counter_peer_t) {
            .addr = all[r].addr,
            .state = all[r].key_bytes && r != self ?
                NBRMA_COUNTER_KEY_PACKED : NBRMA_COUNTER_KEY_NONE};
    return true;
}

void nbrma_counter_peers_free(nbrma_counter_peers_t * peers, void (*destroy) (void *rkey))
{
    for (int r = 0; peers->peer && r < peers->nprocs; r++)
        if (peers->peer[r].state == NBRMA_COUNTER_KEY_UNPACKED)
            destroy(peers->peer[r].rkey);
    free(peers->peer);
    peers->peer = NULL;
    peers->nprocs = 0;
}
