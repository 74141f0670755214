/*
 * mpich-nbrma: the progress agent's service (nbrma_agent_service.h): progress,
 * the linger (P4, P5), then the workers armed and the mailboxes marked.
 */

#include "mpidimpl.h"
#include "ucx_impl.h"
#include "mpidi_nbrma_hooks.h"
#include "mpidi_nbrma_agent_guard.h"
#include "nbrma_agent_service.h"
#include "nbrma_progress.h"
#include "nbrma_request.h"
#include "mailbox.h"
#include "thread_sched.h"
#include <sched.h>

/* Progress rounds before the agent lets the application in again although the
 * workers are still busy: a stream of events keeps it from arming. */
#define ROUNDS_BEFORE_LETTING_GO 64

/* One round; whether it served anything: the workers' events (MPICH's
 * progress does not count them; noted in s->events) or the pollers'. */
static bool serve_round(MPIDI_NBRMA_agent_service_t * s)
{
    unsigned events = 0;
    int made_progress = 0;

    for (int vni = 0; vni < MPIDI_UCX_global.num_vnis; vni++)
        events += MPIDI_NBRMA_worker_progress(vni);
    (void) MPID_Progress_test(NULL);
    (void) MPIDI_NBRMA_run_pollers(&made_progress);
    s->events |= events > 0;
    return events > 0 || made_progress;
}

bool MPIDI_NBRMA_agent_own_work_in_flight(void)
{
    return MPIDI_NBRMA_progress_own_work() || MPIDI_NBRMA_requests_outstanding();
}

/* Bound of one lingering spin although operations keep coming: the pacing
 * is then asked again (the application may compute by then). */
#define LINGER_TOTAL_NS NBRMA_PACING_WINDOW_NS

void MPIDI_NBRMA_agent_place(nbrma_agent_placement at)
{
    if (at.off)
        (void) nbrma_thread_sched_keep_off(at.cpu);
    else
        (void) nbrma_thread_sched_keep_on(at.cpu);
}

/* P4's linger, as `how` says: serves until nothing came for
 * MPIR_CVAR_NBRMA_ASYNC_PROGRESS_LINGER_US, never while the application waits
 * to come in. On shared memory a wake-up costs more than serving an
 * operation: a stream toward a process outside MPI then costs one wake-up,
 * not one per operation. Idle rounds yield as the waiting loops do, so that a
 * thread sharing the CPU runs; long yields move the agent off it (P5). */
static void linger(MPIDI_NBRMA_agent_service_t * s, nbrma_agent_pacing * pacing,
                   nbrma_linger how, nbrma_thread_view app)
{
    uint64_t yield_ns = MPIDI_NBRMA_yield_after_idle_ns();
    nbrma_bounded_spin spin;
    nbrma_idle_period idle = { 0 };
    unsigned served = 0;

    nbrma_bounded_spin_begin(&spin, (uint64_t) MPIR_CVAR_NBRMA_ASYNC_PROGRESS_LINGER_US * 1000u,
                             LINGER_TOTAL_NS);
    while (!MPIDI_NBRMA_agent_guard_application_waits()) {
        bool events = serve_round(s);
        int cpu;
        uint64_t took_ns;

        if (!nbrma_bounded_spin_goes_on(&spin, events) ||
            (how == NBRMA_LINGER_WHILE_OWN_WORK && !MPIDI_NBRMA_agent_own_work_in_flight()))
            break;
        served += events;
        if (nbrma_idle_round_read(&idle, (int) served, yield_ns, 0) != NBRMA_IDLE_READ_YIELD)
            continue;
        cpu = sched_getcpu();
        took_ns = nbrma_idle_period_yield(&idle);
        if (nbrma_agent_pacing_yielded(pacing, cpu, took_ns)) {
            s->cpus_taken++;
            MPIDI_NBRMA_agent_place(nbrma_agent_pacing_placement(pacing, app.runnable, app.cpu));
        }
    }
}

bool MPIDI_NBRMA_agent_serve(MPIDI_NBRMA_agent_service_t * s, nbrma_agent_pacing * pacing,
                             nbrma_linger how, nbrma_thread_view app, bool mailboxes_wake)
{
    if (how != NBRMA_LINGER_NONE && MPIR_CVAR_NBRMA_ASYNC_PROGRESS_LINGER_US > 0)
        linger(s, pacing, how, app);
    for (int round = 0; round < ROUNDS_BEFORE_LETTING_GO &&
         !MPIDI_NBRMA_agent_guard_application_waits(); round++) {
        bool all_armed = true;
        int made_progress = 0;
        nbrma_pacing_mark mark;

        (void) MPID_Progress_test(NULL);
        /* MPICH runs the pollers before UCX's progress: what UCX completed
         * this round (an endpoint flush an epoch's closing message waits for)
         * they see only next round, and an armed worker would not wake the
         * agent for it. So they look once more before arming. */
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
        if (!all_armed)
            continue;
        s->look_again = false;
        if (!mailboxes_wake)
            return true;
        /* the mailboxes last (P11): what came meanwhile is read first, and what
         * a same-host peer released before seeing the mark (a lock word this
         * process waits for) is tried again before the agent sleeps */
        mark = nbrma_agent_pacing_sleep_mark(pacing, MPIDI_NBRMA_agent_own_work_in_flight(),
                                             (uint32_t) MPL_atomic_relaxed_load_int
                                             (&MPIDI_NBRMA_agent_guard.application_entries),
                                             nbrma_monotonic_ns());
        s->look_again = mark == NBRMA_PACING_MARK_PEERS_WHILE_POLLING;
        if (MPIDI_NBRMA_mailboxes_sleep(mark == NBRMA_PACING_MARK_ALL,
                                        mark == NBRMA_PACING_MARK_PEERS_UNTIL_OWN_WORK)) {
            (void) MPIDI_NBRMA_run_pollers(&made_progress);
            if (!made_progress)
                return true;
        }
        MPIDI_NBRMA_mailboxes_awake();
    }
    return false;
}
