/*
 * mpich-nbrma: the table of windows that have duplicates (dup_parents.h).
 */

#include <stdlib.h>

#include "dup_parents.h"

nbrma_dup_parent_t *nbrma_dup_parents_find(const nbrma_dup_parents_t * list, const void *win)
{
    for (nbrma_dup_parent_t * p = list->first; p; p = p->next)
        if (p->win == win)
            return p;
    return NULL;
}

nbrma_dup_parent_t *nbrma_dup_parents_get(nbrma_dup_parents_t * list, void *win)
{
    nbrma_dup_parent_t *p = nbrma_dup_parents_find(list, win);
    nbrma_dup_parent_t **link = &list->first;

    if (p)
        return p;
    p = calloc(1, sizeof(*p));
    if (p == NULL)
        return NULL;
    p->win = win;
    while (*link)
        link = &(*link)->next;
    *link = p;
    return p;
}

static void unlink_and_free(nbrma_dup_parents_t * list, nbrma_dup_parent_t * parent)
{
    for (nbrma_dup_parent_t ** link = &list->first; *link; link = &(*link)->next)
        if (*link == parent) {
            *link = parent->next;
            break;
        }
    free(parent);
}

void nbrma_dup_parents_unused(nbrma_dup_parents_t * list, nbrma_dup_parent_t * parent)
{
    if (parent->live_dups == 0)
        unlink_and_free(list, parent);
}

void nbrma_dup_parents_release(nbrma_dup_parents_t * list, nbrma_dup_parent_t * parent,
                               void **orphan)
{
    *orphan = NULL;
    if (--parent->live_dups > 0)
        return;
    if (parent->orphaned)
        *orphan = parent->win;
    unlink_and_free(list, parent);
}

int nbrma_dup_parents_count(const nbrma_dup_parents_t * list, const void *win)
{
    const nbrma_dup_parent_t *p = nbrma_dup_parents_find(list, win);
    return p ? p->live_dups : 0;
}

void nbrma_dup_parents_orphan(nbrma_dup_parents_t * list, const void *win)
{
    nbrma_dup_parent_t *p = nbrma_dup_parents_find(list, win);
    if (p)
        p->orphaned = true;
}
