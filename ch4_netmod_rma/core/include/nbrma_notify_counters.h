/*
 * mpich-nbrma core: the counters of notified RMA (MPIX_Win_create_notify &
 * co.; the MPI Forum's notified-RMA draft) at their target, and the requests
 * (MPIX_Win_notify_request) that wait for one to reach a value. One entry
 * per window with counters, in a table of this process's windows:
 *
 *   N1  counters are made only where every process of the window agrees: no
 *       process has counters on it already, and every one asked for the same
 *       number. Each process votes (nbrma_notify_vote) and the element-wise
 *       maximum of the votes over the window (an MPI_MAX allreduce) decides
 *       alike everywhere (nbrma_notify_verdict);
 *   N2  an index names one of the window's counters (0 <= idx < count); a
 *       call with another is an error (the glue's), an increment that arrives
 *       for another, or for a window without counters, is dropped;
 *   N3  a waiting request completes once its counter holds at least its
 *       value, and takes nothing from it; whenever this process changes or
 *       looks at a window's counters (an increment arrived, a set, a new
 *       wait, a poll) every wait of that window is checked, and those reached
 *       complete in the order they were made. A counter set below a wait's
 *       value does not release it. Peers' UCX atomics change counters
 *       without telling this process: a poll catches those;
 *   N4  when the counters go, every request still waiting completes with an
 *       error.
 *
 * The counters' memory is the glue's (UCX memory that peers add to with
 * atomics, ch4/notify/counter_memory.c): 64-bit values here, read and
 * written with atomic loads and stores. The glue keeps MPICH's requests, the
 * collective calls, the messages and UCX (ch4/notify/notify.c). Plain C
 * interface, no MPICH header: unit-tested without MPI
 * (test/unit/test_notify_counters.cpp). The waits are not thread-safe: the
 * glue calls under MPICH's global critical section. No exception leaves
 * these functions.
 */

#ifndef NBRMA_NOTIFY_COUNTERS_H_INCLUDED
#define NBRMA_NOTIFY_COUNTERS_H_INCLUDED

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "nbrma_core.h"         /* NBRMA_OK, NBRMA_ERR_* */

#ifndef NBRMA_NOEXCEPT
#ifdef __cplusplus
#define NBRMA_NOEXCEPT noexcept
#else
#define NBRMA_NOEXCEPT
#endif
#endif

#ifdef __cplusplus
extern "C" {
#endif

typedef struct nbrma_notify_counters nbrma_notify_counters;

/* This process's windows with counters. Zero-initialized it is empty (a
 * static one needs no call); entries leave by nbrma_notify_table_remove. */
typedef struct {
    nbrma_notify_counters *first;
} nbrma_notify_table;

/* Completes a waiter (the glue's request) that reached its value, or, with
 * `freed`, whose counters went first (N4). Must not call into the table. */
typedef void (*nbrma_notify_release_fn) (void *waiter, bool freed);

/* N1: this process's vote for `n` counters, `have`: it has counters on the
 * window already. */
void nbrma_notify_vote(int n, bool have, int vote[3]) NBRMA_NOEXCEPT;
/* N1 on the element-wise maximum of every process's vote: NBRMA_OK (make
 * them), NBRMA_ERR_SYNC (some process has counters already) or
 * NBRMA_ERR_ARG (the numbers differ: from -max_vote[1] to max_vote[0]). */
int nbrma_notify_verdict(const int max_vote[3]) NBRMA_NOEXCEPT;

/* Enters `n` counters at `values` (the glue's memory, zero or as it wants
 * them) for `window`, with the glue's `user` data and its `release`.
 * *counters the entry (counters may be NULL). NBRMA_ERR_ARG for NULL
 * table, window, release or values (with n > 0) or n < 0, NBRMA_ERR_SYNC if
 * `window` has counters already, NBRMA_ERR_NOMEM; all change nothing. */
int nbrma_notify_table_add(nbrma_notify_table * table, const void *window, int n,
                           int64_t * values, void *user, nbrma_notify_release_fn release,
                           nbrma_notify_counters ** counters) NBRMA_NOEXCEPT;
/* The entry of `window`, or NULL (also for a NULL window). */
nbrma_notify_counters *nbrma_notify_table_find(const nbrma_notify_table * table,
                                               const void *window) NBRMA_NOEXCEPT;
/* Unlinks and frees the entry; its waiters are released as freed, in the
 * order they were made (N4). The values' memory stays the glue's. */
void nbrma_notify_table_remove(nbrma_notify_table * table,
                               nbrma_notify_counters * counters) NBRMA_NOEXCEPT;
/* An increment arrived for counter `idx` of `window`: added (atomically)
 * and N3 on that window; false if dropped (N2). */
bool nbrma_notify_table_arrived(nbrma_notify_table * table, const void *window,
                                int idx) NBRMA_NOEXCEPT;
/* N3 on every window (the glue's poll); whether any waiter remains. */
bool nbrma_notify_table_poll(nbrma_notify_table * table) NBRMA_NOEXCEPT;

void *nbrma_notify_counters_user(const nbrma_notify_counters * counters) NBRMA_NOEXCEPT;
int nbrma_notify_counters_count(const nbrma_notify_counters * counters) NBRMA_NOEXCEPT;
/* N2: whether `idx` names one of the counters. */
bool nbrma_notify_counters_has(const nbrma_notify_counters * counters, int idx) NBRMA_NOEXCEPT;
/* The value of counter `idx` (an acquire load; 0 outside the counters). */
int64_t nbrma_notify_counters_get(const nbrma_notify_counters * counters,
                                  int idx) NBRMA_NOEXCEPT;
/* Counter `idx` holds `value` (a release store), then N3; nothing outside
 * the counters. */
void nbrma_notify_counters_set(nbrma_notify_counters * counters, int idx,
                               int64_t value) NBRMA_NOEXCEPT;
/* `waiter` waits until counter `idx` holds at least `value`; N3 follows at
 * once, so it may be released before this returns. NBRMA_ERR_ARG outside
 * the counters, NBRMA_ERR_NOMEM; both register nothing and release
 * nobody. */
int nbrma_notify_counters_wait(nbrma_notify_counters * counters, int idx, int64_t value,
                               void *waiter) NBRMA_NOEXCEPT;
/* How many waiters of the window are still waiting. */
size_t nbrma_notify_counters_waiting(const nbrma_notify_counters * counters) NBRMA_NOEXCEPT;

#ifdef __cplusplus
}
#endif
#endif /* NBRMA_NOTIFY_COUNTERS_H_INCLUDED */
