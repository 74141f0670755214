/*
 * mpich-nbrma: runs of aligned elements applied inside hardware transactions
 * (cpu_transactions.h), the atomics' way for the chunks that do not commit.
 */

#include "cpu_transactions.h"
#include "cpu_features.h"
#include "element_combine.h"
#include <string.h>

/* Where the processor has restricted transactional memory (Intel's RTM,
 * CPUID.7:EBX bit 11), a run of aligned units (8-byte words of a lane-wise
 * operation, or 4- and 8-byte elements of any other) is applied in chunks of
 * TRANSACTION_BYTES, each inside one transaction with plain loads and stores.
 * A transaction is atomic with respect to every other access to the memory it
 * touched, transactional or not, from any process that maps it: a conflicting
 * access (another origin's compare-and-swap or fetch-and-add, the target's
 * own apply) aborts it before anything of it became visible, so no update is
 * lost and each element is still updated atomically, as with one locked
 * instruction per word. A committed transaction orders memory as a locked
 * instruction does. A chunk whose transaction aborts (a conflict, a page not
 * yet mapped here, an interrupt) is retried while the processor says a retry
 * may succeed, at most TRANSACTION_TRIES times, and else applied by the
 * atomics the caller names (narrow_ops.c's). An 8 KiB MPI_CHAR sum: about 0.5 us here against 7.3 with
 * the 16-byte swaps (a chunk of 1 KiB: the transaction's own cost, some
 * 15-40 ns, is spread over 128 words, and it stays far inside the L1 cache
 * that bounds a transaction's footprint). Under valgrind every transaction
 * aborts: the atomics apply everything. */
enum {
    TRANSACTION_BYTES = 1024,
    TRANSACTION_MIN_BYTES = 64, /* shorter runs: a few locked instructions cost less */
    TRANSACTION_TRIES = 3,
    /* a processor (or a hypervisor) that aborts every transaction, for a
     * reason no retry helps: after this many chunks in a row without a
     * commit, transactions are left alone for the next TRANSACTION_REST */
    TRANSACTION_FAILURES_TO_REST = 16,
    TRANSACTION_REST = 4096
};

static bool transactions_wanted = true;
/* hints shared by a process's threads, racy on purpose (relaxed): at worst a
 * chunk tries once more or once less (the rest is signed: two threads that
 * both take its last chunk leave it below 0, which counts as none) */
static unsigned transaction_failures;
static int transaction_rest;
static size_t transaction_commits;

void nbrma_cpu_transactions_enable(bool enable)
{
    transactions_wanted = enable;
}

size_t nbrma_cpu_transactions_committed(void)
{
    return __atomic_load_n(&transaction_commits, __ATOMIC_RELAXED);
}

#if defined(__x86_64__)
#include <immintrin.h>

/* restricted transactional memory (CPUID.7:EBX bit 11) */
static bool have_rtm(void)
{
    static int known = -1;

    return nbrma_cpu_has(&known, 7, true, 11);
}

bool nbrma_cpu_has_transactions(void)
{
    return have_rtm();
}

/* Element types that may alias the window's memory and the buffers. */
typedef uint8_t __attribute__ ((may_alias)) any_u8;
typedef uint16_t __attribute__ ((may_alias)) any_u16;
typedef uint32_t __attribute__ ((may_alias)) any_u32;
typedef uint64_t __attribute__ ((may_alias)) any_u64;
typedef float __attribute__ ((may_alias)) any_float;
typedef double __attribute__ ((may_alias)) any_double;

#define PLAIN_LOOP(type, from, count, statement)                                \
    do {                                                                        \
        type *restrict plain_t = (type *) target;                               \
        const type *restrict plain_v = (const type *) operand;                  \
        for (size_t plain_i = (from); plain_i < (count); plain_i++)             \
            statement;                                                          \
    } while (0)

/* The common operations 16 bytes at a time with SSE2 (every x86-64 has it;
 * MPICH's -O2 leaves loops of unknown length scalar), the rest of a chunk
 * that is not a multiple of 16 bytes by PLAIN_LOOP. */
