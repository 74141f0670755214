/*
 * mpich-nbrma: below MPI_THREAD_MULTIPLE, where MPICH takes no lock, who runs
 * MPICH: the application inside an MPI call or the progress agent
 * (common/nbrma_progress_agent.c). Raising the thread level would make every
 * call of a single-threaded program pay for MPICH's mutex; at most one
 * application thread is inside MPI there, so a two-party guard suffices
 * (os/two_party_guard.h): plain stores and loads for the application, the
 * barrier for the agent, once per wake-up. Patch 0036 calls _enter/_exit from
 * MPID_THREAD_CS_ENTER/EXIT(GLOBAL, ...) (every call MPICH locks but MPI_Init
 * and MPI_Finalize, which start and stop the agent): a load and a branch with
 * the agent off. Calls nest (around user callbacks): only the outermost marks
 * and counts (rule P7 of core/include/nbrma_agent_pacing.h); its exit rings
 * the agent (P6, P8: decided inside, rung outside) or marks the mailboxes
 * (P10) if the agent asked.
 */

#ifndef MPIDI_NBRMA_AGENT_GUARD_H_INCLUDED
#define MPIDI_NBRMA_AGENT_GUARD_H_INCLUDED

#include "mpl.h"
#include <stdbool.h>
#include "two_party_guard.h"

typedef struct {
    /* NBRMA_GUARD_OFF unless an agent runs below MPI_THREAD_MULTIPLE */
    nbrma_two_party_guard parties;
    MPL_atomic_int_t exit_ring_asked;   /* nbrma_pacing_exit_ring (P6, P8), set by the agent */
    MPL_atomic_int_t application_entries;       /* outermost entries, wrapping (P7) */
    MPL_atomic_int_t away_mark_asked;   /* P10: marks left to make, set by the agent */
} MPIDI_NBRMA_agent_guard_t;

extern MPIDI_NBRMA_agent_guard_t MPIDI_NBRMA_agent_guard;
/* Per thread: how deep inside MPI (initial-exec: one load, no call) */
extern __thread int MPIDI_NBRMA_guard_depth __attribute__ ((tls_model("initial-exec")));

/* P6, P8, the application's side (common/nbrma_progress_agent.c): inside MPI,
 * whether the request `asked` (exit_ring_asked as read, nonzero) holds, taking
 * it if so; then, outside, the ring. */
bool MPIDI_NBRMA_agent_exit_ring_wanted(int asked);
void MPIDI_NBRMA_agent_ring(void);
/* P10, inside MPI: marks the mailboxes, counted against the request; true if
 * a message is unread already (then rung outside). */
bool MPIDI_NBRMA_agent_away_mark(void);

/* The agent's side (common/nbrma_agent_guard.c): _start switches the guard on
 * before the agent's thread exists (not at MPI_THREAD_MULTIPLE: MPICH's mutex
 * serves), _stop off once the agent stopped. */
void MPIDI_NBRMA_agent_guard_start(bool library_threaded);
void MPIDI_NBRMA_agent_guard_mark_agent_thread(void);
void MPIDI_NBRMA_agent_guard_stop(void);
/* The agent's way into MPICH, only while the application is outside (false:
 * try later): MPICH's global section at MPI_THREAD_MULTIPLE, tried and never
 * waited for; the guard below it. */
bool MPIDI_NBRMA_agent_enter_mpich(void);
void MPIDI_NBRMA_agent_leave_mpich(void);
/* Rule P9 (common/nbrma_parked_wait.c): a parked application thread leaves MPI
 * at any depth for the agent (MPICH's global section kept in `held` as
 * MPIDU_Thread_yield does, or the guard's mark); true if the agent asked to be
 * rung (taken: the caller rings). _step_in re-enters, not counted (P7). */
typedef struct {
    int count;
    MPL_thread_id_t owner;
} MPIDI_NBRMA_held_section_t;
bool MPIDI_NBRMA_application_step_out(MPIDI_NBRMA_held_section_t * held);
void MPIDI_NBRMA_application_step_in(const MPIDI_NBRMA_held_section_t * held);
/* _mark_agent_thread sets the agent's thread this deep, deeper than any MPI
 * call nests, so that it never marks itself as the application. */
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
