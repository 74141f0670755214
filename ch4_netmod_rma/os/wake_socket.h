/*
 * mpich-nbrma: a process's wake socket, which other processes of the host
 * write to wake its progress agent (ch4/common/nbrma_progress_agent.c)
 * where they told it something with plain stores: a message in one of its
 * windows' mailboxes (../formats/mailbox_ring.h) wakes nobody by itself. An
 * eventfd cannot be written by another process without passing it; a unix
 * datagram socket in the abstract namespace, named after the owner's id
 * (its pid), can be written by anyone who knows the id, needs no file and
 * disappears with the process. MPICH- and UCX-free, unit-tested without MPI
 * (test/unit/test_wake_socket.cpp).
 *
 * Senders write only when the owner said it sleeps (the mailbox's `asleep`
 * word), so the fast paths make no system call. A ring to an id nobody holds,
 * or to a socket already full of unread rings, is dropped: one unread ring
 * wakes the owner as well as many.
 */

#ifndef NBRMA_WAKE_SOCKET_H_INCLUDED
#define NBRMA_WAKE_SOCKET_H_INCLUDED

#include <stdbool.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Opens the wake socket of `id` (nonblocking, closed on exec): its
 * descriptor, readable while a ring is unread, or -1 (also when another
 * process holds that id's socket). */
int nbrma_wake_socket_open(uint64_t id);
/* Rings the wake socket of `id` from any thread without blocking: true when
 * the ring was delivered, false when there is no such socket or it is full
 * (then unread rings are waiting there already) or the kernel refused. */
bool nbrma_wake_socket_ring(uint64_t id);
/* Reads every ring waiting at `fd` (the owner, once woken). */
void nbrma_wake_socket_clear(int fd);
void nbrma_wake_socket_close(int fd);

#ifdef __cplusplus
}
#endif
#endif /* NBRMA_WAKE_SOCKET_H_INCLUDED */
