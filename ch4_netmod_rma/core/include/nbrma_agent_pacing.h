/*
 * mpich-nbrma core: how long the progress agent leaves the UCX workers alone
 * after a round of service (MPIR_CVAR_NBRMA_ASYNC_PROGRESS_SHARE).
 *
 * The agent runs at the process's own priority, so that the work the
 * application started itself (operations in flight, nonblocking epochs whose
 * data this process must still push) moves at once while the application
 * computes outside MPI. The kernel's nice value cannot make that difference:
 * a thread at a lower priority is slow for every kind of work, and an
 * unprivileged thread may not raise its priority again. What it limits is the
 * service that only peers want (their operations into this process's memory,
 * their lock requests): it may take at most `share` percent of the time of an
 * application that computes. The rules, applied after each round of service
 * to the period since the previous round:
 *
 *   P1  the application had work of its own in flight in the round
 *       (own_work): no pause, and the agent's CPU time is not charged (the
 *       period's time earns as under P3);
 *   P2  the application does not compute (its thread is not runnable:
 *       asleep, or waiting in another library): the agent takes nothing from
 *       a computation: no pause, and a debt is forgiven;
 *   P3  otherwise the budget grows by share x the period's wall time and
 *       shrinks by the agent's CPU time, never above share x
 *       NBRMA_PACING_WINDOW_NS; while it is negative the agent pauses for the
 *       time that earns it back, at most NBRMA_PACING_WINDOW_NS at a time
 *       (then it asks again: P1 and P2 may hold by then).
 *
 * Whether the application computes is its thread's state when asked (the
 * CPU time it got cannot tell: on a shared core, the more the agent serves,
 * the less the computation gets). A share of 100 or more never pauses.
 *
 *   P4  the agent lingers before it sleeps (progress without sleeping while
 *       operations come, until none came for
 *       MPIR_CVAR_NBRMA_ASYNC_PROGRESS_LINGER_US) only where that takes
 *       nothing from a computation: while the application does not
 *       compute; beside a computation, only while the application's own
 *       work is in flight, and no longer once it is not. Beside a
 *       computation a peer's stream is served one wake-up at a time:
 *       lingering cost 100 us of the share per wake-up for the one or two
 *       operations a round trip over tcp brings meanwhile. And the agent
 *       that served the completion of its application's put, then lingered
 *       on the application's CPU, kept that application (runnable, between
 *       two calls) off its CPU for the linger's 100 us (lock / put / unlock
 *       toward a `malloc`ed window: 2-31 us per operation in 5 runs of 6,
 *       the origin's agent lingering 60 times). Nor after a sleep that its
 *       timer ended (nothing came; the agent looks now and then for work no
 *       event announces, a lock in a peer's busy word): lingering would spin
 *       100 us of each such look.
 *
 *   P5  while the application does not compute, the agent keeps to the CPU
 *       the application's thread last ran on; while it computes (or where
 *       that CPU is unknown), it runs wherever its mask allows. A sender's
 *       socket, which wakes the agent (UCX's shared-memory signal, a
 *       mailbox's ring), has the kernel wake it on the sender's core: a
 *       peer that spins for its operation's completion then took turns
 *       with the agent on one core, 20-130 us a turn, while the
 *       application's core stood idle (put + flush toward a `malloc`ed
 *       window, unbound ranks: 6-14 us per operation in about half of the
 *       runs, 0.9-2.0 with ranks bound to cores). But where ranks are not
 *       bound, the CPU the application fell asleep on may be that sender's
 *       too: kept to it, the agent lingered 100 us after each operation
 *       while the sender, on the same CPU, could not send the next (lock /
 *       put / unlock toward a `malloc`ed window, target asleep: 5.5-12.7 us
 *       per operation in 3 runs of 6), and the kernel took 17-62 ms here to
 *       move one of two threads that spin on one CPU to an idle one. So
 *       the lingering agent yields when idle (P4), and
 *       NBRMA_PACING_LONG_YIELDS_TAKEN yields in a row on one CPU that
 *       lasted NBRMA_PACING_YIELD_TAKEN_NS or more (another thread ran
 *       there meanwhile) say that another thread runs on that CPU: while
 *       the application does not compute there, the agent keeps off it
 *       rather than to it, until it finds another CPU taken. One long
 *       yield is not enough: a peer's agent that its wake-up brings to
 *       this CPU for a moment (the kernel wakes a thread on its waker's
 *       CPU) made the agent leave for the sender's. While the application
 *       computes the agent runs anywhere, as without a CPU found taken:
 *       kept off the one it last found so (a peer's, spinning for its
 *       operations), on two cores it would have only the computation's
 *       left (a computation under a peer's put + flush stream over tcp,
 *       5 alternating runs: 1.00-1.08x as long either way, this machine's
 *       noise).

 *   P6  an agent that finds the application inside MPI asks to be rung
 *       when the application leaves it with work of its own in flight
 *       (the application's side checks that as it leaves, a few loads),
 *       instead of only looking again a period later: a nonblocking
 *       epoch's data then moves as soon as the application starts to
 *       compute, not up to that period later. A ring that found the
 *       application back inside MPI (it polls with MPI_Test, say) was
 *       futile: the agent asks no more until it gets in again, so that an
 *       application which enters and leaves MPI all the time costs at most
 *       one futile ring, then the periodic look as before. Nor does it ask
 *       while the application polls (P7): that one serves its own work
 *       itself, and the ask cost each of its exits a look for work in
 *       flight (osu_get_latency -s flush 8 B, under callgrind: about 25
 *       instructions per get + flush of 840). So was a ring
 *       whose entry the application came back into MPI during (it waited
 *       for the agent to leave), or came back into MPI less than
 *       NBRMA_PACING_RING_WORTH_NS after, as the agent's next look finds:
 *       the agent served what the application's next call would have
 *       served, in that application's time where the two share a CPU (the
 *       ring's wake-up has the kernel run the agent at once on the ringing
 *       thread's CPU: the application returns only after the service). The
 *       asking stops until the agent's next entry. The origin of lock / put
 *       / unlock toward a `malloc`ed window rang its agent as it left
 *       MPI_Put, the agent served the put's completion before
 *       MPI_Win_unlock, 30-60 times in 2000 operations: 2.2-4.8 us per
 *       operation, ranks bound to cores or not, against 1.4-2.2 without
 *       those rings.
 *
 *   P7  that periodic look doubles after each look that finds the
 *       application inside MPI again having entered it at least
 *       NBRMA_PACING_POLLING_ENTRIES times since the previous look, from
 *       NBRMA_PACING_AWAY_MIN_NS to NBRMA_PACING_AWAY_MAX_NS; it is back at
 *       the minimum once the agent gets in or finds the application inside
 *       after fewer entries. An application that calls MPI all the time
 *       (a latency loop, MPI_Test polling) progresses by itself, and every
 *       futile look costs it a wake-up on its busy core (a look every
 *       millisecond, ~560 futile wake-ups a second, cost 3-7% of an 8 B
 *       put + flush latency over tcp). One found inside after a few calls
 *       (a window's creation, a barrier) may leave MPI for a computation or
 *       a sleep at any moment, and a peer's work then waits for the look:
 *       backing off there too cost a target asleep outside MPI about 0.5 us
 *       per operation of a 2000-operation stream on shared memory.
 *
 *   P8  an application found inside the call it was in at the previous look
 *       (no entry since: a barrier, a wait, a window's free that a peer
 *       holds up) progresses by itself for as long as that call lasts: the
 *       look doubles as under P7, and the agent asks to be rung as that call
 *       returns whatever work is in flight, so that a computation or a
 *       sleep after it does not wait for the longer look. A target waiting
 *       in a barrier through a peer's latency loop was looked at every
 *       millisecond for the whole run (2,415 futile looks in 2.5 s over
 *       tcp). A futile ring of this kind (the application was inside
 *       again) ends this backing off until the agent gets in, and leaves
 *       P6's ring alone: the futile ring on return of the barrier before a
 *       nonblocking epoch stopped the ring as the epoch's origin left MPI
 *       for its computation (Late Complete across two hosts 0.49x vanilla
 *       against 0.29-0.37). Only where the application counts its entries
 *       and rings (the guard below MPI_THREAD_MULTIPLE; `app_rings` of
 *       _init).
 *
 *   P9  a thread of the application that waits in a blocking call longer
 *       than MPIR_CVAR_NBRMA_PARK_AFTER_US parks: it leaves MPI and sleeps
 *       (ch4/common/nbrma_parked_wait.c), and the agent serves in its
 *       stead (P2: a parked thread does not compute), so that the core it
 *       spun on goes to whoever needs it. The agent rings it back after a
 *       service that served something (UCX events, a poller's progress, a
 *       request completed): what the wait waits for may have come. Not
 *       after a service that served nothing, which the parking thread's
 *       own ring began: each ring would otherwise wake the other's sleep
 *       forever. The parked thread also looks by itself every
 *       NBRMA_PACING_PARKED_LOOK_NS (what completes unseen by the agent: a
 *       lock word a peer frees with plain stores).
 *
 *   P10 an agent that finds the application inside MPI asks it to mark this
 *       process's mailboxes as it leaves (a few stores; the application takes
 *       the marks back at its next progress call, and marks again as it
 *       leaves again, at most NBRMA_PACING_AWAY_MARKS times per look: which
 *       exit begins a long absence nobody knows), and sleeps on its wake
 *       socket too: the first same-host peer that then
 *       sends what needs this process's CPU (a message of a mailbox ring,
 *       an operation by MPICH's active message or UCX's emulation) rings it,
 *       so that an application that left MPI for a computation or a sleep
 *       is served at once instead of after the look (P7: up to 8 ms; the
 *       first fetch_and_op toward a target asleep outside MPI on a `malloc`ed
 *       window waited 0.5-1.1 ms, the whole stream of 2000 then 2.1-2.6 us
 *       per operation against 1.9-2.1 after it). A peer's ring that finds
 *       the application inside again was futile: the next sleep away asks
 *       for no mark, so that a stream toward an application that serves it
 *       itself costs at most one futile ring every other look. Nor while
 *       the application polls (P7): it will serve what comes, and the
 *       marks cost an application that enters MPI all the time (a fence or
 *       PSCW latency loop, the agent on) their stores on the mailbox's
 *       busiest line and its peers a futile ring each (osu_put_latency -w
 *       create -s pscw 8 B: 2.5 us against 1.9). Only where the
 *       application rings (`app_rings` of _init). The same asking has the
 *       application arm the UCX workers at the first of those exits (they
 *       were left unarmed: the application progresses them itself), and the
 *       sleep away wakes once on their descriptors then, so that an
 *       operation of a peer on another host (tcp) that needs this CPU is
 *       served at once too (the first one after the application left MPI
 *       waited for the look: 1-8 ms); such a wake counts as a peer's ring.
 *
 *   P11 before it sleeps on the armed workers, the agent marks this
 *       process's mailboxes so that same-host peers ring it for what they
 *       store there (formats/mailbox_ring.h). For every message only while
 *       the application has work of its own in flight (a grant or a done
 *       then moves it while the application computes) and does not poll:
 *       it came into MPI fewer than NBRMA_PACING_POLLING_ENTRIES times
 *       since the agent's previous marking, or that marking was
 *       NBRMA_PACING_AWAY_MAX_NS or longer ago. Otherwise for what serves a
 *       peer only (a lock request or release, an epoch to pull: its sender
 *       waits for this process): a grant or a done for an application that
 *       completes its epochs in its own calls woke the agent on that
 *       application's CPU for nothing (the LU kernel of osu_extensions, 2
 *       ranks bound on 2 cores: 1.17x its time without the agent with
 *       blocking PSCW, 1.26x with nonblocking epochs and MPI_Test after
 *       every row). Marked for peers for want of work of its own, the
 *       marks are for every message again as soon as the application
 *       begins some (its side: a nonblocking synchronization call, an
 *       operation that waits for its grant); marked so while the
 *       application polls, the agent looks again after
 *       NBRMA_PACING_AWAY_MIN_NS, so that an application that stops
 *       polling for a computation has its epochs moved after that.
 *
 * Plain C interface, no MPICH header: unit-tested without MPI
 * (test/unit/test_agent_pacing.cpp).
 */

