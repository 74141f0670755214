/*
 * mpich-nbrma: the one progress hook of the component and the pollers it runs
 * (progress.h). Registered at the first wake-up, active only while a poller
 * has work.
 */

#include "mpidimpl.h"
#include "mpidi_nbrma_hooks.h"
#include "nbrma_progress.h"
#include "nbrma_parked_wait.h"

static nbrma_poller_table pollers;
static int hook_id = -1;
static bool hook_active;

/* Polls that made progress and completions without a request
 * (MPIDI_NBRMA_progress_moves) */
static unsigned moved;

int MPIDI_NBRMA_run_pollers(int *made_progress)
{
    int mpi_errno = nbrma_pollers_run(&pollers, made_progress);

    moved += *made_progress != 0;
    return mpi_errno;
}

void MPIDI_NBRMA_progress_moved(void)
{
    moved++;
}

unsigned MPIDI_NBRMA_progress_moves(void)
{
    return moved + (unsigned) MPL_atomic_relaxed_load_int(&MPIDI_VCI(0).progress_count);
}

bool MPIDI_NBRMA_progress_own_work(void)
{
    return nbrma_pollers_own_work(&pollers);
}

bool MPIDI_NBRMA_progress_unannounced_work(void)
{
    return nbrma_pollers_unannounced_work(&pollers);
}

int MPIDI_NBRMA_poller_wake(MPIDI_NBRMA_poller_t * poller)
{
    int mpi_errno = MPI_SUCCESS;
    bool listed;

    if (poller->has_work)
        goto fn_exit;
    listed = nbrma_pollers_list(&pollers, poller);
    MPIR_Assert(listed);
    if (hook_id < 0) {
        mpi_errno = MPIR_Progress_hook_register(MPIDI_NBRMA_run_pollers, &hook_id);
        MPIR_ERR_CHECK(mpi_errno);
    }
    if (!hook_active) {
        mpi_errno = MPIR_Progress_hook_activate(hook_id);
        MPIR_ERR_CHECK(mpi_errno);
        hook_active = true;
    }
    nbrma_pollers_wake(&pollers, poller);
  fn_exit:
    return mpi_errno;
  fn_fail:
    goto fn_exit;
}

int MPIDI_NBRMA_poller_sleep(MPIDI_NBRMA_poller_t * poller)
{
    int mpi_errno = MPI_SUCCESS;

    if (nbrma_pollers_sleep(&pollers, poller) && hook_active) {
        mpi_errno = MPIR_Progress_hook_deactivate(hook_id);
        hook_active = false;
    }
    return mpi_errno;
}

/* The waiting period of this thread (os/wait_pacing.h says how it yields
 * and when it parks): it begins where a waiting loop of MPICH begins
 * (MPIDI_NBRMA_progress_wait_begins), at an idle round after MPICH completed
 * a request (its progress count moved) or UCX handled events in this
 * thread's progress (patch 0042: a target that serves a stream of peers'
 * emulated puts in MPI_Barrier is not idle; counted as idle, it parked
 * after 2 ms and each later put waited for the agent's wake-up, OSU 7.4
 * put latency over tcp 1.2x with the agent on), or after a pause; it
 * yields every MPIR_CVAR_NBRMA_YIELD_AFTER_IDLE_US, and at a safe point of
 * a wait that has lasted MPIR_CVAR_NBRMA_PARK_AFTER_US while the progress
 * agent runs it parks (nbrma_parked_wait.h). Per thread where the compiler has
 * thread-local storage; shared, it only paces the yields less evenly. In the
 * initial-exec model, as the agent guard's depth: every round of every
 * waiting loop reads them, and the default model of a shared library asks
 * __tls_get_addr for each access (perf: 3% of a window creation's time). */
#ifdef MPL_TLS
static MPL_TLS nbrma_idle_period idle __attribute__ ((tls_model("initial-exec")));
static MPL_TLS unsigned ucx_events __attribute__ ((tls_model("initial-exec")));
#else
static nbrma_idle_period idle;
static unsigned ucx_events;
#endif

void MPIDI_NBRMA_ucx_events_handled(unsigned events)
{
    ucx_events += events;
}

void MPIDI_NBRMA_progress_wait_begins(void)
{
    nbrma_idle_period_restart(&idle);
}

uint64_t MPIDI_NBRMA_yield_after_idle_ns(void)
{
    return MPIR_CVAR_NBRMA_YIELD_AFTER_IDLE_US < 0 ? NBRMA_IDLE_NEVER_NS :
        (uint64_t) MPIR_CVAR_NBRMA_YIELD_AFTER_IDLE_US * 1000u;
}

/* An idle round; `safe_point`: the loop has just yielded MPICH's global
 * critical section and reads every state it depends on again after the
 * round, so that it may park. */
static void idle_round(bool safe_point)
{
    uint64_t park_ns = safe_point ? MPIDI_NBRMA_park_after_ns : 0;
    uint64_t yield_ns = MPIDI_NBRMA_yield_after_idle_ns();

    if (park_ns == 0 && MPIR_CVAR_NBRMA_YIELD_AFTER_IDLE_US < 0)
        return;
    if (!nbrma_idle_round(&idle, MPL_atomic_relaxed_load_int(&MPIDI_VCI(0).progress_count) +
                          (int) ucx_events, yield_ns, park_ns))
        return;
    MPIDI_NBRMA_park();
    nbrma_idle_period_yielded(&idle, nbrma_monotonic_ns());
}

void MPIDI_NBRMA_progress_idle(void)
{
    idle_round(true);
}

void MPIDI_NBRMA_progress_polled(int done)
{
    if (done)
        nbrma_idle_period_restart(&idle);
    else
        idle_round(false);
}

unsigned MPIDI_NBRMA_calls_without_progress;

int MPIDI_NBRMA_progress_wait_round(void)
{
    int mpi_errno = MPID_Progress_test(NULL);

    idle_round(false);
    return mpi_errno;
}

int MPIDI_NBRMA_progress_blocking_round(void)
{
    int mpi_errno = MPID_Progress_test(NULL);

    MPID_THREAD_CS_YIELD(GLOBAL, MPIR_THREAD_GLOBAL_ALLFUNC_MUTEX);
    idle_round(true);
    return mpi_errno;
}
