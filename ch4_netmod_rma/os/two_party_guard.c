/*
 * mpich-nbrma: a guard that keeps two threads apart (two_party_guard.h).
 */

#include <linux/membarrier.h>
#include <sched.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "two_party_guard.h"

static long membarrier(int cmd)
{
    return syscall(__NR_membarrier, cmd, 0);
}

nbrma_guard_mode nbrma_guard_mode_available(void)
{
    return membarrier(MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED) == 0 ? NBRMA_GUARD_MEMBARRIER
        : NBRMA_GUARD_FENCE;
}

void nbrma_guard_reset(nbrma_two_party_guard * g, nbrma_guard_mode mode)
{
    __atomic_store_n(&g->application_inside, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&g->helper_inside, 0, __ATOMIC_RELAXED);
    g->mode = mode;
    /* the helper's thread is created after this: it sees the mode */
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
}

void nbrma_guard_application_wait(nbrma_two_party_guard * g)
{
    /* the helper sees application_inside between its rounds of work and
     * leaves within one round */
    while (__atomic_load_n(&g->helper_inside, __ATOMIC_ACQUIRE))
        sched_yield();
}

bool nbrma_guard_helper_try_in(nbrma_two_party_guard * g)
{
    /* Look before knocking: an application inside (most wake-ups while it
     * waits in a blocking call) is left alone without the barrier, whose
     * interrupts would stop its thread in the middle of its call */
    if (__atomic_load_n(&g->application_inside, __ATOMIC_RELAXED))
        return false;
    __atomic_store_n(&g->helper_inside, 1, __ATOMIC_RELAXED);
    /* the application's store of application_inside, made before it looked
     * at helper_inside, is visible after this; or it will see helper_inside */
    if (g->mode == NBRMA_GUARD_MEMBARRIER)
        (void) membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED);
    else
        __atomic_thread_fence(__ATOMIC_SEQ_CST);
    if (!__atomic_load_n(&g->application_inside, __ATOMIC_ACQUIRE))
        return true;
    __atomic_store_n(&g->helper_inside, 0, __ATOMIC_RELEASE);
    return false;
}
