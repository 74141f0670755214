/*
 * Memory from UCX is given back: 10^4 cycles of MPI_Alloc_mem + MPI_Win_create
 * + MPI_Win_free + MPI_Free_mem and 10^4 cycles of MPI_Win_allocate +
 * MPI_Win_free must not leave mappings behind (the count of lines in
 * /proc/self/maps after the cycles equals the count after the first ones) and
 * every window's memory must be UCX memory that RMA reaches (a put and a
 * fetch_and_op to the neighbour, checked there).
 *
 * Run with 2 processes.
 */
#include "nbrma_test.h"
#include <stdint.h>
#include <string.h>

#define CYCLES 10000
#define WARMUP 100

/* One RMA round on `win` (1 int64 per process), checked at the target. */
static void touch(MPI_Win win, int64_t * mem, int rank, int nprocs, int cycle)
{
    int right = (rank + 1) % nprocs;
    int64_t value = cycle, one = 1, old;

    *mem = 0;
    CHECK_MPI(MPI_Win_fence(0, win));
    CHECK_MPI(MPI_Put(&value, 1, MPI_INT64_T, right, 0, 1, MPI_INT64_T, win));
    CHECK_MPI(MPI_Win_fence(0, win));
    CHECK_MPI(MPI_Fetch_and_op(&one, &old, MPI_INT64_T, right, 0, MPI_SUM, win));
    CHECK_MPI(MPI_Win_fence(0, win));
    if ((*mem != cycle + 1 || old != cycle) && !nbrma_test_errors)
        CHECK(0, "cycle %d: window holds %lld, fetched %lld", cycle, (long long) *mem,
              (long long) old);
}

/* The first window of a kind must be UCX memory; every 100th is used. */
static void use_and_free(MPI_Win * win, int64_t * mem, int rank, int nprocs, int cycle,
                         const char *what)
{
    if (cycle == 0)
        check_win_info(*win, "mpich_nbrma_ucx_memory", "true", what);
    if (cycle % 100 == 0)
        touch(*win, mem, rank, nprocs, cycle);
    CHECK_MPI(MPI_Win_free(win));
}

int main(int argc, char **argv)
{
    int rank, nprocs, after_warmup = 0;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);

    for (int i = 0; i < CYCLES; i++) {
        int64_t *mem;
        MPI_Win win;
        CHECK_MPI(MPI_Alloc_mem(sizeof(int64_t), MPI_INFO_NULL, &mem));
        CHECK_MPI(MPI_Win_create(mem, sizeof(int64_t), sizeof(int64_t), MPI_INFO_NULL,
                                 MPI_COMM_WORLD, &win));
        use_and_free(&win, mem, rank, nprocs, i, "MPI_Win_create over MPI_Alloc_mem");
        CHECK_MPI(MPI_Free_mem(mem));

        CHECK_MPI(MPI_Win_allocate(sizeof(int64_t), sizeof(int64_t), MPI_INFO_NULL,
                                   MPI_COMM_WORLD, &mem, &win));
        use_and_free(&win, mem, rank, nprocs, i, "MPI_Win_allocate");
        if (i == WARMUP)
            after_warmup = mapping_count();
    }
    int at_end = mapping_count();
    CHECK(after_warmup > 0 && (at_end == after_warmup || sanitized_run()),
          "%d mappings after %d cycles, %d after %d", after_warmup, WARMUP, at_end, CYCLES);
    return report_and_finalize();
}
