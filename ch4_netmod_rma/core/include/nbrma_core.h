/*
 * mpich-nbrma core: the nonblocking-epoch engine behind MPIX_Win_ifence and friends.
 *
 * One engine per MPI window. The engine knows nothing about MPI or UCX: the glue
 * hands it application calls and inbound protocol events, and the engine talks
 * back through the transport vtable below. Ranks are window-relative.
 *
 * Threading: the engine is not thread-safe. The glue serializes all calls on one
 * engine (MPICH's global critical section does this); distinct engines share
 * nothing and may be used concurrently.
 *
 * Reentrancy: transport functions must not call back into the engine; queue the
 * message instead. `request_complete` is invoked at the end of an engine call,
 * once the engine state is consistent, and may call into the engine.
 *
 * No C++ exception ever leaves these functions: errors are returned as codes.
 */

#ifndef NBRMA_CORE_H_INCLUDED
#define NBRMA_CORE_H_INCLUDED

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Return codes. */
#define NBRMA_OK          0
#define NBRMA_ERR_SYNC    1     /* wrong synchronization use: the glue maps it to MPI_ERR_RMA_SYNC */
#define NBRMA_ERR_ARG     2     /* invalid argument (lock type, NULL pointer, duplicate rank, ...) */
#define NBRMA_ERR_RANK    3     /* rank outside the window */
#define NBRMA_ERR_NOMEM   4     /* allocation failed */
#define NBRMA_ERR_INTERN  5     /* protocol violation by a peer or engine bug */
/* Values >= NBRMA_ERR_TRANSPORT_BASE are returned unchanged from a failing transport
 * function (the transport owns that range). After a transport error or
 * NBRMA_ERR_NOMEM/NBRMA_ERR_INTERN the engine's state is undefined: free it.
 * NBRMA_ERR_SYNC, NBRMA_ERR_ARG and NBRMA_ERR_RANK change nothing. */
#define NBRMA_ERR_TRANSPORT_BASE 64

/* Assert bits: the numeric values of MPICH's MPI_MODE_* so the glue can pass
 * MPI asserts through (the glue static-asserts the equality). */
#define NBRMA_MODE_NOCHECK    1024
#define NBRMA_MODE_NOSTORE    2048
#define NBRMA_MODE_NOPUT      4096
#define NBRMA_MODE_NOPRECEDE  8192
#define NBRMA_MODE_NOSUCCEED 16384

/* Lock types: MPICH's MPI_LOCK_EXCLUSIVE / MPI_LOCK_SHARED values. */
#define NBRMA_LOCK_EXCLUSIVE 234
#define NBRMA_LOCK_SHARED    235

/* Reorder flags (paper section VI-B); all off by default. They never apply
 * next to a fence or lock_all epoch. */
#define NBRMA_REORDER_ACCESS_AFTER_ACCESS     0x1u  /* A_A_A_R */
#define NBRMA_REORDER_ACCESS_AFTER_EXPOSURE   0x2u  /* A_A_E_R */
#define NBRMA_REORDER_EXPOSURE_AFTER_EXPOSURE 0x4u  /* E_A_E_R */
#define NBRMA_REORDER_EXPOSURE_AFTER_ACCESS   0x8u  /* E_A_A_R */

/* Target argument of nbrma_iflush and nbrma_flush_ready meaning "every
 * target". Neither a rank nor -1: -1 is MPI_PROC_NULL in MPICH, and the glue
 * keeps one "all targets" value that cannot be mistaken for either (its
 * nbrma_win.h static-asserts this). -1 is an invalid rank (NBRMA_ERR_RANK). */
#define NBRMA_ALL_RANKS (-2)

typedef struct nbrma_engine nbrma_engine;

/* Handed to the glue with every issued operation, or batch of operations
 * issued directly (nbrma_op_issue_direct), and handed back, unchanged, to
 * nbrma_op_completed once they completed remotely. */
