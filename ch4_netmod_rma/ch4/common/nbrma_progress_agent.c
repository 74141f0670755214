/*
 * mpich-nbrma: the progress agent (MPIR_CVAR_NBRMA_ASYNC_PROGRESS or MPICH's
 * MPIR_CVAR_ASYNC_PROGRESS; patch 0035; README "Asynchronous progress"; rules
 * P1-P11: core/include/nbrma_agent_pacing.h), asleep on the UCX workers, its
 * doorbell and its wake socket. Woken, it serves if the application is outside
 * MPI (nbrma_agent_guard.c, nbrma_agent_service.c), else sleeps rather than
 * wait (that slowed put + flush) and asks to be rung; it never spins idle.
 */

#include "mpidimpl.h"
#include "ucx_impl.h"
#include "mpidi_nbrma_hooks.h"
#include "nbrma_progress.h"
#include "nbrma_agent_service.h"
#include "nbrma_parked_wait.h"
#include "nbrma_request.h"
#include "mpidi_nbrma_agent_guard.h"
#include "nbrma_agent_pacing.h"
#include "nbrma_trace.h"
#include "doorbell.h"
#include "wake_socket.h"
#include "mailbox.h"
#include "thread_state.h"
#include "thread_sched.h"
#include <inttypes.h>
#include <pthread.h>
#include <sched.h>
#include <unistd.h>

/* Longest sleep while work no event announces is pending (a lock in a peer's
 * busy word, freed by plain stores): cheap, and only while such locks wait. */
#define UNANNOUNCED_LOOK_MS 1

static struct {
    bool running;
    pthread_t thread;
    nbrma_doorbell_t bell;      /* with the workers' descriptors */
    int wake_fd;                /* the wake socket (in the bell's set), or -1 */
    int worker_fd[MPIDI_CH4_MAX_VCIS];  /* watched by armed sleeps; away ones if armed_away */
    MPL_atomic_int_t armed_away;        /* P10: the application armed the workers as it left */
    int app_stat_fd;            /* /proc/self/task/<tid>/stat of the thread that started it */
    MPL_atomic_int_t stop;
    MPL_atomic_int_t windows;   /* MPIDI_NBRMA_agent_windows */
    nbrma_agent_pacing pacing;
    MPIDI_NBRMA_agent_service_t service;        /* what the services report */
    struct {                    /* MPIR_CVAR_NBRMA_ASYNC_PROGRESS_STATS */
        uint64_t sleeps, timer_ends;    /* on the workers' events */
        uint64_t entries, refused;      /* into MPI; refused: the application was inside */
        uint64_t exit_rings;    /* that ended a sleep after a refused entry (P6, P8) */
        uint64_t peer_rings;    /* same-host peers' that ended such a sleep (P10) */
        uint64_t worker_rings;  /* the workers' events that ended one (P10) */
        uint64_t pauses;        /* P3 */
        uint64_t cpu_ns;        /* the agent's CPU time, as it ends */
    } stats;
} agent = {.bell = NBRMA_DOORBELL_CLOSED,.wake_fd = -1,.app_stat_fd = -1 };

unsigned long long MPIDI_NBRMA_ucx_features_hook(void)
{
    return MPIR_CVAR_NBRMA_ASYNC_PROGRESS || MPIR_CVAR_ASYNC_PROGRESS ? UCP_FEATURE_WAKEUP : 0;
}

/* The kernel's smallest time slice (thread_sched.h): with the default, each
 * wake-up a transfer needed beside a computation waited a whole slice. */
#define AGENT_SLICE_NS 100000u     /* 100 us */

/* The thread that started the agent (MPI_Init's): the application computes
 * while it is runnable (unknown counts as computing), and where it last ran. */
static nbrma_thread_view application_thread(void)
{
    return nbrma_thread_state_read(agent.app_stat_fd);
}

bool MPIDI_NBRMA_agent_exit_ring_wanted(int asked)
{
    /* the kept requests unpruned: a load, on every exit while the agent asks */
    if (asked != NBRMA_PACING_RING_ON_RETURN && !MPIDI_NBRMA_progress_own_work() &&
        !MPIDI_NBRMA_requests_kept())
        return false;
    MPL_atomic_relaxed_store_int(&MPIDI_NBRMA_agent_guard.exit_ring_asked, 0);
    return true;
}

