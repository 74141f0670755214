/*
 * mpich-nbrma: the protocol messages of engine windows (wire.h) that leave:
 * into the peer's mailbox where the message has nothing behind it and the
 * ring has room, else as an MPIDIG active message (messages.c receives both).
 * A done goes as an active message while MPIDIG operations toward the peer
 * are unacknowledged: the epoch may have counted them complete locally (rule
 * R5), and only that in-order channel keeps the done behind them.
 */

#include "mpidimpl.h"
#include "epoch_win.h"
#include "nbrma_am.h"
#include <inttypes.h>

static int ctrl_handler_id = -1;

void MPIDI_NBRMA_send_ctrl_via(int handler_id)
{
    ctrl_handler_id = handler_id;
}

int MPIDI_NBRMA_send_ctrl(MPIDI_NBRMA_epoch_win_t * ew, int peer, nbrma_ctrl_msg_t * msg,
                          size_t bytes, nbrma_ctrl_kind_t kind, uint64_t value, int lock_type)
{
    MPIR_Win *win = ew->win;

    *msg = nbrma_ctrl_msg_make(MPIDIG_WIN(win, win_id), win->comm_ptr->rank, kind, value,
                               lock_type);
    if (bytes == sizeof(*msg) &&
        (kind != NBRMA_CTRL_DONE || MPIDI_NBRMA_am_ops_complete(win, peer, false))) {
        nbrma_ring_msg_t mail = nbrma_ctrl_mail_of(msg);
        if (MPIDI_NBRMA_mailbox_send(ew->mailbox, peer, &mail)) {
            EPOCH_TRACE(ew, "mail kind %d to %d value %" PRIu64, kind, peer, value);
            return MPI_SUCCESS;
        }
    }
    EPOCH_TRACE(ew, "send kind %d to %d value %" PRIu64 " (%zu bytes)", kind, peer, value, bytes);
    return MPIDI_NBRMA_transport_rc(ew, MPIDI_NBRMA_am_send(win, peer, ctrl_handler_id, msg,
                                                            bytes));
}
