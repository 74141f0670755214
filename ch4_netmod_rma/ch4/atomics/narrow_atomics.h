/*
 * mpich-nbrma: accumulates of 1- and 2-byte integers (OSU's default MPI_CHAR
 * among them) without the target's CPU, where UCX's atomics are the CPU's own.
 *
 * Atomicity. UCX has no 1- or 2-byte atomics: the origin updates such an
 * element by UCX compare-and-swap loops on its aligned 8-byte word
 * (narrow_ops.h), for small accumulates only (at most
 * MPIDI_NBRMA_NARROW_MAX_ELEMENTS elements, each inside one word): a large
 * MPI_CHAR accumulate would cost two UCX operations per byte. The others go to
 * MPICH's active messages as before, and the target applies every accumulate
 * of these types with one of the operations below with the CPU's
 * compare-and-swap, word by word (the component's hook in MPIDIG, patch
 * 0025). Both are atomic with respect to each other exactly when UCX's atomics
 * are the CPU's: the shared-memory transports perform them with the origin's
 * CPU on the mapped memory, UCX's software emulation (tcp) with the target's;
 * a network adapter's atomics are atomic only among themselves. The
 * emulation needs the target's CPU as MPICH's active messages do and costs
 * more round trips (narrow_atomics.c). So a window has narrow atomics only if
 * it has native atomics (native_atomics.h) and every process finds that UCX
 * has an atomic lane toward every peer and each is a shared-memory one;
 * without them the target applies these accumulates with plain loads and
 * stores, as vanilla MPICH does. MPI_Win_get_info says which
 * (mpich_nbrma_narrow_atomics). Operations: UCX's (peer_memory/atomic_rules.h
 * lists them); others (MPI_MAX, ...) keep MPICH's plain path, which
 * accumulate_ops (one operation per location) keeps apart from these.
 */

#ifndef NBRMA_NARROW_ATOMICS_H_INCLUDED
#define NBRMA_NARROW_ATOMICS_H_INCLUDED

#include "nbrma_win.h"

#define MPIDI_NBRMA_NARROW_MAX_ELEMENTS 16

/* This process's part of the decision, once memory and keys exist: whether
 * UCX's atomic lanes toward every peer of `win` are the CPU's own. */
bool MPIDI_NBRMA_narrow_atomics_possible(MPIR_Win * win);

/* Whether MPIDI_NBRMA_narrow_atomics_issue would perform `op`: a small routed
 * accumulate without a request on contiguous data, each element inside one
 * 8-byte word. */
bool MPIDI_NBRMA_narrow_atomics_eligible(const MPIDI_NBRMA_rma_op_t * op, MPIR_Win * win);

/* On a window with narrow atomics: performs a small routed accumulate
 * (without a request) by UCX compare-and-swap loops, waiting for each; else
 * *issued = false and nothing happened. */
int MPIDI_NBRMA_narrow_atomics_issue(const MPIDI_NBRMA_rma_op_t * op, MPIR_Win * win,
                                     bool *issued);

/* Whether an accumulate, fetch or swap of `kind` on `target_datatype` with
 * `op` is one the CPU's atomics apply (peer_memory/atomic_rules.h): without
 * `wide`, one of narrow atomics (1- or 2-byte integer basic type, an
 * operation above); with it, one they apply to mapped memory (integers of 1,
 * 2, 4 or 8 bytes, float and double, with the operations of the CPU's atomics
 * "wide"). */
bool MPIDI_NBRMA_cpu_atomics_routed(MPIDI_NBRMA_op_kind_t kind, MPI_Datatype target_datatype,
                                    MPI_Op op, bool wide);

/* Applies an accumulate (origin packed, origin_count elements of a basic type)
 * to target_addr with the CPU's atomics, the old values packed into
 * `fetched` (NULL: not wanted); *applied = false if it is not a routed one
 * (the caller applies it otherwise). 1- and 2-byte integers with the
 * operations above only, and with `wide` every routed one. At the target for
 * what MPIDIG received, on a window with narrow atomics or whose memory peers
 * map (wide); at an origin on a peer's memory mapped here
 * (epochs/cross_memory_rma.c): the same atomics at both ends. */
int MPIDI_NBRMA_cpu_atomics_apply(const void *origin, MPI_Aint origin_count,
                                  MPI_Datatype origin_datatype, void *target_addr,
                                  MPI_Aint target_count, MPI_Datatype target_datatype,
                                  MPI_Op op, void *fetched, bool wide, bool *applied);
/* Whether every element of `count` `datatype` at `target_addr` is one the
 * CPU's atomics update whole: 1-byte ones anywhere, the others aligned to
 * their size. Only such go to the CPU's atomics at an origin; the owner
 * updates a misaligned one with plain loads and stores, which nobody else
 * does then. */
bool MPIDI_NBRMA_cpu_atomics_aligned(void *target_addr, MPI_Aint count, MPI_Datatype datatype);
/* The same for a compare-and-swap of one element: `compare_result` holds the
 * compare value and receives the old one. */
int MPIDI_NBRMA_cpu_atomics_cswap(void *target_addr, const void *origin, void *compare_result,
                                  MPI_Datatype datatype, bool wide, bool *applied);

#endif /* NBRMA_NARROW_ATOMICS_H_INCLUDED */
