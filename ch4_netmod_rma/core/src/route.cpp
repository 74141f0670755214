// The route of an RMA operation and the ordering step before an ordered one
// (include/nbrma_route.h). Rules, in the order they are applied:
//
//   R1 a put or get the cross-memory path may copy goes there: the origin's
//      CPU copies it (no target CPU), performed when the call returns;
//      unless it is a small copy toward memory not mapped here (a system
//      call) of a put whose local completion is asked (its window called
//      a local flush) while the target's application serves it: UCX's
//      emulated put gives the buffer back once its data left, sooner than
//      the system call, while the target's CPU answers it in MPI. A get's
//      data, and a put's remote completion, wait for that CPU on UCX's
//      path: the system call is sooner where it is cheap (8 B, create
//      window, 2 ranks: get + flush 0.69 against 0.98 us, put + flush 0.68
//      against 0.95; put + flush_local 0.68 against 0.33) and needs no CPU
//      of the target's. Where it is dear (slow_system_call_copy: 1.8 us
//      each on a virtual machine, put + flush 8 B 2.3-3.2 against UCX's
//      0.64-0.81 and vanilla's 0.49, 64 KiB 7.5-7.9 against 5.8-6.7) every
//      copy toward memory not mapped here keeps UCX's path too while the
//      target's application serves it, where that path is shared memory
//      (over tcp UCX's emulation costs more than any such call). Neither
//      holds for a notified put or get: the increment follows the copy at
//      once (R6), UCX's emulated one only once it completed, which the
//      origin sees at its next MPI call. Both are nbrma_copy_sooner_by_ucx.
//      Where the target's
//      progress agent alone serves (its application outside MPI), UCX's
//      path needs the agent, which then serves the whole stream: the copy
//      then;
//   R2 an accumulate, fetch or swap that fits the window's UCX atomics goes
//      to them, unless it has many elements and the CPU's atomics reach the
//      target's memory (R3: mapped here, where UCX's atomics are the CPU's
//      too): UCX takes one call per element (ucp_atomic_op_nbx), 28 us for
//      an 8 KiB MPI_INT accumulate on shared memory against vanilla's 5.7
//      and the CPU's loop's few; or unless UCX emulates them toward its
//      target across a network
//      (tcp: an active message of UCX's that the target's CPU answers); there
//      it keeps MPICH's path (R4), whose active message the target's CPU
//      serves just as well in one crossing each way, at 11.7-13 us per
//      fetch_and_op + flush here against UCX's 19-24, and which the target
//      applies with the same atomics as anything else (R3, patch 0025);
//      else an accumulate of 1- or 2-byte integers that fits goes to the
//      narrow atomics, but only where the caller may wait: their
//      compare-and-swap loops wait for UCX's answers, which a replay inside a
//      UCX callback must not;
//   R3 else one that the CPU's atomics perform on the target's memory,
//      mapped in this process, goes to them: the origin's CPU alone,
//      performed when the call returns (the target applies every such
//      operation that reaches it otherwise with the same atomics, and where
//      memory is mapped UCX's atomics are the CPU's too, so that all of these
//      are atomic with respect to each other; UCX's go first where they fit
//      and the operation has few elements: they cost less); the rest keeps
//      MPICH's path, atomic with them by patch 0025;
//   R4 anything else goes through MPICH's code, which travels by UCX RDMA
//      unless it sends an active message or the target is the caller (a
//      local copy);
//   R5 an operation of MPICH's path that goes as an active message to another
//      process counts as complete for its epoch once it is locally complete
//      if the epoch ends toward its target with a notice (the done of an
//      access epoch) and no request waits for its remote completion: the
//      notice leaves behind it on the same channel, which delivers in order,
//      and the target applies it before it reads the notice; the origin
//      then does not wait a round trip for its acknowledgement before the
//      notice leaves (MPIDIG counts a put or accumulate locally complete
//      once sent: patch 0045);
//   R8 a put or get that UCX emulates across a network anyway (an active
//      message of UCX's that the target's CPU answers: tcp), whose data fits
//      one of MPICH's eager active messages, goes as MPICH's active message
//      (MPIDIG's put or get): the target's CPU answers it just as well, and
//      its completion comes with MPICH's acknowledgement, where UCX 1.13's
//      emulated put needs an endpoint flush after it (8-byte put + flush over
//      tcp here: 8.9 us against 18.1; UCX's get 19.4). Where its epoch ends
//      toward the target with a notice, R5 then counts it complete once
//      locally complete, and the notice follows it on the same channel. A
//      put on a window that asked for local completion (a local flush) goes
//      so too: MPICH's message is locally complete once sent (patch 0045),
//      as UCX's emulated put is. Not on shared
//      memory, where UCX emulates puts into memory it cannot map too: there
//      MPICH's active message costs more than UCX's put. Nor in a stream
//      (nbrma_grant_cache_in_stream; where the engine counts the
//      operations, as in a PSCW access epoch, nbrma_op_in_stream):
//      once the window's message_ops_max operations went toward the target
//      since a flush completed them, or more than that many between the two
//      flushes before, later ones take UCX's path until the next
//      completion. Each message has the target's CPU answer it (about 1 us
//      more per put than UCX's emulated put over tcp here), while UCX's puts
//      are answered together by one endpoint flush, which costs about 7 us
//      more than the last acknowledgement (osu_put_bw 8 B over tcp, 1 to 64
//      puts per flush);
//   R6 the counter increment of a notified operation follows it at once as
//      a UCX atomic on the target's endpoint where nothing can overtake the
//      operation: it was performed when its call returned, or it left by UCX
//      toward a peer whose lanes all perform an operation within the call
//      that issues it (shared memory or cross-memory attach on window memory
//      UCX maps here; not other memory, where UCX emulates puts and gets
//      with messages the target's CPU answers; not tcp, whose
//      puts may take other lanes than its atomics and whose worker fence is
//      a no-op in UCX 1.13); anything else (an active message, the caller
//      itself, a network lane) notifies once the operation completed;
//   R9 an operation that leaves by UCX needs an endpoint flush for its
//      remote completion, unless it was complete locally when its call
//      returned toward a peer whose memory UCX maps here and whose put/get
//      lanes are all this CPU's: the UCX call copied its data into the
//      target's memory (no emulation by messages where the memory is
//      mapped: a get's data is in the origin buffer), and the flush would
//      only ask UCX whether it did;
//   R10 an operation that leaves nothing in flight (R1's copies, R2's narrow
//      atomics, which wait for UCX's answers, R3's CPU atomics) was
//      performed at its target when its call returned: a granted target's
//      grant cache does not count it (nbrma_grant_cache.h), so a flush
//      toward a target that saw only such operations has nothing to wait
//      for, and neither the operation nor the flush asks MPICH's counters;
//   O1 an ordered operation that travels by UCX behind UCX operations only
//      needs a worker fence; nothing in flight needs nothing; anything else
//      waits until what is in flight completed.

