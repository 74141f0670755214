/*
 * Accumulates as UCX atomics next to MPICH's active-message accumulates: every
 * process hammers one counter at rank 0 with MPI_Fetch_and_op (UCX atomics on
 * a window of UCX memory) while it also accumulates doubles into another
 * element (active messages), adds into three strided elements with one
 * MPI_Accumulate of a vector type (UCX atomics, element by element), swaps a
 * word with MPI_REPLACE and reads it with MPI_NO_OP, and hits one word with
 * MPI_Fetch_and_op (UCX's atomics) and with a two-element MPI_Accumulate
 * over it and the next (the CPU's atomics on mapped memory, rule R2: many
 * elements; MPICH's messages across hosts) at once. No update may be lost,
 * every fetched counter value must be unique, and all of it must hold on a
 * window whose info key switches native atomics off (active messages
 * throughout) as on the default one.
 *
 * Run with 2 to 4 processes.
 */
#include "nbrma_test.h"
#include <stdint.h>
#include <string.h>

#define ROUNDS 2000
enum { COUNTER, DOUBLE_SUM, STRIDED = 2, /* 2, 4, 6 */ SWAPPED = 8, MIXED = 9, /* and 10 */
    N_WORDS = 11
};

static int compare_int64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *) a, y = *(const int64_t *) b;
    return (x > y) - (x < y);
}

static void run(const char *native, int rank, int nprocs)
{
    MPI_Info info;
    MPI_Win win;
    MPI_Datatype strided;
    int64_t *mem, *fetched = malloc(ROUNDS * sizeof(int64_t));
    int64_t *all = rank == 0 ? malloc((size_t) nprocs * ROUNDS * sizeof(int64_t)) : NULL;
    const int64_t one = 1, ones[3] = { 1, 1, 1 };
    int64_t ignored;
    const double half = 0.5;

    MPI_Info_create(&info);
    MPI_Info_set(info, "mpich_nbrma_native_atomics", native);
    CHECK_MPI(MPI_Win_allocate(N_WORDS * sizeof(int64_t), sizeof(int64_t), info, MPI_COMM_WORLD,
                               &mem, &win));
    MPI_Info_free(&info);
    check_win_info(win, "mpich_nbrma_native_atomics", native, "native atomics asked");
    MPI_Type_vector(3, 1, 2, MPI_INT64_T, &strided);
    MPI_Type_commit(&strided);

    CHECK_MPI(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, rank, 0, win));
    memset(mem, 0, N_WORDS * sizeof(int64_t));
    CHECK_MPI(MPI_Win_unlock(rank, win));
    CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));

    CHECK_MPI(MPI_Win_lock_all(0, win));
    for (int i = 0; i < ROUNDS; i++) {
        int64_t mine = rank + 1, old = -1, seen = -1;
        CHECK_MPI(MPI_Fetch_and_op(&one, &fetched[i], MPI_INT64_T, 0, COUNTER, MPI_SUM, win));
        CHECK_MPI(MPI_Accumulate(&half, 1, MPI_DOUBLE, 0, DOUBLE_SUM, 1, MPI_DOUBLE, MPI_SUM,
                                 win));
        CHECK_MPI(MPI_Accumulate(ones, 3, MPI_INT64_T, 0, STRIDED, 1, strided, MPI_SUM, win));
        CHECK_MPI(MPI_Fetch_and_op(&mine, &old, MPI_INT64_T, 0, SWAPPED, MPI_REPLACE, win));
        CHECK_MPI(MPI_Fetch_and_op(NULL, &seen, MPI_INT64_T, 0, SWAPPED, MPI_NO_OP, win));
        CHECK_MPI(MPI_Fetch_and_op(&one, &ignored, MPI_INT64_T, 0, MIXED, MPI_SUM, win));
        CHECK_MPI(MPI_Accumulate(ones, 2, MPI_INT64_T, 0, MIXED, 2, MPI_INT64_T, MPI_SUM, win));
        CHECK_MPI(MPI_Win_flush(0, win));
        if ((old < 0 || old > nprocs || seen < 1 || seen > nprocs) && !nbrma_test_errors)
            CHECK(0, "swapped word: old %lld, seen %lld", (long long) old, (long long) seen);
    }
    CHECK_MPI(MPI_Win_unlock_all(win));
    CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));

    MPI_Gather(fetched, ROUNDS, MPI_INT64_T, all, ROUNDS, MPI_INT64_T, 0, MPI_COMM_WORLD);
    if (rank == 0) {
        int64_t total = (int64_t) nprocs * ROUNDS;
        CHECK_MPI(MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win));
        CHECK(mem[COUNTER] == total, "native %s: counter %lld, expected %lld", native,
              (long long) mem[COUNTER], (long long) total);
        double dsum;
        memcpy(&dsum, &mem[DOUBLE_SUM], sizeof(dsum));
        CHECK(dsum == 0.5 * total, "native %s: double sum %g, expected %g", native, dsum,
              0.5 * total);
        for (int k = 0; k < 3; k++)
            CHECK(mem[STRIDED + 2 * k] == total && mem[STRIDED + 2 * k + 1] == 0,
                  "native %s: strided element %d is %lld (next %lld), expected %lld", native, k,
                  (long long) mem[STRIDED + 2 * k], (long long) mem[STRIDED + 2 * k + 1],
                  (long long) total);
        CHECK(mem[MIXED] == 2 * total && mem[MIXED + 1] == total,
              "native %s: the word both kinds of atomics hit is %lld (next %lld), expected "
              "%lld (%lld)", native, (long long) mem[MIXED], (long long) mem[MIXED + 1],
              (long long) 2 * total, (long long) total);
        CHECK_MPI(MPI_Win_unlock(0, win));
        /* each value of the counter was fetched exactly once */
        qsort(all, (size_t) total, sizeof(int64_t), compare_int64);
        for (int64_t v = 0; v < total; v++) {
            if (all[v] != v) {
                CHECK(0, "native %s: fetched counter values are not 0..%lld (at %lld: %lld)",
                      native, (long long) total - 1, (long long) v, (long long) all[v]);
                break;
            }
        }
    }
    MPI_Type_free(&strided);
    CHECK_MPI(MPI_Win_free(&win));
    free(fetched);
    free(all);
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
