/*
 * mpich-nbrma: parked waits (when and why: nbrma_parked_wait.h; the agent's
 * side of P9: nbrma_progress_agent.c).
 */

#include "mpidimpl.h"
#include "mpidi_nbrma_agent_guard.h"
#include "nbrma_agent_pacing.h"
#include "nbrma_parked_wait.h"

uint64_t MPIDI_NBRMA_park_after_ns;
nbrma_parking_spot_t MPIDI_NBRMA_parking = NBRMA_PARKING_SPOT_CLOSED;

void MPIDI_NBRMA_parking_start(const nbrma_doorbell_t * agent_bell)
{
    /* without its doorbell waits spin as without the agent */
    if (MPIR_CVAR_NBRMA_PARK_AFTER_US < 0 || nbrma_parking_open(&MPIDI_NBRMA_parking, agent_bell))
        return;
    MPIDI_NBRMA_park_after_ns = MPIR_CVAR_NBRMA_PARK_AFTER_US > 0 ?
        (uint64_t) MPIR_CVAR_NBRMA_PARK_AFTER_US * 1000u : 1u;
}

void MPIDI_NBRMA_parking_stop(void)
{
    /* MPI_Finalize's thread stops the agent: no application thread is parked */
    MPIDI_NBRMA_park_after_ns = 0;
    nbrma_parking_close(&MPIDI_NBRMA_parking);
}

void MPIDI_NBRMA_parking_forget(void)
{
    MPIDI_NBRMA_park_after_ns = 0;
}

void MPIDI_NBRMA_park(void)
{
    MPIDI_NBRMA_held_section_t held;
    bool ring_agent;

    if (MPIDI_NBRMA_park_after_ns == 0 || MPIDI_NBRMA_agent_guard_on_agent_thread() ||
        !nbrma_parking_take(&MPIDI_NBRMA_parking))
        return;
    /* parking rings the agent if it asked to be rung as the application leaves */
    ring_agent = MPIDI_NBRMA_application_step_out(&held);
    nbrma_parking_sleep(&MPIDI_NBRMA_parking, ring_agent, NBRMA_PACING_PARKED_LOOK_NS);
    MPIDI_NBRMA_application_step_in(&held);
}
