/*
 * mpich-nbrma: the wire format of the engine's protocol messages (grant, done,
 * lock request and release, fence arrival, a lock request that carries a
 * whole epoch, an access epoch the target pulls and its "applied" answer).
 * MPICH-free, so that decoders and their tests need no MPI. Fixed-width
 * fields without padding; both ends run the same build.
 */

#ifndef NBRMA_EPOCHS_WIRE_H_INCLUDED
#define NBRMA_EPOCHS_WIRE_H_INCLUDED

#include <stddef.h>
#include <stdint.h>
#include "nbrma_static_assert.h"

typedef enum {
    NBRMA_CTRL_GRANT,
    NBRMA_CTRL_DONE,
    NBRMA_CTRL_LOCK_REQUEST,
    NBRMA_CTRL_LOCK_RELEASE,
    NBRMA_CTRL_FENCE_ARRIVAL,
    NBRMA_CTRL_LOCK_EPOCH,      /* a lock request with a whole epoch behind it */
    NBRMA_CTRL_ACCESS_EPOCH,    /* an access epoch for the target to pull */
    NBRMA_CTRL_ACCESS_APPLIED   /* the target pulled it: value is its access id */
} nbrma_ctrl_kind_t;

/* The one protocol message, sent as an active-message header; `from` is the
 * sender's rank in the window. */
typedef struct {
    uint64_t win_id;
    uint64_t value;             /* grant: granted id; done/lock/release/access
                                 * epoch/applied: access id;
                                 * fence arrival: fence number */
    int32_t kind;               /* nbrma_ctrl_kind_t */
    int32_t lock_type;          /* lock request: NBRMA_LOCK_* */
    int32_t from;
    int32_t reserved;           /* zero */
} nbrma_ctrl_msg_t;

NBRMA_STATIC_ASSERT(sizeof(nbrma_ctrl_msg_t) == 32, "no padding in the wire format");
NBRMA_STATIC_ASSERT(offsetof(nbrma_ctrl_msg_t, from) == 24, "no padding in the wire format");

#endif /* NBRMA_EPOCHS_WIRE_H_INCLUDED */
