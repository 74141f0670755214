/*
 * mpich-nbrma core: which path an RMA operation of an engine window takes,
 * and what an ordered operation must wait for before it goes. One answer for
 * both questions, so that issuing an operation (ch4/epochs/operations.c) and
 * ordering it (ch4/epochs/ordered_ops.c) cannot disagree.
 *
 * The glue gathers the facts that need MPICH or UCX (does the operation fit
 * UCX's atomics on this window, may the cross-memory path copy it, does
 * MPICH's own code send it as an active message); the rules here turn them
 * into a route. Plain C, no MPICH or UCX header: unit-tested without MPI.
 */

#ifndef NBRMA_ROUTE_H_INCLUDED
#define NBRMA_ROUTE_H_INCLUDED

#include <stdbool.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The paths, in the order they are preferred. */
typedef enum {
    NBRMA_PATH_CROSS_MEMORY = 0,        /* the origin's CPU copies (a mapped segment,
                                         * process_vm_writev/readv) */
    NBRMA_PATH_MAPPED_ATOMICS = 1,      /* the origin's CPU atomics on the target's memory,
                                         * mapped here */
    NBRMA_PATH_UCX_ATOMICS = 2,         /* one UCX atomic per element */
    NBRMA_PATH_NARROW_ATOMICS = 3,      /* 1- and 2-byte elements: UCX compare-and-swap loops,
                                         * waited for at once */
    NBRMA_PATH_MPICH = 4,               /* MPICH's own code: UCX RDMA or an active message */
    NBRMA_PATH_MPICH_MESSAGE = 5,       /* a put or get as MPICH's active message where
                                         * MPICH's code would take UCX's RDMA (rule R8) */
    NBRMA_NUM_PATHS = 6
} nbrma_path;

/* How an operation travels toward its target, as far as ordering cares: by
 * UCX RDMA or atomics on the target's endpoint (ordered among themselves by
 * a worker fence), or UNFENCED: a way no fence orders against those (an
 * active message applied by the target's CPU, a copy by this CPU). NONE:
 * the operation is performed when its call returns. */
typedef enum {
    NBRMA_WAY_NONE = 0,
    NBRMA_WAY_UCX = 1,
    NBRMA_WAY_UNFENCED = 2
} nbrma_way;

/* What the glue knows of one operation on one window. */
typedef struct {
    bool put_or_get;            /* MPI_Put/MPI_Get (else an accumulate, fetch or swap) */
    bool to_self;               /* the target is the calling process */
    bool cross_memory_fits;     /* the cross-memory path may copy it (peer, layout) */
    bool small_unmapped_copy;   /* a put or get below the window's cross-memory threshold
                                 * toward window memory not mapped here (R1: asked of puts
                                 * whose local completion is asked, which UCX's path gives
                                 * sooner than the system call while the target's CPU is
                                 * in MPI) */
    bool notified;              /* MPIX_Put_notify, MPIX_Get_notify: its counter
                                 * increment follows a copy at once (R6), UCX's emulated
                                 * put or get only once complete (R1) */
    bool slow_system_call_copy; /* a put or get toward window memory not mapped here,
                                 * whose system call costs this process more than the
                                 * window allows (R1: UCX's path over shared memory is
                                 * sooner at any size while the target's CPU is in MPI) */
    bool target_served_by_agent; /* the target's progress agent alone serves what needs
                                  * its CPU now (its application is outside MPI): UCX's
                                  * path waits for the agent's wake-ups (asked of small
                                  * unmapped copies) */
    bool mapped_atomics_fit;    /* the target's memory is mapped here and the CPU's atomics
                                 * perform the operation (the target applies every other
                                 * one of its type and operation with them too) */
    bool ucx_atomics_fit;       /* the window has UCX atomics and the operation fits them */
    bool many_elements;         /* an accumulate of at least the window's
                                 * mapped_atomics_min_bytes: one UCX call per element
                                 * costs more than the CPU's atomics in a loop (R2) */
    bool narrow_atomics_fit;    /* the window has 1-/2-byte atomics and the operation fits */
    bool may_wait;              /* the caller may wait for UCX (not inside a UCX callback) */
    bool mpich_sends_am;        /* MPICH's code would send it as an active message */
    bool emulated_over_network; /* UCX's puts and atomics toward the target are active
                                 * messages of UCX's that the target's CPU answers across
                                 * a network (tcp); asked of puts and gets (rules R1 and
                                 * R8) and of operations that fit UCX atomics (R2) only */
    bool local_completion_asked;        /* a put on a window that had a local flush:
                                         * its buffer is wanted back before its remote
                                         * completion (a get's local completion is its
                                         * remote one); rule R1 */
    /* rule R8, asked of puts and gets only: */
    bool fits_one_message;      /* the data fits one eager active message of MPICH's */
    bool in_message_stream;     /* too many went since their completion
                                 * (nbrma_grant_cache_in_stream, nbrma_op_in_stream) */
} nbrma_op_facts;

