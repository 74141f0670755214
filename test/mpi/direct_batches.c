/*
 * Operations issued toward a granted epoch without the engine (many small ones
 * after the first, epochs/direct_ops.c): a blocking flush of one target
 * completes those toward it only, the nonblocking flushes and epoch ends count
 * them (older ones, not newer ones), a local flush frees large origin buffers,
 * fence and per-target lock epochs end with them complete. Every value is
 * checked at its target. Over tcp these are streams (rule R8: the first few
 * puts or gets toward a target between two flushes go as MPICH's messages,
 * the rest, and all of a flush after a long stream, by UCX): gets of what was
 * put read every value back, in long streams and alone.
 */
#include "nbrma_test.h"
#include <string.h>

#define N 200                   /* single-int puts per target and phase */
#define BIG (1 << 18)           /* ints: 1 MiB */
#define TIMEOUT 60.0

static int rank, nprocs;

static int value(int origin, int phase, int i)
{
    return origin * 100000 + phase * 1000 + i;
}

/* Window layout: per origin, N ints for each of 3 phases. */
static int *slot(int *base, int origin, int phase)
{
    return base + ((size_t) origin * 3 + phase) * N;
}

static void put_phase(MPI_Win win, int target, int phase, int *src)
{
    for (int i = 0; i < N; i++) {
        src[i] = value(rank, phase, i);
        CHECK_MPI(MPI_Put(&src[i], 1, MPI_INT, target, ((MPI_Aint) rank * 3 + phase) * N + i, 1,
                          MPI_INT, win));
    }
}

static int missing(int *base, int origin, int phase)
{
    int bad = 0;
    for (int i = 0; i < N; i++)
        bad += slot(base, origin, phase)[i] != value(origin, phase, i);
    return bad;
}

/* Gets of what this rank put toward `target` in phase 0: N per flush three
 * times, then one alone. */
static void get_back(MPI_Win win, int target)
{
    int *dst = malloc(N * sizeof(int));

    for (int round = 0; round < 4; round++) {
        int n = round < 3 ? N : 1, bad = 0;

        memset(dst, 0xff, N * sizeof(int));
        for (int i = 0; i < n; i++)
            CHECK_MPI(MPI_Get(&dst[i], 1, MPI_INT, target, ((MPI_Aint) rank * 3 + 0) * N + i, 1,
                              MPI_INT, win));
        CHECK_MPI(MPI_Win_flush(target, win));
        for (int i = 0; i < n; i++)
            bad += dst[i] != value(rank, 0, i);
        CHECK(bad == 0, "%d of %d gets from %d wrong after MPI_Win_flush (round %d)", bad, n,
              target, round);
    }
    free(dst);
}

static void test_passive(MPI_Win win, int *base)
{
    int next = (rank + 1) % nprocs, prev = (rank + nprocs - 1) % nprocs;
    int *src = malloc((size_t) nprocs * 3 * N * sizeof(int));
    MPI_Request req;

    CHECK_MPI(MPI_Win_lock_all(0, win));
    /* phase 0: to everyone, a blocking flush of one target */
    for (int t = 0; t < nprocs; t++)
        put_phase(win, t, 0, src + ((size_t) t * 3 + 0) * N);
    CHECK_MPI(MPI_Win_flush(next, win));
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK_MPI(MPI_Win_sync(win));
    CHECK(missing(base, prev, 0) == 0, "%d puts of %d missing after MPI_Win_flush of this target",
          missing(base, prev, 0), prev);
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK_MPI(MPI_Win_flush_all(win));
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK_MPI(MPI_Win_sync(win));
    for (int o = 0; o < nprocs; o++)
        CHECK(missing(base, o, 0) == 0, "%d puts of %d missing after MPI_Win_flush_all",
              missing(base, o, 0), o);
    get_back(win, next);

    /* phase 1 before a nonblocking flush of all, phase 2 after it */
    MPI_Barrier(MPI_COMM_WORLD);
    for (int t = 0; t < nprocs; t++)
        put_phase(win, t, 1, src + ((size_t) t * 3 + 1) * N);
    CHECK_MPI(MPIX_Win_iflush_all(win, &req));
    for (int t = 0; t < nprocs; t++)
        put_phase(win, t, 2, src + ((size_t) t * 3 + 2) * N);
    wait_or_abort(&req, TIMEOUT, "MPIX_Win_iflush_all after direct puts");
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK_MPI(MPI_Win_sync(win));
    for (int o = 0; o < nprocs; o++)
        CHECK(missing(base, o, 1) == 0, "%d puts of %d missing after MPIX_Win_iflush_all",
              missing(base, o, 1), o);
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK_MPI(MPIX_Win_iunlock_all(win, &req));
    wait_or_abort(&req, TIMEOUT, "MPIX_Win_iunlock_all after direct puts");
    MPI_Barrier(MPI_COMM_WORLD);
    for (int o = 0; o < nprocs; o++)
        CHECK(missing(base, o, 2) == 0, "%d puts of %d missing after MPIX_Win_iunlock_all",
              missing(base, o, 2), o);
    free(src);
}

/* Fence epochs and per-target exclusive locks, each ended with direct puts
 * and accumulates in flight. */
