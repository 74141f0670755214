// The progress agent's sleep (ch4_netmod_rma/os/doorbell.c) without MPI: a
// ring from another thread wakes either wait long before its timeout, a wait
// without a ring lasts its whole timeout, a ring is neither lost nor counted
// twice, a watched descriptor wakes the full wait but not the bell's, and the
// sleep away wakes on its own descriptors, those watched once only when enabled.
// A descriptor watched for one wait or enabled once is out of the epoll set
// afterwards (doorbell.h: while in it, each event walks up to the set).

#include <gtest/gtest.h>

#include <sys/eventfd.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>

#include "doorbell.h"

namespace {

using clock_type = std::chrono::steady_clock;
using std::chrono::milliseconds;

constexpr uint64_t ms_ns = 1000000;
// a ring must wake a wait well within this (the waits below last 10 s unrung)
constexpr auto wake_limit = std::chrono::seconds(2);

struct open_doorbell {
    nbrma_doorbell_t d = NBRMA_DOORBELL_CLOSED;
    open_doorbell() { EXPECT_EQ(nbrma_doorbell_open(&d), 0); }
    ~open_doorbell() { nbrma_doorbell_close(&d); }
};

// Whether `fd` is in the epoll set `epoll_fd` (the kernel's fdinfo lists
// one "tfd:" line per descriptor in the set).
bool in_set(int epoll_fd, int fd)
{
    std::ifstream info("/proc/self/fdinfo/" + std::to_string(epoll_fd));
    std::string line;
    EXPECT_TRUE(info.good());
    while (std::getline(info, line)) {
        std::istringstream words(line);
        std::string key;
        int tfd = -1;
        if (words >> key >> tfd && key == "tfd:" && tfd == fd)
            return true;
    }
    return false;
}

// Rings from another thread after `delay`, while the caller waits.
template <typename Wait> clock_type::duration ring_during(const nbrma_doorbell_t *d, Wait wait,
                                                          int *woken)
{
    auto start = clock_type::now();
    std::thread ringer([d] {
        std::this_thread::sleep_for(milliseconds(20));
        nbrma_doorbell_ring(d);
    });
    *woken = wait();
    auto took = clock_type::now() - start;
    ringer.join();
    return took;
}

TEST(Doorbell, ARingFromAnotherThreadWakesTheFullWait)
{
    open_doorbell b;
    int woken = 0;
    auto took = ring_during(
        &b.d, [&] { return nbrma_doorbell_wait_all(&b.d, nullptr, 0, 10000); }, &woken);
    EXPECT_EQ(woken, 1);
    EXPECT_GE(took, milliseconds(20));  // not before the ring
    EXPECT_LT(took, wake_limit);
}

TEST(Doorbell, ARingFromAnotherThreadWakesTheBellsWait)
{
    open_doorbell b;
    int woken = 0;
    auto took = ring_during(&b.d, [&] { return nbrma_doorbell_wait_bell(&b.d, 10000 * ms_ns); },
                            &woken);
    EXPECT_EQ(woken, 1);
    EXPECT_GE(took, milliseconds(20));
    EXPECT_LT(took, wake_limit);
}

// The agent's sleep while nothing of RMA can need this process: no limit.
TEST(Doorbell, ARingWakesTheBellsWaitWithoutLimit)
{
    open_doorbell b;
    int woken = 0;
    auto took = ring_during(
        &b.d, [&] { return nbrma_doorbell_wait_bell(&b.d, NBRMA_DOORBELL_FOREVER); }, &woken);
    EXPECT_EQ(woken, 1);
    EXPECT_GE(took, milliseconds(20));
    EXPECT_LT(took, wake_limit);
}

TEST(Doorbell, AWaitWithoutRingLastsItsTimeout)
{
    open_doorbell b;
    auto start = clock_type::now();
    EXPECT_EQ(nbrma_doorbell_wait_all(&b.d, nullptr, 0, 20), 0);
    auto took = clock_type::now() - start;
    EXPECT_GE(took, milliseconds(20));
    EXPECT_LT(took, wake_limit);

    start = clock_type::now();
    EXPECT_EQ(nbrma_doorbell_wait_bell(&b.d, 20 * ms_ns), 0);
    took = clock_type::now() - start;
    EXPECT_GE(took, milliseconds(20));
    EXPECT_LT(took, wake_limit);
}

// The stop of the agent rings while the agent may be anywhere but asleep:
// the ring must wake its next wait at once. Rings before a wait wake it once:
// the wait clears the doorbell.
TEST(Doorbell, RingsBeforeAWaitWakeItOnceAtOnce)
{
    open_doorbell b;
    nbrma_doorbell_ring(&b.d);
    nbrma_doorbell_ring(&b.d);
    nbrma_doorbell_ring(&b.d);
    auto start = clock_type::now();
    EXPECT_EQ(nbrma_doorbell_wait_all(&b.d, nullptr, 0, 10000), 1);
    EXPECT_LT(clock_type::now() - start, wake_limit);
    EXPECT_EQ(nbrma_doorbell_wait_all(&b.d, nullptr, 0, 0), 0);
    EXPECT_EQ(nbrma_doorbell_wait_bell(&b.d, 0), 0);

    nbrma_doorbell_ring(&b.d);
    nbrma_doorbell_ring(&b.d);
    EXPECT_EQ(nbrma_doorbell_wait_bell(&b.d, 10000 * ms_ns), 1);
    EXPECT_EQ(nbrma_doorbell_wait_bell(&b.d, 0), 0);
    EXPECT_EQ(nbrma_doorbell_wait_all(&b.d, nullptr, 0, 0), 0);
}

// A watched descriptor (the agent's wake socket) wakes the full wait and
// stays readable (its owner clears it); the bell's wait ignores it.
TEST(Doorbell, AWatchedDescriptorWakesTheFullWaitOnly)
{
    open_doorbell b;
    int socket_like = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    ASSERT_GE(socket_like, 0);
    ASSERT_EQ(nbrma_doorbell_watch(&b.d, socket_like), 0);
    EXPECT_EQ(nbrma_doorbell_wait_all(&b.d, nullptr, 0, 0), 0);

    uint64_t one = 1;
    ASSERT_EQ(write(socket_like, &one, sizeof(one)), static_cast<ssize_t>(sizeof(one)));
    EXPECT_EQ(nbrma_doorbell_wait_all(&b.d, nullptr, 0, 10000), 1);
    EXPECT_EQ(nbrma_doorbell_wait_all(&b.d, nullptr, 0, 10000), 1);  // not cleared by the wait

    auto start = clock_type::now();
    EXPECT_EQ(nbrma_doorbell_wait_bell(&b.d, 20 * ms_ns), 0);
    EXPECT_GE(clock_type::now() - start, milliseconds(20));

    // both at once: one wait, and the ring is cleared, the descriptor not
    nbrma_doorbell_ring(&b.d);
    EXPECT_EQ(nbrma_doorbell_wait_all(&b.d, nullptr, 0, 10000), 2);
    EXPECT_EQ(nbrma_doorbell_wait_bell(&b.d, 0), 0);

    uint64_t count = 0;
    EXPECT_EQ(read(socket_like, &count, sizeof(count)), static_cast<ssize_t>(sizeof(count)));
    EXPECT_EQ(count, 1u);
    EXPECT_EQ(nbrma_doorbell_wait_all(&b.d, nullptr, 0, 0), 0);
    EXPECT_TRUE(in_set(b.d.epoll_fd, socket_like));  // for good
    close(socket_like);
}

// The UCX workers' descriptors: watched by the full wait they are passed to,
// readable before or made readable during it, and out of the set after it.
TEST(Doorbell, DescriptorsWatchedForOneWaitAreOutOfTheSetAfterIt)
{
    open_doorbell b;
    int workers[2] = {eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC),
                      eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC)};
    ASSERT_GE(workers[0], 0);
    ASSERT_GE(workers[1], 0);
    EXPECT_EQ(nbrma_doorbell_wait_all(&b.d, workers, 2, 0), 0);
    EXPECT_FALSE(in_set(b.d.epoll_fd, workers[0]));
    EXPECT_FALSE(in_set(b.d.epoll_fd, workers[1]));

    uint64_t one = 1;
    ASSERT_EQ(write(workers[1], &one, sizeof(one)), static_cast<ssize_t>(sizeof(one)));
    EXPECT_EQ(nbrma_doorbell_wait_all(&b.d, workers, 2, 10000), 1);
    EXPECT_EQ(nbrma_doorbell_wait_all(&b.d, nullptr, 0, 0), 0);  // not watched without them
    EXPECT_FALSE(in_set(b.d.epoll_fd, workers[1]));

    uint64_t count = 0;
    EXPECT_EQ(read(workers[1], &count, sizeof(count)), static_cast<ssize_t>(sizeof(count)));
    auto start = clock_type::now();
    std::thread event([&workers] {
        std::this_thread::sleep_for(milliseconds(20));
        uint64_t one = 1;
        EXPECT_EQ(write(workers[0], &one, sizeof(one)), static_cast<ssize_t>(sizeof(one)));
    });
    EXPECT_EQ(nbrma_doorbell_wait_all(&b.d, workers, 2, 10000), 1);
    EXPECT_LT(clock_type::now() - start, wake_limit);
    event.join();
    EXPECT_FALSE(in_set(b.d.epoll_fd, workers[0]));

    // one that cannot be watched: an error, and the others are out again
    int bad[2] = {workers[1], -1};
    EXPECT_EQ(nbrma_doorbell_wait_all(&b.d, bad, 2, 0), -1);
    EXPECT_FALSE(in_set(b.d.epoll_fd, workers[1]));
    close(workers[0]);
    close(workers[1]);
}

