/*
 * mpich-nbrma: the state of an engine window and what the files of epochs/
 * share. Internal to ch4/epochs/.
 *
 * An engine window hands every synchronization call to the nonblocking-epoch
 * engine (core/, nbrma_core.h); a blocking call is the nonblocking one plus a
 * wait on its request, so both kinds mix freely (paper rule 1). RMA calls are
 * recorded in the engine, which issues them through MPICH's own MPIDI_<op>
 * once their epoch is active and granted; when it already is (the common
 * case), an operation without a request of its own goes at once and the engine
 * only counts it. MPIDIG's epoch state is parked at "lock_all" for the life of
 * the window, so that its per-operation epoch checks let the engine's
 * operations through; the engine does the checking.
 *
 * The files and what calls what: ch4/README.md (epochs/).
 */

#ifndef NBRMA_EPOCH_WIN_H_INCLUDED
#define NBRMA_EPOCH_WIN_H_INCLUDED

#include "nbrma_win.h"
#include "nbrma_core.h"
#include "nbrma_route.h"
#include "nbrma_thread_marks.h"
#include "nbrma_grant_cache.h"
#include "nbrma_held_queue.h"
#include "nbrma_order_tracker.h"
#include "nbrma_issued_ops.h"
#include "nbrma_inbox.h"
#include "wire.h"
#include "whole_epoch_codec.h"
#include "nbrma_completion.h"
#include "nbrma_ledger_adapter.h"
#include "nbrma_trace.h"
#include "mailbox.h"
#include "peer_reach.h"

/* An RMA call recorded in the engine until its epoch lets it go. */
typedef struct {
    MPIDI_NBRMA_rma_op_t op;    /* op.request is NULL: issued without a request */
    MPIR_Request *user_req;     /* the request of MPI_Rput & co., or NULL */
    int *granted_flag;          /* set: no operation, only a mark that the epoch
                                 * was granted (set to 1 when "issued") */
    bool ordered;               /* issued through a handle with mpi_win_order=true */
} MPIDI_NBRMA_recorded_op_t;

/* A group's members as window ranks, kept with a reference to the group:
 * a group never changes, and one that is held cannot be freed and its object
 * reused for another, so the same pointer means the same members. */
typedef struct {
    MPIR_Group *group;          /* NULL: none kept */
    int *ranks;
} MPIDI_NBRMA_group_ranks_t;

/* A blocking synchronization call's completion, the engine's cookie in
 * place of a request (sync_calls.c): the call waits on `done` in the window
 * instead of creating, completing, waiting for and freeing a request. */
typedef struct {
    bool in_use;                /* handed to the engine and not yet seen done */
    bool done;
    int mpi_errno;
} MPIDI_NBRMA_blocking_call_t;

