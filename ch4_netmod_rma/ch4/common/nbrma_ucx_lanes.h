/*
 * mpich-nbrma: which transports carry an endpoint's lanes of one kind, as
 * UCX's lane table says (read by formats/ucx_lane_table.h).
 */
#ifndef NBRMA_UCX_LANES_H_INCLUDED
#define NBRMA_UCX_LANES_H_INCLUDED

#include <stdbool.h>
#include <stddef.h>

/* The questions asked of the lanes of MPICH's endpoint toward `target` of
 * window `win` (the window's VCI, asked under its lock). Each answer is kept
 * per endpoint, since reading it is slow (UCX prints its lane table, about
 * 7 us); a lane whose transport cannot be read counts as on none. */
struct MPIR_Win;

/* Of the lanes that carry puts and gets: how many there are (*lanes) and how
 * many run where UCX emulates RDMA with messages that the peer's CPU
 * answers (*emulated: tcp). */
void MPIDI_NBRMA_win_rma_lanes(struct MPIR_Win *win, int target, int *lanes, int *emulated);

/* Whether there are lanes that carry `usage` (as ucp_ep_print_info names it:
 * "amo#" atomics, "rma_bw#" puts and gets, "" every lane) and all of them run
 * on a transport of this CPU's (shared memory, cross-memory attach,
 * loopback): a put, get or atomic there is performed by this CPU within the
 * UCX call that issues it. `usage` must be a constant of the caller's: its
 * address names the answer kept. */
bool MPIDI_NBRMA_win_lanes_on_cpu(struct MPIR_Win *win, int target, const char *usage);

/* Whether a lane runs on a shared-memory transport whose keys map the peer's
 * memory (posix, sysv, xpmem: ucp_rkey_ptr): the peer may then map this
 * process's UCX memory too. */
bool MPIDI_NBRMA_win_lanes_map_memory(struct MPIR_Win *win, int target);

#endif /* NBRMA_UCX_LANES_H_INCLUDED */
