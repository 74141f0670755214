/*
 * mpich-nbrma: the glue of the completion ledger (core/include/nbrma_ledger.h),
 * where every wait for RMA completion waits: for endpoint flushes (numbered
 * per peer and shared by the ledger) and outside parts (MPIDIG's counters,
 * requests). Endpoint, not worker, flushes: with UCX 1.13.1 a worker flush
 * sometimes completed before a large put had read its origin buffer.
 */

#ifndef NBRMA_LEDGER_ADAPTER_H_INCLUDED
#define NBRMA_LEDGER_ADAPTER_H_INCLUDED

#include "nbrma_win.h"
#include "nbrma_ledger_flights.h"

/* A wait, on the caller's stack while it gathers. Each need_ call starts or
 * checks its part at once, keeping only what is open: a wait on shared memory
 * completes with no allocation and no trip through the progress engine. An
 * outside part's req is an MPIR_Request. */
typedef struct MPIDI_NBRMA_ledger_wait {
    MPIR_Win *win;
    int vni;
    int error;                  /* the first error of a part, or of gathering */
    nbrma_open_flushes open;    /* flushes still in flight (F2 of the core) */
    nbrma_outside_parts parts;  /* not done when asked for, and requests (F4) */
    /* a one-rank counters part's MPIDIG target (NULL: none), not looked up twice */
    const MPIDIG_win_target_t *am_target;
} MPIDI_NBRMA_ledger_wait_t;

/* Begins a wait on `win`: then need_ calls, then exactly one of
 * complete_request, call_back, block, done_now or cancel. Orders this thread's
 * earlier stores (R9's copies) before those made after the wait is over. */
void MPIDI_NBRMA_ledger_wait_init(MPIDI_NBRMA_ledger_wait_t * wait, MPIR_Win * win);

/* A flush of `rank`'s endpoint where MPICH's UCX RDMA reaches it on this
 * window, or always with `always` (the component issued RDMA or atomics). The
 * need_ functions fail only for want of memory; the wait must still end. */
int MPIDI_NBRMA_ledger_need_endpoint(MPIDI_NBRMA_ledger_wait_t * wait, int rank, bool always);

/* MPIDIG's active-message operations toward `rank` (or NBRMA_ALL_RANKS)
 * complete: acknowledged, or only sent if `local`. The counters count
 * outstanding operations: later ones can delay the wait, never release it. */
int MPIDI_NBRMA_ledger_need_am(MPIDI_NBRMA_ledger_wait_t * wait, int rank, bool local);

/* The wait's flush in flight toward `rank`: its number in *seq, if any. */
bool MPIDI_NBRMA_ledger_open_flush(const MPIDI_NBRMA_ledger_wait_t * wait, int rank,
                                   uint64_t * seq);
/* Whether flush `seq` toward `rank` (or a later one) finished without error. */
bool MPIDI_NBRMA_ledger_flush_succeeded(MPIR_Win * win, int rank, uint64_t seq);

/* An operation's own request completes; its error becomes the wait's. The
 * wait takes over the caller's reference (not on error). */
int MPIDI_NBRMA_ledger_need_request(MPIDI_NBRMA_ledger_wait_t * wait, MPIR_Request * op_req);

/* Once released, `req` (of MPIDI_NBRMA_request_create) completes with the
 * wait's error. On error (no memory) `req` is left to the caller. */
int MPIDI_NBRMA_ledger_complete_request(MPIDI_NBRMA_ledger_wait_t * wait, MPIR_Request * req);

/* Once released, done(arg, error) is called exactly once, from the poller or
 * at once (its return value then call_back's), also if arming fails for want
 * of memory. An error it returns in the poller surfaces at the next progress
 * call without stopping the other waits. */
typedef int (*MPIDI_NBRMA_ledger_done_fn) (void *arg, int error);
int MPIDI_NBRMA_ledger_call_back(MPIDI_NBRMA_ledger_wait_t * wait,
                                 MPIDI_NBRMA_ledger_done_fn done, void *arg);
/* A done function that fills the MPIDI_NBRMA_ledger_release_t `arg`. */
typedef struct {
    bool released;
    int error;
} MPIDI_NBRMA_ledger_release_t;
int MPIDI_NBRMA_ledger_mark_released(void *arg, int error);

/* A window's bookkeeping following the ledger's releases (completion sweeps,
 * held ordered records): run(task, &again) at every poll from the next, until
 * !again. Kept in the window; MPI_Win_free settles it like a wait (F5). */
typedef nbrma_ledger_task MPIDI_NBRMA_ledger_task_t;

/* Lists the task to run `run` for `win` (nothing if it is listed already). */
int MPIDI_NBRMA_ledger_each_poll(MPIDI_NBRMA_ledger_task_t * task, MPIR_Win * win,
                                 int (*run) (MPIDI_NBRMA_ledger_task_t * task, bool *again));

/* Nothing stayed open while gathering (shared memory): done, error w->error. */
static inline bool MPIDI_NBRMA_ledger_complete_as_gathered(const MPIDI_NBRMA_ledger_wait_t * w)
{
    return w->open.n == 0 && w->parts.n == 0;
}

/* For the waiting loops: one look at every flush, outside part and task
 * (true if a wait was released); forget_arg drops the callbacks to `arg`,
 * whose caller is going away. */
bool MPIDI_NBRMA_ledger_poll(void);
void MPIDI_NBRMA_ledger_forget_arg(void *arg);

/* For a blocking wait of outside parts only: its done parts leave it
 * (requests freed, first error kept); whether none is left. */
bool MPIDI_NBRMA_ledger_parts_done(MPIDI_NBRMA_ledger_wait_t * w);
/* Frees the requests left in the parts (a wait given up, or done). */
static inline void MPIDI_NBRMA_ledger_parts_free_requests(MPIDI_NBRMA_ledger_wait_t * w)
{
    for (size_t i = 0; i < w->parts.n; i++)
        if (w->parts.v[i].req)
            MPIR_Request_free(w->parts.v[i].req);
}

/* Ends a wait given up before arming, or complete as gathered: started
 * flushes go on inside UCX; need_request's requests stay the caller's. Lists
 * never used skip the core's calls (an MPIX_Win_iflush complete at once). */
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

/* One round of a ledger waiting loop: spins on the UCX worker while flushes
 * are in flight, else MPICH's progress; `yield` lets other threads into MPI. */
int MPIDI_NBRMA_ledger_wait_round(bool yield);

/* Waits until released (ledger_wait_round); returns the wait's error. */
int MPIDI_NBRMA_ledger_block(MPIDI_NBRMA_ledger_wait_t * wait, bool yield);

/* Arms the wait; *done: complete at once (its error returned). If not,
 * nothing waits for it (its flushes go on inside UCX). */
int MPIDI_NBRMA_ledger_done_now(MPIDI_NBRMA_ledger_wait_t * wait, bool *done);

#endif /* NBRMA_LEDGER_ADAPTER_H_INCLUDED */