typedef struct MPIDI_NBRMA_epoch_win {
    MPIDI_NBRMA_win_state_t state;      /* ops: MPIDI_NBRMA_epochs_win_ops, or
                                         * MPIDI_NBRMA_dynamic_epochs_win_ops */
    MPIR_Win *win;
    /* MPICH's path for an operation (perform() in operations.c): MPICH's
     * code, or on a dynamic window the rkey cache's RDMA in front of it */
    int (*mpich_path_rma) (const MPIDI_NBRMA_rma_op_t * op, MPIR_Win * win);
    /* NULL, or whether that path takes `op` by RDMA of its own (a cached
     * rkey), which MPICH's tables do not show: an operation's route then
     * says exactly whether it leaves UCX operations on the endpoint, and
     * waits flush those endpoints even toward targets MPICH reaches by
     * active messages only */
    bool (*own_rdma_for) (const MPIDI_NBRMA_rma_op_t * op, MPIR_Win * win);
    /* at the target: where `len` bytes at `target_disp` of this process's
     * window memory are, for the operations that whole and pulled epochs
     * bring (the window's bounds; on a dynamic window an attached region);
     * false: not all inside it */
    bool (*target_bytes) (MPIR_Win * win, int64_t target_disp, size_t len, char **addr);
    nbrma_engine *engine;
    unsigned reorder_flags;
    int call_depth;             /* engine calls in progress (ENGINE_CALL) */
    int transport_errno;        /* MPI error of the transport function that failed */
    bool whole_lock_epochs;     /* pack lock epochs closed before activation */
    bool wants_native_atomics;  /* CVAR and info key at creation */
    bool native_atomics;        /* in force (atomics/native_atomics.h), once the memory is known */
    bool narrow_atomics;        /* 1- and 2-byte ones too (atomics/narrow_atomics.h) */
    bool intrinsic_atomics;     /* native, and by this process's CPU toward every peer
                                 * (MPIX_Win_op_intrinsic) */
    bool wants_assert_intrinsic;        /* info mpi_assert_accumulate_intrinsic: in force
                                         * where intrinsic_atomics (operations.c) */
    uint64_t whole_lock_epochs_sent;
    bool pulled_epochs;         /* offer access epochs for targets to pull */
    uint64_t pulled_epochs_sent;
    bool in_blocking_call;      /* a blocking MPI_Win_* call: no pulls (sync_calls.c) */
    bool wants_mailbox;         /* CVAR and info key at creation */
    MPIDI_NBRMA_mailbox_t *mailbox;     /* protocol messages as stores (messages.c) */
    bool wants_cross_memory_rma;        /* CVAR and info key at creation */
    size_t cross_memory_min_bytes;      /* smaller puts and gets toward memory not mapped
                                         * here take UCX's path while the target's
                                         * application serves it (rule R1) */
    size_t mapped_atomics_min_bytes;    /* larger accumulates take the CPU's atomics on
                                         * mapped memory before UCX's (rule R2) */
    bool mapped_here;           /* peers on this host may map this process's window memory
                                 * (MPICH's node-shared segment, UCX memory): what MPIDIG
                                 * brings is applied with the CPU's atomics (rule R3) */
    /* per rank: its window memory mapped here (copies with loads and stores,
     * the CPU's atomics; all_peers_mapped: every accumulate is intrinsic) or
     * the pid of cross-memory attach (cross_memory_rma.c, peer_reach.h) */
    nbrma_peer_reach_t reach;
    /* per rank, looked at once (op_route.c): whether UCX emulates puts and
     * atomics toward it over a network (rules R2, R8), and whether its puts
     * there are copies by this CPU (R9); NULL until the first operation that
     * could ask */
    unsigned char *lanes_of;
    bool had_local_flush;       /* MPI_Win_flush_local(_all) was called (rule R8) */

    /* issued operations until the completion sweep reports them (core), and
     * the outcome of the sweep's ledger wait */
    nbrma_issued_ops *issued;
    MPIDI_NBRMA_ledger_release_t sweep;

    /* operations issued since the application's last synchronization call
     * toward targets whose covering epoch was granted (direct_ops.c) */
    nbrma_grant_cache *grants;  /* which targets, how many went (core) */

    /* mpi_win_order=true (ordered_ops.c) */
    bool win_order;             /* the window handle's key (duplicates carry their own) */
    nbrma_order_tracker *order; /* what is in flight per target and the one wait
                                 * for its completion (core), from the first
                                 * ordered operation on */
    MPIDI_NBRMA_ledger_release_t order_wait;    /* the outcome of that wait in the ledger */
    nbrma_held_queue *held;     /* replayed records waiting (core; made at the
                                 * first, held_records.c) */
    MPIDI_NBRMA_ledger_task_t held_task;        /* tried at the ledger's polls while
                                                 * records are held */

    /* mpi_win_scope=thread (thread_scope.c): fixed at creation */
    bool thread_scope;
    nbrma_thread_marks *thread_marks;   /* what each thread issued where (core) */

    /* messages that arrived during an engine call, my pulled epochs until
     * applied (core) */
    nbrma_inbox *inbox;

    MPIDI_NBRMA_ledger_task_t sweep_task;       /* the sweep, run at the ledger's polls
                                                 * while operations are unreported */
    struct MPIDI_NBRMA_epoch_win *next_lock_retry;      /* in lock_words.c's list while the
                                                         * engine waits for a busy word */
    bool lock_retry_listed;

    /* the group of the last MPI_Win_post ([1]) and MPI_Win_start ([0]) and its
     * members' window ranks (sync_calls.c) */
    MPIDI_NBRMA_group_ranks_t group_ranks[2];

    /* the blocking synchronization call the engine completes (one at a time;
     * a second thread's takes a request) */
    MPIDI_NBRMA_blocking_call_t blocking;
} MPIDI_NBRMA_epoch_win_t;

