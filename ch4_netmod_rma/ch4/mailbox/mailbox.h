/*
 * mpich-nbrma: a window's mailboxes: small messages between the processes of a
 * node as stores into the receiver's memory. The sender needs no further
 * progress call and the receiver reads them in any of its own: a complete's
 * done or a fence arrival reaches a target whose origin computes outside MPI,
 * with no active-message round through UCX. Toward other peers (another host,
 * tcp) or into a full ring, sending fails and the caller sends an active
 * message. A mailbox also holds the window's lock word (formats/lock_word.h).
 * Rings: ../../formats/mailboxes.h; memory kept across windows: os/kept_segments.h.
 */

#ifndef NBRMA_MAILBOX_H_INCLUDED
#define NBRMA_MAILBOX_H_INCLUDED

#include "mailboxes.h"

typedef nbrma_mailboxes_t MPIDI_NBRMA_mailbox_t;

/* Collective, also with `wanted` false. *box NULL: no mailbox (not wanted, or no
 * shared segment), so no peer writes to it nor it to any. *agreed (may be
 * NULL): this process's bits in, the bits every process set out. Messages go
 * to deliver(ctx, ...). */
int MPIDI_NBRMA_mailbox_create(MPIR_Win * win, bool wanted, nbrma_mailboxes_deliver_t deliver,
                               void *ctx, unsigned *agreed, MPIDI_NBRMA_mailbox_t ** box);
/* Local; after it, messages peers still write are never read. */
void MPIDI_NBRMA_mailbox_free(MPIDI_NBRMA_mailbox_t * box);
/* Reads `box` now, for calls that act on what arrived: one load if nothing did,
 * or one per ring of a small mailbox when `waiting` in a loop. *arrived (may
 * be NULL): a message was delivered. */
int MPIDI_NBRMA_mailbox_poll(MPIDI_NBRMA_mailbox_t * box, int *arrived, bool waiting);
/* Writes `msg` into my ring of `peer`'s mailbox and wakes the peer's agent if
 * it sleeps waiting for one; false: the caller must send otherwise. */
bool MPIDI_NBRMA_mailbox_send(MPIDI_NBRMA_mailbox_t * box, int peer, const nbrma_ring_msg_t * msg);
/* Wakes the peer's agent if it sleeps waiting for a store it must see (a
 * message, its lock word released); `serves_peer`: the store asks the peer to
 * act for another process (nbrma_mailbox_owner_to_wake). */
void MPIDI_NBRMA_mailbox_wake_owner(MPIDI_NBRMA_mailbox_t * box, int peer, bool serves_peer);
/* After a UCX operation that needs the peer's CPU: wakes the peer's agent if it
 * sleeps with workers unarmed (rule P10 of nbrma_agent_pacing.h), now and, for
 * the last such peer, at each progress call (it may mark its mailboxes later). */
void MPIDI_NBRMA_mailbox_cpu_wanted(MPIDI_NBRMA_mailbox_t * box, int peer);

/* The agent, inside MPICH: a store wakes nobody by itself, so before it sleeps
 * every mailbox asks its senders to ring its wake socket (os/wake_socket.h),
 * or, false, has messages to read first. For every message (`for_all`) or
 * those that serve their sender (rule P11); `until_own_work`: such marks last
 * until the application's own work begins (below). */
bool MPIDI_NBRMA_mailboxes_sleep(bool for_all, bool until_own_work);
void MPIDI_NBRMA_mailboxes_awake(void);
/* The application's own work begins that a grant or done moves (nonblocking
 * synchronization, an operation recorded until its grant): peers-only marks
 * now cover every message, and what came meanwhile is read. */
int MPIDI_NBRMA_mailboxes_own_work_begins(void);
/* The agent entered MPI to serve while the application is outside: every
 * mailbox says so (agent_serves, formats/mailbox_ring.h) until the
 * application's next progress call. */
void MPIDI_NBRMA_mailboxes_agent_serves(void);
/* P10, at the application's outermost exit: senders wake the agent for all that
 * needs this CPU until the next progress call. True, unmarked, if a message is
 * unread already (the caller rings). */
bool MPIDI_NBRMA_mailboxes_mark_away(void);
/* How many of this process's windows have a mailbox every peer writes to: if
 * all of them, the marks above reach every peer (P10 need not arm UCX too). */
int MPIDI_NBRMA_mailboxes_reaching_all(void);

#endif /* NBRMA_MAILBOX_H_INCLUDED */