/* P10, at the application's exit: arms the workers for the agent's sleep away
 * to wake on once. True (the caller rings) if a worker has events first. */
static bool arm_workers_away(void)
{
    for (int vni = 0; vni < MPIDI_UCX_global.num_vnis; vni++) {
        ucs_status_t status = ucp_worker_arm(MPIDI_UCX_global.ctx[vni].worker);

        if (status == UCS_ERR_BUSY)
            return true;
        /* one that fails leaves its events to the agent's next look */
        if (status == UCS_OK && nbrma_doorbell_enable_once(&agent.bell, agent.worker_fd[vni]) == 0)
            MPL_atomic_relaxed_store_int(&agent.armed_away, 1);
    }
    return false;
}

/* Drops P10's enablings once their sleep away is over: later ones must not
 * wake on them, nor the application's UCX events reach the away set. */
static void forget_workers_away(void)
{
    if (MPL_atomic_swap_int(&agent.armed_away, 0))
        for (int vni = 0; vni < MPIDI_UCX_global.num_vnis; vni++)
            (void) nbrma_doorbell_disable_once(&agent.bell, agent.worker_fd[vni]);
}

bool MPIDI_NBRMA_agent_away_mark(void)
{
    int left = MPL_atomic_relaxed_load_int(&MPIDI_NBRMA_agent_guard.away_mark_asked);
    bool ring;

    /* the agent may take the request back meanwhile: then no more marks */
    if (left <= 0 || MPL_atomic_cas_int(&MPIDI_NBRMA_agent_guard.away_mark_asked, left,
                                        left - 1) != left)
        return false;
    ring = MPIDI_NBRMA_mailboxes_mark_away();
    /* the workers at a look's first asked exit only (arming costs system
     * calls), and only where a peer could need this CPU without its mailbox
     * ringing: armed workers beside the marks slowed puts on shared memory */
    if (left == NBRMA_PACING_AWAY_MARKS &&
        MPIDI_NBRMA_mailboxes_reaching_all() < MPL_atomic_relaxed_load_int(&agent.windows))
        ring = arm_workers_away() || ring;
    return ring;
}

void MPIDI_NBRMA_agent_ring(void)
{
    nbrma_doorbell_ring(&agent.bell);
}

void MPIDI_NBRMA_agent_windows(int change)
{
    /* the first window wakes an agent asleep on its doorbell alone, if started */
    if (MPL_atomic_fetch_add_int(&agent.windows, change) == 0 && change > 0 && agent.running)
        nbrma_doorbell_ring(&agent.bell);
}

void MPIDI_NBRMA_agent_unannounced_work_begins(void)
{
    /* rung, it comes in or asks to be rung at the application's exit (P6) */
    if (agent.running)
        nbrma_doorbell_ring(&agent.bell);
}

/* Whether something could need this CPU (MPIDI_NBRMA_agent_windows). */
static bool cpu_may_be_needed(void)
{
    return MPIR_CVAR_ASYNC_PROGRESS || MPL_atomic_acquire_load_int(&agent.windows) > 0;
}

