/*
 * mpich-nbrma: how the component's waiting loops pace themselves against the
 * clock: when a loop that waits without progress gives the processor away
 * (an idle period, MPIR_CVAR_NBRMA_YIELD_AFTER_IDLE_US, patch 0030), and when
 * a spin on the UCX worker gives up (a bounded spin, the completion ledger's
 * flush spin). The glue (ch4/common/nbrma_progress.c, nbrma_ledger_wait.c)
 * keeps the progress calls and the limits; what depends only on the clock
 * and counts is here, MPICH- and UCX-free, unit-tested without MPI
 * (test/unit/test_wait_pacing.cpp).
 *
 * Both read the clock every NBRMA_CLOCK_EVERY rounds only: a reading costs
 * 22 ns here, nearly half a shared-memory round, and every round it
 * lengthens is latency before the wait sees its event (perf: clock_gettime
 * was 11% of an origin's put + flush on a create window, read every round).
 * The rounds between readings are inline, so a loop's round costs no call.
 */

#ifndef NBRMA_WAIT_PACING_H_INCLUDED
#define NBRMA_WAIT_PACING_H_INCLUDED

#include <stdbool.h>
#include <stdint.h>
#include <time.h>

#ifdef __cplusplus
extern "C" {
#endif

#define NBRMA_CLOCK_EVERY 8

/* The clock of the component's bounded waits and spins (nanoseconds). */
static inline uint64_t nbrma_monotonic_ns(void)
{
    struct timespec now;

    clock_gettime(CLOCK_MONOTONIC, &now);
    return (uint64_t) now.tv_sec * 1000000000u + (uint64_t) now.tv_nsec;
}

/* --- an idle period --------------------------------------------------------
 * The waiting period of a thread: it begins where a waiting loop begins
 * (nbrma_idle_period_restart), at an idle round after the progress count
 * moved (MPICH completed a request: the loops that do not say where they
 * begin), or after a pause longer than a waiting loop's rounds; the thread
 * yields once the period is `limit_ns` long, and again each as long after.
 * Time, not a count of rounds: an idle round costs 0.05 us over shared memory
 * and 2 us over tcp (an epoll_wait). The first reading comes NBRMA_CLOCK_EVERY
 * rounds into a period: short waits read no clock. Zero-initialized is a
 * period that starts at the next reading. */
typedef struct {
    int progress_count;
    unsigned rounds;
    uint64_t since_ns, last_ns; /* since_ns 0: the period starts at the next reading */
    uint64_t began_ns;          /* where it began: a yield or a park does not move it */
} nbrma_idle_period;

/* After an idle round a waiting loop goes on (having given the processor
 * away for a moment, maybe), or parks: at a safe point of a blocking wait
 * whose period began the park limit ago (the caller's; 0: never), it leaves
 * MPI and sleeps until the progress agent rings
 * (ch4/common/nbrma_parked_wait.c), then calls nbrma_idle_period_yielded.
 * Parking counts from where the period began, not from the last yield: a
 * wait parks once it is that long, and again after each park while it goes
 * on. */

/* A yield limit that never comes in practice (MPIR_CVAR_NBRMA_YIELD_AFTER_IDLE_US
 * negative): about 4 s, so that the pause rule below still holds for parking. */
#define NBRMA_IDLE_NEVER_NS ((uint64_t) UINT32_MAX)

static inline void nbrma_idle_period_restart(nbrma_idle_period * p)
{
    p->since_ns = 0;
    p->rounds = 0;
}

/* At a reading at `now`: YIELD once the period is `yield_ns` long (the
 * caller yields: nbrma_idle_period_yield), PARK once it began
 * `park_ns` ago (0: never), which comes first. A pause, longer than the
 * rounds between two readings take over tcp, starts a new period. */
typedef enum {
    NBRMA_IDLE_READ_SPIN = 0,
    NBRMA_IDLE_READ_YIELD,
    NBRMA_IDLE_READ_PARK
} nbrma_idle_reading;
nbrma_idle_reading nbrma_idle_period_read(nbrma_idle_period * p, uint64_t now,
                                          uint64_t yield_ns, uint64_t park_ns);

/* The thread yielded or parked; the next yield counts from `now`. */
void nbrma_idle_period_yielded(nbrma_idle_period * p, uint64_t now);

/* Gives the processor away (a reading said YIELD); the next yield counts
 * from its end. Returns how long it took: beyond a system call's time (0.3
 * us here), other threads ran on this CPU meanwhile. */
uint64_t nbrma_idle_period_yield(nbrma_idle_period * p);

/* One idle round of a waiting loop; `progress_count` is the count that moves
 * when progress completes something: the reading at every NBRMA_CLOCK_EVERY
 * round, SPIN between (the caller yields on YIELD). */
static inline nbrma_idle_reading nbrma_idle_round_read(nbrma_idle_period * p, int progress_count,
                                                       uint64_t yield_ns, uint64_t park_ns)
{
    if (progress_count != p->progress_count) {
        p->progress_count = progress_count;
        nbrma_idle_period_restart(p);
    }
    if (++p->rounds % NBRMA_CLOCK_EVERY != 0)
        return NBRMA_IDLE_READ_SPIN;
    return nbrma_idle_period_read(p, nbrma_monotonic_ns(), yield_ns, park_ns);
}

/* The same round, yielding where it says so. True when the caller should
 * park. */
static inline bool nbrma_idle_round(nbrma_idle_period * p, int progress_count,
                                    uint64_t yield_ns, uint64_t park_ns)
{
    switch (nbrma_idle_round_read(p, progress_count, yield_ns, park_ns)) {
        case NBRMA_IDLE_READ_PARK:
            return true;
        case NBRMA_IDLE_READ_YIELD:
            (void) nbrma_idle_period_yield(p);
            break;
        case NBRMA_IDLE_READ_SPIN:
            break;
    }
    return false;
}

/* --- a bounded spin --------------------------------------------------------
 * A spin that goes on while events keep coming: it stops once no event came
 * for `idle_ns` (as the clock is read) or after `total_ns` in all. */
typedef struct {
    uint64_t start, last_event, idle_ns, total_ns;
    unsigned rounds;
    bool event_since_reading;
} nbrma_bounded_spin;

static inline void nbrma_bounded_spin_begin_at(nbrma_bounded_spin * s, uint64_t now,
                                               uint64_t idle_ns, uint64_t total_ns)
{
    *s = (nbrma_bounded_spin) {
    .start = now,.last_event = now,.idle_ns = idle_ns,.total_ns = total_ns};
}

static inline void nbrma_bounded_spin_begin(nbrma_bounded_spin * s, uint64_t idle_ns,
                                            uint64_t total_ns)
{
    nbrma_bounded_spin_begin_at(s, nbrma_monotonic_ns(), idle_ns, total_ns);
}

/* A round ended with `events`; at a reading at `now`: whether to go on. */
static inline bool nbrma_bounded_spin_reading_at(nbrma_bounded_spin * s, uint64_t now)
{
    if (s->event_since_reading)
        s->last_event = now;
    s->event_since_reading = false;
    return now - s->last_event < s->idle_ns && now - s->start < s->total_ns;
}

/* After a round that saw `events` (or none): whether to spin on. */
static inline bool nbrma_bounded_spin_goes_on(nbrma_bounded_spin * s, bool events)
{
    if (events)
        s->event_since_reading = true;
    if (++s->rounds % NBRMA_CLOCK_EVERY != 0)
        return true;
    return nbrma_bounded_spin_reading_at(s, nbrma_monotonic_ns());
}

#ifdef __cplusplus
}
#endif
#endif /* NBRMA_WAIT_PACING_H_INCLUDED */
