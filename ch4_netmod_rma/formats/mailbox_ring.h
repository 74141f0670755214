/*
 * mpich-nbrma: the layout of a mailbox and its rings, MPICH-free so that the
 * decoder of what other processes wrote is tested without MPI
 * (test/unit/test_mailbox_ring.cpp).
 *
 * A mailbox is memory of its owner that its peers on the host attach into
 * their own address space (a System V segment, ../os/kept_segments.h) and
 * write with plain stores: a message costs the sender two stores and an
 * atomic add, and the owner reads it from its own memory in its next
 * progress call, however busy or asleep the sender is by then. One ring per
 * sender, so that every ring has a single producer and a single consumer:
 *
 *   doorbell           every sender adds 1 after each message: an owner whose
 *                      doorbell did not move has nothing to read (one load)
 *   asleep             nonzero while the owner's progress agent sleeps and
 *                      wants to be woken for a message (nbrma_mailbox_sleep)
 *                      or for its lock word (lock_word.h: when it waits for
 *                      it); the first sender after it takes it back and
 *                      wakes the owner (../os/wake_socket.h), on the
 *                      doorbell's line which the sender has just written.
 *                      NBRMA_MAILBOX_ASLEEP_FOR_PEERS: only a message that
 *                      asks the owner to serve its sender wakes it (the
 *                      agent has no work of its own in flight: a grant or
 *                      a done would wake it for what its application does
 *                      itself at its next MPI call).
 *                      NBRMA_MAILBOX_ASLEEP_AWAY: the agent sleeps with the
 *                      UCX workers unarmed (its application was inside MPI
 *                      at its last look and has left since), so a sender
 *                      of an operation that needs the owner's CPU and
 *                      travels by UCX wakes it too (UCX's own signal would
 *                      not: nbrma_mailbox_away_owner_to_wake)
 *   agent_serves       1 while the owner's progress agent alone serves what
 *                      needs its CPU: the agent entered MPI since the owner's
 *                      application last made progress (set by the agent,
 *                      taken back by the application's next progress call);
 *                      a sender that may take a path needing no CPU of the
 *                      owner's takes it then (rule R1: a small put or get as
 *                      a cross-memory copy instead of UCX's active message,
 *                      which would wait for the agent's wake-up)
 *   lock               the owner's window lock (lock_word.h), on a line of
 *                      its own
 *   ring[sender]       one per process of the owner's node
 *                      (nbrma_mailbox_rings); NBRMA_RING_SLOTS slots
 *                      {value, stamp}; message number n (from 0) goes
 *                      to slot n % NBRMA_RING_SLOTS with stamp
 *                      (n + 1) << 16 | kind << 8 | arg, stored after value
 *                      with release order; the stamp says whether the slot
 *                      holds message n, an older one (empty) or nothing
 *   ring[sender].consumed   messages the owner took; the sender reads it
 *                      before reusing a slot, and when the ring is full sends
 *                      by other means (the caller's fallback)
 *
 * Everything is 8-byte aligned and accessed with __atomic builtins, which are
 * lock-free on 8-byte words, so they are atomic between processes sharing
 * the pages.
 */

#ifndef NBRMA_MAILBOX_RING_H_INCLUDED
#define NBRMA_MAILBOX_RING_H_INCLUDED

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "nbrma_static_assert.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Messages a sender may have unread in one ring. Every protocol exchange
 * between two processes waits for an answer within a few messages (a grant
 * for a done, a barrier for a fence arrival; epochs activate one at a time),
 * so few are ever unread at once; a sender that finds the ring full sends by
 * active message instead. 8 keeps a ring at 192 bytes: a mailbox for up to
 * 20 processes of a node fits in one 4 KiB page. */
#define NBRMA_RING_SLOTS 8

typedef struct {
    uint64_t value;
    uint64_t stamp;
} nbrma_ring_slot_t;

typedef struct {
    nbrma_ring_slot_t slot[NBRMA_RING_SLOTS];
    uint64_t consumed;          /* written by the owner only */
    uint64_t pad[7];            /* the sender's slots and the owner's counter on
                                 * their own cache lines */
} nbrma_ring_t;