typedef struct nbrma_op_ticket {
    uint64_t age;               /* engine-wide issue order, used by flushes */
    void *epoch;                /* engine-internal */
    uint32_t slot;              /* engine-internal */
    int32_t target;
    uint64_t count;             /* operations it stands for (1 unless direct) */
} nbrma_op_ticket;

/* Outbound side. Every send_* delivers one small control message to `peer`
 * (never to the engine's own rank: the engine short-circuits those). Each
 * returns NBRMA_OK or a code >= NBRMA_ERR_TRANSPORT_BASE. The peer's glue feeds
 * the message to the matching nbrma_on_* function of its engine for the same
 * window. Messages may be delivered in any order (but see
 * nbrma_set_ordered_notifications). */
typedef struct nbrma_transport {
    void *ctx;
    /* "You may now access me with access ids up to `granted`." Implement as a
     * message (-> nbrma_on_grant) or as a remote write into the peer's counter
     * memory (nbrma_counter_memory, at nbrma_granted_counter_offset(my rank)),
     * which the peer notices in nbrma_progress/nbrma_test. Values only grow and
     * each slot has a single writer, so a remote atomic add of the increment
     * over the previous grant is correct in any delivery order. */
    int (*send_grant)(void *ctx, int peer, uint64_t granted);
    /* An access epoch with id `access_id` toward `peer` finished (PSCW). */
    int (*send_done)(void *ctx, int peer, uint64_t access_id);
    /* Passive target: request / release a lock; lock_type is NBRMA_LOCK_*. */
    int (*send_lock_request)(void *ctx, int peer, uint64_t access_id, int lock_type);
    int (*send_lock_release)(void *ctx, int peer, uint64_t access_id);
    /* A message of the fence barrier (rule 5): "my epochs before fence call
     * number s are complete, and so are those of the processes I heard in
     * the rounds before"; `token` names s and the round
     * (nbrma_fence_barrier.h), carried as it is. */
    int (*send_fence_arrival)(void *ctx, int peer, uint64_t token);
    /* Perform the recorded RMA operation `record` (the pointer the glue gave to
     * nbrma_op_record) toward `target` now. Report its remote completion later
     * with nbrma_op_completed(ticket). */
    int (*issue_op)(void *ctx, int target, void *record, nbrma_op_ticket ticket);
    /* The request identified by `cookie` completed. Never called for NULL cookies. */
    void (*request_complete)(void *ctx, void *cookie, int status);

    /* Whole lock epochs (all three optional; NULL: never). A lock epoch that
     * the application already closed when the engine activates it (it waited
     * in the deferred queue) is known entirely: lock, operations, unlock. The
     * engine then offers its `n` recorded operations toward `peer` to
     * pack_lock_epoch. The glue either declines (NBRMA_OK, *payload NULL; the
     * epoch then runs the usual lock protocol) or takes the records over (it
     * frees them) and returns one payload holding the operations' data. The
     * engine sends it with its lock request (send_lock_epoch, which frees it;
     * to itself the engine hands it over directly). The target's engine, when
     * it grants that request, has apply_lock_epoch perform the operations
     * under the lock (and free the payload), releases the lock at once and
     * sends the grant, which tells the origin its epoch is complete: one round
     * trip instead of lock, grant, operations, their completion and release. */
    int (*pack_lock_epoch)(void *ctx, int peer, int lock_type, void *const *records, size_t n,
                           void **payload);
    int (*send_lock_epoch)(void *ctx, int peer, uint64_t access_id, int lock_type, void *payload);
    int (*apply_lock_epoch)(void *ctx, int origin, void *payload);
    /* Lazy locks (rule L1; optional, NULL: never; needs the three above). A
     * lock epoch at the head of the deferred queue, with nothing behind it
     * and no flush waiting, may wait to activate until the application
     * closes it, so that it travels whole, while defer_lock sets *defer > 0
     * for the `n` operations it recorded so far toward `peer` (they would
     * all travel whole, and its lock would travel as messages). Asked again
     * whenever the engine settles; *defer < 0 says never toward that peer
     * (it has a lock word), and the engine stops asking. The first time such
     * an epoch must activate while still open (an operation that cannot
     * travel whole, a flush), later lock epochs of this engine toward that
     * peer activate at once as before: a wrong guess costs the lock's round
     * trip once. */
    int (*defer_lock)(void *ctx, int peer, int lock_type, void *const *records, size_t n,
                      int *defer);

    /* Lock words (both optional; NULL: every lock travels as messages). A
     * transport that reaches a process's lock word (in memory the origin
     * reaches without that process's CPU; for peer == my rank, my own)
     * takes and releases locks there itself. try_lock sets *state to
     * NBRMA_LOCK_TAKEN, NBRMA_LOCK_BUSY (incompatible holders: the engine
     * tries again at each nbrma_progress) or NBRMA_LOCK_BY_MESSAGE (no word
     * toward that peer: the lock request, grant and release messages). The
     * engine unlocks each lock it took once, after the epoch's operations
     * toward that peer completed. A target takes its own word before it grants
     * a lock request that arrived as a message, and releases it with that
     * lock. Lock words carry no access ids: an origin's lock epochs toward a
     * peer with a word leave the matching triple alone, which its other
     * epochs toward that peer keep using. */
    int (*try_lock)(void *ctx, int peer, int lock_type, int *state);
    int (*unlock)(void *ctx, int peer, int lock_type);

    /* Pulled access epochs (all four optional; NULL: never). An access epoch
     * (start) closed before a peer's grant arrived would issue its
     * operations toward that peer only at the origin's next progress call
     * after the grant: the target's wait then lasts as long as the origin
     * computes without calling MPI. Instead, when such a slot exists at the
     * close (or the epoch activates closed), the engine offers the slot's
     * `n` records to pack_access_epoch. The glue declines (*payload NULL) or
     * takes the records over and returns a payload from which the peer can
     * perform the operations without this process's CPU (their origin
     * buffers stay untouched until the close request completes). The engine
     * sends it with the slot's access id (send_access_epoch, which frees it),
     * and it stands for the slot's done. The target's engine applies it
     * (apply_access_epoch, which frees it) once its exposure toward that
     * origin with that id is granted, at once if it is, counts it as the done
     * and answers send_access_applied; the origin's engine counts the
     * operations complete on nbrma_on_access_applied. The grant still travels
     * and still matches. Never toward the engine's own rank. */
    int (*pack_access_epoch)(void *ctx, int peer, void *const *records, size_t n, void **payload);
    int (*send_access_epoch)(void *ctx, int peer, uint64_t access_id, void *payload);
    int (*apply_access_epoch)(void *ctx, int origin, void *payload);
    int (*send_access_applied)(void *ctx, int origin, uint64_t access_id);

    /* Frees a payload the engine owns but will never hand to
     * apply_lock_epoch or apply_access_epoch: one whose message the engine
     * refused (a sender outside the window, an invalid lock type, an id that
     * matches nothing) and whatever it still holds when it is freed. Needed by
     * every transport that gives the engine payloads (nbrma_on_lock_epoch,
     * nbrma_on_access_epoch); NULL: payloads are never dropped (leaked). */
    void (*drop_payload)(void *ctx, void *payload);
} nbrma_transport;

