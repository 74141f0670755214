/*
 * mpich-nbrma: the progress hook and its pollers (progress.h).
 */

#include "mpidimpl.h"
#include "ucx_impl.h"
#include "mpidi_nbrma_hooks.h"
#include "nbrma_progress.h"
#include "nbrma_parked_wait.h"

static nbrma_poller_table pollers;
static int hook_id = -1;
static bool hook_active;

/* Progressing polls and request-less completions (MPIDI_NBRMA_progress_moves) */
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

/* This thread's waiting period (os/wait_pacing.h: when it yields and parks):
 * it begins with a waiting loop, at an idle round after MPICH completed a
 * request or UCX handled events in this thread's progress (patch 0042: a
 * target serving peers' emulated puts in MPI_Barrier is not idle), or after a
 * pause. Thread-local where possible (shared, it only paces yields less
 * evenly); initial-exec as the guard's depth, since every round of every
 * waiting loop reads it and the shared-library default model calls
 * __tls_get_addr for each access. */
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

/* `safe_point`: the loop has just yielded MPICH's global section and reads
 * all its state again after the round, so that it may park. */
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

/* Rounds of a drain at most: on shared memory a worker's receive queue holds
 * 64 messages and a round handles 16 (UCX 1.13's UCX_POSIX_FIFO_SIZE and
 * _MAX_POLL), so 8 rounds empty a full one twice; a drain that events keep
 * feeding (a peer streaming toward us, a target over tcp still answering
 * the puts) stops there. */
#define DRAIN_ROUNDS_MAX 8

unsigned MPIDI_NBRMA_worker_progress(int vni)
{
    unsigned events;

    MPID_THREAD_CS_ENTER(VCI, MPIDI_VCI(vni).lock);
    events = ucp_worker_progress(MPIDI_UCX_global.ctx[vni].worker);
    MPID_THREAD_CS_EXIT(VCI, MPIDI_VCI(vni).lock);
    return events;
}

int MPIDI_NBRMA_progress_drain(void)
{
    int mpi_errno = MPID_Progress_test(NULL);

    for (int vni = 0; vni < MPIDI_UCX_global.num_vnis; vni++) {
        int rounds = 0;

        while (MPIDI_NBRMA_worker_progress(vni) && ++rounds < DRAIN_ROUNDS_MAX)
            continue;
    }
    return mpi_errno;
}

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
