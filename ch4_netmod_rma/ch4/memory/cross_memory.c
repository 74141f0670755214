/*
 * mpich-nbrma: reading and writing another process's memory (cross_memory.h).
 */

#define _GNU_SOURCE
#include "cross_memory.h"

#include <errno.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

static volatile uint64_t probe_word;    /* written once, read by peers */

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
    id->pid = (uint64_t) getpid();
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

bool nbrma_cross_memory_reaches(const nbrma_cross_memory_id_t * peer)
{
    uint64_t seen = 0;

    if (peer->pid == 0 || peer->pid > (uint64_t) INT32_MAX || peer->probe_value == 0)
        return false;
    return nbrma_cross_memory_read(peer->pid, &seen, peer->probe_addr, sizeof(seen)) == 0 &&
        seen == peer->probe_value;
}
