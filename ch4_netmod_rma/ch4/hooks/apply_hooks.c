/*
 * mpich-nbrma: the target side of MPIDIG's accumulates (patch 0025): a kind may
 * apply them itself (apply_acc, apply_cswap), as engine windows do for 1- and
 * 2-byte integers that origins update with UCX atomics (atomics/narrow_atomics.h).
 */

#include "mpidimpl.h"
#include "mpidi_nbrma_hooks.h"
#include "nbrma_win.h"

int MPIDI_NBRMA_acc_apply_hook(MPIR_Win * win, const void *origin, MPI_Aint origin_count,
                               MPI_Datatype origin_datatype, void *target_addr,
                               MPI_Aint target_count, MPI_Datatype target_datatype, MPI_Op op,
                               void *fetched, int *applied)
{
    const MPIDI_NBRMA_win_ops_t *ops = MPIDI_NBRMA_win_ops(win);
    const MPIDI_NBRMA_acc_apply_t acc = {
        .origin = origin,.origin_count = origin_count,.origin_datatype = origin_datatype,
        .target_addr = target_addr,.target_count = target_count,
        .target_datatype = target_datatype,.op = op,.fetched = fetched
    };
    bool done = false;
    int mpi_errno = ops->apply_acc ? ops->apply_acc(win, &acc, &done) : MPI_SUCCESS;

    *applied = done;
    return mpi_errno;
}

int MPIDI_NBRMA_cswap_apply_hook(MPIR_Win * win, void *target_addr, const void *origin,
                                 void *compare_result, MPI_Datatype datatype, int *applied)
{
    const MPIDI_NBRMA_win_ops_t *ops = MPIDI_NBRMA_win_ops(win);
    bool done = false;
    int mpi_errno = ops->apply_cswap ?
        ops->apply_cswap(win, target_addr, origin, compare_result, datatype, &done) : MPI_SUCCESS;

    *applied = done;
    return mpi_errno;
}
