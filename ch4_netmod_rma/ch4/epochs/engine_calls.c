/*
 * mpich-nbrma: calling the engine of an engine window: the call guard and its
 * inbox (ENGINE_CALL in epoch_win.h), and the mapping of engine codes to MPI
 * errors.
 *
 * Issuing an operation may run MPICH's progress engine, and so our message
 * handler, while the engine is inside a call: such messages wait in the
 * window's inbox and are delivered, in arrival order, as soon as the outermost
 * engine call returns.
 */

#include "mpidimpl.h"
#include "epoch_win.h"

static int deliver(MPIDI_NBRMA_epoch_win_t * ew, const nbrma_ctrl_msg_t * msg, void *payload)
{
    switch (msg->kind) {
        case NBRMA_CTRL_LOCK_EPOCH:
            return nbrma_on_lock_epoch(ew->engine, msg->from, msg->value, msg->lock_type, payload);
        case NBRMA_CTRL_GRANT:
            return nbrma_on_grant(ew->engine, msg->from, msg->value);
        case NBRMA_CTRL_DONE:
            return nbrma_on_done(ew->engine, msg->from, msg->value);
        case NBRMA_CTRL_LOCK_REQUEST:
            return nbrma_on_lock_request(ew->engine, msg->from, msg->value, msg->lock_type);
        case NBRMA_CTRL_LOCK_RELEASE:
            return nbrma_on_lock_release(ew->engine, msg->from, msg->value);
        case NBRMA_CTRL_FENCE_ARRIVAL:
            return nbrma_on_fence_arrival(ew->engine, msg->from, msg->value);
        case NBRMA_CTRL_ACCESS_EPOCH:
            return nbrma_on_access_epoch(ew->engine, msg->from, msg->value, payload);
        case NBRMA_CTRL_ACCESS_APPLIED:
            MPIDI_NBRMA_release_access_epoch(ew, msg->from, msg->value);
            return nbrma_on_access_applied(ew->engine, msg->from, msg->value);
    }
    return NBRMA_ERR_INTERN;
}

int MPIDI_NBRMA_epochs_drain_inbox(MPIDI_NBRMA_epoch_win_t * ew)
{
    int rc = NBRMA_OK;

    while (rc == NBRMA_OK && ew->n_inbox > 0) {
        MPIDI_NBRMA_inbox_msg_t in = ew->inbox[0];
        ew->n_inbox--;
        memmove(ew->inbox, ew->inbox + 1, ew->n_inbox * sizeof(*ew->inbox));
        ew->call_depth++;
        rc = deliver(ew, &in.msg, in.payload);
        ew->call_depth--;
    }
    return rc;
}

int MPIDI_NBRMA_epochs_receive(MPIDI_NBRMA_epoch_win_t * ew, const nbrma_ctrl_msg_t * msg,
                               void *payload)
{
    int mpi_errno = MPI_SUCCESS;
    int rc;

    if (ew->call_depth) {
        mpi_errno = MPIDI_NBRMA_reserve_one((void **) &ew->inbox, ew->n_inbox, &ew->cap_inbox,
                                            sizeof(*ew->inbox), 16);
        if (mpi_errno != MPI_SUCCESS) {
            MPL_free(payload);
            return mpi_errno;
        }
        ew->inbox[ew->n_inbox].msg = *msg;
        ew->inbox[ew->n_inbox].payload = payload;
        ew->n_inbox++;
        return MPI_SUCCESS;
    }
    ENGINE_CALL(ew, rc, deliver(ew, msg, payload));
    return MPIDI_NBRMA_engine_errno(ew, rc);
}

int MPIDI_NBRMA_engine_error(MPIDI_NBRMA_epoch_win_t * ew, int rc)
{
    int mpi_errno = MPI_SUCCESS;

    switch (rc) {
        case NBRMA_OK:
            return MPI_SUCCESS;
        case NBRMA_ERR_SYNC:
            MPIR_ERR_SET(mpi_errno, MPI_ERR_RMA_SYNC, "**rmasync");
            break;
        case NBRMA_ERR_ARG:
            MPIR_ERR_SET(mpi_errno, MPI_ERR_ARG, "**arg");
            break;
        case NBRMA_ERR_RANK:
            MPIR_ERR_SET(mpi_errno, MPI_ERR_RANK, "**rank");
            break;
        case NBRMA_ERR_NOMEM:
            MPIR_ERR_SET(mpi_errno, MPI_ERR_NO_MEM, "**nomem");
            break;
        default:
            if (rc >= NBRMA_ERR_TRANSPORT_BASE && ew->transport_errno != MPI_SUCCESS) {
                mpi_errno = ew->transport_errno;
                ew->transport_errno = MPI_SUCCESS;
            } else {
                MPIR_ERR_SET1(mpi_errno, MPI_ERR_INTERN, "**nbrmaengine", "**nbrmaengine %s",
                              nbrma_strerror(rc));
            }
    }
    return mpi_errno;
}

/* The engine's code for an MPI error of a transport function; the error
 * itself is kept for MPIDI_NBRMA_engine_errno, which the engine's caller
 * runs on the code the engine passes through (MPI error codes do not fit
 * into the engine's range of transport codes). */
int MPIDI_NBRMA_transport_rc(MPIDI_NBRMA_epoch_win_t * ew, int mpi_errno)
{
    if (mpi_errno == MPI_SUCCESS)
        return NBRMA_OK;
    ew->transport_errno = mpi_errno;
    return NBRMA_ERR_TRANSPORT_BASE;
}
