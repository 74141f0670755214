/*
 * mpich-nbrma: the UCX configuration MPICH creates its context with (patch 0031).
 *
 * UCX 1.13 learns a peer endpoint's id lazily, by a wireup request that the
 * peer answers from its own progress. Until the answer comes, the lane the
 * request travels on is a wireup proxy that queues every operation sent on
 * it: puts, gets and atomics included. An endpoint needs the id the first
 * time it sends something that carries it (MPICH's active messages through
 * ucp_am_send_nb, a synchronous send, a rendezvous), which in MPICH 4.0.2
 * is typically an MPIDIG accumulate in the middle of an RMA epoch: every
 * later put and lock word toward that peer then waited for the peer to enter
 * MPI, a target computing outside MPI never saw them (vanilla 4.0.2 too;
 * test/mpi/iflush_target.c and iflush_all.c: an MPI_MAX accumulate, then a
 * put on another window, flushed, that the target waits for without calling
 * MPI). With RESOLVE_REMOTE_EP_ID=on UCX asks for the id when the endpoint is
 * created (MPI_Init for MPI_COMM_WORLD's peers), and the answer arrives while
 * both sides progress in MPI, long before any window exists. A
 * UCX_RESOLVE_REMOTE_EP_ID in the environment keeps precedence.
 */

#include "mpidimpl.h"
#include "mpidi_nbrma_hooks.h"
#include <ucp/api/ucp.h>
#include <stdlib.h>

void MPIDI_NBRMA_ucx_config_hook(struct ucp_config *config)
{
    if (getenv("UCX_RESOLVE_REMOTE_EP_ID") != NULL)
        return;
    /* An older UCX without the setting resolves ids as it always did. */
    (void) ucp_config_modify(config, "RESOLVE_REMOTE_EP_ID", "on");
}
