/*
 * mpich-nbrma: 1- and 2-byte integer accumulates on the aligned 8-byte word
 * around them (narrow_ops.h). Elements are read and written through memcpy at
 * their byte offset, so the code does not depend on byte order.
 */

#include "narrow_ops.h"
#include "cpu_features.h"
#include "cpu_transactions.h"
#include "element_combine.h"
#include <string.h>

uint64_t nbrma_narrow_load(const void *packed, size_t i, unsigned esize)
{
    const unsigned char *element = (const unsigned char *) packed + i * esize;

    if (esize == 1)
        return *element;
    uint16_t v;
    memcpy(&v, element, 2);
    return v;
}

void nbrma_narrow_store(void *packed, size_t i, unsigned esize, uint64_t value)
{
    unsigned char *element = (unsigned char *) packed + i * esize;

    if (esize == 1) {
        *element = (unsigned char) value;
    } else {
        uint16_t v16 = (uint16_t) value;
        memcpy(element, &v16, 2);
    }
}

uint64_t nbrma_narrow_extract(uint64_t word, unsigned offset, unsigned esize)
{
    return nbrma_narrow_load((const unsigned char *) &word + offset, 0, esize);
}

/* Lane-wise: addition without carries across lanes of `esize` bytes (the top
 * bit of each lane is added apart), the bitwise operations as they are. A
 * whole word of elements at once, or one element zero-extended (its lane is
 * the lowest; callers keep that lane only). Elements of 8 bytes: one lane,
 * plain addition. The other operations take one element only
 * (nbrma_combine_element). */
static inline uint64_t sum_lanes(uint64_t old, uint64_t operand, unsigned esize)
{
    const uint64_t high = esize == 1 ? 0x8080808080808080ull :
        esize == 2 ? 0x8000800080008000ull : 0x8000000080000000ull;

    if (esize == 8)
        return old + operand;
    return ((old & ~high) + (operand & ~high)) ^ ((old ^ operand) & high);
}

static uint64_t combine_lanes(uint64_t old, uint64_t operand, unsigned esize,
                              nbrma_narrow_op_t op)
{
    if (!nbrma_op_lane_wise(op))
        return nbrma_combine_element(old, operand, esize, op);
    switch (op) {
        case NBRMA_NARROW_SUM:
            return sum_lanes(old, operand, esize);
        case NBRMA_NARROW_BAND:
            return old & operand;
        case NBRMA_NARROW_BOR:
            return old | operand;
        case NBRMA_NARROW_BXOR:
            return old ^ operand;
        case NBRMA_NARROW_REPLACE:
            return operand;
        case NBRMA_NARROW_NO_OP:
        default:
            return old;
    }
}

uint64_t nbrma_narrow_combine(uint64_t word, unsigned offset, unsigned esize, uint64_t operand,
                              nbrma_narrow_op_t op)
{
    nbrma_narrow_store((unsigned char *) &word + offset, 0, esize,
                       combine_lanes(nbrma_narrow_extract(word, offset, esize), operand, esize,
                                     op));
    return word;
}

/* A run of aligned 4- or 8-byte elements and a lane-wise operation: the
 * CPU's atomic instruction per element in a tight loop, one per operation
 * (nbrma_cpu_apply's element loop spent some 30 instructions on each besides it: an
 * 8 KiB MPI_INT sum, callgrind). */
#define WIDE_LOOP(type, target, operand, n, fetched, update)                            \
    for (size_t run_i = 0; run_i < (n); run_i++) {                                      \
        type *run_t = (type *) (target) + run_i, run_v = 0, run_old;                   \
        if ((operand) != NULL)                                                          \
            memcpy(&run_v, (const char *) (operand) + run_i * sizeof(type), sizeof(type)); \
        run_old = (update);                                                             \
        if ((fetched) != NULL)                                                          \
            memcpy((char *) (fetched) + run_i * sizeof(type), &run_old, sizeof(type));  \
    }

