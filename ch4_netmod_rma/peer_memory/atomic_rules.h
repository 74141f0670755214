/*
 * mpich-nbrma: which accumulates go to which atomics, MPICH- and UCX-free so
 * that unit tests reach every (kind, element, operation) without MPI
 * (test/unit/test_atomic_rules.cpp). The glue asks with MPI's handles mapped
 * to the enums below (ch4/atomics/native_atomics.c: MPIDI_NBRMA_reduce_op_of,
 * MPIDI_NBRMA_atomic_kind_of, MPIDI_NBRMA_element_of) and keeps what touches
 * windows, UCX and MPICH; ch4/atomics/native_atomics.h and narrow_atomics.h
 * say why each path stays atomic with the others.
 *
 * An element is an accumulate's basic type: integers by signedness (MPI_CHAR
 * apart: its signedness is the compiler's, so MPICH's path applies its
 * MIN and MAX), float and double; anything else is none, of size 0.
 *
 * MPI_NO_OP is an operation of the fetching kinds only (MPI_Get_accumulate,
 * MPI_Fetch_and_op: an atomic load); MPI_Accumulate's goes to MPICH's path.
 * A compare-and-swap has no operation: it is one of integers of the sizes
 * the path takes. Three paths:
 *
 * - UCX's atomics (ucp_atomic_op_nbx): signed and unsigned integers of 4 and
 *   8 bytes with MPI_SUM, MPI_BAND, MPI_BOR, MPI_BXOR, MPI_REPLACE, MPI_NO_OP
 *   (UCX's or with 0) and compare-and-swap, element by element.
 *
 * - Narrow atomics: integers of 1 and 2 bytes (MPI_CHAR among them) with the
 *   same operations. UCX has no atomics of that size, so the origin runs UCX
 *   compare-and-swap loops on the aligned 8-byte word and the target applies
 *   them with the CPU's (peer_memory/narrow_ops.h): the lane-wise operations
 *   of nbrma_narrow_op_t.
 *
 * - The CPU's atomics on memory mapped at both ends ("wide": rule R3 of the
 *   core; without it they are the target's side of narrow atomics, the same
 *   accumulates): integers of 1, 2, 4 and 8 bytes with the operations above
 *   and MPI_PROD, MPI_MIN, MPI_MAX (not MPI_CHAR's MIN and MAX); float and
 *   double with MPI_SUM, MPI_PROD, MPI_MIN, MPI_MAX, MPI_REPLACE, MPI_NO_OP;
 *   compare-and-swap of integers only (MPI's rule).
 *
 * Every other operation (MPI_LAND, MPI_LOR, MPI_LXOR, MPI_MAXLOC, MPI_MINLOC,
 * user-defined ones) and every other element goes to MPICH's path. An
 * operation MPI does not define on the type is not one either: MPICH's path
 * reports it.
 */

#ifndef NBRMA_ATOMIC_RULES_H_INCLUDED
#define NBRMA_ATOMIC_RULES_H_INCLUDED

#include <stdbool.h>
#include <stddef.h>
#include <string.h>
#include "narrow_ops.h"

