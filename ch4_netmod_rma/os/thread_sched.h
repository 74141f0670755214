/*
 * mpich-nbrma: the calling thread's nice value, time slice and CPUs, as the
 * progress agent (ch4/common/nbrma_progress_agent.c) sets its own.
 * MPICH- and UCX-free, so that what the kernel keeps is unit-tested without
 * MPI (test/unit/test_thread_sched.cpp).
 *
 * The slice (Linux 6.12 and later: EEVDF's sched_runtime of a fair thread;
 * earlier kernels ignore it) is what lets a woken thread run at once beside a
 * computation on its core: with the default slice of a few milliseconds the
 * kernel lets the computation finish its slice first. A short slice does not
 * add to the thread's share of the core: the kernel still divides the time
 * by weight.
 */

#ifndef NBRMA_THREAD_SCHED_H_INCLUDED
#define NBRMA_THREAD_SCHED_H_INCLUDED

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Gives the calling thread the nice value `nice` and, at the nice value it
 * then has, the slice `slice_ns` (SCHED_OTHER). A nice value the process may
 * not take (a higher priority without the privilege) leaves the thread at
 * its own; a slice the kernel refuses leaves the default. Neither is an
 * error for the caller: the thread runs either way. */
void nbrma_thread_sched_set(int nice, uint64_t slice_ns);

/* Keeps the calling thread on `cpu` (sched_setaffinity), or with -1 lets it
 * run anywhere in the mask it had at its first call. A CPU outside that mask
 * changes nothing, nor does anything where that mask has one CPU (a bound
 * process: its threads are there already). Returns the CPU the thread is
 * kept on now, -1 for anywhere in the mask. */
int nbrma_thread_sched_keep_on(int cpu);

/* Keeps the calling thread anywhere in the mask it had at its first call
 * but on `cpu` (it leaves `cpu` at once if it runs there). A CPU outside
 * that mask lets it run anywhere in it; a mask of one CPU changes nothing.
 * Returns the CPU kept off now, -1 for none. */
int nbrma_thread_sched_keep_off(int cpu);

#ifdef __cplusplus
}
#endif
#endif /* NBRMA_THREAD_SCHED_H_INCLUDED */