#ifndef NBRMA_AGENT_PACING_H_INCLUDED
#define NBRMA_AGENT_PACING_H_INCLUDED

#include <stdbool.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define NBRMA_PACING_WINDOW_NS 10000000u        /* 10 ms */
#define NBRMA_PACING_AWAY_MIN_NS 1000000u       /* 1 ms (P7) */
#define NBRMA_PACING_AWAY_MAX_NS 8000000u       /* 8 ms (P7) */
#define NBRMA_PACING_POLLING_ENTRIES 64u        /* P7 */
#define NBRMA_PACING_PARKED_LOOK_NS 1000000u    /* 1 ms (P9) */
#define NBRMA_PACING_YIELD_TAKEN_NS 5000u       /* 5 us (P5; an idle sched_yield: 0.3) */
#define NBRMA_PACING_LONG_YIELDS_TAKEN 3u       /* P5 */
#define NBRMA_PACING_RING_WORTH_NS 1000000u     /* 1 ms (P6) */
#define NBRMA_PACING_AWAY_MARKS 64              /* P10 */

typedef struct {
    uint64_t wall_ns, agent_cpu_ns;     /* at the previous call */
    int64_t budget_ns;
    bool started;
    bool woke_by_timer;         /* P4: the last sleep on the workers */
    int taken_cpu;              /* P5: the CPU the agent last found another thread on; -1: none */
    int yield_cpu;              /* P5: the CPU of the agent's last yield */
    unsigned long_yields;       /* P5: in a row, on yield_cpu */
    bool rung;                  /* P6: the application's ring ended the last sleep */
    uint8_t entry_ring;         /* P6, P8: the ring that began the last entry (nbrma_pacing_exit_ring) */
    uint8_t served_ring;        /* P6, P8: ... that the service of which ended as below */
    uint64_t served_ns;         /* P6, P8: when that service ended */
    uint32_t served_entries;    /* P6, P8: the application's count of entries then */
    bool exit_ring_futile;      /* P6: a ring as the application left with own work */
    bool return_ring_futile;    /* P8: a ring as the call it stayed in returned */
    bool app_rings;             /* P8: the application counts its entries and rings */
    bool found_inside;          /* P8: the last look found the application inside */
    bool in_one_call;           /* P8: ... in the call it was in at the look before */
    unsigned refused_in_a_row;  /* P7, P8: looks that found it polling or in one call */
    uint32_t app_entries;       /* P7: the application's count of entries at the last look */
    bool peer_rang;             /* P10: a peer's ring ended the last sleep away */
    bool mark_futile;           /* P10: ... and the application was inside again */
    bool app_polled;            /* P7, P10: the last look found it inside, having entered
                                 * NBRMA_PACING_POLLING_ENTRIES times or more since the one before */
    bool marked;                /* P11: the mailboxes were marked before */
    uint32_t marked_entries;    /* P11: the application's count of entries then */
    uint64_t marked_ns;         /* P11: and when */
} nbrma_agent_pacing;

