/*
 * mpich-nbrma: which transports carry an endpoint's lanes of one kind, as
 * UCX's lane table says (read by formats/ucx_lane_table.h).
 */
#ifndef NBRMA_UCX_LANES_H_INCLUDED
#define NBRMA_UCX_LANES_H_INCLUDED

#include <ucp/api/ucp.h>
#include <stdbool.h>
#include <stddef.h>

/* Of the lanes of `ep` that carry `usage` (as ucp_ep_print_info names it:
 * "amo#" atomics, "rma_bw#" puts and gets): how many there are (*lanes) and
 * how many run on one of the `n` transports (*on). A lane whose transport
 * cannot be read counts as on none. `usage` and `transports` must be
 * constants of the caller: the answer is kept per endpoint and their
 * addresses, since reading it is slow (UCX prints the table). */
void MPIDI_NBRMA_ucx_lanes_count(ucp_ep_h ep, const char *usage, const char *const *transports,
                                 size_t n, int *lanes, int *on);

/* Of the lanes of `ep` that carry puts and gets: how many there are
 * (*lanes) and how many run where UCX emulates RDMA with messages that the
 * peer's CPU answers (*emulated: tcp). Kept as above. */
void MPIDI_NBRMA_ucx_rma_lanes_emulated(ucp_ep_h ep, int *lanes, int *emulated);

/* Whether `ep` has lanes that carry `usage` ("" for every lane) and all of
 * them run on a transport of this CPU's (shared memory, cross-memory
 * attach, loopback): a put, get or atomic there is performed by this CPU
 * within the UCX call that issues it. Kept as above. */
bool MPIDI_NBRMA_ucx_lanes_on_cpu(ucp_ep_h ep, const char *usage);

/* Whether a lane of `ep` runs on a shared-memory transport whose keys map
 * the peer's memory (posix, sysv, xpmem: ucp_rkey_ptr): the peer may then
 * map this process's UCX memory too. Kept as above. */
bool MPIDI_NBRMA_ucx_lanes_map_memory(ucp_ep_h ep);

/* The same toward `target` of window `win`, through MPICH's endpoint of the
 * window's VCI, under that VCI's lock: how many lanes carry puts and gets
 * and how many of them UCX emulates (tcp); whether every lane runs on this
 * CPU's transports. */
struct MPIR_Win;
void MPIDI_NBRMA_win_rma_lanes(struct MPIR_Win *win, int target, int *lanes, int *emulated);
bool MPIDI_NBRMA_win_lanes_on_cpu(struct MPIR_Win *win, int target);

#endif /* NBRMA_UCX_LANES_H_INCLUDED */
