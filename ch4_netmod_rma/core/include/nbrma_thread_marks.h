/*
 * mpich-nbrma core: thread-scope flushes (info key mpi_win_scope=thread,
 * Quo Vadis MPI RMA, section 2.1) of one window: per thread and target, how
 * the operations the thread issued since its own last flush there travel,
 * and from that what a flush of that thread must complete.
 *
 *   NBRMA_MARK_RDMA    performed by UCX RDMA or atomics, or copied by the
 *                      CPU: a flush of the target's endpoint completes them
 *   NBRMA_MARK_AM      performed by MPICH's code where that may send active
 *                      messages: MPIDIG's per-target counters complete them
 *                      (they count every thread's operations: the flush also
 *                      waits for other threads' active messages there)
 *   NBRMA_MARK_ENGINE  recorded in the engine, to be issued once an epoch
 *                      is granted: only the engine's flush ages, which know
 *                      no threads, complete them (a process-scope flush)
 *
 * A thread-scope flush toward targets that hold no ENGINE mark of the
 * thread completes the thread's operations itself and never waits for
 * operations other threads recorded in the engine or issued by RDMA
 * elsewhere; anything else is a process-scope flush, which completes a
 * superset and so is correct for either scope.
 *
 * Threads are numbers (0, 1, ...); a thread's marks are made at its first
 * operation on the window. NBRMA_THREAD_SELF names the calling thread: its
 * number is process-wide (the same on every window), given at the thread's
 * first note on any window; before that the thread has noted nothing, so
 * it may flush by itself, its flush names no target, and its flushed clears
 * nothing (none of them gives it a number). Without memory for them the window
 * must flush with process scope from then on: its operations go unnoted, and
 * its flushes must not find "nothing issued". Plain C interface, no MPICH
 * header: unit-tested without MPI (test/unit/test_thread_marks.cpp). Not
 * thread-safe: the glue calls it under MPICH's global critical section.
 */

#ifndef NBRMA_THREAD_MARKS_H_INCLUDED
#define NBRMA_THREAD_MARKS_H_INCLUDED

#include <stdbool.h>
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

enum {
    NBRMA_MARK_RDMA = 1,
    NBRMA_MARK_AM = 2,
    NBRMA_MARK_ENGINE = 4
};

/* The calling thread, for any `thread` argument below. */
#define NBRMA_THREAD_SELF (~0u)

typedef struct nbrma_thread_marks nbrma_thread_marks;

/* For a window of `n_ranks` ranks; NULL when out of memory. */
nbrma_thread_marks *nbrma_thread_marks_create(int n_ranks);
void nbrma_thread_marks_destroy(nbrma_thread_marks * marks);

/* Thread `thread` issued an operation toward `rank` that travels as `marks`
 * (NBRMA_MARK_* bits). False when out of memory: the window must flush with
 * process scope from now on. */
bool nbrma_thread_marks_note(nbrma_thread_marks * marks, unsigned thread, int rank,
                             unsigned bits);

/* Whether `thread` may flush toward `rank` (NBRMA_ALL_RANKS: every rank) by
 * itself: nothing of its own there waits in the engine. */
bool nbrma_thread_marks_may_flush(const nbrma_thread_marks * marks, unsigned thread, int rank);

/* The targets `thread`'s flush toward `rank` must complete, one per call from
 * *cursor = 0 on: false when there are no more. *needs_am: MPIDIG's counters
 * toward *target too (an endpoint flush always). */
bool nbrma_thread_marks_next(const nbrma_thread_marks * marks, unsigned thread, int rank,
                             size_t * cursor, int *target, bool *needs_am);

/* `thread`'s flush toward `rank` completed: its marks there are cleared. */
void nbrma_thread_marks_flushed(nbrma_thread_marks * marks, unsigned thread, int rank);

#ifdef __cplusplus
}
#endif
#endif /* NBRMA_THREAD_MARKS_H_INCLUDED */
