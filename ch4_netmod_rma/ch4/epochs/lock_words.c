/*
 * mpich-nbrma: locks of engine windows in lock words (transport.try_lock and
 * unlock of nbrma_core.h). Toward a peer whose mailbox this process maps,
 * MPI_Win_lock and its kin take the lock in the peer's word with the CPU's
 * atomics: no message, no grant, nothing that waits for the peer's CPU. The
 * engine tries a busy word again at each nbrma_progress; the poller below
 * calls it for every window whose engine waits for one. A lock request that
 * came as a message takes this process's own word the same way before the
 * engine grants it (from the same poller while the word is busy); the
 * process then raises its waiting bit in its word (lock_word.h), so that
 * the peer that releases the word wakes its progress agent
 * (MPIDI_NBRMA_mailbox_wake_owner) instead of leaving the request until its
 * next MPI call. An origin waiting for a peer's busy word is not woken by
 * the release (the releaser does not know it): its agent, rung as the wait
 * begins, looks again every millisecond while the retry poller has work.
 */

#include "mpidimpl.h"
#include "epoch_win.h"
#include "lock_word.h"
#include "nbrma_progress.h"

static MPIDI_NBRMA_epoch_win_t *retrying;

static int poll_retries(int *made_progress);

/* A peer's word freed by another process's plain stores wakes nobody here:
 * unannounced work, which a sleeping progress agent looks at on a timer */
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
    /* takes the word, or raises this process's waiting bit where the word is
     * its own and busy (formats/lock_word.h) */
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

/* Outside engine calls only (a window in the middle of one is tried at the
 * next round). */
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