/* try_lock's answers. */
#define NBRMA_LOCK_BY_MESSAGE (-1)
#define NBRMA_LOCK_BUSY       0
#define NBRMA_LOCK_TAKEN      1

/* --- life cycle ------------------------------------------------------------ */
int nbrma_engine_create(int my_rank, int nprocs, const nbrma_transport *transport,
                        nbrma_engine **engine_out);
void nbrma_engine_free(nbrma_engine *engine);
/* Any combination of NBRMA_REORDER_* bits; applies to epochs activated later. */
int nbrma_set_reorder_flags(nbrma_engine *engine, unsigned flags);

/* --- epochs ----------------------------------------------------------------
 * A fence without NOSUCCEED opens a fence epoch that stays tentative until an
 * operation is recorded in it: like MPICH, opening another kind of epoch (or
 * freeing the window) then ends it as if NOSUCCEED had been given.
 * Every call returns at once. The request of an epoch-opening call (post,
 * start, lock, lock_all) completes immediately; that of a closing call when
 * the epoch completed internally; that of a fence when its barrier passed.
 * Blocking MPI calls are these calls plus a wait on the cookie. */
/* Wrong use returns NBRMA_ERR_SYNC:
 *   ifence           inside a PSCW or passive target epoch
 *   ipost            while a post, a used fence epoch, a lock or lock_all is open
 *   istart           while a start, a used fence epoch, a lock or lock_all is open
 *   icomplete, iwait, test   without an open start / post
 *   ilock            while exposed by post or a used fence epoch, inside start or
 *                    lock_all, or with `rank` locked already
 *   ilock_all        while any other epoch is open
 *   iunlock(_all)    without lock on `rank` (lock_all)
 *   op_record        with no open epoch covering `target`
 *   iflush           without an open lock on `rank` (any lock for all) or lock_all
 * Ranks outside the window give NBRMA_ERR_RANK. */
