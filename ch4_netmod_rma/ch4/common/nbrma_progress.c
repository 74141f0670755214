/*
 * mpich-nbrma: the one progress hook of the component and the pollers it runs
 * (progress.h). Registered at the first wake-up, active only while a poller
 * has work.
 */

#include "mpidimpl.h"
#include "mpidi_nbrma_hooks.h"
#include "nbrma_progress.h"

static nbrma_poller_table pollers;
static int hook_id = -1;
static bool hook_active;

int MPIDI_NBRMA_run_pollers(int *made_progress)
{
    return nbrma_pollers_run(&pollers, made_progress);
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

/* The waiting period of this thread (os/wait_pacing.h says how it yields):
 * it begins where a waiting loop of MPICH begins
 * (MPIDI_NBRMA_progress_wait_begins), at an idle round after MPICH completed
 * a request (its progress count moved) or after a pause; it yields every
 * MPIR_CVAR_NBRMA_YIELD_AFTER_IDLE_US. Per thread where the compiler has
 * thread-local storage; shared, it only paces the yields less evenly. */
#ifdef MPL_TLS
static MPL_TLS nbrma_idle_period idle;
#else
static nbrma_idle_period idle;
#endif

void MPIDI_NBRMA_progress_wait_begins(void)
{
    nbrma_idle_period_restart(&idle);
}

void MPIDI_NBRMA_progress_idle(void)
{
    if (MPIR_CVAR_NBRMA_YIELD_AFTER_IDLE_US < 0)
        return;
    nbrma_idle_round(&idle, MPL_atomic_relaxed_load_int(&MPIDI_VCI(0).progress_count),
                     (uint64_t) MPIR_CVAR_NBRMA_YIELD_AFTER_IDLE_US * 1000u);
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