/* P11: what the mailboxes wake the agent's armed sleep for. */
typedef enum {
    NBRMA_PACING_MARK_ALL = 0,  /* every message */
    NBRMA_PACING_MARK_PEERS_UNTIL_OWN_WORK,     /* what serves a peer, until the
                                                 * application begins work of its own */
    NBRMA_PACING_MARK_PEERS_WHILE_POLLING       /* what serves a peer; the agent looks
                                                 * again after NBRMA_PACING_AWAY_MIN_NS */
} nbrma_pacing_mark;

/* The ring an agent that found the application inside MPI asks for, stored
 * where the application's outermost exit reads it (any value but NONE asks). */
typedef enum {
    NBRMA_PACING_RING_NONE = 0,
    NBRMA_PACING_RING_IF_OWN_WORK = 1,  /* P6 */
    NBRMA_PACING_RING_ON_RETURN = 2     /* P8 */
} nbrma_pacing_exit_ring;

/* `app_rings`: the application counts its entries into MPI and rings as it
 * leaves when asked (P6-P8 rely on them). */
void nbrma_agent_pacing_init(nbrma_agent_pacing * p, bool app_rings);

/* The pause after a round of service, from the clocks now (wall time and the
 * agent thread's CPU time) and whether the application computes. The first
 * call only starts the clocks. */
