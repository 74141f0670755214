/*
 * mpich-nbrma: the progress agent (MPIR_CVAR_NBRMA_ASYNC_PROGRESS, or MPICH's
 * MPIR_CVAR_ASYNC_PROGRESS on this build; patch 0035).
 *
 * RMA that needs this process's CPU (UCX over tcp, memory UCX cannot reach,
 * lock grants and other active messages) otherwise waits for its next MPI
 * call. MPICH's remedy, its asynchronous progress thread, spins on the
 * progress engine: a whole core per process. The agent is one thread that
 * sleeps in epoll_wait on the event descriptors of the UCX workers
 * (UCP_FEATURE_WAKEUP: tcp and shared-memory transports signal them once the
 * worker is armed) and on its own eventfd (the doorbell: stop, for now).
 * Woken, it enters MPICH if the application is not inside MPI: at
 * MPI_THREAD_MULTIPLE it tries MPICH's global critical section, which the
 * application holds inside every MPI call; below it, it passes the two-party
 * guard of include/mpidi_nbrma_agent_guard.h (patch 0036), so that a
 * single-threaded program does not pay for the section's mutex in every
 * call. Inside, it runs MPICH's whole progress, the component's pollers
 * included, until the workers are drained and armed again (ucp_worker_arm
 * answers BUSY while events are pending), or until the application wants to
 * come in; then it leaves and sleeps. When the application is inside MPI, it
 * progresses by itself: the agent does not wait for it (that doubled put +
 * flush latency over tcp, 91 against 34 us) and looks again AWAY_MS later,
 * asleep meanwhile on its doorbell alone (the workers are not armed: their
 * descriptors would stay readable). It never spins idle: after a wake-up it
 * goes on progressing for MPIR_CVAR_NBRMA_ASYNC_PROGRESS_LINGER_US (100 us)
 * before it sleeps, so that a stream of operations costs one wake-up per
 * such period rather than one per operation.
 *
 * Where it competes for a busy core, usually with the application's own
 * computation, the kernel shares the core by nice values: the agent runs at
 * MPIR_CVAR_NBRMA_ASYNC_PROGRESS_NICE (10: about a tenth of the core), so a
 * stream of operations cannot take a computation's core from it; on an idle
 * core, or while the application sleeps, it runs at once whatever the value.
 *
 * The component's CVAR leaves the thread level as the application asked;
 * MPICH's raises it to MPI_THREAD_MULTIPLE, as for its own thread.
 *
 * Not yet: arming only while something could need this CPU, a doorbell that
 * same-node peers ring for the component's mailboxes and lock words (plain
 * stores that wake nobody), and wake-ups counted apart (README: asynchronous
 * progress).
 */

#include "mpidimpl.h"
#include "ucx_impl.h"
#include "mpidi_nbrma_hooks.h"
#include "nbrma_progress.h"
#include "mpidi_nbrma_agent_guard.h"
#include "nbrma_static_assert.h"
#include <errno.h>
#include <pthread.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

/* Progress rounds before the agent lets the application in again although the
 * workers are still busy: a stream of events keeps it from arming. */
#define ROUNDS_BEFORE_LETTING_GO 64
/* How long the agent sleeps when the application was inside MPI. */
#define AWAY_MS 1

static struct {
    bool running;
    pthread_t thread;
    int epoll_fd, doorbell_fd;
    int doorbell_epoll_fd;      /* the doorbell alone */
    MPL_atomic_int_t stop;
} agent = {.epoll_fd = -1,.doorbell_fd = -1,.doorbell_epoll_fd = -1 };

static bool agent_wanted(void)
{
    return MPIR_CVAR_NBRMA_ASYNC_PROGRESS || MPIR_CVAR_ASYNC_PROGRESS;
}

unsigned long long MPIDI_NBRMA_ucx_features_hook(void)
{
    return agent_wanted()? UCP_FEATURE_WAKEUP : 0;
}

/* Progresses until every worker is armed (true), or lets go after a bounded
 * number of rounds or when the application waits to come in (false: call
 * again). Inside MPICH (enter_mpich). For MPIR_CVAR_NBRMA_ASYNC_PROGRESS_LINGER_US
 * after `woken` it only progresses: on shared memory a wake-up (the
 * kernel's, membarrier, arming again) costs several microseconds, an
 * operation served a fraction of one, so a target asleep outside MPI served
 * a stream of puts to a `malloc`ed window at 3-6 us each, and at 1.1-1.9
 * when the agent went on for 100 us after each wake-up. Those rounds come
 * before the bounded ones. */
