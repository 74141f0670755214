/*
 * mpich-nbrma: the glue of the completion ledger (core/include/nbrma_ledger.h).
 *
 * Whatever waits for RMA operations to complete waits here: a wait names
 * what it needs (endpoint flushes, which the ledger numbers per peer and
 * shares among the waits that ask before one starts; and outside parts that
 * the ledger cannot see: MPIDIG's active-message counters, an operation's own
 * request, which the adapter checks), then how it learns of its release (a
 * request completed, a function called, or the caller blocked until then).
 * One poller drives it all. The rules (which flush covers which wait, when a
 * wait is released) are the ledger's; the adapter starts and tests UCX
 * flushes, reads MPIDIG's counters and completes requests.
 *
 * Endpoint flushes, not worker flushes: with UCX 1.13.1 on this project's
 * machines a worker flush sometimes completed before a large put to one of
 * several peers had read its origin buffer (4 ranks, 4 MiB puts).
 *
 * Waiting here: the completion sweeps of engine windows, nonblocking
 * flushes and remote-completing requests of windows without the engine
 * (mpich_path.c), the blocking flushes of engine windows' direct
 * operations and of thread-scope windows, ordered operations
 * (ordered_ops.c), RDMA on dynamic windows.
 */

#ifndef NBRMA_LEDGER_ADAPTER_H_INCLUDED
#define NBRMA_LEDGER_ADAPTER_H_INCLUDED

#include "nbrma_win.h"
#include "nbrma_ledger_flights.h"

/* A wait, on the caller's stack while it gathers what it needs. Each need_
 * call starts or checks its part at once (an endpoint flush, numbered by the
 * ledger; MPIDIG's counters) and keeps only what is still open, so that a
 * wait on shared memory is complete before it is armed and costs no
 * allocation and no trip through the progress engine. Arming hands what is
 * open to the ledger (a copy the adapter keeps). The lists are the core's
 * (nbrma_ledger_flights.h); an outside part's req is an MPIR_Request. */
typedef struct MPIDI_NBRMA_ledger_wait {
    MPIR_Win *win;
    int vni;
    int error;                  /* the first error of a part, or of gathering */
    nbrma_open_flushes open;    /* flushes still in flight (F2 of the core) */
    nbrma_outside_parts parts;  /* not done when asked for, and requests (F4) */
    /* MPIDIG's target object of the counters part toward one rank that
     * gathering added (NULL: none), so that a blocking wait whose only part
     * it is does not look it up again */
    const MPIDIG_win_target_t *am_target;
} MPIDI_NBRMA_ledger_wait_t;

/* A wait for operations issued on `win`. It is given its parts with the
 * need_ functions, then exactly one of complete_request, call_back, block,
 * done_now or cancel, which also free what it allocated. Stores this thread
 * made before it (rule R9's copies) are ordered before those made after the
 * wait is over. */
void MPIDI_NBRMA_ledger_wait_init(MPIDI_NBRMA_ledger_wait_t * wait, MPIR_Win * win);

/* Every UCX operation issued toward window rank `rank` until now: a flush of
 * its endpoint, where MPICH's UCX RDMA reaches the rank on this window, or
 * whatever with `always` (the component issued RDMA or atomics there). The
 * need_ functions fail only for want of memory; the wait must still be
 * ended (cancel). */
int MPIDI_NBRMA_ledger_need_endpoint(MPIDI_NBRMA_ledger_wait_t * wait, int rank, bool always);

/* MPIDIG's active-message operations toward `rank` (NBRMA_ALL_RANKS: every
 * rank) complete: acknowledged by the target, or only sent if `local`. They
 * count outstanding operations, not issued ones: a stream of later
 * operations can delay the wait, never release it early. */
int MPIDI_NBRMA_ledger_need_am(MPIDI_NBRMA_ledger_wait_t * wait, int rank, bool local);

/* The endpoint flush toward `rank` the wait started and still has in
 * flight: false if none (*seq unchanged), else its number in *seq. */
bool MPIDI_NBRMA_ledger_open_flush(const MPIDI_NBRMA_ledger_wait_t * wait, int rank,
                                   uint64_t * seq);
/* Whether endpoint flush `seq` toward `rank` on `win` (or a later one)
 * finished without error. */
bool MPIDI_NBRMA_ledger_flush_succeeded(MPIR_Win * win, int rank, uint64_t seq);

/* An operation's own request completes; its error becomes the wait's. The
 * wait takes over the caller's reference (not on error). */
int MPIDI_NBRMA_ledger_need_request(MPIDI_NBRMA_ledger_wait_t * wait, MPIR_Request * op_req);

/* Once released, `req` (of MPIDI_NBRMA_request_create) completes with the
 * wait's error. On error (no memory) `req` is left to the caller. */
int MPIDI_NBRMA_ledger_complete_request(MPIDI_NBRMA_ledger_wait_t * wait, MPIR_Request * req);

