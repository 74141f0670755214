/*
 * mpich-nbrma: the progress agent (MPIR_CVAR_NBRMA_ASYNC_PROGRESS, or MPICH's
 * MPIR_CVAR_ASYNC_PROGRESS on this build; patch 0035). The README's
 * "Asynchronous progress" section says what it does and why, with its
 * measurements; the pacing rules P1-P11 are core/include/nbrma_agent_pacing.h.
 *
 * This file is the thread and its sleep: one thread per process asleep in
 * epoll_wait on the UCX workers' event descriptors (UCP_FEATURE_WAKEUP), on
 * its doorbell (an eventfd: MPI_Finalize's stop, the first window, the
 * application's rings) and on its wake socket (os/wake_socket.h), which
 * same-host peers write after leaving a message in a mailbox the agent
 * marked before it slept. Woken, it enters MPICH only if the application is
 * outside MPI (nbrma_agent_service.c: MPICH's global critical section at
 * MPI_THREAD_MULTIPLE, below it the guard of
 * include/mpidi_nbrma_agent_guard.h, patch 0036) and progresses until the
 * workers are drained and armed again. With the application inside MPI it
 * does not wait for it (that doubled put + flush latency over tcp, 91
 * against 34 us) but sleeps and looks again later (P7, P8), asking to be
 * rung as the application leaves (P6, P10). It never spins idle, and it
 * arms only while this process has a window (with MPICH's CVAR, always).
 * Also here: the application-side calls that ring or mark for it
 * (exit ring, away marks, windows, work no event announces) and its
 * counts, printed at MPI_Finalize (MPIR_CVAR_NBRMA_ASYNC_PROGRESS_STATS).
 * What needs neither MPICH nor UCX is in ../../os/ with unit tests
 * (doorbell.c, thread_state.c, thread_sched.c).
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

/* How long it sleeps at most while work no event announces is pending (a
 * lock it asks for in a peer's busy word, freed by plain stores): 1000
 * wake-ups a second, about 2% of a core (test/mpi/agent_ilock_waits.c),
 * only while such a lock waits. */
#define UNANNOUNCED_LOOK_MS 1

static struct {
    bool running;
    pthread_t thread;
    nbrma_doorbell_t bell;      /* with the workers' descriptors */
    int wake_fd;                /* the wake socket (in the bell's set), or -1 */
    int worker_fd[MPIDI_CH4_MAX_VCIS];  /* the workers' descriptors: watched by its armed
                                         * sleeps, and away once the application armed them */
    MPL_atomic_int_t armed_away;        /* P10: the application armed the workers as it left:
                                         * their descriptors wake the sleep away */
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

/* The agent's time slice (thread_sched.h), the kernel's smallest: with the
 * default one each wake-up an epoch's transfer needed beside a computation
 * (an acknowledgement, room in the socket) waited up to 5 ms. */
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

/* P10, at the application's exit: arms the workers, which it left unarmed
 * while it progressed them itself, and has the agent's sleep away wake on
 * their descriptors once. True (the caller rings the agent) when a worker
 * has events to progress first. */
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

/* P10's enablings, once the sleep away they were for ended (woken by them
 * or not) or an application that armed late is inside again: the next
 * sleep away, with the application inside, must not wake on them, and the
 * application's own progress must not walk up to the away set at each UCX
 * event (nbrma_doorbell_watch). */
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
    /* the workers at the first asked exit of a look only (arming costs
     * system calls), and only where a peer's operation could need this CPU
     * without its mailbox ringing: on one node the marks do, and armed
     * workers beside them slowed a stream of puts on shared memory (3 of 6
     * runs 1.2-1.4 against 0.77 us per operation: asleep_target
     * create_malloc) */
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
    /* the first window wakes an agent that sleeps on its doorbell alone;
     * before the agent starts (MPI_Init) the doorbell is closed: no ring */
    if (MPL_atomic_fetch_add_int(&agent.windows, change) == 0 && change > 0 && agent.running)
        nbrma_doorbell_ring(&agent.bell);
}

