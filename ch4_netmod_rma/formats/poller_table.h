/*
 * mpich-nbrma: the table of the component's pollers behind its one progress
 * hook (ch4/common/nbrma_progress.h says which pollers and why one hook):
 * which are listed, which have work, and how many, so that the glue knows
 * when to activate the hook and when it may go quiet. The glue keeps the
 * hook's registration with MPICH; running the pollers, waking one and
 * putting one to sleep are inline here (the hook runs in every progress
 * call). MPICH-free, unit-tested without MPI (test/unit/test_poller_table.cpp).
 */

#ifndef NBRMA_POLLER_TABLE_H_INCLUDED
#define NBRMA_POLLER_TABLE_H_INCLUDED

#include <stdbool.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct nbrma_poller {
    int (*poll) (int *made_progress);   /* 0: success, else an error code */
    bool own_work;              /* its work is what this process started itself
                                 * (completions it waits for, locks it asks for),
                                 * not what peers send it */
    bool unannounced;           /* its work can advance without an event that
                                 * wakes this process (a peer's lock word freed
                                 * by plain stores): whoever sleeps for it must
                                 * look again on a timer */
    bool has_work;              /* set by nbrma_pollers_wake, cleared by _sleep */
} nbrma_poller;

#define NBRMA_MAX_POLLERS 8

/* All zero is an empty table. */
typedef struct {
    nbrma_poller *v[NBRMA_MAX_POLLERS];
    int n;
    int awake;                  /* how many have work */
    int own_awake;              /* how many of those are own_work: the progress
                                 * agent's guard asks at every exit from MPI */
} nbrma_poller_table;

/* Runs the pollers with work in the order listed, until one fails: its
 * error, or 0. */
static inline int nbrma_pollers_run(const nbrma_poller_table * t, int *made_progress)
{
    int error = 0;

    for (int i = 0; i < t->n && error == 0; i++)
        if (t->v[i]->has_work)
            error = t->v[i]->poll(made_progress);
    return error;
}

/* Whether a poller of the process's own work has work. */
static inline bool nbrma_pollers_own_work(const nbrma_poller_table * t)
{
    return t->own_awake > 0;
}

/* Whether a poller whose work no event announces has work. */
bool nbrma_pollers_unannounced_work(const nbrma_poller_table * t);

/* Lists `p` if it is not listed yet: false if the table is full. */
bool nbrma_pollers_list(nbrma_poller_table * t, nbrma_poller * p);

/* `p`, listed and without work, has work. */
static inline void nbrma_pollers_wake(nbrma_poller_table * t, nbrma_poller * p)
{
    p->has_work = true;
    t->awake++;
    t->own_awake += p->own_work;
}

/* `p` has no work left: whether it had, and no poller has any now (the hook
 * may go quiet). */
static inline bool nbrma_pollers_sleep(nbrma_poller_table * t, nbrma_poller * p)
{
    if (!p->has_work)
        return false;
    p->has_work = false;
    t->own_awake -= p->own_work;
    return --t->awake == 0;
}

#ifdef __cplusplus
}
#endif
#endif /* NBRMA_POLLER_TABLE_H_INCLUDED */
