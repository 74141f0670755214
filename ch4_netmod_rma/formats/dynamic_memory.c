/*
 * mpich-nbrma: the bookkeeping of a dynamic window's memory besides the rkey
 * cache (dynamic_memory.h).
 */

#include <stdlib.h>

#include "dynamic_memory.h"

static uint64_t last_generation;

uint64_t nbrma_next_generation(void)
{
    return ++last_generation;
}

nbrma_registration_t *nbrma_registration_new(void *base, uint64_t size)
{
    nbrma_registration_t *reg = calloc(1, sizeof(*reg));

    if (reg) {
        reg->base = base;
        reg->size = size;
    }
    return reg;
}

void nbrma_registration_free(nbrma_registration_t * reg)
{
    free(reg);
}

void nbrma_registrations_add(nbrma_registrations_t * table, nbrma_registration_t * reg)
{
    reg->next = table->newest;
    table->newest = reg;
    table->count++;
}

nbrma_registration_t *nbrma_registrations_find(const nbrma_registrations_t * table,
                                               uint64_t generation)
{
    for (nbrma_registration_t * reg = table->newest; reg; reg = reg->next)
        if (reg->generation == generation)
            return reg;
    return NULL;
}

nbrma_registration_t *nbrma_registrations_remove(nbrma_registrations_t * table,
                                                 uint64_t generation)
{
    for (nbrma_registration_t ** link = &table->newest; *link; link = &(*link)->next)
        if ((*link)->generation == generation) {
            nbrma_registration_t *reg = *link;
            *link = reg->next;
            table->count--;
            return reg;
        }
    return NULL;
}

nbrma_registration_t *nbrma_registrations_pop(nbrma_registrations_t * table)
{
    nbrma_registration_t *reg = table->newest;

    if (reg) {
        table->newest = reg->next;
        table->count--;
    }
    return reg;
}

bool nbrma_rdma_targets_init(nbrma_rdma_targets_t * t, int ntargets)
{
    size_t n = ntargets > 0 ? (size_t) ntargets : 1;

    *t = (nbrma_rdma_targets_t) { 0 };
    t->pending = calloc(n, sizeof(*t->pending));
    t->pays = calloc(n, 1);
    if (t->pending == NULL || t->pays == NULL) {
        nbrma_rdma_targets_free(t);
        return false;
    }
    t->ntargets = ntargets;
    return true;
}

void nbrma_rdma_targets_free(nbrma_rdma_targets_t * t)
{
    free(t->pending);
    free(t->pays);
    *t = (nbrma_rdma_targets_t) { 0 };
}

void nbrma_rdma_targets_completed(nbrma_rdma_targets_t * t, int first, int last)
{
    for (int r = first; r <= last; r++)
        if (t->pending[r]) {
            t->pending[r] = false;
            t->npending--;
        }
}

bool nbrma_rdma_targets_retire(nbrma_rdma_targets_t * t, int target, void *rkey)
{
    nbrma_retired_rkey_t *r;

    if (target < 0 || target >= t->ntargets || !t->pending[target] ||
        (r = malloc(sizeof(*r))) == NULL)
        return false;
    r->target = target;
    r->rkey = rkey;
    r->next = t->retired;
    t->retired = r;
    return true;
}

void *nbrma_rdma_targets_take_retired(nbrma_rdma_targets_t * t, int rank, int all)
{
    for (nbrma_retired_rkey_t ** link = &t->retired; *link; link = &(*link)->next)
        if (rank == all || (*link)->target == rank) {
            nbrma_retired_rkey_t *r = *link;
            void *rkey = r->rkey;
            *link = r->next;
            free(r);
            return rkey;
        }
    return NULL;
}

void nbrma_memhandle_windows_add(nbrma_memhandle_windows_t * table,
                                 nbrma_memhandle_window_t * w)
{
    w->next_sibling = table->newest;
    table->newest = w;
    table->count++;
}

void nbrma_memhandle_windows_remove(nbrma_memhandle_windows_t * table,
                                    nbrma_memhandle_window_t * w)
{
    for (nbrma_memhandle_window_t ** link = &table->newest; *link; link = &(*link)->next_sibling)
        if (*link == w) {
            *link = w->next_sibling;
            w->next_sibling = NULL;
            table->count--;
            return;
        }
}

void nbrma_memhandle_windows_orphan(nbrma_memhandle_windows_t * table,
                                    void (*release_rkey) (void *rkey))
{
    nbrma_memhandle_window_t *w = table->newest;

    while (w) {
        nbrma_memhandle_window_t *next = w->next_sibling;

        if (w->rkey)
            release_rkey(w->rkey);
        w->rkey = NULL;
        w->parent = NULL;
        w->next_sibling = NULL;
        w = next;
    }
    table->newest = NULL;
    table->count = 0;
}
