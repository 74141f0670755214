/*
 * mpich-nbrma: the state of an engine window and what the files of epochs/
 * share. Internal to ch4/epochs/.
 *
 * Every synchronization call goes to the nonblocking-epoch engine (core/,
 * nbrma_core.h); a blocking call is the nonblocking one plus a wait, so both
 * mix freely (paper rule 1). RMA calls are recorded until their epoch is
 * active and granted, or go at once and are only counted when it already is.
 * MPIDIG's epoch state stays "lock_all" for the window's life so that its
 * per-operation checks let the engine's operations through; the engine checks.
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
    int *granted_flag;          /* set: no operation, a mark set to 1 once the epoch is granted */
    bool ordered;               /* issued through a handle with mpi_win_order=true */
} MPIDI_NBRMA_recorded_op_t;

/* A group's members as window ranks. The group is held: it cannot change, be
 * freed or be reused, so the same pointer means the same members. */
typedef struct {
    MPIR_Group *group;          /* NULL: none kept */
    int *ranks;
} MPIDI_NBRMA_group_ranks_t;

/* The engine's cookie for a blocking call, which waits on `done` (sync_calls.c). */
typedef struct {
    bool in_use;                /* handed to the engine and not yet seen done */
    bool done;
    int mpi_errno;
} MPIDI_NBRMA_blocking_call_t;

typedef struct MPIDI_NBRMA_epoch_win {
    MPIDI_NBRMA_win_state_t state;      /* ops: epochs_win_ops or dynamic_epochs_win_ops */
    MPIR_Win *win;
    /* MPICH's path (operations.c perform()): its code, or a dynamic window's rkey cache first */
    int (*mpich_path_rma) (const MPIDI_NBRMA_rma_op_t * op, MPIR_Win * win);
    /* NULL, or whether that path takes `op` by its own RDMA (a cached rkey), unknown to
     * MPICH: waits flush those endpoints even where MPICH sends active messages only */
    bool (*own_rdma_for) (const MPIDI_NBRMA_rma_op_t * op, MPIR_Win * win);
    /* at the target, for whole and pulled epochs: the address of `len` bytes at
     * `target_disp` of this window's memory; false: not all inside it */
    bool (*target_bytes) (MPIR_Win * win, int64_t target_disp, size_t len, char **addr);
    nbrma_engine *engine;
    unsigned reorder_flags;
    int call_depth;             /* engine calls in progress (ENGINE_CALL) */
    int transport_errno;        /* MPI error of the transport function that failed */
    bool whole_lock_epochs;     /* pack lock epochs closed before activation */
    bool wants_native_atomics;  /* CVAR and info key at creation */
    bool native_atomics;        /* in force (atomics/native_atomics.h), once the memory is known */
    bool narrow_atomics;        /* 1- and 2-byte ones too (atomics/narrow_atomics.h) */
    bool intrinsic_atomics;     /* native, by this CPU toward every peer (MPIX_Win_op_intrinsic) */
    bool wants_assert_intrinsic;        /* in force: MPIDI_NBRMA_assert_intrinsic */
    uint64_t whole_lock_epochs_sent;
    bool pulled_epochs;         /* offer access epochs for targets to pull */
    uint64_t pulled_epochs_sent;
    bool in_blocking_call;      /* a blocking MPI_Win_* call: no pulls (sync_calls.c) */
    bool wants_mailbox;         /* CVAR and info key at creation */
    MPIDI_NBRMA_mailbox_t *mailbox;     /* protocol messages as stores (messages.c) */
    bool wants_cross_memory_rma;        /* CVAR and info key at creation */
    size_t cross_memory_min_bytes;      /* smaller puts toward unmapped memory, on a window
                                         * that had a local flush, take UCX's path while the
                                         * target is in MPI (rule R1) */
    size_t cross_memory_call_max_ns;    /* above it, puts and gets of every size toward
                                         * unmapped memory too (R1; SIZE_MAX: never) */
    uint64_t cross_memory_call_ns;      /* the process's price of that call, measured at
                                         * this window's creation if a peer is reached so */
    bool cross_memory_call_slow;        /* the price is above the bound */
    size_t mapped_atomics_min_bytes;    /* larger accumulates take the CPU's atomics on
                                         * mapped memory before UCX's (rule R2) */
    size_t message_ops_max;     /* small puts and gets toward one target between two
                                 * completions that go as MPICH's messages (rule R8) */
    bool mapped_here;           /* peers may map this window memory: what MPIDIG brings
                                 * is applied with the CPU's atomics (rule R3) */
    /* per rank: memory mapped here, or the pid for cross-memory attach (peer_reach.h) */
    nbrma_peer_reach_t reach;
    /* per rank, looked at once (op_route.c): UCX emulates puts and atomics over a
     * network (rules R2, R8), its puts are this CPU's copies (R9); NULL until asked */
    unsigned char *lanes_of;
    bool had_local_flush;       /* MPI_Win_flush_local(_all) was called (rule R1) */

    /* issued operations until the sweep reports them; the sweep's ledger wait */
    nbrma_issued_ops *issued;
    MPIDI_NBRMA_ledger_release_t sweep;

    /* operations since the last synchronization call toward granted targets (direct_ops.c) */
    nbrma_grant_cache *grants;

    /* mpi_win_order=true (ordered_ops.c) */
    bool win_order;             /* the window handle's key (duplicates carry their own) */
    nbrma_order_tracker *order; /* from the first ordered operation on */
    MPIDI_NBRMA_ledger_release_t order_wait;
    nbrma_held_queue *held;     /* replayed records waiting (held_records.c) */
    MPIDI_NBRMA_ledger_task_t held_task;        /* tries them at the ledger's polls */

    /* mpi_win_scope=thread (thread_scope.c): fixed at creation */
    bool thread_scope;
    nbrma_thread_marks *thread_marks;

    /* messages that arrived during an engine call, my pulled epochs until applied */
    nbrma_inbox *inbox;

    MPIDI_NBRMA_ledger_task_t sweep_task;       /* the sweep at the ledger's polls */
    struct MPIDI_NBRMA_epoch_win *next_lock_retry;      /* lock_words.c's retry list */
    bool lock_retry_listed;

    /* the last MPI_Win_post ([1]) and MPI_Win_start ([0]) group (sync_calls.c) */
    MPIDI_NBRMA_group_ranks_t group_ranks[2];

    /* one at a time; a second thread's blocking call takes a request */
    MPIDI_NBRMA_blocking_call_t blocking;
} MPIDI_NBRMA_epoch_win_t;

