/*
 * MPI_Finalize over UCX's tcp transport (what ranks on hosts without shared
 * memory or an RDMA network use): every rank must get out. MPICH 4.0.2's
 * UCX netmod closes its endpoints in flush mode, which needs the peers to
 * progress their UCX workers, and then waits in a PMI barrier, which does
 * not: a rank whose closes finished first sat in the barrier while another
 * still waited for it (patch 0026). Rank 0 enters MPI_Finalize a second
 * after the others, after some RMA and point-to-point traffic, so that the
 * others finish their closes while it is still away.
 *
 * Sets UCX_TLS=tcp,self itself (before MPI_Init). Run with 2 or more
 * processes, under a time limit: a hang fails.
 */
#include "nbrma_test.h"
#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    int rank, nprocs;
    int64_t *mem, one = 1, sum = 0;
    MPI_Win win;

    setenv("UCX_TLS", "tcp,self", 1);
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);

    CHECK_MPI(MPI_Win_allocate(64, sizeof(int64_t), MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &win));
    mem[0] = 0;
    CHECK_MPI(MPI_Win_fence(0, win));
    for (int t = 0; t < nprocs; t++)
        CHECK_MPI(MPI_Accumulate(&one, 1, MPI_INT64_T, t, 0, 1, MPI_INT64_T, MPI_SUM, win));
    CHECK_MPI(MPI_Win_fence(0, win));
    CHECK(mem[0] == nprocs, "rank %d: %lld increments, expected %d", rank, (long long) mem[0],
          nprocs);
    CHECK_MPI(MPI_Win_free(&win));
    CHECK_MPI(MPI_Allreduce(&one, &sum, 1, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD));
    CHECK(sum == nprocs, "allreduce %lld", (long long) sum);

    int total = 0;
    MPI_Reduce(&nbrma_test_errors, &total, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
    if (rank == 0) {
        printf(total ? " Found %d errors\n" : " No Errors\n", total);
        fflush(stdout);
        sleep(1);       /* the others are in MPI_Finalize meanwhile */
    }
    MPI_Finalize();
    return total != 0;
}
