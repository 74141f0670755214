/*
 * mpich-nbrma: the two-party guard between the application's thread inside
 * MPI and the progress agent below MPI_THREAD_MULTIPLE
 * (include/mpidi_nbrma_agent_guard.h says why and how; patch 0036 calls its
 * inline half from MPICH's global critical section macros).
 */

#include "mpidimpl.h"
#include "mpidi_nbrma_agent_guard.h"
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
    MPL_atomic_relaxed_store_int(&MPIDI_NBRMA_agent_guard.application_inside, 0);
    MPL_atomic_relaxed_store_int(&MPIDI_NBRMA_agent_guard.agent_inside, 0);
    MPL_atomic_relaxed_store_int(&MPIDI_NBRMA_agent_guard.exit_ring_asked, 0);
    MPL_atomic_relaxed_store_int(&MPIDI_NBRMA_agent_guard.application_entries, 0);
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

bool MPIDI_NBRMA_agent_guard_try_enter(void)
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

void MPIDI_NBRMA_agent_guard_leave(void)
{
    MPL_atomic_release_store_int(&MPIDI_NBRMA_agent_guard.agent_inside, 0);
}

bool MPIDI_NBRMA_agent_guard_step_out(void)
{
    bool asked = MPL_atomic_swap_int(&MPIDI_NBRMA_agent_guard.exit_ring_asked, 0) != 0;

    MPL_atomic_release_store_int(&MPIDI_NBRMA_agent_guard.application_inside, 0);
    return asked;
}
