/*
 * The synchronization modes of the OSU-compatible benchmarks: OSU 7.4's and
 * the patch-set's nonblocking ones (the MPIX_Win_i* call, then a request to
 * wait for), and the pieces of their epochs that the latency and overlap
 * loops put together.
 */
#include "osu_rma_common.h"

static int flush(int t, MPI_Win w, MPI_Request * q)
{
    *q = MPI_REQUEST_NULL;
    return MPI_Win_flush(t, w);
}

static int flush_local(int t, MPI_Win w, MPI_Request * q)
{
    *q = MPI_REQUEST_NULL;
    return MPI_Win_flush_local(t, w);
}

static int lock(int type, int t, MPI_Win w)
{
    return MPI_Win_lock(type, t, 0, w);
}

static int unlock(int t, MPI_Win w, MPI_Request * q)
{
    *q = MPI_REQUEST_NULL;
    return MPI_Win_unlock(t, w);
}

static int lock_all(int type, int t, MPI_Win w)
{
    (void) type, (void) t;
    return MPI_Win_lock_all(0, w);
}

static int unlock_all(int t, MPI_Win w, MPI_Request * q)
{
    (void) t;
    *q = MPI_REQUEST_NULL;
    return MPI_Win_unlock_all(w);
}

#if OSU_HAVE_NBRMA
static int iflush(int t, MPI_Win w, MPI_Request * q)
{
    return MPIX_Win_iflush(t, w, q);
}

static int iflush_local(int t, MPI_Win w, MPI_Request * q)
{
    return MPIX_Win_iflush_local(t, w, q);
}

static int iflush_all(int t, MPI_Win w, MPI_Request * q)
{
    (void) t;
    return MPIX_Win_iflush_all(w, q);
}

static int iflush_local_all(int t, MPI_Win w, MPI_Request * q)
{
    (void) t;
    return MPIX_Win_iflush_local_all(w, q);
}

/* The opening calls' requests complete at once (the epoch is open when the
 * call returns); they are freed, as an application does. */
static int ilock(int type, int t, MPI_Win w)
{
    MPI_Request q;
    int rc = MPIX_Win_ilock(type, t, 0, w, &q);
    return rc != MPI_SUCCESS ? rc : MPI_Request_free(&q);
}

static int iunlock(int t, MPI_Win w, MPI_Request * q)
{
    return MPIX_Win_iunlock(t, w, q);
}

static int ilock_all(int type, int t, MPI_Win w)
{
    MPI_Request q;
    (void) type, (void) t;
    int rc = MPIX_Win_ilock_all(0, w, &q);
    return rc != MPI_SUCCESS ? rc : MPI_Request_free(&q);
}

static int iunlock_all(int t, MPI_Win w, MPI_Request * q)
{
    (void) t;
    return MPIX_Win_iunlock_all(w, q);
}
#endif

const struct osu_sync_mode osu_sync_modes[] = {
    {"lock", "MPI_Win_lock/unlock", OSU_PER_OP, 0, unlock, lock},
    {"pscw", "MPI_Win_post/start/complete/wait", OSU_PSCW, 0, NULL, NULL},
    {"fence", "MPI_Win_fence", OSU_FENCE, 0, NULL, NULL},
    {"flush", "MPI_Win_flush", OSU_HELD, 0, flush, NULL},
    {"flush_local", "MPI_Win_flush_local", OSU_HELD, 0, flush_local, NULL},
    {"lock_all", "MPI_Win_lock_all/unlock_all", OSU_PER_OP, 0, unlock_all, lock_all},
#if OSU_HAVE_NBRMA
    {"ilock", "MPIX_Win_ilock/iunlock", OSU_PER_OP, 1, iunlock, ilock},
    {"ipscw", "MPIX_Win_ipost/istart/icomplete/iwait", OSU_PSCW, 1, NULL, NULL},
    {"ifence", "MPIX_Win_ifence", OSU_FENCE, 1, NULL, NULL},
    {"iflush", "MPIX_Win_iflush", OSU_HELD, 1, iflush, NULL},
    {"iflush_local", "MPIX_Win_iflush_local", OSU_HELD, 1, iflush_local, NULL},
    {"iflush_all", "MPIX_Win_iflush_all", OSU_HELD, 1, iflush_all, NULL},
    {"iflush_local_all", "MPIX_Win_iflush_local_all", OSU_HELD, 1, iflush_local_all, NULL},
    {"ilock_all", "MPIX_Win_ilock_all/iunlock_all", OSU_PER_OP, 1, iunlock_all, ilock_all},
#endif
};

const int osu_n_sync_modes = (int) (sizeof(osu_sync_modes) / sizeof(osu_sync_modes[0]));

/* --- active-target epochs, split at the closing call ------------------------ */

void osu_wait_closed(MPI_Request * req)
{
    if (*req != MPI_REQUEST_NULL)
        OSU_CK(MPI_Wait(req, MPI_STATUS_IGNORE));
}

void osu_fence(const struct osu_sync_mode *m, MPI_Win win, MPI_Request * req)
{
    *req = MPI_REQUEST_NULL;
    if (!m->nonblocking)
        OSU_CK(MPI_Win_fence(0, win));
#if OSU_HAVE_NBRMA
    else
        OSU_CK(MPIX_Win_ifence(0, win, req));
#endif
}

/* The opening calls' requests complete at once; they are freed. */
void osu_pscw_start(const struct osu_sync_mode *m, MPI_Group peer, MPI_Win win)
{
    if (!m->nonblocking)
        OSU_CK(MPI_Win_start(peer, 0, win));
#if OSU_HAVE_NBRMA
    else {
        MPI_Request q;
        OSU_CK(MPIX_Win_istart(peer, 0, win, &q));
        OSU_CK(MPI_Request_free(&q));
    }
#endif
}

void osu_pscw_complete(const struct osu_sync_mode *m, MPI_Win win, MPI_Request * req)
{
    *req = MPI_REQUEST_NULL;
    if (!m->nonblocking)
        OSU_CK(MPI_Win_complete(win));
#if OSU_HAVE_NBRMA
    else
        OSU_CK(MPIX_Win_icomplete(win, req));
#endif
}

void osu_pscw_post(const struct osu_sync_mode *m, MPI_Group peer, MPI_Win win)
{
    if (!m->nonblocking)
        OSU_CK(MPI_Win_post(peer, 0, win));
#if OSU_HAVE_NBRMA
    else {
        MPI_Request q;
        OSU_CK(MPIX_Win_ipost(peer, 0, win, &q));
        OSU_CK(MPI_Request_free(&q));
    }
#endif
}

void osu_pscw_wait(const struct osu_sync_mode *m, MPI_Win win, MPI_Request * req)
{
    *req = MPI_REQUEST_NULL;
    if (!m->nonblocking)
        OSU_CK(MPI_Win_wait(win));
#if OSU_HAVE_NBRMA
    else
        OSU_CK(MPIX_Win_iwait(win, req));
#endif
}

MPI_Group osu_peer_group(int peer)
{
    MPI_Group world, g;
    OSU_CK(MPI_Comm_group(MPI_COMM_WORLD, &world));
    OSU_CK(MPI_Group_incl(world, 1, &peer, &g));
    OSU_CK(MPI_Group_free(&world));
    return g;
}
