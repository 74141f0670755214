/*
 * mpich-nbrma: 1- and 2-byte integer accumulates on the aligned 8-byte word
 * around them, and every integer, float and double accumulate with the CPU's
 * atomics (MPICH-free, unit-tested in test/unit/test_narrow_ops.cpp).
 *
 * UCX has atomics of 4 and 8 bytes only. An element of 1 or 2 bytes is updated
 * by a compare-and-swap of its aligned 8-byte word that changes only its own
 * bytes: the swap succeeds only if nobody changed the word since it was read,
 * so it never loses another writer's update of the word's other bytes, atomic
 * or not. The origin does this with UCX's 8-byte compare-and-swap
 * (narrow_atomics.c), the target with the CPU's (MPICH's active-message
 * accumulates of the same types, nbrma_narrow_apply_cpu): where UCX's atomics
 * are the CPU's own, both are atomic with respect to each other.
 *
 * Signedness does not matter: two's-complement addition and the bitwise
 * operations give the same bits for signed and unsigned elements.
 */

#ifndef NBRMA_NARROW_OPS_H_INCLUDED
#define NBRMA_NARROW_OPS_H_INCLUDED

#include <stddef.h>
#include <stdint.h>
#include <stdbool.h>

#ifdef __cplusplus
extern "C" {
#endif

/* What an update does to an element. The first six work on integers of
 * either signedness and lane by lane across a word of elements; the others
 * need the element's type and go one element at a time (a compare-and-swap
 * loop on its word): MIN and MAX of signed and of unsigned integers, PROD of
 * integers (its low bits do not depend on signedness), and the arithmetic of
 * float (4-byte elements) and double (8-byte ones), as MPICH's MPI_SUM,
 * MPI_PROD, MPI_MIN and MPI_MAX compute it (target = op(target, operand)). */
typedef enum {
    NBRMA_NARROW_SUM,
    NBRMA_NARROW_BAND,
    NBRMA_NARROW_BOR,
    NBRMA_NARROW_BXOR,
    NBRMA_NARROW_REPLACE,
    NBRMA_NARROW_NO_OP,
    NBRMA_ELEMENT_PROD,
    NBRMA_ELEMENT_MIN_SIGNED,
    NBRMA_ELEMENT_MAX_SIGNED,
    NBRMA_ELEMENT_MIN_UNSIGNED,
    NBRMA_ELEMENT_MAX_UNSIGNED,
    NBRMA_ELEMENT_FLOAT_SUM,
    NBRMA_ELEMENT_FLOAT_PROD,
    NBRMA_ELEMENT_FLOAT_MIN,
    NBRMA_ELEMENT_FLOAT_MAX
} nbrma_narrow_op_t;

/* Whether `op` works lane by lane (one of the first six). */
static inline bool nbrma_op_lane_wise(nbrma_narrow_op_t op)
{
    return op <= NBRMA_NARROW_NO_OP;
}

/* Whether an element of `esize` (1 or 2) bytes at `addr` lies inside one
 * aligned 8-byte word. */
static inline bool nbrma_narrow_fits(uint64_t addr, unsigned esize)
{
    return (esize == 1 || esize == 2) && (addr & 7) + esize <= 8;
}

/* Element i of `esize` (1 or 2) bytes of a packed buffer, zero-extended, and
 * its store (the low `esize` bytes of `value`), at any alignment. */
uint64_t nbrma_narrow_load(const void *packed, size_t i, unsigned esize);
void nbrma_narrow_store(void *packed, size_t i, unsigned esize, uint64_t value);

/* The element of `esize` bytes at byte `offset` of `word` (memory order),
 * zero-extended. */
uint64_t nbrma_narrow_extract(uint64_t word, unsigned offset, unsigned esize);

/* `word` with that element combined with `operand` (its low `esize` bytes). */
uint64_t nbrma_narrow_combine(uint64_t word, unsigned offset, unsigned esize, uint64_t operand,
                              nbrma_narrow_op_t op);

/* Applies n elements of `esize` bytes, packed in `operand` (unused for
 * NO_OP), to `target` with the CPU's compare-and-swap, one aligned word at a
 * time; each element's old value goes to `fetched` (packed; NULL: not wanted).
 * The aligned words around the range must be readable and writable. A 2-byte
 * element across two words gets plain loads and stores (see the .c file). */
void nbrma_narrow_apply_cpu(void *target, const void *operand, size_t n, unsigned esize,
                            nbrma_narrow_op_t op, void *fetched);

/* Compare-and-swap of one element with the CPU's: if it equals `compare`,
 * `value` replaces it; returns the old element. */
uint64_t nbrma_narrow_cswap_cpu(void *target, unsigned esize, uint64_t compare, uint64_t value);

/* Element i of `esize` (1, 2, 4 or 8) bytes of a packed buffer,
 * zero-extended, and its store (the low `esize` bytes of `value`), at any
 * alignment. */
uint64_t nbrma_element_load(const void *packed, size_t i, unsigned esize);
void nbrma_element_store(void *packed, size_t i, unsigned esize, uint64_t value);

/* The same for elements of 1, 2, 4 or 8 bytes: 4- and 8-byte ones with the
 * CPU's atomic operation on each, or its compare-and-swap loop where the CPU
 * has no such operation (an element not aligned to its size gets
 * plain loads and stores: only its owner updates it), 1- and 2-byte ones as
 * above. What the target applies for MPIDIG and what an origin applies to
 * mapped memory (epochs/cross_memory_rma.c) go through these, so that both
 * are atomic with respect to each other. */
void nbrma_cpu_apply(void *target, const void *operand, size_t n, unsigned esize,
                     nbrma_narrow_op_t op, void *fetched);
uint64_t nbrma_cpu_cswap(void *target, unsigned esize, uint64_t compare, uint64_t value);

#ifdef __cplusplus
}
#endif
#endif /* NBRMA_NARROW_OPS_H_INCLUDED */
