/*
 * mpich-nbrma: synchronization: the hooks of ch4_win.h (patch 0014, MPI_Win_*)
 * and MPIR_Win_i*_impl (MPIX_Win_i*), each a descriptor (nbrma_win.h) for the
 * window kind's table. Windows without component state reach only
 * MPI_Win_sync and MPIX_Win_i* here: MPICH's table (MPIDI_NBRMA_win_ops) gives
 * them nonblocking flushes, which MPICH lacks.
 */

#include "mpidimpl.h"
#include "mpidi_nbrma_hooks.h"
#include "nbrma_win.h"
#include "nbrma_request.h"
#include "nbrma_progress.h"

static int sync_call(MPIR_Win * win, const MPIDI_NBRMA_sync_call_t * call)
{
    if (MPIDI_NBRMA_sync_is_proc_null(call))
        return MPI_SUCCESS;
    return MPIDI_NBRMA_WIN_STATE(win)->ops->sync(call, win);
}

/* A request complete at once made no progress, nor does MPI_Wait on it: a
 * process looping on such calls (MPIX_Win_iflush with nothing in flight,
 * MPIX_Win_ilock of itself) runs progress now and then, or its peers' lock
 * requests over tcp wait until the loop ends (test/mpi/nb_sync_progress.c). */
static int start_sync(MPIR_Win * win, const MPIDI_NBRMA_sync_call_t * call,
                      MPIR_Request ** request)
{
    int mpi_errno;

    if (MPIDI_NBRMA_sync_is_proc_null(call))
        mpi_errno = MPIDI_NBRMA_request_create_complete(request);
    else
        mpi_errno = MPIDI_NBRMA_win_ops(win)->start_sync(call, win, request);
    if (mpi_errno == MPI_SUCCESS && MPIR_Request_is_complete(*request))
        mpi_errno = MPIDI_NBRMA_progress_now_and_then();
    return mpi_errno;
}

#define SYNC(win, ...) sync_call(win, &(MPIDI_NBRMA_sync_call_t) { __VA_ARGS__ })
#define START(win, request, ...) \
    start_sync(win, &(MPIDI_NBRMA_sync_call_t) { __VA_ARGS__ }, request)

#define FENCE_ARGS(a) .kind = NBRMA_SYNC_FENCE, .assert = (a)
#define POST_ARGS(g, a) .kind = NBRMA_SYNC_POST, .group = (g), .assert = (a)
#define START_ARGS(g, a) .kind = NBRMA_SYNC_START, .group = (g), .assert = (a)
#define LOCK_ARGS(t, r, a) .kind = NBRMA_SYNC_LOCK, .lock_type = (t), .rank = (r), \
        .assert = (a)
#define FLUSH_ARGS(r, l) .kind = NBRMA_SYNC_FLUSH, .rank = (r), .local = (l)

int MPIDI_NBRMA_win_fence(int assert, MPIR_Win * win)
{
    return SYNC(win, FENCE_ARGS(assert));
}

int MPIDI_NBRMA_win_post(MPIR_Group * group, int assert, MPIR_Win * win)
{
    return SYNC(win, POST_ARGS(group, assert));
}

int MPIDI_NBRMA_win_start(MPIR_Group * group, int assert, MPIR_Win * win)
{
    return SYNC(win, START_ARGS(group, assert));
}

int MPIDI_NBRMA_win_complete(MPIR_Win * win)
{
    return SYNC(win, .kind = NBRMA_SYNC_COMPLETE);
}

int MPIDI_NBRMA_win_wait(MPIR_Win * win)
{
    return SYNC(win, .kind = NBRMA_SYNC_WAIT);
}

int MPIDI_NBRMA_win_test(MPIR_Win * win, int *flag)
{
    return SYNC(win, .kind = NBRMA_SYNC_TEST, .flag = flag);
}

int MPIDI_NBRMA_win_lock(int lock_type, int rank, int assert, MPIR_Win * win)
{
    return SYNC(win, LOCK_ARGS(lock_type, rank, assert));
}

int MPIDI_NBRMA_win_unlock(int rank, MPIR_Win * win)
{
    return SYNC(win, .kind = NBRMA_SYNC_UNLOCK, .rank = rank);
}