/* The engine's cookies are requests of ours, or a window's blocking call
 * tagged with the low bit (both are aligned): transport.c tells them apart. */
static inline void *MPIDI_NBRMA_blocking_cookie(MPIDI_NBRMA_blocking_call_t * b)
{
    return (void *) ((uintptr_t) b | 1u);
}

static inline MPIDI_NBRMA_blocking_call_t *MPIDI_NBRMA_cookie_blocking_call(void *cookie)
{
    return ((uintptr_t) cookie & 1u) ? (MPIDI_NBRMA_blocking_call_t *) ((uintptr_t) cookie - 1u)
        : NULL;
}

static inline MPIDI_NBRMA_epoch_win_t *MPIDI_NBRMA_epoch_win(MPIR_Win * win)
{
    MPIDI_NBRMA_win_state_t *state = MPIDI_NBRMA_WIN_STATE(win);
    return state && state->ops->carries_engine ? (MPIDI_NBRMA_epoch_win_t *) state : NULL;
}

#define EPOCH_TRACE(ew, ...) MPIDI_NBRMA_TRACE((ew)->win, __VA_ARGS__)

/* --- engine_calls.c ---------------------------------------------------------
 * The engine must not be entered from its own transport functions, yet
 * issuing an operation may run MPICH's progress, and so a handler of ours.
 * Every call into the engine goes through ENGINE_CALL: `call` runs with the
 * depth raised, its code lands in `rc`, and then the messages that arrived
 * meanwhile are delivered (the core's inbox, nbrma_inbox.h). */
#define ENGINE_CALL(ew, rc, call)                                               \
    do {                                                                        \
        (ew)->call_depth++;                                                     \
        (rc) = (call);                                                          \
        (ew)->call_depth--;                                                     \
        if ((rc) == NBRMA_OK && !(ew)->call_depth)                              \
            (rc) = nbrma_inbox_drain((ew)->inbox, (ew)->engine, &(ew)->call_depth); \
    } while (0)

/* A protocol message for the engine: delivered now, or kept in the inbox
 * during an engine call (the engine owns `payload` either way). */
int MPIDI_NBRMA_epochs_receive(MPIDI_NBRMA_epoch_win_t * ew, const nbrma_ctrl_msg_t * msg,
                               void *payload);
/* The MPI error for an engine return code. A transport error is the MPI error
 * that transport_rc kept: the engine passes the transport's code through.
 * Success is tested inline: most engine calls of a flush or an operation
 * succeed, and the call cost them 11 instructions. */
int MPIDI_NBRMA_engine_error(MPIDI_NBRMA_epoch_win_t * ew, int rc);
static inline int MPIDI_NBRMA_engine_errno(MPIDI_NBRMA_epoch_win_t * ew, int rc)
{
    return rc == NBRMA_OK ? MPI_SUCCESS : MPIDI_NBRMA_engine_error(ew, rc);
}
int MPIDI_NBRMA_transport_rc(MPIDI_NBRMA_epoch_win_t * ew, int mpi_errno);

/* --- message_send.c --- */
/* Sends a protocol message of `bytes` bytes that begins with `msg` (more than
 * the message only for a whole lock epoch); the message is filled in here.
 * Messages without more go into the peer's mailbox where it can. */
int MPIDI_NBRMA_send_ctrl(MPIDI_NBRMA_epoch_win_t * ew, int peer, nbrma_ctrl_msg_t * msg,
                          size_t bytes, nbrma_ctrl_kind_t kind, uint64_t value, int lock_type);
/* The active-message handler the messages go to (registered by messages.c). */
void MPIDI_NBRMA_send_ctrl_via(int handler_id);

/* --- messages.c --- */
/* The mailbox's deliver function (mailbox.h): a message a peer stored. */
int MPIDI_NBRMA_epochs_deliver_mail(void *ctx, int from, const nbrma_ring_msg_t * mail);