int nbrma_ifence(nbrma_engine *engine, int assert_bits, void *cookie);
int nbrma_ipost(nbrma_engine *engine, const int *ranks, int nranks, int assert_bits, void *cookie);
int nbrma_istart(nbrma_engine *engine, const int *ranks, int nranks, int assert_bits, void *cookie);
int nbrma_icomplete(nbrma_engine *engine, void *cookie);
int nbrma_iwait(nbrma_engine *engine, void *cookie);
/* MPI_Win_test: *flag = 1 and the exposure epoch is closed iff it completed. */
int nbrma_test(nbrma_engine *engine, int *flag);
int nbrma_ilock(nbrma_engine *engine, int lock_type, int rank, int assert_bits, void *cookie);
int nbrma_iunlock(nbrma_engine *engine, int rank, void *cookie);
int nbrma_ilock_all(nbrma_engine *engine, int assert_bits, void *cookie);
int nbrma_iunlock_all(nbrma_engine *engine, void *cookie);

/* --- operations and flushes ------------------------------------------------ */
/* Records an RMA operation toward `target` in the epoch that covers it; the
 * engine calls issue_op now or when the epoch is activated and granted. */
int nbrma_op_record(nbrma_engine *engine, int target, void *record);
/* Whether nbrma_op_record's `rc` left the record with the caller: wrong use
 * changes nothing (NBRMA_ERR_SYNC, _ARG, _RANK); with any other code the
 * engine took it (it may have issued it already). */
static inline int nbrma_op_record_refused(int rc)
{
    return rc == NBRMA_ERR_SYNC || rc == NBRMA_ERR_ARG || rc == NBRMA_ERR_RANK;
}
/* The same without a record, for the common case: if the epoch covering
 * `target` is active and granted (op_record would issue at once), the engine
 * counts `count` (>= 1) operations as issued now, all of one age, sets
 * *issued = 1 and fills *ticket; the caller performs the operations itself
 * (or performed them since the covering epoch was granted and no call but a
 * flush or an operation reached the engine: the grant holds until the
 * application's next synchronization call) and reports them with
 * nbrma_op_completed(ticket) once all completed. Otherwise *issued = 0 and
 * nothing changed: use nbrma_op_record. Errors as nbrma_op_record
 * (NBRMA_ERR_ARG for NULL pointers or a count of 0). */
int nbrma_op_issue_direct(nbrma_engine *engine, int target, uint64_t count, nbrma_op_ticket *ticket,
                          int *issued);
/* Rule G2, for an operation without a request: where the epoch covering
 * `target` is active and granted and does not end toward it by a notice
 * (an access epoch, PSCW, toward another process), *issued = 1 and
 * ticket->count = 0: the operation goes uncounted (the caller counts it in
 * its grant cache, or not at all when it is performed at return) and the
 * epoch is used; in an access epoch toward a peer, as nbrma_op_issue_direct
 * with one operation (ticket->count 1); else *issued = 0 and nothing
 * changed. Errors as nbrma_op_issue_direct. */
