/*
 * mpich-nbrma: a table of objects the glue holds a reference to until they
 * are done: the requests made while the progress agent runs
 * (ch4/common/nbrma_request.c), each kept until it completes, so that the
 * agent can tell whether the application waits for work of its own. The
 * glue says what "done" is and how a reference is given back (an MPICH
 * request's completion and free); the table's growth, pruning and removal
 * are here, MPICH- and UCX-free, unit-tested without MPI
 * (test/unit/test_held_refs.cpp).
 */

#ifndef NBRMA_HELD_REFS_H_INCLUDED
#define NBRMA_HELD_REFS_H_INCLUDED

#include <stdbool.h>
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* All zero is an empty table. */
typedef struct {
    void **v;
    size_t n, cap;
} nbrma_held_refs;

/* Whether the object is done, and giving its reference back. */
typedef bool (*nbrma_held_done_fn) (void *obj);
typedef void (*nbrma_held_drop_fn) (void *obj);

/* Drops the done ones (`all`: every one), giving their references back; the
 * others keep their order. */
void nbrma_held_refs_prune(nbrma_held_refs * t, bool all, nbrma_held_done_fn done,
                           nbrma_held_drop_fn drop);

/* Room for one more: when full, the done ones go first (prune), then the
 * table doubles (first 16). False without memory, the table unchanged (the
 * object then goes untracked). */
bool nbrma_held_refs_reserve(nbrma_held_refs * t, nbrma_held_done_fn done,
                             nbrma_held_drop_fn drop);

/* Adds `obj`, whose reference the table now holds (after reserve). */
static inline void nbrma_held_refs_add(nbrma_held_refs * t, void *obj)
{
    t->v[t->n++] = obj;
}

/* Takes `obj` out (the last one takes its place): whether it was there.
 * Its reference is the caller's to give back. */
bool nbrma_held_refs_remove(nbrma_held_refs * t, const void *obj);

/* Gives the table's memory back (its objects must have been dropped). */
void nbrma_held_refs_free(nbrma_held_refs * t);

#ifdef __cplusplus
}
#endif
#endif /* NBRMA_HELD_REFS_H_INCLUDED */
