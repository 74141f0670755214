/*
 * mpich-nbrma: a blocking wait that has lasted sleeps while the progress agent
 * serves in its stead (P9 of core/include/nbrma_agent_pacing.h): a rank
 * spinning in a wait would starve, on few cores, the peer's agent that must
 * push its data. A wait idle for MPIR_CVAR_NBRMA_PARK_AFTER_US parks at its
 * next safe point (a round that yielded MPICH's global section; never in the
 * completion loops, which keep a window's bookkeeping across rounds): it
 * leaves MPI as the outermost exit would, sleeps on its doorbell
 * (../../os/parking_spot.h; the agent rings it, and it also looks every
 * NBRMA_PACING_PARKED_LOOK_NS), and comes back in as an outermost entry
 * would. One thread parks at a time.
 */

#ifndef NBRMA_PARKED_WAIT_H_INCLUDED
#define NBRMA_PARKED_WAIT_H_INCLUDED

#include <stdbool.h>
#include <stdint.h>
#include "doorbell.h"
#include "parking_spot.h"

/* How long a blocking wait lasts before it parks (ns; 0: it never parks).
 * Set while the agent runs and MPIR_CVAR_NBRMA_PARK_AFTER_US allows it. */
extern uint64_t MPIDI_NBRMA_park_after_ns;

/* At a safe point of a blocking wait that has lasted: park once, then return
 * inside MPI again (the caller reads its state again). */
void MPIDI_NBRMA_park(void);

/* The spot where a wait parks; the agent (nbrma_progress_agent.c) is its
 * helper (P9). _start as the agent starts (its doorbell), _stop before it is
 * joined, _forget in a forked child. */
extern nbrma_parking_spot_t MPIDI_NBRMA_parking;
void MPIDI_NBRMA_parking_start(const nbrma_doorbell_t * agent_bell);
void MPIDI_NBRMA_parking_stop(void);
void MPIDI_NBRMA_parking_forget(void);

#endif /* NBRMA_PARKED_WAIT_H_INCLUDED */
