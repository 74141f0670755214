/*
 * mpich-nbrma core: the fence barrier's messages (rule 5), a k-ary
 * dissemination barrier. Every process announces that its epochs before
 * fence number s completed here. In round j it tells the processes i * k^j
 * ranks after it (i = 1 .. k-1, as far as there are processes), once it has
 * heard every message of round j-1 from the processes as far before it;
 * once it has heard every round, every process has announced (MPICH's
 * k-dissemination barrier). A message of round j from the process i * k^j
 * before me says that the k^j processes before and including it announced:
 * those i * k^j to (i + 1) * k^j - 1 ranks before me (rule F1 asks so of
 * single peers).
 *
 * k is NBRMA_FENCE_RADIX, or the number of processes where it is smaller:
 * up to 64 processes every process tells every other in one round (one
 * latency, P - 1 messages: what the engine always did, and all that this
 * project's 2-core machines can measure); beyond, the rounds keep a
 * process's messages per fence at (k - 1) * ceil(log_k P), 126 for 4096
 * processes instead of 4095. The same constant in every process: a setting
 * would have to agree across a window's processes.
 *
 * A token carries the fence number, the round and the index through the
 * transport, which does not look inside. Plain C, inline, no MPICH or UCX
 * header: used by the engine (activation.cpp, target_side.cpp) and by the
 * unit tests and the fuzzer, which model the peers.
 */

#ifndef NBRMA_FENCE_BARRIER_H_INCLUDED
#define NBRMA_FENCE_BARRIER_H_INCLUDED

#include <stdbool.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Processes a round tells at most, plus one; at most 64 (a round's messages
 * heard are one 64-bit mask). */
#define NBRMA_FENCE_RADIX 64

static inline int nbrma_fence_radix(int nprocs)
{
    return nprocs < 2 ? 2 : nprocs < NBRMA_FENCE_RADIX ? nprocs : NBRMA_FENCE_RADIX;
}

/* Distance of round `round`'s first partner: k^round. */
static inline int64_t nbrma_fence_stride(int nprocs, int round)
{
    int64_t stride = 1;

    for (int j = 0; j < round; j++)
        stride *= nbrma_fence_radix(nprocs);
    return stride;
}

/* Rounds of a barrier of `nprocs` processes: ceil(log_k nprocs), 0 for one. */
static inline int nbrma_fence_rounds(int nprocs)
{
    int rounds = 0;

    for (int64_t span = 1; span < nprocs; span *= nbrma_fence_radix(nprocs))
        rounds++;
    return rounds;
}

/* Whether round `round` has a message with index `index` (1 .. k-1). */
static inline bool nbrma_fence_index_valid(int nprocs, int round, int index)
{
    return round >= 0 && round < nbrma_fence_rounds(nprocs) && index >= 1 &&
        index < nbrma_fence_radix(nprocs) && index * nbrma_fence_stride(nprocs, round) < nprocs;
}

/* The messages of round `round`, bit index - 1 for each. */
static inline uint64_t nbrma_fence_round_mask(int nprocs, int round)
{
    uint64_t mask = 0;

    for (int index = 1; nbrma_fence_index_valid(nprocs, round, index); index++)
        mask |= (uint64_t) 1 << (index - 1);
    return mask;
}

/* The process `distance` ranks after and before `me`, 0 <= distance <
 * nprocs (a message's distance, index * stride, always is): no division. */
static inline int nbrma_fence_after(int me, int nprocs, int64_t distance)
{
    int64_t rank = me + distance;

    return (int) (rank >= nprocs ? rank - nprocs : rank);
}

static inline int nbrma_fence_before(int me, int nprocs, int64_t distance)
{
    int64_t rank = me - distance;

    return (int) (rank < 0 ? rank + nprocs : rank);
}

/* Whom `me` tells with message `index` of round `round`, and whom it hears
 * with it (a message that exists: nbrma_fence_index_valid). */
static inline int nbrma_fence_to(int me, int nprocs, int round, int index)
{
    return nbrma_fence_after(me, nprocs, index * nbrma_fence_stride(nprocs, round));
}

static inline int nbrma_fence_from(int me, int nprocs, int round, int index)
{
    return nbrma_fence_before(me, nprocs, index * nbrma_fence_stride(nprocs, round));
}

#define NBRMA_FENCE_FIELD_BITS 8

static inline uint64_t nbrma_fence_token(uint64_t fence_seq, int round, int index)
{
    return fence_seq << (2 * NBRMA_FENCE_FIELD_BITS) |
        (uint64_t) round << NBRMA_FENCE_FIELD_BITS | (uint64_t) index;
}

static inline uint64_t nbrma_fence_token_seq(uint64_t token)
{
    return token >> (2 * NBRMA_FENCE_FIELD_BITS);
}

static inline int nbrma_fence_token_round(uint64_t token)
{
    return (int) ((token >> NBRMA_FENCE_FIELD_BITS) & ((1u << NBRMA_FENCE_FIELD_BITS) - 1));
}

static inline int nbrma_fence_token_index(uint64_t token)
{
    return (int) (token & ((1u << NBRMA_FENCE_FIELD_BITS) - 1));
}

/* The message (*round, *index) whose arrival tells `me` that `peer` (not
 * me) announced: the one of the peer's distance before me. */
static inline void nbrma_fence_covering(int me, int nprocs, int peer, int *round, int *index)
{
    int64_t distance = (me - peer + nprocs) % nprocs, stride = 1;
    int j = 0;

    while (stride * nbrma_fence_radix(nprocs) <= distance) {
        stride *= nbrma_fence_radix(nprocs);
        j++;
    }
    *round = j;
    *index = (int) (distance / stride);
}

#ifdef __cplusplus
}
#endif
#endif /* NBRMA_FENCE_BARRIER_H_INCLUDED */
