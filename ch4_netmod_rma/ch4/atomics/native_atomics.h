/*
 * mpich-nbrma: accumulates as UCX atomics (ucp_atomic_op_nbx), which the
 * shared-memory transports perform with the origin's CPU alone on UCX memory.
 *
 * Atomicity: MPI guarantees it only between accumulates to one location with
 * the same basic datatype, and accumulate_ops (MPICH: "same_op_no_op" or
 * "same_op") promises one operation per location. So a window routes by (basic
 * type, operation) (peer_memory/atomic_rules.h): 4- and 8-byte integers with
 * an operation UCX has go to UCX element by element, whatever the count or
 * layout, the rest to MPICH's active messages. A location never sees both but
 * for an MPI_NO_OP fetch (an atomic load) next to MPICH's updates, which write
 * each aligned element whole. Whole and pulled epochs carry routed accumulates
 * only under an exclusive lock (epochs/whole_epoch.c). Native atomics need every
 * process's agreement at creation: UCX memory, every target's key, and no "no"
 * from the info key mpich_nbrma_native_atomics or MPIR_CVAR_NBRMA_NATIVE_ATOMICS.
 */

#ifndef NBRMA_NATIVE_ATOMICS_H_INCLUDED
#define NBRMA_NATIVE_ATOMICS_H_INCLUDED

#include "nbrma_win.h"
#include "atomic_rules.h"
#include <sys/uio.h>

/* MPI's handles as the rules (peer_memory/atomic_rules.h) see them: the basic
 * type as an element, the operation, and the kind (false: a put or get). */
nbrma_element_t MPIDI_NBRMA_element_of(MPI_Datatype datatype);
/* Inline: every accumulate asks it two or three times. Predefined operations'
 * handles are MPI_MAX's but for the index in the low byte (as in
 * MPIR_Op_builtin_get_index); other handles fall past the table's end. */
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

/* Whether `datatype` is contiguous, and where its data begins; inline for
 * builtin types: no call on the hot path of a put's copy (cross_memory_rma.c). */
bool MPIDI_NBRMA_any_contiguous_lb(MPI_Datatype datatype, MPI_Aint * true_lb);
static inline bool MPIDI_NBRMA_contiguous_lb(MPI_Datatype datatype, MPI_Aint * true_lb)
{
    if (!HANDLE_IS_BUILTIN(datatype))
        return MPIDI_NBRMA_any_contiguous_lb(datatype, true_lb);
    *true_lb = 0;
    return true;
}

/* The `bytes` of `count` `datatype` at `addr` (here or, for UCX, the target's)
 * as *n segments: *one where contiguous, else *iov, which the caller frees;
 * MPI_ERR_INTERN if they do not hold `bytes`. */
int MPIDI_NBRMA_segments_of(void *addr, MPI_Aint count, MPI_Datatype datatype, MPI_Aint bytes,
                            struct iovec *one, struct iovec **iov, MPI_Aint * n);

/* Once memory and keys exist: whether UCX atomics could be in force on `win`
 * as far as this process goes; the caller agrees on it with every process. */
bool MPIDI_NBRMA_native_atomics_possible(MPIR_Win * win, bool wanted);

/* Where UCX maps `rank`'s window memory here (ucp_rkey_ptr: shared-memory
 * transports); false if not mapped, or no memory or key. */
bool MPIDI_NBRMA_ucx_window_mapped(MPIR_Win * win, int rank, void **mapped);

/* Local: whether UCX performs its atomics toward every peer with this CPU, i.e.
 * maps every peer's window memory here (toward tcp it emulates them with
 * messages the peer's CPU answers). Peers without memory and self count as mapped. */
bool MPIDI_NBRMA_native_atomics_by_origin(MPIR_Win * win);

/* Whether a window with native atomics routes this to UCX, whatever the target. */
bool MPIDI_NBRMA_native_atomics_routed(MPIDI_NBRMA_op_kind_t kind, MPI_Datatype target_datatype,
                                       MPI_Op op);

bool MPIDI_NBRMA_native_atomics_eligible(const MPIDI_NBRMA_rma_op_t * op, MPIR_Win * win);

/* Issues a routed `op` (no request) as UCX atomics, else *issued = false; an
 * endpoint flush of the target completes them, fetched results included. */
int MPIDI_NBRMA_native_atomics_issue(const MPIDI_NBRMA_rma_op_t * op, MPIR_Win * win,
                                     bool *issued);

#endif /* NBRMA_NATIVE_ATOMICS_H_INCLUDED */
