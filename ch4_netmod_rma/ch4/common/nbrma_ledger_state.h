/*
 * mpich-nbrma: the state of the ledger's glue: the process's ledger, the
 * endpoint flushes in flight (F1 of nbrma_ledger_flights.h) and the waits
 * registered (nbrma_ledger_waits.h). ledger_gather.c owns it, ledger_adapter.c
 * registers and polls, ledger_wait.c reads the flushes. Internal to those
 * three files; everything else uses ledger_adapter.h.
 */

#ifndef NBRMA_LEDGER_STATE_H_INCLUDED
#define NBRMA_LEDGER_STATE_H_INCLUDED

#include "nbrma_ledger.h"
#include "nbrma_ledger_waits.h"
#include "nbrma_ledger_adapter.h"

/* The paths a blocking flush on shared memory never takes stay out of its
 * way (their frames and register spills would slow it). */
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

int MPIDI_NBRMA_ledger_make(void);

static inline void MPIDI_NBRMA_ledger_first_error(MPIDI_NBRMA_ledger_wait_t * w, int error)
{
    if (w->error == MPI_SUCCESS)
        w->error = error;
}

#endif /* NBRMA_LEDGER_STATE_H_INCLUDED */
