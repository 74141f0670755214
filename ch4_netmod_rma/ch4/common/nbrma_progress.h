/*
 * mpich-nbrma: the component's one progress hook. MPICH has four hook slots
 * and runs every active hook in every progress call, so the component keeps
 * one, active only while a poller (ledger, mailboxes, lock words) has work.
 * MPICH's blocking RMA spin loops run no hooks: code waiting in one polls.
 */

#ifndef NBRMA_PROGRESS_H_INCLUDED
#define NBRMA_PROGRESS_H_INCLUDED

#include <stdint.h>
#include "wait_pacing.h"        /* nbrma_monotonic_ns: the clock of bounded waits */
#include "poller_table.h"

/* A poller and its flags (formats/poller_table.h). */
typedef nbrma_poller MPIDI_NBRMA_poller_t;

int MPIDI_NBRMA_poller_wake(MPIDI_NBRMA_poller_t * poller);
/* The poller has no work left; the hook goes quiet once no poller has. */
int MPIDI_NBRMA_poller_sleep(MPIDI_NBRMA_poller_t * poller);

/* Whether a poller of the process's own work has work (the progress agent
 * serves that at once: MPIR_CVAR_NBRMA_ASYNC_PROGRESS_SHARE). */
bool MPIDI_NBRMA_progress_own_work(void);

/* Whether a poller whose work no event announces has work (the agent then
 * sleeps on a timer: MPIX_Win_ilock toward a peer's busy lock word). */
bool MPIDI_NBRMA_progress_unannounced_work(void);

/* A window was made (+1) or freed (-1). With none, no RMA can need this CPU
 * (a peer's goes through a window both made; a memory-handle window's through
 * its owner's dynamic one): the agent leaves the workers unarmed, deaf to
 * point-to-point traffic (MPICH's MPIR_CVAR_ASYNC_PROGRESS one always arms). */
void MPIDI_NBRMA_agent_windows(int change);

/* Work began that no event will announce (a lock waiting for a peer's busy
 * lock word, freed with plain stores): a running agent, which asleep without
 * a timer would not look, is rung now and looks on a timer while it lasts. */
void MPIDI_NBRMA_agent_unannounced_work_begins(void);

/* Runs the pollers now, for the agent: they must look again after UCX's. */
int MPIDI_NBRMA_run_pollers(int *made_progress);

/* A count that moves whenever progress completes something a wait may wait
 * for: a request of MPICH's, a poller's progress, or a completion without a
 * request (progress_moved). The agent rings a parked wait when its service
 * moved it (P9); a wait on MPIDIG's own counters sees it at its next look. */
unsigned MPIDI_NBRMA_progress_moves(void);
void MPIDI_NBRMA_progress_moved(void);

/* Idle time before a waiting loop or the agent's linger gives the processor
 * away (MPIR_CVAR_NBRMA_YIELD_AFTER_IDLE_US; NBRMA_IDLE_NEVER_NS: never). */
uint64_t MPIDI_NBRMA_yield_after_idle_ns(void);

/* One round of a component waiting loop: MPICH's whole progress, hooks
 * included, yielding now and then as MPICH's loops do (patch 0030). */
int MPIDI_NBRMA_progress_wait_round(void);

/* The same, also letting other threads into MPI for a moment: for waits that
 * may last until a peer acts, which may wait for one of those threads. Only in
 * loops that read all their state again after each round. */
int MPIDI_NBRMA_progress_blocking_round(void);

/* A blocking call that did its work without MPICH's progress (an epoch
 * toward its own rank, a lock word taken, a flush complete on shared memory)
 * runs it once every such many calls: MPI promises progress to a process
 * looping on them, and a peer's lock request would otherwise never be
 * received (linked_list_bench_lock_excl hung). */
#define MPIDI_NBRMA_CALLS_BETWEEN_PROGRESS 64
extern unsigned MPIDI_NBRMA_calls_without_progress;

/* MPICH's progress, then UCX's workers until a round handles nothing. The
 * calls in between may each have left operations whose acknowledgements come
 * back (one per put where UCX emulates it, MPI_Win_create's memory on shared
 * memory), and a round handles a few of them only (16 on shared memory):
 * one round every 64 calls let the rest pile up in the peers' send queues
 * without bound, and the next endpoint flush (a local flush of a put UCX
 * could not send at once) waited for all of them. */
int MPIDI_NBRMA_progress_drain(void);

/* One round of UCX's worker of `vni` under its VCI lock, outside MPICH's
 * progress: the events it handled. */
unsigned MPIDI_NBRMA_worker_progress(int vni);

static inline int MPIDI_NBRMA_progress_now_and_then(void)
{
    if (++MPIDI_NBRMA_calls_without_progress < MPIDI_NBRMA_CALLS_BETWEEN_PROGRESS)
        return MPI_SUCCESS;
    MPIDI_NBRMA_calls_without_progress = 0;
    return MPIDI_NBRMA_progress_drain();
}

#endif /* NBRMA_PROGRESS_H_INCLUDED */
