/*
 * mpich-nbrma: arrays that grow by doubling, for the component's queues and
 * tables (the ledger's gathered parts and flushes, outstanding requests).
 */

#ifndef NBRMA_ARRAY_H_INCLUDED
#define NBRMA_ARRAY_H_INCLUDED

/* Room for one more element after the first `n` of *array, which has room for
 * *cap of `elem_size` bytes: doubles it (first_cap the first time) when full.
 * MPI_ERR_NO_MEM, and the array untouched, without memory. */
int MPIDI_NBRMA_reserve_one(void **array, size_t n, size_t * cap, size_t elem_size,
                            size_t first_cap);

#endif /* NBRMA_ARRAY_H_INCLUDED */
