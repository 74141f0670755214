/*
 * mpich-nbrma: reading and writing another process's memory (cross_memory.h).
 */

#define _GNU_SOURCE
#include "cross_memory.h"
#include "wait_pacing.h"   /* nbrma_monotonic_ns */

#include <errno.h>
#include <pthread.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

static volatile uint64_t probe_word;    /* written once, read by peers */
/* This process's pid, read once (a window's creation asked the kernel each
 * time: getpid is a system call, glibc keeps no copy); 0 again in a forked
 * child, whose pid differs. */
static uint64_t self_pid;
static pthread_once_t forget_in_child = PTHREAD_ONCE_INIT;

static void forget_pid(void)
{
    self_pid = 0;
}

static void forget_pid_at_fork(void)
{
    (void) pthread_atfork(NULL, NULL, forget_pid);
}

void nbrma_cross_memory_self(nbrma_cross_memory_id_t * id)
{
    if (probe_word == 0) {
        struct timespec now;
        uint64_t value;

        clock_gettime(CLOCK_MONOTONIC, &now);
        value = ((uint64_t) getpid() << 32) ^ (uint64_t) now.tv_nsec ^
            ((uint64_t) now.tv_sec << 20) ^ (uint64_t) (uintptr_t) & now;
        probe_word = value ? value : 1;
    }
    if (self_pid == 0) {
        (void) pthread_once(&forget_in_child, forget_pid_at_fork);
        self_pid = (uint64_t) getpid();
    }
    id->pid = self_pid;
    id->probe_addr = (uint64_t) (uintptr_t) & probe_word;
    id->probe_value = probe_word;
}

/* process_vm_readv or _writev until every byte moved: the kernel may move
 * fewer than asked (page by page). */
static int cross_memory_copy(uint64_t pid, char *local, uint64_t remote_addr, size_t bytes,
                             bool write)
{
    while (bytes > 0) {
        struct iovec here = {.iov_base = local,.iov_len = bytes };
        struct iovec there = {.iov_base = (void *) (uintptr_t) remote_addr,.iov_len = bytes };
        ssize_t moved = write ? process_vm_writev((pid_t) pid, &here, 1, &there, 1, 0)
            : process_vm_readv((pid_t) pid, &here, 1, &there, 1, 0);

        if (moved < 0 && errno == EINTR)
            continue;
        if (moved <= 0)
            return -1;
        local += moved;
        remote_addr += (uint64_t) moved;
        bytes -= (size_t) moved;
    }
    return 0;
}

int nbrma_cross_memory_read(uint64_t pid, void *local, uint64_t remote_addr, size_t bytes)
{
    return cross_memory_copy(pid, local, remote_addr, bytes, false);
}

int nbrma_cross_memory_write(uint64_t pid, uint64_t remote_addr, const void *local, size_t bytes)
{
    /* process_vm_writev only reads the local iovec's memory */
    return cross_memory_copy(pid, (char *) (uintptr_t) local, remote_addr, bytes, true);
}

/* Peers reached before, by pid modulo the size. Every window's creation asks
 * about each peer on this host, and the probe's process_vm_readv costs about
 * 2 us here (a tenth of creating and freeing a window on 2 processes); a
 * process keeps its pid and probe for its life, and whether the kernel lets
 * this process read it (same user, ptrace policy) does not change unless
 * that process makes itself undumpable, which a later copy would then find
 * refused (and take the other path). Only windows' creations ask, one at a
 * time (collective calls: one thread, or MPICH's critical section). */
#define REACHED_SLOTS 64
static nbrma_cross_memory_id_t reached[REACHED_SLOTS];

static bool same_id(const nbrma_cross_memory_id_t * a, const nbrma_cross_memory_id_t * b)
{
    return a->pid == b->pid && a->probe_addr == b->probe_addr && a->probe_value == b->probe_value;
}

bool nbrma_cross_memory_reaches(const nbrma_cross_memory_id_t * peer)
{
    nbrma_cross_memory_id_t *slot = &reached[peer->pid % REACHED_SLOTS];
    uint64_t seen = 0;

    if (peer->pid == 0 || peer->pid > (uint64_t) INT32_MAX || peer->probe_value == 0)
        return false;
    if (same_id(slot, peer))
        return true;
    if (nbrma_cross_memory_read(peer->pid, &seen, peer->probe_addr, sizeof(seen)) != 0 ||
        seen != peer->probe_value)
        return false;
    *slot = *peer;
    return true;
}

/* The fastest of CALL_SAMPLES after one untimed call: a sample that an
 * interrupt or a migration lengthened says nothing of the price. */
#define CALL_SAMPLES 8
static uint64_t call_ns;

uint64_t nbrma_cross_memory_call_ns(void)
{
    nbrma_cross_memory_id_t me;
    uint64_t word;

    if (call_ns != 0)
        return call_ns;
    nbrma_cross_memory_self(&me);
    call_ns = UINT64_MAX;
    if (nbrma_cross_memory_read(me.pid, &word, me.probe_addr, sizeof(word)) != 0)
        return call_ns;
    for (int i = 0; i < CALL_SAMPLES; i++) {
        uint64_t t0 = nbrma_monotonic_ns(), ns;

        if (nbrma_cross_memory_read(me.pid, &word, me.probe_addr, sizeof(word)) != 0)
            return call_ns = UINT64_MAX;
        ns = nbrma_monotonic_ns() - t0;
        call_ns = ns < call_ns ? (ns > 0 ? ns : 1) : call_ns;
    }
    return call_ns;
}
