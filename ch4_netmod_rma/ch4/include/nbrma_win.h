/*
 * mpich-nbrma: windows whose RMA calls the component takes over. MPIDIG_WIN(win,
 * nbrma) is NULL for ordinary windows, else a state that begins with
 * MPIDI_NBRMA_win_state_t, whose `ops` is its kind's table: engine windows
 * (ch4/epochs/), dynamic windows (ch4/dynamic/dynamic_win.c), memory-handle
 * windows (dynamic/memhandle_win.c) and duplicates (ch4/duplicate/). The hooks
 * (ch4/hooks/) turn each MPID_ call into a descriptor for the table; a kind
 * with nothing to add runs MPICH's code (common/nbrma_mpich_path.c).
 */

#ifndef NBRMA_WIN_H_INCLUDED
#define NBRMA_WIN_H_INCLUDED

#include "nbrma_core.h"
#include "nbrma_sync_calls.h"

/* The component's one "every target" value (a flush's rank, endpoint flushes). */
_Static_assert(NBRMA_ALL_RANKS < 0 && NBRMA_ALL_RANKS != MPI_PROC_NULL, "a sentinel of its own");

typedef enum {
    MPIDI_NBRMA_OP_PUT,
    MPIDI_NBRMA_OP_GET,
    MPIDI_NBRMA_OP_ACCUMULATE,
    MPIDI_NBRMA_OP_GET_ACCUMULATE,
    MPIDI_NBRMA_OP_FETCH_AND_OP,
    MPIDI_NBRMA_OP_COMPARE_AND_SWAP
} MPIDI_NBRMA_op_kind_t;

/* Per-handle settings: a duplicate (MPIX_Win_dup_with_info) has its own. */
typedef struct {
    bool assert_intrinsic;      /* mpi_assert_accumulate_intrinsic, where in force */
    bool order;                 /* mpi_win_order, where in force */
} MPIDI_NBRMA_handle_keys_t;

/* One RMA call with its MPID_ arguments; absent handles are 0, request NULL. */
typedef struct MPIDI_NBRMA_rma_op {
    MPIDI_NBRMA_op_kind_t kind;
    const void *origin_addr;
    int origin_count;
    MPI_Datatype origin_datatype;
    void *result_addr;
    int result_count;
    MPI_Datatype result_datatype;
    const void *compare_addr;
    int target_rank;
    MPI_Aint target_disp;
    int target_count;
    MPI_Datatype target_datatype;
    MPI_Op op;
    MPIR_Request **request;
    /* MPIX_Rrput & co.: *request completes at the target, not merely the origin */
    bool remote_completion;
    /* the keys of the duplicate the call came through; NULL: the window's */
    const MPIDI_NBRMA_handle_keys_t *dup_keys;
    /* MPIX_Put_notify & co. (notify/notify.h): the increment to send behind the
     * data; NULL otherwise and when recorded (the replay leaves it to the request) */
    struct MPIDI_NBRMA_notify_behind *notify_behind;
} MPIDI_NBRMA_rma_op_t;

/* A put's or get's buffer at the origin (a get's is in the result fields). */
typedef struct {
    const void *addr;
    int count;
    MPI_Datatype datatype;
} MPIDI_NBRMA_local_buffer_t;

static inline MPIDI_NBRMA_local_buffer_t MPIDI_NBRMA_local_buffer(const MPIDI_NBRMA_rma_op_t * op)
{
    bool put = op->kind == MPIDI_NBRMA_OP_PUT;
    MPIDI_NBRMA_local_buffer_t local = {
        .addr = put ? op->origin_addr : op->result_addr,
        .count = put ? op->origin_count : op->result_count,
        .datatype = put ? op->origin_datatype : op->result_datatype
    };

    return local;
}

/* Descriptor fields from the arguments of the same names (hooks/op_hooks.c,
 * hooks/rma_extension_hooks.c); MPI_Count counts are int, as in the MPI_ calls. */
#define NBRMA_TARGET_ARGS                                                       \
    .target_rank = target_rank, .target_disp = target_disp,                     \
    .target_count = target_count, .target_datatype = target_datatype
#define NBRMA_ORIGIN_ARGS                                                       \
    .origin_addr = origin_addr, .origin_count = origin_count,                   \
    .origin_datatype = origin_datatype
#define NBRMA_RESULT_ARGS                                                       \
    .result_addr = result_addr, .result_count = result_count,                   \
    .result_datatype = result_datatype
/* The fields a call lacks, named anyway: naming every field compiles to one
 * store each, while leaving fields out makes GCC clear the descriptor with rep
 * stos, from which no load forwards; reading such a field (dup_keys, request)
 * then waits for every earlier store, a transfer's to a peer's shared memory
 * among them, to leave the store buffer: on the hot path of MPI_Put + flush. */
