// The route of an RMA operation and the ordering step before an ordered one
// (include/nbrma_route.h). Rules, in the order they are applied:
//
//   R1 a put or get the cross-memory path may copy goes there: the origin's
//      CPU copies it (no target CPU), performed when the call returns;
//   R2 an accumulate that fits the window's UCX atomics goes to them;
//   R3 an accumulate of 1- or 2-byte integers that fits goes to the narrow
//      atomics, but only where the caller may wait: their compare-and-swap
//      loops wait for UCX's answers, which a replay inside a UCX callback
//      must not (it keeps MPICH's path, atomic with them by patch 0025);
//   R4 anything else goes through MPICH's code, which travels by UCX RDMA
//      unless it sends an active message or the target is the caller (a
//      local copy);
//   O1 an ordered operation that travels by UCX behind UCX operations only
//      needs a worker fence; nothing in flight needs nothing; anything else
//      waits until what is in flight completed.

#include "nbrma_route.h"

extern "C" nbrma_route nbrma_route_of(nbrma_op_facts f)
{
    if (f.put_or_get && f.cross_memory_fits)
        return {NBRMA_PATH_CROSS_MEMORY, NBRMA_WAY_UNFENCED, NBRMA_WAY_NONE};
    if (!f.put_or_get && f.ucx_atomics_fit)
        return {NBRMA_PATH_UCX_ATOMICS, NBRMA_WAY_UCX, NBRMA_WAY_UCX};
    if (!f.put_or_get && f.narrow_atomics_fit && f.may_wait)
        return {NBRMA_PATH_NARROW_ATOMICS, NBRMA_WAY_UCX, NBRMA_WAY_NONE};
    nbrma_way way = f.to_self || f.mpich_sends_am ? NBRMA_WAY_UNFENCED : NBRMA_WAY_UCX;
    return {NBRMA_PATH_MPICH, way, way};
}

extern "C" nbrma_order_step nbrma_order_step_for(unsigned in_flight, nbrma_way travels)
{
    if (in_flight == NBRMA_WAY_NONE)
        return NBRMA_ORDER_GO;
    if (in_flight == NBRMA_WAY_UCX && travels == NBRMA_WAY_UCX)
        return NBRMA_ORDER_FENCE;
    return NBRMA_ORDER_COMPLETE_FIRST;
}
