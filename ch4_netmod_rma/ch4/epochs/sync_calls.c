/*
 * mpich-nbrma: the synchronization calls of engine windows. MPIX_Win_i* hands
 * the call and a new request to the engine; MPI_Win_* is the same plus a
 * wait, with the window's blocking call (epoch_win.h) in place of the request.
 * Two shortcuts change no outcome: flushes complete the issued operations
 * themselves and skip the engine when it holds nothing older, and a call the
 * engine completes later flushes the issued operations' endpoints at once.
 */

#include "mpidimpl.h"
#include "epoch_win.h"
#include "nbrma_progress.h"
#include "nbrma_mpich_path.h"
#include "nbrma_request.h"
#include "nbrma_sync_calls.h"

_Static_assert(NBRMA_MODE_NOCHECK == MPI_MODE_NOCHECK, "MPI value");
_Static_assert(NBRMA_MODE_NOSTORE == MPI_MODE_NOSTORE, "MPI value");
_Static_assert(NBRMA_MODE_NOPUT == MPI_MODE_NOPUT, "MPI value");
_Static_assert(NBRMA_MODE_NOPRECEDE == MPI_MODE_NOPRECEDE, "MPI value");
_Static_assert(NBRMA_MODE_NOSUCCEED == MPI_MODE_NOSUCCEED, "MPI value");
_Static_assert(NBRMA_LOCK_EXCLUSIVE == MPI_LOCK_EXCLUSIVE, "MPI value");
_Static_assert(NBRMA_LOCK_SHARED == MPI_LOCK_SHARED, "MPI value");

static void kept_group_forget(MPIDI_NBRMA_group_ranks_t * kept)
{
    if (kept->group) {
        MPIR_Group_free_impl(kept->group);
        MPL_free(kept->ranks);
        kept->group = NULL;
    }
}

/* MPI_ERR_GROUP if not a subset of the window's group. Kept per call kind
 * (post, start): PSCW rounds pass the same group every time, and translating
 * it costs three MPIR_Group calls and, for large groups, two allocations. */
static int group_ranks(MPIDI_NBRMA_epoch_win_t * ew, nbrma_sync_kind kind,
                       MPIR_Group * group, const int **ranks_out)
{
    int mpi_errno = MPI_SUCCESS;
    MPIDI_NBRMA_group_ranks_t *kept = &ew->group_ranks[nbrma_sync_group_slot(kind)];
    size_t bytes = MPL_MAX(group->size, 1) * sizeof(int);
    int *ranks = NULL, *members = NULL;
    MPIR_Group *win_group;

    if (kept->group == group) {
        *ranks_out = kept->ranks;
        return MPI_SUCCESS;
    }
    ranks = MPL_malloc(bytes, MPL_MEM_RMA);
    members = MPL_malloc(bytes, MPL_MEM_RMA);
    MPIR_ERR_CHKANDJUMP(ranks == NULL || members == NULL, mpi_errno, MPI_ERR_NO_MEM, "**nomem");
    for (int i = 0; i < group->size; i++)
        members[i] = i;
    mpi_errno = MPIR_Comm_group_impl(ew->win->comm_ptr, &win_group);
    MPIR_ERR_CHECK(mpi_errno);
    mpi_errno = MPIR_Group_translate_ranks_impl(group, group->size, members, win_group, ranks);
    MPIR_Group_free_impl(win_group);
    MPIR_ERR_CHECK(mpi_errno);
    for (int i = 0; i < group->size; i++)
        MPIR_ERR_CHKANDJUMP(ranks[i] == MPI_UNDEFINED, mpi_errno, MPI_ERR_GROUP,
                            "**nbrmagroup");
    kept_group_forget(kept);
    MPIR_Group_add_ref(group);
    kept->group = group;
    kept->ranks = ranks;
    ranks = NULL;
    *ranks_out = kept->ranks;

  fn_exit:
    MPL_free(members);
    MPL_free(ranks);
    return mpi_errno;
  fn_fail:
    goto fn_exit;
}

void MPIDI_NBRMA_group_ranks_release(MPIDI_NBRMA_epoch_win_t * ew)
{
    for (int i = 0; i < 2; i++)
        kept_group_forget(&ew->group_ranks[i]);
}