/* --- operations.c --- */
void MPIDI_NBRMA_recorded_op_free(MPIDI_NBRMA_recorded_op_t * rec);
/* Performs a recorded operation the engine issues (through held_records.c). */
int MPIDI_NBRMA_issue_recorded(MPIDI_NBRMA_epoch_win_t * ew, MPIDI_NBRMA_recorded_op_t * rec,
                               nbrma_op_ticket ticket);
/* A record that could not be performed: its request reports the error. */
int MPIDI_NBRMA_drop_recorded(MPIDI_NBRMA_recorded_op_t * rec, int mpi_errno);

/* mpi_assert_accumulate_intrinsic in force: the application promised that
 * every accumulate is intrinsic (MPIX_Win_op_intrinsic), and on this window
 * the routed ones are. Another accumulate is then an error (MPI_ERR_OP)
 * instead of an active message. */
static inline bool MPIDI_NBRMA_assert_intrinsic(const MPIDI_NBRMA_epoch_win_t * ew)
{
    return ew->wants_assert_intrinsic && (ew->intrinsic_atomics || ew->reach.all_peers_mapped);
}

/* --- op_route.c --- */
/* The route of `op` by the core's rules (nbrma_route.h); `may_wait`: the
 * caller may wait for UCX (not a replay inside a UCX callback);
 * `cross_memory`: false once that path declined the operation. The
 * ordering of an ordered operation asks as its issue does, and gets the same
 * answer. */
nbrma_route MPIDI_NBRMA_route(MPIDI_NBRMA_epoch_win_t * ew, const MPIDI_NBRMA_rma_op_t * op,
                              bool may_wait, bool cross_memory);
/* Rule R9: whether `route`, taken toward `target` by an operation that was
 * (`locally_complete`) or was not complete locally when its call returned,
 * left it to be completed by an endpoint flush. */
bool MPIDI_NBRMA_needs_endpoint_flush(MPIDI_NBRMA_epoch_win_t * ew, nbrma_route route, int target,
                                      bool locally_complete);
/* Whether every UCX lane for puts and gets toward `target` is this CPU's
 * copy into memory UCX maps here (rule R9's fact). */
bool MPIDI_NBRMA_lanes_copy_by_cpu(MPIDI_NBRMA_epoch_win_t * ew, int target);
/* Whether an operation that went `route` toward `target` may need the
 * target's CPU (nbrma_route_may_need_target_cpu); inline, so that the
 * origin's copies, most puts on shared memory, pay a compare. */
static inline bool MPIDI_NBRMA_needs_target_cpu(MPIDI_NBRMA_epoch_win_t * ew, nbrma_route route,
                                                int target)
{
    /* the lanes are looked at only where their answer can matter */
    bool copied_by_cpu = route.path == NBRMA_PATH_MPICH && route.leaves == NBRMA_WAY_UCX &&
        MPIDI_NBRMA_lanes_copy_by_cpu(ew, target);

    return nbrma_route_may_need_target_cpu(route, copied_by_cpu);
}
/* Whether an accumulate, fetch or swap of `kind` on `datatype` with `op` is
 * intrinsic on this window: it goes to UCX atomics, which this process's CPU
 * performs toward every peer, or to the CPU's atomics on every peer's memory
 * mapped here (rule R3). */
bool MPIDI_NBRMA_op_intrinsic(const MPIDI_NBRMA_epoch_win_t * ew, MPIDI_NBRMA_op_kind_t kind,
                              MPI_Datatype datatype, MPI_Op op);

/* --- held_records.c --- */
/* transport.issue_op: performs a record the engine replays, or holds an
 * ordered one that must wait for earlier operations toward its target. */
int MPIDI_NBRMA_issue_or_hold(MPIDI_NBRMA_epoch_win_t * ew, MPIDI_NBRMA_recorded_op_t * rec,
                              nbrma_op_ticket ticket);
/* Records held. */
static inline size_t MPIDI_NBRMA_held_count(const MPIDI_NBRMA_epoch_win_t * ew)
{
    return ew->held ? nbrma_held_queue_size(ew->held) : 0;
}
/* Whether records toward `rank` are held: an ordered operation toward it
 * waits behind them. */
