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

/* Keys up to this size travel with the records: UCX 1.13's packed keys for
 * shared memory are 11-25 bytes here, and a window's creation then makes
 * one collective call for them instead of two. */
#define KEY_SLOT 128

/* The keys padded to `max_bytes` by a second allgather (some key is longer
 * than KEY_SLOT). */
static int allgather_long_keys(MPIR_Comm * comm, const void *key, uint64_t my_bytes,
                               size_t max_bytes, char *keys)
{
    int mpi_errno = MPI_SUCCESS;
    MPIR_Errflag_t errflag = MPIR_ERR_NONE;
    char *my_key = MPL_calloc(1, max_bytes, MPL_MEM_RMA);

    MPIR_ERR_CHKANDJUMP(my_key == NULL, mpi_errno, MPI_ERR_NO_MEM, "**nomem");
    if (my_bytes)
        memcpy(my_key, key, my_bytes);
    mpi_errno = MPIR_Allgather(my_key, max_bytes, MPI_BYTE, keys, max_bytes, MPI_BYTE, comm,
                               &errflag);
    MPIR_ERR_CHECK(mpi_errno);
    MPIR_ERR_CHKANDJUMP(errflag, mpi_errno, MPI_ERR_OTHER, "**coll_fail");

  fn_exit:
    MPL_free(my_key);
    return mpi_errno;
  fn_fail:
    goto fn_exit;
}

int MPIDI_NBRMA_exchange_keys(MPIR_Comm * comm, const void *mine, size_t rec_bytes, void *all,
                              size_t key_bytes_at, const void *key, char **keys, size_t *stride)
{
    int mpi_errno = MPI_SUCCESS;
    MPIR_Errflag_t errflag = MPIR_ERR_NONE;
    uint64_t my_bytes = key_bytes_of(mine, key_bytes_at);
    size_t max_bytes = 1, entry = rec_bytes + KEY_SLOT;
    int nprocs = comm->local_size;
    char *my_entry = MPL_calloc(1, entry, MPL_MEM_RMA);
    char *entries = MPL_malloc(entry * nprocs, MPL_MEM_RMA);

    *keys = NULL;
    MPIR_ERR_CHKANDJUMP(my_entry == NULL || entries == NULL, mpi_errno, MPI_ERR_NO_MEM, "**nomem");
    memcpy(my_entry, mine, rec_bytes);
    if (my_bytes && my_bytes <= KEY_SLOT)
        memcpy(my_entry + rec_bytes, key, my_bytes);
    mpi_errno = MPIR_Allgather(my_entry, entry, MPI_BYTE, entries, entry, MPI_BYTE, comm,
                               &errflag);
    MPIR_ERR_CHECK(mpi_errno);
    MPIR_ERR_CHKANDJUMP(errflag, mpi_errno, MPI_ERR_OTHER, "**coll_fail");
    for (int r = 0; r < nprocs; r++) {
        memcpy((char *) all + r * rec_bytes, entries + (size_t) r * entry, rec_bytes);
        max_bytes = MPL_MAX(max_bytes, key_bytes_of(entries + (size_t) r * entry, key_bytes_at));
    }
    *keys = MPL_malloc(max_bytes * nprocs, MPL_MEM_RMA);
    MPIR_ERR_CHKANDJUMP(*keys == NULL, mpi_errno, MPI_ERR_NO_MEM, "**nomem");
    if (max_bytes <= KEY_SLOT) {
        for (int r = 0; r < nprocs; r++)
            memcpy(*keys + (size_t) r * max_bytes, entries + (size_t) r * entry + rec_bytes,
                   max_bytes);
    } else {
        mpi_errno = allgather_long_keys(comm, key, my_bytes, max_bytes, *keys);
        MPIR_ERR_CHECK(mpi_errno);
    }
    *stride = max_bytes;

  fn_exit:
    MPL_free(my_entry);
    MPL_free(entries);
    return mpi_errno;
  fn_fail:
    MPL_free(*keys);
    *keys = NULL;
    goto fn_exit;
}
