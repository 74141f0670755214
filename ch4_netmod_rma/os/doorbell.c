/*
 * mpich-nbrma: a sleep on event descriptors plus a doorbell (doorbell.h).
 */

#define _GNU_SOURCE     /* ppoll */
#include "doorbell.h"

#include <errno.h>
#include <stdbool.h>
#include <poll.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

/* Events taken per wait: the waiter only needs to know that it woke and
 * whether the ring was among them; the rest stay ready for the next wait. */
#define EVENTS_PER_WAIT 4

static int watch(int epoll_fd, int fd)
{
    struct epoll_event ev = {.events = EPOLLIN };

    ev.data.fd = fd;
    return epoll_ctl(epoll_fd, EPOLL_CTL_ADD, fd, &ev) == 0 ? 0 : -1;
}

int nbrma_doorbell_open(nbrma_doorbell_t * d)
{
    d->epoll_fd = epoll_create1(EPOLL_CLOEXEC);
    d->away_fd = epoll_create1(EPOLL_CLOEXEC);
    /* nonblocking: clearing a doorbell that did not ring must not block */
    d->bell_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    if (d->epoll_fd < 0 || d->away_fd < 0 || d->bell_fd < 0 ||
        watch(d->epoll_fd, d->bell_fd) != 0 || watch(d->away_fd, d->bell_fd) != 0) {
        nbrma_doorbell_close(d);
        return -1;
    }
    return 0;
}

int nbrma_doorbell_watch(nbrma_doorbell_t * d, int fd)
{
    return watch(d->epoll_fd, fd);
}

void nbrma_doorbell_ring(const nbrma_doorbell_t * d)
{
    uint64_t ring = 1;

    (void) !write(d->bell_fd, &ring, sizeof(ring));
}

/* An eventfd read empties it at once, however often it rang. */
static void clear(const nbrma_doorbell_t * d)
{
    uint64_t rings;

    (void) !read(d->bell_fd, &rings, sizeof(rings));
}

/* One wait of the epoll set `set`: the number of descriptors that woke it
 * (0: the time ran out or a signal interrupted, -1: an error). The ring is
 * cleared (*rang); the other descriptors need no read: their owners clear
 * them (a UCX worker's, arming it again); *other is one of them, or -1. */
static int wait_set(const nbrma_doorbell_t * d, int set, int timeout_ms, bool *rang, int *other)
{
    struct epoll_event events[EVENTS_PER_WAIT];
    int n = epoll_wait(set, events, EVENTS_PER_WAIT, timeout_ms);

    *rang = false;
    *other = -1;
    if (n < 0)
        return errno == EINTR ? 0 : -1;
    for (int i = 0; i < n; i++) {
        if (events[i].data.fd != d->bell_fd)
            *other = events[i].data.fd;
        else if (!*rang) {
            clear(d);
            *rang = true;
        }
    }
    return n;
}

/* Takes `fd` out of the epoll set `set`; 0 also when it was not in it. */
static int unwatch(int set, int fd)
{
    return epoll_ctl(set, EPOLL_CTL_DEL, fd, NULL) == 0 || errno == ENOENT ? 0 : -1;
}

int nbrma_doorbell_wait_all(const nbrma_doorbell_t * d, const int *also, int n_also,
                            int timeout_ms)
{
    bool rang;
    int other, n, added = 0;

    while (added < n_also && watch(d->epoll_fd, also[added]) == 0)
        added++;
    if (added == n_also)
        n = wait_set(d, d->epoll_fd, timeout_ms, &rang, &other);
    else
        n = -1;
    while (added > 0)
        if (unwatch(d->epoll_fd, also[--added]) != 0)
            n = -1;
    return n;
}

int nbrma_doorbell_wait_bell(const nbrma_doorbell_t * d, uint64_t timeout_ns)
{
    struct pollfd bell = {.fd = d->bell_fd,.events = POLLIN };
    struct timespec t = {.tv_sec = (time_t) (timeout_ns / 1000000000u),
        .tv_nsec = (long) (timeout_ns % 1000000000u)
    };

    if (ppoll(&bell, 1, timeout_ns == NBRMA_DOORBELL_FOREVER ? NULL : &t, NULL) < 0)
        return errno == EINTR ? 0 : -1;
    if (!(bell.revents & POLLIN))
        return 0;
    clear(d);
    return 1;
}

int nbrma_doorbell_watch_away(nbrma_doorbell_t * d, int fd)
{
    return watch(d->away_fd, fd);
}

int nbrma_doorbell_enable_once(const nbrma_doorbell_t * d, int fd)
{
    struct epoll_event ev = {.events = EPOLLIN | EPOLLONESHOT };

    ev.data.fd = fd;
    /* registered still (an enabling not yet taken back, fired or not): made
     * anew; another thread may take it back between the two calls */
    for (int tries = 0; tries < 3; tries++) {
        if (epoll_ctl(d->away_fd, EPOLL_CTL_ADD, fd, &ev) == 0)
            return 0;
        if (errno != EEXIST)
            return -1;
        if (epoll_ctl(d->away_fd, EPOLL_CTL_MOD, fd, &ev) == 0)
            return 0;
        if (errno != ENOENT)
            return -1;
    }
    return -1;
}

int nbrma_doorbell_disable_once(const nbrma_doorbell_t * d, int fd)
{
    return unwatch(d->away_fd, fd);
}

int nbrma_doorbell_wait_away(const nbrma_doorbell_t * d, uint64_t timeout_ns, int *woken_fd)
{
    bool rang;
    int n = wait_set(d, d->away_fd, timeout_ns == NBRMA_DOORBELL_FOREVER ? -1 :
                     (int) ((timeout_ns + 999999u) / 1000000u), &rang, woken_fd);

    return n <= 0 ? n : rang ? 1 : NBRMA_DOORBELL_WOKEN_BY_FD;
}

void nbrma_doorbell_close(nbrma_doorbell_t * d)
{
    if (d->epoll_fd >= 0)
        close(d->epoll_fd);
    if (d->away_fd >= 0)
        close(d->away_fd);
    if (d->bell_fd >= 0)
        close(d->bell_fd);
    d->epoll_fd = d->bell_fd = d->away_fd = -1;
}