static inline bool MPIDI_NBRMA_held_toward(const MPIDI_NBRMA_epoch_win_t * ew, int rank)
{
    return ew->held && nbrma_held_queue_toward(ew->held, rank);
}
void MPIDI_NBRMA_held_free(MPIDI_NBRMA_epoch_win_t * ew);

/* --- ordered_ops.c --- */
/* Whether `op` is ordered: its handle's mpi_win_order, or the window's. */
static inline bool MPIDI_NBRMA_ordered(const MPIDI_NBRMA_epoch_win_t * ew,
                                       const MPIDI_NBRMA_rma_op_t * op)
{
    return op->dup_keys ? op->dup_keys->order : ew->win_order;
}
/* Before an ordered operation the application issues, which travels
 * `travels`: waits until what was issued toward its target before it (held
 * records first) is ordered before it. */
int MPIDI_NBRMA_ordered_wait(MPIDI_NBRMA_epoch_win_t * ew, const MPIDI_NBRMA_rma_op_t * op,
                             nbrma_way travels);
/* The same without waiting (a replay): *ready, or the record is to be held
 * (held_records.c); behind_held: not ready while records toward its target
 * are held (false for the first of them). */
int MPIDI_NBRMA_ordered_test(MPIDI_NBRMA_epoch_win_t * ew, const MPIDI_NBRMA_rma_op_t * op,
                             bool behind_held, bool *ready);
/* After any operation on a window that ordered one: the way it went. */
void MPIDI_NBRMA_ordered_note(MPIDI_NBRMA_epoch_win_t * ew, int rank, nbrma_way way);

/* --- cross_memory_rma.c --- */
/* At creation, once the mailboxes and the UCX keys are known: the peers whose
 * window memory this process writes and reads by cross-memory attach, and
 * those whose memory is mapped here (their accumulates: rule R3). */
int MPIDI_NBRMA_cross_memory_rma_decide(MPIDI_NBRMA_epoch_win_t * ew);
/* Performs a put or get by the origin's copy if it may go so (through a
 * mapping of the target's memory here, or by cross-memory attach): true when
 * it did, and then it is complete at both ends; false when the kernel refused
 * the copy, the two sides do not hold as many bytes (MPICH's path reports
 * that), or it may not go so. */
bool MPIDI_NBRMA_cross_memory_rma(MPIDI_NBRMA_epoch_win_t * ew, const MPIDI_NBRMA_rma_op_t * op);
/* Whether MPIDI_NBRMA_cross_memory_rma would copy `op` (unless the copy fails). */
bool MPIDI_NBRMA_cross_memory_rma_eligible(MPIDI_NBRMA_epoch_win_t * ew,
                                           const MPIDI_NBRMA_rma_op_t * op);
/* Rule R2 on mapped memory: whether the origin's CPU atomics perform `op`
 * (an accumulate, fetch or swap) on its target's memory mapped here, and
 * performing it (false: it was not, nothing happened). */
bool MPIDI_NBRMA_mapped_atomics_eligible(MPIDI_NBRMA_epoch_win_t * ew,
                                         const MPIDI_NBRMA_rma_op_t * op);
int MPIDI_NBRMA_mapped_atomics(MPIDI_NBRMA_epoch_win_t * ew, const MPIDI_NBRMA_rma_op_t * op,
                               bool *performed);

/* --- direct_ops.c ---------------------------------------------------------
 * Operations toward targets the engine said are granted, counted by the
 * core's grant cache (nbrma_grant_cache.h says until when) instead of the
 * engine, whose count and completion cost more than the UCX put itself. */
/* Blocking: completes what went toward `rank` (an operation the cache had
 * no memory to count: nobody else would wait for it). */
int MPIDI_NBRMA_direct_complete_uncounted(MPIDI_NBRMA_epoch_win_t * ew, int rank);
/* Counts an operation just performed toward `rank`; `by_endpoint`: it left
 * UCX operations in flight on the target's endpoint, which an endpoint flush
 * completes (rule R9: MPIDI_NBRMA_needs_endpoint_flush). */
