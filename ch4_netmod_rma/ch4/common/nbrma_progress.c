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

static int run_pollers(int *made_progress)
{
    int mpi_errno = MPI_SUCCESS;

    for (int i = 0; i < n_pollers && mpi_errno == MPI_SUCCESS; i++)
        if (pollers[i]->has_work)
            mpi_errno = pollers[i]->poll(made_progress);
    return mpi_errno;
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
        mpi_errno = MPIR_Progress_hook_register(run_pollers, &hook_id);
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

/* Per thread where the compiler has thread-local storage; a shared counter
 * would only pace the yields less evenly. */
#ifdef MPL_TLS
static MPL_TLS int idle_rounds;
#else
static int idle_rounds;
#endif

void MPIDI_NBRMA_progress_idle(void)
{
    if (MPIR_CVAR_NBRMA_POLLS_BEFORE_YIELD <= 0)
        return;
    if (++idle_rounds >= MPIR_CVAR_NBRMA_POLLS_BEFORE_YIELD) {
        idle_rounds = 0;
        sched_yield();
    }
}

int MPIDI_NBRMA_progress_wait_round(void)
{
    int mpi_errno = MPID_Progress_test(NULL);

    MPIDI_NBRMA_progress_idle();
    return mpi_errno;
}
