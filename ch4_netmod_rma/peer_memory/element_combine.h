/*
 * mpich-nbrma: the element operations that are not lane-wise (MPI_PROD,
 * MPI_MIN, MPI_MAX of integers, every float and double operation but the
 * lane-wise ones) on one element, as MPICH computes them. Shared by the
 * atomics' compare-and-swap loops (narrow_ops.c) and the plain loops inside
 * hardware transactions (cpu_transactions.c), so that both compute the same.
 */

#ifndef NBRMA_ELEMENT_COMBINE_H_INCLUDED
#define NBRMA_ELEMENT_COMBINE_H_INCLUDED

#include "narrow_ops.h"
#include <string.h>

static inline int64_t nbrma_sign_extended(uint64_t v, unsigned esize)
{
    unsigned shift = 64 - 8 * esize;

    return (int64_t) (v << shift) >> shift;
}

static inline uint64_t nbrma_masked(uint64_t v, unsigned esize)
{
    return esize == 8 ? v : v & ((UINT64_C(1) << (8 * esize)) - 1);
}

/* MPICH's MPI_SUM, MPI_PROD, MPI_MIN, MPI_MAX (MPL_MIN, MPL_MAX) of the
 * target's element `a` and the operand `b`, in their own type. */
#define NBRMA_FLOAT_COMBINE(a, b, op)                                                 \
    ((op) == NBRMA_ELEMENT_FLOAT_SUM ? (a) + (b) :                              \
     (op) == NBRMA_ELEMENT_FLOAT_PROD ? (a) * (b) :                             \
     (op) == NBRMA_ELEMENT_FLOAT_MIN ? ((a) < (b) ? (a) : (b)) : ((a) > (b) ? (a) : (b)))

/* The element operations that are not lane-wise, on one element zero-extended
 * (4 or 8 bytes for the floating-point ones); MIN and MAX keep MPICH's
 * comparisons, with the target first, NaNs included. */
static inline uint64_t nbrma_combine_element(uint64_t old, uint64_t operand, unsigned esize,
                                             nbrma_narrow_op_t op)
{
    float f_old, f_operand, f;
    double d_old, d_operand, d;
    uint32_t bits32;

    switch (op) {
        case NBRMA_ELEMENT_PROD:
            return old * operand;
        case NBRMA_ELEMENT_MIN_SIGNED:
            return nbrma_sign_extended(old, esize) < nbrma_sign_extended(operand, esize) ?
                old : operand;
        case NBRMA_ELEMENT_MAX_SIGNED:
            return nbrma_sign_extended(old, esize) > nbrma_sign_extended(operand, esize) ?
                old : operand;
        case NBRMA_ELEMENT_MIN_UNSIGNED:
            return nbrma_masked(old, esize) < nbrma_masked(operand, esize) ? old : operand;
        case NBRMA_ELEMENT_MAX_UNSIGNED:
            return nbrma_masked(old, esize) > nbrma_masked(operand, esize) ? old : operand;
        default:
            break;
    }
    if (esize == 4) {
        bits32 = (uint32_t) old;
        memcpy(&f_old, &bits32, 4);
        bits32 = (uint32_t) operand;
        memcpy(&f_operand, &bits32, 4);
        f = NBRMA_FLOAT_COMBINE(f_old, f_operand, op);
        memcpy(&bits32, &f, 4);
        return bits32;
    }
    memcpy(&d_old, &old, 8);
    memcpy(&d_operand, &operand, 8);
    d = NBRMA_FLOAT_COMBINE(d_old, d_operand, op);
    memcpy(&old, &d, 8);
    return old;
}

#endif /* NBRMA_ELEMENT_COMBINE_H_INCLUDED */
