/*
 * mpich-nbrma: the pulled access epochs this origin announced in its peers'
 * mailboxes (pulled_epoch.c), kept in its memory until the peer reports them
 * applied: the peer reads them there without this process's CPU. Below every
 * file that calls the engine: delivering the peer's report
 * (engine_calls.c) releases the buffer here.
 */

#include "mpidimpl.h"
#include "epoch_win.h"

int MPIDI_NBRMA_pulled_out_keep(MPIDI_NBRMA_epoch_win_t * ew, int peer,
                                nbrma_pulled_epoch_t * pulled)
{
    int mpi_errno = MPIDI_NBRMA_reserve_one((void **) &ew->pulled_out, ew->n_pulled_out,
                                            &ew->cap_pulled_out, sizeof(*ew->pulled_out), 4);

    if (mpi_errno == MPI_SUCCESS) {
        ew->pulled_out[ew->n_pulled_out].peer = peer;
        ew->pulled_out[ew->n_pulled_out++].epoch = pulled;
    }
    return mpi_errno;
}

void MPIDI_NBRMA_pulled_out_forget_last(MPIDI_NBRMA_epoch_win_t * ew)
{
    ew->n_pulled_out--;
}

void MPIDI_NBRMA_release_access_epoch(MPIDI_NBRMA_epoch_win_t * ew, int peer, uint64_t access_id)
{
    /* access ids are per peer: the pair names one epoch */
    for (size_t i = 0; i < ew->n_pulled_out; i++) {
        if (ew->pulled_out[i].peer == peer && ew->pulled_out[i].epoch->ctrl.value == access_id) {
            MPL_free(ew->pulled_out[i].epoch);
            ew->pulled_out[i] = ew->pulled_out[--ew->n_pulled_out];
            return;
        }
    }
}

void MPIDI_NBRMA_release_all_access_epochs(MPIDI_NBRMA_epoch_win_t * ew)
{
    for (size_t i = 0; i < ew->n_pulled_out; i++)
        MPL_free(ew->pulled_out[i].epoch);
    MPL_free(ew->pulled_out);
    ew->pulled_out = NULL;
    ew->n_pulled_out = ew->cap_pulled_out = 0;
}
