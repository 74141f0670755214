/*
 * mpich-nbrma: arrays that grow by doubling (array.h).
 */

#include "mpidimpl.h"
#include "nbrma_array.h"

int MPIDI_NBRMA_reserve_one(void **array, size_t n, size_t * cap, size_t elem_size,
                            size_t first_cap)
{
    int mpi_errno = MPI_SUCCESS;

    if (n == *cap) {
        size_t new_cap = *cap ? 2 * *cap : first_cap;
        void *grown = MPL_realloc(*array, new_cap * elem_size, MPL_MEM_RMA);
        MPIR_ERR_CHKANDJUMP(grown == NULL, mpi_errno, MPI_ERR_NO_MEM, "**nomem");
        *array = grown;
        *cap = new_cap;
    }
  fn_exit:
    return mpi_errno;
  fn_fail:
    goto fn_exit;
}