#include "nbrma_route.h"

#include <cstddef>
#include <cstdint>
#include <cstring>

namespace {

// A route as nbrma_route_of returns it, its first two fields composed in one
// 64-bit register: returned as {path, travels, leaves}, GCC 12 assembled
// them on the stack with two 4-byte stores and one 8-byte load, which the
// processor cannot forward, so every operation waited there until every
// store before it (a previous operation's to a peer's shared memory among
// them) had left the store buffer; perf put 2% of osu_put_latency's samples
// on that return (osu_put_latency -w allocate -s flush).
nbrma_route make_route(nbrma_path path, nbrma_way travels, nbrma_way leaves)
{
    const uint64_t first = static_cast<uint32_t>(path) |
        static_cast<uint64_t>(static_cast<uint32_t>(travels)) << 32;
    nbrma_route route;

    static_assert(offsetof(nbrma_route, travels) == 4 && sizeof(nbrma_path) == 4,
                  "path and travels fill the route's first 8 bytes");
    std::memcpy(&route, &first, sizeof first);
    route.leaves = leaves;
    return route;
}

}  // namespace

extern "C" nbrma_route nbrma_route_of(const nbrma_op_facts *facts)
{
    const nbrma_op_facts &f = *facts;

    if (f.put_or_get && f.cross_memory_fits &&
        (!nbrma_copy_sooner_by_ucx(&f) || f.target_served_by_agent))
        return make_route(NBRMA_PATH_CROSS_MEMORY, NBRMA_WAY_UNFENCED, NBRMA_WAY_NONE);
    if (!f.put_or_get && f.ucx_atomics_fit && !f.emulated_over_network &&
        !(f.many_elements && f.mapped_atomics_fit))
        return make_route(NBRMA_PATH_UCX_ATOMICS, NBRMA_WAY_UCX, NBRMA_WAY_UCX);
    if (!f.put_or_get && f.narrow_atomics_fit && f.may_wait)
        return make_route(NBRMA_PATH_NARROW_ATOMICS, NBRMA_WAY_UCX, NBRMA_WAY_NONE);
    if (!f.put_or_get && f.mapped_atomics_fit)
        return make_route(NBRMA_PATH_MAPPED_ATOMICS, NBRMA_WAY_UNFENCED, NBRMA_WAY_NONE);
    if (f.put_or_get && f.emulated_over_network && f.fits_one_message && !f.to_self &&
        !f.in_message_stream)
        return make_route(NBRMA_PATH_MPICH_MESSAGE, NBRMA_WAY_UNFENCED, NBRMA_WAY_UNFENCED);
    nbrma_way way = f.to_self || f.mpich_sends_am ? NBRMA_WAY_UNFENCED : NBRMA_WAY_UCX;
    return make_route(NBRMA_PATH_MPICH, way, way);
}

