/*
 * mpich-nbrma core: the completion ledger's lists of endpoint flushes and
 * outside parts
 * (nbrma_ledger.h), which the glue (ch4/common/nbrma_ledger_gather.c and
 * _adapter.c) kept in arrays of its own:
 *
 *   F1  the process's flushes in flight: (peer, number, the transport's
 *       handle, VNI), one entry per flush started and not seen finished;
 *       room for one more is made before the flush can fail to be kept
 *       (nbrma_flights_reserve, with the wait's list below), and one seen
 *       finished leaves in O(1), the last entry taking its place;
 *   F2  a wait's open flushes: (peer, number) of those it started that were
 *       still in flight; the list of the last wait that had one is kept
 *       (up to 16 entries of room) for the next, so that a blocking flush
 *       that waits allocates nothing (nbrma_open_flushes_release);
 *   F3  a wait of open flushes alone is finished once the ledger says each
 *       finished (nbrma_ledger_flush_done), newest first, each leaving the
 *       list as it is found finished; the first nonzero error is kept;
 *   F4  a wait's outside parts (what only the glue can check: an operation's
 *       request, or MPIDIG's counters toward a rank), in the order asked
 *       for; one found done leaves in O(1), the last part taking its place;
 *       the list of the last wait that had one is kept (up to 16 entries
 *       of room) for the next, as in F2: a blocking flush toward a target
 *       MPICH's active messages reach allocates nothing;
 *   F5  the tasks run at every poll of the ledger (bookkeeping of windows
 *       that follows what it releases): listed once however often asked,
 *       newest first; a poll runs those listed before it began (one listed
 *       while they run waits for the next poll), each listed again while
 *       its run asks for it, in the order they ran reversed.
 *
 * Growth doubles from 16 (F1), 4 (F2) and 2 (F4) entries. Plain C interface, no
 * MPICH or UCX header: unit-tested against a model of the glue's former
 * arrays (test/unit/test_ledger_flights.cpp). Not thread-safe: the glue
 * calls it under MPICH's global critical section.
 */

#ifndef NBRMA_LEDGER_FLIGHTS_H_INCLUDED
#define NBRMA_LEDGER_FLIGHTS_H_INCLUDED

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "nbrma_core.h"         /* NBRMA_OK, NBRMA_ERR_NOMEM */
#include "nbrma_ledger.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The layouts are visible so that what a blocking flush does per call is a
 * few loads and stores, not a call; the glue uses the functions. */
typedef struct nbrma_flight {
    nbrma_peer_key peer;
    uint64_t seq;
    void *handle;               /* the transport's request, the glue's */
    int vni;
} nbrma_flight;

typedef struct nbrma_flights {  /* F1; zero-initialised: empty */
    nbrma_flight *v;
    size_t n, cap;
} nbrma_flights;

typedef struct nbrma_open_flush {
    nbrma_peer_key peer;
    uint64_t seq;
} nbrma_open_flush;

typedef struct nbrma_open_flushes {     /* F2; zero-initialised: empty */
    nbrma_open_flush *v;
    size_t n, cap;
} nbrma_open_flushes;

/* F1, F2: room for one more entry in both (the kept list of F2 first taken
 * by an open list that has none). NBRMA_ERR_NOMEM without memory; whatever
 * grew stays grown. */
int nbrma_flights_grow(nbrma_flights * flights, nbrma_open_flushes * open);
static inline int nbrma_flights_reserve(nbrma_flights * flights, nbrma_open_flushes * open)
{
    return flights->n < flights->cap && open->n < open->cap ?
        NBRMA_OK : nbrma_flights_grow(flights, open);
}

/* F1, F2: a flush in flight, kept in both, in the room reserved. */
static inline void nbrma_flights_add(nbrma_flights * flights, nbrma_open_flushes * open,
                                     nbrma_peer_key peer, uint64_t seq, void *handle, int vni)
{
    nbrma_flight *f = &flights->v[flights->n++];
    nbrma_open_flush *o = &open->v[open->n++];

    f->peer = peer;
    f->seq = seq;
    f->handle = handle;
    f->vni = vni;
    o->peer = peer;
    o->seq = seq;
}

/* F1: entry i was seen finished: it leaves, the last entry takes its place
 * (a loop over the entries then looks at i again). */
static inline void nbrma_flights_remove(nbrma_flights * flights, size_t i)
{
    flights->v[i] = flights->v[--flights->n];
}

