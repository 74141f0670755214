/*
 * mpich-nbrma: locks of engine windows in lock words (transport.try_lock and
 * unlock of nbrma_core.h). Toward a peer whose mailbox this process maps, a
 * lock is taken in the peer's word with the CPU's atomics: nothing waits for
 * the peer's CPU. The poller below has the engine retry busy words. A lock
 * request that came as a message takes this process's own word; while it is
 * busy the owner raises its waiting bit (lock_word.h), so that the releaser
 * wakes its agent. An origin waiting for a peer's word is not woken: its
 * agent looks again on a timer while the retry poller has work.
 */

#include "mpidimpl.h"
#include "epoch_win.h"
#include "lock_word.h"
#include "nbrma_progress.h"

static MPIDI_NBRMA_epoch_win_t *retrying;

static int poll_retries(int *made_progress);

/* A peer's word freed by another process wakes nobody here: unannounced
 * work, which a sleeping progress agent looks at on a timer */
static MPIDI_NBRMA_poller_t retry_poller = {.poll = poll_retries,.own_work = true,
    .unannounced = true
};

static int list_for_retry(MPIDI_NBRMA_epoch_win_t * ew)
{
    if (ew->lock_retry_listed)
        return MPI_SUCCESS;
    ew->lock_retry_listed = true;
    ew->next_lock_retry = retrying;
    retrying = ew;
    MPIDI_NBRMA_agent_unannounced_work_begins();
    return MPIDI_NBRMA_poller_wake(&retry_poller);
}

void MPIDI_NBRMA_lock_retry_forget(MPIDI_NBRMA_epoch_win_t * ew)
{
    for (MPIDI_NBRMA_epoch_win_t ** link = &retrying; *link; link = &(*link)->next_lock_retry) {
        if (*link == ew) {
            *link = ew->next_lock_retry;
            break;
        }
    }
    ew->lock_retry_listed = false;
}

int MPIDI_NBRMA_try_lock(void *ctx, int peer, int lock_type, int *state)
{
    MPIDI_NBRMA_epoch_win_t *ew = ctx;
    uint64_t *word = nbrma_mailboxes_lock_word(ew->mailbox, peer);
    bool exclusive = lock_type == NBRMA_LOCK_EXCLUSIVE;

    if (word == NULL) {
        *state = NBRMA_LOCK_BY_MESSAGE;
        return NBRMA_OK;
    }
    /* or raises the waiting bit where the word is our own and busy */
    if (nbrma_lock_word_take(word, exclusive, peer == ew->win->comm_ptr->rank)) {
        EPOCH_TRACE(ew, "lock word of %d taken (%s)", peer, exclusive ? "exclusive" : "shared");
        *state = NBRMA_LOCK_TAKEN;
        return NBRMA_OK;
    }
    *state = NBRMA_LOCK_BUSY;
    return MPIDI_NBRMA_transport_rc(ew, list_for_retry(ew));
}

int MPIDI_NBRMA_unlock(void *ctx, int peer, int lock_type)
{
    MPIDI_NBRMA_epoch_win_t *ew = ctx;
    uint64_t *word = nbrma_mailboxes_lock_word(ew->mailbox, peer);

    if (word == NULL)   /* the engine unlocks only words it took */
        return MPIDI_NBRMA_transport_rc(ew, MPI_ERR_INTERN);
    /* the owner waits for it to grant a request that came as a message */
    if (nbrma_lock_word_release(word, lock_type == NBRMA_LOCK_EXCLUSIVE))
        MPIDI_NBRMA_mailbox_wake_owner(ew->mailbox, peer, true);
    EPOCH_TRACE(ew, "lock word of %d released", peer);
    return NBRMA_OK;
}

/* Outside engine calls only (a window inside one waits for the next round). */
static int poll_retries(int *made_progress)
{
    int mpi_errno = MPI_SUCCESS;
    MPIDI_NBRMA_epoch_win_t *ew = retrying;

    while (ew && mpi_errno == MPI_SUCCESS) {
        MPIDI_NBRMA_epoch_win_t *next = ew->next_lock_retry;
        int rc = NBRMA_OK;

        if (!ew->call_depth) {
            ENGINE_CALL(ew, rc, nbrma_progress(ew->engine, made_progress));
            mpi_errno = MPIDI_NBRMA_engine_errno(ew, rc);
            if (!nbrma_lock_attempts_pending(ew->engine))
                MPIDI_NBRMA_lock_retry_forget(ew);
        }
        ew = next;
    }
    if (retrying == NULL && mpi_errno == MPI_SUCCESS)
        mpi_errno = MPIDI_NBRMA_poller_sleep(&retry_poller);
    return mpi_errno;
}
