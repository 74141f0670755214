// The progress agent's scheduling (ch4_netmod_rma/os/thread_sched.c) without
// MPI: the nice value and slice the kernel keeps for the calling thread, and
// only for it. Each case runs in a thread of its own, so that the test
// process keeps its priority.

#include <gtest/gtest.h>

#include <sched.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <thread>

#include "thread_sched.h"

namespace {

// the kernel's struct sched_attr, first version, as sched_getattr fills it
struct sched_attr_v0 {
    uint32_t size, sched_policy;
    uint64_t sched_flags;
    int32_t sched_nice;
    uint32_t sched_priority;
    uint64_t sched_runtime, sched_deadline, sched_period;
};

int nice_of(pid_t tid)
{
    errno = 0;
    int nice = getpriority(PRIO_PROCESS, static_cast<id_t>(tid));
    EXPECT_EQ(errno, 0);
    return nice;
}

pid_t self_tid()
{
    return static_cast<pid_t>(syscall(SYS_gettid));
}

// Linux 6.12 and later keep a fair thread's slice (sched_runtime).
bool kernel_keeps_slices()
{
    struct utsname u;
    int major = 0, minor = 0;
    if (uname(&u) != 0 || sscanf(u.release, "%d.%d", &major, &minor) != 2)
        return false;
    return major > 6 || (major == 6 && minor >= 12);
}

TEST(ThreadSched, TheThreadGetsTheNiceValueAndTheSlice)
{
    int process_nice = nice_of(self_tid());
    std::thread t([&] {
        int want = process_nice < 19 ? process_nice + 1 : 19;   // lower: always allowed
        nbrma_thread_sched_set(want, 100000);
        EXPECT_EQ(nice_of(self_tid()), want);
        sched_attr_v0 attr{};
        ASSERT_EQ(syscall(SYS_sched_getattr, 0, &attr, sizeof(attr), 0), 0);
        EXPECT_EQ(attr.sched_policy, static_cast<uint32_t>(SCHED_OTHER));
        EXPECT_EQ(attr.sched_nice, want);
        if (kernel_keeps_slices()) {
            EXPECT_EQ(attr.sched_runtime, 100000u);
        }
    });
    t.join();
    EXPECT_EQ(nice_of(self_tid()), process_nice);   // the calling thread's only
}

// A higher priority than the process's: granted with the privilege, else the
// thread stays at the process's own, and the slice is set either way.
TEST(ThreadSched, ARefusedNiceValueLeavesTheProcesssOwn)
{
    int process_nice = nice_of(self_tid());
    if (process_nice <= -20)
        GTEST_SKIP() << "already at the highest priority";
    std::thread t([&] {
        nbrma_thread_sched_set(process_nice - 1, 200000);
        int got = nice_of(self_tid());
        EXPECT_TRUE(got == process_nice - 1 || got == process_nice) << got;
        if (geteuid() != 0) {
            EXPECT_EQ(got, process_nice);
        }
        sched_attr_v0 attr{};
        ASSERT_EQ(syscall(SYS_sched_getattr, 0, &attr, sizeof(attr), 0), 0);
        EXPECT_EQ(attr.sched_nice, got);
        if (kernel_keeps_slices()) {
            EXPECT_EQ(attr.sched_runtime, 200000u);
        }
    });
    t.join();
    EXPECT_EQ(nice_of(self_tid()), process_nice);
}

// Keeping to a CPU and letting go: the thread's own mask changes, the
// process's other threads keep theirs; a CPU outside the first mask, or a
// mask of one CPU, changes nothing.
TEST(ThreadSched, KeepsToOneCpuOfItsMaskAndLetsGoAgain)
{
    cpu_set_t process_mask;
    ASSERT_EQ(sched_getaffinity(0, sizeof(process_mask), &process_mask), 0);
    std::thread t([&] {
        cpu_set_t now;
        int first = 0;
        while (!CPU_ISSET(first, &process_mask))
            first++;
        if (CPU_COUNT(&process_mask) < 2) {
            EXPECT_EQ(nbrma_thread_sched_keep_on(first), -1);    // bound: nothing to do
            return;
        }
        EXPECT_EQ(nbrma_thread_sched_keep_on(first), first);
        ASSERT_EQ(sched_getaffinity(0, sizeof(now), &now), 0);
        EXPECT_EQ(CPU_COUNT(&now), 1);
        EXPECT_TRUE(CPU_ISSET(first, &now));
        EXPECT_EQ(sched_getcpu(), first);
        EXPECT_EQ(nbrma_thread_sched_keep_on(CPU_SETSIZE + 5), first);   // outside: unchanged
        EXPECT_EQ(nbrma_thread_sched_keep_on(-1), -1);
        ASSERT_EQ(sched_getaffinity(0, sizeof(now), &now), 0);
        EXPECT_TRUE(CPU_EQUAL(&now, &process_mask));
    });
    t.join();
    cpu_set_t after;
    ASSERT_EQ(sched_getaffinity(0, sizeof(after), &after), 0);
    EXPECT_TRUE(CPU_EQUAL(&after, &process_mask));   // the calling thread's only
}

// Keeping off a CPU: the thread leaves it at once and may run on every
// other CPU of its first mask; keeping on one or anywhere undoes it.
TEST(ThreadSched, KeepsOffOneCpuOfItsMask)
{
    cpu_set_t process_mask;
    ASSERT_EQ(sched_getaffinity(0, sizeof(process_mask), &process_mask), 0);
    std::thread t([&] {
        cpu_set_t now, others;
        int first = 0;
        while (!CPU_ISSET(first, &process_mask))
            first++;
        if (CPU_COUNT(&process_mask) < 2) {
            EXPECT_EQ(nbrma_thread_sched_keep_off(first), -1);   // bound: nothing to do
            return;
        }
        ASSERT_EQ(nbrma_thread_sched_keep_on(first), first);
        EXPECT_EQ(nbrma_thread_sched_keep_off(first), first);
        ASSERT_EQ(sched_getaffinity(0, sizeof(now), &now), 0);
        others = process_mask;
        CPU_CLR(first, &others);
        EXPECT_TRUE(CPU_EQUAL(&now, &others));
        EXPECT_NE(sched_getcpu(), first);
        EXPECT_EQ(nbrma_thread_sched_keep_off(first), first);    // again: unchanged
        EXPECT_EQ(nbrma_thread_sched_keep_on(first), first);
        EXPECT_EQ(sched_getcpu(), first);
        EXPECT_EQ(nbrma_thread_sched_keep_off(first), first);
        EXPECT_EQ(nbrma_thread_sched_keep_on(-1), -1);
        ASSERT_EQ(sched_getaffinity(0, sizeof(now), &now), 0);
        EXPECT_TRUE(CPU_EQUAL(&now, &process_mask));
        // outside the mask, or -1: anywhere
        EXPECT_EQ(nbrma_thread_sched_keep_off(first), first);
        EXPECT_EQ(nbrma_thread_sched_keep_off(CPU_SETSIZE + 5), -1);
        ASSERT_EQ(sched_getaffinity(0, sizeof(now), &now), 0);
        EXPECT_TRUE(CPU_EQUAL(&now, &process_mask));
        EXPECT_EQ(nbrma_thread_sched_keep_off(-1), -1);
    });
    t.join();
    cpu_set_t after;
    ASSERT_EQ(sched_getaffinity(0, sizeof(after), &after), 0);
    EXPECT_TRUE(CPU_EQUAL(&after, &process_mask));   // the calling thread's only
}

// A thread of a bound process (one CPU in its mask) is left alone.
TEST(ThreadSched, ABoundThreadIsLeftAlone)
{
    cpu_set_t process_mask;
    ASSERT_EQ(sched_getaffinity(0, sizeof(process_mask), &process_mask), 0);
    std::thread t([&] {
        int first = 0;
        while (!CPU_ISSET(first, &process_mask))
            first++;
        cpu_set_t one;
        CPU_ZERO(&one);
        CPU_SET(first, &one);
        ASSERT_EQ(sched_setaffinity(0, sizeof(one), &one), 0);   // before the first call
        EXPECT_EQ(nbrma_thread_sched_keep_on(first), -1);
        EXPECT_EQ(nbrma_thread_sched_keep_on(-1), -1);
        EXPECT_EQ(nbrma_thread_sched_keep_off(first), -1);
        cpu_set_t now;
        ASSERT_EQ(sched_getaffinity(0, sizeof(now), &now), 0);
        EXPECT_TRUE(CPU_EQUAL(&now, &one));
    });
    t.join();
}

}  // namespace