static inline int MPIDI_NBRMA_direct_count(MPIDI_NBRMA_epoch_win_t * ew, int rank, bool local_done,
                                           bool by_endpoint)
{
    if (likely(nbrma_grant_cache_count(ew->grants, rank, local_done, by_endpoint)))
        return MPI_SUCCESS;
    return MPIDI_NBRMA_direct_complete_uncounted(ew, rank);
}
/* The engine let an operation toward `rank` go at once: later ones skip it
 * until the next synchronization call, toward every rank where the open
 * epoch is a fence's (rule G1). */
void MPIDI_NBRMA_direct_granted(MPIDI_NBRMA_epoch_win_t * ew, int rank);
/* Hands the counted operations to the engine (one batch per target) and to
 * the completion sweep; `forget_grants`: the synchronization call that follows
 * may open or close epochs, so the next operations ask the engine again. */
int MPIDI_NBRMA_direct_hand_over(MPIDI_NBRMA_epoch_win_t * ew, bool forget_grants);
/* Completes the counted operations toward `rank` (or every rank), remotely;
 * with `local`, only where some are not locally complete. Blocking if `done`
 * is NULL; else *done says whether they were complete at once (if not, they
 * stay counted). */
int MPIDI_NBRMA_direct_complete(MPIDI_NBRMA_epoch_win_t * ew, int rank, bool local, bool *done);
/* MPIX_Win_iflush (or _iflush_local: `local`) toward `rank` where the
 * engine holds nothing older: *request completes once the counted operations
 * toward `rank` are complete (locally), through one wait of the ledger. */
int MPIDI_NBRMA_direct_iflush(MPIDI_NBRMA_epoch_win_t * ew, int rank, bool local,
                              MPIR_Request ** request);

/* --- completion_sweep.c: the bookkeeping is the core's (nbrma_issued_ops.h) --- */
static inline int MPIDI_NBRMA_sweep_reserve(MPIDI_NBRMA_epoch_win_t * ew)
{
    return MPIDI_NBRMA_engine_errno(ew, nbrma_issued_ops_reserve(ew->issued));
}
/* Keeps an issued operation (room reserved) until the sweep reports it;
 * local_done: its origin buffer may be reused already (reported to the
 * engine at the next MPIDI_NBRMA_sweep_report_local, outside engine calls);
 * by_endpoint: it left UCX operations on its target's endpoint;
 * complete_at_local: its local completion is all its epoch waits for. */
int MPIDI_NBRMA_sweep_track(MPIDI_NBRMA_epoch_win_t * ew, nbrma_op_ticket ticket,
                            MPIR_Request * user_req, bool local_done, bool by_endpoint,
                            bool complete_at_local);
/* Reports the local completions noted by sweep_track to the engine. */
int MPIDI_NBRMA_sweep_report_local(MPIDI_NBRMA_epoch_win_t * ew);
/* One round of the window's sweep: starts it, or reports what it covered
 * once that is complete. */
int MPIDI_NBRMA_sweep_poll(MPIDI_NBRMA_epoch_win_t * ew, int *made_progress);
/* Completes every issued operation now, as MPICH's blocking flush does. */
int MPIDI_NBRMA_sweep_complete_all(MPIDI_NBRMA_epoch_win_t * ew);

/* --- thread_scope.c: mpi_win_scope=thread (nbrma_thread_marks.h) --- */
/* The calling thread performed `op` now on `path` (MPICH's own code may use
 * an active message; NBRMA_PATH_MPICH_MESSAGE is one), or had it recorded in
 * the engine. */
void MPIDI_NBRMA_thread_scope_note_performed(MPIDI_NBRMA_epoch_win_t * ew,
                                             const MPIDI_NBRMA_rma_op_t * op, nbrma_path path);
void MPIDI_NBRMA_thread_scope_note_recorded(MPIDI_NBRMA_epoch_win_t * ew, int rank);
/* A flush of the calling thread's operations toward call->rank; *done is
 * false when it needs the process-scope flush (then nothing happened but the
 * engine's check of the call). Nonblocking: done only if complete at once. */
int MPIDI_NBRMA_thread_scope_flush(MPIDI_NBRMA_epoch_win_t * ew,
                                   const MPIDI_NBRMA_sync_call_t * call, bool blocking,
                                   bool *done);
/* A process-scope flush toward `rank` completed the calling thread's
 * operations too. */
