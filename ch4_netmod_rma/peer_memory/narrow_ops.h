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
 * are the CPU's own, both are atomic with respect to each other. Long runs
 * of the CPU's own may go in hardware transactions instead
 * (cpu_transactions.h): atomic with respect to all of these too.
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

/* Whether each of `n` elements of `esize` (1 or 2) bytes from `addr` on lies
 * inside one aligned 8-byte word. */
static inline bool nbrma_narrow_range_fits(uint64_t addr, size_t n, unsigned esize)
{
    for (size_t i = 0; i < n; i++)
        if (!nbrma_narrow_fits(addr + i * esize, esize))
            return false;
    return true;
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

/* --- the origin's compare-and-swap loops on another process's words ------ */

/* A compare-and-swap of the aligned 8-byte word at `word_addr` of the target
 * (UCX's, narrow_atomics.c): `desired` replaces the word if it equals
 * `expected`; *found receives the word as it was. Returns 0, or an error
 * (the glue's) that ends the update. */
typedef int (*nbrma_word_cswap_fn) (void *ctx, uint64_t word_addr, uint64_t expected,
                                    uint64_t desired, uint64_t * found);

/* The word the origin last swapped and what it wrote there (`key`: the
 * target's memory, an opaque pointer): the first guess for the next update of
 * the same word. An origin that updates one counter again and again, as OSU's
 * benchmarks do, then needs one swap, not two; a wrong guess costs one swap
 * more, never a wrong result. All zero: no guess. */
typedef struct {
    const void *key;
    uint64_t word_addr, value;
} nbrma_word_guess_t;

/* Applies `n` elements of `esize` (1 or 2) bytes, packed in `operand` (unused
 * for NO_OP), to the target's memory at `addr` (every element inside one
 * word: nbrma_narrow_range_fits) by compare-and-swap loops on each word,
 * starting from the guess (a failed swap returns the word, as a fetch would);
 * with `compare` (a compare-and-swap of one element: `op` REPLACE), the
 * element is swapped in only if it equals the element at `compare`. The old
 * elements go to `fetched` (packed; NULL: not wanted). Returns 0, or the
 * first error of `cswap`: the words before it are updated (and fetched), the
 * others untouched. Inline: an accumulate of MPI_CHAR comes here. */
static inline int nbrma_narrow_update_words(uint64_t addr, size_t n, unsigned esize,
                                            nbrma_narrow_op_t op, const void *operand,
                                            const void *compare, void *fetched,
                                            nbrma_word_guess_t * guess, const void *key,
                                            nbrma_word_cswap_fn cswap, void *ctx)
{
    const uint64_t mask = esize == 1 ? 0xff : 0xffff;
    const uint64_t compare_value = compare ? nbrma_narrow_load(compare, 0, esize) : 0;

    for (size_t i = 0; i < n;) {
        uint64_t a = addr + i * esize, word_addr = a & ~(uint64_t) 7, operands[8] = { 0 };
        uint64_t old, found;
        unsigned first = (unsigned) (a & 7);
        size_t count = (8 - first) / esize;     /* >= 1: every element fits */
        int err;

        if (count > n - i)
            count = n - i;
        for (size_t k = 0; k < count; k++)
            operands[k] = op == NBRMA_NARROW_NO_OP ? 0 : nbrma_narrow_load(operand, i + k, esize);
        old = guess->key == key && guess->word_addr == word_addr ? guess->value : 0;
        for (;;) {
            uint64_t desired = old;
            if (compare) {
                if (nbrma_narrow_extract(old, first, esize) == (compare_value & mask))
                    desired = nbrma_narrow_combine(old, first, esize, operands[0],
                                                   NBRMA_NARROW_REPLACE);
            } else {
                for (size_t k = 0; k < count; k++)
                    desired = nbrma_narrow_combine(desired, first + (unsigned) (k * esize), esize,
                                                   operands[k], op);
            }
            if ((err = cswap(ctx, word_addr, old, desired, &found)) != 0)
                return err;
            if (found == old) {
                guess->key = key;
                guess->word_addr = word_addr;
                guess->value = desired;
                break;
            }
            old = found;
        }
        for (size_t k = 0; fetched && k < count; k++)
            nbrma_narrow_store(fetched, i + k, esize,
                               nbrma_narrow_extract(old, first + (unsigned) (k * esize), esize));
        i += count;
    }
    return 0;
}

/* --- the CPU's atomics on elements of every size ------------------------- */

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

/* Runs of at least 64 bytes of aligned elements (lane-wise: whole words)
 * go in hardware transactions where the processor has them
 * (cpu_transactions.h). */
uint64_t nbrma_cpu_cswap(void *target, unsigned esize, uint64_t compare, uint64_t value);

/* nbrma_cpu_cswap of packed elements: `compare_result` holds the compare
 * value and receives the old element, `value` the new one. */
static inline void nbrma_cpu_cswap_packed(void *target, unsigned esize, const void *value,
                                          void *compare_result)
{
    nbrma_element_store(compare_result, 0, esize,
                        nbrma_cpu_cswap(target, esize, nbrma_element_load(compare_result, 0, esize),
                                        nbrma_element_load(value, 0, esize)));
}

#ifdef __cplusplus
}
#endif
#endif /* NBRMA_NARROW_OPS_H_INCLUDED */
