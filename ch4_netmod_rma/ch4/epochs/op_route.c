/*
 * mpich-nbrma: the facts about one operation of an engine window that the
 * core's routing rules (core/include/nbrma_route.h) decide on; issuing
 * (operations.c) and ordering (ordered_ops.c) both ask here, so they agree.
 * Facts no rule could use are left false: an operation pays only for the
 * tests its own route needs. Whether MPICH sends an active message is exact
 * for accumulates (always); for puts and gets it needs the layout and is
 * asked only for ordering or a notification (rule R6); elsewhere they count
 * as UCX RDMA (at worst a needless endpoint flush, direct_ops.c). Whether an
 * accumulate is intrinsic follows from the same routes.
 */

#include "mpidimpl.h"
#include "ucx_impl.h"
#include "epoch_win.h"
#include "nbrma_mpich_path.h"
#include "native_atomics.h"
#include "narrow_atomics.h"
#include "nbrma_ucx_lanes.h"

/* ew->lanes_of[target]; 0: not looked at yet. */
enum { LANES_KNOWN = 1u, LANES_EMULATED_OVER_NETWORK = 2u, LANES_COPY_BY_CPU = 4u };

/* Whether UCX emulates puts and atomics toward `target` over a network (every
 * put/get lane tcp's: R2, R8; not shared memory, where MPICH's message costs
 * more than UCX's put), and whether UCX's put is this CPU's copy within the
 * call (R9: mapped memory, every lane this CPU's). A wrong answer costs time
 * only. Once per target (UCX prints its lane table); out of line, so that
 * later asks inline to a load. */
static __attribute__ ((noinline))
unsigned look_at_lanes(MPIDI_NBRMA_epoch_win_t * ew, int target)
{
    MPIR_Win *win = ew->win;
    int lanes, emulated;
    unsigned known = LANES_KNOWN;
    void *mapped;

    if (ew->lanes_of == NULL) {
        ew->lanes_of = MPL_calloc(win->comm_ptr->local_size, 1, MPL_MEM_RMA);
        if (ew->lanes_of == NULL)
            return LANES_KNOWN; /* UCX's path with a flush; asked again */
    }
    MPIDI_NBRMA_win_rma_lanes(win, target, &lanes, &emulated);
    if (MPIDI_UCX_WIN_INFO(win, target).rkey != NULL && lanes > 0 && emulated == lanes)
        known |= LANES_EMULATED_OVER_NETWORK;
    if (target != win->comm_ptr->rank && MPIDI_NBRMA_ucx_window_mapped(win, target, &mapped) &&
        MPIDI_NBRMA_win_lanes_on_cpu(win, target, "rma_bw#"))
        known |= LANES_COPY_BY_CPU;
    ew->lanes_of[target] = (unsigned char) known;
    return known;
}

static inline unsigned lanes_of(MPIDI_NBRMA_epoch_win_t * ew, int target)
{
    const unsigned char *known = ew->lanes_of;

    return known && known[target] ? known[target] : look_at_lanes(ew, target);
}

static bool emulated_over_network(MPIDI_NBRMA_epoch_win_t * ew, int target)
{
    return lanes_of(ew, target) & LANES_EMULATED_OVER_NETWORK;
}

bool MPIDI_NBRMA_lanes_copy_by_cpu(MPIDI_NBRMA_epoch_win_t * ew, int target)
{
    /* without UCX keys a put is MPICH's active message, and look_at_lanes
     * would read keys that are not there */
    return MPIDI_UCX_WIN(ew->win).info_table && (lanes_of(ew, target) & LANES_COPY_BY_CPU);
}

bool MPIDI_NBRMA_needs_endpoint_flush(MPIDI_NBRMA_epoch_win_t * ew, nbrma_route route, int target,
                                      bool locally_complete)
{
    /* the lanes are looked at only where their answer can matter */
    bool copied_by_cpu = route.leaves == NBRMA_WAY_UCX && locally_complete &&
        MPIDI_NBRMA_lanes_copy_by_cpu(ew, target);

    return nbrma_needs_endpoint_flush(route, locally_complete, copied_by_cpu);
}