#define WIDE_RUN(type, target, operand, n, op, fetched)                                 \
    do {                                                                                \
        const void *run_operand = (op) == NBRMA_NARROW_NO_OP ? NULL : (operand);        \
        switch (op) {                                                                   \
            case NBRMA_NARROW_SUM:                                                      \
                WIDE_LOOP(type, target, run_operand, n, fetched,                        \
                          __atomic_fetch_add(run_t, run_v, __ATOMIC_ACQ_REL));          \
                break;                                                                  \
            case NBRMA_NARROW_BAND:                                                     \
                WIDE_LOOP(type, target, run_operand, n, fetched,                        \
                          __atomic_fetch_and(run_t, run_v, __ATOMIC_ACQ_REL));          \
                break;                                                                  \
            case NBRMA_NARROW_BOR:                                                      \
                WIDE_LOOP(type, target, run_operand, n, fetched,                        \
                          __atomic_fetch_or(run_t, run_v, __ATOMIC_ACQ_REL));           \
                break;                                                                  \
            case NBRMA_NARROW_BXOR:                                                     \
                WIDE_LOOP(type, target, run_operand, n, fetched,                        \
                          __atomic_fetch_xor(run_t, run_v, __ATOMIC_ACQ_REL));          \
                break;                                                                  \
            case NBRMA_NARROW_REPLACE:                                                  \
                WIDE_LOOP(type, target, run_operand, n, fetched,                        \
                          __atomic_exchange_n(run_t, run_v, __ATOMIC_ACQ_REL));         \
                break;                                                                  \
            case NBRMA_NARROW_NO_OP:                                                    \
            default:                                                                    \
                WIDE_LOOP(type, target, run_operand, n, fetched,                        \
                          __atomic_load_n(run_t, __ATOMIC_ACQUIRE));                    \
                break;                                                                  \
        }                                                                               \
    } while (0)

/* `words` whole aligned words of elements of `esize` (1, 2 or 4) bytes and a
 * lane-wise operation, the bulk of a long accumulate: one atomic instruction
 * per word in a tight loop; the bitwise operations, replace and no-op are
 * those of 8-byte elements (WIDE_RUN), a sum adds lane by lane in a
 * compare-and-swap loop. Each element is updated atomically (its word is).
 * Per word of an 8 KiB MPI_CHAR sum the general loop below took about 110
 * instructions (callgrind). */
static void apply_words(uint64_t * word, const char *operand, size_t words, unsigned esize,
                        nbrma_narrow_op_t op, char *fetched)
{
    if (op != NBRMA_NARROW_SUM) {
        WIDE_RUN(uint64_t, word, operand, words, op, fetched);
        return;
    }
    for (size_t w = 0; w < words; w++) {
        uint64_t v, old = __atomic_load_n(&word[w], __ATOMIC_RELAXED), desired;

        memcpy(&v, operand + 8 * w, 8);
        do
            desired = sum_lanes(old, v, esize);
        while (desired != old &&
               !__atomic_compare_exchange_n(&word[w], &old, desired, false, __ATOMIC_ACQ_REL,
                                            __ATOMIC_RELAXED));
        if (fetched)
            memcpy(fetched + 8 * w, &old, 8);
    }
}

#if defined(__x86_64__)
/* cmpxchg16b (CPUID.1:ECX bit 13: every x86-64 processor but the first ones) */
static bool have_cas16(void)
{
    static int known = -1;

    return nbrma_cpu_has(&known, 1, false, 13);
}

/* A 16-byte compare-and-swap of the aligned `p`; on failure *expected is
 * what `p` held. */
static inline bool cas16(uint64_t * p, uint64_t expected[2], const uint64_t desired[2])
{
    bool swapped;

    __asm__ __volatile__("lock cmpxchg16b %1":"=@ccz"(swapped), "+m"(*(volatile uint64_t(*)[2]) p),
                         "+a"(expected[0]), "+d"(expected[1])
                         :"b"(desired[0]), "c"(desired[1])
                         :"memory");
    return swapped;
}
#endif

/* `words` whole aligned words as apply_words does, two at a time where the
 * processor has a 16-byte compare-and-swap: lane-wise, the two words' new
 * values in one swap, each element still updated atomically (its 16 bytes
 * are). About 14 ns per 16 bytes here against 8 per 8 bytes: an 8 KiB
 * MPI_INT accumulate 8.2 -> 7.3 us, MPI_CHAR 10.1 -> 7.3. */
