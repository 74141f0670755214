/*
 * mpich-nbrma: a waiting loop's idle period (wait_pacing.h); the bounded
 * spin is all inline.
 */

#define _POSIX_C_SOURCE 200809L /* clock_gettime */
#include "wait_pacing.h"

#include <sched.h>

bool nbrma_idle_period_at(nbrma_idle_period * p, uint64_t now, uint64_t limit_ns)
{
    if (p->since_ns == 0 || now - p->last_ns > 2 * limit_ns + 4000u * NBRMA_CLOCK_EVERY) {
        p->since_ns = p->last_ns = now;
        return false;
    }
    if (now - p->since_ns >= limit_ns)
        return true;
    p->last_ns = now;
    return false;
}

void nbrma_idle_period_yielded(nbrma_idle_period * p, uint64_t now)
{
    p->since_ns = p->last_ns = now;
}

void nbrma_idle_period_reading(nbrma_idle_period * p, uint64_t limit_ns)
{
    if (!nbrma_idle_period_at(p, nbrma_monotonic_ns(), limit_ns))
        return;
    sched_yield();
    nbrma_idle_period_yielded(p, nbrma_monotonic_ns());
}