/* Rule R8's facts; a get's data comes back in MPICH's acknowledgement. The
 * stream: counted toward the target by the grant cache, or by the engine
 * (every operation of a PSCW access epoch, the grant cache's at a hand-over);
 * asked of unordered operations only: the ordering's route and the issue's
 * must agree, and a wait between them may end a stream. */
static void as_message_facts(const MPIDI_NBRMA_epoch_win_t * ew, const MPIDI_NBRMA_rma_op_t * op,
                             nbrma_op_facts * facts)
{
    MPIDI_NBRMA_local_buffer_t local = MPIDI_NBRMA_local_buffer(op);
    MPI_Aint bytes, header = op->kind == MPIDI_NBRMA_OP_PUT ? (MPI_Aint) sizeof(MPIDIG_put_msg_t)
        : (MPI_Aint) sizeof(MPIDIG_get_ack_msg_t);

    facts->emulated_over_network = true;
    MPIDI_Datatype_check_size(local.datatype, local.count, bytes);
    facts->fits_one_message = bytes > 0 && bytes <= MPIDI_NM_am_eager_limit() - header;
    facts->in_message_stream = !MPIDI_NBRMA_ordered(ew, op) &&
        (nbrma_grant_cache_in_stream(ew->grants, op->target_rank, ew->message_ops_max) ||
         nbrma_op_in_stream(ew->engine, op->target_rank, ew->message_ops_max));
}

/* Rule R1's cheapest facts, inline: a copy toward memory not mapped here (a
 * system call), and one below cross_memory_min_bytes, so that a small put on
 * a create window pays a load, a size and a compare instead of
 * cross_memory_rma.c's whole test. */
static inline bool unmapped_copy(const MPIDI_NBRMA_epoch_win_t * ew,
                                 const MPIDI_NBRMA_rma_op_t * op)
{
    return nbrma_peer_reach_copy_target(&ew->reach, op->target_rank, ew->win->comm_ptr->rank,
                                        0) == NULL;
}

static inline bool small_copy(const MPIDI_NBRMA_epoch_win_t * ew, const MPIDI_NBRMA_rma_op_t * op)
{
    MPIDI_NBRMA_local_buffer_t local = MPIDI_NBRMA_local_buffer(op);
    MPI_Aint bytes;

    MPIDI_Datatype_check_size(local.datatype, local.count, bytes);
    return (size_t) bytes < ew->cross_memory_min_bytes;
}

/* Rule R2's exception: an accumulate (not a single fetch_and_op or
 * compare_and_swap) of at least the window's mapped_atomics_min_bytes. */
static inline bool many_elements(const MPIDI_NBRMA_epoch_win_t * ew,
                                 const MPIDI_NBRMA_rma_op_t * op)
{
    MPI_Aint bytes;

    if (op->kind != MPIDI_NBRMA_OP_ACCUMULATE && op->kind != MPIDI_NBRMA_OP_GET_ACCUMULATE)
        return false;
    MPIDI_Datatype_check_size(op->target_datatype, op->target_count, bytes);
    return (size_t) bytes >= ew->mapped_atomics_min_bytes;
}

