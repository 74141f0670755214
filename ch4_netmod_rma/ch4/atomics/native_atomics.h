/*
 * mpich-nbrma: accumulates as UCX atomics (ucp_atomic_op_nbx), which the
 * shared-memory transports perform with the origin's CPU alone on memory UCX
 * allocated (memory/ucx_memory.h).
 *
 * Atomicity. MPI guarantees atomicity only between accumulates to one location
 * with the same basic datatype, and the info key accumulate_ops promises one
 * operation per location at a time: "same_op_no_op" (the default) or "same_op",
 * MPICH knows no other value. So a window routes by (basic type, operation):
 * every accumulate whose basic type is a 4- or 8-byte integer and whose
 * operation UCX has (peer_memory/atomic_rules.h lists them) goes to UCX, element
 * by element, whatever its count or layout; every other one goes to MPICH's
 * active messages. A location never sees both, except an MPI_NO_OP fetch (an
 * atomic load) next to MPICH's updates of another operation, which write
 * each aligned element whole.
 * Whole lock epochs (epochs/whole_epoch.c) carry accumulates of a routed
 * (type, operation) on such windows only under an exclusive lock: the target
 * applies those itself, with plain loads and stores, when nobody else can
 * reach its memory.
 *
 * A window has native atomics only if every process agrees at creation: its
 * memory is UCX memory, every target's key unpacked, and neither the info key
 * mpich_nbrma_native_atomics nor MPIR_CVAR_NBRMA_NATIVE_ATOMICS says no.
 */

#ifndef NBRMA_NATIVE_ATOMICS_H_INCLUDED
#define NBRMA_NATIVE_ATOMICS_H_INCLUDED

#include "nbrma_win.h"
#include "atomic_rules.h"
#include <sys/uio.h>

/* MPI's handles as the rules (peer_memory/atomic_rules.h) see them, for UCX's,
 * the narrow and the CPU's atomics (narrow_atomics.c too): `datatype`'s
 * basic type as an element (a switch: asked for every accumulate they may
 * take), the operation, and the kind (false: a put or get). */
nbrma_element_t MPIDI_NBRMA_element_of(MPI_Datatype datatype);
/* Inline: every accumulate asks it two or three times. Indexed as MPICH's
 * table of predefined operations: their handles are MPI_MAX's but for the
 * index in the low byte (MPIR_Op_builtin_get_index); any other handle
 * (MPI_OP_NULL, user-defined ones) falls past the table's end. */
static inline nbrma_reduce_op_t MPIDI_NBRMA_reduce_op_of(MPI_Op op)
{
    static const nbrma_reduce_op_t of_builtin[MPIR_OP_N_BUILTIN] = {
        [0] = NBRMA_REDUCE_OTHER,       /* MPI_OP_NULL's index */
        [MPI_SUM & 0xff] = NBRMA_REDUCE_SUM,
        [MPI_PROD & 0xff] = NBRMA_REDUCE_PROD,
        [MPI_MAX & 0xff] = NBRMA_REDUCE_MAX,
        [MPI_MIN & 0xff] = NBRMA_REDUCE_MIN,
        [MPI_LAND & 0xff] = NBRMA_REDUCE_LAND,
        [MPI_LOR & 0xff] = NBRMA_REDUCE_LOR,
        [MPI_LXOR & 0xff] = NBRMA_REDUCE_LXOR,
        [MPI_BAND & 0xff] = NBRMA_REDUCE_BAND,
        [MPI_BOR & 0xff] = NBRMA_REDUCE_BOR,
        [MPI_BXOR & 0xff] = NBRMA_REDUCE_BXOR,
        [MPI_REPLACE & 0xff] = NBRMA_REDUCE_REPLACE,
        [MPI_NO_OP & 0xff] = NBRMA_REDUCE_NO_OP,
        [MPI_MAXLOC & 0xff] = NBRMA_REDUCE_MAXLOC,
        [MPI_MINLOC & 0xff] = NBRMA_REDUCE_MINLOC
    };
    unsigned index = (unsigned) op - ((unsigned) MPI_MAX & ~0xffu);

    return index < MPIR_OP_N_BUILTIN ? of_builtin[index] : NBRMA_REDUCE_OTHER;
}

