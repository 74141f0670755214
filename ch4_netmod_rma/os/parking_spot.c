/*
 * mpich-nbrma: a spot where one thread at a time parks (parking_spot.h).
 */

#include "parking_spot.h"

int nbrma_parking_open(nbrma_parking_spot_t * spot, const nbrma_doorbell_t * helper_bell)
{
    spot->parks = spot->rings = 0;
    __atomic_store_n(&spot->parked, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&spot->helper_asleep, 0, __ATOMIC_RELAXED);
    spot->helper_bell = helper_bell;
    return nbrma_doorbell_open(&spot->bell);
}

void nbrma_parking_close(nbrma_parking_spot_t * spot)
{
    nbrma_doorbell_close(&spot->bell);
}

bool nbrma_parking_take(nbrma_parking_spot_t * spot)
{
    int free = 0;

    if (!__atomic_compare_exchange_n(&spot->parked, &free, 1, false, __ATOMIC_SEQ_CST,
                                     __ATOMIC_RELAXED))
        return false;
    spot->parks++;
    return true;
}

void nbrma_parking_sleep(nbrma_parking_spot_t * spot, bool ring_helper, uint64_t look_ns)
{
    /* a helper asleep where what comes wakes it needs no ring; otherwise it
     * would look only a period later */
    if (ring_helper || !__atomic_load_n(&spot->helper_asleep, __ATOMIC_ACQUIRE))
        nbrma_doorbell_ring(spot->helper_bell);
    (void) nbrma_doorbell_wait_bell(&spot->bell, look_ns);
    __atomic_store_n(&spot->parked, 0, __ATOMIC_RELEASE);
}

void nbrma_parking_helper_sleeps(nbrma_parking_spot_t * spot, bool asleep)
{
    __atomic_store_n(&spot->helper_asleep, asleep, __ATOMIC_RELEASE);
}

bool nbrma_parking_someone_parked(const nbrma_parking_spot_t * spot)
{
    return __atomic_load_n(&spot->parked, __ATOMIC_ACQUIRE) != 0;
}

void nbrma_parking_ring_parked(nbrma_parking_spot_t * spot)
{
    spot->rings++;
    nbrma_doorbell_ring(&spot->bell);
}
