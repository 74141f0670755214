/*
 * mpich-nbrma: who runs MPICH, the application or the progress agent: the
 * two-party guard below MPI_THREAD_MULTIPLE (include/mpidi_nbrma_agent_guard.h
 * says why and how; patch 0036 calls its inline half from MPICH's global
 * critical section macros), MPICH's global critical section at it, and the
 * ways in and out of both for the agent and for a parked wait.
 */

#include "mpidimpl.h"
#include "mpidi_nbrma_agent_guard.h"
#include "nbrma_static_assert.h"
#include <pthread.h>
#include <linux/membarrier.h>
#include <sched.h>
#include <sys/syscall.h>
#include <unistd.h>

MPIDI_NBRMA_agent_guard_t MPIDI_NBRMA_agent_guard;
__thread int MPIDI_NBRMA_guard_depth __attribute__ ((tls_model("initial-exec")));

static long membarrier(int cmd)
{
    return syscall(__NR_membarrier, cmd, 0);
}

void MPIDI_NBRMA_agent_guard_start(bool library_threaded)
{
    /* MPICH's global section must be a plain POSIX mutex for try_enter_global */
    NBRMA_STATIC_ASSERT(sizeof(MPL_thread_mutex_t) == sizeof(pthread_mutex_t),
                        "MPICH's mutex is not a pthread mutex");
    MPL_atomic_relaxed_store_int(&MPIDI_NBRMA_agent_guard.application_inside, 0);
    MPL_atomic_relaxed_store_int(&MPIDI_NBRMA_agent_guard.agent_inside, 0);
    MPL_atomic_relaxed_store_int(&MPIDI_NBRMA_agent_guard.exit_ring_asked, 0);
    MPL_atomic_relaxed_store_int(&MPIDI_NBRMA_agent_guard.application_entries, 0);
    MPL_atomic_relaxed_store_int(&MPIDI_NBRMA_agent_guard.away_mark_asked, 0);
    if (library_threaded)
        MPIDI_NBRMA_agent_guard.mode = MPIDI_NBRMA_GUARD_OFF;
    else if (membarrier(MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED) == 0)
        MPIDI_NBRMA_agent_guard.mode = MPIDI_NBRMA_GUARD_MEMBARRIER;
    else
        MPIDI_NBRMA_agent_guard.mode = MPIDI_NBRMA_GUARD_FENCE;
    /* the agent's thread is created after this: it sees the mode */
    MPL_atomic_read_write_barrier();
}

void MPIDI_NBRMA_agent_guard_mark_agent_thread(void)
{
    MPIDI_NBRMA_guard_depth = MPIDI_NBRMA_GUARD_AGENT_DEPTH;
}

void MPIDI_NBRMA_agent_guard_stop(void)
{
    MPIDI_NBRMA_agent_guard.mode = MPIDI_NBRMA_GUARD_OFF;
}

void MPIDI_NBRMA_agent_guard_wait(void)
{
    /* the agent sees application_inside between its progress rounds and
     * leaves within one round */
    while (MPL_atomic_acquire_load_int(&MPIDI_NBRMA_agent_guard.agent_inside))
        sched_yield();
}

/* The agent enters only while the application is outside MPI (below
 * MPI_THREAD_MULTIPLE). */
static bool guard_try_enter(void)
{
    /* Look before knocking: an application inside MPI (most wake-ups while
     * it waits in a blocking call) is left alone without the barrier, whose
     * interrupts would stop its thread in the middle of its call */
    if (MPL_atomic_relaxed_load_int(&MPIDI_NBRMA_agent_guard.application_inside))
        return false;
    MPL_atomic_relaxed_store_int(&MPIDI_NBRMA_agent_guard.agent_inside, 1);
    /* the application's store of application_inside, made before it looked
     * at agent_inside, is visible after this; or it will see agent_inside */
    if (MPIDI_NBRMA_agent_guard.mode == MPIDI_NBRMA_GUARD_MEMBARRIER)
        (void) membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED);
    else
        MPL_atomic_read_write_barrier();
    if (!MPL_atomic_acquire_load_int(&MPIDI_NBRMA_agent_guard.application_inside))
        return true;
    MPL_atomic_release_store_int(&MPIDI_NBRMA_agent_guard.agent_inside, 0);
    return false;
}

/* MPICH's global critical section if no one holds it (MPID_THREAD_CS_ENTER
 * waits for it); left with MPID_THREAD_CS_EXIT. A plain POSIX mutex
 * (asserted in MPIDI_NBRMA_agent_guard_start). */
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
    return MPIR_ThreadInfo.isThreaded ? try_enter_global() : guard_try_enter();
}

void MPIDI_NBRMA_agent_leave_mpich(void)
{
    if (MPIR_ThreadInfo.isThreaded)
        MPID_THREAD_CS_EXIT(GLOBAL, MPIR_THREAD_GLOBAL_ALLFUNC_MUTEX);
    else
        MPL_atomic_release_store_int(&MPIDI_NBRMA_agent_guard.agent_inside, 0);
}

bool MPIDI_NBRMA_application_step_out(MPIDI_NBRMA_held_section_t * held)
{
    MPIDU_Thread_mutex_t *m = &MPIR_THREAD_GLOBAL_ALLFUNC_MUTEX;
    int err = 0;

    if (!MPIR_ThreadInfo.isThreaded) {
        bool asked = MPL_atomic_swap_int(&MPIDI_NBRMA_agent_guard.exit_ring_asked, 0) != 0;

        MPL_atomic_release_store_int(&MPIDI_NBRMA_agent_guard.application_inside, 0);
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
        MPIDI_NBRMA_agent_guard_mark_inside();
        return;
    }
    MPIDU_Thread_mutex_lock(m, &err, MPL_THREAD_PRIO_LOW);
    MPIR_Assert(m->count == 0);
    m->count = held->count;
    m->owner = held->owner;
}
