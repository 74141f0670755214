/*
 * mpich-nbrma core: the grant cache of one engine window. Once the engine
 * has issued an operation toward a target, the epoch that covers it is
 * granted there, and stays so until the application's next synchronization
 * call on the window; until then further operations toward that target may
 * go without the engine (one branch instead of an engine call). The engine
 * has not counted them, so the cache does: per target, how many went and how
 * many of them were not locally complete when they went.
 *
 *   granted   the engine issued toward the target since the last
 *             synchronization call that forgets grants (any but a flush)
 *   counted   operations that went directly since the last hand-over or
 *             blocking flush that covered the target, but those performed
 *             at the target when their call returned (rule R10,
 *             nbrma_performed_at_return): nothing waits for them
 *
 * A synchronization call first hands the counted operations over to the
 * engine (nbrma_grant_cache_last_counted / _forget), so that its flush ages
 * and epoch ends wait for them; a blocking flush may instead complete them
 * itself (nbrma_grant_cache_next_covered / _flushed): a local flush needs
 * only the targets where some were not locally complete (the glue completes
 * those remotely, as a flush does: epochs/direct_ops.c, so that they are
 * forgotten as after a flush), and the engine never hears of them (complete
 * operations change nothing it decides). A
 * grant holds until the next synchronization call because only such a call
 * opens or closes epochs; a flush does neither.
 *
 * A nonblocking flush whose wait goes on after the call leaves the counts
 * as they are (the next flush looks at them again, complete by then). For
 * a local flush that is not enough: one put that was not locally complete
 * would make every later local flush toward the target wait for a remote
 * completion. So a nonblocking local flush in flight is noted with the
 * number of its endpoint flush (nbrma_grant_cache_local_flush_began); once
 * the glue finds it finished (the ledger's number and MPIDIG's counters),
 * the operations it covered count as locally complete
 * (_local_flush_finished), and the next local flush needs nothing for them.
 *
 * The per-target state is 4 bytes; what a step costs is proportional to the
 * targets used since the last one, not to the window's size. Plain C
 * interface, no MPICH header: unit-tested against a plain model without MPI
 * (test/unit/test_grant_cache.cpp). Not thread-safe: the glue calls it
 * under MPICH's global critical section.
 */

#ifndef NBRMA_GRANT_CACHE_H_INCLUDED
#define NBRMA_GRANT_CACHE_H_INCLUDED

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "nbrma_core.h"       /* NBRMA_ALL_RANKS */
#include "nbrma_route.h"      /* nbrma_message_stream */

