/*
 * mpich-nbrma: a process's wake socket (wake_socket.h).
 */

#include "wake_socket.h"

#include <errno.h>
#include <inttypes.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

/* The abstract address of `id`'s socket (sun_path[0] == 0) and its length. */
static socklen_t address_of(uint64_t id, struct sockaddr_un *addr)
{
    int n;

    memset(addr, 0, sizeof(*addr));
    addr->sun_family = AF_UNIX;
    n = snprintf(addr->sun_path + 1, sizeof(addr->sun_path) - 1, "mpich-nbrma-wake.%" PRIu64,
                 id);
    return (socklen_t) (offsetof(struct sockaddr_un, sun_path) + 1 + (size_t) n);
}

static int new_socket(void)
{
    return socket(AF_UNIX, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
}

int nbrma_wake_socket_open(uint64_t id)
{
    struct sockaddr_un addr;
    socklen_t len = address_of(id, &addr);
    int fd = new_socket();

    if (fd >= 0 && bind(fd, (struct sockaddr *) &addr, len) != 0) {
        close(fd);
        fd = -1;
    }
    return fd;
}

/* One unbound socket per process for every ring (made at the first one; a
 * thread that loses the race to make it closes its own). */
static int ringing_socket(void)
{
    static int shared_fd = -1;
    int fd = __atomic_load_n(&shared_fd, __ATOMIC_ACQUIRE), expected = -1;

    if (fd >= 0)
        return fd;
    fd = new_socket();
    if (fd < 0)
        return -1;
    if (!__atomic_compare_exchange_n(&shared_fd, &expected, fd, false, __ATOMIC_ACQ_REL,
                                     __ATOMIC_ACQUIRE)) {
        close(fd);
        fd = expected;
    }
    return fd;
}

bool nbrma_wake_socket_ring(uint64_t id)
{
    struct sockaddr_un addr;
    socklen_t len = address_of(id, &addr);
    int fd = ringing_socket();
    const char ring = 1;

    return fd >= 0 && sendto(fd, &ring, 1, MSG_DONTWAIT, (struct sockaddr *) &addr, len) == 1;
}

void nbrma_wake_socket_clear(int fd)
{
    char rings[64];

    while (recv(fd, rings, sizeof(rings), MSG_DONTWAIT) > 0)
        ;
}

void nbrma_wake_socket_close(int fd)
{
    if (fd >= 0)
        close(fd);
}
