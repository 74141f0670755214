/*
 * mpich-nbrma: the UCX configuration MPICH creates its context with (patch
 * 0031); settings in the environment take precedence.
 * RESOLVE_REMOTE_EP_ID: UCX 1.13 learns a peer endpoint's id lazily, by a
 * wireup request the peer answers from its progress, and meanwhile queues every
 * operation on that lane, puts, gets and atomics included. The first message
 * that needs the id is typically an MPIDIG accumulate inside an epoch, so later
 * puts and lock words waited for a target computing outside MPI
 * (test/mpi/iflush_target.c). Asked at endpoint creation (MPI_Init), the id
 * arrives while both sides progress.
 *
 * MM_SEG_SIZE: with the endpoint id an 8 KiB accumulate's active message no
 * longer fits one shared-memory segment, and UCX sends it a slower way. Only
 * posix and sysv know the key, and ucp_config_modify warns at every worker
 * where neither opens: set only where UCX_TLS lets one (formats/ucx_tls_list.h).
 */

#include "mpidimpl.h"
#include "mpidi_nbrma_hooks.h"
#include "ucx_tls_list.h"
#include <ucp/api/ucp.h>
#include <stdlib.h>

/* UCX 1.13's default (8256) plus 64: that accumulate fits one segment again,
 * at 64 bytes more per segment of each receive FIFO */
#define SEG_SIZE_PADDED "8320"

void MPIDI_NBRMA_ucx_config_hook(struct ucp_config *config)
{
    static const char *const segment_transports[] = { "posix", "sysv" };

    /* an older UCX without the setting resolves ids as before */
    if (getenv("UCX_RESOLVE_REMOTE_EP_ID") == NULL)
        (void) ucp_config_modify(config, "RESOLVE_REMOTE_EP_ID", "on");
    if (getenv("UCX_MM_SEG_SIZE") == NULL && getenv("UCX_POSIX_SEG_SIZE") == NULL &&
        getenv("UCX_SYSV_SEG_SIZE") == NULL &&
        nbrma_ucx_tls_allows_any(getenv("UCX_TLS"), segment_transports, 2)) {
        (void) ucp_config_modify(config, "MM_SEG_SIZE", SEG_SIZE_PADDED);
    }
}