int nbrma_op_issue_first(nbrma_engine *engine, int target, nbrma_op_ticket *ticket, int *issued);
/* The ticket's operations completed at their target (and so locally too). */
int nbrma_op_completed(nbrma_engine *engine, nbrma_op_ticket ticket);
/* The ticket's operations were performed at their target when their call
 * returned (rule R10, nbrma_performed_at_return in nbrma_route.h): as
 * nbrma_op_completed, but without the work of an engine call while their
 * epoch is open and no flush waits. */
int nbrma_op_performed(nbrma_engine *engine, nbrma_op_ticket ticket);
/* 1 if the ticket's epoch ends toward its target with a notice sent after
 * its operations (the done of an access epoch, PSCW, toward another
 * process), and nothing else needs their remote completion (no flush in
 * such an epoch); 0 otherwise, and for a ticket of no active epoch. The
 * glue may then report an operation that travels ahead of that notice, in
 * order, as completed once it is locally complete (rule R5,
 * nbrma_complete_at_local in nbrma_route.h). */
int nbrma_op_epoch_ends_by_notice(const nbrma_engine *engine, nbrma_op_ticket ticket);
/* Completes when every operation recorded before it (toward `rank`, or toward
 * all for NBRMA_ALL_RANKS) completed, locally if `local_only`, remotely
 * otherwise; later operations never delay it. Only in passive target epochs. */
int nbrma_iflush(nbrma_engine *engine, int rank, int local_only, void *cookie);
/* Sets *ready to 1 when a flush toward `rank` (or NBRMA_ALL_RANKS) would
 * complete at once: no operation recorded or issued before it is outstanding.
 * Same errors as nbrma_iflush; changes nothing. Lets a blocking flush that
 * completed the issued operations itself skip the request. */
int nbrma_flush_ready(const nbrma_engine *engine, int rank, int local_only, int *ready);
/* Rule R8's stream toward `target` (nbrma_route.h): 1 if `max` operations
 * the engine counted toward it are in a burst (counted since none was
 * outstanding there), or the burst before had more than `max`; always for a
 * `max` of 0. 0 for a rank outside the window. Changes nothing. */
int nbrma_op_in_stream(const nbrma_engine *engine, int target, uint64_t max);

/* --- inbound protocol events (from the peer's transport) ------------------- */
/* `from` is the sending peer: outside the window, or the engine's own rank
 * (its messages to itself never leave it), gives NBRMA_ERR_RANK. */
int nbrma_on_grant(nbrma_engine *engine, int from, uint64_t granted);
int nbrma_on_done(nbrma_engine *engine, int from, uint64_t access_id);
int nbrma_on_lock_request(nbrma_engine *engine, int from, uint64_t access_id, int lock_type);
/* A lock request sent by send_lock_epoch; the engine owns `payload` from now
 * on, whatever the call returns: it hands it to apply_lock_epoch when it
 * grants the lock, or to drop_payload. */
int nbrma_on_lock_epoch(nbrma_engine *engine, int from, uint64_t access_id, int lock_type,
                        void *payload);
int nbrma_on_lock_release(nbrma_engine *engine, int from, uint64_t access_id);
/* A pulled access epoch (send_access_epoch); the engine owns `payload` from
 * now on, whatever the call returns: it hands it to apply_access_epoch once
 * the exposure is granted, or to drop_payload. */
int nbrma_on_access_epoch(nbrma_engine *engine, int from, uint64_t access_id, void *payload);
/* The peer applied my pulled access epoch `access_id` (send_access_applied). */
int nbrma_on_access_applied(nbrma_engine *engine, int from, uint64_t access_id);
int nbrma_on_fence_arrival(nbrma_engine *engine, int from, uint64_t token);

/* --- queries --------------------------------------------------------------- */
/* 1 if any epoch is open, deferred or active, or any flush is pending; an
 * active tentative fence epoch does not count. */