/* The engine's cookies: our requests, or a blocking call with the low bit set. */
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
 * The engine must not be entered from its own transport functions, yet issuing
 * an operation may run MPICH's progress and our handlers: messages that arrive
 * during an engine call are delivered after the outermost one (nbrma_inbox.h). */
#define ENGINE_CALL(ew, rc, call)                                               \
    do {                                                                        \
        (ew)->call_depth++;                                                     \
        (rc) = (call);                                                          \
        (ew)->call_depth--;                                                     \
        if ((rc) == NBRMA_OK && !(ew)->call_depth)                              \
            (rc) = nbrma_inbox_drain((ew)->inbox, (ew)->engine, &(ew)->call_depth); \
    } while (0)

/* Delivered now, or kept during an engine call; the engine owns `payload`. */
int MPIDI_NBRMA_epochs_receive(MPIDI_NBRMA_epoch_win_t * ew, const nbrma_ctrl_msg_t * msg,
                               void *payload);
/* A transport error is the MPI error transport_rc kept. Success is tested
 * inline: a compare, not a call, on the hot path of operations and flushes. */
int MPIDI_NBRMA_engine_error(MPIDI_NBRMA_epoch_win_t * ew, int rc);
static inline int MPIDI_NBRMA_engine_errno(MPIDI_NBRMA_epoch_win_t * ew, int rc)
{
    return rc == NBRMA_OK ? MPI_SUCCESS : MPIDI_NBRMA_engine_error(ew, rc);
}
int MPIDI_NBRMA_transport_rc(MPIDI_NBRMA_epoch_win_t * ew, int mpi_errno);

/* --- message_send.c --- */
/* Fills in `msg` and sends `bytes` from it (more than the message: a whole or
 * pulled epoch); a bare message goes into the peer's mailbox where it can. */
int MPIDI_NBRMA_send_ctrl(MPIDI_NBRMA_epoch_win_t * ew, int peer, nbrma_ctrl_msg_t * msg,
                          size_t bytes, nbrma_ctrl_kind_t kind, uint64_t value, int lock_type);
/* The active-message handler (registered by messages.c). */
void MPIDI_NBRMA_send_ctrl_via(int handler_id);

/* --- messages.c --- */
/* The mailbox's deliver function (mailbox.h). */
int MPIDI_NBRMA_epochs_deliver_mail(void *ctx, int from, const nbrma_ring_msg_t * mail);

/* --- operations.c --- */
void MPIDI_NBRMA_recorded_op_free(MPIDI_NBRMA_recorded_op_t * rec);
/* Performs a record the engine issues (through held_records.c). */
int MPIDI_NBRMA_issue_recorded(MPIDI_NBRMA_epoch_win_t * ew, MPIDI_NBRMA_recorded_op_t * rec,
                               nbrma_op_ticket ticket);
