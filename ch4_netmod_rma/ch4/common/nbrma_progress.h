/*
 * mpich-nbrma: the component's one progress hook. MPICH has four hook slots
 * and runs every active hook in every progress call, so the component takes
 * one slot and keeps it active only while some poller has work. There are
 * three: the completion ledger's (ledger_adapter.c: every wait for RMA to
 * complete, and the windows' bookkeeping that follows it), the mailboxes'
 * (mailbox/mailbox.c) and the busy lock words' (epochs/lock_words.c).
 *
 * MPICH runs progress hooks from MPI_Wait/MPI_Test and friends, not from its
 * blocking RMA spin loops: code that waits inside such a loop polls itself.
 */

#ifndef NBRMA_PROGRESS_H_INCLUDED
#define NBRMA_PROGRESS_H_INCLUDED

#include <stdint.h>
#include "wait_pacing.h"        /* nbrma_monotonic_ns: the clock of bounded waits */
#include "poller_table.h"

/* A poller: its poll function, whether its work is the process's own,
 * whether no event announces it, and whether it has work
 * (formats/poller_table.h). */
typedef nbrma_poller MPIDI_NBRMA_poller_t;

/* The poller has work: it is polled from the next progress call on. */
int MPIDI_NBRMA_poller_wake(MPIDI_NBRMA_poller_t * poller);
/* The poller has no work left; the hook goes quiet once no poller has. */
int MPIDI_NBRMA_poller_sleep(MPIDI_NBRMA_poller_t * poller);

/* Whether a poller of the process's own work has work (the progress agent
 * serves that at once: MPIR_CVAR_NBRMA_ASYNC_PROGRESS_SHARE). */
bool MPIDI_NBRMA_progress_own_work(void);

/* Whether a poller whose work no event announces has work (the progress
 * agent then sleeps on a timer: MPIX_Win_ilock toward a peer's busy lock
 * word). */
bool MPIDI_NBRMA_progress_unannounced_work(void);

/* A window of this process was made (+1) or freed (-1). While this process
 * has none, nothing of RMA can need its CPU (a peer's RMA toward it goes
 * through a window both made, a memory-handle window through its owner's
 * dynamic window): the progress agent of MPIR_CVAR_NBRMA_ASYNC_PROGRESS
 * then leaves the UCX workers unarmed, so that point-to-point traffic wakes
 * it nowhere, and sleeps until the first window (MPICH's
 * MPIR_CVAR_ASYNC_PROGRESS serves all of MPI: its agent always arms). */
void MPIDI_NBRMA_agent_windows(int change);

/* Work began that no event will announce (an origin's lock waits for a
 * peer's busy lock word, which the releaser frees with plain stores): a
 * progress agent asleep without a timer would not look until something
 * else woke it, so it is rung now (if it runs); from its next service on it
 * looks again on a timer while such work is pending. */
void MPIDI_NBRMA_agent_unannounced_work_begins(void);

/* The pollers with work, run now (what the hook runs in a progress call):
 * for the progress agent, which must look again after UCX's progress. */
int MPIDI_NBRMA_run_pollers(int *made_progress);

/* A count that moves whenever progress completes something a wait may wait
 * for: a request of MPICH's (its progress count), a poller's progress, or a
 * completion a wait reads without a request (MPIDI_NBRMA_progress_moved: a
 * blocking synchronization call's). The progress agent rings a parked wait
 * when its service moved it (rule P9); a wait on what moves none of them
 * (MPIDIG's own counters, on windows whose epochs MPICH keeps) sees it at
 * its next look. */
unsigned MPIDI_NBRMA_progress_moves(void);
void MPIDI_NBRMA_progress_moved(void);

/* How long a waiting loop waits without progress before it gives the
 * processor away (MPIR_CVAR_NBRMA_YIELD_AFTER_IDLE_US; NBRMA_IDLE_NEVER_NS
 * where it never does): MPICH's loops and the progress agent's linger. */
uint64_t MPIDI_NBRMA_yield_after_idle_ns(void);

/* One round of a waiting loop of the component: MPICH's whole progress, hooks
 * included, and the processor given away now and then as MPICH's own waiting
 * loops do (MPIDI_NBRMA_progress_idle, patch 0030). */
int MPIDI_NBRMA_progress_wait_round(void);

/* The same round, which also lets the process's other threads into MPI for a
 * moment (MPICH's global critical section, as MPID_Progress_wait yields it):
 * for waits that may last until a peer acts, since the peer may be waiting
 * for one of those threads. Only in loops that read every state they depend
 * on again after each round; the short completion loops that keep a window's
 * bookkeeping across rounds use the round above. */
int MPIDI_NBRMA_progress_blocking_round(void);

/* A blocking call that returned without entering MPICH's progress engine
 * (its work was done at once: an epoch toward this process's own rank, a
 * lock taken in a lock word, a flush of operations complete on shared
 * memory) runs it once every MPIDI_NBRMA_CALLS_BETWEEN_PROGRESS such calls.
 * MPI promises progress to a process that loops on such calls, and a peer's
 * active messages to it (a lock request) would otherwise never be received:
 * MPICH's linked_list_bench_lock_excl locks its own rank over and over while
 * it chases a list's tail, and its peer waited for its lock forever. */
#define MPIDI_NBRMA_CALLS_BETWEEN_PROGRESS 64
extern unsigned MPIDI_NBRMA_calls_without_progress;

static inline int MPIDI_NBRMA_progress_now_and_then(void)
{
    if (++MPIDI_NBRMA_calls_without_progress < MPIDI_NBRMA_CALLS_BETWEEN_PROGRESS)
        return MPI_SUCCESS;
    MPIDI_NBRMA_calls_without_progress = 0;
    return MPID_Progress_test(NULL);
}

#endif /* NBRMA_PROGRESS_H_INCLUDED */