/* `req`: the cookie (NULL for test). */
static int call_engine(MPIDI_NBRMA_epoch_win_t * ew, const MPIDI_NBRMA_sync_call_t * call,
                       MPIR_Request * req)
{
    nbrma_sync_args args = { call->kind, call->rank, call->local, call->lock_type, call->assert,
        NULL, 0, call->flag
    };
    unsigned traits = nbrma_sync_traits(call->kind);
    int rc, mpi_errno = MPI_SUCCESS;

    EPOCH_TRACE(ew, "sync kind %d rank %d request %p", call->kind, call->rank, (void *) req);
    if (traits & NBRMA_SYNC_GROUP) {
        mpi_errno = group_ranks(ew, call->kind, call->group, &args.ranks);
        if (mpi_errno != MPI_SUCCESS)
            return mpi_errno;
        args.nranks = call->group->size;
    }
    ENGINE_CALL(ew, rc, nbrma_sync_engine(ew->engine, &args, req));
    return MPIDI_NBRMA_engine_errno(ew, rc);
}

/* Hands over the direct operations first: flushes and epoch ends wait for
 * them. Only a flush keeps the grants. On error the engine kept no cookie. */
static int start_call(MPIDI_NBRMA_epoch_win_t * ew, const MPIDI_NBRMA_sync_call_t * call,
                      void *cookie)
{
    int mpi_errno = MPIDI_NBRMA_direct_hand_over(ew, !(nbrma_sync_traits(call->kind) &
                                                       NBRMA_SYNC_KEEPS_GRANTS));

    /* grants and dones peers stored since the last progress call: a closing
     * call may then issue and complete its epoch's operations now */
    if (mpi_errno == MPI_SUCCESS)
        mpi_errno = MPIDI_NBRMA_mailbox_poll(ew->mailbox, NULL, false);
    if (mpi_errno == MPI_SUCCESS)
        mpi_errno = call_engine(ew, call, cookie);
    return mpi_errno;
}

/* Where a flush completes the issued operations at once (shared memory), a
 * pending closing call's notices leave now, not at the next MPI call. */
static int push_issued(MPIDI_NBRMA_epoch_win_t * ew, bool complete)
{
    if (complete || nbrma_issued_ops_count(ew->issued) == 0)
        return MPI_SUCCESS;
    return MPIDI_NBRMA_sweep_poll(ew, NULL);
}

/* Every nonblocking call but test, and a blocking one whose blocking call is taken. */
static int start_with_request(MPIDI_NBRMA_epoch_win_t * ew, const MPIDI_NBRMA_sync_call_t * call,
                              MPIR_Request ** request)
{
    MPIR_Request *req;
    /* a request in flight: grants and dones move it, with the agent too */
    int mpi_errno = MPIDI_NBRMA_mailboxes_own_work_begins();

    if (mpi_errno == MPI_SUCCESS)
        mpi_errno = MPIDI_NBRMA_request_create(&req);
    if (mpi_errno != MPI_SUCCESS)
        return mpi_errno;
    mpi_errno = start_call(ew, call, req);
    if (mpi_errno != MPI_SUCCESS) {
        MPIDI_NBRMA_request_discard(req);
        return mpi_errno;
    }
    mpi_errno = push_issued(ew, MPIR_Request_is_complete(req));
    if (mpi_errno != MPI_SUCCESS) {
        MPIR_Request_free(req); /* mine; the engine keeps its own */
        return mpi_errno;
    }
    *request = req;
    return MPI_SUCCESS;
}

/* Cheaper than a request's life cycle; waits as MPIR_Wait_impl does. An error
 * while the engine holds the cookie leaves the blocking call in use for good:
 * the engine reports it later, and the next blocking calls take requests. */
static int run_blocking(MPIDI_NBRMA_epoch_win_t * ew, const MPIDI_NBRMA_sync_call_t * call)
{
    MPIDI_NBRMA_blocking_call_t *b = &ew->blocking;
    int mpi_errno;

    *b = (MPIDI_NBRMA_blocking_call_t) {.in_use = true };
    mpi_errno = start_call(ew, call, MPIDI_NBRMA_blocking_cookie(b));
    if (mpi_errno != MPI_SUCCESS) {
        b->in_use = false;
        return mpi_errno;
    }
    mpi_errno = push_issued(ew, b->done);
    if (mpi_errno == MPI_SUCCESS && b->done)
        mpi_errno = MPIDI_NBRMA_progress_now_and_then();
    if (mpi_errno == MPI_SUCCESS && !b->done) {
        MPIDI_NBRMA_progress_wait_begins();
        while (mpi_errno == MPI_SUCCESS && !b->done) {
            /* most blocking calls complete by a peer's store into this
             * window's mailbox: a round that finds one skips MPICH's whole
             * progress (UCX's worker, every poller) */
            int arrived = 0;
            mpi_errno = MPIDI_NBRMA_mailbox_poll(ew->mailbox, &arrived, true);
            if (mpi_errno == MPI_SUCCESS && !arrived)
                mpi_errno = MPIDI_NBRMA_progress_blocking_round();
        }
    }
    if (mpi_errno != MPI_SUCCESS)
        return mpi_errno;
    b->in_use = false;
    return b->mpi_errno;
}