/* A record that could not be performed: its request reports the error. */
int MPIDI_NBRMA_drop_recorded(MPIDI_NBRMA_recorded_op_t * rec, int mpi_errno);

/* mpi_assert_accumulate_intrinsic in force (only where this window's routed
 * accumulates are intrinsic): any other accumulate is MPI_ERR_OP. */
static inline bool MPIDI_NBRMA_assert_intrinsic(const MPIDI_NBRMA_epoch_win_t * ew)
{
    return ew->wants_assert_intrinsic && (ew->intrinsic_atomics || ew->reach.all_peers_mapped);
}

/* --- op_route.c --- */
/* By the core's rules (nbrma_route.h); `may_wait`: not a replay inside a UCX
 * callback; `cross_memory`: false once that path declined the operation. */
nbrma_route MPIDI_NBRMA_route(MPIDI_NBRMA_epoch_win_t * ew, const MPIDI_NBRMA_rma_op_t * op,
                              bool may_wait, bool cross_memory);
/* Rule R9: whether `route` left an endpoint flush to do (`locally_complete`:
 * when its call returned). */
bool MPIDI_NBRMA_needs_endpoint_flush(MPIDI_NBRMA_epoch_win_t * ew, nbrma_route route, int target,
                                      bool locally_complete);
/* R9's fact: every put/get lane toward `target` is this CPU's copy into mapped memory. */
bool MPIDI_NBRMA_lanes_copy_by_cpu(MPIDI_NBRMA_epoch_win_t * ew, int target);
/* nbrma_route_may_need_target_cpu for `target`; inline, so that the origin's
 * copies, most puts on shared memory, pay a compare. */
static inline bool MPIDI_NBRMA_needs_target_cpu(MPIDI_NBRMA_epoch_win_t * ew, nbrma_route route,
                                                int target)
{
    /* the lanes only where their answer matters */
    bool copied_by_cpu = route.path == NBRMA_PATH_MPICH && route.leaves == NBRMA_WAY_UCX &&
        MPIDI_NBRMA_lanes_copy_by_cpu(ew, target);

    return nbrma_route_may_need_target_cpu(route, copied_by_cpu);
}
/* UCX atomics that this CPU performs toward every peer, or the CPU's atomics
 * on every peer's memory mapped here (rule R3). */
bool MPIDI_NBRMA_op_intrinsic(const MPIDI_NBRMA_epoch_win_t * ew, MPIDI_NBRMA_op_kind_t kind,
                              MPI_Datatype datatype, MPI_Op op);

/* --- held_records.c --- */
/* transport.issue_op: performs a replayed record, or holds an ordered one that
 * must wait for earlier operations toward its target. */
int MPIDI_NBRMA_issue_or_hold(MPIDI_NBRMA_epoch_win_t * ew, MPIDI_NBRMA_recorded_op_t * rec,
                              nbrma_op_ticket ticket);
static inline size_t MPIDI_NBRMA_held_count(const MPIDI_NBRMA_epoch_win_t * ew)
{
    return ew->held ? nbrma_held_queue_size(ew->held) : 0;
}
/* An ordered operation toward `rank` waits behind its held records. */
static inline bool MPIDI_NBRMA_held_toward(const MPIDI_NBRMA_epoch_win_t * ew, int rank)
{
    return ew->held && nbrma_held_queue_toward(ew->held, rank);
}
void MPIDI_NBRMA_held_free(MPIDI_NBRMA_epoch_win_t * ew);

/* --- ordered_ops.c --- */
static inline bool MPIDI_NBRMA_ordered(const MPIDI_NBRMA_epoch_win_t * ew,
                                       const MPIDI_NBRMA_rma_op_t * op)
{
    return op->dup_keys ? op->dup_keys->order : ew->win_order;
}
/* Before an ordered operation the application issues: waits until what went
 * toward its target before it (held records first) is ordered before it. */
int MPIDI_NBRMA_ordered_wait(MPIDI_NBRMA_epoch_win_t * ew, const MPIDI_NBRMA_rma_op_t * op,
                             nbrma_way travels);
/* The same without waiting (a replay): not *ready means held (held_records.c);
 * behind_held: not ready while records toward its target are held. */
int MPIDI_NBRMA_ordered_test(MPIDI_NBRMA_epoch_win_t * ew, const MPIDI_NBRMA_rma_op_t * op,
                             bool behind_held, bool *ready);