void MPIDI_NBRMA_thread_scope_flushed(MPIDI_NBRMA_epoch_win_t * ew, int rank);

/* --- transport.c --- */
extern const nbrma_transport MPIDI_NBRMA_epochs_transport;

/* --- lock_words.c ---------------------------------------------------------
 * Locks in the lock words of the window's mailboxes (mailbox.h): the
 * transport's try_lock and unlock, and a poller that has the engine try busy
 * words again (nbrma_progress) while it waits for one. */
int MPIDI_NBRMA_try_lock(void *ctx, int peer, int lock_type, int *state);
int MPIDI_NBRMA_unlock(void *ctx, int peer, int lock_type);
void MPIDI_NBRMA_lock_retry_forget(MPIDI_NBRMA_epoch_win_t * ew);

/* --- whole_epoch.c --- */
int MPIDI_NBRMA_pack_lock_epoch(void *ctx, int peer, int lock_type, void *const *records,
                                size_t n, void **payload);
int MPIDI_NBRMA_apply_lock_epoch(void *ctx, int origin, void *payload);
int MPIDI_NBRMA_defer_lock(void *ctx, int peer, int lock_type, void *const *records, size_t n,
                           int *defer);
/* Checks a whole epoch received from a peer; MPI error if malformed. */
int MPIDI_NBRMA_check_lock_epoch(const void *buf, size_t bytes);
/* Shared with pulled_epoch.c: whether a recorded operation can be applied by
 * the target's CPU under a lock of `lock_type` (shared: others may update the
 * same memory meanwhile), and the element size of a type a peer names (0:
 * refused). */
bool MPIDI_NBRMA_whole_epoch_takes(const MPIDI_NBRMA_epoch_win_t * ew,
                                   const MPIDI_NBRMA_recorded_op_t * rec, int lock_type);
/* The descriptor a whole (and, with its address, a pulled) epoch carries of
 * an operation the epoch takes. */
nbrma_whole_epoch_op_t MPIDI_NBRMA_whole_epoch_describe(const MPIDI_NBRMA_rma_op_t * op);
/* At the target, an accumulate of a whole or pulled epoch (`count` elements
 * of predefined `datatype` in `data`) into `target`: with the CPU's atomics
 * where origins may apply the same operations so (epochs/window.c:
 * epochs_apply_acc), else as MPIDIG's handlers would; MPI_ERR_OP for an
 * invalid reduction. */
int MPIDI_NBRMA_accumulate_here(MPIDI_NBRMA_epoch_win_t * ew, const void *data, int count,
                                MPI_Datatype datatype, MPI_Op op, char *target);
size_t MPIDI_NBRMA_whole_epoch_type_size(int32_t datatype, void *arg);

/* --- pulled_epoch.c ---
 * Access epochs closed before a target's grant arrived, which that target
 * performs itself, reading the origin's memory (transport.pack_access_epoch,
 * apply_access_epoch). */
int MPIDI_NBRMA_pack_access_epoch(void *ctx, int peer, void *const *records, size_t n,
                                  void **payload);
int MPIDI_NBRMA_apply_access_epoch(void *ctx, int origin, void *payload);
/* Checks a pulled epoch received from a peer; MPI error if malformed. */
int MPIDI_NBRMA_check_access_epoch(const void *buf, size_t bytes);
/* transport.send_access_epoch: announced in the peer's mailbox, or sent as an
 * active message when the ring is full. */
int MPIDI_NBRMA_send_access_epoch(void *ctx, int peer, uint64_t access_id, void *payload);
/* A peer announced a pulled epoch at `addr` of its memory: a checked copy
 * (*payload, freed by the engine) and its access id. */
int MPIDI_NBRMA_read_access_epoch(MPIDI_NBRMA_epoch_win_t * ew, int from, uint64_t addr,
                                  void **payload, uint64_t * access_id);

/* --- sync_calls.c: MPIDI_NBRMA_epochs_sync, _start_sync (nbrma_win.h) --- */
/* Gives back the groups kept in `ew->group_ranks` (at the window's free). */
void MPIDI_NBRMA_group_ranks_release(MPIDI_NBRMA_epoch_win_t * ew);

#endif /* NBRMA_EPOCH_WIN_H_INCLUDED */