/* F1: whether flushes are in flight, and the VNI of the oldest kept. */
static inline bool nbrma_flights_vni(const nbrma_flights * flights, int *vni)
{
    if (flights->n == 0)
        return false;
    *vni = flights->v[0].vni;
    return true;
}

/* F2: the wait is over; its list is kept for the next wait or freed. */
void nbrma_open_flushes_release(nbrma_open_flushes * open);

/* F3: whether every open flush finished, the first error (of those found
 * finished now) in *first_error if it is still 0. */
static inline bool nbrma_open_flushes_finished(nbrma_ledger * ledger, nbrma_open_flushes * open,
                                               int *first_error)
{
    while (open->n > 0) {
        const nbrma_open_flush *f = &open->v[open->n - 1];
        int error;

        if (!nbrma_ledger_flush_done(ledger, f->peer, f->seq, &error))
            return false;
        if (*first_error == 0)
            *first_error = error;
        open->n--;
    }
    return true;
}

/* F4: an outside part: the glue's request, or NULL and MPIDIG's counters
 * toward `rank` (`local`: sent suffices). */
typedef struct nbrma_outside_part {
    void *req;
    int rank;
    bool local;
} nbrma_outside_part;

typedef struct nbrma_outside_parts {    /* zero-initialised: empty */
    nbrma_outside_part *v;
    size_t n, cap;
} nbrma_outside_parts;

/* F4: room for one more part; NBRMA_ERR_NOMEM, nothing changed, without. */
int nbrma_outside_parts_grow(nbrma_outside_parts * parts);

/* F4: one more part (NBRMA_ERR_NOMEM, nothing kept, without memory). */
static inline int nbrma_outside_parts_add(nbrma_outside_parts * parts, void *req, int rank,
                                          bool local)
{
    nbrma_outside_part *p;

    if (parts->n == parts->cap && nbrma_outside_parts_grow(parts) != NBRMA_OK)
        return NBRMA_ERR_NOMEM;
    p = &parts->v[parts->n++];
    p->req = req;
    p->rank = rank;
    p->local = local;
    return NBRMA_OK;
}

/* F4: part i was found done: it leaves, the last part takes its place. */
static inline void nbrma_outside_parts_remove(nbrma_outside_parts * parts, size_t i)
{
    parts->v[i] = parts->v[--parts->n];
}

/* F4: frees the list (not the requests), or keeps it for the next; empty
 * afterwards. */
void nbrma_outside_parts_free(nbrma_outside_parts * parts);

/* F5: a task, kept in the glue's own object (no allocation); `owner` is
 * the glue's (its window), `run` leaves *again true to run at the next poll
 * too and returns the glue's error code. */
typedef struct nbrma_ledger_task {
    int (*run) (struct nbrma_ledger_task * task, bool *again);
    void *owner;
    bool listed;
    struct nbrma_ledger_task *next;
} nbrma_ledger_task;

/* F5: lists `task` with `owner` and `run`; false (nothing changed) if it
 * is listed already. */
static inline bool nbrma_ledger_tasks_add(nbrma_ledger_task ** tasks, nbrma_ledger_task * task,
                                          void *owner,
                                          int (*run) (nbrma_ledger_task * task, bool *again))
{
    if (task->listed)
        return false;
    task->run = run;
    task->owner = owner;
    task->listed = true;
    task->next = *tasks;
    *tasks = task;
    return true;
}

/* F5: one poll's run of the tasks listed now; each error is handed to
 * keep(error) as it comes (nonzero ones only). */
static inline void nbrma_ledger_tasks_run(nbrma_ledger_task ** tasks, void (*keep) (int error))
{
    nbrma_ledger_task *t = *tasks;

    *tasks = NULL;
    while (t) {
        nbrma_ledger_task *next = t->next;
        bool again = false;
        int error = t->run(t, &again);

        if (error)
            keep(error);
        if (again) {
            t->next = *tasks;
            *tasks = t;
        } else {
            t->listed = false;
        }
        t = next;
    }
}

/* F5: whether a task of `owner` is listed. */
static inline bool nbrma_ledger_tasks_of(const nbrma_ledger_task * tasks, const void *owner)
{
    for (; tasks; tasks = tasks->next)
        if (tasks->owner == owner)
            return true;
    return false;
}

#ifdef __cplusplus
}
#endif
#endif /* NBRMA_LEDGER_FLIGHTS_H_INCLUDED */