#ifdef __cplusplus
extern "C" {
#endif

/* The layout is visible only so that the check every operation makes
 * (nbrma_grant_cache_may_issue) is a load, not a call: the fields are the
 * core's, the glue uses the functions. */
typedef struct nbrma_grant_cache_entry {
    int rank;
    uint64_t count;             /* went without the engine */
    uint64_t not_local;         /* of them, not locally complete when they went */
    uint64_t by_endpoint;       /* of them, left UCX operations on the target's endpoint */
    uint64_t flushing;          /* of not_local, those a nonblocking local flush in flight covers */
    uint64_t flushing_seq;      /* that flush's endpoint flush (the ledger's number), 0: none */
    uint64_t count_before;      /* count when a flush last completed them (rule R8's stream) */
} nbrma_grant_cache_entry;

typedef struct nbrma_grant_cache {
    int n_ranks;
    bool all_granted;           /* every rank granted: an active fence epoch's */
    uint32_t *state;            /* per rank: NBRMA_GRANT_CACHE_GRANTED | (entry + 1), 0: none */
    int *granted;               /* the ranks whose grant bit is set */
    size_t n_granted, cap_granted;
    nbrma_grant_cache_entry *entries;   /* in order of first count */
    size_t n_entries, cap_entries;
} nbrma_grant_cache;

#define NBRMA_GRANT_CACHE_GRANTED 0x80000000u

/* The entry of `rank`'s counted operations, NULL if it has none (or is
 * not in the window). */
static inline nbrma_grant_cache_entry *nbrma_grant_cache_entry_of(const nbrma_grant_cache * cache,
                                                                  int rank)
{
    uint32_t at = rank >= 0 && rank < cache->n_ranks ?
        cache->state[rank] & ~NBRMA_GRANT_CACHE_GRANTED : 0;
    return at ? &cache->entries[at - 1] : NULL;
}

/* For a window of `n_ranks` ranks; NULL when out of memory. */
nbrma_grant_cache *nbrma_grant_cache_create(int n_ranks);
void nbrma_grant_cache_destroy(nbrma_grant_cache * cache);

/* The engine issued an operation toward `rank`: its epoch is granted there. */
void nbrma_grant_cache_granted(nbrma_grant_cache * cache, int rank);

/* Rule G1: the engine issued an operation in an open fence epoch whose
 * barrier passed (nbrma_fence_grants_every_rank), which grants every rank
 * at once: until the next synchronization call every later operation may go
 * without the engine, the first toward each other target too (one flag, not
 * a grant per rank). The engine has seen that the epoch is used. */
static inline void nbrma_grant_cache_granted_all(nbrma_grant_cache * cache)
{
    cache->all_granted = true;
}

/* Whether an operation toward `rank` may go without the engine. */
static inline bool nbrma_grant_cache_may_issue(const nbrma_grant_cache * cache, int rank)
{
    return rank >= 0 && rank < cache->n_ranks &&
        (cache->all_granted || (cache->state[rank] & NBRMA_GRANT_CACHE_GRANTED));
}

/* An operation went toward `rank` without the engine (only where
 * nbrma_grant_cache_may_issue said so); `locally_complete`: its buffer was
 * free at return; `by_endpoint`: it left UCX operations in flight on the
 * target's endpoint (RDMA or UCX atomics; not an active message, which
 * MPICH's counters complete, nor a copy done at return). False when out of
 * memory: the operation is not counted, and the glue must complete it itself
 * before returning. The target's entry stays until a hand-over, so that
 * counting is two adds from the second operation toward it on, a flush in
 * between or not. */
bool nbrma_grant_cache_count_first(nbrma_grant_cache * cache, int rank, bool locally_complete,
                                   bool by_endpoint);
static inline bool nbrma_grant_cache_count(nbrma_grant_cache * cache, int rank,
                                           bool locally_complete, bool by_endpoint)
{
    nbrma_grant_cache_entry *e = nbrma_grant_cache_entry_of(cache, rank);

    if (e == NULL)
        return nbrma_grant_cache_count_first(cache, rank, locally_complete, by_endpoint);
    e->count++;
    e->not_local += !locally_complete;
    e->by_endpoint += by_endpoint;
    return true;
}

/* Rule R8's stream toward `rank` (nbrma_message_stream) as counted here:
 * since a flush last completed them, and before that flush. A hand-over
 * forgets the count. */
static inline bool nbrma_grant_cache_in_stream(const nbrma_grant_cache * cache, int rank,
                                               uint64_t max)
{
    const nbrma_grant_cache_entry *e = nbrma_grant_cache_entry_of(cache, rank);

    return e != NULL ? nbrma_message_stream(e->count, e->count_before, max)
        : nbrma_message_stream(0, 0, max);
}

/* The most recently first-counted target with counted operations: false
 * when there is none. *locally_complete: every one of them was;
 * *by_endpoint: some left UCX operations on the target's endpoint. Targets
 * whose operations a flush completed since are forgotten on the way. */
bool nbrma_grant_cache_last_counted(nbrma_grant_cache * cache, int *rank,
                                    uint64_t * count, bool *locally_complete, bool *by_endpoint);

/* The counted operations toward `rank` were handed over. */
void nbrma_grant_cache_forget(nbrma_grant_cache * cache, int rank);

/* A synchronization call other than a flush: no target stays granted (nor
 * every rank: rule G1). */
void nbrma_grant_cache_forget_grants(nbrma_grant_cache * cache);

/* Whether a blocking flush toward `rank` (NBRMA_ALL_RANKS: every rank)
 * must complete the operations of `entry`: it has some, toward `rank`, and
 * for a local flush (`local`) some of them were not locally complete. */
static inline bool nbrma_grant_cache_covers(const nbrma_grant_cache_entry * entry, int rank,
                                            bool local)
{
    return (rank == NBRMA_ALL_RANKS || entry->rank == rank) && entry->count != 0 &&
        !(local && entry->not_local == 0);
}

/* The targets with counted operations that a blocking flush toward `rank`
 * must complete itself, one per call from *cursor = 0 on; false when there
 * are no more. *by_endpoint: some of them left UCX operations on the
 * target's endpoint, which an endpoint flush completes (MPICH's counters
 * complete the active messages whatever this says). */
static inline bool nbrma_grant_cache_next_covered(const nbrma_grant_cache * cache, int rank,
                                                  bool local, size_t * cursor, int *target,
                                                  bool *by_endpoint)
{
    if (rank != NBRMA_ALL_RANKS) {
        /* one target: its entry, once */
        const nbrma_grant_cache_entry *e = *cursor == 0 ?
            nbrma_grant_cache_entry_of(cache, rank) : NULL;
        *cursor = 1;
        *target = rank;
        if (e == NULL || !nbrma_grant_cache_covers(e, rank, local))
            return false;
        *by_endpoint = e->by_endpoint != 0;
        return true;
    }
    for (; *cursor < cache->n_entries; ++*cursor)
        if (nbrma_grant_cache_covers(&cache->entries[*cursor], rank, local)) {
            *by_endpoint = cache->entries[*cursor].by_endpoint != 0;
            *target = cache->entries[(*cursor)++].rank;
            return true;
        }
    return false;
}

/* A flush completed the operations of `entry`: the entry stays for the
 * next ones. */
static inline void nbrma_grant_cache_entry_completed(nbrma_grant_cache_entry * entry)
{
    if (entry->count != 0)      /* a flush of nothing keeps the interval before */
        entry->count_before = entry->count;
    entry->count = 0;
    entry->not_local = 0;
    entry->by_endpoint = 0;
    entry->flushing = 0;
    entry->flushing_seq = 0;
}

/* A nonblocking local flush toward `rank` (one target) did not complete at
 * once: it covers the operations toward it not locally complete so far;
 * `seq`: the number of its endpoint flush still in flight, 0 if none. */
static inline void nbrma_grant_cache_local_flush_began(nbrma_grant_cache * cache, int rank,
                                                       uint64_t seq)
{
    nbrma_grant_cache_entry *e = nbrma_grant_cache_entry_of(cache, rank);

    if (e != NULL) {
        e->flushing = e->not_local;
        e->flushing_seq = seq;
    }
}

/* Whether such a flush toward `rank` is in flight (*seq: its endpoint
 * flush's number, 0 if none). */
static inline bool nbrma_grant_cache_local_flush_in_flight(const nbrma_grant_cache * cache,
                                                           int rank, uint64_t * seq)
{
    const nbrma_grant_cache_entry *e = nbrma_grant_cache_entry_of(cache, rank);

    if (e == NULL || e->flushing == 0)
        return false;
    *seq = e->flushing_seq;
    return true;
}

/* It finished: the operations it covered are locally complete. */
static inline void nbrma_grant_cache_local_flush_finished(nbrma_grant_cache * cache, int rank)
{
    nbrma_grant_cache_entry *e = nbrma_grant_cache_entry_of(cache, rank);

    if (e != NULL) {
        e->not_local -= e->flushing;
        e->flushing = 0;
        e->flushing_seq = 0;
    }
}

/* The flush nbrma_grant_cache_next_covered listed completed: its targets'
 * counted operations are forgotten (their entries stay for the next ones). */
void nbrma_grant_cache_flushed_all(nbrma_grant_cache * cache, bool local);
static inline void nbrma_grant_cache_flushed(nbrma_grant_cache * cache, int rank, bool local)
{
    nbrma_grant_cache_entry *e;

    if (rank == NBRMA_ALL_RANKS)
        nbrma_grant_cache_flushed_all(cache, local);
    else if ((e = nbrma_grant_cache_entry_of(cache, rank)) != NULL &&
             nbrma_grant_cache_covers(e, rank, local))
        nbrma_grant_cache_entry_completed(e);
}

/* Bytes the cache holds per rank of the window, for the memory model. */
size_t nbrma_grant_cache_rank_bytes(void);

#ifdef __cplusplus
}
#endif
#endif /* NBRMA_GRANT_CACHE_H_INCLUDED */