static bool progress_and_arm(uint64_t woken)
{
    uint64_t linger_until = woken + (uint64_t) MPIR_CVAR_NBRMA_ASYNC_PROGRESS_LINGER_US * 1000u;

    while (MPIR_CVAR_NBRMA_ASYNC_PROGRESS_LINGER_US > 0 &&
           !MPIDI_NBRMA_agent_guard_application_waits() &&
           MPIDI_NBRMA_monotonic_ns() < linger_until)
        (void) MPID_Progress_test(NULL);
    for (int round = 0; round < ROUNDS_BEFORE_LETTING_GO &&
         !MPIDI_NBRMA_agent_guard_application_waits(); round++) {
        bool all_armed = true;
        int made_progress = 0;

        (void) MPID_Progress_test(NULL);
        /* MPICH runs the progress hooks, the component's pollers, before
         * UCX's progress: what UCX completed in this round (the endpoint
         * flush that an epoch's closing message waits for) the pollers see
         * only in the next one, and an armed worker would not wake the agent
         * for it, UCX having nothing left to report. Across hosts that kept
         * the closing message of a nonblocking epoch for the application's
         * next MPI call. So the pollers look once more, and whatever they
         * moved gets another round before arming. */
        (void) MPIDI_NBRMA_run_pollers(&made_progress);
        if (made_progress)
            continue;
        for (int vni = 0; vni < MPIDI_UCX_global.num_vnis && all_armed; vni++) {
            ucs_status_t status;

            MPID_THREAD_CS_ENTER(VCI, MPIDI_VCI(vni).lock);
            status = ucp_worker_arm(MPIDI_UCX_global.ctx[vni].worker);
            MPID_THREAD_CS_EXIT(VCI, MPIDI_VCI(vni).lock);
            /* BUSY: events pending, progress again; another error: the
             * worker cannot wake us, and polling it is all we could do */
            all_armed = status != UCS_ERR_BUSY;
        }
        if (all_armed)
            return true;
    }
    return false;
}

/* Clears the doorbell if it rang among the `n` events (an eventfd read
 * empties it at once; a UCX worker's wake-up needs no read: arming again
 * clears it). */
static void ring_off(const struct epoll_event *events, int n)
{
    uint64_t rings;

    for (int i = 0; i < n; i++)
        if (events[i].data.fd == agent.doorbell_fd) {
            (void) !read(agent.doorbell_fd, &rings, sizeof(rings));
            return;
        }
}

/* MPICH's global critical section if no one holds it (MPID_THREAD_CS_ENTER
 * waits for it); left with MPID_THREAD_CS_EXIT. */
static bool try_enter_global(void)
{
    MPIDU_Thread_mutex_t *m = &MPIR_THREAD_GLOBAL_ALLFUNC_MUTEX;

    if (pthread_mutex_trylock(&m->mutex) != 0)
        return false;
    MPL_thread_self(&m->owner);
    m->count++;
    return true;
}

/* The agent's way into MPICH while the application is outside MPI: MPICH's
 * section at MPI_THREAD_MULTIPLE, the guard below it. */
static bool enter_mpich(void)
{
    return MPIR_ThreadInfo.isThreaded ? try_enter_global() : MPIDI_NBRMA_agent_guard_try_enter();
}

static void leave_mpich(void)
{
    if (MPIR_ThreadInfo.isThreaded)
        MPID_THREAD_CS_EXIT(GLOBAL, MPIR_THREAD_GLOBAL_ALLFUNC_MUTEX);
    else
        MPIDI_NBRMA_agent_guard_leave();
}

/* The agent's share of a core it competes for (MPIR_CVAR_NBRMA_ASYNC_PROGRESS_NICE).
 * A value the process may not take (raising priority without the privilege)
 * leaves the thread at the process's own: the agent still serves. */
static void set_agent_nice(void)
{
    (void) setpriority(PRIO_PROCESS, (id_t) syscall(SYS_gettid),
                       MPIR_CVAR_NBRMA_ASYNC_PROGRESS_NICE);
}

