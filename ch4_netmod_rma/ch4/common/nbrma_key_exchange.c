/*
 * mpich-nbrma: every process's record and packed UCX remote key
 * (key_exchange.h).
 */

#include "mpidimpl.h"
#include "nbrma_key_exchange.h"

static uint64_t key_bytes_of(const void *rec, size_t key_bytes_at)
{
    uint64_t bytes;

    memcpy(&bytes, (const char *) rec + key_bytes_at, sizeof(bytes));
    return bytes;
}

int MPIDI_NBRMA_exchange_keys(MPIR_Comm * comm, const void *mine, size_t rec_bytes, void *all,
                              size_t key_bytes_at, const void *key, char **keys, size_t *stride)
{
    int mpi_errno = MPI_SUCCESS;
    MPIR_Errflag_t errflag = MPIR_ERR_NONE;
    uint64_t my_bytes = key_bytes_of(mine, key_bytes_at);
    size_t max_bytes = 1;
    char *my_key = NULL;

    *keys = NULL;
    mpi_errno = MPIR_Allgather(mine, rec_bytes, MPI_BYTE, all, rec_bytes, MPI_BYTE, comm,
                               &errflag);
    MPIR_ERR_CHECK(mpi_errno);
    MPIR_ERR_CHKANDJUMP(errflag, mpi_errno, MPI_ERR_OTHER, "**coll_fail");
    for (int r = 0; r < comm->local_size; r++)
        max_bytes = MPL_MAX(max_bytes, key_bytes_of((char *) all + r * rec_bytes, key_bytes_at));
    *keys = MPL_malloc(max_bytes * comm->local_size, MPL_MEM_RMA);
    my_key = MPL_calloc(1, max_bytes, MPL_MEM_RMA);
    MPIR_ERR_CHKANDJUMP(*keys == NULL || my_key == NULL, mpi_errno, MPI_ERR_NO_MEM, "**nomem");
    if (my_bytes)
        memcpy(my_key, key, my_bytes);
    mpi_errno = MPIR_Allgather(my_key, max_bytes, MPI_BYTE, *keys, max_bytes, MPI_BYTE, comm,
                               &errflag);
    MPIR_ERR_CHECK(mpi_errno);
    MPIR_ERR_CHKANDJUMP(errflag, mpi_errno, MPI_ERR_OTHER, "**coll_fail");
    *stride = max_bytes;

  fn_exit:
    MPL_free(my_key);
    return mpi_errno;
  fn_fail:
    MPL_free(*keys);
    *keys = NULL;
    goto fn_exit;
}
