/*
 * mpich-nbrma: the state the two parts of the ledger's glue share: the
 * process's ledger, the endpoint flushes in flight (the core's list, F1 of
 * nbrma_ledger_flights.h) and the waits registered (the core's list,
 * nbrma_ledger_waits.h). ledger_gather.c
 * owns it (a wait gathers its parts and starts flushes), ledger_adapter.c
 * registers what stays open and polls, ledger_wait.c reads the flushes.
 * Internal to those three files; everything else uses ledger_adapter.h.
 */

#ifndef NBRMA_LEDGER_STATE_H_INCLUDED
#define NBRMA_LEDGER_STATE_H_INCLUDED

#include "nbrma_ledger.h"
#include "nbrma_ledger_waits.h"
#include "nbrma_ledger_adapter.h"

/* The paths a blocking flush on shared memory never takes stay out of its
 * way (their frames and spills cost it about a third). */
#if defined(__GNUC__)
#define SLOW_PATH __attribute__((noinline, cold))
#else
#define SLOW_PATH
#endif

typedef struct {
    nbrma_ledger *ledger;       /* made at the first wait that needs it */
    nbrma_waits waits;          /* registered, not released yet (ledger_adapter.c) */
    nbrma_flights flights;      /* handle: the UCX request */
} MPIDI_NBRMA_ledger_state_t;

extern MPIDI_NBRMA_ledger_state_t MPIDI_NBRMA_ledger_state;

/* Makes the process's ledger if there is none yet. */
int MPIDI_NBRMA_ledger_make(void);

/* Keeps the first error of a wait's parts. */
static inline void MPIDI_NBRMA_ledger_first_error(MPIDI_NBRMA_ledger_wait_t * w, int error)
{
    if (w->error == MPI_SUCCESS)
        w->error = error;
}

#endif /* NBRMA_LEDGER_STATE_H_INCLUDED */