static void swap_whole_words(uint64_t * word, const char *operand, size_t words, unsigned esize,
                             nbrma_narrow_op_t op, char *fetched)
{
#if defined(__x86_64__)
    if (words >= 2 && have_cas16()) {
        size_t w = ((uintptr_t) word & 15) != 0;

        if (w)
            apply_words(word, operand, 1, esize, op, fetched);
        for (; w + 2 <= words; w += 2) {
            uint64_t v[2] = { 0, 0 }, old[2], desired[2];

            if (operand)
                memcpy(v, operand + 8 * w, 16);
            /* a guess, torn or not: the swap checks it */
            old[0] = __atomic_load_n(&word[w], __ATOMIC_RELAXED);
            old[1] = __atomic_load_n(&word[w + 1], __ATOMIC_RELAXED);
            do {
                desired[0] = combine_lanes(old[0], v[0], esize, op);
                desired[1] = combine_lanes(old[1], v[1], esize, op);
            } while (!cas16(&word[w], old, desired));
            if (fetched)
                memcpy(fetched + 8 * w, old, 16);
        }
        if (w < words)
            apply_words(word + w, operand ? operand + 8 * w : NULL, 1, esize, op,
                        fetched ? fetched + 8 * w : NULL);
        return;
    }
#endif
    apply_words(word, operand, words, esize, op, fetched);
}


static void swap_words_run(char *target, const char *operand, size_t words, unsigned esize,
                           nbrma_narrow_op_t op, char *fetched)
{
    swap_whole_words((uint64_t *) target, operand, words, esize, op, fetched);
}

/* `words` whole aligned words of a lane-wise operation on elements of
 * `esize` (1, 2, 4 or 8) bytes: in transactions, else by the swaps above. */
static void apply_whole_words(uint64_t * word, const char *operand, size_t words, unsigned esize,
                              nbrma_narrow_op_t op, char *fetched)
{
    nbrma_apply_run((char *) word, operand, words, 8, esize, op, fetched, swap_words_run);
}

void nbrma_narrow_apply_cpu(void *target, const void *operand, size_t n, unsigned esize,
                            nbrma_narrow_op_t op, void *fetched)
{
    uintptr_t addr = (uintptr_t) target;
    size_t i = 0;

    while (i < n) {
        if (((addr + i * esize) & 7) == 0 && nbrma_op_lane_wise(op) && (n - i) * esize >= 8) {
            size_t words = (n - i) * esize / 8;
            apply_whole_words((uint64_t *) (addr + i * esize),
                              (const char *) operand + i * esize, words, esize, op,
                              fetched ? (char *) fetched + i * esize : NULL);
            i += words * 8 / esize;
            continue;
        }
        uint64_t *word = (uint64_t *) ((addr + i * esize) & ~(uintptr_t) 7);
        unsigned first = (unsigned) ((addr + i * esize) & 7);
        /* the elements of this call that lie in this word */
        size_t in_word = (8 - first) / esize;
        if (in_word == 0) {
            /* a 2-byte element across two words: only its owner updates it
             * (origins send it as an active message: narrow_atomics.c), and
             * plain stores never undo a neighbour's swap (the swap fails and
             * retries if the word changed under it) */
            uint64_t old = nbrma_narrow_load(target, i, esize);
            if (fetched)
                nbrma_narrow_store(fetched, i, esize, old);
            nbrma_narrow_store(target, i, esize,
                               combine_lanes(old, op == NBRMA_NARROW_NO_OP ? 0 :
                                             nbrma_narrow_load(operand, i, esize), esize, op));
            i++;
            continue;
        }
        if (in_word > n - i)
            in_word = n - i;
        /* part of a word (whole ones of a lane-wise operation went above) */
        uint64_t old = __atomic_load_n(word, __ATOMIC_RELAXED), desired;
        do {
            desired = old;
            for (size_t k = 0; k < in_word; k++)
                desired = nbrma_narrow_combine(desired, first + (unsigned) (k * esize), esize,
                                               op == NBRMA_NARROW_NO_OP ? 0 :
                                               nbrma_narrow_load(operand, i + k, esize), op);
        } while (desired != old &&
                 !__atomic_compare_exchange_n(word, &old, desired, false, __ATOMIC_ACQ_REL,
                                              __ATOMIC_RELAXED));
        if (fetched)
            for (size_t k = 0; k < in_word; k++)
                nbrma_narrow_store(fetched, i + k, esize,
                                   nbrma_narrow_extract(old, first + (unsigned) (k * esize),
                                                        esize));
        i += in_word;
    }
}