static void *agent_main(void *arg)
{
    uint64_t woken = MPIDI_NBRMA_monotonic_ns();

    (void) arg;
    MPIDI_NBRMA_agent_guard_mark_agent_thread();
    set_agent_nice();
    while (!MPL_atomic_acquire_load_int(&agent.stop)) {
        struct epoll_event events[4];
        bool armed;
        int n;

        if (!enter_mpich()) {
            n = epoll_wait(agent.doorbell_epoll_fd, events, 1, AWAY_MS);
            if (n < 0 && errno != EINTR)
                break;
            ring_off(events, n);
            continue;
        }
        armed = MPL_atomic_acquire_load_int(&agent.stop) || progress_and_arm(woken);
        leave_mpich();
        if (!armed) {
            sched_yield();      /* the application may want to come in */
            continue;
        }
        n = epoll_wait(agent.epoll_fd, events, 4, -1);
        if (n < 0 && errno != EINTR)
            break;
        ring_off(events, n);
        woken = MPIDI_NBRMA_monotonic_ns();
    }
    return NULL;
}

static void close_descriptors(void)
{
    int *fds[] = { &agent.epoll_fd, &agent.doorbell_epoll_fd, &agent.doorbell_fd };

    for (int i = 0; i < 3; i++) {
        if (*fds[i] >= 0)
            close(*fds[i]);
        *fds[i] = -1;
    }
}

/* A forked child has the agent's state but not its thread. */
static void forget_agent_in_child(void)
{
    agent.running = false;
}

int MPIDI_NBRMA_async_start_hook(void)
{
    int mpi_errno = MPI_SUCCESS;
    struct epoll_event ev = {.events = EPOLLIN };
    static bool atfork_registered;

#ifndef MPICH_IS_THREADED
    /* without thread support MPICH has no critical section for patch 0036 to hook */
    MPIR_ERR_SETANDJUMP(mpi_errno, MPI_ERR_OTHER, "**nbrmaagent");
#endif
    /* MPICH's global section must be a plain POSIX mutex for try_enter_global */
    NBRMA_STATIC_ASSERT(sizeof(MPL_thread_mutex_t) == sizeof(pthread_mutex_t),
                        "MPICH's mutex is not a pthread mutex");
    agent.epoll_fd = epoll_create1(EPOLL_CLOEXEC);
    agent.doorbell_epoll_fd = epoll_create1(EPOLL_CLOEXEC);
    agent.doorbell_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    MPIR_ERR_CHKANDJUMP(agent.epoll_fd < 0 || agent.doorbell_epoll_fd < 0 ||
                        agent.doorbell_fd < 0, mpi_errno, MPI_ERR_OTHER, "**nbrmaagent");
    ev.data.fd = agent.doorbell_fd;
    MPIR_ERR_CHKANDJUMP(epoll_ctl(agent.epoll_fd, EPOLL_CTL_ADD, agent.doorbell_fd, &ev) != 0 ||
                        epoll_ctl(agent.doorbell_epoll_fd, EPOLL_CTL_ADD, agent.doorbell_fd,
                                  &ev) != 0, mpi_errno, MPI_ERR_OTHER, "**nbrmaagent");
    for (int vni = 0; vni < MPIDI_UCX_global.num_vnis; vni++) {
        int efd;

        MPIR_ERR_CHKANDJUMP(ucp_worker_get_efd(MPIDI_UCX_global.ctx[vni].worker, &efd) != UCS_OK,
                            mpi_errno, MPI_ERR_OTHER, "**nbrmaagent");
        ev.data.fd = efd;
        MPIR_ERR_CHKANDJUMP(epoll_ctl(agent.epoll_fd, EPOLL_CTL_ADD, efd, &ev) != 0,
                            mpi_errno, MPI_ERR_OTHER, "**nbrmaagent");
    }
    MPL_atomic_release_store_int(&agent.stop, 0);
    MPIDI_NBRMA_agent_guard_start(MPIR_ThreadInfo.isThreaded);
    MPIR_ERR_CHKANDJUMP(pthread_create(&agent.thread, NULL, agent_main, NULL) != 0, mpi_errno,
                        MPI_ERR_OTHER, "**nbrmaagent");
    agent.running = true;
    if (!atfork_registered && pthread_atfork(NULL, NULL, forget_agent_in_child) == 0)
        atfork_registered = true;

  fn_exit:
    return mpi_errno;
  fn_fail:
    MPIDI_NBRMA_agent_guard_stop();
    close_descriptors();
    goto fn_exit;
}

int MPIDI_NBRMA_async_stop_hook(void)
{
    uint64_t ring = 1;

    if (!agent.running)
        return MPI_SUCCESS;
    MPL_atomic_release_store_int(&agent.stop, 1);
    (void) !write(agent.doorbell_fd, &ring, sizeof(ring));
    pthread_join(agent.thread, NULL);
    MPIDI_NBRMA_agent_guard_stop();
    agent.running = false;
    close_descriptors();
    return MPI_SUCCESS;
}