// MPICH's path leaves nothing but an active message unfenced, except toward
// the caller (a local copy): R4 above; R8's path is an active message.
extern "C" bool nbrma_complete_at_local(nbrma_route route, bool to_self, bool epoch_ends_by_notice,
                                        bool remote_request)
{
    const bool by_active_message =
        (route.path == NBRMA_PATH_MPICH || route.path == NBRMA_PATH_MPICH_MESSAGE) &&
        route.leaves == NBRMA_WAY_UNFENCED && !to_self;
    return by_active_message && epoch_ends_by_notice && !remote_request;
}

extern "C" bool nbrma_needs_endpoint_flush(nbrma_route route, bool locally_complete,
                                           bool copied_by_cpu)
{
    return route.leaves == NBRMA_WAY_UCX && !(locally_complete && copied_by_cpu);
}

extern "C" bool nbrma_performed_at_return(nbrma_route route)
{
    return route.leaves == NBRMA_WAY_NONE;
}

extern "C" bool nbrma_notice_rides(nbrma_route route, bool to_self, bool peer_lanes_synchronous)
{
    if (to_self)
        return false;
    return route.leaves == NBRMA_WAY_NONE ||
        (route.leaves == NBRMA_WAY_UCX && peer_lanes_synchronous);
}

extern "C" bool nbrma_notice_in_message(nbrma_route *route, bool to_self, bool notice_rides,
                                        bool contiguous_data, bool rma_emulated)
{
    if (to_self || notice_rides || !contiguous_data || route->path != NBRMA_PATH_MPICH)
        return false;
    // UCX RDMA that needs no one's CPU but this one's keeps it: the
    // increment there waits for the operation's completion instead.
    if (route->leaves != NBRMA_WAY_UNFENCED && !rma_emulated)
        return false;
    route->travels = NBRMA_WAY_UNFENCED;
    route->leaves = NBRMA_WAY_UNFENCED;
    return true;
}

extern "C" nbrma_order_step nbrma_order_step_for(unsigned in_flight, nbrma_way travels)
{
    if (in_flight == NBRMA_WAY_NONE)
        return NBRMA_ORDER_GO;
    if (in_flight == NBRMA_WAY_UCX && travels == NBRMA_WAY_UCX)
        return NBRMA_ORDER_FENCE;
    return NBRMA_ORDER_COMPLETE_FIRST;
}
