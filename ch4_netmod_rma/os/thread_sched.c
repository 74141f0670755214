/*
 * mpich-nbrma: the calling thread's nice value, time slice and CPUs
 * (thread_sched.h).
 */

#define _GNU_SOURCE     /* syscall, SYS_gettid, SYS_sched_setattr */
#include "thread_sched.h"

#include <errno.h>
#include <stdbool.h>
#include <sched.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <unistd.h>

/* The kernel's struct sched_attr, its first version (48 bytes): glibc 2.36
 * does not declare it, and <linux/sched/types.h> clashes with <sched.h>. */
typedef struct {
    uint32_t size, sched_policy;
    uint64_t sched_flags;
    int32_t sched_nice;
    uint32_t sched_priority;
    uint64_t sched_runtime, sched_deadline, sched_period;
} sched_attr_v0_t;

_Static_assert(sizeof(sched_attr_v0_t) == 48, "the kernel's SCHED_ATTR_SIZE_VER0");

void nbrma_thread_sched_set(int nice, uint64_t slice_ns)
{
    /* setpriority and getpriority take a thread id on Linux: the thread's
     * alone, not the process's */
    id_t tid = (id_t) syscall(SYS_gettid);
    sched_attr_v0_t attr = {.size = sizeof(attr),.sched_policy = SCHED_OTHER,
        .sched_runtime = slice_ns
    };

    (void) setpriority(PRIO_PROCESS, tid, nice);
    /* sched_setattr sets the nice value too: the one the thread got, so that
     * a refused one is not asked again */
    errno = 0;
    attr.sched_nice = getpriority(PRIO_PROCESS, tid);   /* -1 is a valid value */
    if (errno == 0)
        (void) syscall(SYS_sched_setattr, 0, &attr, 0);
}

/* The calling thread's mask at its first nbrma_thread_sched_keep_on or
 * _keep_off, and where it keeps it now: on one CPU, off one, or anywhere. */
static __thread struct {
    bool known;
    cpu_set_t mask;
    int cpu;                    /* -1: anywhere in the mask */
    bool off;                   /* kept off `cpu` rather than on it */
} placement;

/* Whether the calling thread may move: false for a bound one (a mask of one
 * CPU: its threads are there already) or a mask it cannot read. */
static bool placement_known(void)
{
    if (!placement.known) {
        if (sched_getaffinity(0, sizeof(placement.mask), &placement.mask) != 0)
            return false;
        placement.known = true;
        placement.cpu = -1;
    }
    return CPU_COUNT(&placement.mask) >= 2;
}

static int kept_on(void)
{
    return placement.known && !placement.off ? placement.cpu : -1;
}

static int kept_off(void)
{
    return placement.known && placement.off ? placement.cpu : -1;
}

/* Keeps the thread in `mask`, which stands for (`cpu`, `off`). */
static void place(const cpu_set_t * mask, int cpu, bool off)
{
    if (sched_setaffinity(0, sizeof(*mask), mask) == 0) {
        placement.cpu = cpu;
        placement.off = off;
    }
}

int nbrma_thread_sched_keep_on(int cpu)
{
    cpu_set_t one;

    if (!placement_known() || (cpu == placement.cpu && !placement.off))
        return kept_on();
    if (cpu < 0) {
        place(&placement.mask, -1, false);
    } else if (cpu < CPU_SETSIZE && CPU_ISSET(cpu, &placement.mask)) {
        CPU_ZERO(&one);
        CPU_SET(cpu, &one);
        place(&one, cpu, false);
    }
    return kept_on();
}

int nbrma_thread_sched_keep_off(int cpu)
{
    cpu_set_t others;

    if (!placement_known() || (cpu == placement.cpu && placement.off))
        return kept_off();
    if (cpu < 0 || cpu >= CPU_SETSIZE || !CPU_ISSET(cpu, &placement.mask)) {
        if (placement.cpu >= 0)
            place(&placement.mask, -1, false);
    } else {
        others = placement.mask;
        CPU_CLR(cpu, &others);
        place(&others, cpu, true);
    }
    return kept_off();
}
