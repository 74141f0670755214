/*
 * mpich-nbrma: long runs of the CPU's accumulates in hardware transactions
 * (MPICH-free, unit-tested in test/unit/test_narrow_ops.cpp).
 *
 * Runs of at least 64 bytes of aligned elements (lane-wise operations: whole
 * 8-byte words) go in chunks of hardware transactions where the processor has
 * them (Intel's RTM), atomic with respect to the atomics of narrow_ops.h in
 * any process (cpu_transactions.c says how); a chunk that does not commit
 * goes by the atomics the caller names.
 */

#ifndef NBRMA_CPU_TRANSACTIONS_H_INCLUDED
#define NBRMA_CPU_TRANSACTIONS_H_INCLUDED

#include "narrow_ops.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The atomics' way of applying `units` aligned units of a run, for the
 * chunks transactions do not take. */
typedef void (*nbrma_apply_run_fn) (char *target, const char *operand, size_t units,
                                    unsigned esize, nbrma_narrow_op_t op, char *fetched);

/* Applies `units` aligned units of `unit` (4 or 8) bytes, elements of
 * `esize` bytes (lane-wise operations: 1, 2, 4 or 8 in 8-byte units),
 * chunk by chunk in transactions, the rest by `atomics`; old contents to
 * `fetched` if not NULL. */
void nbrma_apply_run(char *target, const char *operand, size_t units, unsigned unit,
                     unsigned esize, nbrma_narrow_op_t op, char *fetched,
                     nbrma_apply_run_fn atomics);

/* Whether this processor has them, switching them off or on
 * (MPIR_CVAR_NBRMA_CPU_TRANSACTIONS, on by default), and how many chunks
 * committed in this process so far. */
bool nbrma_cpu_has_transactions(void);
void nbrma_cpu_transactions_enable(bool enable);
size_t nbrma_cpu_transactions_committed(void);

#ifdef __cplusplus
}
#endif
#endif /* NBRMA_CPU_TRANSACTIONS_H_INCLUDED */