static void *agent_main(void *arg)
{
    (void) arg;
    MPIDI_NBRMA_agent_guard_mark_agent_thread();
    nbrma_thread_sched_set(MPIR_CVAR_NBRMA_ASYNC_PROGRESS_NICE, AGENT_SLICE_NS);
    /* the guard counts entries and rings below MPI_THREAD_MULTIPLE only */
    nbrma_agent_pacing_init(&agent.pacing,
                            MPIDI_NBRMA_agent_guard.parties.mode != NBRMA_GUARD_OFF);
    while (!MPL_atomic_acquire_load_int(&agent.stop)) {
        bool armed, own_work, unannounced, entered, parked, app_computes;
        unsigned moves;
        uint32_t app_entries;
        int woke;
        uint64_t pause_ns;
        nbrma_thread_view app;

        if (!cpu_may_be_needed()) {
            /* the workers are not armed, or no longer watched */
            if (nbrma_doorbell_wait_bell(&agent.bell, NBRMA_DOORBELL_FOREVER) < 0)
                break;
            continue;
        }
        entered = MPIDI_NBRMA_agent_enter_mpich();
        /* P7; no count at MPI_THREAD_MULTIPLE (guard off): no backing off */
        app_entries = (uint32_t)
            MPL_atomic_relaxed_load_int(&MPIDI_NBRMA_agent_guard.application_entries);
        if (!entered) {
            nbrma_pacing_exit_ring ask;
            bool rung, mark;
            int woken_fd = -1;

            agent.stats.refused++;
            /* the last ring's outcome first (P6, P8: a futile one stops asking) */
            nbrma_agent_pacing_tried_entry(&agent.pacing, false, app_entries,
                                           nbrma_monotonic_ns());
            ask = nbrma_agent_pacing_exit_ring(&agent.pacing);
            if (ask != NBRMA_PACING_RING_NONE)
                MPL_atomic_release_store_int(&MPIDI_NBRMA_agent_guard.exit_ring_asked, (int) ask);
            /* P10: mailbox marks where same-host peers can ring, the workers armed */
            mark = nbrma_agent_pacing_away_mark(&agent.pacing);
            if (mark)
                MPL_atomic_release_store_int(&MPIDI_NBRMA_agent_guard.away_mark_asked,
                                             NBRMA_PACING_AWAY_MARKS);
            /* the doorbell, the wake socket, the workers if the application armed them */
            woke = nbrma_doorbell_wait_away(&agent.bell, nbrma_agent_pacing_away_ns(&agent.pacing),
                                            &woken_fd);
            if (mark)
                MPL_atomic_relaxed_store_int(&MPIDI_NBRMA_agent_guard.away_mark_asked, 0);
            forget_workers_away();
            if (woke == NBRMA_DOORBELL_WOKEN_BY_FD) {
                if (woken_fd == agent.wake_fd) {
                    nbrma_wake_socket_clear(agent.wake_fd);
                    agent.stats.peer_rings++;
                } else
                    agent.stats.worker_rings++;
                nbrma_agent_pacing_peer_rang(&agent.pacing);
            }
            /* the application took the request if it rang */
            rung = ask != NBRMA_PACING_RING_NONE &&
                !MPL_atomic_swap_int(&MPIDI_NBRMA_agent_guard.exit_ring_asked, 0);
            agent.stats.exit_rings += rung;
            nbrma_agent_pacing_slept_away(&agent.pacing, rung);
            if (woke < 0)
                break;
            continue;
        }
        agent.stats.entries++;
        nbrma_agent_pacing_tried_entry(&agent.pacing, true, app_entries, nbrma_monotonic_ns());
        forget_workers_away();
        if (agent.wake_fd >= 0)
            MPIDI_NBRMA_mailboxes_awake();
        /* the application is outside MPI (or parked in a blocking call):
         * small copies toward this process need not wait for the agent */
        MPIDI_NBRMA_mailboxes_agent_serves();
        /* own work: in flight as the round begins (it may complete it) or ends */
        own_work = MPIDI_NBRMA_agent_own_work_in_flight();
        /* P9: UCX events, or a completion a parked wait may wait for */
        moves = MPIDI_NBRMA_progress_moves();
        agent.service.events = false;
        /* P5 as the service begins too: an agent kept to the application's
         * core while it slept must not serve there once it computes there */
        app = application_thread();
        MPIDI_NBRMA_agent_place(nbrma_agent_pacing_placement(&agent.pacing, app.runnable, app.cpu));
        armed = MPL_atomic_acquire_load_int(&agent.stop) ||
            MPIDI_NBRMA_agent_serve(&agent.service, &agent.pacing,
                                    nbrma_agent_pacing_linger(&agent.pacing, app.runnable,
                                                              own_work), app, agent.wake_fd >= 0);
        own_work = MPIDI_NBRMA_agent_own_work_in_flight() || own_work;
        unannounced = MPIDI_NBRMA_progress_unannounced_work();
        /* P6, P8: whether the application tried to come in meanwhile (guard on) */
        nbrma_agent_pacing_served(&agent.pacing, MPIDI_NBRMA_agent_guard_application_waits(),
                                  nbrma_monotonic_ns(), (uint32_t)
                                  MPL_atomic_relaxed_load_int(&MPIDI_NBRMA_agent_guard.
                                                              application_entries));
        MPIDI_NBRMA_agent_leave_mpich();
        parked = nbrma_parking_someone_parked(&MPIDI_NBRMA_parking);
        app = application_thread();
        /* P2, P9: a wait parked or back inside between parks is not computing
         * (else the agent paused for its share, P3, serving that wait's peer) */
        app_computes = app.runnable && !parked && !MPIDI_NBRMA_agent_guard_application_waits();
        if (nbrma_agent_pacing_rings_parked(parked, agent.service.events ||
                                            MPIDI_NBRMA_progress_moves() != moves))
            nbrma_parking_ring_parked(&MPIDI_NBRMA_parking);
        /* armed workers stay armed meanwhile: what arrives wakes it at once after */
        pause_ns = nbrma_agent_pacing_pause_ns(&agent.pacing, nbrma_monotonic_ns(),
                                               nbrma_thread_cpu_ns(), app_computes, own_work,
                                               (unsigned) MPIR_CVAR_NBRMA_ASYNC_PROGRESS_SHARE);
        if (pause_ns > 0) {
            MPIDI_NBRMA_TRACE(NULL, "agent pauses %" PRIu64 " us", pause_ns / 1000);
            agent.stats.pauses++;
            woke = nbrma_doorbell_wait_bell(&agent.bell, pause_ns);
            if (woke < 0)
                break;
            /* from the top if work was left or a ring ended the pause; else
             * the armed sleep, which what came meanwhile ends at once (an entry
             * after each pause mostly served nothing, on the application's CPU) */
            if (woke > 0 || !armed)
                continue;
        }
        if (!armed) {
            sched_yield();      /* the application may want to come in */
            continue;
        }
        /* P5: where the kernel will wake it (workers, a mailbox's sender, stop) */
        MPIDI_NBRMA_agent_place(nbrma_agent_pacing_placement(&agent.pacing, app_computes, app.cpu));
        nbrma_parking_helper_sleeps(&MPIDI_NBRMA_parking, true);
        woke = nbrma_doorbell_wait_all(&agent.bell, agent.worker_fd, MPIDI_UCX_global.num_vnis,
                                       unannounced ? UNANNOUNCED_LOOK_MS :
                                       agent.service.look_again ?
                                       (int) (NBRMA_PACING_AWAY_MIN_NS / 1000000u) : -1);
        nbrma_parking_helper_sleeps(&MPIDI_NBRMA_parking, false);
        if (woke < 0)
            break;
        agent.stats.sleeps++;
        agent.stats.timer_ends += woke == 0;
        nbrma_agent_pacing_slept(&agent.pacing, woke == 0);
        if (agent.wake_fd >= 0)
            nbrma_wake_socket_clear(agent.wake_fd);
    }
    agent.stats.cpu_ns = nbrma_thread_cpu_ns();
    return NULL;
}

