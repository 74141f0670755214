// A process's wake socket (ch4_netmod_rma/os/wake_socket.c) without MPI: a
// ring makes the owner's descriptor readable, from this process or another,
// clearing reads every ring, a ring toward an id nobody holds is refused,
// and an id is held by one socket at a time.

#include <gtest/gtest.h>

#include <poll.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdint>

#include "wake_socket.h"

namespace {

// ids no real process has (pids stay far below), one per test and process
uint64_t test_id(unsigned n)
{
    return (uint64_t{0xF0} << 56) | (uint64_t(getpid()) << 8) | n;
}

bool readable(int fd, int timeout_ms)
{
    struct pollfd p = {fd, POLLIN, 0};
    return poll(&p, 1, timeout_ms) == 1 && (p.revents & POLLIN);
}

TEST(WakeSocket, RingMakesTheOwnerReadableAndClearReadsEveryRing)
{
    const int fd = nbrma_wake_socket_open(test_id(1));
    ASSERT_GE(fd, 0);
    EXPECT_FALSE(readable(fd, 0));
    for (int i = 0; i < 5; i++)
        EXPECT_TRUE(nbrma_wake_socket_ring(test_id(1)));
    EXPECT_TRUE(readable(fd, 2000));
    nbrma_wake_socket_clear(fd);
    EXPECT_FALSE(readable(fd, 0));
    nbrma_wake_socket_close(fd);
}

TEST(WakeSocket, RingTowardAnIdNobodyHoldsIsRefused)
{
    EXPECT_FALSE(nbrma_wake_socket_ring(test_id(2)));
    const int fd = nbrma_wake_socket_open(test_id(2));
    ASSERT_GE(fd, 0);
    nbrma_wake_socket_close(fd);
    // gone with its socket
    EXPECT_FALSE(nbrma_wake_socket_ring(test_id(2)));
}

TEST(WakeSocket, OneSocketPerId)
{
    const int fd = nbrma_wake_socket_open(test_id(3));
    ASSERT_GE(fd, 0);
    EXPECT_EQ(nbrma_wake_socket_open(test_id(3)), -1);
    const int other = nbrma_wake_socket_open(test_id(4));
    EXPECT_GE(other, 0);
    nbrma_wake_socket_close(other);
    nbrma_wake_socket_close(fd);
}

TEST(WakeSocket, AnotherProcessRings)
{
    const uint64_t id = test_id(5);
    const int fd = nbrma_wake_socket_open(id);
    ASSERT_GE(fd, 0);
    const pid_t child = fork();
    ASSERT_GE(child, 0);
    if (child == 0)
        _exit(nbrma_wake_socket_ring(id) ? 0 : 1);
    int status = -1;
    ASSERT_EQ(waitpid(child, &status, 0), child);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    EXPECT_TRUE(readable(fd, 2000));
    nbrma_wake_socket_clear(fd);
    EXPECT_FALSE(readable(fd, 0));
    nbrma_wake_socket_close(fd);
}

}  // namespace