typedef struct {
    uint64_t doorbell;
    uint64_t asleep;
    uint64_t agent_serves;
    uint64_t pad[5];
    uint64_t lock;
    uint64_t pad2[7];
    nbrma_ring_t ring[];        /* one per process of the node (nbrma_mailbox_rings) */
} nbrma_mailbox_t;

NBRMA_STATIC_ASSERT(sizeof(nbrma_ring_t) == 192, "ring layout is shared between processes");
NBRMA_STATIC_ASSERT(sizeof(nbrma_mailbox_t) == 128, "ring layout is shared between processes");

/* Bytes of a mailbox for `nsenders` senders. */
size_t nbrma_mailbox_bytes(int nsenders);

/* Which ring of a mailbox on `node` each process writes: only processes of
 * the same node can map it, so it has one ring for each of them, in rank
 * order, and none for the others (a mailbox grows with the node, not with
 * the window). Sets ring_of[r] for the `nprocs` ranks whose nodes node_of
 * gives (-1: on another node) and returns the number of rings. */
int nbrma_mailbox_rings(const int *node_of, int nprocs, int node, int *ring_of);

/* One message as the ring carries it. */
typedef struct {
    uint8_t kind;
    uint8_t arg;
    uint64_t value;
} nbrma_ring_msg_t;

/* The sender's side of one ring (in the sender's own memory). */
typedef struct {
    uint64_t sent;              /* messages written */
    uint64_t known_consumed;    /* the owner's `consumed` as last read */
} nbrma_ring_sender_t;

/* Writes `msg` into `ring` (a peer's ring for me, mapped here) and rings the
 * mailbox's doorbell; false, and nothing written, when the ring is full. */
bool nbrma_ring_send(nbrma_mailbox_t * box, nbrma_ring_t * ring, nbrma_ring_sender_t * sender,
                     const nbrma_ring_msg_t * msg);

/* The owner's side: the number of the doorbell now; a caller that saw this
 * number before has nothing new to read. */
uint64_t nbrma_mailbox_doorbell(const nbrma_mailbox_t * box);

/* Waking a sleeping owner. The sender's doorbell increment and the owner's
 * store of `asleep` come before the other side's load of the other word
 * (sequentially consistent on both sides), so that either the sender sees
 * `asleep` or the owner sees the doorbell moved: no message is left unread
 * behind a sleeping owner.
 *
 * The owner, before its agent sleeps (`how`: one of the values below): says
 * it wants a wake-up and returns true, or returns false (and takes the wish
 * back) when the doorbell moved past `seen` meanwhile: read first. */
#define NBRMA_MAILBOX_ASLEEP 1u         /* on armed UCX workers */
#define NBRMA_MAILBOX_ASLEEP_AWAY 2u    /* with the workers unarmed */
#define NBRMA_MAILBOX_ASLEEP_FOR_PEERS 3u       /* on armed UCX workers, for
                                                 * what serves a peer only */
bool nbrma_mailbox_sleep(nbrma_mailbox_t * box, uint64_t seen, uint64_t how);
/* The owner, awake: no wake-up wanted any more. */
void nbrma_mailbox_awake(nbrma_mailbox_t * box);
/* The sender, after nbrma_ring_send (or after releasing the owner's lock
 * word): whether the owner sleeps and must be woken now (then by the
 * caller), for a store that `serves_peer` (a peer waits for the owner to
 * act on it: a lock request, a lock released while a request waits for the
 * word, an epoch the owner pulls) or not (a grant, a done, a fence arrival:
 * the owner's own synchronization). Only the first sender to see it is told
 * so: one wake-up serves every message until the owner sleeps again. A
 * store that does not serve a peer leaves a NBRMA_MAILBOX_ASLEEP_FOR_PEERS
 * mark for the next one that does. */
static inline bool nbrma_mailbox_owner_to_wake(nbrma_mailbox_t * box, bool serves_peer)
{
    uint64_t asleep = __atomic_load_n(&box->asleep, __ATOMIC_SEQ_CST);

    if (asleep == 0 || (asleep == NBRMA_MAILBOX_ASLEEP_FOR_PEERS && !serves_peer))
        return false;
    return __atomic_compare_exchange_n(&box->asleep, &asleep, 0, false, __ATOMIC_SEQ_CST,
                                       __ATOMIC_RELAXED);
}