#define NBRMA_NO_ORIGIN .origin_addr = NULL, .origin_count = 0, .origin_datatype = 0
#define NBRMA_NO_RESULT .result_addr = NULL, .result_count = 0, .result_datatype = 0
/* dup_keys and notify_behind are set later by the callers that have them */
#define NBRMA_OP_EXTRAS(compare_addr_, op_, request_, remote_completion_)       \
    .compare_addr = (compare_addr_), .op = (op_), .request = (request_),        \
    .remote_completion = (remote_completion_), .dup_keys = NULL, .notify_behind = NULL
#define NBRMA_GET_RESULT_ARGS                                                   \
    .result_addr = origin_addr, .result_count = origin_count,                   \
    .result_datatype = origin_datatype

/* MPIX_Win_op_intrinsic: up to `max_count` `datatype` with each (kind, op). */
typedef struct {
    size_t n;
    struct {
        MPIDI_NBRMA_op_kind_t kind;
        MPI_Op op;              /* 0 for compare-and-swap */
    } ops[16];
    MPI_Aint max_count;
    MPI_Datatype datatype;
} MPIDI_NBRMA_intrinsic_query_t;

/* One synchronization call, with the arguments of its MPID_Win_ function. */
typedef struct MPIDI_NBRMA_sync_call {
    nbrma_sync_kind kind;       /* the four flushes are NBRMA_SYNC_FLUSH, with rank and local */
    int rank;                   /* lock, unlock, flush (NBRMA_ALL_RANKS: every target) */
    bool local;                 /* flush: local completion only */
    int lock_type;              /* lock */
    int assert;                 /* fence, post, start, lock, lock_all */
    MPIR_Group *group;          /* post, start */
    int *flag;                  /* test */
} MPIDI_NBRMA_sync_call_t;

static inline bool MPIDI_NBRMA_sync_is_proc_null(const MPIDI_NBRMA_sync_call_t * call)
{
    return (call->kind == NBRMA_SYNC_LOCK || call->kind == NBRMA_SYNC_UNLOCK ||
            call->kind == NBRMA_SYNC_FLUSH) && call->rank == MPI_PROC_NULL;
}

/* An accumulate MPIDIG received, as its target applies it. */
typedef struct {
    const void *origin;         /* packed; NULL for MPI_NO_OP */
    MPI_Aint origin_count;
    MPI_Datatype origin_datatype;       /* basic */
    void *target_addr;
    MPI_Aint target_count;
    MPI_Datatype target_datatype;
    MPI_Op op;
    void *fetched;              /* get_accumulate: the old values, packed; else NULL */
} MPIDI_NBRMA_acc_apply_t;

/* What a kind of window does with each call. Only finish_own, attach, detach,
 * memory_ready, apply_acc, apply_cswap, op_intrinsic may be NULL (nothing to do, or "no"). */
typedef struct MPIDI_NBRMA_win_ops {
    int (*rma) (const MPIDI_NBRMA_rma_op_t * op, MPIR_Win * win);
    int (*sync) (const MPIDI_NBRMA_sync_call_t * call, MPIR_Win * win);
    /* MPIX_Win_i*: *request completes with the call */
    int (*start_sync) (const MPIDI_NBRMA_sync_call_t * call, MPIR_Win * win,
                       MPIR_Request ** request);
    int (*get_info) (MPIR_Win * win, MPIR_Info ** info_p_p);
    int (*set_info) (MPIR_Win * win, MPIR_Info * info);
    /* MPI_Win_free before the processes meet (hooks/win_hooks.c): completes
     * this process's own epochs; it serves peers through the meeting */
    int (*finish_own) (MPIR_Win * win);
    /* after the meeting: settles requests, frees the state; *handled: the window too */
    int (*free) (MPIR_Win ** win_ptr, int *handled);
    /* MPI_Win_attach/MPI_Win_detach, after MPICH's checks (dynamic windows) */
    int (*attach) (MPIR_Win * win, void *base, MPI_Aint size);
    int (*detach) (MPIR_Win * win, const void *base);
    /* collective, end of creation: memory allocated, every target's key known */
    int (*memory_ready) (MPIR_Win * win);
    /* at the target, what MPIDIG received: *applied if applied here */
    int (*apply_acc) (MPIR_Win * win, const MPIDI_NBRMA_acc_apply_t * acc, bool *applied);
    int (*apply_cswap) (MPIR_Win * win, void *target_addr, const void *origin,
                        void *compare_result, MPI_Datatype datatype, bool *applied);
    /* MPIX_Win_op_intrinsic: whether the window performs every operation of
     * the query toward every target without the target's CPU (NULL: never) */
    bool (*op_intrinsic) (MPIR_Win * win, const MPIDI_NBRMA_intrinsic_query_t * query);
    /* operations whose handle asks for mpi_win_order go in issue order toward
     * each target (duplicates ask their parent's kind) */
    bool orders;
    /* the state is an engine window's (epochs/epoch_win.h) */
    bool carries_engine;
    /* MPI_Win_free is local (memory-handle windows, duplicates) */
    bool local_free;
} MPIDI_NBRMA_win_ops_t;