/* Once released, done(arg, error) is called, from the poller or at once
 * (its return value is then call_back's). It is called exactly once: if
 * arming fails for want of memory, at once with that error, the request
 * parts released. An error it returns from the poller surfaces at the next
 * progress call (none is lost, none stops the other waits). */
typedef int (*MPIDI_NBRMA_ledger_done_fn) (void *arg, int error);
int MPIDI_NBRMA_ledger_call_back(MPIDI_NBRMA_ledger_wait_t * wait,
                                 MPIDI_NBRMA_ledger_done_fn done, void *arg);
/* The done function of a caller that only looks later whether its wait was
 * released: `arg` a MPIDI_NBRMA_ledger_release_t, which it fills. */
typedef struct {
    bool released;
    int error;
} MPIDI_NBRMA_ledger_release_t;
int MPIDI_NBRMA_ledger_mark_released(void *arg, int error);

/* The bookkeeping of a window that follows what the ledger releases (engine
 * windows' completion sweeps, held ordered records): run(task, &again) at
 * every poll of the ledger from the next one on, until it leaves `again`
 * false. Kept in the window (no allocation); its MPI_Win_free settles it
 * like a wait. The list is the core's (F5 of nbrma_ledger_flights.h). */
typedef nbrma_ledger_task MPIDI_NBRMA_ledger_task_t;

/* Lists the task to run `run` for `win` (nothing if it is listed already). */
int MPIDI_NBRMA_ledger_each_poll(MPIDI_NBRMA_ledger_task_t * task, MPIR_Win * win,
                                 int (*run) (MPIDI_NBRMA_ledger_task_t * task, bool *again));

/* Nothing stayed open while the wait gathered its parts (shared memory): it
 * is complete, with w->error, and allocated nothing. */
static inline bool MPIDI_NBRMA_ledger_complete_as_gathered(const MPIDI_NBRMA_ledger_wait_t * w)
{
    return w->open.n == 0 && w->parts.n == 0;
}

/* For the waiting loops (ledger_wait.c): one look at every flush, outside
 * part and task (true if some wait was released); callbacks to `arg`
 * dropped (its caller is going away: their waits are released into the
 * void). */
bool MPIDI_NBRMA_ledger_poll(void);
void MPIDI_NBRMA_ledger_forget_arg(void *arg);

/* For a blocking wait with outside parts only, which registers nothing
 * (ledger_wait.c): its parts that are done now leave it (their requests
 * freed, the first error in w->error if none is there); whether none is
 * left. */
bool MPIDI_NBRMA_ledger_parts_done(MPIDI_NBRMA_ledger_wait_t * w);
/* The requests of the parts left (a wait given up, or complete without
 * them) go. */
static inline void MPIDI_NBRMA_ledger_parts_free_requests(MPIDI_NBRMA_ledger_wait_t * w)
{
    for (size_t i = 0; i < w->parts.n; i++)
        if (w->parts.v[i].req)
            MPIR_Request_free(w->parts.v[i].req);
}

/* The caller gives up before arming (its own error), or ends a wait
 * complete as gathered: the flushes started go on inside UCX, nothing waits
 * for them; the requests of need_request go back to the caller. The lists go
 * back to the core (F2, F4: kept for the next wait); a wait that never had
 * an entry has none to give back (MPIX_Win_iflush complete at once: two
 * calls into the core, 37 instructions, callgrind). */
static inline void MPIDI_NBRMA_ledger_cancel(MPIDI_NBRMA_ledger_wait_t * wait)
{
    if (wait->open.v)
        nbrma_open_flushes_release(&wait->open);
    if (wait->parts.v)
        nbrma_outside_parts_free(&wait->parts);
}

/* Completes every wait on `win` (MPI_Win_free). */
int MPIDI_NBRMA_ledger_finish_window(MPIR_Win * win);

/* --- ledger_wait.c --- */

/* One round of a loop that waits for the ledger: spins on the UCX worker
 * while endpoint flushes are in flight and nothing was released (see
 * ledger_adapter.c), otherwise runs MPICH's progress; with `yield`, lets the
 * process's other threads into MPI (MPIDI_NBRMA_progress_blocking_round). */
int MPIDI_NBRMA_ledger_wait_round(bool yield);

/* Waits until released (MPIDI_NBRMA_ledger_wait_round) and returns the
 * wait's error. */
int MPIDI_NBRMA_ledger_block(MPIDI_NBRMA_ledger_wait_t * wait, bool yield);

/* Arms the wait and says whether it was complete at once (*done; its error
 * is returned); if not, nothing waits for it (the flushes it started go on
 * inside UCX). */
int MPIDI_NBRMA_ledger_done_now(MPIDI_NBRMA_ledger_wait_t * wait, bool *done);

#endif /* NBRMA_LEDGER_ADAPTER_H_INCLUDED */
