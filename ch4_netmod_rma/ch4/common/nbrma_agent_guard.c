/*
 * mpich-nbrma: who runs MPICH, the application or the progress agent: below
 * MPI_THREAD_MULTIPLE the two-party guard (../../os/two_party_guard.h; why:
 * include/mpidi_nbrma_agent_guard.h, called from MPICH's critical-section
 * macros by patch 0036), at it MPICH's global critical section; the ways in
 * and out of both for the agent and for a parked wait.
 */

#include "mpidimpl.h"
#include "mpidi_nbrma_agent_guard.h"
#include "nbrma_static_assert.h"
#include <pthread.h>

MPIDI_NBRMA_agent_guard_t MPIDI_NBRMA_agent_guard;
__thread int MPIDI_NBRMA_guard_depth __attribute__ ((tls_model("initial-exec")));

void MPIDI_NBRMA_agent_guard_start(bool library_threaded)
{
    NBRMA_STATIC_ASSERT(sizeof(MPL_thread_mutex_t) == sizeof(pthread_mutex_t),
                        "MPICH's mutex is not a pthread mutex");
    MPL_atomic_relaxed_store_int(&MPIDI_NBRMA_agent_guard.exit_ring_asked, 0);
    MPL_atomic_relaxed_store_int(&MPIDI_NBRMA_agent_guard.application_entries, 0);
    MPL_atomic_relaxed_store_int(&MPIDI_NBRMA_agent_guard.away_mark_asked, 0);
    nbrma_guard_reset(&MPIDI_NBRMA_agent_guard.parties,
                      library_threaded ? NBRMA_GUARD_OFF : nbrma_guard_mode_available());
}

void MPIDI_NBRMA_agent_guard_mark_agent_thread(void)
{
    MPIDI_NBRMA_guard_depth = MPIDI_NBRMA_GUARD_AGENT_DEPTH;
}

void MPIDI_NBRMA_agent_guard_stop(void)
{
    nbrma_guard_reset(&MPIDI_NBRMA_agent_guard.parties, NBRMA_GUARD_OFF);
}

/* MPICH's global section only if free (MPID_THREAD_CS_ENTER would wait);
 * left with MPID_THREAD_CS_EXIT. Needs the pthread mutex asserted at start. */
static bool try_enter_global(void)
{
    MPIDU_Thread_mutex_t *m = &MPIR_THREAD_GLOBAL_ALLFUNC_MUTEX;

    if (pthread_mutex_trylock(&m->mutex) != 0)
        return false;
    MPL_thread_self(&m->owner);
    m->count++;
    return true;
}

bool MPIDI_NBRMA_agent_enter_mpich(void)
{
    return MPIR_ThreadInfo.isThreaded ? try_enter_global() :
        nbrma_guard_helper_try_in(&MPIDI_NBRMA_agent_guard.parties);
}

void MPIDI_NBRMA_agent_leave_mpich(void)
{
    if (MPIR_ThreadInfo.isThreaded)
        MPID_THREAD_CS_EXIT(GLOBAL, MPIR_THREAD_GLOBAL_ALLFUNC_MUTEX);
    else
        nbrma_guard_helper_out(&MPIDI_NBRMA_agent_guard.parties);
}

bool MPIDI_NBRMA_application_step_out(MPIDI_NBRMA_held_section_t * held)
{
    MPIDU_Thread_mutex_t *m = &MPIR_THREAD_GLOBAL_ALLFUNC_MUTEX;
    int err = 0;

    if (!MPIR_ThreadInfo.isThreaded) {
        bool asked = MPL_atomic_swap_int(&MPIDI_NBRMA_agent_guard.exit_ring_asked, 0) != 0;

        nbrma_guard_application_out(&MPIDI_NBRMA_agent_guard.parties);
        return asked;
    }
    held->count = m->count;
    held->owner = m->owner;
    m->count = 0;
    m->owner = 0;
    MPIDU_Thread_mutex_unlock(m, &err);
    return false;
}

void MPIDI_NBRMA_application_step_in(const MPIDI_NBRMA_held_section_t * held)
{
    MPIDU_Thread_mutex_t *m = &MPIR_THREAD_GLOBAL_ALLFUNC_MUTEX;
    int err = 0;

    if (!MPIR_ThreadInfo.isThreaded) {
        nbrma_guard_application_in(&MPIDI_NBRMA_agent_guard.parties);
        return;
    }
    MPIDU_Thread_mutex_lock(m, &err, MPL_THREAD_PRIO_LOW);
    MPIR_Assert(m->count == 0);
    m->count = held->count;
    m->owner = held->owner;
}
