/*
 * mpich-nbrma: rkey-cache messages packed and checked (rkey_wire.h). No
 * MPICH here: unit tests build this file alone.
 */

#include <string.h>

#include "rkey_wire.h"

size_t nbrma_rkey_msg_pack(void *buf, nbrma_rkey_msg_t * msg, nbrma_rkey_msg_kind_t kind,
                           uint64_t win_id, int from, const void *rkey)
{
    msg->win_id = win_id;
    msg->from = from;
    msg->kind = (uint16_t) kind;
    memcpy(buf, msg, sizeof(*msg));
    if (msg->rkey_bytes)
        memcpy((char *) buf + sizeof(*msg), rkey, msg->rkey_bytes);
    return sizeof(*msg) + msg->rkey_bytes;
}

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
