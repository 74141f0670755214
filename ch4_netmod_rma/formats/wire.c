/*
 * mpich-nbrma: the check of a received protocol message (wire.h). No MPICH
 * here: the codec tests and the fuzzer build this file alone.
 */

#include "wire.h"
#include "nbrma_core.h"

/* A mailbox ring's byte carries kind and lock type (nbrma_ctrl_mail_of); lock
 * types are MPICH's (234, 235). */
NBRMA_STATIC_ASSERT(NBRMA_CTRL_ACCESS_APPLIED < 256, "a kind fits a ring's byte");
NBRMA_STATIC_ASSERT(NBRMA_LOCK_EXCLUSIVE < 256 && NBRMA_LOCK_SHARED < 256,
                    "a lock type fits a ring's byte");

int nbrma_ctrl_msg_check(const nbrma_ctrl_msg_t * msg, int nprocs)
{
    /* the kind first: a switch on an unknown value would be the caller's
     * undefined dispatch */
    if (msg->kind < NBRMA_CTRL_GRANT || msg->kind > NBRMA_CTRL_ACCESS_APPLIED)
        return 0;
    if (msg->from < 0 || msg->from >= nprocs || msg->reserved != 0)
        return 0;
    if (msg->kind == NBRMA_CTRL_LOCK_REQUEST || msg->kind == NBRMA_CTRL_LOCK_EPOCH)
        return msg->lock_type == NBRMA_LOCK_EXCLUSIVE || msg->lock_type == NBRMA_LOCK_SHARED;
    return 1;
}

int nbrma_ctrl_mail_check(const nbrma_ctrl_msg_t * msg, int nprocs)
{
    /* a ring slot has no room for a whole epoch's operations */
    return msg->kind != NBRMA_CTRL_LOCK_EPOCH && nbrma_ctrl_msg_check(msg, nprocs);
}
