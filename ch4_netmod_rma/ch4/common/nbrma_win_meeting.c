/*
 * mpich-nbrma: MPIDIG's window meeting the component already held
 * (win_meeting.h).
 */

#include "mpidimpl.h"
#include "mpidi_nbrma_hooks.h"
#include "nbrma_win_meeting.h"

/* The window whose free met in the component's collective and goes on to
 * MPIDIG's barrier; one at a time (MPI_Win_free is collective, made under
 * MPICH's global section). */
static MPIR_Win *met_window;

void MPIDI_NBRMA_win_meeting_held(MPIR_Win * win)
{
    met_window = win;
}

bool MPIDI_NBRMA_win_met(MPIR_Win * win)
{
    bool met = win == met_window;

    met_window = NULL;
    return met;
}
