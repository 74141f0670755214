/*
 * mpich-nbrma: the wire format of the engine's protocol messages (grant, done,
 * lock request and release, fence arrival, a lock request that carries a
 * whole epoch, an access epoch the target pulls and its "applied" answer).
 * MPICH-free, so that decoders and their tests need no MPI. Fixed-width
 * fields without padding; both ends run the same build.
 */

#ifndef NBRMA_EPOCHS_WIRE_H_INCLUDED
#define NBRMA_EPOCHS_WIRE_H_INCLUDED

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "nbrma_static_assert.h"
#include "mailbox_ring.h"

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

/* Whether a message of `kind` asks its receiver to act for the sender, who
 * waits for that (a lock request or release, an access epoch to pull), as
 * opposed to moving the receiver's own synchronization (a grant, a done, a
 * fence arrival, an "applied"), which its application does itself at its
 * next MPI call: a progress agent with no work of its own in flight is
 * woken for the former only (nbrma_mailbox_owner_to_wake). */
static inline bool nbrma_ctrl_kind_serves_peer(int kind)
{
    return kind == NBRMA_CTRL_LOCK_REQUEST || kind == NBRMA_CTRL_LOCK_RELEASE ||
        kind == NBRMA_CTRL_LOCK_EPOCH || kind == NBRMA_CTRL_ACCESS_EPOCH;
}

/* The one protocol message, sent as an active-message header; `from` is the
 * sender's rank in the window. */
typedef struct {
    uint64_t win_id;
    uint64_t value;             /* grant: granted id; done/lock/release/access
                                 * epoch/applied: access id;
                                 * fence arrival: fence number, round and index
                                 * (core/include/nbrma_fence_barrier.h) */
    int32_t kind;               /* nbrma_ctrl_kind_t */
    int32_t lock_type;          /* lock request: NBRMA_LOCK_* */
    int32_t from;
    int32_t reserved;           /* zero */
} nbrma_ctrl_msg_t;

NBRMA_STATIC_ASSERT(sizeof(nbrma_ctrl_msg_t) == 32, "no padding in the wire format");
NBRMA_STATIC_ASSERT(offsetof(nbrma_ctrl_msg_t, from) == 24, "no padding in the wire format");

/* The message of `kind` that window rank `from` sends in window `win_id`. */
static inline nbrma_ctrl_msg_t nbrma_ctrl_msg_make(uint64_t win_id, int from, int kind,
                                                   uint64_t value, int lock_type)
{
    nbrma_ctrl_msg_t msg = { win_id, value, kind, lock_type, from, 0 };
    return msg;
}

/* A message as a mailbox ring carries it (nbrma_ring_msg_t: the sender is
 * the ring's; the kind, and the lock type in `arg`, a byte each, which every
 * kind and lock type fits: wire.c), and back. A ring carries messages without
 * more behind them, and pulled access epochs by their address in the
 * sender's memory (`value`); nbrma_ctrl_mail_check refuses anything else. */
static inline nbrma_ring_msg_t nbrma_ctrl_mail_of(const nbrma_ctrl_msg_t * msg)
{
    nbrma_ring_msg_t mail = { (uint8_t) msg->kind, (uint8_t) msg->lock_type, msg->value };
    return mail;
}

static inline nbrma_ctrl_msg_t nbrma_ctrl_msg_of_mail(uint64_t win_id, int from,
                                                      const nbrma_ring_msg_t * mail)
{
    return nbrma_ctrl_msg_make(win_id, from, mail->kind, mail->value, mail->arg);
}

#ifdef __cplusplus
extern "C" {
#endif

/* Whether a received protocol message may be handed to the engine (wire.c):
 * a known kind, a sender inside a window of `nprocs`, `reserved` zero, and
 * for a lock request (also one with a whole epoch) a lock type of
 * NBRMA_LOCK_EXCLUSIVE or NBRMA_LOCK_SHARED. Nonzero if so. The win_id is
 * the caller's to look up; whether the values match the receiver's state is
 * the engine's to check. */
int nbrma_ctrl_msg_check(const nbrma_ctrl_msg_t * msg, int nprocs);
/* The same for a message that arrived in a mailbox ring (nbrma_ring_msg_t
 * kind/arg/value, converted with `from` the ring's sender): a whole lock
 * epoch never travels in a ring, so NBRMA_CTRL_LOCK_EPOCH is refused too. */
int nbrma_ctrl_mail_check(const nbrma_ctrl_msg_t * msg, int nprocs);

#ifdef __cplusplus
}
#endif

#endif /* NBRMA_EPOCHS_WIRE_H_INCLUDED */
