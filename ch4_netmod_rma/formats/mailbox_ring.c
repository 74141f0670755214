/*
 * mpich-nbrma: sending into and reading from mailbox rings (mailbox_ring.h).
 * Single producer and single consumer per ring: the sender orders its value
 * before its stamp (release), the owner reads the stamp before the value
 * (acquire) and publishes `consumed` only after it copied the message out, so
 * that the sender never overwrites a slot the owner still reads.
 */

#include "mailbox_ring.h"

#define STAMP_SEQ_SHIFT 16

size_t nbrma_mailbox_bytes(int nsenders)
{
    return sizeof(nbrma_mailbox_t) + (size_t) (nsenders > 0 ? nsenders : 0) * sizeof(nbrma_ring_t);
}

int nbrma_mailbox_rings(const int *node_of, int nprocs, int node, int *ring_of)
{
    int rings = 0;

    for (int r = 0; r < nprocs; r++)
        ring_of[r] = node_of[r] == node ? rings++ : -1;
    return rings;
}

static uint64_t stamp_of(uint64_t n, const nbrma_ring_msg_t * msg)
{
    return (n + 1) << STAMP_SEQ_SHIFT | (uint64_t) msg->kind << 8 | msg->arg;
}

bool nbrma_ring_send(nbrma_mailbox_t * box, nbrma_ring_t * ring, nbrma_ring_sender_t * sender,
                     const nbrma_ring_msg_t * msg)
{
    uint64_t n = sender->sent;
    nbrma_ring_slot_t *slot = &ring->slot[n % NBRMA_RING_SLOTS];

    if (n - sender->known_consumed >= NBRMA_RING_SLOTS) {
        sender->known_consumed = __atomic_load_n(&ring->consumed, __ATOMIC_ACQUIRE);
        /* a consumed count beyond what was sent is the owner's corruption:
         * treat the ring as full rather than overwrite unread slots */
        if (sender->known_consumed > n || n - sender->known_consumed >= NBRMA_RING_SLOTS)
            return false;
    }
    __atomic_store_n(&slot->value, msg->value, __ATOMIC_RELAXED);
    __atomic_store_n(&slot->stamp, stamp_of(n, msg), __ATOMIC_RELEASE);
    sender->sent = n + 1;
    /* sequentially consistent, before the caller looks at `asleep`
     * (nbrma_mailbox_owner_to_wake): on x86 the same locked add */
    __atomic_fetch_add(&box->doorbell, 1, __ATOMIC_SEQ_CST);
    return true;
}

uint64_t nbrma_mailbox_doorbell(const nbrma_mailbox_t * box)
{
    return __atomic_load_n(&box->doorbell, __ATOMIC_ACQUIRE);
}

bool nbrma_mailbox_sleep(nbrma_mailbox_t * box, uint64_t seen, uint64_t how)
{
    __atomic_store_n(&box->asleep, how, __ATOMIC_SEQ_CST);
    if (__atomic_load_n(&box->doorbell, __ATOMIC_SEQ_CST) == seen) {
        /* and whatever the caller reads next (a lock word it waits for and
         * tries again) after the mark too */
        __atomic_thread_fence(__ATOMIC_SEQ_CST);
        return true;
    }
    nbrma_mailbox_awake(box);
    return false;
}

void nbrma_mailbox_awake(nbrma_mailbox_t * box)
{
    __atomic_store_n(&box->asleep, 0, __ATOMIC_RELAXED);
}

int nbrma_ring_receive(nbrma_ring_t * ring, nbrma_ring_msg_t * msg)
{
    uint64_t n = ring->consumed;        /* mine: only I write it */
    nbrma_ring_slot_t *slot = &ring->slot[n % NBRMA_RING_SLOTS];
    uint64_t stamp = __atomic_load_n(&slot->stamp, __ATOMIC_ACQUIRE);
    uint64_t seq = stamp >> STAMP_SEQ_SHIFT;

    /* nothing written yet, or message n - SLOTS that I took already */
    if (seq == 0 || (n >= NBRMA_RING_SLOTS && seq == n + 1 - NBRMA_RING_SLOTS))
        return NBRMA_RING_EMPTY;
    if (seq != n + 1)
        return NBRMA_RING_MALFORMED;
    msg->value = __atomic_load_n(&slot->value, __ATOMIC_RELAXED);
    msg->kind = (uint8_t) (stamp >> 8);
    msg->arg = (uint8_t) stamp;
    __atomic_store_n(&ring->consumed, n + 1, __ATOMIC_RELEASE);
    return NBRMA_RING_MESSAGE;
}
