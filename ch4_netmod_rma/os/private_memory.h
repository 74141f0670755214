/*
 * mpich-nbrma: memory that stays the process's own when UCX lets go of it,
 * for the table of UCX allocations (ch4/memory/ucx_memory.c): how much UCX
 * may be asked for, and the move of an allocation's bytes into private
 * anonymous memory at the same address at MPI_Finalize. MPICH- and
 * UCX-free, so that what the kernel does is unit-tested without MPI
 * (test/unit/test_private_memory.cpp).
 */

#ifndef NBRMA_PRIVATE_MEMORY_H_INCLUDED
#define NBRMA_PRIVATE_MEMORY_H_INCLUDED

#include <stdbool.h>
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Whether `bytes` is at least half the machine's physical memory (false
 * when the system does not say how much it has). */
bool nbrma_at_least_half_of_memory(size_t bytes);

/* A private anonymous copy of [base, base + bytes), whole pages; NULL when
 * `base` is not page-aligned or there is no memory for it. */
void *nbrma_private_copy(const void *base, size_t bytes);
/* Moves the copy (of nbrma_private_copy(base, bytes)) to `base`, where
 * nothing should be mapped any more: the memory there is then the copy, the
 * process's own. False when the kernel refuses: the copy is gone too. */
bool nbrma_private_copy_move(void *copy, void *base, size_t bytes);

#ifdef __cplusplus
}
#endif
#endif /* NBRMA_PRIVATE_MEMORY_H_INCLUDED */