static void test_fence_and_locks(MPI_Win win, int *base)
{
    int next = (rank + 1) % nprocs, prev = (rank + nprocs - 1) % nprocs;
    int *src = malloc(3 * N * sizeof(int));
    int one = 1;

    memset(base, 0, (size_t) nprocs * 3 * N * sizeof(int));
    CHECK_MPI(MPI_Win_fence(0, win));
    put_phase(win, next, 0, src);
    for (int i = 0; i < N; i++)
        CHECK_MPI(MPI_Accumulate(&one, 1, MPI_INT, next, ((MPI_Aint) rank * 3 + 1) * N, 1,
                                 MPI_INT, MPI_SUM, win));
    CHECK_MPI(MPI_Win_fence(0, win));
    CHECK(missing(base, prev, 0) == 0, "%d puts of %d missing after the fence",
          missing(base, prev, 0), prev);
    CHECK(slot(base, prev, 1)[0] == N, "counter %d after %d accumulates in a fence epoch",
          slot(base, prev, 1)[0], N);
    CHECK_MPI(MPI_Win_fence(MPI_MODE_NOSUCCEED, win));

    for (int round = 0; round < 3; round++) {
        CHECK_MPI(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, next, 0, win));
        put_phase(win, next, 2, src);
        CHECK_MPI(MPI_Win_unlock(next, win));
    }
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK_MPI(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, rank, 0, win));
    CHECK(missing(base, prev, 2) == 0, "%d puts of %d missing after its unlock",
          missing(base, prev, 2), prev);
    CHECK_MPI(MPI_Win_unlock(rank, win));
    MPI_Barrier(MPI_COMM_WORLD);
    free(src);
}

/* PSCW epochs toward the next rank (the engine counts every operation of
 * the access epoch): N puts, then N gets of them, checked at the target and
 * at the origin. */
static void test_pscw(MPI_Win win, int *base)
{
    int next = (rank + 1) % nprocs, prev = (rank + nprocs - 1) % nprocs, bad = 0;
    int *src = malloc(N * sizeof(int)), *dst = malloc(N * sizeof(int));
    MPI_Group world, to_next, from_prev;

    MPI_Comm_group(MPI_COMM_WORLD, &world);
    MPI_Group_incl(world, 1, &next, &to_next);
    MPI_Group_incl(world, 1, &prev, &from_prev);
    memset(base, 0, (size_t) nprocs * 3 * N * sizeof(int));
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK_MPI(MPI_Win_post(from_prev, 0, win));
    CHECK_MPI(MPI_Win_start(to_next, 0, win));
    put_phase(win, next, 0, src);
    CHECK_MPI(MPI_Win_complete(win));
    CHECK_MPI(MPI_Win_wait(win));
    CHECK(missing(base, prev, 0) == 0, "%d puts of %d missing after its PSCW epoch",
          missing(base, prev, 0), prev);
    MPI_Barrier(MPI_COMM_WORLD);
    memset(dst, 0xff, N * sizeof(int));
    CHECK_MPI(MPI_Win_post(from_prev, 0, win));
    CHECK_MPI(MPI_Win_start(to_next, 0, win));
    for (int i = 0; i < N; i++)
        CHECK_MPI(MPI_Get(&dst[i], 1, MPI_INT, next, (MPI_Aint) rank * 3 * N + i, 1, MPI_INT,
                          win));
    CHECK_MPI(MPI_Win_complete(win));
    CHECK_MPI(MPI_Win_wait(win));
    for (int i = 0; i < N; i++)
        bad += dst[i] != value(rank, 0, i);
    CHECK(bad == 0, "%d of %d gets from %d wrong after their PSCW epoch", bad, N, next);
    MPI_Group_free(&to_next);
    MPI_Group_free(&from_prev);
    MPI_Group_free(&world);
    free(src);
    free(dst);
}

/* Two large puts (the second one direct): after MPI_Win_flush_local the
 * origin buffer is overwritten, and the target must get the original. */
static void test_flush_local(void)
{
    int next = (rank + 1) % nprocs, prev = (rank + nprocs - 1) % nprocs;
    int *base, *src = malloc(2 * (size_t) BIG * sizeof(int));
    MPI_Win win;

    CHECK_MPI(MPI_Win_allocate(2 * (MPI_Aint) BIG * sizeof(int), sizeof(int), MPI_INFO_NULL,
                               MPI_COMM_WORLD, &base, &win));
    memset(base, 0, 2 * (size_t) BIG * sizeof(int));
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK_MPI(MPI_Win_lock_all(0, win));
    for (size_t i = 0; i < 2 * (size_t) BIG; i++)
        src[i] = value(rank, 0, (int) (i % 997));
    CHECK_MPI(MPI_Put(src, BIG, MPI_INT, next, 0, BIG, MPI_INT, win));
    CHECK_MPI(MPI_Put(src + BIG, BIG, MPI_INT, next, BIG, BIG, MPI_INT, win));
    CHECK_MPI(MPI_Win_flush_local(next, win));
    memset(src, 0xee, 2 * (size_t) BIG * sizeof(int));
    CHECK_MPI(MPI_Win_flush(next, win));
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK_MPI(MPI_Win_sync(win));
    size_t bad = 0;
    for (size_t i = 0; i < 2 * (size_t) BIG; i++)
        bad += base[i] != value(prev, 0, (int) (i % 997));
    CHECK(bad == 0, "%zu ints of large puts wrong: the origin buffer was reused too early", bad);
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK_MPI(MPI_Win_unlock_all(win));
    CHECK_MPI(MPI_Win_free(&win));
    free(src);
}

int main(int argc, char **argv)
{
    int *base;
    MPI_Win win;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);

    CHECK_MPI(MPI_Win_allocate((MPI_Aint) nprocs * 3 * N * sizeof(int), sizeof(int),
                               MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win));
    memset(base, 0, (size_t) nprocs * 3 * N * sizeof(int));
    MPI_Barrier(MPI_COMM_WORLD);
    test_passive(win, base);
    test_fence_and_locks(win, base);
    test_pscw(win, base);
    CHECK_MPI(MPI_Win_free(&win));
    test_flush_local();
    return report_and_finalize();
}
