/*
 * mpich-nbrma: the wire format of the rkey cache's messages (rkey_cache.c),
 * MPICH-free so that packing them and the check of what a peer sends are
 * reachable by tests.
 * Fixed-width fields without padding; a reply's packed rkey follows the
 * message in the same active-message header.
 */

#ifndef NBRMA_RKEY_WIRE_H_INCLUDED
#define NBRMA_RKEY_WIRE_H_INCLUDED

#include <stddef.h>
#include <stdint.h>
#include "nbrma_static_assert.h"

typedef enum {
    NBRMA_RKEY_QUERY = 1,       /* origin -> target: which region holds `addr`? */
    NBRMA_RKEY_REPLY,           /* target -> origin: base, size, generation, rkey follows */
    NBRMA_RKEY_NONE,            /* target -> origin: no registered region holds it */
    NBRMA_RKEY_INVALIDATE       /* target -> origin: `generation` was detached */
} nbrma_rkey_msg_kind_t;

/* The largest packed rkey a reply carries (MPIX_MAX_MEMHANDLE_SIZE). */
#define NBRMA_RKEY_MAX_BYTES 512

typedef struct {
    uint64_t win_id;
    uint64_t addr;
    uint64_t base, size, generation;
    int32_t from;
    uint16_t kind;
    uint16_t rkey_bytes;
} nbrma_rkey_msg_t;

NBRMA_STATIC_ASSERT(sizeof(nbrma_rkey_msg_t) == 48, "no padding in the wire format");

/* The most bytes a message takes: the message and a reply's rkey. */
#define NBRMA_RKEY_MSG_MAX_BYTES (sizeof(nbrma_rkey_msg_t) + NBRMA_RKEY_MAX_BYTES)

/* Writes `msg` as `kind` of window `win_id` from rank `from` (those fields
 * are set in *msg too), then its msg->rkey_bytes of `rkey` (at most
 * NBRMA_RKEY_MAX_BYTES), into `buf` of NBRMA_RKEY_MSG_MAX_BYTES. Returns
 * the bytes written. */
size_t nbrma_rkey_msg_pack(void *buf, nbrma_rkey_msg_t * msg, nbrma_rkey_msg_kind_t kind,
                           uint64_t win_id, int from, const void *rkey);

/* Whether a received message may be acted on: a known kind, a sender inside
 * a window of `nprocs`, an rkey only in a reply and at most the maximum, and
 * a region that does not wrap around the address space. */
int nbrma_rkey_msg_valid(const nbrma_rkey_msg_t * msg, int nprocs);

#endif /* NBRMA_RKEY_WIRE_H_INCLUDED */
