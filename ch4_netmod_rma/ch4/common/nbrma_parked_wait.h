/*
 * mpich-nbrma: a blocking wait that has lasted sleeps while the progress
 * agent serves in its stead (rule P9 of core/include/nbrma_agent_pacing.h).
 *
 * Without it a rank that waits in MPI_Win_wait, a fence or a barrier spins
 * on its core until the wait ends, yielding now and then (patch 0030): on two
 * cores, with a peer that computes, the peer's agent that must push the data
 * this rank waits for gets what the two spinning and computing threads leave
 * it (Late Complete across two hosts: the target's epoch 1,130-2,900 us
 * against about 1,000 for the 1 MB transfer alone). With the agent running, a
 * wait whose idle period began MPIR_CVAR_NBRMA_PARK_AFTER_US ago parks at its
 * next safe point (a round that has yielded MPICH's global critical section:
 * MPICH's waiting loops after MPIDI_PROGRESS_YIELD, the component's blocking
 * rounds; never the short completion loops, which keep a window's
 * bookkeeping across rounds): it leaves MPI as the outermost exit would (the
 * guard below MPI_THREAD_MULTIPLE, MPICH's global section at it), parks
 * (../../os/parking_spot.h: it rings the agent unless the agent already
 * sleeps on the UCX workers' events, armed, where what arrives wakes it, and
 * sleeps on a doorbell of its own), and comes back in as an outermost entry
 * would. The agent, which finds the application
 * outside and not computing, serves at once (P2) and rings that doorbell
 * after each service that served something (events, a completion);
 * the parked thread also looks by itself every NBRMA_PACING_PARKED_LOOK_NS.
 *
 * One thread parks at a time; another that would park at the same moment
 * (MPI_THREAD_MULTIPLE) waits as before.
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

/* The spot where a wait parks; the agent (common/nbrma_progress_agent.c) is
 * its helper: it says when it sleeps on the workers' events, looks whether a
 * thread is parked and rings it after a service that rule P9 says to ring
 * after (parking_spot.h), and reads the counts for
 * MPIR_CVAR_NBRMA_ASYNC_PROGRESS_STATS. _start as the agent starts (the
 * doorbell a parking thread rings), _stop before it is joined, _forget in a
 * forked child. */
extern nbrma_parking_spot_t MPIDI_NBRMA_parking;
void MPIDI_NBRMA_parking_start(const nbrma_doorbell_t * agent_bell);
void MPIDI_NBRMA_parking_stop(void);
void MPIDI_NBRMA_parking_forget(void);

#endif /* NBRMA_PARKED_WAIT_H_INCLUDED */
