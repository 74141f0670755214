/*
 * mpich-nbrma: every process's record and key (nbrma_key_exchange.h); the
 * entries that carry them are formats/key_records.c's.
 */

#include "mpidimpl.h"
#include "nbrma_key_exchange.h"
#include "key_records.h"

/* The keys padded to `max_bytes` by a second allgather (some key is longer
 * than NBRMA_KEY_SLOT). */
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
    uint64_t my_bytes = nbrma_key_record_key_bytes(mine, key_bytes_at);
    size_t max_bytes, entry = nbrma_key_entry_bytes(rec_bytes);
    int nprocs = comm->local_size, bad_rank = -1;
    char *my_entry = MPL_calloc(1, entry, MPL_MEM_RMA);
    char *entries = MPL_malloc(entry * nprocs, MPL_MEM_RMA);

    *keys = NULL;
    MPIR_ERR_CHKANDJUMP(my_entry == NULL || entries == NULL, mpi_errno, MPI_ERR_NO_MEM, "**nomem");
    nbrma_key_entry_pack(my_entry, mine, rec_bytes, key_bytes_at, key);
    mpi_errno = MPIR_Allgather(my_entry, entry, MPI_BYTE, entries, entry, MPI_BYTE, comm,
                               &errflag);
    MPIR_ERR_CHECK(mpi_errno);
    MPIR_ERR_CHKANDJUMP(errflag, mpi_errno, MPI_ERR_OTHER, "**coll_fail");
    max_bytes = nbrma_key_entries_unpack(entries, nprocs, rec_bytes, key_bytes_at, all, &bad_rank);
    if (max_bytes == 0) {
        char what[96];

        snprintf(what, sizeof(what), "rank %d's record claims a key of more than %d bytes",
                 bad_rank, NBRMA_KEY_MAX_BYTES);
        MPIR_ERR_SETANDJUMP1(mpi_errno, MPI_ERR_OTHER, "**nbrmaengine", "**nbrmaengine %s", what);
    }
    *keys = MPL_malloc(max_bytes * nprocs, MPL_MEM_RMA);
    MPIR_ERR_CHKANDJUMP(*keys == NULL, mpi_errno, MPI_ERR_NO_MEM, "**nomem");
    if (max_bytes <= NBRMA_KEY_SLOT) {
        nbrma_key_entries_keys(entries, nprocs, rec_bytes, max_bytes, *keys);
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
