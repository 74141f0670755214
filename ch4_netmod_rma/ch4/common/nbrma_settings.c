/*
 * mpich-nbrma: the info-key helpers (nbrma_settings.h); values are parsed by
 * formats/user_strings.c.
 */

#include "mpidimpl.h"
#include "nbrma_settings.h"
#include "user_strings.h"

/* The value of `key` into buf (MPI_MAX_INFO_VAL + 1 bytes): whether there is one. */
static bool info_value(MPIR_Info * info, const char *key, char *buf)
{
    int flag = 0;

    return info != NULL && MPIR_Info_get_impl(info, key, MPI_MAX_INFO_VAL, buf, &flag) ==
        MPI_SUCCESS && flag;
}

bool MPIDI_NBRMA_info_get_bool(MPIR_Info * info, const char *key, bool *value)
{
    char buf[MPI_MAX_INFO_VAL + 1];

    return info_value(info, key, buf) && nbrma_parse_bool(buf, value);
}

bool MPIDI_NBRMA_info_is(MPIR_Info * info, const char *key, const char *value)
{
    char buf[MPI_MAX_INFO_VAL + 1];

    return info_value(info, key, buf) && !strcmp(buf, value);
}

bool MPIDI_NBRMA_info_get_size(MPIR_Info * info, const char *key, size_t * value)
{
    char buf[MPI_MAX_INFO_VAL + 1];

    return info_value(info, key, buf) && nbrma_parse_size(buf, value);
}

int MPIDI_NBRMA_info_set_bool(MPIR_Info * info, const char *key, bool value)
{
    return MPIR_Info_set_impl(info, key, value ? "true" : "false");
}

int MPIDI_NBRMA_info_set_all(MPIR_Info * info, const MPIDI_NBRMA_info_entry_t * entries, size_t n)
{
    int mpi_errno = MPI_SUCCESS;
    char buf[NBRMA_INFO_VALUE_BYTES];

    for (size_t i = 0; i < n && mpi_errno == MPI_SUCCESS; i++)
        mpi_errno = MPIR_Info_set_impl(info, entries[i].key,
                                       nbrma_info_entry_value(&entries[i], buf));
    return mpi_errno;
}

int MPIDI_NBRMA_all_agree(MPIR_Comm * comm, bool mine, bool *all)
{
    int mpi_errno = MPI_SUCCESS;
    MPIR_Errflag_t errflag = MPIR_ERR_NONE;
    unsigned mine_bit = mine ? 1u : 0u, all_bits = 0;

    mpi_errno = MPIR_Allreduce(&mine_bit, &all_bits, 1, MPI_UNSIGNED, MPI_BAND, comm, &errflag);
    MPIR_ERR_CHECK(mpi_errno);
    MPIR_ERR_CHKANDJUMP(errflag, mpi_errno, MPI_ERR_OTHER, "**coll_fail");
  fn_exit:
    *all = all_bits & 1u;
    return mpi_errno;
  fn_fail:
    all_bits = 0;
    goto fn_exit;
}
