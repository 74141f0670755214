/*
 * mpich-nbrma: windows whose RMA calls the component takes over.
 *
 * MPIDIG_WIN(win, nbrma) is NULL for ordinary windows. When it is set, the
 * hooks in ch4_rma.h and ch4_win.h hand every RMA operation and
 * synchronization call of the window to MPIDI_NBRMA_rma()/MPIDI_NBRMA_sync(),
 * which dispatch on the state's kind. The state always starts with
 * MPIDI_NBRMA_win_state_t.
 *
 * Operations and synchronization calls travel as descriptors, so that one
 * dispatcher serves all ten operations and fifteen calls, and so that a later
 * engine can record and replay them.
 */

#ifndef NBRMA_WIN_HOOKS_H_INCLUDED
#define NBRMA_WIN_HOOKS_H_INCLUDED

typedef enum {
    MPIDI_NBRMA_WIN_MEMHANDLE = 1,      /* made by MPIX_Win_from_memhandle */
    MPIDI_NBRMA_WIN_MEMHANDLE_PARENT,   /* dynamic window with memory handles or
                                         * memory-handle windows made from it */
    MPIDI_NBRMA_WIN_EPOCHS      /* epochs driven by the nonblocking-epoch engine */
} MPIDI_NBRMA_win_kind_t;

typedef struct MPIDI_NBRMA_win_state {
    MPIDI_NBRMA_win_kind_t kind;
} MPIDI_NBRMA_win_state_t;

#define MPIDI_NBRMA_WIN_STATE(win) ((MPIDI_NBRMA_win_state_t *) MPIDIG_WIN(win, nbrma))

typedef enum {
    MPIDI_NBRMA_OP_PUT,
    MPIDI_NBRMA_OP_GET,
    MPIDI_NBRMA_OP_ACCUMULATE,
    MPIDI_NBRMA_OP_GET_ACCUMULATE,
    MPIDI_NBRMA_OP_FETCH_AND_OP,
    MPIDI_NBRMA_OP_COMPARE_AND_SWAP
} MPIDI_NBRMA_op_kind_t;

/* One RMA communication call, with the arguments of its MPID_ function.
 * request is NULL for the calls without a request (MPI_Put, ...). */
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
} MPIDI_NBRMA_rma_op_t;

typedef enum {
    MPIDI_NBRMA_SYNC_FENCE,
    MPIDI_NBRMA_SYNC_POST,
    MPIDI_NBRMA_SYNC_START,
    MPIDI_NBRMA_SYNC_COMPLETE,
    MPIDI_NBRMA_SYNC_WAIT,
    MPIDI_NBRMA_SYNC_TEST,
    MPIDI_NBRMA_SYNC_LOCK,
    MPIDI_NBRMA_SYNC_UNLOCK,
    MPIDI_NBRMA_SYNC_LOCK_ALL,
    MPIDI_NBRMA_SYNC_UNLOCK_ALL,
    MPIDI_NBRMA_SYNC_FLUSH,
    MPIDI_NBRMA_SYNC_FLUSH_ALL,
    MPIDI_NBRMA_SYNC_FLUSH_LOCAL,
    MPIDI_NBRMA_SYNC_FLUSH_LOCAL_ALL,
    MPIDI_NBRMA_SYNC_SYNC
} MPIDI_NBRMA_sync_kind_t;

/* One synchronization call, with the arguments of its MPID_Win_ function. */
typedef struct MPIDI_NBRMA_sync_call {
    MPIDI_NBRMA_sync_kind_t kind;
    int rank;                   /* lock, unlock, flush, flush_local */
    int lock_type;              /* lock */
    int assert;                 /* fence, post, start, lock, lock_all */
    MPIR_Group *group;          /* post, start */
    int *flag;                  /* test */
} MPIDI_NBRMA_sync_call_t;

int MPIDI_NBRMA_rma(const MPIDI_NBRMA_rma_op_t * op, MPIR_Win * win);
int MPIDI_NBRMA_sync(const MPIDI_NBRMA_sync_call_t * call, MPIR_Win * win);

/* What MPICH does for the call without the component (ch4_rma.h, ch4_win.h). */
int MPIDI_NBRMA_rma_default(const MPIDI_NBRMA_rma_op_t * op, MPIR_Win * win);
int MPIDI_NBRMA_sync_default(const MPIDI_NBRMA_sync_call_t * call, MPIR_Win * win);

#endif /* NBRMA_WIN_HOOKS_H_INCLUDED */