static void make_readable(int fd)
{
    uint64_t one = 1;
    ASSERT_EQ(write(fd, &one, sizeof(one)), static_cast<ssize_t>(sizeof(one)));
}

// A descriptor like a wake socket, watched by the sleep away of `d`.
static int watched_away(nbrma_doorbell_t *d)
{
    int fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    EXPECT_GE(fd, 0);
    EXPECT_EQ(nbrma_doorbell_watch_away(d, fd), 0);
    return fd;
}

static void drain(int fd)
{
    uint64_t count = 0;
    EXPECT_EQ(read(fd, &count, sizeof(count)), static_cast<ssize_t>(sizeof(count)));
}

TEST(Doorbell, TheSleepAwayTellsWhichDescriptorWokeIt)
{
    open_doorbell b;
    int socket_like = watched_away(&b.d);
    ASSERT_GE(socket_like, 0);
    int fd = -1;
    EXPECT_EQ(nbrma_doorbell_wait_away(&b.d, 0, &fd), 0);

    make_readable(socket_like);
    EXPECT_EQ(nbrma_doorbell_wait_away(&b.d, 10000 * ms_ns, &fd), NBRMA_DOORBELL_WOKEN_BY_FD);
    EXPECT_EQ(fd, socket_like);
    // not read by the wait: it wakes the next one too; the bell's wait alone does not see it
    EXPECT_EQ(nbrma_doorbell_wait_away(&b.d, 0, &fd), NBRMA_DOORBELL_WOKEN_BY_FD);
    EXPECT_EQ(nbrma_doorbell_wait_bell(&b.d, 0), 0);
    // the ring first when both: and cleared
    nbrma_doorbell_ring(&b.d);
    EXPECT_EQ(nbrma_doorbell_wait_away(&b.d, 10000 * ms_ns, &fd), 1);
    EXPECT_EQ(nbrma_doorbell_wait_bell(&b.d, 0), 0);
    drain(socket_like);
    EXPECT_EQ(nbrma_doorbell_wait_away(&b.d, 0, &fd), 0);
    // a ring from another thread wakes it as the bell's wait
    int woken = 0;
    auto took = ring_during(
        &b.d, [&] { return nbrma_doorbell_wait_away(&b.d, 10000 * ms_ns, &fd); }, &woken);
    EXPECT_EQ(woken, 1);
    EXPECT_LT(took, wake_limit);
    close(socket_like);
}