#define VECTOR_LOOP(type, vector_op)                                            \
    do {                                                                        \
        size_t vector_blocks = bytes / 16;                                      \
        for (size_t b = 0; b < vector_blocks; b++) {                            \
            __m128i *vector_t = (__m128i *) (target + 16 * b);                  \
            __m128i vector_v = _mm_loadu_si128((const __m128i *) (operand + 16 * b)); \
            _mm_storeu_si128(vector_t, vector_op(_mm_loadu_si128(vector_t), vector_v)); \
        }                                                                       \
        PLAIN_LOOP(type, vector_blocks * 16 / sizeof(type), bytes / sizeof(type), \
                   plain_t[plain_i] = scalar_of_##vector_op(plain_t[plain_i], plain_v[plain_i])); \
    } while (0)

#define scalar_of__mm_add_epi8(a, b) ((a) + (b))
#define scalar_of__mm_add_epi16(a, b) ((a) + (b))
#define scalar_of__mm_add_epi32(a, b) ((a) + (b))
#define scalar_of__mm_add_epi64(a, b) ((a) + (b))
#define scalar_of__mm_and_si128(a, b) ((a) & (b))
#define scalar_of__mm_or_si128(a, b) ((a) | (b))
#define scalar_of__mm_xor_si128(a, b) ((a) ^ (b))
#define vector_add_pd(a, b) _mm_castpd_si128(_mm_add_pd(_mm_castsi128_pd(a), _mm_castsi128_pd(b)))
#define vector_add_ps(a, b) _mm_castps_si128(_mm_add_ps(_mm_castsi128_ps(a), _mm_castsi128_ps(b)))
#define scalar_of_vector_add_pd(a, b) ((a) + (b))
#define scalar_of_vector_add_ps(a, b) ((a) + (b))

/* `bytes` bytes of aligned units applied with plain loads and stores; the
 * old contents go to `fetched` first. Only inside a transaction. */
static inline void apply_plain(char *target, const char *operand, size_t bytes, unsigned unit,
                               unsigned esize, nbrma_narrow_op_t op, char *fetched)
{
    if (fetched)
        memcpy(fetched, target, bytes);
    switch (op) {
        case NBRMA_NARROW_NO_OP:
            return;
        case NBRMA_NARROW_REPLACE:
            memcpy(target, operand, bytes);
            return;
        case NBRMA_NARROW_BAND:
            VECTOR_LOOP(any_u64, _mm_and_si128);
            return;
        case NBRMA_NARROW_BOR:
            VECTOR_LOOP(any_u64, _mm_or_si128);
            return;
        case NBRMA_NARROW_BXOR:
            VECTOR_LOOP(any_u64, _mm_xor_si128);
            return;
        case NBRMA_NARROW_SUM:
            if (esize == 1)
                VECTOR_LOOP(any_u8, _mm_add_epi8);
            else if (esize == 2)
                VECTOR_LOOP(any_u16, _mm_add_epi16);
            else if (esize == 4)
                VECTOR_LOOP(any_u32, _mm_add_epi32);
            else
                VECTOR_LOOP(any_u64, _mm_add_epi64);
            return;
        case NBRMA_ELEMENT_FLOAT_SUM:
            /* the same additions in the same precision as one at a time:
             * SSE2 rounds each lane as the scalar instruction does */
            if (unit == 8)
                VECTOR_LOOP(any_double, vector_add_pd);
            else
                VECTOR_LOOP(any_float, vector_add_ps);
            return;
        default:
            /* the other element operations, one element at a time */
            if (unit == 8)
                PLAIN_LOOP(any_u64, 0, bytes / 8,
                           plain_t[plain_i] = nbrma_combine_element(plain_t[plain_i],
                                                                    plain_v[plain_i], 8, op));
            else
                PLAIN_LOOP(any_u32, 0, bytes / 4,
                           plain_t[plain_i] = (uint32_t) nbrma_combine_element(plain_t[plain_i],
                                                                               plain_v[plain_i],
                                                                               4, op));
            return;
    }
}

/* One chunk of `units` units of `unit` (4 or 8) bytes in one transaction;
 * false if it did not commit (nothing of it happened). */
__attribute__ ((target("rtm")))
static bool chunk_in_transaction(char *target, const char *operand, size_t units, unsigned unit,
                                 unsigned esize, nbrma_narrow_op_t op, char *fetched)
{
    for (int attempt = 0; attempt < TRANSACTION_TRIES; attempt++) {
        unsigned status = _xbegin();

        if (status == _XBEGIN_STARTED) {
            apply_plain(target, operand, units * unit, unit, esize, op, fetched);
            _xend();
            return true;
        }
        if (!(status & _XABORT_RETRY))
            break;
    }
    return false;
}
#else
bool nbrma_cpu_has_transactions(void)
{
    return false;
}

static bool chunk_in_transaction(char *target, const char *operand, size_t units, unsigned unit,
                                 unsigned esize, nbrma_narrow_op_t op, char *fetched)
{
    return false;
}
#endif

/* Applies `units` aligned units of `unit` bytes: chunk by chunk in
 * transactions where the processor has them, the rest by `atomics`. The
 * shared counters are written once per call, not per chunk: threads that
 * accumulate at once would otherwise pass their cache line around for every
 * kilobyte. */
void nbrma_apply_run(char *target, const char *operand, size_t units, unsigned unit,
                     unsigned esize, nbrma_narrow_op_t op, char *fetched,
                     nbrma_apply_run_fn atomics)
{
    const size_t chunk_units = TRANSACTION_BYTES / unit;
    size_t done = 0, commits = 0;
    unsigned failures = 0;      /* in a row, since this call's last commit */

    /* (an operand is there for every operation but no-op) */
    if (!transactions_wanted || units * unit < TRANSACTION_MIN_BYTES ||
        (operand == NULL && op != NBRMA_NARROW_NO_OP) || !have_rtm()) {
        atomics(target, operand, units, esize, op, fetched);
        return;
    }
    while (done < units) {
        size_t chunk = units - done < chunk_units ? units - done : chunk_units;
        size_t offset = done * unit;

        if (__atomic_load_n(&transaction_rest, __ATOMIC_RELAXED) > 0) {
            __atomic_fetch_sub(&transaction_rest, 1, __ATOMIC_RELAXED);
        } else if (chunk_in_transaction(target + offset, operand ? operand + offset : NULL,
                                        chunk, unit, esize, op,
                                        fetched ? fetched + offset : NULL)) {
            commits++;
            failures = 0;
            done += chunk;
            continue;
        } else {
            failures++;
        }
        atomics(target + offset, operand ? operand + offset : NULL, chunk, esize, op,
                fetched ? fetched + offset : NULL);
        done += chunk;
    }
    if (commits > 0) {
        __atomic_fetch_add(&transaction_commits, commits, __ATOMIC_RELAXED);
        if (__atomic_load_n(&transaction_failures, __ATOMIC_RELAXED) != failures)
            __atomic_store_n(&transaction_failures, failures, __ATOMIC_RELAXED);
    } else if (failures > 0) {
        failures = __atomic_add_fetch(&transaction_failures, failures, __ATOMIC_RELAXED);
    }
    if (failures >= TRANSACTION_FAILURES_TO_REST) {
        __atomic_store_n(&transaction_failures, 0, __ATOMIC_RELAXED);
        __atomic_store_n(&transaction_rest, TRANSACTION_REST, __ATOMIC_RELAXED);
    }
}