MPL_STATIC_INLINE_PREFIX int flush_at_once(MPIDI_NBRMA_epoch_win_t * ew,
                                           const MPIDI_NBRMA_sync_call_t * call, bool may_block,
                                           bool *done);

int MPIDI_NBRMA_epochs_start_sync(const MPIDI_NBRMA_sync_call_t * call, MPIR_Win * win,
                                  MPIR_Request ** request)
{
    MPIDI_NBRMA_epoch_win_t *ew = MPIDI_NBRMA_epoch_win(win);

    if (call->kind == NBRMA_SYNC_FLUSH) {
        bool done;
        int mpi_errno;

        ew->had_local_flush |= call->local;     /* rule R1 */
        mpi_errno = ew->thread_scope ? MPIDI_NBRMA_thread_scope_flush(ew, call, false, &done)
            : MPI_SUCCESS;

        /* Toward one target where the engine holds nothing of its own, one
         * ledger wait for the direct operations (those not locally complete,
         * for a local flush) completes the request: much cheaper than a
         * hand-over, a sweep and the engine's request. */
        if (mpi_errno == MPI_SUCCESS && !ew->thread_scope &&
            call->rank != NBRMA_ALL_RANKS && nbrma_issued_ops_count(ew->issued) == 0) {
            int ready = 0;

            mpi_errno = MPIDI_NBRMA_engine_errno(ew, nbrma_flush_ready(ew->engine, call->rank,
                                                                       call->local, &ready));
            if (mpi_errno != MPI_SUCCESS || ready)
                return mpi_errno != MPI_SUCCESS ? mpi_errno :
                    MPIDI_NBRMA_direct_iflush(ew, call->rank, call->local, request);
        }

        /* as a blocking flush where that would not wait (process scope: no
         * thread's marks to clear) */
        if (mpi_errno == MPI_SUCCESS && !ew->thread_scope)
            mpi_errno = flush_at_once(ew, call, false, &done);
        if (mpi_errno != MPI_SUCCESS || done)
            return mpi_errno != MPI_SUCCESS ? mpi_errno :
                MPIDI_NBRMA_request_create_complete(request);
    }
    return start_with_request(ew, call, request);
}

/* MPI_Win_lock on my own rank returns holding the lock, so that the process
 * may access its window memory directly (MPI-3.1 11.5.3): a mark recorded in
 * the epoch tells when it is granted. */
static int wait_for_self_lock(MPIDI_NBRMA_epoch_win_t * ew, int self)
{
    int mpi_errno = MPI_SUCCESS;
    int granted = 0;
    MPIDI_NBRMA_recorded_op_t *mark = MPL_calloc(1, sizeof(*mark), MPL_MEM_RMA);
    int rc;

    MPIR_ERR_CHKANDJUMP(mark == NULL, mpi_errno, MPI_ERR_NO_MEM, "**nomem");
    mark->op.target_rank = self;
    mark->granted_flag = &granted;
    ENGINE_CALL(ew, rc, nbrma_op_record(ew->engine, self, mark));
    if (nbrma_op_record_refused(rc))
        MPL_free(mark);
    mpi_errno = MPIDI_NBRMA_engine_errno(ew, rc);
    MPIR_ERR_CHECK(mpi_errno);
    while (!granted) {  /* the holder may be waiting for another of our threads */
        mpi_errno = MPIDI_NBRMA_progress_blocking_round();
        MPIR_ERR_CHECK(mpi_errno);
    }
  fn_exit:
    return mpi_errno;
  fn_fail:
    goto fn_exit;
}

/* Mostly a flush waits only for direct operations. *done: the engine holds
 * nothing older. Without `may_block` (MPIX_Win_iflush) it only looks.
 * Completing operations is harmless even if the flush is wrong use: the
 * engine reports that later. Inlined: the hot path of blocking flushes. */