nbrma_route MPIDI_NBRMA_route(MPIDI_NBRMA_epoch_win_t * ew, const MPIDI_NBRMA_rma_op_t * op,
                              bool may_wait, bool cross_memory)
{
    MPIR_Win *win = ew->win;
    nbrma_op_facts facts = {
        .put_or_get = op->kind == MPIDI_NBRMA_OP_PUT || op->kind == MPIDI_NBRMA_OP_GET,
        .to_self = op->target_rank == win->comm_ptr->rank,
        .may_wait = may_wait,
        .local_completion_asked = op->kind == MPIDI_NBRMA_OP_PUT && ew->had_local_flush,
        .notified = op->notify_behind != NULL
    };

    if (facts.put_or_get) {
        /* a load where no peer is reached by cross-memory attach. Whether
         * the target's agent serves is a hint that may change between two
         * routes of one operation: an ordered one, whose ordering saw the
         * first, does not ask */
        if (cross_memory && ew->reach.n_cross_memory_peers > 0) {
            bool sooner_by_ucx;

            /* R1 asks the size of puts whose local completion is asked only */
            if ((facts.local_completion_asked || ew->cross_memory_call_slow) &&
                !facts.notified && unmapped_copy(ew, op)) {
                facts.small_unmapped_copy = facts.local_completion_asked && small_copy(ew, op);
                facts.slow_system_call_copy = ew->cross_memory_call_slow;
                facts.emulated_over_network = ew->cross_memory_call_slow &&
                    emulated_over_network(ew, op->target_rank);
            }
            sooner_by_ucx = nbrma_copy_sooner_by_ucx(&facts);
            facts.target_served_by_agent = sooner_by_ucx && !MPIDI_NBRMA_ordered(ew, op) &&
                nbrma_mailboxes_peer_agent_serves(ew->mailbox, op->target_rank);
            facts.cross_memory_fits = (!sooner_by_ucx || facts.target_served_by_agent) &&
                MPIDI_NBRMA_cross_memory_rma_eligible(ew, op);
        }
    } else {
        facts.ucx_atomics_fit = ew->native_atomics && MPIDI_NBRMA_native_atomics_eligible(op, win);
        /* rule R2: not where UCX would have the target's CPU answer them over tcp */
        facts.emulated_over_network = facts.ucx_atomics_fit && !facts.to_self &&
            emulated_over_network(ew, op->target_rank);
        facts.narrow_atomics_fit = !facts.ucx_atomics_fit && ew->narrow_atomics && may_wait &&
            MPIDI_NBRMA_narrow_atomics_eligible(op, win);
        facts.many_elements = facts.ucx_atomics_fit && many_elements(ew, op);
        /* R3 comes after those; R2 gives way to it for many elements */
        facts.mapped_atomics_fit = (!facts.ucx_atomics_fit || facts.many_elements) &&
            !facts.narrow_atomics_fit && ew->reach.mapped != NULL &&
            MPIDI_NBRMA_mapped_atomics_eligible(ew, op);
    }
    /* R8 not where an rkey cache decides or MPICH has no UCX keys, nor for a
     * notified operation (notify.c) or MPI_Rput/MPI_Rget, whose request MPICH
     * makes; the lanes first: on shared memory a load */
    if (facts.put_or_get && !facts.to_self && !facts.cross_memory_fits &&
        MPIDI_UCX_WIN(win).info_table && !ew->own_rdma_for &&
        unlikely(emulated_over_network(ew, op->target_rank)) && !op->notify_behind &&
        !op->request)
        as_message_facts(ew, op, &facts);
    if (!facts.put_or_get)
        facts.mpich_sends_am = true;
    else if (ew->own_rdma_for)  /* exact at no cost: a lookup in the rkey cache */
        facts.mpich_sends_am = !ew->own_rdma_for(op, win);
    else if (ew->order || op->notify_behind || MPIDI_NBRMA_ordered(ew, op))
        facts.mpich_sends_am = MPIDI_NBRMA_mpich_may_use_am(win, op);
    return nbrma_route_of(&facts);
}

/* Any count: UCX atomics go element by element. Narrow atomics are not
 * intrinsic (a replay takes MPICH's path); mapped memory's are, replays too. */
bool MPIDI_NBRMA_op_intrinsic(const MPIDI_NBRMA_epoch_win_t * ew, MPIDI_NBRMA_op_kind_t kind,
                              MPI_Datatype datatype, MPI_Op op)
{
    return (ew->intrinsic_atomics && MPIDI_NBRMA_native_atomics_routed(kind, datatype, op)) ||
        (ew->reach.all_peers_mapped && MPIDI_NBRMA_cpu_atomics_routed(kind, datatype, op, true));
}
