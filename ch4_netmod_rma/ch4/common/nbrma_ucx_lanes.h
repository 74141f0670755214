/*
 * mpich-nbrma: which transports carry an endpoint's lanes (UCX's lane table).
 */
#ifndef NBRMA_UCX_LANES_H_INCLUDED
#define NBRMA_UCX_LANES_H_INCLUDED

#include <stdbool.h>
#include <stddef.h>

/* Questions about the lanes of MPICH's endpoint toward `target` of `win`,
 * asked under the window's VCI lock; answers kept per endpoint, as UCX prints
 * its whole lane table for one. An unreadable transport counts as none. */
struct MPIR_Win;

/* Of the put/get lanes: how many (*lanes), and how many UCX emulates with
 * messages the peer's CPU answers (*emulated: tcp). */
void MPIDI_NBRMA_win_rma_lanes(struct MPIR_Win *win, int target, int *lanes, int *emulated);

/* Whether lanes carry `usage` ("amo#" atomics, "rma_bw#" puts and gets, ""
 * every lane, as ucp_ep_print_info names them) and all run on a transport
 * this CPU performs within the issuing call (shared memory, CMA, loopback).
 * `usage` must be a caller's constant: its address names the answer kept. */
bool MPIDI_NBRMA_win_lanes_on_cpu(struct MPIR_Win *win, int target, const char *usage);

/* Whether a lane's shared-memory transport maps the peer's memory by key
 * (posix, sysv, xpmem: ucp_rkey_ptr); the peer may then map this one's too. */
bool MPIDI_NBRMA_win_lanes_map_memory(struct MPIR_Win *win, int target);

#endif /* NBRMA_UCX_LANES_H_INCLUDED */