/* Inline: every accumulate asks it once or twice. */
static inline bool MPIDI_NBRMA_atomic_kind_of(MPIDI_NBRMA_op_kind_t kind,
                                              nbrma_atomic_kind_t * atomic_kind)
{
    static const nbrma_atomic_kind_t of_kind[] = {
        [MPIDI_NBRMA_OP_ACCUMULATE] = NBRMA_ATOMIC_ACCUMULATE,
        [MPIDI_NBRMA_OP_GET_ACCUMULATE] = NBRMA_ATOMIC_GET_ACCUMULATE,
        [MPIDI_NBRMA_OP_FETCH_AND_OP] = NBRMA_ATOMIC_FETCH_AND_OP,
        [MPIDI_NBRMA_OP_COMPARE_AND_SWAP] = NBRMA_ATOMIC_COMPARE_AND_SWAP
    };

    if (kind == MPIDI_NBRMA_OP_PUT || kind == MPIDI_NBRMA_OP_GET)
        return false;
    *atomic_kind = of_kind[kind];
    return true;
}

/* Whether the data of `datatype` is contiguous, and then where it begins in
 * a buffer of it (*true_lb). For every atomics path and the origin's copies
 * (cross_memory_rma.c). A builtin type's answer is in its handle, inline:
 * out of line, the two calls of an 8-byte put's copy cost 16 instructions
 * of its put + flush (callgrind); other types take
 * MPIDI_NBRMA_any_contiguous_lb. */
bool MPIDI_NBRMA_any_contiguous_lb(MPI_Datatype datatype, MPI_Aint * true_lb);
static inline bool MPIDI_NBRMA_contiguous_lb(MPI_Datatype datatype, MPI_Aint * true_lb)
{
    if (!HANDLE_IS_BUILTIN(datatype))
        return MPIDI_NBRMA_any_contiguous_lb(datatype, true_lb);
    *true_lb = 0;
    return true;
}

/* The `bytes` of `count` `datatype` at `addr` (an address of this process or,
 * for UCX, of the target) as *n segments: *one where contiguous, else an
 * array in *iov that the caller frees; MPI_ERR_INTERN if they do not hold
 * `bytes`. */
int MPIDI_NBRMA_segments_of(void *addr, MPI_Aint count, MPI_Datatype datatype, MPI_Aint bytes,
                            struct iovec *one, struct iovec **iov, MPI_Aint * n);

/* Once the window's memory and keys exist: whether UCX atomics could be in
 * force on it as far as this process goes, given whether it wants them.
 * They are in force where every process says so (the caller agrees on it
 * with all the window's processes). */
bool MPIDI_NBRMA_native_atomics_possible(MPIR_Win * win, bool wanted);

/* Where UCX maps `rank`'s window memory in this process (ucp_rkey_ptr: the
 * shared-memory transports' keys): *mapped, true; false where it does not or
 * the rank has no window memory or key. */
bool MPIDI_NBRMA_ucx_window_mapped(MPIR_Win * win, int rank, void **mapped);

/* On a window with native atomics: whether UCX carries out its atomics toward
 * every peer with this process's CPU, that is whether it maps every peer's
 * window memory here (ucp_rkey_ptr: the shared-memory transports). Toward a
 * peer behind tcp UCX emulates atomics with active messages that the peer's
 * CPU answers. Peers without window memory and this process itself count as
 * mapped. Local. */
bool MPIDI_NBRMA_native_atomics_by_origin(MPIR_Win * win);

/* Whether `op` is an accumulate that a window with native atomics routes to
 * UCX (the rule above), regardless of the target. */
bool MPIDI_NBRMA_native_atomics_routed(MPIDI_NBRMA_op_kind_t kind, MPI_Datatype target_datatype,
                                       MPI_Op op);

/* Whether MPIDI_NBRMA_native_atomics_issue would issue `op` as UCX atomics. */
bool MPIDI_NBRMA_native_atomics_eligible(const MPIDI_NBRMA_rma_op_t * op, MPIR_Win * win);

/* On a window with native atomics: issues `op` (without a request) as UCX
 * atomics when it is routed to them; else *issued = false and nothing
 * happened. The operations complete with an endpoint flush of their target;
 * a fetch's result is in place then. */
int MPIDI_NBRMA_native_atomics_issue(const MPIDI_NBRMA_rma_op_t * op, MPIR_Win * win,
                                     bool *issued);

#endif /* NBRMA_NATIVE_ATOMICS_H_INCLUDED */
