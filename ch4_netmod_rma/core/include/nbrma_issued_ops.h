/*
 * mpich-nbrma core: the operations an engine window issued whose completion
 * its completion sweep has not reported to the engine yet, and what a sweep
 * covers. The glue (ch4/epochs/completion_sweep.c) keeps the ledger wait,
 * the requests and the engine calls; this object says which operations each
 * report names and what a sweep's wait needs:
 *
 *   S1  every issued operation is kept, in issue order, until a sweep
 *       reports it; the glue reserves room before it performs the operation
 *       (nbrma_issued_ops_reserve), so that keeping it cannot fail then;
 *   S2  the local completion of an operation is reported once: alone, for
 *       one that was locally complete when it was kept, newest first and
 *       only those kept before the report began (nbrma_issued_ops_next_local),
 *       or else together with its remote completion (the sweep's report);
 *   S3  a sweep covers every operation kept when it starts and no later one;
 *       its wait flushes the endpoints of the targets where some of them
 *       left UCX operations, in rank order, and needs MPIDIG's counters
 *       only locally if every one of them is complete at local completion
 *       (rule R5), remotely otherwise; one sweep at a time;
 *   S4  once its wait is released, the sweep's operations are reported in
 *       issue order, each with its local report if that is still due (and
 *       the engine call succeeded so far), and then forgotten; operations
 *       kept meanwhile wait for the next sweep.
 *
 * Plain C interface, no MPICH header: unit-tested against a plain model of
 * the glue's former arrays without MPI (test/unit/test_issued_ops.cpp). Not
 * thread-safe: the glue calls it under MPICH's global critical section.
 */

#ifndef NBRMA_ISSUED_OPS_H_INCLUDED
#define NBRMA_ISSUED_OPS_H_INCLUDED

#include <stdbool.h>
#include <stddef.h>

#include "nbrma_core.h"         /* nbrma_op_ticket, NBRMA_OK */

