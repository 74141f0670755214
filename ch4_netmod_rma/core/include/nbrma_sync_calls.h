/*
 * mpich-nbrma core: the application's synchronization calls on an engine
 * window, what each kind does, and which engine call serves it.
 *
 *   C1  every kind but MPI_Win_sync goes to the engine (MPI_Win_sync is
 *       MPICH's own code); only test goes without a request;
 *   C2  a flush opens and closes no epoch: the grant cache's grants stay
 *       (and a flush alone may complete without the engine: sync_calls.c's
 *       flush_at_once);
 *   C3  post and start name a group, kept as window ranks per kind (post,
 *       start);
 *   C4  a blocking lock of my own rank without MPI_MODE_NOCHECK returns once
 *       the lock is held (MPI-3.1 11.5.3), not only once it is requested;
 *   C5  fence, complete and unlock_all complete the operations issued before
 *       them toward every target, unlock and flush toward their rank (RDMA
 *       the glue issued itself on dynamic windows included).
 *
 * The kinds are the glue's too (MPIDI_NBRMA_sync_call_t). Header-only: the glue calls these on
 * every synchronization call (no call, no allocation). Plain C interface, no
 * MPICH header: unit-tested without MPI (test/unit/test_sync_calls.cpp).
 */

#ifndef NBRMA_SYNC_CALLS_H_INCLUDED
#define NBRMA_SYNC_CALLS_H_INCLUDED

#include <stdbool.h>

#include "nbrma_core.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum {
    NBRMA_SYNC_FENCE,
    NBRMA_SYNC_POST,
    NBRMA_SYNC_START,
    NBRMA_SYNC_COMPLETE,
    NBRMA_SYNC_WAIT,
    NBRMA_SYNC_TEST,
    NBRMA_SYNC_LOCK,
    NBRMA_SYNC_UNLOCK,
    NBRMA_SYNC_LOCK_ALL,
    NBRMA_SYNC_UNLOCK_ALL,
    NBRMA_SYNC_FLUSH,
    NBRMA_SYNC_SYNC,
    NBRMA_SYNC_KINDS
} nbrma_sync_kind;

/* What a kind does (nbrma_sync_traits). */
enum {
    NBRMA_SYNC_ENGINE = 1,      /* C1: an engine call */
    NBRMA_SYNC_REQUEST = 2,     /* C1: with a request */
    NBRMA_SYNC_KEEPS_GRANTS = 4,        /* C2 */
    NBRMA_SYNC_GROUP = 8,       /* C3 */
    NBRMA_SYNC_COMPLETES_RANK = 32,     /* C5: toward the call's rank */
    NBRMA_SYNC_COMPLETES_ALL = 64       /* C5: toward every target */
};

static inline unsigned nbrma_sync_traits(int kind)
{
    enum {
        E = NBRMA_SYNC_ENGINE, R = NBRMA_SYNC_ENGINE | NBRMA_SYNC_REQUEST,
        G = NBRMA_SYNC_GROUP, ONE = NBRMA_SYNC_COMPLETES_RANK, ALL = NBRMA_SYNC_COMPLETES_ALL
    };
    static const unsigned char traits[NBRMA_SYNC_KINDS] = {
        R | ALL, R | G, R | G, R | ALL, R, E, R, R | ONE,
        R, R | ALL, R | NBRMA_SYNC_KEEPS_GRANTS | ONE, 0
    };
    return kind >= 0 && kind < NBRMA_SYNC_KINDS ? traits[kind] : 0;
}

/* The nonblocking call (MPIX_Win_i*; MPI_Win_test, MPI_Win_sync: the
 * blocking one) that makes a call of `kind`, for error messages. */
static inline const char *nbrma_sync_nonblocking_name(int kind)
{
    static const char *const names[NBRMA_SYNC_KINDS] = {
        "MPIX_Win_ifence", "MPIX_Win_ipost", "MPIX_Win_istart", "MPIX_Win_icomplete",
        "MPIX_Win_iwait", "MPI_Win_test", "MPIX_Win_ilock", "MPIX_Win_iunlock",
        "MPIX_Win_ilock_all", "MPIX_Win_iunlock_all", "MPIX_Win_iflush", "MPI_Win_sync"
    };
    return kind >= 0 && kind < NBRMA_SYNC_KINDS ? names[kind] : "?";
}

/* C3: the slot of a group kind's kept ranks (post 1, start 0). */
static inline int nbrma_sync_group_slot(int kind)
{
    return kind == NBRMA_SYNC_POST;
}

/* C5: whether a call of `kind` with `rank` completes the operations issued
 * before it, and toward which targets (`rank` or NBRMA_ALL_RANKS). */
static inline bool nbrma_sync_completes(int kind, int rank, int *targets)
{
    unsigned traits = nbrma_sync_traits(kind);

    *targets = traits & NBRMA_SYNC_COMPLETES_RANK ? rank : NBRMA_ALL_RANKS;
    return traits & (NBRMA_SYNC_COMPLETES_RANK | NBRMA_SYNC_COMPLETES_ALL);
}

/* One call's arguments, as its MPID_Win_ function has them. */
typedef struct {
    int kind;                   /* nbrma_sync_kind */
    int rank;                   /* lock, unlock, flush (NBRMA_ALL_RANKS: every target) */
    int local;                  /* flush: local completion only */
    int lock_type;              /* lock */
    int assert_bits;            /* fence, post, start, lock, lock_all */
    const int *ranks;           /* post, start: the group as window ranks */
    int nranks;
    int *flag;                  /* test */
} nbrma_sync_args;

/* C1: the engine call of `args` with `cookie` (NULL for test);
 * NBRMA_ERR_INTERN for a kind without one. */
static inline int nbrma_sync_engine(nbrma_engine *e, const nbrma_sync_args *a, void *cookie)
{
    switch (a->kind) {
        case NBRMA_SYNC_FENCE:
            return nbrma_ifence(e, a->assert_bits, cookie);
        case NBRMA_SYNC_POST:
            return nbrma_ipost(e, a->ranks, a->nranks, a->assert_bits, cookie);
        case NBRMA_SYNC_START:
            return nbrma_istart(e, a->ranks, a->nranks, a->assert_bits, cookie);
        case NBRMA_SYNC_COMPLETE:
            return nbrma_icomplete(e, cookie);
        case NBRMA_SYNC_WAIT:
            return nbrma_iwait(e, cookie);
        case NBRMA_SYNC_TEST:
            return nbrma_test(e, a->flag);
        case NBRMA_SYNC_LOCK:
            return nbrma_ilock(e, a->lock_type, a->rank, a->assert_bits, cookie);
        case NBRMA_SYNC_UNLOCK:
            return nbrma_iunlock(e, a->rank, cookie);
        case NBRMA_SYNC_LOCK_ALL:
            return nbrma_ilock_all(e, a->assert_bits, cookie);
        case NBRMA_SYNC_UNLOCK_ALL:
            return nbrma_iunlock_all(e, cookie);
        case NBRMA_SYNC_FLUSH:
            return nbrma_iflush(e, a->rank, a->local, cookie);
        default:
            return NBRMA_ERR_INTERN;
    }
}

/* C4: whether a blocking call, once its request completed, waits until the
 * lock of my own rank `self` is held. */
static inline bool nbrma_sync_waits_for_self_lock(int kind, int rank, int self, int assert_bits)
{
    return kind == NBRMA_SYNC_LOCK && rank == self && !(assert_bits & NBRMA_MODE_NOCHECK);
}

#ifdef __cplusplus
}
#endif
#endif /* NBRMA_SYNC_CALLS_H_INCLUDED */
