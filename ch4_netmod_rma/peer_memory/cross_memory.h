/*
 * mpich-nbrma: reading and writing another process's memory on the same host
 * with process_vm_readv/_writev (Linux cross-memory attach, what UCX's cma
 * transport uses), without that process's CPU and without registering
 * anything. MPICH-free.
 *
 * A process's identity is its pid plus a probe: the address and value of a
 * 64-bit word only this process holds. A peer that reads that value at that
 * address of that pid knows the pid names the same process (not one of
 * another pid namespace or host) and that the kernel lets it read there
 * (same user, ptrace policy, no seccomp filter in the way).
 */

#ifndef NBRMA_CROSS_MEMORY_H_INCLUDED
#define NBRMA_CROSS_MEMORY_H_INCLUDED

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "nbrma_static_assert.h"

typedef struct {
    uint64_t pid;               /* 0: not readable this way */
    uint64_t probe_addr;
    uint64_t probe_value;
} nbrma_cross_memory_id_t;

NBRMA_STATIC_ASSERT(sizeof(nbrma_cross_memory_id_t) == 24, "exchanged between processes");

/* This process's identity (its probe is made on first use). */
void nbrma_cross_memory_self(nbrma_cross_memory_id_t * id);
/* Whether this process can read the memory of the process `peer` names. */
bool nbrma_cross_memory_reaches(const nbrma_cross_memory_id_t * peer);
/* Reads `bytes` at `remote_addr` of process `pid` into `local`; 0 on success,
 * -1 if any byte could not be read (the contents of `local` are then
 * undefined). */
int nbrma_cross_memory_read(uint64_t pid, void *local, uint64_t remote_addr, size_t bytes);

/* Writes `bytes` from `local` at `remote_addr` of process `pid`; 0 on
 * success, -1 if any byte could not be written (some may have been). The
 * kernel lets a process write where it lets it read (the same ptrace
 * check), provided the peer's mapping is writable. */
int nbrma_cross_memory_write(uint64_t pid, uint64_t remote_addr, const void *local, size_t bytes);

/* What one small copy by this system call costs this process, in ns: the
 * fastest of a few reads of its own probe word, measured at the first call
 * and kept (the kernel's price, which the host sets: a whole put + flush by
 * it took 0.68 us one day, the call alone 1.76 us on the same kind of
 * virtual machine another). UINT64_MAX if the call fails here. */
uint64_t nbrma_cross_memory_call_ns(void);

#endif /* NBRMA_CROSS_MEMORY_H_INCLUDED */