#ifdef __cplusplus
extern "C" {
#endif

/* The layout is visible only so that what is done per operation (reserve,
 * keep, its local report, its report by the sweep) is a few loads and
 * stores, not a call: the fields are the core's, the glue uses the
 * functions. */
typedef struct nbrma_issued_op {
    nbrma_op_ticket ticket;
    void *request;              /* the glue's, completed with the report; or NULL */
    bool local_done;            /* locally complete when kept (S2) */
    bool local_reported;
    bool by_endpoint;           /* left UCX operations on its target's endpoint (S3) */
    bool complete_at_local;     /* complete for its epoch once locally complete (R5) */
} nbrma_issued_op;

typedef struct nbrma_issued_ops {
    nbrma_issued_op *ops;       /* in issue order (S1) */
    size_t n, cap;
    size_t n_local_pending;     /* of them: local_done, not yet reported */
    size_t n_swept;             /* the first n_swept: the sweep's (S3) */
    bool sweeping;
    int n_ranks;
    unsigned char *flush;       /* per rank: the sweep flushes its endpoint */
} nbrma_issued_ops;

/* For a window of `n_ranks` ranks; NULL when out of memory. */
nbrma_issued_ops *nbrma_issued_ops_create(int n_ranks);
void nbrma_issued_ops_destroy(nbrma_issued_ops * ops);

/* S1: room for one more operation (doubling from 64); NBRMA_ERR_NOMEM, and
 * nothing changed, without memory. */
int nbrma_issued_ops_grow(nbrma_issued_ops * ops);
static inline int nbrma_issued_ops_reserve(nbrma_issued_ops * ops)
{
    return ops->n < ops->cap ? NBRMA_OK : nbrma_issued_ops_grow(ops);
}

/* S1: keeps an issued operation in the room reserved for it before it was
 * issued (nbrma_issued_ops_reserve): it cannot fail. The glue's path for
 * every operation through the engine; a check and a growth here cost every
 * MPI_Put 15 instructions (callgrind). */
static inline void nbrma_issued_ops_keep_reserved(nbrma_issued_ops * ops, nbrma_op_ticket ticket,
                                                  void *request, bool local_done,
                                                  bool by_endpoint, bool complete_at_local)
{
    nbrma_issued_op *op = &ops->ops[ops->n++];
    op->ticket = ticket;
    op->request = request;
    op->local_done = local_done;
    op->local_reported = false;
    op->by_endpoint = by_endpoint;
    op->complete_at_local = complete_at_local;
    ops->n_local_pending += local_done;
}

/* S1 where no room may have been reserved: makes room (NBRMA_ERR_NOMEM, and
 * nothing kept, without memory). */
static inline int nbrma_issued_ops_keep(nbrma_issued_ops * ops, nbrma_op_ticket ticket,
                                        void *request, bool local_done, bool by_endpoint,
                                        bool complete_at_local)
{
    if (nbrma_issued_ops_reserve(ops) != NBRMA_OK)
        return NBRMA_ERR_NOMEM;
    nbrma_issued_ops_keep_reserved(ops, ticket, request, local_done, by_endpoint,
                                   complete_at_local);
    return NBRMA_OK;
}

/* Operations kept, the sweep's among them. */
static inline size_t nbrma_issued_ops_count(const nbrma_issued_ops * ops)
{
    return ops->n;
}

/* Whether anything is left to do: operations kept, or a sweep in progress. */
static inline bool nbrma_issued_ops_pending(const nbrma_issued_ops * ops)
{
    return ops->n > 0 || ops->sweeping;
}

/* Local reports due (S2): operations kept locally complete, not reported. */
static inline size_t nbrma_issued_ops_local_pending(const nbrma_issued_ops * ops)
{
    return ops->n_local_pending;
}

/* S2: the next local report due, one per call, from *cursor =
 * nbrma_issued_ops_count() toward the oldest; taken (it will not be due
 * again, nor go with the remote report). False when no more are due among
 * those before *cursor. Operations kept between two calls are not named. */
static inline bool nbrma_issued_ops_next_local(nbrma_issued_ops * ops, size_t * cursor,
                                               nbrma_op_ticket * ticket)
{
    while (ops->n_local_pending > 0 && *cursor > 0) {
        nbrma_issued_op *op = &ops->ops[--*cursor];

        if (op->local_done && !op->local_reported) {
            op->local_reported = true;
            ops->n_local_pending--;
            *ticket = op->ticket;
            return true;
        }
    }
    return false;
}

/* Whether a sweep is in progress (from _sweep_started to _sweep_ended). */
static inline bool nbrma_issued_ops_sweeping(const nbrma_issued_ops * ops)
{
    return ops->sweeping;
}

/* S3, before a sweep starts: marks the targets whose endpoints its wait
 * flushes (listed by _next_flush) and says whether every operation kept is
 * complete at local completion (then MPIDIG's local counters suffice). */
bool nbrma_issued_ops_snapshot(nbrma_issued_ops * ops);

/* The ranks marked by the last snapshot, ascending, one per call from
 * *cursor = 0 on; false when there are no more. */
bool nbrma_issued_ops_next_flush(const nbrma_issued_ops * ops, size_t * cursor, int *rank);

/* S3: the sweep's wait was handed over: it covers the operations kept now.
 * Returns how many. */
size_t nbrma_issued_ops_sweep_started(nbrma_issued_ops * ops);

/* The sweep's wait could not be handed over, or was released: no sweep is
 * in progress. Returns how many operations the sweep covered (what S4
 * reports, unless the wait failed: then they are covered again by the
 * next sweep). */
size_t nbrma_issued_ops_sweep_ended(nbrma_issued_ops * ops);

/* S4: the operations of the sweep that ended, in issue order, one per call
 * from *cursor = 0 on: *op is a copy (request and ticket); *with_local: its
 * local report is still due and taken now, to go with the remote one; only
 * while `take_local` (the glue's engine calls succeeded so far). False after
 * the last. */
static inline bool nbrma_issued_ops_next_swept(nbrma_issued_ops * ops, size_t * cursor,
                                               bool take_local, nbrma_issued_op * op,
                                               bool *with_local)
{
    nbrma_issued_op *kept;

    if (*cursor >= ops->n_swept)
        return false;
    kept = &ops->ops[(*cursor)++];
    /* the remote report carries the local one, due or not yet noted */
    *with_local = take_local && !kept->local_reported;
    if (*with_local) {
        kept->local_reported = true;
        ops->n_local_pending -= kept->local_done;
    }
    *op = *kept;
    return true;
}

/* S4: the sweep's operations were reported: they are forgotten, and those
 * kept since stay, in order. */
void nbrma_issued_ops_forget_swept(nbrma_issued_ops * ops);

#ifdef __cplusplus
}
#endif
#endif /* NBRMA_ISSUED_OPS_H_INCLUDED */
