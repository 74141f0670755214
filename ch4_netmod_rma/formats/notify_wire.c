/*
 * mpich-nbrma: the notification message (notify_wire.h).
 */

#include <string.h>
#include "notify_wire.h"

void nbrma_notify_encode(nbrma_notify_msg_t * msg, uint64_t win_id, int32_t notify_id)
{
    msg->win_id = win_id;
    msg->magic = NBRMA_NOTIFY_MAGIC;
    msg->notify_id = notify_id;
}

int nbrma_notify_decode(const void *buf, size_t bytes, nbrma_notify_msg_t * msg)
{
    nbrma_notify_msg_t m;

    if (buf == NULL || bytes != sizeof(m))
        return -1;
    memcpy(&m, buf, sizeof(m));
    if (m.magic != NBRMA_NOTIFY_MAGIC || m.notify_id < 0)
        return -1;
    *msg = m;
    return 0;
}
