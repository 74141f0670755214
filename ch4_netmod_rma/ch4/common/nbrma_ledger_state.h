/*
 * mpich-nbrma: the state the two parts of the ledger's glue share: the
 * process's ledger, the endpoint flushes in flight and whether any wait is
 * registered. ledger_gather.c owns it (a wait gathers its parts and starts
 * flushes), ledger_adapter.c registers what stays open and polls. Internal
 * to those two files; everything else uses ledger_adapter.h.
 */

#ifndef NBRMA_LEDGER_STATE_H_INCLUDED
#define NBRMA_LEDGER_STATE_H_INCLUDED

#include "nbrma_ledger.h"
#include "nbrma_ledger_adapter.h"

/* The paths a blocking flush on shared memory never takes stay out of its
 * way (their frames and spills cost it about a third). */
#if defined(__GNUC__)
#define SLOW_PATH __attribute__((noinline, cold))
#else
#define SLOW_PATH
#endif

/* An endpoint flush started and not finished yet. */
typedef struct {
    nbrma_peer_key peer;
    uint64_t seq;
    void *ucx_req;
    int vni;
} MPIDI_NBRMA_flush_in_flight_t;

typedef struct {
    nbrma_ledger *ledger;       /* made at the first wait that needs it */
    struct waiting *waits;      /* registered, not released yet (ledger_adapter.c) */
    MPIDI_NBRMA_flush_in_flight_t *flushes;
    size_t n_flushes, flushes_room;
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
