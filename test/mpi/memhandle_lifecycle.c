/*
 * Many memory handles and memory-handle windows created and freed in a loop
 * leave nothing behind: the parent window's counts of registrations and of
 * memory-handle windows (reported by MPI_Win_get_info as
 * mpix_memhandle_registrations and mpix_memhandle_windows) go back to zero,
 * and every round's data arrives. Parents are created and freed in an outer
 * loop too, once with a handle left unreleased (the parent's free releases it).
 * Argument "tcp": UCX over tcp only.
 */
#include "nbrma_test.h"
#include <string.h>

#define PARENTS 3
#define ROUNDS 100
#define LONGS 64

static long info_count(MPI_Win win, const char *key)
{
    char value[MPI_MAX_INFO_VAL + 1];
    int flag = win_info_value(win, key, value);
    CHECK(flag, "MPI_Win_get_info of the parent has no %s", key);
    return flag ? atol(value) : -1;
}

int main(int argc, char **argv)
{
    int rank, nprocs;

    use_tcp_only_if_asked(argc, argv);
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    const int right = (rank + 1) % nprocs, left = (rank + nprocs - 1) % nprocs;
    char *handles = malloc((size_t) nprocs * MPIX_MAX_MEMHANDLE_SIZE);
    MPI_Win *wins = malloc(nprocs * sizeof(MPI_Win));

    for (int p = 0; p < PARENTS; p++) {
        MPI_Win parent;
        CHECK_MPI(MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &parent));

        for (int round = 0; round < ROUNDS; round++) {
            long *buf = calloc(LONGS, sizeof(long));     /* fresh memory every round */
            long value = 100000L * p + 100L * round + rank;
            int size;

            CHECK_MPI(MPIX_Memhandle_create(buf, LONGS * sizeof(long), MPI_INFO_NULL, parent,
                                            handles + rank * MPIX_MAX_MEMHANDLE_SIZE, &size));
            CHECK_MPI(MPI_Allgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, handles,
                                    MPIX_MAX_MEMHANDLE_SIZE, MPI_BYTE, MPI_COMM_WORLD));
            for (int t = 0; t < nprocs; t++)
                CHECK_MPI(MPIX_Win_from_memhandle(handles + t * MPIX_MAX_MEMHANDLE_SIZE,
                                                  LONGS * sizeof(long), sizeof(long),
                                                  MPI_INFO_NULL, t, parent, &wins[t]));
            if (round == 0) {
                CHECK(info_count(parent, "mpix_memhandle_registrations") == 1,
                      "one registration expected while a handle is live");
                CHECK(info_count(parent, "mpix_memhandle_windows") == nprocs,
                      "%d memory-handle windows expected", nprocs);
            }
            CHECK_MPI(MPI_Win_lock(MPI_LOCK_SHARED, right, 0, parent));
            CHECK_MPI(MPI_Put(&value, 1, MPI_LONG, right, round % LONGS, 1, MPI_LONG,
                              wins[right]));
            CHECK_MPI(MPI_Win_unlock(right, parent));
            for (int t = 0; t < nprocs; t++)
                CHECK_MPI(MPI_Win_free(&wins[t]));
            MPI_Barrier(MPI_COMM_WORLD);
            CHECK(buf[round % LONGS] == 100000L * p + 100L * round + left,
                  "parent %d round %d: %ld arrived from the left", p, round,
                  buf[round % LONGS]);

            /* the last round of the last parent leaves its handle to MPI_Win_free */
            if (!(p == PARENTS - 1 && round == ROUNDS - 1)) {
                CHECK_MPI(MPIX_Memhandle_release(handles + rank * MPIX_MAX_MEMHANDLE_SIZE,
                                                 parent));
                free(buf);
            } else {
                CHECK_MPI(MPI_Win_free(&parent));
                free(buf);
                break;
            }
        }
        if (p == PARENTS - 1)
            break;
        CHECK(info_count(parent, "mpix_memhandle_registrations") == 0,
              "parent %d: registrations left after the loop", p);
        CHECK(info_count(parent, "mpix_memhandle_windows") == 0,
              "parent %d: memory-handle windows left after the loop", p);
        CHECK_MPI(MPI_Win_free(&parent));
    }

    free(wins);
    free(handles);
    return report_and_finalize();
}