static void close_descriptors(void)
{
    nbrma_doorbell_close(&agent.bell);
    nbrma_wake_socket_close(agent.wake_fd);
    agent.wake_fd = -1;
    if (agent.app_stat_fd >= 0)
        close(agent.app_stat_fd);
    agent.app_stat_fd = -1;
}

/* A forked child has the agent's state but not its thread. */
static void forget_agent_in_child(void)
{
    agent.running = false;
    MPIDI_NBRMA_parking_forget();
}

int MPIDI_NBRMA_async_start_hook(void)
{
    int mpi_errno = MPI_SUCCESS;
    static bool atfork_registered;

#ifndef MPICH_IS_THREADED
    /* without thread support MPICH has no critical section for patch 0036 to hook */
    MPIR_ERR_SETANDJUMP(mpi_errno, MPI_ERR_OTHER, "**nbrmaagent");
#endif
    MPIR_ERR_CHKANDJUMP(nbrma_doorbell_open(&agent.bell) != 0, mpi_errno, MPI_ERR_OTHER,
                        "**nbrmaagent");
    /* without it (no /proc) the application counts as computing */
    agent.app_stat_fd = nbrma_thread_state_open_self();
    /* without it (its name taken in another pid namespace) mailboxes wake nobody */
    agent.wake_fd = nbrma_wake_socket_open((uint64_t) getpid());
    if (agent.wake_fd >= 0 && (nbrma_doorbell_watch(&agent.bell, agent.wake_fd) != 0 ||
                               nbrma_doorbell_watch_away(&agent.bell, agent.wake_fd) != 0)) {
        nbrma_wake_socket_close(agent.wake_fd);
        agent.wake_fd = -1;
    }
    for (int vni = 0; vni < MPIDI_UCX_global.num_vnis; vni++) {
        int efd;

        MPIR_ERR_CHKANDJUMP(ucp_worker_get_efd(MPIDI_UCX_global.ctx[vni].worker, &efd) != UCS_OK,
                            mpi_errno, MPI_ERR_OTHER, "**nbrmaagent");
        /* watched by the agent's waits alone (nbrma_doorbell_watch says why) */
        agent.worker_fd[vni] = efd;
    }
    MPL_atomic_relaxed_store_int(&agent.armed_away, 0);
    MPL_atomic_release_store_int(&agent.stop, 0);
    memset(&agent.stats, 0, sizeof(agent.stats));
    agent.service.cpus_taken = 0;
    MPIDI_NBRMA_requests_track(true);
    MPIDI_NBRMA_agent_guard_start(MPIR_ThreadInfo.isThreaded);
    MPIDI_NBRMA_parking_start(&agent.bell);
    MPIR_ERR_CHKANDJUMP(pthread_create(&agent.thread, NULL, agent_main, NULL) != 0, mpi_errno,
                        MPI_ERR_OTHER, "**nbrmaagent");
    /* for ps, top and /proc/<pid>/task/<tid>/comm (test/mpi/agent_idle.c) */
    (void) pthread_setname_np(agent.thread, "nbrma-agent");
    agent.running = true;
    if (!atfork_registered && pthread_atfork(NULL, NULL, forget_agent_in_child) == 0)
        atfork_registered = true;

  fn_exit:
    return mpi_errno;
  fn_fail:
    MPIDI_NBRMA_parking_stop();
    MPIDI_NBRMA_agent_guard_stop();
    MPIDI_NBRMA_requests_track(false);
    close_descriptors();
    goto fn_exit;
}

