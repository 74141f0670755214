/*
 * mpich-nbrma: a window's mailboxes (mailbox_ring.h): small messages between
 * the processes of a window as stores into the receiver's memory.
 *
 * At creation (collective) each process takes its mailbox, a System V
 * segment kept across windows (os/kept_segments.h), and the processes
 * exchange its key; a process attaches the mailbox of each peer of its node
 * (MPICH's node ids) and then writes its messages there itself; a mailbox
 * has a ring for each process of its node only. Toward the other peers
 * (tcp, another host) and when a ring is full, nbrma_mailboxes_send says no
 * and the caller sends an active message. The component's progress hook
 * reads every mailbox of this process and hands each message to the
 * window's `deliver` function (which ring is whose, sending and reading:
 * ../../formats/mailboxes.h;
 * lock words, peers and readable pids are asked of it directly, as
 * nbrma_mailboxes_*). The mailbox also holds the window's lock word
 * (lock_word.h), which the same peers take and release with the CPU's
 * atomics. With the mailboxes the processes exchange their identities for
 * cross-memory reads (peer_memory/cross_memory.h).
 *
 * Why: a sender that stored its message needs no further progress call, and
 * the receiver reads it in any progress call of its own: a complete's done
 * or a fence arrival reaches a target whose origin computes without calling
 * MPI, and the receiver needs no active-message round through UCX.
 */

#ifndef NBRMA_MAILBOX_H_INCLUDED
#define NBRMA_MAILBOX_H_INCLUDED

#include "mailboxes.h"

typedef nbrma_mailboxes_t MPIDI_NBRMA_mailbox_t;

/* Collective over the window's processes (every one calls it, also with
 * `wanted` false). *box is NULL when this process has no mailbox (not
 * wanted, or UCX could not allocate it): then it writes to no peer and no
 * peer to it. The same collective call agrees on a window's other settings:
 * *agreed (if not NULL) goes in as this process's bits and comes out as the
 * bits every process set. Messages from peers go to deliver(ctx, ...). */
int MPIDI_NBRMA_mailbox_create(MPIR_Win * win, bool wanted, nbrma_mailboxes_deliver_t deliver,
                               void *ctx, unsigned *agreed, MPIDI_NBRMA_mailbox_t ** box);
/* Local; after it, messages peers still write are never read. */
void MPIDI_NBRMA_mailbox_free(MPIDI_NBRMA_mailbox_t * box);
/* Reads `box` now (the progress hook reads every mailbox anyway): for calls
 * that act on what arrived, without a progress call. Costs one load when
 * nothing arrived, or, `waiting` for a message in a loop, a load per ring of
 * a small mailbox (nbrma_mailboxes_poll_waiting). *arrived (may be NULL) is
 * set when a message was delivered. */
int MPIDI_NBRMA_mailbox_poll(MPIDI_NBRMA_mailbox_t * box, int *arrived, bool waiting);
/* Writes `msg` into my ring of `peer`'s mailbox (nbrma_mailboxes_send) and
 * wakes the peer's progress agent where it sleeps waiting for a message;
 * false when the caller must send otherwise. */
bool MPIDI_NBRMA_mailbox_send(MPIDI_NBRMA_mailbox_t * box, int peer, const nbrma_ring_msg_t * msg);
/* Wakes the peer's progress agent where it sleeps waiting to be woken, after
 * a store it must see: a message (MPIDI_NBRMA_mailbox_send), its lock word
 * released while it waits for it; `serves_peer`: the store asks the peer to
 * act for another process (nbrma_mailbox_owner_to_wake). */
void MPIDI_NBRMA_mailbox_wake_owner(MPIDI_NBRMA_mailbox_t * box, int peer, bool serves_peer);
/* After an operation that needs the peer's CPU and travels by UCX: wakes the
 * peer's agent where it sleeps with its workers unarmed
 * (nbrma_mailbox_away_owner_to_wake; rule P10 of nbrma_agent_pacing.h),
 * now or, for the last such peer, at this process's progress calls (its
 * application may mark its mailboxes just after this look). */
void MPIDI_NBRMA_mailbox_cpu_wanted(MPIDI_NBRMA_mailbox_t * box, int peer);

/* For the progress agent, inside MPICH. A store into a mailbox wakes nobody
 * by itself: before the agent sleeps, every mailbox of this process's
 * windows asks its senders to wake it through its wake socket
 * (../../os/wake_socket.h, named after its pid), or, false, has messages to
 * read first; once awake the agent takes the wish back. For every message
 * (`for_all`) or only for those that serve their sender
 * (NBRMA_MAILBOX_ASLEEP_FOR_PEERS), as rule P11 of nbrma_agent_pacing.h
 * says; `until_own_work`: the application's own work turns such marks into
 * marks for every message (MPIDI_NBRMA_mailboxes_own_work_begins). */
bool MPIDI_NBRMA_mailboxes_sleep(bool for_all, bool until_own_work);
void MPIDI_NBRMA_mailboxes_awake(void);
/* The application, inside MPI, as work of its own begins that a grant or a
 * done moves (a nonblocking synchronization call, an operation recorded
 * until its grant): mailboxes the agent marked for peers only wake it for
 * every message from now on, and what came meanwhile is read. One load
 * while they are not so marked. */
int MPIDI_NBRMA_mailboxes_own_work_begins(void);
/* The agent entered MPI to serve while the application is outside: every
 * mailbox tells its senders so (mailbox_ring.h, agent_serves) until the
 * application's next progress call, whose poll of the mailboxes takes it
 * back. */
void MPIDI_NBRMA_mailboxes_agent_serves(void);
/* P10, the application at its outermost exit when the agent, which found it
 * inside, asked: every mailbox asks its senders to wake the agent, which
 * sleeps with its workers unarmed, for anything that needs this process's
 * CPU, until the application's next progress call takes the marks back.
 * True, with no mark made, when a message is unread already (the caller
 * rings the agent). */
bool MPIDI_NBRMA_mailboxes_mark_away(void);
/* How many of this process's windows have a mailbox that every peer of the
 * window writes to: where that is every window, the marks above reach every
 * peer (P10 need not arm the UCX workers too). */
int MPIDI_NBRMA_mailboxes_reaching_all(void);

#endif /* NBRMA_MAILBOX_H_INCLUDED */
