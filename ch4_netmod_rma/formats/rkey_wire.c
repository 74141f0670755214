/*
 * mpich-nbrma: the check of received rkey-cache messages (rkey_wire.h). No
 * MPICH here: unit tests build this file alone.
 */

#include "rkey_wire.h"

int nbrma_rkey_msg_valid(const nbrma_rkey_msg_t * msg, int nprocs)
{
    if (msg->from < 0 || msg->from >= nprocs)
        return 0;
    switch (msg->kind) {
        case NBRMA_RKEY_QUERY:
        case NBRMA_RKEY_NONE:
        case NBRMA_RKEY_INVALIDATE:
            return msg->rkey_bytes == 0;
        case NBRMA_RKEY_REPLY:
            return msg->rkey_bytes > 0 && msg->rkey_bytes <= NBRMA_RKEY_MAX_BYTES &&
                msg->base + msg->size >= msg->base;
        default:
            return 0;
    }
}
