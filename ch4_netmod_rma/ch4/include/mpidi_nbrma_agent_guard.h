/*
 * mpich-nbrma: who may run MPICH, the application's thread inside an MPI call
 * or the progress agent (common/nbrma_progress_agent.c), when the application
 * asked for less than MPI_THREAD_MULTIPLE.
 *
 * At MPI_THREAD_MULTIPLE MPICH's global critical section (a mutex) keeps them
 * apart. Below it MPICH has no lock at all, and raising the thread level for
 * the agent made every MPI call of a single-threaded program pay for the
 * mutex (8-byte put + flush on shared memory: median 0.255 -> 0.30 us). Below
 * MPI_THREAD_MULTIPLE at most one application thread is inside MPI at a time,
 * so two parties are enough: os/two_party_guard.h, the application the one
 * that pays plain stores and loads, the agent the helper that makes the
 * memory barrier (once per wake-up).
 *
 * Patch 0036 calls MPIDI_NBRMA_agent_guard_enter/_exit from MPICH's
 * MPID_THREAD_CS_ENTER/EXIT(GLOBAL, ...), which every MPI call passes that
 * MPICH locks at MPI_THREAD_MULTIPLE: not MPI_Init and MPI_Finalize (the
 * agent starts at the end of the one and is stopped and joined first thing
 * in the other) nor the few calls MPICH leaves unlocked there, such as
 * MPI_Wtime. With the agent off they cost one load and one branch. Calls
 * nest (MPICH leaves and re-enters around user callbacks): only the
 * outermost of a thread marks. The agent's own thread is marked as nested
 * far deeper than any call (MPIDI_NBRMA_agent_guard_mark_agent_thread) and
 * never marks.
 *
 * An agent that found the application inside may ask to be rung as it
 * leaves with work of its own in flight (rule P6 of
 * core/include/nbrma_agent_pacing.h) or as it leaves at all (P8): the
 * outermost exit then looks at that while still inside and rings once
 * outside. It may also ask the exit to mark this process's mailboxes (P10),
 * so that same-host peers ring it for what needs this process's CPU. The
 * outermost entries are
 * counted, so that the agent tells an application that calls MPI all the
 * time from one found inside a few calls (rule P7).
 */

#ifndef MPIDI_NBRMA_AGENT_GUARD_H_INCLUDED
#define MPIDI_NBRMA_AGENT_GUARD_H_INCLUDED

#include "mpl.h"
#include <stdbool.h>
#include "two_party_guard.h"

typedef struct {
    /* the application and the agent; mode NBRMA_GUARD_OFF unless an agent
     * runs below MPI_THREAD_MULTIPLE */
    nbrma_two_party_guard parties;
    MPL_atomic_int_t exit_ring_asked;   /* nbrma_pacing_exit_ring (P6, P8), set by the agent */
    MPL_atomic_int_t application_entries;       /* outermost entries, wrapping (P7) */
    MPL_atomic_int_t away_mark_asked;   /* P10: marks left to make, set by the agent */
} MPIDI_NBRMA_agent_guard_t;

extern MPIDI_NBRMA_agent_guard_t MPIDI_NBRMA_agent_guard;
/* Per thread: how deep inside MPI (initial-exec: one load, no call) */
extern __thread int MPIDI_NBRMA_guard_depth __attribute__ ((tls_model("initial-exec")));

/* P6, P8, the application's side (common/nbrma_progress_agent.c): inside
 * MPI, whether the agent's request `asked` (exit_ring_asked as read, not 0)
 * holds (any return, or work of its own left in flight), taking it if so;
 * then, outside, the ring. */
bool MPIDI_NBRMA_agent_exit_ring_wanted(int asked);
void MPIDI_NBRMA_agent_ring(void);
/* P10, the application's side, inside MPI: marks the mailboxes, counting the
 * mark against the request; true where a message is unread already (then
 * rung outside). */
bool MPIDI_NBRMA_agent_away_mark(void);

