/*
 * mpich-nbrma: a guard that keeps two threads apart, "the application" (one
 * thread at a time, which enters and leaves all the time) and "the helper"
 * (which enters seldom and may be refused), so that the application pays
 * plain stores and loads only. The application marks itself inside with a
 * plain store and then looks whether the helper is inside; the helper marks
 * itself inside, then makes every thread of the process pass a full memory
 * barrier (membarrier(2), MEMBARRIER_CMD_PRIVATE_EXPEDITED), then looks
 * whether the application is inside and, if it is, leaves at once. Whichever
 * looks second sees the other (Dekker's handshake; the heavy barrier is all
 * on the helper's side). Where the kernel has no membarrier, the
 * application's side fences instead (NBRMA_GUARD_FENCE).
 *
 * The progress agent's guard below MPI_THREAD_MULTIPLE
 * (ch4/include/mpidi_nbrma_agent_guard.h says how MPICH calls it) is built on
 * it. No MPICH or UCX header: unit-tested without MPI, both modes, two
 * threads taking turns (test/unit/test_two_party_guard.cpp).
 */

#ifndef NBRMA_TWO_PARTY_GUARD_H_INCLUDED
#define NBRMA_TWO_PARTY_GUARD_H_INCLUDED

#include <stdbool.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum {
    NBRMA_GUARD_OFF = 0,        /* no helper runs: nobody goes in or out */
    NBRMA_GUARD_MEMBARRIER,     /* the helper's side makes the barrier */
    NBRMA_GUARD_FENCE           /* no membarrier here: the application fences */
} nbrma_guard_mode;

typedef struct {
    int mode;                   /* nbrma_guard_mode; set while no helper runs */
    int application_inside;     /* the rest: __atomic_* only */
    int helper_inside;
} nbrma_two_party_guard;

/* The mode this process can have: NBRMA_GUARD_MEMBARRIER once the kernel
 * registered the process for membarrier (done here), else _FENCE. */
nbrma_guard_mode nbrma_guard_mode_available(void);
/* Both parties outside, in `mode`, before the helper's thread is created
 * (NBRMA_GUARD_OFF once it stopped). */
void nbrma_guard_reset(nbrma_two_party_guard * g, nbrma_guard_mode mode);

/* The application found the helper inside: waits until it left. */
void nbrma_guard_application_wait(nbrma_two_party_guard * g);

/* The application's way in (after it, the helper is outside until
 * nbrma_guard_application_out). */
static inline void nbrma_guard_application_in(nbrma_two_party_guard * g)
{
    __atomic_store_n(&g->application_inside, 1, __ATOMIC_RELAXED);
    if (g->mode == NBRMA_GUARD_FENCE)
        __atomic_thread_fence(__ATOMIC_SEQ_CST);
    else
        __atomic_signal_fence(__ATOMIC_SEQ_CST);
    if (__atomic_load_n(&g->helper_inside, __ATOMIC_ACQUIRE))
        nbrma_guard_application_wait(g);
}

static inline void nbrma_guard_application_out(nbrma_two_party_guard * g)
{
    __atomic_store_n(&g->application_inside, 0, __ATOMIC_RELEASE);
}

/* The application waits to come in, or is inside: the helper should let
 * go soon (or not come in). */
static inline bool nbrma_guard_application_inside(const nbrma_two_party_guard * g)
{
    return __atomic_load_n(&g->application_inside, __ATOMIC_RELAXED) != 0;
}

/* The helper's way in, only while the application is outside (false: it is
 * inside, try later); out with nbrma_guard_helper_out. */
bool nbrma_guard_helper_try_in(nbrma_two_party_guard * g);

static inline void nbrma_guard_helper_out(nbrma_two_party_guard * g)
{
    __atomic_store_n(&g->helper_inside, 0, __ATOMIC_RELEASE);
}

#ifdef __cplusplus
}
#endif
#endif /* NBRMA_TWO_PARTY_GUARD_H_INCLUDED */
