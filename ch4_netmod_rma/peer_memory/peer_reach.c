/*
 * mpich-nbrma: how an origin reaches each process's window memory
 * (peer_reach.h).
 */

#include "peer_reach.h"
#include <stdlib.h>

int nbrma_peer_reach_decide(const nbrma_peer_facts_t * facts, int nprocs, int self,
                            bool mapped_here, nbrma_peer_reach_t * reach)
{
    size_t n = nprocs > 0 ? (size_t) nprocs : 1;
    nbrma_peer_reach_t r = { 0 };
    bool any_mapped = false, any_pid = false;

    r.mapped = calloc(n, sizeof(*r.mapped));
    r.pid = calloc(n, sizeof(*r.pid));
    if (r.mapped == NULL || r.pid == NULL) {
        nbrma_peer_reach_free(&r);
        *reach = r;
        return -1;
    }
    for (int rank = 0; rank < nprocs; rank++) {
        const nbrma_peer_facts_t *f = &facts[rank];
        nbrma_mapped_peer_t *m = &r.mapped[rank];

        if (f->shared_base) {
            *m = (nbrma_mapped_peer_t) {.base = f->shared_base,.disp_unit = f->shared_disp_unit };
            r.n_cross_memory_peers += rank != self;
        } else if (f->ucx_base) {
            if (rank != self || mapped_here)
                *m = (nbrma_mapped_peer_t) {
                .base = f->ucx_base,.disp_unit = f->ucx_disp_unit};
            r.n_cross_memory_peers += rank != self;
        } else if (f->pid != 0 && f->has_key) {
            r.pid[rank] = f->pid;
            r.n_cross_memory_peers++;
            any_pid = true;
        }
        any_mapped = any_mapped || m->base != NULL;
        r.n_mapped_peers += rank != self && m->base != NULL;
    }
    r.all_peers_mapped = nprocs > 1 && r.n_mapped_peers == nprocs - 1;
    if (!any_mapped) {
        free(r.mapped);
        r.mapped = NULL;
    }
    if (!any_pid) {
        free(r.pid);
        r.pid = NULL;
    }
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
