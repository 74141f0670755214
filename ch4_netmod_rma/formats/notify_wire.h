/*
 * mpich-nbrma: the message that carries a notification (MPIX_Put_notify,
 * MPIX_Get_notify, MPIX_Accumulate_notify: an increment of a counter) to its
 * target, MPICH-free so that the check of what another process sent is
 * reachable by unit tests and fuzzers.
 */

#ifndef NBRMA_NOTIFY_WIRE_H_INCLUDED
#define NBRMA_NOTIFY_WIRE_H_INCLUDED

#include <stddef.h>
#include <stdint.h>
#include "nbrma_static_assert.h"

#define NBRMA_NOTIFY_MAGIC 0x544f4e4eu  /* "NNOT" */

typedef struct {
    uint64_t win_id;            /* the window's MPIDIG id: equal at all its processes */
    uint32_t magic;
    int32_t notify_id;          /* the counter's index, >= 0 */
} nbrma_notify_msg_t;

NBRMA_STATIC_ASSERT(sizeof(nbrma_notify_msg_t) == 16, "no padding in the notification");

void nbrma_notify_encode(nbrma_notify_msg_t * msg, uint64_t win_id, int32_t notify_id);
/* 0 and *msg if `bytes` at `buf` are one well-formed notification, else -1. */
int nbrma_notify_decode(const void *buf, size_t bytes, nbrma_notify_msg_t * msg);

#endif /* NBRMA_NOTIFY_WIRE_H_INCLUDED */