int MPIDI_NBRMA_win_lock_all(int assert, MPIR_Win * win)
{
    return SYNC(win, .kind = NBRMA_SYNC_LOCK_ALL, .assert = assert);
}

int MPIDI_NBRMA_win_unlock_all(MPIR_Win * win)
{
    return SYNC(win, .kind = NBRMA_SYNC_UNLOCK_ALL);
}

int MPIDI_NBRMA_win_flush(int rank, MPIR_Win * win)
{
    return SYNC(win, FLUSH_ARGS(rank, false));
}

int MPIDI_NBRMA_win_flush_all(MPIR_Win * win)
{
    return SYNC(win, FLUSH_ARGS(NBRMA_ALL_RANKS, false));
}

int MPIDI_NBRMA_win_flush_local(int rank, MPIR_Win * win)
{
    return SYNC(win, FLUSH_ARGS(rank, true));
}

int MPIDI_NBRMA_win_flush_local_all(MPIR_Win * win)
{
    return SYNC(win, FLUSH_ARGS(NBRMA_ALL_RANKS, true));
}

/* Every window (patch 0014): a process polling its memory with MPI_Win_sync
 * for a peer's put must progress over tcp for the put and the peer's lock and
 * unlock, and MPICH's MPI_Win_sync makes none (test/mpi/nb_sync_progress.c). */
int MPIDI_NBRMA_win_sync(MPIR_Win * win)
{
    int mpi_errno = MPIDI_NBRMA_win_ops(win)->sync(&(MPIDI_NBRMA_sync_call_t) {
                                                   .kind = NBRMA_SYNC_SYNC}, win);

    if (mpi_errno == MPI_SUCCESS)
        mpi_errno = MPIDI_NBRMA_progress_now_and_then();
    return mpi_errno;
}

int MPIR_Win_ifence_impl(int assert, MPIR_Win * win, MPIR_Request ** request)
{
    return START(win, request, FENCE_ARGS(assert));
}

int MPIR_Win_ipost_impl(MPIR_Group * group, int assert, MPIR_Win * win, MPIR_Request ** request)
{
    return START(win, request, POST_ARGS(group, assert));
}

int MPIR_Win_istart_impl(MPIR_Group * group, int assert, MPIR_Win * win, MPIR_Request ** request)
{
    return START(win, request, START_ARGS(group, assert));
}

int MPIR_Win_icomplete_impl(MPIR_Win * win, MPIR_Request ** request)
{
    return START(win, request, .kind = NBRMA_SYNC_COMPLETE);
}

int MPIR_Win_iwait_impl(MPIR_Win * win, MPIR_Request ** request)
{
    return START(win, request, .kind = NBRMA_SYNC_WAIT);
}

int MPIR_Win_ilock_impl(int lock_type, int rank, int assert, MPIR_Win * win,
                        MPIR_Request ** request)
{
    return START(win, request, LOCK_ARGS(lock_type, rank, assert));
}

int MPIR_Win_iunlock_impl(int rank, MPIR_Win * win, MPIR_Request ** request)
{
    return START(win, request, .kind = NBRMA_SYNC_UNLOCK, .rank = rank);
}

int MPIR_Win_ilock_all_impl(int assert, MPIR_Win * win, MPIR_Request ** request)
{
    return START(win, request, .kind = NBRMA_SYNC_LOCK_ALL, .assert = assert);
}

int MPIR_Win_iunlock_all_impl(MPIR_Win * win, MPIR_Request ** request)
{
    return START(win, request, .kind = NBRMA_SYNC_UNLOCK_ALL);
}

int MPIR_Win_iflush_impl(int rank, MPIR_Win * win, MPIR_Request ** request)
{
    return START(win, request, FLUSH_ARGS(rank, false));
}

int MPIR_Win_iflush_all_impl(MPIR_Win * win, MPIR_Request ** request)
{
    return START(win, request, FLUSH_ARGS(NBRMA_ALL_RANKS, false));
}

int MPIR_Win_iflush_local_impl(int rank, MPIR_Win * win, MPIR_Request ** request)
{
    return START(win, request, FLUSH_ARGS(rank, true));
}

int MPIR_Win_iflush_local_all_impl(MPIR_Win * win, MPIR_Request ** request)
{
    return START(win, request, FLUSH_ARGS(NBRMA_ALL_RANKS, true));
}
