/*
 * mpich-nbrma: room for one more element in an array that grows by doubling,
 * for the tables of formats/ (C; the core's C++ tables use
 * core/src/reserve_one.hpp, the same rule). MPICH- and UCX-free.
 */

#ifndef NBRMA_GROW_ONE_H_INCLUDED
#define NBRMA_GROW_ONE_H_INCLUDED

#include <stdbool.h>
#include <stddef.h>
#include <stdlib.h>

/* With `n` elements of `elem_size` bytes in *array of capacity *cap: true
 * when there is room for one more, growing to twice the capacity (first
 * `first_cap`) if needed; false without memory, the array unchanged. */
static inline bool nbrma_grow_one(void **array, size_t n, size_t * cap, size_t elem_size,
                                  size_t first_cap)
{
    size_t new_cap;
    void *grown;

    if (n < *cap)
        return true;
    new_cap = *cap ? 2 * *cap : first_cap;
    grown = realloc(*array, new_cap * elem_size);
    if (grown == NULL)
        return false;
    *array = grown;
    *cap = new_cap;
    return true;
}

#endif /* NBRMA_GROW_ONE_H_INCLUDED */