MPL_STATIC_INLINE_PREFIX int flush_at_once(MPIDI_NBRMA_epoch_win_t * ew,
                                           const MPIDI_NBRMA_sync_call_t * call, bool may_block,
                                           bool *done)
{
    int ready = 0;
    bool complete = true;
    int mpi_errno = MPIDI_NBRMA_direct_complete(ew, call->rank, call->local,
                                                may_block ? NULL : &complete);

    *done = false;
    if (mpi_errno != MPI_SUCCESS || !complete)
        return mpi_errno;
    /* a local flush may be done once the operations' buffers are free */
    if (call->local) {
        mpi_errno = MPIDI_NBRMA_sweep_report_local(ew);
        if (mpi_errno == MPI_SUCCESS)
            mpi_errno = MPIDI_NBRMA_engine_errno(ew, nbrma_flush_ready(ew->engine, call->rank,
                                                                       true, &ready));
        if (mpi_errno != MPI_SUCCESS || ready) {
            *done = ready;
            return mpi_errno;
        }
    }
    if (may_block)
        mpi_errno = MPIDI_NBRMA_sweep_complete_all(ew);
    else if (nbrma_issued_ops_count(ew->issued) > 0)
        return MPI_SUCCESS;     /* the engine's request waits for them */
    if (mpi_errno == MPI_SUCCESS)
        mpi_errno = MPIDI_NBRMA_engine_errno(ew, nbrma_flush_ready(ew->engine, call->rank,
                                                                   call->local, &ready));
    *done = ready;
    return mpi_errno;
}

int MPIDI_NBRMA_epochs_sync(const MPIDI_NBRMA_sync_call_t * call, MPIR_Win * win)
{
    int mpi_errno = MPI_SUCCESS;
    MPIDI_NBRMA_epoch_win_t *ew = MPIDI_NBRMA_epoch_win(win);
    MPIR_Request *req = NULL;

    MPIR_FUNC_ENTER;

    switch (call->kind) {
        case NBRMA_SYNC_SYNC:
            mpi_errno = MPIDI_NBRMA_mpich_sync(call, win);
            goto fn_exit;
        case NBRMA_SYNC_TEST:
            /* as MPIDIG's MPI_Win_test: let messages in first */
            mpi_errno = MPID_Progress_test(NULL);
            if (mpi_errno == MPI_SUCCESS)
                mpi_errno = call_engine(ew, call, NULL);
            goto fn_exit;
        case NBRMA_SYNC_FLUSH:{
                bool done = false;

                ew->had_local_flush |= call->local;     /* rule R1 */
                if (ew->thread_scope) {
                    mpi_errno = MPIDI_NBRMA_thread_scope_flush(ew, call, true, &done);
                    MPIR_ERR_CHECK(mpi_errno);
                    if (done)
                        goto fn_exit;
                }
                mpi_errno = flush_at_once(ew, call, true, &done);
                MPIR_ERR_CHECK(mpi_errno);
                if (done) {
                    mpi_errno = MPIDI_NBRMA_progress_now_and_then();
                    MPIR_ERR_CHECK(mpi_errno);
                    goto flushed;
                }
                break;
            }
        default:
            break;
    }
    /* a blocking close waits here anyway: it pushes its data itself */
    ew->in_blocking_call = true;
    if (!ew->blocking.in_use) {
        mpi_errno = run_blocking(ew, call);
    } else {
        mpi_errno = start_with_request(ew, call, &req);
        if (mpi_errno == MPI_SUCCESS && MPIR_Request_is_complete(req))
            mpi_errno = MPIDI_NBRMA_progress_now_and_then();
        if (mpi_errno == MPI_SUCCESS)
            mpi_errno = MPIDI_NBRMA_request_wait(req);
        else if (req)
            MPIR_Request_free(req);
    }
    ew->in_blocking_call = false;
    MPIR_ERR_CHECK(mpi_errno);
    if (nbrma_sync_waits_for_self_lock(call->kind, call->rank, win->comm_ptr->rank, call->assert))
        mpi_errno = wait_for_self_lock(ew, call->rank);
    if (call->kind != NBRMA_SYNC_FLUSH)
        goto fn_exit;
  flushed:
    /* a process-scope flush completed the calling thread's operations too */
    MPIDI_NBRMA_thread_scope_flushed(ew, call->rank);

  fn_exit:
    MPIR_FUNC_EXIT;
    return mpi_errno;
  fn_fail:
    goto fn_exit;
}
