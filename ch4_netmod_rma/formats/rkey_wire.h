/*
 * mpich-nbrma: the wire format of the rkey cache's messages (rkey_cache.c),
 * MPICH-free so that the check of what a peer sends is reachable by tests.
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

/* Whether a received message may be acted on: a known kind, a sender inside
 * a window of `nprocs`, an rkey only in a reply and at most the maximum, and
 * a region that does not wrap around the address space. */
int nbrma_rkey_msg_valid(const nbrma_rkey_msg_t * msg, int nprocs);

#endif /* NBRMA_RKEY_WIRE_H_INCLUDED */
