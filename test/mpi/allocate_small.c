/*
 * MPI_Win_allocate with 8 bytes per process: each process accumulates into
 * and puts to its right neighbour, and every value must land at the process it
 * was aimed at, on UCX memory (the default) and on MPICH's own allocation
 * (info mpich_nbrma_ucx_memory=false), with fence and with lock epochs.
 *
 * Vanilla MPICH 4.0.2 (ch4:ucx) lets rank 1's accumulates land at rank 0
 * with this size.
 *
 * Run with 2 to 4 processes.
 */
#include "nbrma_test.h"
#include <stdint.h>
#include <string.h>

static void run(const char *ucx_memory, int rank, int nprocs)
{
    MPI_Info info;
    MPI_Win win;
    int64_t *mem, mine = 100 + rank, got = -1;
    int right = (rank + 1) % nprocs, left = (rank + nprocs - 1) % nprocs;

    MPI_Info_create(&info);
    MPI_Info_set(info, "mpich_nbrma_ucx_memory", ucx_memory);
    CHECK_MPI(MPI_Win_allocate(sizeof(int64_t), sizeof(int64_t), info, MPI_COMM_WORLD, &mem,
                               &win));
    MPI_Info_free(&info);

    /* fence: an accumulate onto 0 */
    CHECK_MPI(MPI_Win_fence(0, win));
    *mem = 0;
    CHECK_MPI(MPI_Win_fence(0, win));
    CHECK_MPI(MPI_Accumulate(&mine, 1, MPI_INT64_T, right, 0, 1, MPI_INT64_T, MPI_SUM, win));
    CHECK_MPI(MPI_Win_fence(0, win));
    CHECK(*mem == 100 + left, "ucx memory %s: fence accumulate left %lld here, expected %lld",
          ucx_memory, (long long) *mem, (long long) (100 + left));
    /* the left neighbour's lock below needs none of my CPU (lock words):
     * my load above must be done before its put lands */
    CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));

    /* lock: a put, read back by its origin */
    CHECK_MPI(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, right, 0, win));
    int64_t put_value = 1000 + rank;
    CHECK_MPI(MPI_Put(&put_value, 1, MPI_INT64_T, right, 0, 1, MPI_INT64_T, win));
    CHECK_MPI(MPI_Win_flush(right, win));
    CHECK_MPI(MPI_Get(&got, 1, MPI_INT64_T, right, 0, 1, MPI_INT64_T, win));
    CHECK_MPI(MPI_Win_unlock(right, win));
    CHECK(got == put_value, "ucx memory %s: read back %lld from rank %d, expected %lld",
          ucx_memory, (long long) got, right, (long long) put_value);
    CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
    CHECK_MPI(MPI_Win_lock(MPI_LOCK_SHARED, rank, 0, win));
    CHECK(*mem == 1000 + left, "ucx memory %s: put left %lld here, expected %lld", ucx_memory,
          (long long) *mem, (long long) (1000 + left));
    CHECK_MPI(MPI_Win_unlock(rank, win));
    CHECK_MPI(MPI_Win_free(&win));
}

int main(int argc, char **argv)
{
    int rank, nprocs;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    run("true", rank, nprocs);
    run("false", rank, nprocs);
    return report_and_finalize();
}
