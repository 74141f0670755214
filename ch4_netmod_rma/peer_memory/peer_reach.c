/*
 * mpich-nbrma: how an origin reaches each process's window memory
 * (peer_reach.h).
 */

#include "peer_reach.h"
#include <stdlib.h>

/* How `rank` is reached, with what fills its entries of the two tables. */
typedef enum { REACH_NONE, REACH_SHARED, REACH_UCX_MAPPED, REACH_PID } reach_way;

static reach_way way_of(const nbrma_peer_facts_t * f, int rank, int self, bool mapped_here)
{
    if (f->shared_base)
        return REACH_SHARED;
    if (f->ucx_base)
        return rank != self || mapped_here ? REACH_UCX_MAPPED : REACH_NONE;
    return f->pid != 0 && f->has_key ? REACH_PID : REACH_NONE;
}

int nbrma_peer_reach_decide(const nbrma_peer_facts_t * facts, int nprocs, int self,
                            bool mapped_here, nbrma_peer_reach_t * reach)
{
    nbrma_peer_reach_t r = { 0 };
    bool any_mapped = false, any_pid = false;

    /* a table that no rank needs is not allocated (a window's creation
     * allocates little: each allocation and free is about 200 instructions) */
    for (int rank = 0; rank < nprocs; rank++) {
        reach_way way = way_of(&facts[rank], rank, self, mapped_here);

        any_mapped = any_mapped || way == REACH_SHARED || way == REACH_UCX_MAPPED;
        any_pid = any_pid || way == REACH_PID;
    }
    r.mapped = any_mapped ? calloc(nprocs, sizeof(*r.mapped)) : NULL;
    r.pid = any_pid ? calloc(nprocs, sizeof(*r.pid)) : NULL;
    if ((any_mapped && r.mapped == NULL) || (any_pid && r.pid == NULL)) {
        nbrma_peer_reach_free(&r);
        *reach = r;
        return -1;
    }
    for (int rank = 0; rank < nprocs; rank++) {
        const nbrma_peer_facts_t *f = &facts[rank];

        reach_way way = way_of(f, rank, self, mapped_here);

        switch (way) {
            case REACH_SHARED:
            case REACH_UCX_MAPPED:
                r.mapped[rank].base = way == REACH_SHARED ? f->shared_base : f->ucx_base;
                r.mapped[rank].disp_unit = way == REACH_SHARED ? f->shared_disp_unit :
                    f->ucx_disp_unit;
                r.n_mapped_peers += rank != self;
                r.n_cross_memory_peers += rank != self;
                break;
            case REACH_PID:
                r.pid[rank] = f->pid;
                r.n_cross_memory_peers++;
                break;
            case REACH_NONE:
                break;
        }
    }
    r.all_peers_mapped = nprocs > 1 && r.n_mapped_peers == nprocs - 1;
    *reach = r;
    return 0;
}

void nbrma_peer_reach_free(nbrma_peer_reach_t * reach)
{
    free(reach->mapped);
    free(reach->pid);
    *reach = (nbrma_peer_reach_t) {
    0};
}