uint64_t nbrma_narrow_cswap_cpu(void *target, unsigned esize, uint64_t compare, uint64_t value)
{
    uintptr_t addr = (uintptr_t) target;
    uint64_t *word = (uint64_t *) (addr & ~(uintptr_t) 7);
    unsigned offset = (unsigned) (addr & 7);
    uint64_t mask = esize == 1 ? 0xff : 0xffff;
    uint64_t old, cur;

    if (offset + esize > 8) {
        /* across two words: plain, as in nbrma_narrow_apply_cpu */
        cur = nbrma_narrow_load(target, 0, esize);
        if (cur == (compare & mask))
            nbrma_narrow_store(target, 0, esize, value);
        return cur;
    }
    old = __atomic_load_n(word, __ATOMIC_RELAXED);
    for (;;) {
        cur = nbrma_narrow_extract(old, offset, esize);
        if (cur != (compare & mask))
            return cur;
        uint64_t desired = nbrma_narrow_combine(old, offset, esize, value, NBRMA_NARROW_REPLACE);
        if (desired == old ||
            __atomic_compare_exchange_n(word, &old, desired, false, __ATOMIC_ACQ_REL,
                                        __ATOMIC_RELAXED))
            return cur;
    }
}

/* One aligned 4- or 8-byte element by a compare-and-swap loop: the
 * operations the CPU has no instruction for. Returns the old element. */
static uint64_t cas_apply(void *element, uint64_t operand, unsigned esize, nbrma_narrow_op_t op)
{
    if (esize == 8) {
        uint64_t *t = (uint64_t *) element, old = __atomic_load_n(t, __ATOMIC_RELAXED), desired;
        do
            desired = nbrma_combine_element(old, operand, 8, op);
        while (desired != old &&
               !__atomic_compare_exchange_n(t, &old, desired, false, __ATOMIC_ACQ_REL,
                                            __ATOMIC_RELAXED));
        return old;
    }
    uint32_t *t = (uint32_t *) element, old = __atomic_load_n(t, __ATOMIC_RELAXED), desired;
    do
        desired = (uint32_t) nbrma_combine_element(old, operand, 4, op);
    while (desired != old &&
           !__atomic_compare_exchange_n(t, &old, desired, false, __ATOMIC_ACQ_REL,
                                        __ATOMIC_RELAXED));
    return old;
}

uint64_t nbrma_element_load(const void *packed, size_t i, unsigned esize)
{
    uint64_t v64 = 0;
    uint32_t v32;

    if (esize <= 2)
        return nbrma_narrow_load(packed, i, esize);
    if (esize == 8) {
        memcpy(&v64, (const char *) packed + i * 8, 8);
        return v64;
    }
    memcpy(&v32, (const char *) packed + i * 4, 4);
    return v32;
}

void nbrma_element_store(void *packed, size_t i, unsigned esize, uint64_t value)
{
    uint32_t v32 = (uint32_t) value;

    if (esize <= 2)
        nbrma_narrow_store(packed, i, esize, value);
    else if (esize == 8)
        memcpy((char *) packed + i * 8, &value, 8);
    else
        memcpy((char *) packed + i * 4, &v32, 4);
}

/* Aligned 4-byte elements of a lane-wise operation: the 8-byte words they
 * fill go by apply_whole_words (two elements per word, each updated
 * atomically: its word is), an element alone at either end by itself. The
 * locked instruction, about 8 ns each here, was the whole cost of a long
 * MPI_INT accumulate: MPICH's rma_contig, 2 MiB of MPI_BXOR under a lock,
 * took 4,600 us against vanilla's 2,800 with one per element. */
