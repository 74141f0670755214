/*
 * mpich-nbrma: a thread's sleep on a set of event descriptors plus a
 * doorbell that other threads ring to wake it (an eventfd in an epoll set),
 * for the progress agent (ch4/common/nbrma_progress_agent.c), which watches
 * the UCX workers' descriptors this way. MPICH- and UCX-free, so that its
 * waits and wake-ups are unit-tested without MPI (test/unit/test_doorbell.cpp).
 *
 * A ring is never lost: rung while nobody waits, it wakes the next wait at
 * once. A wait that reports the ring also clears it (several rings before
 * one wait wake it once).
 */

#ifndef NBRMA_DOORBELL_H_INCLUDED
#define NBRMA_DOORBELL_H_INCLUDED

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct {
    int epoll_fd;               /* the doorbell and the watched descriptors */
    int bell_fd;                /* the eventfd */
    int away_fd;                /* the doorbell and the descriptors watched away */
} nbrma_doorbell_t;

/* A doorbell not open (nbrma_doorbell_close leaves it so too). */
#define NBRMA_DOORBELL_CLOSED {.epoll_fd = -1,.bell_fd = -1,.away_fd = -1 }

/* Opens the doorbell (descriptors closed on exec); 0, or -1 with nothing open. */
int nbrma_doorbell_open(nbrma_doorbell_t * d);
/* Adds `fd` to what nbrma_doorbell_wait_all wakes on (readable) for good;
 * 0 or -1. For a descriptor that other threads make readable often (a UCX
 * worker's, at each message over tcp), pass it to the waits instead
 * (nbrma_doorbell_wait_all's `also`, nbrma_doorbell_enable_once): while a
 * descriptor is in an epoll set, whoever makes it readable walks the
 * kernel's chain of nested epoll sets up to this one, waiter or not (OSU 7.4
 * put + flush latency over tcp, 8 B, agent on / off: 1.07x with the
 * workers' descriptors registered for good, 1.03-1.04x without). */
int nbrma_doorbell_watch(nbrma_doorbell_t * d, int fd);
/* Rings: any thread, any time while it is open. */
void nbrma_doorbell_ring(const nbrma_doorbell_t * d);

/* The waits return > 0 when woken (by the ring, or for wait_all a watched
 * descriptor), 0 when the time ran out or a signal interrupted, and -1 on
 * another error of the kernel's. */

/* Sleeps until the ring, a watched descriptor or one of the `n_also` of
 * `also` (watched during this wait only), at most `timeout_ms` (-1: no
 * limit). */
int nbrma_doorbell_wait_all(const nbrma_doorbell_t * d, const int *also, int n_also,
                            int timeout_ms);
/* Sleeps until the ring alone, at most `timeout_ns` (NBRMA_DOORBELL_FOREVER:
 * no limit): the watched descriptors may stay readable meanwhile. */
int nbrma_doorbell_wait_bell(const nbrma_doorbell_t * d, uint64_t timeout_ns);
#define NBRMA_DOORBELL_FOREVER UINT64_MAX

/* The sleep away, a second set beside the doorbell: the agent sleeps there
 * while its application is inside MPI and progresses by itself, so that the
 * descriptors that the application's own progress makes readable (UCX's
 * workers) must not wake it, except once after the application armed them
 * as it left. nbrma_doorbell_watch_away adds a descriptor (a wake socket)
 * for good: it wakes the sleep away while readable. One enabled by
 * nbrma_doorbell_enable_once (any thread, while the sleep lasts too; one
 * readable already wakes it at once) wakes it once, and is in the set until
 * nbrma_doorbell_disable_once takes it out, whether it woke it or not
 * (nbrma_doorbell_watch says why it must not stay). 0 or -1 each. */
int nbrma_doorbell_watch_away(nbrma_doorbell_t * d, int fd);
int nbrma_doorbell_enable_once(const nbrma_doorbell_t * d, int fd);
int nbrma_doorbell_disable_once(const nbrma_doorbell_t * d, int fd);
/* Sleeps until the ring or a descriptor of the away set (not read here), at
 * most `timeout_ns` (in whole milliseconds, rounded up): 1 for the ring,
 * NBRMA_DOORBELL_WOKEN_BY_FD with *woken_fd for a descriptor alone. */
int nbrma_doorbell_wait_away(const nbrma_doorbell_t * d, uint64_t timeout_ns, int *woken_fd);
#define NBRMA_DOORBELL_WOKEN_BY_FD 2

void nbrma_doorbell_close(nbrma_doorbell_t * d);

#ifdef __cplusplus
}
#endif
#endif /* NBRMA_DOORBELL_H_INCLUDED */
