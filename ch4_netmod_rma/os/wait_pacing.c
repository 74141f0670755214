/*
 * mpich-nbrma: a waiting loop's idle period (wait_pacing.h); the bounded
 * spin is all inline.
 */

#define _POSIX_C_SOURCE 200809L /* clock_gettime */
#include "wait_pacing.h"

#include <sched.h>

nbrma_idle_reading nbrma_idle_period_read(nbrma_idle_period * p, uint64_t now,
                                          uint64_t yield_ns, uint64_t park_ns)
{
    if (p->since_ns == 0 || now - p->last_ns > 2 * yield_ns + 4000u * NBRMA_CLOCK_EVERY) {
        p->began_ns = p->since_ns = p->last_ns = now;
        return NBRMA_IDLE_READ_SPIN;
    }
    if (park_ns != 0 && now - p->began_ns >= park_ns)
        return NBRMA_IDLE_READ_PARK;
    if (now - p->since_ns >= yield_ns)
        return NBRMA_IDLE_READ_YIELD;
    p->last_ns = now;
    return NBRMA_IDLE_READ_SPIN;
}

void nbrma_idle_period_yielded(nbrma_idle_period * p, uint64_t now)
{
    p->since_ns = p->last_ns = now;
}

uint64_t nbrma_idle_period_yield(nbrma_idle_period * p)
{
    uint64_t before = nbrma_monotonic_ns(), after;

    sched_yield();
    after = nbrma_monotonic_ns();
    nbrma_idle_period_yielded(p, after);
    return after - before;
}
