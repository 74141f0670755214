/*
 * Stress: windows created and freed N times (default 10^4) while the ranks
 * keep epochs in flight on a long-lived window. Each round every rank opens
 * a nonblocking shared-lock epoch on the long-lived window with an
 * accumulate toward its right neighbour, then creates a window (the kind
 * rotates: MPI_Win_create over MPI_Alloc_mem memory, MPI_Win_allocate, an
 * engine window, MPI_Win_create_dynamic with memory attached), puts a
 * value of its own into its left neighbour's, checks what its right
 * neighbour put into its own, frees it, and only then waits for the long-lived
 * epoch. At the end every rank checks its long-lived counter holds exactly
 * N accumulates. Memory: the resident set after the first tenth of the
 * rounds and at the end must not differ by more than MAX_GROWTH (UCX's
 * registrations and rkeys are part of it): a leak of a few hundred bytes
 * per window would exceed it; and the process's memory mappings (UCX's
 * shared-memory segments among them) must be as many at the end as then.
 *
 *   stress_window_churn [N]
 */
#include <stdint.h>
#include <unistd.h>
#include "nbrma_test.h"

#define MAX_GROWTH (8L << 20)
#define KINDS 4

/* One round on a short-lived window of kind `kind`: a fence epoch in which
 * every rank puts `value` into its left neighbour, checked at the target. */
static void churn_round(int kind, int64_t value, int rank, int nprocs)
{
    MPI_Win win;
    int64_t *mem = NULL;
    MPI_Aint disp = 0;
    int left = (rank + nprocs - 1) % nprocs, right = (rank + 1) % nprocs;
    int64_t from_right = value - rank + right;  /* the right neighbour's value */

    switch (kind) {
        case 0:
            CHECK_MPI(MPI_Alloc_mem(64, MPI_INFO_NULL, &mem));
            CHECK_MPI(MPI_Win_create(mem, 64, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &win));
            break;
        case 1:
            CHECK_MPI(MPI_Win_allocate(SMALL_WIN_BYTES, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &mem,
                                       &win));
            break;
        case 2:
            CHECK_MPI(allocate_engine_win(SMALL_WIN_BYTES, 1, MPI_COMM_WORLD, &mem, &win));
            break;
        default:{
                MPI_Aint mine;
                CHECK_MPI(MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &win));
                CHECK_MPI(MPI_Alloc_mem(64, MPI_INFO_NULL, &mem));
                CHECK_MPI(MPI_Win_attach(win, mem, 64));
                MPI_Get_address(mem, &mine);
                /* the left neighbour's address, for my put into it */
                CHECK_MPI(MPI_Sendrecv(&mine, 1, MPI_AINT, right, 0, &disp, 1,
                                       MPI_AINT, left, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
            }
    }
    *mem = -1;
    CHECK_MPI(MPI_Win_fence(0, win));
    CHECK_MPI(MPI_Put(&value, 1, MPI_INT64_T, left, disp, 1, MPI_INT64_T, win));
    CHECK_MPI(MPI_Win_fence(0, win));
    CHECK(*mem == from_right, "window kind %d: holds %ld, the right neighbour put %ld", kind,
          (long) *mem, (long) from_right);
    if (kind == 3)
        CHECK_MPI(MPI_Win_detach(win, mem));
    CHECK_MPI(MPI_Win_free(&win));
    if (kind == 0 || kind == 3)
        CHECK_MPI(MPI_Free_mem(mem));
}

int main(int argc, char **argv)
{
    int rank, nprocs;
    long n = argc > 1 ? atol(argv[1]) : 10000;
    int64_t *counter;
    MPI_Win longlived;
    long rss_early = 0;
    int mappings_early = 0;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    CHECK_MPI(allocate_engine_win(SMALL_WIN_BYTES, 1, MPI_COMM_WORLD, &counter, &longlived));
    *counter = 0;
    CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
    double t0 = MPI_Wtime(), deadline = t0 + 150.0;
    int right = (rank + 1) % nprocs;
    const int64_t one = 1;

    for (long i = 0; i < n; i++) {
        MPI_Request locked, unlocked;
        CHECK_MPI(MPIX_Win_ilock(MPI_LOCK_SHARED, right, 0, longlived, &locked));
        CHECK_MPI(MPI_Accumulate(&one, 1, MPI_INT64_T, right, 0, 1, MPI_INT64_T, MPI_SUM,
                                 longlived));
        CHECK_MPI(MPIX_Win_iunlock(right, longlived, &unlocked));
        churn_round((int) (i % KINDS), (int64_t) i * nprocs + rank, rank, nprocs);
        wait_or_abort(&locked, deadline - MPI_Wtime(), "MPIX_Win_ilock on the long-lived window");
        wait_or_abort(&unlocked, deadline - MPI_Wtime(), "MPIX_Win_iunlock");
        if (i == n / 10) {
            rss_early = rss_bytes();
            mappings_early = mapping_count();
        }
        if (MPI_Wtime() > deadline) {
            fprintf(stderr, "rank %d: only %ld of %ld rounds in time\n", rank, i, n);
            MPI_Abort(MPI_COMM_WORLD, 3);
        }
    }
    long growth = rss_bytes() - rss_early;
    int mappings_growth = mapping_count() - mappings_early, max_mappings_growth = 0;
    double secs = MPI_Wtime() - t0;

    CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
    CHECK_MPI(MPI_Win_lock(MPI_LOCK_SHARED, rank, 0, longlived));
    CHECK(*counter == n, "long-lived counter %ld after %ld rounds", (long) *counter, n);
    CHECK_MPI(MPI_Win_unlock(rank, longlived));
    CHECK_MPI(MPI_Win_free(&longlived));

    long max_growth = 0;
    MPI_Reduce(&growth, &max_growth, 1, MPI_LONG, MPI_MAX, 0, MPI_COMM_WORLD);
    MPI_Reduce(&mappings_growth, &max_mappings_growth, 1, MPI_INT, MPI_MAX, 0, MPI_COMM_WORLD);
    if (rank == 0)
        printf("%ld windows created and freed per rank in %.1f s (%.0f us per window); resident "
               "memory grew by at most %ld KiB and memory mappings by at most %d from round "
               "%ld to the end\n", n, secs, secs / n * 1e6, max_growth / 1024,
               max_mappings_growth, n / 10);
    CHECK(growth <= MAX_GROWTH || sanitized_run(), "resident memory grew by %ld KiB", growth / 1024);
    CHECK(mappings_growth <= 0 || sanitized_run(), "%d more memory mappings", mappings_growth);
    return report_and_finalize();
}