/* The owner's application, inside MPI, as work of its own begins that a
 * grant or a done may move (a nonblocking synchronization call, an
 * operation waiting for its grant): a NBRMA_MAILBOX_ASLEEP_FOR_PEERS mark
 * becomes NBRMA_MAILBOX_ASLEEP, so that every message wakes the agent from
 * now on; true if it did. Sequentially consistent: a message whose sender
 * saw the old mark moved the doorbell before, which the caller then reads. */
static inline bool nbrma_mailbox_wake_for_all(nbrma_mailbox_t * box)
{
    uint64_t for_peers = NBRMA_MAILBOX_ASLEEP_FOR_PEERS;

    return __atomic_load_n(&box->asleep, __ATOMIC_RELAXED) == NBRMA_MAILBOX_ASLEEP_FOR_PEERS &&
        __atomic_compare_exchange_n(&box->asleep, &for_peers, NBRMA_MAILBOX_ASLEEP, false,
                                    __ATOMIC_SEQ_CST, __ATOMIC_RELAXED);
}

/* The sender of an operation that needs the owner's CPU and travels by UCX
 * (MPICH's active message, UCX's emulation of RDMA or atomics on memory it
 * cannot map): whether the owner's agent sleeps with its workers unarmed
 * (NBRMA_MAILBOX_ASLEEP_AWAY: UCX's signal would not wake it) and must be
 * woken now, by the caller; only the first such sender is told so. A hint:
 * a sender that looked just before the owner's mark leaves the operation to
 * the agent's next look unless it looks again while it waits for it (the
 * glue does, ch4/mailbox/mailbox.c). An armed sleep's mark stays for the
 * messages of the ring. */
static inline bool nbrma_mailbox_away_owner_to_wake(nbrma_mailbox_t * box)
{
    uint64_t away = NBRMA_MAILBOX_ASLEEP_AWAY;

    return __atomic_load_n(&box->asleep, __ATOMIC_RELAXED) == NBRMA_MAILBOX_ASLEEP_AWAY &&
        __atomic_compare_exchange_n(&box->asleep, &away, 0, false, __ATOMIC_SEQ_CST,
                                    __ATOMIC_RELAXED);
}

/* The owner's application, back in MPI: it serves its senders itself, so the
 * mark of a sleep away goes (an armed sleep's stays). */
static inline void nbrma_mailbox_unmark_away(nbrma_mailbox_t * box)
{
    uint64_t away = NBRMA_MAILBOX_ASLEEP_AWAY;

    (void) __atomic_compare_exchange_n(&box->asleep, &away, 0, false, __ATOMIC_RELAXED,
                                       __ATOMIC_RELAXED);
}

/* The owner: whether its progress agent alone serves what needs its CPU
 * (agent_serves). A sender, before it chooses a path that needs the owner's
 * CPU: whether that is so now (a hint: either path is correct, one only
 * waits for the agent's wake-ups). */
static inline void nbrma_mailbox_set_agent_serves(nbrma_mailbox_t * box, bool serves)
{
    __atomic_store_n(&box->agent_serves, (uint64_t) serves, __ATOMIC_RELAXED);
}

static inline bool nbrma_mailbox_agent_serves(const nbrma_mailbox_t * box)
{
    return __atomic_load_n(&box->agent_serves, __ATOMIC_RELAXED) != 0;
}

#define NBRMA_RING_EMPTY     0
#define NBRMA_RING_MESSAGE   1
#define NBRMA_RING_MALFORMED (-1)   /* a stamp no well-behaved sender writes */

/* Takes the next message of `ring` (my memory) into *msg and tells the sender
 * so: NBRMA_RING_MESSAGE, NBRMA_RING_EMPTY, or NBRMA_RING_MALFORMED (the ring
 * is left as it is; the caller reports the sender's protocol error). */
int nbrma_ring_receive(nbrma_ring_t * ring, nbrma_ring_msg_t * msg);

#ifdef __cplusplus
}
#endif

#endif /* NBRMA_MAILBOX_RING_H_INCLUDED */
