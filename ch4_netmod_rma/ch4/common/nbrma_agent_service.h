/*
 * mpich-nbrma: one service of the progress agent inside MPICH, which its
 * thread (nbrma_progress_agent.c) runs once it got in: rounds of progress
 * while the pacing lets it linger (P4 of nbrma_agent_pacing.h), on the CPU
 * P5 names, then every UCX worker armed for the agent's sleep.
 */
#ifndef NBRMA_AGENT_SERVICE_H_INCLUDED
#define NBRMA_AGENT_SERVICE_H_INCLUDED

#include <stdbool.h>
#include <stdint.h>
#include "nbrma_agent_pacing.h"
#include "thread_state.h"

/* What the services report to the agent's thread. */
typedef struct {
    bool events;                /* a round handled UCX events (P9); the thread clears it */
    uint64_t cpus_taken;        /* CPUs the lingering agent found another thread on (P5) */
    bool look_again;            /* P11: the mailboxes wake the sleep for peers only while
                                 * the application polls with work in flight: a sleep of
                                 * at most NBRMA_PACING_AWAY_MIN_NS */
} MPIDI_NBRMA_agent_service_t;

/* Whether the application started work still in flight: a poller of its
 * own work, or a request of the component's not complete yet. Inside MPICH. */
bool MPIDI_NBRMA_agent_own_work_in_flight(void);

/* P5: keeps the agent's thread where the pacing places it. */
void MPIDI_NBRMA_agent_place(nbrma_agent_placement at);

/* Progresses until every worker is armed (true), or lets go after a bounded
 * number of rounds or when the application waits to come in (false: call
 * again), having lingered first as `how` says (the application as `app`
 * shows it; `pacing` judges its yields, P5). `mailboxes_wake`: the agent
 * sleeps on its wake socket too, so the mailboxes are marked asleep before
 * it may, for what P11 says. Inside MPICH (MPIDI_NBRMA_agent_enter_mpich). */
bool MPIDI_NBRMA_agent_serve(MPIDI_NBRMA_agent_service_t * s, nbrma_agent_pacing * pacing,
                             nbrma_linger how, nbrma_thread_view app, bool mailboxes_wake);

#endif /* NBRMA_AGENT_SERVICE_H_INCLUDED */
