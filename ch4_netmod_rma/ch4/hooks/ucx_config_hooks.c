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
 *
 * The shared-memory transports' segment (UCX_MM_SEG_SIZE, 8256 bytes in
 * UCX 1.13) bounds what one active message carries as a single copy. With
 * the endpoint id on (above) an 8 KiB accumulate's message needs 17-32 bytes
 * more than vanilla's and no longer fits: UCX then sends it another way,
 * and osu_acc_latency -w create -T mpi_int at 8 KiB took 5.0-5.7 us against
 * vanilla's 2.6 (vanilla itself with the endpoint id on: 4.9-5.0; the
 * patched MPICH with UCX_POSIX/SYSV_SEG_SIZE 8272: 5.0, 8288: 2.6-3.7). A
 * segment 64 bytes longer (SEG_SIZE_PADDED) carries as much payload as
 * vanilla's: 2.6-3.1 us against vanilla's 2.6-2.9 in alternating runs; it
 * costs 64 bytes per segment of each receive FIFO. ucp_config_modify hands
 * a key it does not know to the transports (MM_SEG_SIZE: posix and sysv),
 * and warns "invalid configuration" at every worker where none of them
 * opens (UCX_TLS=tcp,self): the key is set only where UCX_TLS lets one open
 * (formats/ucx_tls_list.h). Segment sizes in the environment keep
 * precedence.
 */

#include "mpidimpl.h"
#include "mpidi_nbrma_hooks.h"
#include "ucx_tls_list.h"
#include <ucp/api/ucp.h>
#include <stdlib.h>

/* UCX 1.13's default segment plus the headers vanilla MPICH leaves room for */
#define SEG_SIZE_PADDED "8320"

void MPIDI_NBRMA_ucx_config_hook(struct ucp_config *config)
{
    static const char *const segment_transports[] = { "posix", "sysv" };

    /* An older UCX without the setting resolves ids as it always did. */
    if (getenv("UCX_RESOLVE_REMOTE_EP_ID") == NULL)
        (void) ucp_config_modify(config, "RESOLVE_REMOTE_EP_ID", "on");
    if (getenv("UCX_MM_SEG_SIZE") == NULL && getenv("UCX_POSIX_SEG_SIZE") == NULL &&
        getenv("UCX_SYSV_SEG_SIZE") == NULL &&
        nbrma_ucx_tls_allows_any(getenv("UCX_TLS"), segment_transports, 2)) {
        (void) ucp_config_modify(config, "MM_SEG_SIZE", SEG_SIZE_PADDED);
    }
}
