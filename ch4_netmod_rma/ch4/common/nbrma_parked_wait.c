/*
 * mpich-nbrma: a blocking wait that has lasted sleeps while the progress
 * agent serves (nbrma_parked_wait.h says when and why; the agent's side of
 * rule P9 is in nbrma_progress_agent.c).
 */

#include "mpidimpl.h"
#include "mpidi_nbrma_agent_guard.h"
#include "nbrma_agent_pacing.h"
#include "nbrma_parked_wait.h"

uint64_t MPIDI_NBRMA_park_after_ns;

static struct {
    nbrma_doorbell_t bell;      /* the parked thread sleeps on it */
    const nbrma_doorbell_t *agent_bell;
    MPL_atomic_int_t parked;    /* a thread sleeps on `bell` (or is about to) */
    MPL_atomic_int_t agent_asleep;      /* on the workers' events, armed */
    uint64_t parks, rings;      /* rings: by the agent (its thread alone counts them) */
} parking = {.bell = NBRMA_DOORBELL_CLOSED };

void MPIDI_NBRMA_parking_start(const nbrma_doorbell_t * agent_bell)
{
    parking.parks = parking.rings = 0;
    MPL_atomic_relaxed_store_int(&parking.parked, 0);
    MPL_atomic_relaxed_store_int(&parking.agent_asleep, 0);
    /* without its doorbell waits spin as without the agent */
    if (MPIR_CVAR_NBRMA_PARK_AFTER_US < 0 || nbrma_doorbell_open(&parking.bell) != 0)
        return;
    parking.agent_bell = agent_bell;
    MPIDI_NBRMA_park_after_ns = MPIR_CVAR_NBRMA_PARK_AFTER_US > 0 ?
        (uint64_t) MPIR_CVAR_NBRMA_PARK_AFTER_US * 1000u : 1u;
}

void MPIDI_NBRMA_parking_stop(void)
{
    /* MPI_Finalize's thread stops the agent: no thread of the application is
     * parked (none may be inside MPI meanwhile) */
    MPIDI_NBRMA_park_after_ns = 0;
    nbrma_doorbell_close(&parking.bell);
}

void MPIDI_NBRMA_parking_forget(void)
{
    MPIDI_NBRMA_park_after_ns = 0;
}

void MPIDI_NBRMA_parking_agent_sleeps(bool asleep)
{
    MPL_atomic_release_store_int(&parking.agent_asleep, asleep);
}

bool MPIDI_NBRMA_parking_someone_parked(void)
{
    return MPL_atomic_acquire_load_int(&parking.parked) != 0;
}

void MPIDI_NBRMA_parking_ring_parked(void)
{
    parking.rings++;
    nbrma_doorbell_ring(&parking.bell);
}

void MPIDI_NBRMA_parking_counts(uint64_t * parks, uint64_t * rings)
{
    *parks = parking.parks;
    *rings = parking.rings;
}

void MPIDI_NBRMA_park(void)
{
    MPIDI_NBRMA_held_section_t held;
    bool ring_agent;

    if (MPIDI_NBRMA_park_after_ns == 0 || MPIDI_NBRMA_agent_guard_on_agent_thread() ||
        MPL_atomic_cas_int(&parking.parked, 0, 1) != 0)
        return;
    parking.parks++;
    /* the agent's request to be rung as the application leaves is taken by
     * this ring */
    ring_agent = MPIDI_NBRMA_application_step_out(&held);
    /* an agent asleep on the armed workers wakes for what comes; otherwise
     * (it found the application inside and sleeps on its doorbell alone) it
     * would look only a period later */
    if (ring_agent || !MPL_atomic_acquire_load_int(&parking.agent_asleep))
        nbrma_doorbell_ring(parking.agent_bell);
    (void) nbrma_doorbell_wait_bell(&parking.bell, NBRMA_PACING_PARKED_LOOK_NS);
    MPL_atomic_release_store_int(&parking.parked, 0);
    MPIDI_NBRMA_application_step_in(&held);
}