/* The agent's side (common/nbrma_agent_guard.c). _start switches the guard
 * on before the agent's thread is created (not at MPI_THREAD_MULTIPLE:
 * MPICH's mutex does it); _mark_agent_thread, called by that thread, keeps it
 * from ever marking itself as the application; _stop switches the guard off
 * once the agent has stopped. */
void MPIDI_NBRMA_agent_guard_start(bool library_threaded);
void MPIDI_NBRMA_agent_guard_mark_agent_thread(void);
void MPIDI_NBRMA_agent_guard_stop(void);
/* The agent's way into MPICH, only while the application is outside MPI
 * (false: it is inside, try later): MPICH's global critical section at
 * MPI_THREAD_MULTIPLE, tried and never waited for; the guard below it. */
bool MPIDI_NBRMA_agent_enter_mpich(void);
void MPIDI_NBRMA_agent_leave_mpich(void);
/* A thread of the application parks in the middle of a blocking call (rule
 * P9, common/nbrma_parked_wait.c): _step_out leaves MPI at any depth, so that
 * the agent may enter (MPICH's global section at MPI_THREAD_MULTIPLE, kept
 * in `held` as MPIDU_Thread_yield keeps it; below, the guard's mark), and
 * says whether the agent asked to be rung as the application leaves (the
 * caller rings: the request is taken); _step_in comes back in as the
 * outermost entry does, not counted as an entry (P7). */
typedef struct {
    int count;
    MPL_thread_id_t owner;
} MPIDI_NBRMA_held_section_t;
bool MPIDI_NBRMA_application_step_out(MPIDI_NBRMA_held_section_t * held);
void MPIDI_NBRMA_application_step_in(const MPIDI_NBRMA_held_section_t * held);
/* The agent's thread is marked as nested far deeper than any MPI call
 * (_mark_agent_thread): it never marks itself as the application. */
#define MPIDI_NBRMA_GUARD_AGENT_DEPTH (1 << 24)
static inline bool MPIDI_NBRMA_agent_guard_on_agent_thread(void)
{
    return MPIDI_NBRMA_guard_depth >= MPIDI_NBRMA_GUARD_AGENT_DEPTH;
}

/* The application waits to come in: the agent should let go soon. */
static inline bool MPIDI_NBRMA_agent_guard_application_waits(void)
{
    return nbrma_guard_application_inside(&MPIDI_NBRMA_agent_guard.parties);
}

static inline void MPIDI_NBRMA_agent_guard_enter(void)
{
    if (likely(MPIDI_NBRMA_agent_guard.parties.mode == NBRMA_GUARD_OFF) ||
        MPIDI_NBRMA_guard_depth++ > 0)
        return;
    /* one application thread at a time gets here: a plain increment */
    MPL_atomic_relaxed_store_int(&MPIDI_NBRMA_agent_guard.application_entries,
                                 (int) ((unsigned) MPL_atomic_relaxed_load_int
                                        (&MPIDI_NBRMA_agent_guard.application_entries) + 1u));
    nbrma_guard_application_in(&MPIDI_NBRMA_agent_guard.parties);
}

static inline void MPIDI_NBRMA_agent_guard_exit(void)
{
    bool ring;
    int asked;

    if (likely(MPIDI_NBRMA_agent_guard.parties.mode == NBRMA_GUARD_OFF) ||
        --MPIDI_NBRMA_guard_depth > 0)
        return;
    asked = MPL_atomic_relaxed_load_int(&MPIDI_NBRMA_agent_guard.exit_ring_asked);
    ring = unlikely(asked) && MPIDI_NBRMA_agent_exit_ring_wanted(asked);
    if (unlikely(MPL_atomic_relaxed_load_int(&MPIDI_NBRMA_agent_guard.away_mark_asked)))
        ring = MPIDI_NBRMA_agent_away_mark() || ring;
    nbrma_guard_application_out(&MPIDI_NBRMA_agent_guard.parties);
    if (unlikely(ring))
        MPIDI_NBRMA_agent_ring();
}

#endif /* MPIDI_NBRMA_AGENT_GUARD_H_INCLUDED */