struct MPIDI_NBRMA_dynamic_win;

typedef struct MPIDI_NBRMA_win_state {
    const MPIDI_NBRMA_win_ops_t *ops;
    /* a dynamic window's attached memory, memory handles and rkey cache
     * (dynamic/dynamic_win.h), with or without the engine; else NULL */
    struct MPIDI_NBRMA_dynamic_win *dynamic;
} MPIDI_NBRMA_win_state_t;

#define MPIDI_NBRMA_WIN_STATE(win) ((MPIDI_NBRMA_win_state_t *) MPIDIG_WIN(win, nbrma))

/* MPICH's code for every call (common/nbrma_mpich_path.c): windows without state. */
extern const MPIDI_NBRMA_win_ops_t MPIDI_NBRMA_mpich_win_ops;

static inline const MPIDI_NBRMA_win_ops_t *MPIDI_NBRMA_win_ops(MPIR_Win * win)
{
    MPIDI_NBRMA_win_state_t *state = MPIDI_NBRMA_WIN_STATE(win);
    return state ? state->ops : &MPIDI_NBRMA_mpich_win_ops;
}

extern const MPIDI_NBRMA_win_ops_t MPIDI_NBRMA_epochs_win_ops;
extern const MPIDI_NBRMA_win_ops_t MPIDI_NBRMA_dynamic_win_ops;
extern const MPIDI_NBRMA_win_ops_t MPIDI_NBRMA_dynamic_epochs_win_ops;
extern const MPIDI_NBRMA_win_ops_t MPIDI_NBRMA_memhandle_win_ops;
extern const MPIDI_NBRMA_win_ops_t MPIDI_NBRMA_dup_win_ops;

/* They leave MPIDIG_WIN(win, nbrma) NULL if the window keeps MPICH's code. */
int MPIDI_NBRMA_epochs_win_create(MPIR_Win * win, MPIR_Info * info);
int MPIDI_NBRMA_dynamic_win_create(MPIR_Win * win, MPIR_Info * info);
/* a dynamic window: its memory's state, and the engine unless switched off */
int MPIDI_NBRMA_dynamic_epochs_win_create(MPIR_Win * win, MPIR_Info * info);

/* The engine's entries, for kinds with a state of their own besides (dynamic/) */
int MPIDI_NBRMA_epochs_rma(const MPIDI_NBRMA_rma_op_t * op, MPIR_Win * win);
int MPIDI_NBRMA_epochs_sync(const MPIDI_NBRMA_sync_call_t * call, MPIR_Win * win);
int MPIDI_NBRMA_epochs_start_sync(const MPIDI_NBRMA_sync_call_t * call, MPIR_Win * win,
                                  MPIR_Request ** request);
int MPIDI_NBRMA_epochs_get_info(MPIR_Win * win, MPIR_Info ** info_p_p);
int MPIDI_NBRMA_epochs_set_info(MPIR_Win * win, MPIR_Info * info);
int MPIDI_NBRMA_epochs_win_finish_own(MPIR_Win * win);
int MPIDI_NBRMA_epochs_win_free(MPIR_Win ** win_ptr, int *handled);
/* RDMA another kind issues for an engine window (a memory-handle window on its
 * parent) may go now if the epoch toward `target` is granted until the next
 * synchronization call; it then counts as the window's, which its waits flush */
bool MPIDI_NBRMA_epochs_granted_now(MPIR_Win * win, int target);
int MPIDI_NBRMA_epochs_count_rdma(MPIR_Win * win, int target);
/* Such a kind takes over the engine window just made of `win`: its path for
 * what would take MPICH's code, whether that path uses its own RDMA, and where
 * whole and pulled epochs' operations land at the target (epoch_win.h) */
void MPIDI_NBRMA_epochs_win_adopt(MPIR_Win * win, const MPIDI_NBRMA_win_ops_t * ops,
                                  struct MPIDI_NBRMA_dynamic_win *dynamic,
                                  int (*mpich_path_rma) (const MPIDI_NBRMA_rma_op_t * op,
                                                         MPIR_Win * win),
                                  bool (*own_rdma_for) (const MPIDI_NBRMA_rma_op_t * op,
                                                        MPIR_Win * win),
                                  bool (*target_bytes) (MPIR_Win * win, int64_t target_disp,
                                                        size_t len, char **addr));

/* Duplicates (duplicate/dup_win.c) of `win` (not itself one) alive here; a
 * window freed while some live is freed with the last of them. */
int MPIDI_NBRMA_dup_count(MPIR_Win * win);
void MPIDI_NBRMA_dup_keep_parent(MPIR_Win * win);

/* The active-message handlers, registered at init (hooks/win_hooks.c). */
int MPIDI_NBRMA_epochs_register_handlers(void);
int MPIDI_NBRMA_rkey_cache_register_handlers(void);

#endif /* NBRMA_WIN_H_INCLUDED */
