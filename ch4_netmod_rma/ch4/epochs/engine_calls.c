/*
 * mpich-nbrma: calling the engine of an engine window: protocol messages
 * handed to the core's inbox (nbrma_inbox.h), which keeps those that arrive
 * during an engine call until the outermost one returns (ENGINE_CALL in
 * epoch_win.h says why), and engine codes as MPI errors.
 */

#include "mpidimpl.h"
#include "epoch_win.h"

/* The core's inbox numbers message kinds as the wire does. */
#define SAME_KIND(k) ((int) NBRMA_EVENT_##k == (int) NBRMA_CTRL_##k)
_Static_assert(SAME_KIND(GRANT) && SAME_KIND(DONE) && SAME_KIND(LOCK_REQUEST) &&
               SAME_KIND(LOCK_RELEASE) && SAME_KIND(FENCE_ARRIVAL) && SAME_KIND(LOCK_EPOCH) &&
               SAME_KIND(ACCESS_EPOCH) && SAME_KIND(ACCESS_APPLIED), "message kinds");

int MPIDI_NBRMA_epochs_receive(MPIDI_NBRMA_epoch_win_t * ew, const nbrma_ctrl_msg_t * msg,
                               void *payload)
{
    nbrma_event event = {.kind = msg->kind,.from = msg->from,.lock_type = msg->lock_type,
        .value = msg->value,.payload = payload
    };

    return MPIDI_NBRMA_engine_errno(ew, nbrma_inbox_receive(ew->inbox, ew->engine,
                                                            &ew->call_depth, &event));
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

/* The error itself is kept for MPIDI_NBRMA_engine_errno on the code the
 * engine passes through: MPI error codes do not fit the engine's range. */
int MPIDI_NBRMA_transport_rc(MPIDI_NBRMA_epoch_win_t * ew, int mpi_errno)
{
    if (mpi_errno == MPI_SUCCESS)
        return NBRMA_OK;
    ew->transport_errno = mpi_errno;
    return NBRMA_ERR_TRANSPORT_BASE;
}