void MPIDI_NBRMA_agent_unannounced_work_begins(void)
{
    /* rung, it comes in, or, finding the application inside, asks to be
     * rung as it leaves with work of its own in flight (P6) */
    if (agent.running)
        nbrma_doorbell_ring(&agent.bell);
}

/* Whether something could need this process's CPU (the file's header). */
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
        /* P7: how often the application came in so far (no count at
         * MPI_THREAD_MULTIPLE, where the guard is off: no backing off) */
        app_entries = (uint32_t)
            MPL_atomic_relaxed_load_int(&MPIDI_NBRMA_agent_guard.application_entries);
        if (!entered) {
            nbrma_pacing_exit_ring ask;
            bool rung, mark;
            int woken_fd = -1;

            agent.stats.refused++;
            /* first the outcome of the last ring (P6, P8: a futile one stops the
             * asking), then whether to ask */
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
            /* the doorbell, the wake socket and the workers once the
             * application armed them (nbrma_doorbell_wait_away) */
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
        /* the round served the application's own work if some was in flight
         * as it began (the round may complete it) or is as it ends */
        own_work = MPIDI_NBRMA_agent_own_work_in_flight();
        /* P9: whether the service serves something a parked wait may wait for:
         * UCX events, or a completion (a poller's progress counts there) */
        moves = MPIDI_NBRMA_progress_moves();
        agent.service.events = false;
        /* P5 as the service begins too: an agent kept to the application's
         * core while it slept must not serve there once the application
         * computes on it */
        app = application_thread();
        MPIDI_NBRMA_agent_place(nbrma_agent_pacing_placement(&agent.pacing, app.runnable, app.cpu));
        armed = MPL_atomic_acquire_load_int(&agent.stop) ||
            MPIDI_NBRMA_agent_serve(&agent.service, &agent.pacing,
                                    nbrma_agent_pacing_linger(&agent.pacing, app.runnable,
                                                              own_work), app, agent.wake_fd >= 0);
        own_work = MPIDI_NBRMA_agent_own_work_in_flight() || own_work;
        unannounced = MPIDI_NBRMA_progress_unannounced_work();
        /* P6, P8: the application, which waits for the agent to leave from
         * its first try on, came in meanwhile (below MPI_THREAD_MULTIPLE) */
        nbrma_agent_pacing_served(&agent.pacing, MPIDI_NBRMA_agent_guard_application_waits(),
                                  nbrma_monotonic_ns(), (uint32_t)
                                  MPL_atomic_relaxed_load_int(&MPIDI_NBRMA_agent_guard.
                                                              application_entries));
        MPIDI_NBRMA_agent_leave_mpich();
        parked = nbrma_parking_someone_parked(&MPIDI_NBRMA_parking);
        app = application_thread();
        /* P2, P9: the application computes only while its thread runs
         * outside MPI: a parked wait, or one back inside MPI for a look
         * between two parks (below MPI_THREAD_MULTIPLE the guard says so),
         * waits. Counted as computing, a wait that parks every few
         * milliseconds made the agent pause for its share (P3) while it
         * served that wait's peer (114 pauses in an OSU put latency run
         * over tcp). */
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
            /* from the top where the service left work or a ring (the
             * stop's) ended the pause; else to the armed sleep, which what
             * came during the pause ends at once: an entry after each pause
             * served nothing most of the time, on the application's CPU
             * (the LU kernel's nonblocking series, 2 ranks bound on 2 cores:
             * 600 of its 1,000 entries) */
            if (woke > 0 || !armed)
                continue;
        }
        if (!armed) {
            sched_yield();      /* the application may want to come in */
            continue;
        }
        /* where the kernel will wake it (P5), then the workers, a mailbox's
         * sender or MPI_Finalize's stop */
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
    /* without it (a pid another process of the host already named its
     * socket after, in another pid namespace) mailboxes wake nobody, as
     * without the agent */
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
