/*
 * mpich-nbrma: the table of windows that have duplicates on this process
 * (MPIX_Win_dup_with_info, ch4/duplicate/dup_win.c): per parent window, its
 * live duplicates and whether its own handle was freed before them (it then
 * goes with its last duplicate). MPICH-free so that it is tested without MPI
 * (test/unit/test_dynamic_tables.cpp); windows are opaque pointers here.
 */

#ifndef NBRMA_DUP_PARENTS_H_INCLUDED
#define NBRMA_DUP_PARENTS_H_INCLUDED

#include <stdbool.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct nbrma_dup_parent {
    void *win;                  /* the glue's window (opaque here) */
    int live_dups;              /* duplicates of it on this process */
    bool orphaned;              /* its handle was freed: it goes with its last duplicate */
    struct nbrma_dup_parent *next;
} nbrma_dup_parent_t;

/* In order of their first duplicate. All zero is empty. */
typedef struct {
    nbrma_dup_parent_t *first;
} nbrma_dup_parents_t;

/* The entry of `win`, NULL when it has none. */
nbrma_dup_parent_t *nbrma_dup_parents_find(const nbrma_dup_parents_t * list, const void *win);

/* The entry of `win`, made (with no duplicates yet, last in the list) when it
 * has none; NULL when there is no memory. */
nbrma_dup_parent_t *nbrma_dup_parents_get(nbrma_dup_parents_t * list, void *win);

/* A duplicate was not made after all: an entry without duplicates goes. */
void nbrma_dup_parents_unused(nbrma_dup_parents_t * list, nbrma_dup_parent_t * parent);

/* One of the parent's duplicates was freed. With none left the entry goes
 * and *orphan is the parent window when its handle was freed before (the
 * caller frees it), NULL otherwise; with some left *orphan is NULL. */
void nbrma_dup_parents_release(nbrma_dup_parents_t * list, nbrma_dup_parent_t * parent,
                               void **orphan);

/* The live duplicates of `win` (0 without an entry). */
int nbrma_dup_parents_count(const nbrma_dup_parents_t * list, const void *win);

/* `win`'s handle was freed while duplicates live: it goes with the last.
 * Nothing without an entry. */
void nbrma_dup_parents_orphan(nbrma_dup_parents_t * list, const void *win);

#ifdef __cplusplus
}
#endif

#endif /* NBRMA_DUP_PARENTS_H_INCLUDED */
