/*
 * mpich-nbrma: small accumulates of 1- and 2-byte integers (MPI_CHAR among
 * them) without the target's CPU. UCX has no such atomics: the origin runs UCX
 * compare-and-swap loops on the aligned 8-byte word (peer_memory/narrow_ops.h)
 * for at most MPIDI_NBRMA_NARROW_MAX_ELEMENTS elements (more would cost two UCX
 * operations per byte: MPICH's active messages take them), and the target
 * applies every such accumulate (of the operations UCX has) with the CPU's
 * compare-and-swap (patch 0025). The two are atomic with each other only where UCX's atomics are
 * the CPU's (shared memory; not a network adapter's; tcp: narrow_atomics.c), so
 * a window has narrow atomics only with native atomics (native_atomics.h) and a
 * shared-memory atomic lane toward every peer on every process; else the target
 * uses plain loads and stores, as MPICH does (MPI_Win_get_info:
 * mpich_nbrma_narrow_atomics). Operations: peer_memory/atomic_rules.h; others
 * keep MPICH's plain path, which accumulate_ops (one operation per location)
 * keeps apart from these.
 */

#ifndef NBRMA_NARROW_ATOMICS_H_INCLUDED
#define NBRMA_NARROW_ATOMICS_H_INCLUDED

#include "nbrma_win.h"

#define MPIDI_NBRMA_NARROW_MAX_ELEMENTS 16

/* This process's part of the decision, once memory and keys exist: whether
 * UCX's atomic lanes toward every peer of `win` are the CPU's own. */
bool MPIDI_NBRMA_narrow_atomics_possible(MPIR_Win * win);

/* Whether _issue would perform `op`: a small routed accumulate without a
 * request on contiguous data, each element inside one 8-byte word. */
bool MPIDI_NBRMA_narrow_atomics_eligible(const MPIDI_NBRMA_rma_op_t * op, MPIR_Win * win);

/* On a window with narrow atomics: performs such an accumulate, waiting for
 * each compare-and-swap; else *issued = false and nothing happened. */
int MPIDI_NBRMA_narrow_atomics_issue(const MPIDI_NBRMA_rma_op_t * op, MPIR_Win * win,
                                     bool *issued);

/* Whether the CPU's atomics apply `kind` with `op` on `target_datatype`
 * (peer_memory/atomic_rules.h): without `wide`, narrow atomics' accumulates;
 * with it, those on memory mapped at both ends (rule R3). */
bool MPIDI_NBRMA_cpu_atomics_routed(MPIDI_NBRMA_op_kind_t kind, MPI_Datatype target_datatype,
                                    MPI_Op op, bool wide);

/* Applies an accumulate (origin packed, basic type) to target_addr with the
 * CPU's atomics, old values packed into `fetched` (NULL: not wanted); *applied
 * = false if not routed (the caller applies it). At the target (what MPIDIG
 * received, whole and pulled epochs) and at an origin on a peer's memory mapped
 * here (epochs/cross_memory_rma.c): the same atomics at both ends. */
int MPIDI_NBRMA_cpu_atomics_apply(const void *origin, MPI_Aint origin_count,
                                  MPI_Datatype origin_datatype, void *target_addr,
                                  MPI_Aint target_count, MPI_Datatype target_datatype,
                                  MPI_Op op, void *fetched, bool wide, bool *applied);
/* Whether the CPU's atomics update every element whole (1-byte ones anywhere,
 * others aligned to their size). Only such go to them at an origin; the owner
 * updates a misaligned one with plain loads and stores, and nobody else does. */
bool MPIDI_NBRMA_cpu_atomics_aligned(void *target_addr, MPI_Aint count, MPI_Datatype datatype);
/* As _apply for a compare-and-swap of one element: `compare_result` holds the
 * compare value and receives the old one. */
int MPIDI_NBRMA_cpu_atomics_cswap(void *target_addr, const void *origin, void *compare_result,
                                  MPI_Datatype datatype, bool wide, bool *applied);

#endif /* NBRMA_NARROW_ATOMICS_H_INCLUDED */
