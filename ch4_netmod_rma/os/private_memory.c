/*
 * mpich-nbrma: memory that stays the process's own (private_memory.h).
 */

#define _GNU_SOURCE     /* mremap's flags, syscall */
#include "private_memory.h"

#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

static size_t whole_pages(size_t bytes)
{
    size_t page = (size_t) sysconf(_SC_PAGESIZE);

    return (bytes + page - 1) / page * page;
}

bool nbrma_at_least_half_of_memory(size_t bytes)
{
    long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);

    return pages > 0 && page > 0 && bytes / (size_t) page >= (size_t) pages / 2;
}

void *nbrma_private_copy(const void *base, size_t bytes)
{
    void *copy;

    if ((uintptr_t) base % (size_t) sysconf(_SC_PAGESIZE) != 0)
        return NULL;
    copy = mmap(NULL, whole_pages(bytes), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
                -1, 0);
    if (copy == MAP_FAILED)
        return NULL;
    memcpy(copy, base, bytes);
    return copy;
}

bool nbrma_private_copy_move(void *copy, void *base, size_t bytes)
{
    size_t whole = whole_pages(bytes);

    /* the system call itself: UCX's memory hooks (ucm) replace mremap() with
     * a function that drops its fifth argument, so MREMAP_FIXED fails there
     * (ENOMEM, and it returns NULL instead of MAP_FAILED) */
    if (syscall(SYS_mremap, copy, whole, whole, MREMAP_MAYMOVE | MREMAP_FIXED, base) !=
        (long) base) {
        munmap(copy, whole);
        return false;
    }
    return true;
}
