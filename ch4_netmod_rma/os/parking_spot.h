/*
 * mpich-nbrma: a spot where one thread at a time parks, asleep on a doorbell
 * of its own, while a helper thread works in its stead and rings it when its
 * work served something (the progress agent and a blocking wait that has
 * lasted: ch4/common/nbrma_parked_wait.h says when and why). Parking rings the
 * helper unless it sleeps where what comes wakes it anyway (asked through
 * nbrma_parking_helper_sleeps), or where the caller asks for the ring.
 *
 * No MPICH or UCX header: unit-tested without MPI
 * (test/unit/test_parking_spot.cpp).
 */

#ifndef NBRMA_PARKING_SPOT_H_INCLUDED
#define NBRMA_PARKING_SPOT_H_INCLUDED

#include <stdbool.h>
#include <stdint.h>
#include "doorbell.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct {
    nbrma_doorbell_t bell;      /* the parked thread sleeps on it */
    const nbrma_doorbell_t *helper_bell;
    int parked;                 /* a thread sleeps on `bell` (or is about to); __atomic */
    int helper_asleep;          /* where what comes wakes it; __atomic */
    uint64_t parks, rings;      /* rings: by the helper (its thread alone counts them) */
} nbrma_parking_spot_t;

#define NBRMA_PARKING_SPOT_CLOSED {.bell = NBRMA_DOORBELL_CLOSED }

/* Opens the spot's doorbell, counts from 0; `helper_bell` is what a parking
 * thread rings. 0, or the error of the doorbell (nobody may park then). */
int nbrma_parking_open(nbrma_parking_spot_t * spot, const nbrma_doorbell_t * helper_bell);
/* No thread is parked (none may park meanwhile). */
void nbrma_parking_close(nbrma_parking_spot_t * spot);

/* The calling thread parks here: false if another is parked. */
bool nbrma_parking_take(nbrma_parking_spot_t * spot);
/* The thread that took the spot rings the helper (if `ring_helper` or the
 * helper is not asleep where what comes wakes it), sleeps until rung or for
 * `look_ns`, and leaves the spot. */
void nbrma_parking_sleep(nbrma_parking_spot_t * spot, bool ring_helper, uint64_t look_ns);

/* The helper's side: around its sleep; whether a thread is parked; its ring
 * after a service that served something. */
void nbrma_parking_helper_sleeps(nbrma_parking_spot_t * spot, bool asleep);
bool nbrma_parking_someone_parked(const nbrma_parking_spot_t * spot);
void nbrma_parking_ring_parked(nbrma_parking_spot_t * spot);

#ifdef __cplusplus
}
#endif
#endif /* NBRMA_PARKING_SPOT_H_INCLUDED */