int nbrma_has_pending_epochs(const nbrma_engine *engine);
/* 1 if a lock waits for a lock word that was busy (transport.try_lock):
 * nbrma_progress tries again. */
int nbrma_lock_attempts_pending(const nbrma_engine *engine);
/* 1 if the application opened an epoch and did not close it (a fence epoch
 * only once an operation was recorded in it): MPI_Win_free is wrong then,
 * whereas epochs that are merely closed but not completed may be driven to
 * completion. */
int nbrma_has_open_epochs(const nbrma_engine *engine);
/* Rule G1: 1 if the open epoch is a fence epoch whose barrier passed: every
 * rank is granted until the next synchronization call (the grant cache's
 * nbrma_grant_cache_granted_all, once an operation used the epoch). */
int nbrma_fence_grants_every_rank(const nbrma_engine *engine);
const char *nbrma_strerror(int code);

/* --- optional features and queries ----------------------------------------
 * The CH4 glue (ch4/) switches on separate local completion reports
 * (nbrma_set_local_completion_reports, nbrma_op_local_completed: epochs/
 * window.c, operations.c, completion_sweep.c), calls nbrma_progress for busy
 * lock words (epochs/lock_words.c) and reports nbrma_epoch_counts in
 * MPI_Win_get_info (epochs/window.c). The others only the simulator and the
 * unit tests (test/unit/) call; they stay part of the contract: ordered
 * notifications (UCX 1.13's fence does not order across the lanes that carry
 * RMA and active messages) and grants as remote writes into counter memory,
 * noticed by nbrma_progress. */
/* Declares (enabled != 0) that the transport delivers send_done and
 * send_lock_release to a peer only after every operation issued earlier toward
 * that peer completed there (ordered endpoint, ucp_worker_fence, one ordered
 * AM stream). The engine then notifies as soon as the epoch is closed and its
 * operations are issued, behind the data, instead of after their completion
 * reports: the target no longer waits for the origin's next progress call.
 * Closing requests still complete only once the operations completed. Off by
 * default. */
int nbrma_set_ordered_notifications(nbrma_engine *engine, int enabled);
/* Optional finer reports: after nbrma_set_local_completion_reports(engine, 1)
 * (only while no operation is outstanding), the glue reports each operation
 * first with nbrma_op_local_completed once its origin buffer may be reused,
 * then with nbrma_op_completed; local flushes then wait for the first report
 * only. Without it, local flushes wait for remote completion. */
int nbrma_set_local_completion_reports(nbrma_engine *engine, int enabled);
int nbrma_op_local_completed(nbrma_engine *engine, nbrma_op_ticket ticket);
/* Both reports at once, for an operation whose local report was still due
 * when its remote completion came (a remote completion implies the local
 * one): one call instead of two. */
int nbrma_op_completed_with_local(nbrma_engine *engine, nbrma_op_ticket ticket);
/* Whether a local flush (nbrma_iflush with local_only) waits: only then does
 * a local report change anything before the remote one, which may carry it. */
int nbrma_local_flush_waiting(const nbrma_engine *engine);
/* Progress sweep: notices grants written into counter memory, tries busy
 * lock words again (the glue calls it while nbrma_lock_attempts_pending) and
 * advances everything that can advance. *made_progress may be NULL. */
int nbrma_progress(nbrma_engine *engine, int *made_progress);
/* How many epochs wait in the deferred queue and how many are active (for
 * debugging and for benchmarks that report where epochs waited). */
int nbrma_epoch_counts(const nbrma_engine *engine, size_t *deferred, size_t *active);
/* The per-peer matching triples <a_l, e_l, g_r>, contiguous, for memory
 * registration when grants are remote writes. */
int nbrma_counter_memory(nbrma_engine *engine, void **base, size_t *bytes);
/* Byte offset, inside a peer's counter memory, of the granted counter that
 * `writer_rank` writes there. */
size_t nbrma_granted_counter_offset(int writer_rank);

#ifdef __cplusplus
}
#endif

#endif /* NBRMA_CORE_H_INCLUDED */
