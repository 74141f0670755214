/*
 * mpich-nbrma: the protocol messages of engine windows (wire.h) that arrive:
 * as MPIDIG active messages of one handler, or in the window's mailbox
 * (message_send.c sends them). Handlers run in MPICH's blocking spin loops too,
 * which run no progress hooks. A handler is not told its header's size: a
 * whole lock epoch is checked against the size it claims before it is copied;
 * a pulled epoch is bounded by its maximum size, copied, then checked.
 */

#include "mpidimpl.h"
#include "epoch_win.h"
#include "pulled_epoch_codec.h"
#include "nbrma_am.h"
#include <inttypes.h>

static int ctrl_target_msg_cb(void *am_hdr, void *data, MPI_Aint data_sz, uint32_t attr,
                              MPIR_Request ** req)
{
    int mpi_errno = MPI_SUCCESS;
    nbrma_ctrl_msg_t msg;
    MPIR_Win *win;
    MPIDI_NBRMA_epoch_win_t *ew;
    void *payload = NULL;

    MPIR_FUNC_ENTER;

    (void) data;
    (void) data_sz;
    memcpy(&msg, am_hdr, sizeof(msg));
    win = MPIDI_NBRMA_am_window(msg.win_id, attr, req);
    /* A release may arrive after the target freed its window: MPI_Win_free
     * waits only for what the target itself is owed. */
    if (win == NULL || (ew = MPIDI_NBRMA_epoch_win(win)) == NULL)
        goto fn_exit;
    MPIR_ERR_CHKANDJUMP1(!nbrma_ctrl_msg_check(&msg, win->comm_ptr->local_size), mpi_errno,
                         MPI_ERR_INTERN, "**nbrmaengine", "**nbrmaengine %s",
                         "malformed protocol message");

    EPOCH_TRACE(ew, "recv kind %d from %d value %" PRIu64 "%s", msg.kind, msg.from, msg.value,
                ew->call_depth ? " (inbox)" : "");
    if (msg.kind == NBRMA_CTRL_LOCK_EPOCH) {
        /* the engine keeps the epoch until it grants the lock */
        nbrma_whole_epoch_t whole;
        size_t bytes;

        memcpy(&whole, am_hdr, sizeof(whole));
        bytes = whole.bytes;
        mpi_errno = MPIDI_NBRMA_check_lock_epoch(am_hdr, bytes);
        MPIR_ERR_CHECK(mpi_errno);
        payload = MPL_malloc(bytes, MPL_MEM_RMA);
        MPIR_ERR_CHKANDJUMP(payload == NULL, mpi_errno, MPI_ERR_NO_MEM, "**nomem");
        memcpy(payload, am_hdr, bytes);
    } else if (msg.kind == NBRMA_CTRL_ACCESS_EPOCH) {
        /* the engine keeps it until the exposure it matches is granted */
        nbrma_pulled_epoch_t pulled;

        memcpy(&pulled, am_hdr, sizeof(pulled));
        MPIR_ERR_CHKANDJUMP1(!nbrma_pulled_epoch_claim_fits(pulled.bytes), mpi_errno,
                             MPI_ERR_INTERN, "**nbrmaengine", "**nbrmaengine %s",
                             "malformed pulled access epoch");
        payload = MPL_malloc(pulled.bytes, MPL_MEM_RMA);
        MPIR_ERR_CHKANDJUMP(payload == NULL, mpi_errno, MPI_ERR_NO_MEM, "**nomem");
        memcpy(payload, am_hdr, pulled.bytes);
        mpi_errno = MPIDI_NBRMA_check_access_epoch(payload, pulled.bytes);
        if (mpi_errno != MPI_SUCCESS) {
            MPL_free(payload);
            goto fn_fail;
        }
    }
    /* from here on the engine's, also if it reports an error */
    mpi_errno = MPIDI_NBRMA_epochs_receive(ew, &msg, payload);
    MPIR_ERR_CHECK(mpi_errno);

  fn_exit:
    MPIR_FUNC_EXIT;
    return mpi_errno;
  fn_fail:
    goto fn_exit;
}

/* What a mailbox may carry: nbrma_ctrl_mail_of (wire.h); else a protocol error. */
int MPIDI_NBRMA_epochs_deliver_mail(void *ctx, int from, const nbrma_ring_msg_t * mail)
{
    int mpi_errno = MPI_SUCCESS;
    MPIDI_NBRMA_epoch_win_t *ew = ctx;
    nbrma_ctrl_msg_t msg = nbrma_ctrl_msg_of_mail(MPIDIG_WIN(ew->win, win_id), from, mail);
    void *payload = NULL;

    MPIR_ERR_CHKANDJUMP1(!nbrma_ctrl_mail_check(&msg, ew->win->comm_ptr->local_size), mpi_errno,
                         MPI_ERR_INTERN, "**nbrmaengine", "**nbrmaengine %s",
                         "malformed protocol message in a window's mailbox");
    /* a pulled epoch is announced by its address in the sender's memory */
    if (mail->kind == NBRMA_CTRL_ACCESS_EPOCH) {
        mpi_errno = MPIDI_NBRMA_read_access_epoch(ew, from, mail->value, &payload, &msg.value);
        MPIR_ERR_CHECK(mpi_errno);
    }
    EPOCH_TRACE(ew, "mail kind %d from %d value %" PRIu64 "%s", msg.kind, from, msg.value,
                ew->call_depth ? " (inbox)" : "");
    mpi_errno = MPIDI_NBRMA_epochs_receive(ew, &msg, payload);
  fn_exit:
    return mpi_errno;
  fn_fail:
    goto fn_exit;
}

int MPIDI_NBRMA_epochs_register_handlers(void)
{
    int handler_id = -1;
    int mpi_errno = MPIDI_NBRMA_am_register(ctrl_target_msg_cb, &handler_id);

    MPIDI_NBRMA_send_ctrl_via(handler_id);
    return mpi_errno;
}