/* After any operation on a window that ordered one: the way it went. */
void MPIDI_NBRMA_ordered_note(MPIDI_NBRMA_epoch_win_t * ew, int rank, nbrma_way way);

/* --- cross_memory_rma.c --- */
/* At creation, once the mailboxes and UCX keys are known: which peers' memory
 * is copied by cross-memory attach and which is mapped here (rule R3). */
int MPIDI_NBRMA_cross_memory_rma_decide(MPIDI_NBRMA_epoch_win_t * ew);
/* True: copied, complete at both ends. False: not eligible, refused by the
 * kernel, or the sides' sizes differ (MPICH's path reports that). */
bool MPIDI_NBRMA_cross_memory_rma(MPIDI_NBRMA_epoch_win_t * ew, const MPIDI_NBRMA_rma_op_t * op);
bool MPIDI_NBRMA_cross_memory_rma_eligible(MPIDI_NBRMA_epoch_win_t * ew,
                                           const MPIDI_NBRMA_rma_op_t * op);
/* Rule R3: whether the origin's CPU atomics perform `op` on its target's
 * memory mapped here, and performing it (*performed false: nothing happened). */
bool MPIDI_NBRMA_mapped_atomics_eligible(MPIDI_NBRMA_epoch_win_t * ew,
                                         const MPIDI_NBRMA_rma_op_t * op);
int MPIDI_NBRMA_mapped_atomics(MPIDI_NBRMA_epoch_win_t * ew, const MPIDI_NBRMA_rma_op_t * op,
                               bool *performed);

/* --- direct_ops.c ---------------------------------------------------------
 * Operations toward targets the engine said are granted, counted by the core's
 * grant cache (nbrma_grant_cache.h says until when) instead of the engine,
 * whose count and completion cost more than the UCX put itself. */
/* Blocking, where the cache had no memory to count an operation. */
int MPIDI_NBRMA_direct_complete_uncounted(MPIDI_NBRMA_epoch_win_t * ew, int rank);
/* `by_endpoint`: it left UCX operations on the target's endpoint (rule R9). */
static inline int MPIDI_NBRMA_direct_count(MPIDI_NBRMA_epoch_win_t * ew, int rank, bool local_done,
                                           bool by_endpoint)
{
    if (likely(nbrma_grant_cache_count(ew->grants, rank, local_done, by_endpoint)))
        return MPI_SUCCESS;
    return MPIDI_NBRMA_direct_complete_uncounted(ew, rank);
}
/* The engine let one toward `rank` go at once: later ones (toward every rank
 * in a fence epoch: rule G1) skip it until the next synchronization call. */
void MPIDI_NBRMA_direct_granted(MPIDI_NBRMA_epoch_win_t * ew, int rank);
/* Hands the counted operations to the engine (a batch per target) and the
 * sweep; `forget_grants`: the call that follows may open or close epochs. */
int MPIDI_NBRMA_direct_hand_over(MPIDI_NBRMA_epoch_win_t * ew, bool forget_grants);
/* The counted ones toward `rank`; `local`: only where some are not locally
 * complete. Blocking if `done` is NULL, else *done: complete at once (if not,
 * they stay counted). */
int MPIDI_NBRMA_direct_complete(MPIDI_NBRMA_epoch_win_t * ew, int rank, bool local, bool *done);
/* MPIX_Win_iflush(_local) toward `rank` where the engine holds nothing older:
 * one ledger wait completes *request. */
int MPIDI_NBRMA_direct_iflush(MPIDI_NBRMA_epoch_win_t * ew, int rank, bool local,
                              MPIR_Request ** request);

/* --- completion_sweep.c: the bookkeeping is the core's (nbrma_issued_ops.h) --- */
static inline int MPIDI_NBRMA_sweep_reserve(MPIDI_NBRMA_epoch_win_t * ew)
{
    return MPIDI_NBRMA_engine_errno(ew, nbrma_issued_ops_reserve(ew->issued));
}
/* Keeps it until the sweep reports it; local_done: its buffer is free
 * (reported at the next sweep_report_local, outside engine calls);
 * by_endpoint: it left UCX operations on the endpoint; complete_at_local: R5. */
int MPIDI_NBRMA_sweep_track(MPIDI_NBRMA_epoch_win_t * ew, nbrma_op_ticket ticket,
                            MPIR_Request * user_req, bool local_done, bool by_endpoint,
                            bool complete_at_local);
int MPIDI_NBRMA_sweep_report_local(MPIDI_NBRMA_epoch_win_t * ew);
/* Starts the sweep, or reports what it covered once that is complete. */
int MPIDI_NBRMA_sweep_poll(MPIDI_NBRMA_epoch_win_t * ew, int *made_progress);
/* Blocking: every issued operation reported. */
int MPIDI_NBRMA_sweep_complete_all(MPIDI_NBRMA_epoch_win_t * ew);