uint64_t nbrma_agent_pacing_pause_ns(nbrma_agent_pacing * p, uint64_t wall_ns,
                                     uint64_t agent_cpu_ns, bool app_computes, bool own_work,
                                     unsigned share_percent);

/* P4: how the agent may linger before it sleeps. */
typedef enum {
    NBRMA_LINGER_NONE = 0,      /* it arms and sleeps once drained */
    NBRMA_LINGER_WHILE_OWN_WORK,        /* while the application's own work is in flight */
    NBRMA_LINGER_UNTIL_IDLE     /* until nothing came for the linger time */
} nbrma_linger;

/* P4: how the agent may linger before it sleeps, asked once per round of
 * service (it forgets the sleep that its timer ended). */
nbrma_linger nbrma_agent_pacing_linger(nbrma_agent_pacing * p, bool app_computes, bool own_work);

/* P4: the agent's sleep on the workers' events ended by its timer
 * (`by_timer`: nothing came) or by an event. */
void nbrma_agent_pacing_slept(nbrma_agent_pacing * p, bool by_timer);

/* P5: where the agent runs: on `cpu`, off it (`off`), or anywhere (cpu -1). */
typedef struct {
    int cpu;
    bool off;
} nbrma_agent_placement;

/* P5: where the agent runs, from whether the application computes and the
 * CPU its thread last ran on (-1: unknown). */