int MPIDI_NBRMA_async_stop_hook(void)
{
    if (!agent.running)
        return MPI_SUCCESS;
    MPL_atomic_release_store_int(&agent.stop, 1);
    nbrma_doorbell_ring(&agent.bell);
    pthread_join(agent.thread, NULL);
    MPIDI_NBRMA_parking_stop();
    if (MPIR_CVAR_NBRMA_ASYNC_PROGRESS_STATS)
        fprintf(stderr, "nbrma agent of rank %d: %" PRIu64 " sleeps on events (%" PRIu64
                " ended by the timer), %" PRIu64 " entries into MPI, %" PRIu64
                " refused (the application inside; %" PRIu64 " rings as it left, %" PRIu64
                " by peers, %" PRIu64 " by armed workers), %" PRIu64
                " pauses, %" PRIu64 " parked waits (%" PRIu64 " rung), %" PRIu64
                " CPUs found taken, %.3f s CPU\n",
                MPIR_Process.rank, agent.stats.sleeps, agent.stats.timer_ends,
                agent.stats.entries, agent.stats.refused, agent.stats.exit_rings,
                agent.stats.peer_rings, agent.stats.worker_rings,
                agent.stats.pauses, MPIDI_NBRMA_parking.parks, MPIDI_NBRMA_parking.rings,
                agent.service.cpus_taken, agent.stats.cpu_ns / 1e9);
    MPIDI_NBRMA_agent_guard_stop();
    MPIDI_NBRMA_requests_track(false);
    agent.running = false;
    close_descriptors();
    return MPI_SUCCESS;
}