// A UCX worker's descriptor stays readable while the application progresses
// the worker itself: it wakes the sleep away only after the application
// enabled it (having armed the worker as it left MPI), and once; taken back,
// it is out of the set.
TEST(Doorbell, ADescriptorEnabledOnceWakesTheSleepAwayOncePerEnabling)
{
    open_doorbell b;
    int worker_like = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    ASSERT_GE(worker_like, 0);
    int fd = -1;

    make_readable(worker_like);
    EXPECT_EQ(nbrma_doorbell_wait_away(&b.d, 0, &fd), 0);  // not enabled: readable, no wake
    ASSERT_EQ(nbrma_doorbell_enable_once(&b.d, worker_like), 0);
    EXPECT_TRUE(in_set(b.d.away_fd, worker_like));
    EXPECT_EQ(nbrma_doorbell_wait_away(&b.d, 10000 * ms_ns, &fd), NBRMA_DOORBELL_WOKEN_BY_FD);
    EXPECT_EQ(fd, worker_like);
    EXPECT_EQ(nbrma_doorbell_wait_away(&b.d, 0, &fd), 0);  // once: still readable, no wake
    // fired, it stays in the set until taken back; enabled anew meanwhile, it wakes again
    EXPECT_TRUE(in_set(b.d.away_fd, worker_like));
    ASSERT_EQ(nbrma_doorbell_enable_once(&b.d, worker_like), 0);
    EXPECT_EQ(nbrma_doorbell_wait_away(&b.d, 10000 * ms_ns, &fd), NBRMA_DOORBELL_WOKEN_BY_FD);
    // taken back, it is out of the set; taken back twice is no error
    ASSERT_EQ(nbrma_doorbell_disable_once(&b.d, worker_like), 0);
    EXPECT_FALSE(in_set(b.d.away_fd, worker_like));
    ASSERT_EQ(nbrma_doorbell_disable_once(&b.d, worker_like), 0);
    // an enabling taken back wakes nobody
    ASSERT_EQ(nbrma_doorbell_enable_once(&b.d, worker_like), 0);
    ASSERT_EQ(nbrma_doorbell_disable_once(&b.d, worker_like), 0);
    EXPECT_EQ(nbrma_doorbell_wait_away(&b.d, 0, &fd), 0);
    // enabled while not readable, then made readable by another thread during the sleep
    drain(worker_like);
    ASSERT_EQ(nbrma_doorbell_enable_once(&b.d, worker_like), 0);
    EXPECT_EQ(nbrma_doorbell_wait_away(&b.d, 0, &fd), 0);
    auto start = clock_type::now();
    std::thread event([worker_like] {
        std::this_thread::sleep_for(milliseconds(20));
        make_readable(worker_like);
    });
    EXPECT_EQ(nbrma_doorbell_wait_away(&b.d, 10000 * ms_ns, &fd), NBRMA_DOORBELL_WOKEN_BY_FD);
    EXPECT_LT(clock_type::now() - start, wake_limit);
    event.join();
    // readable but enabled by another thread during the sleep: it wakes at once
    ASSERT_EQ(nbrma_doorbell_wait_away(&b.d, 0, &fd), 0);
    start = clock_type::now();
    std::thread enabler([&b, worker_like] {
        std::this_thread::sleep_for(milliseconds(20));
        EXPECT_EQ(nbrma_doorbell_enable_once(&b.d, worker_like), 0);
    });
    EXPECT_EQ(nbrma_doorbell_wait_away(&b.d, 10000 * ms_ns, &fd), NBRMA_DOORBELL_WOKEN_BY_FD);
    EXPECT_LT(clock_type::now() - start, wake_limit);
    enabler.join();
    // the full wait does not see the away set's descriptors
    EXPECT_EQ(nbrma_doorbell_wait_all(&b.d, nullptr, 0, 0), 0);
    ASSERT_EQ(nbrma_doorbell_disable_once(&b.d, worker_like), 0);
    EXPECT_FALSE(in_set(b.d.away_fd, worker_like));
    close(worker_like);
}

TEST(Doorbell, CloseLeavesItClosedAndWatchingFailsThen)
{
    nbrma_doorbell_t d = NBRMA_DOORBELL_CLOSED;
    ASSERT_EQ(nbrma_doorbell_open(&d), 0);
    EXPECT_GE(d.epoll_fd, 0);
    EXPECT_GE(d.bell_fd, 0);
    EXPECT_GE(d.away_fd, 0);
    nbrma_doorbell_close(&d);
    EXPECT_EQ(d.epoll_fd, -1);
    EXPECT_EQ(d.bell_fd, -1);
    EXPECT_EQ(d.away_fd, -1);
    nbrma_doorbell_close(&d);  // again: nothing to close
    EXPECT_EQ(nbrma_doorbell_watch(&d, 0), -1);
    EXPECT_EQ(nbrma_doorbell_wait_all(&d, nullptr, 0, 0), -1);
}

}  // namespace