nbrma_agent_placement nbrma_agent_pacing_placement(const nbrma_agent_pacing * p,
                                                   bool app_computes, int app_cpu);

/* P5: a yield of the agent's on `cpu` took `took_ns`. True where the yields
 * in a row there say that another thread runs on that CPU, which the agent
 * then keeps off (ask nbrma_agent_pacing_placement again). */
bool nbrma_agent_pacing_yielded(nbrma_agent_pacing * p, int cpu, uint64_t took_ns);

/* P6, P8: the ring the agent, which found the application inside MPI, asks
 * for: none, as the application leaves with work of its own in flight, or as
 * the call it stays in returns. */
nbrma_pacing_exit_ring nbrma_agent_pacing_exit_ring(const nbrma_agent_pacing * p);

/* P6: the sleep of an agent that found the application inside MPI ended,
 * by the application's ring (`rung`) or not. */
void nbrma_agent_pacing_slept_away(nbrma_agent_pacing * p, bool rung);

/* P10: whether the agent, which found the application inside MPI, asks it to
 * mark this process's mailboxes as it leaves. */
bool nbrma_agent_pacing_away_mark(const nbrma_agent_pacing * p);

/* P10: a same-host peer's ring or the armed workers ended the sleep away. */
void nbrma_agent_pacing_peer_rang(nbrma_agent_pacing * p);

/* P6-P8, P10: the agent tried to enter MPI (`entered`) after its last sleep, at
 * `now_ns`; `app_entries`: the application's count of its entries into MPI
 * as the agent looked (wrapping; constant where nothing counts them). */
void nbrma_agent_pacing_tried_entry(nbrma_agent_pacing * p, bool entered, uint32_t app_entries,
                                    uint64_t now_ns);

/* P6, P8: the service of the agent's last entry ended at `now_ns`, the
 * application's count of entries then `app_entries`; `app_came_in`: the
 * application asked to come into MPI meanwhile. */
void nbrma_agent_pacing_served(nbrma_agent_pacing * p, bool app_came_in, uint64_t now_ns,
                               uint32_t app_entries);

/* P7, P8: how long the agent, which found the application inside MPI, sleeps
 * before it looks again. */
uint64_t nbrma_agent_pacing_away_ns(const nbrma_agent_pacing * p);

/* P11: how the agent marks the mailboxes before its armed sleep at `now_ns`,
 * from whether the application has work of its own in flight and its count
 * of entries into MPI (wrapping; constant where nothing counts them). */
nbrma_pacing_mark nbrma_agent_pacing_sleep_mark(nbrma_agent_pacing * p, bool own_work,
                                                uint32_t app_entries, uint64_t now_ns);

/* P9: whether the agent rings a parked thread of the application after a
 * service; `served`: the service served something. */
bool nbrma_agent_pacing_rings_parked(bool parked, bool served);

#ifdef __cplusplus
}
#endif
#endif /* NBRMA_AGENT_PACING_H_INCLUDED */
