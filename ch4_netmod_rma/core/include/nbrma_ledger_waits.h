/*
 * mpich-nbrma core: the waits registered with the completion ledger
 * (nbrma_ledger.h), which the glue (ch4/common/nbrma_ledger_adapter.c) kept
 * in a list of its own:
 *
 *   W1  a wait still open when armed gets an entry: (the glue's window, its
 *       waiter, what to do at its release, its outside parts, taken over);
 *       an entry freed earlier is reused, newest first, before one is
 *       allocated; the waiter is told the wait's error, then each open
 *       flush (one the ledger had no memory for fails the waiter with the
 *       glue's "no memory" code), then each outside part, and is armed
 *       once the entry is listed. Without memory (the entry, or the waiter:
 *       that entry is kept for the next wait) nothing is listed and the
 *       parts stay the caller's;
 *   W2  entries are listed newest first; a released waiter's entry leaves
 *       the list with the ledger's error before the glue acts on it (an
 *       action may register new waits), and is then freed: its parts' list
 *       goes, the entry is kept for W1;
 *   W3  a callback whose argument goes away is forgotten: every listed
 *       callback entry with that argument does nothing at its release;
 *   W4  a window has waits while an entry of it is listed;
 *   W5  an endpoint flush is numbered as it starts, before any other flush
 *       starts (so in the order of their start), and kept in flight (F1,
 *       F2) while the transport has it; one that finished at once is
 *       reported finished with its error, except while no entry is listed:
 *       it can release nobody and gets no number (a blocking flush on
 *       shared memory then makes no ledger call). Without memory to keep
 *       one in flight nothing is numbered: the transport keeps its request.
 *
 * Entries live as long as the process (as the glue's did). Plain C
 * interface, no MPICH or UCX header: unit-tested against a model of the
 * glue's former list (test/unit/test_ledger_waits.cpp). Not thread-safe:
 * the glue calls it under MPICH's global critical section.
 */

#ifndef NBRMA_LEDGER_WAITS_H_INCLUDED
#define NBRMA_LEDGER_WAITS_H_INCLUDED

#include <stdbool.h>
#include <stddef.h>

#include "nbrma_ledger.h"
#include "nbrma_ledger_flights.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum {
    NBRMA_WAIT_REQUEST,         /* complete `req` */
    NBRMA_WAIT_CALLBACK,        /* call `done` */
    NBRMA_WAIT_NOTHING          /* nobody waits any more */
} nbrma_wait_action;

/* The layouts are visible: the glue walks the list to check outside parts
 * and sets the action's fields after W1. */
typedef struct nbrma_registered_wait {
    void *owner;                /* the glue's window */
    nbrma_waiter_id id;
    nbrma_wait_action action;
    void *req;                  /* the glue's request */
    int (*done) (void *arg, int error);
    void *arg;
    int error;                  /* the ledger's, at release (W2) */
    nbrma_outside_parts parts;  /* the wait's, taken over */
    struct nbrma_registered_wait *prev, *next;
} nbrma_registered_wait;

typedef struct nbrma_waits {    /* zero-initialised: empty */
    nbrma_registered_wait *head;        /* listed, newest first */
    nbrma_registered_wait *spare;       /* freed, for the next wait */
} nbrma_waits;

/* W1: the entry of an open wait, registered and armed; NULL without memory
 * (nothing listed, *parts unchanged). `error` is the wait's (0: none),
 * `nomem_error` the glue's code for a flush the ledger cannot keep. */
nbrma_registered_wait *nbrma_waits_register(nbrma_waits * waits, nbrma_ledger * ledger,
                                            void *owner, nbrma_wait_action action, int error,
                                            const nbrma_open_flushes * open,
                                            nbrma_outside_parts * parts, int nomem_error);

/* W2: whether any entry is listed. */
static inline bool nbrma_waits_any(const nbrma_waits * waits)
{
    return waits->head != NULL;
}

/* W2: the next entry the ledger released, out of the list, its error set;
 * false when none. */
static inline bool nbrma_waits_next_released(nbrma_waits * waits, nbrma_ledger * ledger,
                                             nbrma_registered_wait ** released)
{
    void *cookie;
    int error;
    nbrma_registered_wait *w;

    if (!nbrma_ledger_next_released(ledger, &cookie, &error))
        return false;
    w = (nbrma_registered_wait *) cookie;
    if (w->prev)
        w->prev->next = w->next;
    else
        waits->head = w->next;
    if (w->next)
        w->next->prev = w->prev;
    w->error = error;
    *released = w;
    return true;
}

/* W2: an entry out of the list is done with: kept for the next wait. */
static inline void nbrma_waits_free(nbrma_waits * waits, nbrma_registered_wait * w)
{
    nbrma_outside_parts_free(&w->parts);
    w->next = waits->spare;
    waits->spare = w;
}

/* W3: listed callbacks with `arg` do nothing at their release. */
static inline void nbrma_waits_forget_arg(nbrma_waits * waits, const void *arg)
{
    for (nbrma_registered_wait * w = waits->head; w; w = w->next)
        if (w->action == NBRMA_WAIT_CALLBACK && w->arg == arg)
            w->action = NBRMA_WAIT_NOTHING;
}

/* W4: whether an entry of `owner` is listed. */
static inline bool nbrma_waits_of(const nbrma_waits * waits, const void *owner)
{
    for (const nbrma_registered_wait * w = waits->head; w; w = w->next)
        if (w->owner == owner)
            return true;
    return false;
}

/* W5: an endpoint flush toward `peer` just started; `handle` is the
 * transport's request (kept in flight with `vni`), or NULL when it finished
 * at once with `error`. NBRMA_ERR_NOMEM, nothing kept, without memory. */
static inline int nbrma_waits_flush_began(const nbrma_waits * waits, nbrma_ledger * ledger,
                                          nbrma_flights * flights, nbrma_open_flushes * open,
                                          nbrma_peer_key peer, void *handle, int vni, int error)
{
    uint64_t seq;

    if (handle == NULL && !nbrma_waits_any(waits))
        return NBRMA_OK;
    if ((handle && nbrma_flights_reserve(flights, open) != NBRMA_OK) ||
        !nbrma_ledger_start_flush(ledger, peer, &seq))
        return NBRMA_ERR_NOMEM;
    if (handle == NULL)
        nbrma_ledger_flush_finished(ledger, peer, seq, error);
    else
        nbrma_flights_add(flights, open, peer, seq, handle, vni);
    return NBRMA_OK;
}

#ifdef __cplusplus
}
#endif
#endif /* NBRMA_LEDGER_WAITS_H_INCLUDED */