typedef struct {
    nbrma_path path;
    nbrma_way travels;          /* how it goes: what it must be ordered behind */
    nbrma_way leaves;           /* what it leaves in flight once its call returned */
} nbrma_route;

/* Rule R1's exception: UCX's path gives this put or get sooner than the
 * origin's system call while the target's application serves it (a small
 * put whose local completion is asked; any copy where the call is slow and
 * UCX's path is shared memory; never a notified one). Asked by the glue too,
 * before it asks
 * whether the target's agent serves. */
static inline bool nbrma_copy_sooner_by_ucx(const nbrma_op_facts * f)
{
    return !f->notified && ((f->small_unmapped_copy && f->local_completion_asked) ||
                            (f->slow_system_call_copy && !f->emulated_over_network));
}

/* The route of an operation with these facts. By address: passed by value,
 * the flags were packed into one register bit by bit at every call, 25
 * instructions of each MPI_Put (callgrind). */
nbrma_route nbrma_route_of(const nbrma_op_facts * facts);

/* Rule R8's stream, whoever counts (the grant cache, the engine): `now`
 * operations went toward the target since their last completion and
 * `before` in the interval before it; a stream from `max` now or more than
 * `max` before (a loop whose completions each cover many operations: the
 * next ones too); always for a `max` of 0. */
static inline bool nbrma_message_stream(uint64_t now, uint64_t before, uint64_t max)
{
    return now >= max || before > max;
}

/* Whether an operation that went `route` may need its target's CPU: every
 * path through UCX or MPICH may (UCX emulates RDMA and atomics on memory it
 * cannot reach, MPICH sends active messages); the origin's copies and its
 * CPU's atomics on mapped memory do not, nor MPICH's put or get that left
 * by UCX toward a peer whose every UCX lane for them is this CPU's copy into
 * memory UCX maps here (`copied_by_cpu`: shared memory, rule R9), which was
 * performed within its call. A same-host target whose agent sleeps with its
 * workers unarmed is rung for it (rule P10 of nbrma_agent_pacing.h). Asked
 * for MPICH's puts on shared memory too, it had a polling application load
 * the peer's mark at each progress call and ring the peer's agent whenever
 * it found it marked away (bursts of rings in the LU kernel's nonblocking
 * series on shared memory, strace). */
static inline bool nbrma_route_may_need_target_cpu(nbrma_route route, bool copied_by_cpu)
{
    if (route.path == NBRMA_PATH_CROSS_MEMORY || route.path == NBRMA_PATH_MAPPED_ATOMICS)
        return false;
    return !(route.path == NBRMA_PATH_MPICH && route.leaves == NBRMA_WAY_UCX && copied_by_cpu);
}

/* Whether an issued operation counts as complete for its epoch once it is
 * complete locally (rule R5): it went `route` (an active message of MPICH's:
 * NBRMA_PATH_MPICH leaving it UNFENCED, or NBRMA_PATH_MPICH_MESSAGE) toward
 * another process
 * (`to_self` false), its epoch ends toward its target with a notice that
 * follows it on the same channel (`epoch_ends_by_notice`:
 * nbrma_op_epoch_ends_by_notice), and no request waits for its remote
 * completion (`remote_request`). Otherwise it counts once complete at the
 * target. */
