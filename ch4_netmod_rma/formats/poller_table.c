/*
 * mpich-nbrma: the table of the component's pollers (poller_table.h).
 */

#include "poller_table.h"

bool nbrma_pollers_unannounced_work(const nbrma_poller_table * t)
{
    for (int i = 0; i < t->n; i++)
        if (t->v[i]->unannounced && t->v[i]->has_work)
            return true;
    return false;
}

bool nbrma_pollers_list(nbrma_poller_table * t, nbrma_poller * p)
{
    for (int i = 0; i < t->n; i++)
        if (t->v[i] == p)
            return true;
    if (t->n == NBRMA_MAX_POLLERS)
        return false;
    t->v[t->n++] = p;
    return true;
}
