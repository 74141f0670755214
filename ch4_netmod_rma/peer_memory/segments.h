/*
 * mpich-nbrma: the elements of an accumulate's target as the contiguous
 * segments of its datatype (struct iovec; MPICH's typerep makes them in the
 * glue: MPIDI_NBRMA_segments_of), MPICH- and UCX-free
 * (test/unit/test_segments.cpp). Inline: accumulates come here one by one.
 */

#ifndef NBRMA_SEGMENTS_H_INCLUDED
#define NBRMA_SEGMENTS_H_INCLUDED

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>
#include "narrow_ops.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The address of each element of `esize` bytes, segment after segment, into
 * addrs (as many as the segments hold); false if a segment does not hold
 * whole elements (the addresses before it are written). The segments may be
 * another process's addresses (UCX's atomics: native_atomics.c). */
static inline bool nbrma_segments_element_addresses(const struct iovec *segments,
                                                    size_t n_segments, size_t esize,
                                                    uint64_t * addrs)
{
    size_t i = 0;

    for (size_t s = 0; s < n_segments; s++) {
        if (segments[s].iov_len % esize)
            return false;
        for (size_t off = 0; off < segments[s].iov_len; off += esize)
            addrs[i++] = (uint64_t) (uintptr_t) segments[s].iov_base + off;
    }
    return true;
}

/* Whether every segment begins aligned to `esize` (a power of two): then
 * each element of `esize` bytes is (segments hold whole elements). */
static inline bool nbrma_segments_aligned(const struct iovec *segments, size_t n_segments,
                                          size_t esize)
{
    for (size_t s = 0; s < n_segments; s++)
        if ((uintptr_t) segments[s].iov_base % esize != 0)
            return false;
    return true;
}

/* nbrma_cpu_apply on each segment of this process's memory in turn, with
 * the operands packed in `operand` (NULL: NO_OP) and the old elements
 * packed into `fetched` (NULL: not wanted) in the same order. */
static inline void nbrma_cpu_apply_segments(const struct iovec *segments, size_t n_segments,
                                            const void *operand, unsigned esize,
                                            nbrma_narrow_op_t op, void *fetched)
{
    size_t done = 0;

    for (size_t s = 0; s < n_segments; s++) {
        size_t len = segments[s].iov_len;
        nbrma_cpu_apply(segments[s].iov_base, operand ? (const char *) operand + done : NULL,
                        len / esize, esize, op, fetched ? (char *) fetched + done : NULL);
        done += len;
    }
}

#ifdef __cplusplus
}
#endif
#endif /* NBRMA_SEGMENTS_H_INCLUDED */
