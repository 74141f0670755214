// Cross-memory attach (ch4_netmod_rma/peer_memory/cross_memory.c) without MPI: the identity
// probe, reads and writes of whole ranges across pages, refusals.
#include <gtest/gtest.h>

#include <signal.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <climits>
#include <cstdint>
#include <cstring>
#include <vector>

extern "C" {
#include "cross_memory.h"
}

namespace {

uint64_t addr_of(const void *p)
{
    return static_cast<uint64_t>(reinterpret_cast<uintptr_t>(p));
}

TEST(CrossMemory, ReachesItselfButNotAWrongProbe)
{
    nbrma_cross_memory_id_t me;
    nbrma_cross_memory_self(&me);
    EXPECT_EQ(me.pid, static_cast<uint64_t>(getpid()));
    EXPECT_TRUE(nbrma_cross_memory_reaches(&me));

    nbrma_cross_memory_id_t wrong = me;
    wrong.probe_value ^= 1;
    EXPECT_FALSE(nbrma_cross_memory_reaches(&wrong));
    wrong = me;
    wrong.pid = 0;
    EXPECT_FALSE(nbrma_cross_memory_reaches(&wrong));
}

// A reached peer is remembered (windows' creations ask about each peer
// again), but only under its whole identity: the same pid with another probe,
// or another pid in the same slot, is probed anew.
TEST(CrossMemory, RemembersOnlyTheWholeIdentity)
{
    nbrma_cross_memory_id_t me;
    nbrma_cross_memory_self(&me);
    ASSERT_TRUE(nbrma_cross_memory_reaches(&me));
    EXPECT_TRUE(nbrma_cross_memory_reaches(&me));

    nbrma_cross_memory_id_t other = me;
    other.probe_addr += sizeof(uint64_t);
    EXPECT_FALSE(nbrma_cross_memory_reaches(&other));
    other = me;
    other.probe_value += 1;
    EXPECT_FALSE(nbrma_cross_memory_reaches(&other));
    other = me;
    other.pid = me.pid + 64;   // the same slot of the remembered ones
    if (other.pid <= INT32_MAX && kill(static_cast<pid_t>(other.pid), 0) != 0)
        EXPECT_FALSE(nbrma_cross_memory_reaches(&other));
    EXPECT_TRUE(nbrma_cross_memory_reaches(&me));
}

// Ranges that cross several pages, at odd offsets, both ways.
TEST(CrossMemory, WritesAndReadsWholeRanges)
{
    const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
    const size_t bytes = 3 * page + 123;
    std::vector<unsigned char> from(bytes), into(bytes + 64, 0), back(bytes, 0);
    for (size_t i = 0; i < bytes; i++)
        from[i] = static_cast<unsigned char>(i * 7 + 3);
    const uint64_t pid = static_cast<uint64_t>(getpid());

    ASSERT_EQ(nbrma_cross_memory_write(pid, addr_of(into.data() + 17), from.data(), bytes), 0);
    EXPECT_EQ(std::memcmp(into.data() + 17, from.data(), bytes), 0);
    EXPECT_EQ(into[16], 0);
    EXPECT_EQ(into[17 + bytes], 0);

    ASSERT_EQ(nbrma_cross_memory_read(pid, back.data(), addr_of(into.data() + 17), bytes), 0);
    EXPECT_EQ(back, from);
    EXPECT_EQ(nbrma_cross_memory_write(pid, addr_of(into.data()), from.data(), 0), 0);
}

TEST(CrossMemory, RefusesUnmappedAndReadOnlyMemory)
{
    const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
    const uint64_t pid = static_cast<uint64_t>(getpid());
    void *ro = mmap(nullptr, 2 * page, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    ASSERT_NE(ro, MAP_FAILED);
    char value = 1;

    EXPECT_EQ(nbrma_cross_memory_write(pid, addr_of(ro), &value, 1), -1);
    EXPECT_EQ(nbrma_cross_memory_read(pid, &value, addr_of(ro), 1), 0);
    ASSERT_EQ(munmap(static_cast<char *>(ro) + page, page), 0);
    // a range that runs from a readable page into an unmapped one
    std::vector<char> buf(2 * page);
    EXPECT_EQ(nbrma_cross_memory_read(pid, buf.data(), addr_of(ro), 2 * page), -1);
    munmap(ro, page);
    EXPECT_EQ(nbrma_cross_memory_write(pid, 8, &value, 1), -1);
}

// Another process: the parent writes into its child's copy of a buffer.
TEST(CrossMemory, WritesIntoAnotherProcess)
{
    static volatile uint64_t word = 0;
    int ready[2], done[2];
    ASSERT_EQ(pipe(ready), 0);
    ASSERT_EQ(pipe(done), 0);
    pid_t child = fork();
    ASSERT_GE(child, 0);
    if (child == 0) {
        char c = 'r';
        if (write(ready[1], &c, 1) != 1 || read(done[0], &c, 1) != 1)
            _exit(2);
        _exit(word == 0x1234567890abcdefULL ? 0 : 1);
    }
    char c;
    ASSERT_EQ(read(ready[0], &c, 1), 1);
    const uint64_t value = 0x1234567890abcdefULL;
    int rc = nbrma_cross_memory_write(static_cast<uint64_t>(child),
                                      addr_of(const_cast<uint64_t *>(&word)), &value,
                                      sizeof(value));
    ASSERT_EQ(write(done[1], &c, 1), 1);
    int status = 0;
    ASSERT_EQ(waitpid(child, &status, 0), child);
    if (rc != 0)
        GTEST_SKIP() << "the kernel does not let this process write its child's memory "
                        "(ptrace policy)";
    EXPECT_TRUE(WIFEXITED(status));
    EXPECT_EQ(WEXITSTATUS(status), 0) << "the child did not see the written word";
    EXPECT_EQ(word, 0u) << "the parent's own copy changed";
}

// The identity a forked child gives is its own: the pid read once before
// the fork is not carried into it.
TEST(CrossMemory, AForkedChildNamesItself)
{
    nbrma_cross_memory_id_t parent;
    nbrma_cross_memory_self(&parent);
    ASSERT_EQ(parent.pid, static_cast<uint64_t>(getpid()));
    pid_t child = fork();
    ASSERT_GE(child, 0);
    if (child == 0) {
        nbrma_cross_memory_id_t mine;
        nbrma_cross_memory_self(&mine);
        _exit(mine.pid == static_cast<uint64_t>(getpid()) && mine.pid != parent.pid ? 0 : 1);
    }
    int status = 0;
    ASSERT_EQ(waitpid(child, &status, 0), child);
    EXPECT_TRUE(WIFEXITED(status));
    EXPECT_EQ(WEXITSTATUS(status), 0) << "the child gave its parent's pid";
    nbrma_cross_memory_id_t again;
    nbrma_cross_memory_self(&again);
    EXPECT_EQ(again.pid, parent.pid);
}

// The price of one call is measured once: a number of nanoseconds that a
// call can cost (a call through the kernel takes more than nothing and less
// than a time slice here), the same at every later ask.
TEST(CrossMemory, CallPriceIsMeasuredOnceAndKept)
{
    const uint64_t ns = nbrma_cross_memory_call_ns();
    EXPECT_GT(ns, 0u);
    EXPECT_LT(ns, 10000000u);
    EXPECT_EQ(nbrma_cross_memory_call_ns(), ns);
}

}  // namespace