/* --- thread_scope.c: mpi_win_scope=thread (nbrma_thread_marks.h) --- */
/* The calling thread performed `op` on `path`, or had it recorded. */
void MPIDI_NBRMA_thread_scope_note_performed(MPIDI_NBRMA_epoch_win_t * ew,
                                             const MPIDI_NBRMA_rma_op_t * op, nbrma_path path);
void MPIDI_NBRMA_thread_scope_note_recorded(MPIDI_NBRMA_epoch_win_t * ew, int rank);
/* Flushes the calling thread's operations toward call->rank; *done false: the
 * process-scope flush is needed. Nonblocking: done only if complete at once. */
int MPIDI_NBRMA_thread_scope_flush(MPIDI_NBRMA_epoch_win_t * ew,
                                   const MPIDI_NBRMA_sync_call_t * call, bool blocking,
                                   bool *done);
/* A process-scope flush toward `rank` completed the thread's operations too. */
void MPIDI_NBRMA_thread_scope_flushed(MPIDI_NBRMA_epoch_win_t * ew, int rank);

/* --- transport.c --- */
extern const nbrma_transport MPIDI_NBRMA_epochs_transport;

/* --- lock_words.c: locks in the mailboxes' lock words (mailbox.h) --- */
int MPIDI_NBRMA_try_lock(void *ctx, int peer, int lock_type, int *state);
int MPIDI_NBRMA_unlock(void *ctx, int peer, int lock_type);
void MPIDI_NBRMA_lock_retry_forget(MPIDI_NBRMA_epoch_win_t * ew);

/* --- whole_epoch.c --- */
int MPIDI_NBRMA_pack_lock_epoch(void *ctx, int peer, int lock_type, void *const *records,
                                size_t n, void **payload);
int MPIDI_NBRMA_apply_lock_epoch(void *ctx, int origin, void *payload);
int MPIDI_NBRMA_defer_lock(void *ctx, int peer, int lock_type, void *const *records, size_t n,
                           int *defer);
/* MPI error if a peer's whole epoch is malformed. */
int MPIDI_NBRMA_check_lock_epoch(const void *buf, size_t bytes);
/* Shared with pulled_epoch.c: whether the target's CPU can apply a record
 * under a lock of `lock_type` (shared: others may update the same memory). */
bool MPIDI_NBRMA_whole_epoch_takes(const MPIDI_NBRMA_epoch_win_t * ew,
                                   const MPIDI_NBRMA_recorded_op_t * rec, int lock_type);
nbrma_whole_epoch_op_t MPIDI_NBRMA_whole_epoch_describe(const MPIDI_NBRMA_rma_op_t * op);
/* At the target: the CPU's atomics where origins may use them too (window.c
 * epochs_apply_acc), else as MPIDIG's handlers; MPI_ERR_OP if invalid. */
int MPIDI_NBRMA_accumulate_here(MPIDI_NBRMA_epoch_win_t * ew, const void *data, int count,
                                MPI_Datatype datatype, MPI_Op op, char *target);
/* The element size of a type a peer names; 0: refused. */
size_t MPIDI_NBRMA_whole_epoch_type_size(int32_t datatype, void *arg);

/* --- pulled_epoch.c: access epochs the target performs, reading the origin's memory --- */
int MPIDI_NBRMA_pack_access_epoch(void *ctx, int peer, void *const *records, size_t n,
                                  void **payload);
int MPIDI_NBRMA_apply_access_epoch(void *ctx, int origin, void *payload);
/* MPI error if a peer's pulled epoch is malformed. */
int MPIDI_NBRMA_check_access_epoch(const void *buf, size_t bytes);
int MPIDI_NBRMA_send_access_epoch(void *ctx, int peer, uint64_t access_id, void *payload);
/* A peer announced a pulled epoch at `addr` of its memory: a checked copy
 * (*payload, freed by the engine) and its access id. */
int MPIDI_NBRMA_read_access_epoch(MPIDI_NBRMA_epoch_win_t * ew, int from, uint64_t addr,
                                  void **payload, uint64_t * access_id);

/* --- sync_calls.c: MPIDI_NBRMA_epochs_sync, _start_sync (nbrma_win.h) --- */
void MPIDI_NBRMA_group_ranks_release(MPIDI_NBRMA_epoch_win_t * ew);

#endif /* NBRMA_EPOCH_WIN_H_INCLUDED */
