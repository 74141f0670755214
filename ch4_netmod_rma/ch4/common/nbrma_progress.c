/*
 * mpich-nbrma: the one progress hook of the component and the pollers it runs
 * (progress.h). Registered at the first wake-up, active only while a poller
 * has work.
 */

#include "mpidimpl.h"
#include "mpidi_nbrma_hooks.h"
#include "nbrma_progress.h"
#include <sched.h>

#define MAX_POLLERS 8

static MPIDI_NBRMA_poller_t *pollers[MAX_POLLERS];
static int n_pollers;
static int n_awake;
static int hook_id = -1;
static bool hook_active;

int MPIDI_NBRMA_run_pollers(int *made_progress)
{
    int mpi_errno = MPI_SUCCESS;

    for (int i = 0; i < n_pollers && mpi_errno == MPI_SUCCESS; i++)
        if (pollers[i]->has_work)
            mpi_errno = pollers[i]->poll(made_progress);
    return mpi_errno;
}

bool MPIDI_NBRMA_progress_own_work(void)
{
    for (int i = 0; i < n_pollers; i++)
        if (pollers[i]->own_work && pollers[i]->has_work)
            return true;
    return false;
}

static int known_poller(MPIDI_NBRMA_poller_t * poller)
{
    int mpi_errno = MPI_SUCCESS;

    for (int i = 0; i < n_pollers; i++)
        if (pollers[i] == poller)
            goto fn_exit;
    MPIR_Assert(n_pollers < MAX_POLLERS);
    pollers[n_pollers++] = poller;
    if (hook_id < 0) {
        mpi_errno = MPIR_Progress_hook_register(MPIDI_NBRMA_run_pollers, &hook_id);
        MPIR_ERR_CHECK(mpi_errno);
    }
  fn_exit:
    return mpi_errno;
  fn_fail:
    goto fn_exit;
}

int MPIDI_NBRMA_poller_wake(MPIDI_NBRMA_poller_t * poller)
{
    int mpi_errno = MPI_SUCCESS;

    if (poller->has_work)
        goto fn_exit;
    mpi_errno = known_poller(poller);
    MPIR_ERR_CHECK(mpi_errno);
    if (!hook_active) {
        mpi_errno = MPIR_Progress_hook_activate(hook_id);
        MPIR_ERR_CHECK(mpi_errno);
        hook_active = true;
    }
    poller->has_work = true;
    n_awake++;
  fn_exit:
    return mpi_errno;
  fn_fail:
    goto fn_exit;
}

int MPIDI_NBRMA_poller_sleep(MPIDI_NBRMA_poller_t * poller)
{
    int mpi_errno = MPI_SUCCESS;

    if (!poller->has_work)
        return MPI_SUCCESS;
    poller->has_work = false;
    if (--n_awake == 0 && hook_active) {
        mpi_errno = MPIR_Progress_hook_deactivate(hook_id);
        hook_active = false;
    }
    return mpi_errno;
}

/* The waiting period of this thread: it begins where a waiting loop of
 * MPICH begins (MPIDI_NBRMA_progress_wait_begins), at an idle round after
 * MPICH completed a request (its progress count moved: the loops that do not
 * say where they begin) or after a pause longer than a waiting loop's
 * rounds; it yields once the period is MPIR_CVAR_NBRMA_YIELD_AFTER_IDLE_US
 * long, and again each as long after. Time, not a count of rounds: an idle
 * round costs 0.05 us over shared memory and 2 us over tcp (an epoll_wait).
 * The clock is read every CLOCK_EVERY rounds, the first time CLOCK_EVERY
 * rounds into a period: a reading costs 22 ns here, nearly half a
 * shared-memory round, and every round it lengthens is latency before the
 * wait sees its event; short waits read no clock. Per thread where the
 * compiler has thread-local storage; shared, it only paces the yields less
 * evenly. */
#define CLOCK_EVERY 8

typedef struct {
    int progress_count;
    unsigned rounds;
    uint64_t since_ns, last_ns; /* since_ns 0: the period starts at the next reading */
} idle_period_t;

#ifdef MPL_TLS
static MPL_TLS idle_period_t idle;
#else
static idle_period_t idle;
#endif

void MPIDI_NBRMA_progress_wait_begins(void)
{
    idle.since_ns = 0;
    idle.rounds = 0;
}

void MPIDI_NBRMA_progress_idle(void)
{
    uint64_t now, limit;
    int count;

    if (MPIR_CVAR_NBRMA_YIELD_AFTER_IDLE_US < 0)
        return;
    count = MPL_atomic_relaxed_load_int(&MPIDI_VCI(0).progress_count);
    if (count != idle.progress_count) {
        idle.progress_count = count;
        MPIDI_NBRMA_progress_wait_begins();
    }
    if (++idle.rounds % CLOCK_EVERY != 0)
        return;
    now = MPIDI_NBRMA_monotonic_ns();
    limit = (uint64_t) MPIR_CVAR_NBRMA_YIELD_AFTER_IDLE_US * 1000u;
    /* a pause: longer than the rounds between two readings take over tcp */
    if (idle.since_ns == 0 || now - idle.last_ns > 2 * limit + 4000u * CLOCK_EVERY) {
        idle.since_ns = now;
    } else if (now - idle.since_ns >= limit) {
        sched_yield();
        now = MPIDI_NBRMA_monotonic_ns();
        idle.since_ns = now;
    }
    idle.last_ns = now;
}

unsigned MPIDI_NBRMA_calls_without_progress;

int MPIDI_NBRMA_progress_wait_round(void)
{
    int mpi_errno = MPID_Progress_test(NULL);

    MPIDI_NBRMA_progress_idle();
    return mpi_errno;
}

int MPIDI_NBRMA_progress_blocking_round(void)
{
    int mpi_errno = MPIDI_NBRMA_progress_wait_round();

    MPID_THREAD_CS_YIELD(GLOBAL, MPIR_THREAD_GLOBAL_ALLFUNC_MUTEX);
    return mpi_errno;
}