bool nbrma_complete_at_local(nbrma_route route, bool to_self, bool epoch_ends_by_notice,
                             bool remote_request);

/* Whether an issued operation needs an endpoint flush for its remote
 * completion (rule R9): one that leaves by UCX (`route.leaves`
 * NBRMA_WAY_UCX) does, unless UCX's call performed it in the target's memory
 * itself: it was complete locally when its call returned
 * (`locally_complete`: a put or get that UCX reported done in its call)
 * toward a peer whose window memory UCX maps in this process and whose every
 * put/get lane is this CPU's (`copied_by_cpu`: shared memory, cross-memory
 * attach; a mapping means no emulation by messages). Such a put's data is in
 * the target's memory already, such a get's in the origin buffer; the flush
 * would only ask UCX so (about 350 of
 * the 1,540 instructions of an 8 B put + flush on an allocate window,
 * callgrind). Anything else (active messages, the caller itself, a
 * network) is complete at the target without one or waits for it. */
bool nbrma_needs_endpoint_flush(nbrma_route route, bool locally_complete, bool copied_by_cpu);

/* Whether an operation that went `route` was performed at its target when
 * its call returned (rule R10): it leaves nothing in flight
 * (NBRMA_WAY_NONE: the origin's CPU copied or applied it, or waited for
 * UCX's answers), so it is complete at both ends, and no flush, epoch end or
 * count of operations in flight need know of it. */
bool nbrma_performed_at_return(nbrma_route route);

/* Whether the counter increment of a notified operation (MPIX_Put_notify &
 * co.) may follow the operation at once as a UCX atomic on the target's
 * endpoint (rule R6), instead of waiting for the operation's completion: the
 * operation went `route` toward another process (`to_self` false), and
 * either it was performed when its call returned (leaves NBRMA_WAY_NONE) or
 * it left by UCX toward a peer whose every UCX lane performs an operation
 * within the call that issues it (`peer_lanes_synchronous`: shared memory,
 * cross-memory attach, on window memory UCX maps there), so that no atomic
 * issued after it can overtake it. */
bool nbrma_notice_rides(nbrma_route route, bool to_self, bool peer_lanes_synchronous);

/* Whether the counter increment of a notified put or get that may not
 * follow it at once (rule R6: `notice_rides` false) travels inside the
 * operation's own active message, which the target applies after a put's
 * data and before it acknowledges the put, or once it sent a get's reply,
 * that is read the data (rule R7, patches 0037, 0038): the operation takes
 * MPICH's path toward another process (`to_self` false) with a contiguous
 * target layout and data (`contiguous_data`), and either MPICH sends it as
 * an active message anyway, or UCX's RDMA would need the target's CPU
 * (`rma_emulated`: tcp). Then the increment costs no message of its own and
 * no wait for the operation's completion, and the operation goes as MPICH's
 * active message: *route becomes that way (UNFENCED). RDMA that needs no
 * one's CPU but the origin's keeps it. */
bool nbrma_notice_in_message(nbrma_route * route, bool to_self, bool notice_rides,
                             bool contiguous_data, bool rma_emulated);

/* What an ordered operation that travels `travels` needs before it goes,
 * given the ways in flight toward its target (NBRMA_WAY_* bits). */
typedef enum {
    NBRMA_ORDER_GO = 0,                 /* nothing it could overtake */
    NBRMA_ORDER_FENCE = 1,              /* UCX behind UCX: a worker fence orders it */
    NBRMA_ORDER_COMPLETE_FIRST = 2      /* what is in flight must complete first */
} nbrma_order_step;

nbrma_order_step nbrma_order_step_for(unsigned in_flight, nbrma_way travels);

#ifdef __cplusplus
}
#endif
#endif /* NBRMA_ROUTE_H_INCLUDED */
