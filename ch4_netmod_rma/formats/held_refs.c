/*
 * mpich-nbrma: a table of objects held until done (held_refs.h).
 */

#include "held_refs.h"
#include "grow_one.h"

#include <stdlib.h>

#define FIRST_CAP 16

void nbrma_held_refs_prune(nbrma_held_refs * t, bool all, nbrma_held_done_fn done,
                           nbrma_held_drop_fn drop)
{
    size_t kept = 0;

    for (size_t i = 0; i < t->n; i++) {
        void *obj = t->v[i];

        if (all || done(obj))
            drop(obj);
        else
            t->v[kept++] = obj;
    }
    t->n = kept;
}

bool nbrma_held_refs_reserve(nbrma_held_refs * t, nbrma_held_done_fn done,
                             nbrma_held_drop_fn drop)
{
    if (t->n == t->cap)
        nbrma_held_refs_prune(t, false, done, drop);
    return nbrma_grow_one((void **) &t->v, t->n, &t->cap, sizeof(*t->v), FIRST_CAP);
}

bool nbrma_held_refs_remove(nbrma_held_refs * t, const void *obj)
{
    for (size_t i = 0; i < t->n; i++)
        if (t->v[i] == obj) {
            t->v[i] = t->v[--t->n];
            return true;
        }
    return false;
}

void nbrma_held_refs_free(nbrma_held_refs * t)
{
    free(t->v);
    t->v = NULL;
    t->n = t->cap = 0;
}