#ifdef __cplusplus
extern "C" {
#endif

/* MPI's predefined operations; OTHER: any other handle (user-defined ones,
 * MPI_OP_NULL). */
typedef enum {
    NBRMA_REDUCE_SUM,
    NBRMA_REDUCE_PROD,
    NBRMA_REDUCE_MAX,
    NBRMA_REDUCE_MIN,
    NBRMA_REDUCE_LAND,
    NBRMA_REDUCE_LOR,
    NBRMA_REDUCE_LXOR,
    NBRMA_REDUCE_BAND,
    NBRMA_REDUCE_BOR,
    NBRMA_REDUCE_BXOR,
    NBRMA_REDUCE_REPLACE,
    NBRMA_REDUCE_NO_OP,
    NBRMA_REDUCE_MAXLOC,
    NBRMA_REDUCE_MINLOC,
    NBRMA_REDUCE_OTHER
} nbrma_reduce_op_t;

/* The accumulating RMA calls (puts and gets go to no atomics). */
typedef enum {
    NBRMA_ATOMIC_ACCUMULATE,
    NBRMA_ATOMIC_GET_ACCUMULATE,
    NBRMA_ATOMIC_FETCH_AND_OP,
    NBRMA_ATOMIC_COMPARE_AND_SWAP
} nbrma_atomic_kind_t;

typedef enum {
    NBRMA_CLASS_NONE,
    NBRMA_CLASS_CHAR,   /* MPI_CHAR */
    NBRMA_CLASS_SIGNED,
    NBRMA_CLASS_UNSIGNED,
    NBRMA_CLASS_FLOAT   /* float (4 bytes) and double (8) */
} nbrma_element_class_t;

/* A basic type as the rules see it: its class and its size in bytes (0 for
 * NBRMA_CLASS_NONE). Sizes other than 1, 2, 4 and 8, and float of other
 * than 4 or 8 bytes, go to no atomics. */
typedef struct {
    nbrma_element_class_t cls;
    unsigned size;
} nbrma_element_t;

/* UCX's atomic operations (the glue maps them to ucp_atomic_op_t). */
typedef enum {
    NBRMA_UCX_ADD,
    NBRMA_UCX_AND,
    NBRMA_UCX_OR,
    NBRMA_UCX_XOR,
    NBRMA_UCX_SWAP,
    NBRMA_UCX_CSWAP
} nbrma_ucx_op_t;

/* --- UCX's atomics ------------------------------------------------------- */

/* The UCX operation of `op` in an accumulate of `kind` (MPI_NO_OP: an or
 * with 0); false: UCX has none. */
static inline bool nbrma_ucx_atomic_op(nbrma_atomic_kind_t kind, nbrma_reduce_op_t op,
                                       nbrma_ucx_op_t * ucx_op);

/* The size (4 or 8) of a signed or unsigned integer element UCX's atomics
 * take; 0 for any other. */
static inline unsigned nbrma_ucx_atomic_size(nbrma_element_t element);

/* Whether an accumulate goes to UCX's atomics: an operation UCX has on an
 * element it takes. */
static inline bool nbrma_ucx_atomics_routed(nbrma_atomic_kind_t kind, nbrma_element_t element,
                                            nbrma_reduce_op_t op);

/* How many UCX atomics (one per element of `esize` bytes) an accumulate of
 * `target_bytes` at the target is; 0: it goes to none. UCX's
 * compare-and-swap compares with its operand and swaps in what the reply
 * buffer holds: the compare value is the operand, the new value goes into
 * the result buffer first (nbrma_ucx_single_buffers); a compare-and-swap
 * whose result buffer is its compare buffer would change one of them, and
 * goes to none. */
static inline size_t nbrma_ucx_atomic_count(nbrma_atomic_kind_t kind, size_t target_bytes,
                                            unsigned esize, const void *compare,
                                            const void *result);

/* The operand and reply buffers of a fetch-and-op or compare-and-swap (one
 * element of `esize` bytes) as UCX takes them: a compare-and-swap's operand
 * is its compare value, and its new value (at `origin`) is copied into
 * `result` now; a fetch-and-op's operand is `origin` (NULL for MPI_NO_OP,
 * `no_op`: the caller's operand of zeros, an or with 0). Fetched values go
 * to `result`. False for the other kinds, whose buffers may need a packed
 * copy (the glue's). */
static inline bool nbrma_ucx_single_buffers(nbrma_atomic_kind_t kind, bool no_op,
                                            const void *origin, const void *compare,
                                            void *result, size_t esize, const char **operand,
                                            const char **reply);

/* --- narrow atomics and the CPU's --------------------------------------- */

/* The lane-wise update of `op` (the first six of nbrma_narrow_op_t) that
 * UCX's compare-and-swap loops and the CPU's perform on any element; NO_OP
 * only where the kind fetches. */
static inline bool nbrma_narrow_atomic_op(nbrma_reduce_op_t op, bool fetch,
                                          nbrma_narrow_op_t * narrow_op);

/* The size of an element the CPU's atomics take: integers of 1 and 2 bytes,
 * and `wide` also of 4 and 8, float and double; 0: not one. */
static inline unsigned nbrma_cpu_atomic_size(nbrma_element_t element, bool wide);

/* The size (1 or 2) of an integer element of narrow atomics; 0 for any other
 * (the CPU's sizes without `wide`). */
static inline unsigned nbrma_narrow_atomic_size(nbrma_element_t element);

/* How the CPU's atomics apply `op` to an element they take: the lane-wise
 * updates on integers, and REPLACE and NO_OP on float and double too; with
 * `wide` also the element-wise ones (PROD, MIN and MAX of integers by
 * signedness, not MPI_CHAR's MIN and MAX; SUM, PROD, MIN and MAX of float
 * and double). */
static inline bool nbrma_cpu_atomic_op(nbrma_reduce_op_t op, nbrma_element_t element, bool fetch,
                                       bool wide, nbrma_narrow_op_t * narrow_op);

/* Whether an accumulate goes to the CPU's atomics (without `wide`: to narrow
 * atomics): an element they take with an operation they apply; a
 * compare-and-swap of integers (`op` not asked). */
static inline bool nbrma_cpu_atomics_routed(nbrma_atomic_kind_t kind, nbrma_element_t element,
                                            nbrma_reduce_op_t op, bool wide);

/* What the CPU's atomics do with an accumulate at hand (MPIDIG's at the
 * target, an origin's on mapped memory), of any kind: `op` on `target`
 * elements as a fetching kind would (MPI_NO_OP is taken: it reads). The
 * element size and *narrow_op; 0: not theirs (the caller applies it
 * otherwise). An update other than NBRMA_NARROW_NO_OP reads an operand of
 * the same size, which the caller checks (MPI_NO_OP's origin datatype need
 * not be valid, so only the caller knows when to ask for it). */
static inline unsigned nbrma_cpu_atomics_apply_size(nbrma_reduce_op_t op, nbrma_element_t target,
                                                    bool wide, nbrma_narrow_op_t * narrow_op);

/* A small accumulate of narrow atomics as the origin's compare-and-swap
 * loops perform it (ch4/atomics/narrow_atomics.c): its lane-wise update (a
 * compare-and-swap's is REPLACE, which it does not read), element size and
 * count, and which of the origin's and result buffers are read or written
 * as `n` elements in place (the single-element kinds, fetch-and-op and
 * compare-and-swap, hand their one element as it is; MPI_NO_OP reads no
 * operand; only the fetching kinds write a result), which the caller needs
 * contiguous. False: not one (MPICH's path takes it): not an element or
 * operation of narrow atomics, no element, or more than `max_elements`. */
typedef struct {
    nbrma_narrow_op_t op;
    unsigned esize;
    size_t n;
    bool origin_in_place;
    bool result_in_place;
} nbrma_narrow_plan_t;

static inline bool nbrma_narrow_plan(nbrma_atomic_kind_t kind, nbrma_reduce_op_t op,
                                     nbrma_element_t target, size_t target_bytes,
                                     size_t max_elements, nbrma_narrow_plan_t * plan);

/* --- the definitions: inline, since every accumulate asks several of them
 * (out of line they cost MPI_Accumulate of MPI_CHAR 110 instructions more,
 * callgrind) ---------------------------------------------------------------- */

static inline bool nbrma_integer_element(nbrma_element_t element)
{
    return element.cls == NBRMA_CLASS_CHAR || element.cls == NBRMA_CLASS_SIGNED ||
        element.cls == NBRMA_CLASS_UNSIGNED;
}

static inline bool nbrma_atomic_element(nbrma_element_t element)
{
    switch (element.size) {
        case 1:
        case 2:
            return nbrma_integer_element(element);
        case 4:
        case 8:
            return nbrma_integer_element(element) || element.cls == NBRMA_CLASS_FLOAT;
        default:
            return false;
    }
}

/* --- UCX's atomics ------------------------------------------------------- */

/* The operations UCX's atomics and the narrow ones both have, as each
 * performs it; MPI_NO_OP (an atomic load: UCX's or with 0) only where a
 * value is fetched. */
static inline bool nbrma_integer_atomic_op(nbrma_reduce_op_t op, bool fetch, nbrma_ucx_op_t * ucx_op,
                              nbrma_narrow_op_t * narrow_op)
{
    switch (op) {
        case NBRMA_REDUCE_SUM:
            *ucx_op = NBRMA_UCX_ADD;
            *narrow_op = NBRMA_NARROW_SUM;
            return true;
        case NBRMA_REDUCE_BAND:
            *ucx_op = NBRMA_UCX_AND;
            *narrow_op = NBRMA_NARROW_BAND;
            return true;
        case NBRMA_REDUCE_BOR:
            *ucx_op = NBRMA_UCX_OR;
            *narrow_op = NBRMA_NARROW_BOR;
            return true;
        case NBRMA_REDUCE_BXOR:
            *ucx_op = NBRMA_UCX_XOR;
            *narrow_op = NBRMA_NARROW_BXOR;
            return true;
        case NBRMA_REDUCE_REPLACE:
            *ucx_op = NBRMA_UCX_SWAP;
            *narrow_op = NBRMA_NARROW_REPLACE;
            return true;
        case NBRMA_REDUCE_NO_OP:
            *ucx_op = NBRMA_UCX_OR;
            *narrow_op = NBRMA_NARROW_NO_OP;
            return fetch;
        default:
            return false;
    }
}

static inline bool nbrma_ucx_atomic_op(nbrma_atomic_kind_t kind, nbrma_reduce_op_t op,
                                       nbrma_ucx_op_t * ucx_op)
{
    nbrma_narrow_op_t unused;

    if (kind == NBRMA_ATOMIC_COMPARE_AND_SWAP) {
        *ucx_op = NBRMA_UCX_CSWAP;
        return true;
    }
    return nbrma_integer_atomic_op(op, kind != NBRMA_ATOMIC_ACCUMULATE, ucx_op, &unused);
}

static inline unsigned nbrma_ucx_atomic_size(nbrma_element_t element)
{
    return (element.size == 4 || element.size == 8) &&
        (element.cls == NBRMA_CLASS_SIGNED || element.cls == NBRMA_CLASS_UNSIGNED) ?
        element.size : 0;
}

static inline bool nbrma_ucx_atomics_routed(nbrma_atomic_kind_t kind, nbrma_element_t element,
                                            nbrma_reduce_op_t op)
{
    nbrma_ucx_op_t ucx_op;

    return nbrma_ucx_atomic_op(kind, op, &ucx_op) && nbrma_ucx_atomic_size(element) != 0;
}

static inline size_t nbrma_ucx_atomic_count(nbrma_atomic_kind_t kind, size_t target_bytes,
                                            unsigned esize, const void *compare,
                                            const void *result)
{
    if (esize == 0 || (kind == NBRMA_ATOMIC_COMPARE_AND_SWAP && compare == result))
        return 0;
    return target_bytes / esize;
}

static inline bool nbrma_ucx_single_buffers(nbrma_atomic_kind_t kind, bool no_op,
                                            const void *origin, const void *compare,
                                            void *result, size_t esize, const char **operand,
                                            const char **reply)
{
    if (kind == NBRMA_ATOMIC_COMPARE_AND_SWAP) {
        *operand = (const char *) compare;
        memmove(result, origin, esize);
    } else if (kind == NBRMA_ATOMIC_FETCH_AND_OP) {
        *operand = no_op ? NULL : (const char *) origin;
    } else {
        return false;
    }
    *reply = (const char *) result;
    return true;
}

/* --- narrow atomics and the CPU's --------------------------------------- */

static inline bool nbrma_narrow_atomic_op(nbrma_reduce_op_t op, bool fetch,
                                          nbrma_narrow_op_t * narrow_op)
{
    nbrma_ucx_op_t unused;

    return nbrma_integer_atomic_op(op, fetch, &unused, narrow_op);
}

static inline unsigned nbrma_cpu_atomic_size(nbrma_element_t element, bool wide)
{
    if (!nbrma_atomic_element(element) ||
        (!wide && (element.size > 2 || element.cls == NBRMA_CLASS_FLOAT)))
        return 0;
    return element.size;
}

static inline unsigned nbrma_narrow_atomic_size(nbrma_element_t element)
{
    return nbrma_cpu_atomic_size(element, false);
}

static inline bool nbrma_cpu_atomic_op(nbrma_reduce_op_t op, nbrma_element_t element, bool fetch,
                                       bool wide, nbrma_narrow_op_t * narrow_op)
{
    bool floating = element.cls == NBRMA_CLASS_FLOAT;

    if (nbrma_cpu_atomic_size(element, wide) == 0)
        return false;
    /* a float's bits may be replaced or read like an integer's, not summed */
    if ((!floating || op == NBRMA_REDUCE_REPLACE || op == NBRMA_REDUCE_NO_OP) &&
        nbrma_narrow_atomic_op(op, fetch, narrow_op))
        return true;
    if (!wide)
        return false;
    if (floating) {
        switch (op) {
            case NBRMA_REDUCE_SUM:
                *narrow_op = NBRMA_ELEMENT_FLOAT_SUM;
                return true;
            case NBRMA_REDUCE_PROD:
                *narrow_op = NBRMA_ELEMENT_FLOAT_PROD;
                return true;
            case NBRMA_REDUCE_MIN:
                *narrow_op = NBRMA_ELEMENT_FLOAT_MIN;
                return true;
            case NBRMA_REDUCE_MAX:
                *narrow_op = NBRMA_ELEMENT_FLOAT_MAX;
                return true;
            default:
                return false;
        }
    }
    if (op == NBRMA_REDUCE_PROD) {
        *narrow_op = NBRMA_ELEMENT_PROD;        /* its low bits do not depend on signedness */
        return true;
    }
    if (op != NBRMA_REDUCE_MIN && op != NBRMA_REDUCE_MAX)
        return false;
    /* MPI_CHAR's signedness is the compiler's: MPICH's path applies its MIN and MAX */
    if (element.cls == NBRMA_CLASS_SIGNED)
        *narrow_op = op == NBRMA_REDUCE_MIN ? NBRMA_ELEMENT_MIN_SIGNED : NBRMA_ELEMENT_MAX_SIGNED;
    else if (element.cls == NBRMA_CLASS_UNSIGNED)
        *narrow_op = op == NBRMA_REDUCE_MIN ?
            NBRMA_ELEMENT_MIN_UNSIGNED : NBRMA_ELEMENT_MAX_UNSIGNED;
    else
        return false;
    return true;
}

static inline bool nbrma_cpu_atomics_routed(nbrma_atomic_kind_t kind, nbrma_element_t element,
                                            nbrma_reduce_op_t op, bool wide)
{
    nbrma_narrow_op_t narrow_op;

    if (kind == NBRMA_ATOMIC_COMPARE_AND_SWAP)
        return nbrma_cpu_atomic_size(element, wide) != 0 && element.cls != NBRMA_CLASS_FLOAT;
    return nbrma_cpu_atomic_op(op, element, kind != NBRMA_ATOMIC_ACCUMULATE, wide, &narrow_op);
}

static inline unsigned nbrma_cpu_atomics_apply_size(nbrma_reduce_op_t op, nbrma_element_t target,
                                                    bool wide, nbrma_narrow_op_t * narrow_op)
{
    return nbrma_cpu_atomic_op(op, target, true, wide, narrow_op) ?
        nbrma_cpu_atomic_size(target, wide) : 0;
}

static inline bool nbrma_narrow_plan(nbrma_atomic_kind_t kind, nbrma_reduce_op_t op,
                                     nbrma_element_t target, size_t target_bytes,
                                     size_t max_elements, nbrma_narrow_plan_t * plan)
{
    bool single = kind == NBRMA_ATOMIC_COMPARE_AND_SWAP || kind == NBRMA_ATOMIC_FETCH_AND_OP;
    bool fetch = kind != NBRMA_ATOMIC_ACCUMULATE;

    plan->op = NBRMA_NARROW_REPLACE;
    plan->esize = nbrma_narrow_atomic_size(target);
    if (plan->esize == 0 || (kind != NBRMA_ATOMIC_COMPARE_AND_SWAP &&
                             !nbrma_narrow_atomic_op(op, fetch, &plan->op)))
        return false;
    plan->n = target_bytes / plan->esize;
    plan->origin_in_place = !single && plan->op != NBRMA_NARROW_NO_OP;
    plan->result_in_place = !single && fetch;
    return plan->n != 0 && plan->n <= max_elements;
}

#ifdef __cplusplus
}
#endif

#endif /* NBRMA_ATOMIC_RULES_H_INCLUDED */
