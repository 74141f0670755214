/*
 * mpich-nbrma: the transport the engine of an engine window talks through
 * (nbrma_transport in nbrma_core.h): protocol messages (message_send.c),
 * recorded operations (operations.c), whole and pulled epochs (whole_epoch.c,
 * pulled_epoch.c), lock words (lock_words.c) and request completion. The
 * engine's ctx is the window's MPIDI_NBRMA_epoch_win_t.
 */

#include "mpidimpl.h"
#include "epoch_win.h"
#include "nbrma_progress.h"

static int send_ctrl(void *ctx, int peer, nbrma_ctrl_kind_t kind, uint64_t value, int lock_type)
{
    nbrma_ctrl_msg_t msg;
    return MPIDI_NBRMA_send_ctrl(ctx, peer, &msg, sizeof(msg), kind, value, lock_type);
}

static int send_grant(void *ctx, int peer, uint64_t granted)
{
    return send_ctrl(ctx, peer, NBRMA_CTRL_GRANT, granted, 0);
}

static int send_done(void *ctx, int peer, uint64_t access_id)
{
    return send_ctrl(ctx, peer, NBRMA_CTRL_DONE, access_id, 0);
}

static int send_lock_request(void *ctx, int peer, uint64_t access_id, int lock_type)
{
    return send_ctrl(ctx, peer, NBRMA_CTRL_LOCK_REQUEST, access_id, lock_type);
}

static int send_lock_release(void *ctx, int peer, uint64_t access_id)
{
    return send_ctrl(ctx, peer, NBRMA_CTRL_LOCK_RELEASE, access_id, 0);
}

/* `token`: the fence and the round of its barrier (the core's) */
static int send_fence_arrival(void *ctx, int peer, uint64_t token)
{
    return send_ctrl(ctx, peer, NBRMA_CTRL_FENCE_ARRIVAL, token, 0);
}

static int send_lock_epoch(void *ctx, int peer, uint64_t access_id, int lock_type, void *payload)
{
    nbrma_whole_epoch_t *whole = payload;
    int rc = MPIDI_NBRMA_send_ctrl(ctx, peer, &whole->ctrl, whole->bytes, NBRMA_CTRL_LOCK_EPOCH,
                                   access_id, lock_type);
    MPL_free(whole);
    return rc;
}

static int send_access_applied(void *ctx, int origin, uint64_t access_id)
{
    return send_ctrl(ctx, origin, NBRMA_CTRL_ACCESS_APPLIED, access_id, 0);
}

static int issue_op(void *ctx, int target, void *record, nbrma_op_ticket ticket)
{
    MPIDI_NBRMA_recorded_op_t *rec = record;

    MPIR_Assert(rec->op.target_rank == target);
    return MPIDI_NBRMA_transport_rc(ctx, MPIDI_NBRMA_issue_or_hold(ctx, rec, ticket));
}

/* A refused message's payload, or one left at the free: MPL_malloc'ed copies. */
static void drop_payload(void *ctx, void *payload)
{
    (void) ctx;
    MPL_free(payload);
}

/* The engine reports a cookie (epoch_win.h) once its state is consistent. */
static void request_complete(void *ctx, void *cookie, int status)
{
    MPIDI_NBRMA_blocking_call_t *blocking = MPIDI_NBRMA_cookie_blocking_call(cookie);
    int mpi_errno = MPI_SUCCESS;

    EPOCH_TRACE((MPIDI_NBRMA_epoch_win_t *) ctx, "request %p complete", cookie);
    if (status != NBRMA_OK)
        MPIR_ERR_SET1(mpi_errno, MPI_ERR_INTERN, "**nbrmaengine", "**nbrmaengine %s",
                      nbrma_strerror(status));
    if (blocking) {
        blocking->mpi_errno = mpi_errno;
        blocking->done = true;
        MPIDI_NBRMA_progress_moved();   /* a parked wait may wait for it */
        return;
    }
    if (mpi_errno != MPI_SUCCESS)
        ((MPIR_Request *) cookie)->status.MPI_ERROR = mpi_errno;
    MPID_Request_complete((MPIR_Request *) cookie);
}

const nbrma_transport MPIDI_NBRMA_epochs_transport = {
    .send_grant = send_grant,
    .send_done = send_done,
    .send_lock_request = send_lock_request,
    .send_lock_release = send_lock_release,
    .send_fence_arrival = send_fence_arrival,
    .issue_op = issue_op,
    .request_complete = request_complete,
    .pack_lock_epoch = MPIDI_NBRMA_pack_lock_epoch,
    .send_lock_epoch = send_lock_epoch,
    .apply_lock_epoch = MPIDI_NBRMA_apply_lock_epoch,
    .defer_lock = MPIDI_NBRMA_defer_lock,
    .pack_access_epoch = MPIDI_NBRMA_pack_access_epoch,
    .send_access_epoch = MPIDI_NBRMA_send_access_epoch,
    .apply_access_epoch = MPIDI_NBRMA_apply_access_epoch,
    .send_access_applied = send_access_applied,
    .try_lock = MPIDI_NBRMA_try_lock,
    .unlock = MPIDI_NBRMA_unlock,
    .drop_payload = drop_payload,
};
