/*
 * mpich-nbrma: the progress agent's service inside MPICH, run by its thread
 * (nbrma_progress_agent.c); pacing rules P4, P5, P11: nbrma_agent_pacing.h.
 */
#ifndef NBRMA_AGENT_SERVICE_H_INCLUDED
#define NBRMA_AGENT_SERVICE_H_INCLUDED

#include <stdbool.h>
#include <stdint.h>
#include "nbrma_agent_pacing.h"
#include "thread_state.h"

typedef struct {
    bool events;                /* a round handled UCX events (P9); the thread clears it */
    uint64_t cpus_taken;        /* CPUs the lingering agent found another thread on (P5) */
    bool look_again;            /* P11: mailboxes wake the sleep for peers only (the
                                 * application polls): sleep <= NBRMA_PACING_AWAY_MIN_NS */
} MPIDI_NBRMA_agent_service_t;

/* A poller of the application's own work has work, or a request of the
 * component's is not complete. Inside MPICH. */
bool MPIDI_NBRMA_agent_own_work_in_flight(void);

/* P5: keeps the agent's thread where the pacing places it. */
void MPIDI_NBRMA_agent_place(nbrma_agent_placement at);

/* Progresses until every worker is armed (true), or lets go after a bounded
 * number of rounds or when the application waits to come in (false: call
 * again); lingers first as `how` says (P4, P5). `mailboxes_wake` (the sleep
 * watches the wake socket): the mailboxes are marked asleep first (P11). */
bool MPIDI_NBRMA_agent_serve(MPIDI_NBRMA_agent_service_t * s, nbrma_agent_pacing * pacing,
                             nbrma_linger how, nbrma_thread_view app, bool mailboxes_wake);

#endif /* NBRMA_AGENT_SERVICE_H_INCLUDED */