static void apply_int_pairs(char *target, const char *operand, size_t n, nbrma_narrow_op_t op,
                            char *fetched)
{
    size_t head = ((uintptr_t) target & 7) != 0 && n > 0 ? 1 : 0, words = (n - head) / 2;
    size_t tail = head + 2 * words;

    if (head)
        WIDE_RUN(uint32_t, target, operand, 1, op, fetched);
    if (words)
        apply_whole_words((uint64_t *) (target + 4 * head), operand ? operand + 4 * head : NULL,
                          words, 4, op, fetched ? fetched + 4 * head : NULL);
    if (tail < n)
        WIDE_RUN(uint32_t, target + 4 * tail, operand ? operand + 4 * tail : NULL, 1, op,
                 fetched ? fetched + 4 * tail : NULL);
}

/* The atomics' runs of aligned 8-byte elements of a lane-wise operation
 * (one locked instruction each) and of aligned 4- and 8-byte elements of any
 * other (a compare-and-swap loop each), for nbrma_apply_run. */
static void wide_words_run(char *target, const char *operand, size_t n, unsigned esize,
                           nbrma_narrow_op_t op, char *fetched)
{
    WIDE_RUN(uint64_t, target, operand, n, op, fetched);
}

static void swap_elements_run(char *target, const char *operand, size_t n, unsigned esize,
                              nbrma_narrow_op_t op, char *fetched)
{
    for (size_t i = 0; i < n; i++) {
        uint64_t old = cas_apply(target + i * esize, nbrma_element_load(operand, i, esize),
                                 esize, op);
        if (fetched)
            nbrma_element_store(fetched, i, esize, old);
    }
}

void nbrma_cpu_apply(void *target, const void *operand, size_t n, unsigned esize,
                     nbrma_narrow_op_t op, void *fetched)
{
    if (esize < 4) {
        nbrma_narrow_apply_cpu(target, operand, n, esize, op, fetched);
        return;
    }
    if (((uintptr_t) target & (esize - 1)) == 0) {
        /* every element aligned: whole units for nbrma_apply_run */
        if (!nbrma_op_lane_wise(op))
            nbrma_apply_run(target, operand, n, esize, esize, op, fetched, swap_elements_run);
        else if (esize == 8)
            nbrma_apply_run(target, operand, n, 8, 8, op, fetched, wide_words_run);
        else
            apply_int_pairs(target, operand, n, op, fetched);
        return;
    }
    /* no element aligned: only the owner updates such elements (origins send
     * them as active messages), so plain loads and stores */
    for (size_t i = 0; i < n; i++) {
        char *element = (char *) target + i * esize;
        uint64_t v = op == NBRMA_NARROW_NO_OP ? 0 : nbrma_element_load(operand, i, esize), old;

        old = nbrma_element_load(element, 0, esize);
        nbrma_element_store(element, 0, esize, combine_lanes(old, v, esize, op));
        if (fetched)
            nbrma_element_store(fetched, i, esize, old);
    }
}

uint64_t nbrma_cpu_cswap(void *target, unsigned esize, uint64_t compare, uint64_t value)
{
    if (esize < 4)
        return nbrma_narrow_cswap_cpu(target, esize, compare, value);
    if (((uintptr_t) target & (esize - 1)) != 0) {
        uint64_t cur = nbrma_element_load(target, 0, esize);
        if (cur == (esize == 4 ? (uint32_t) compare : compare))
            nbrma_element_store(target, 0, esize, value);
        return cur;
    }
    if (esize == 8) {
        uint64_t expected = compare;
        __atomic_compare_exchange_n((uint64_t *) target, &expected, value, false,
                                    __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE);
        return expected;
    }
    uint32_t expected32 = (uint32_t) compare;
    __atomic_compare_exchange_n((uint32_t *) target, &expected32, (uint32_t) value, false,
                                __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE);
    return expected32;
}
