/*
 * MPIX_Win_iflush, MPIX_Win_iflush_local and MPIX_Win_iflush_local_all: per-target
 * flushes complete once the operations to that target are complete there (data
 * checked at the target inside the epoch); local flushes complete once origin
 * buffers may be reused (the buffer is overwritten right after, and the target
 * must still receive the original data), also several in a row on create
 * windows; wrong use gets the standard classes.
 */
#include "nbrma_test.h"
#include <string.h>

#define BIG (1 << 20)   /* ints: 4 MiB, large enough for a rendezvous transfer */
#define TIMEOUT 60.0

static int rank, nprocs;

static int pattern(int origin, int target, int i)
{
    return origin * 1000003 + target * 7919 + i;
}

static int start_iflush(MPI_Win win, int target, MPI_Request * req)
{
    return MPIX_Win_iflush(target, win, req);
}

/* Under lock_all every rank puts into its slot at every other rank and flushes
 * each target with its own request; then each target checks its memory. */
static void test_iflush_each_target(void)
{
    int *base, *src = malloc(nprocs * (size_t) 1024 * sizeof(int));
    MPI_Request *reqs = malloc(nprocs * sizeof(MPI_Request));
    MPI_Win win;

    CHECK_MPI(MPI_Win_allocate((MPI_Aint) nprocs * 1024 * sizeof(int), sizeof(int),
                               MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win));
    memset(base, 0xff, nprocs * (size_t) 1024 * sizeof(int));
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK_MPI(MPI_Win_lock_all(0, win));
    for (int t = 0; t < nprocs; t++) {
        for (int i = 0; i < 1024; i++)
            src[t * 1024 + i] = pattern(rank, t, i);
        CHECK_MPI(MPI_Put(src + t * 1024, 1024, MPI_INT, t, rank * 1024, 1024, MPI_INT, win));
        CHECK_MPI(MPIX_Win_iflush(t, win, &reqs[t]));
    }
    for (int t = 0; t < nprocs; t++)
        wait_or_abort(&reqs[t], TIMEOUT, "MPIX_Win_iflush per target");
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK_MPI(MPI_Win_sync(win));
    for (int o = 0; o < nprocs; o++) {
        int bad = 0;
        for (int i = 0; i < 1024; i++)
            bad += base[o * 1024 + i] != pattern(o, rank, i);
        CHECK(bad == 0, "%d ints from origin %d missing after its MPIX_Win_iflush", bad, o);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK_MPI(MPI_Win_unlock_all(win));
    CHECK_MPI(MPI_Win_free(&win));
    free(reqs);
    free(src);
}

/* Inside MPI_Win_lock (shared, one target), a flush of that target. */
static void test_iflush_in_lock_epoch(void)
{
    long *base;
    MPI_Win win;
    const int target = (rank + 1) % nprocs;

    CHECK_MPI(MPI_Win_allocate(SMALL_WIN_BYTES, sizeof(long), MPI_INFO_NULL, MPI_COMM_WORLD,
                               &base, &win));
    base[0] = 0;
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK_MPI(MPI_Win_lock(MPI_LOCK_SHARED, target, 0, win));
    for (int k = 1; k <= 100; k++) {
        long add = k;
        MPI_Request req;
        CHECK_MPI(MPI_Accumulate(&add, 1, MPI_LONG, target, 0, 1, MPI_LONG, MPI_SUM, win));
        CHECK_MPI(MPIX_Win_iflush(target, win, &req));
        wait_or_abort(&req, TIMEOUT, "MPIX_Win_iflush inside MPI_Win_lock");
    }
    CHECK_MPI(MPI_Win_unlock(target, win));
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK_MPI(MPI_Win_lock(MPI_LOCK_SHARED, rank, 0, win));
    CHECK(base[0] == 5050, "accumulated %ld at the target, expected 5050", base[0]);
    CHECK_MPI(MPI_Win_unlock(rank, win));
    CHECK_MPI(MPI_Win_free(&win));
}

/* After a local flush the origin buffer is the application's again: overwrite
 * it, and the target must still get what was put before. */
static void local_flush_then_reuse(int all)
{
    int *base, *src = malloc(BIG * sizeof(int));
    MPI_Win win;
    MPI_Request req;
    const int target = (rank + 1) % nprocs, origin = (rank + nprocs - 1) % nprocs;

    CHECK_MPI(MPI_Win_allocate((MPI_Aint) BIG * sizeof(int), sizeof(int), MPI_INFO_NULL,
                               MPI_COMM_WORLD, &base, &win));
    memset(base, 0, BIG * sizeof(int));
    for (int i = 0; i < BIG; i++)
        src[i] = pattern(rank, target, i);
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK_MPI(MPI_Win_lock_all(0, win));
    CHECK_MPI(MPI_Put(src, BIG, MPI_INT, target, 0, BIG, MPI_INT, win));
    if (all)
        CHECK_MPI(MPIX_Win_iflush_local_all(win, &req));
    else
        CHECK_MPI(MPIX_Win_iflush_local(target, win, &req));
    wait_or_abort(&req, TIMEOUT, all ? "MPIX_Win_iflush_local_all" : "MPIX_Win_iflush_local");
    memset(src, 0xab, BIG * sizeof(int));       /* reuse the origin buffer */
    CHECK_MPI(MPIX_Win_iflush(target, win, &req));
    wait_or_abort(&req, TIMEOUT, "MPIX_Win_iflush after a local flush");
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK_MPI(MPI_Win_sync(win));
    int bad = 0;
    for (int i = 0; i < BIG; i++)
        bad += base[i] != pattern(origin, rank, i);
    CHECK(bad == 0, "%s: %d of %d ints wrong at the target after the origin reused its buffer",
          all ? "iflush_local_all" : "iflush_local", bad, BIG);
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK_MPI(MPI_Win_unlock_all(win));
    CHECK_MPI(MPI_Win_free(&win));
    free(src);
}

static void test_wrong_use(void)
{
    int *base;
    MPI_Win win;
    MPI_Request req = MPI_REQUEST_NULL;
    int rc, done = 0;

    CHECK_MPI(MPI_Win_allocate(SMALL_WIN_BYTES, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD,
                               &base, &win));
    CHECK_MPI(MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN));

    rc = MPIX_Win_iflush(0, win, &req);
    CHECK(error_class(rc) == MPI_ERR_RMA_SYNC, "iflush outside an epoch: class %d",
          error_class(rc));
    rc = MPIX_Win_iflush_local(0, win, &req);
    CHECK(error_class(rc) == MPI_ERR_RMA_SYNC, "iflush_local outside an epoch: class %d",
          error_class(rc));
    rc = MPIX_Win_iflush_local_all(win, &req);
    CHECK(error_class(rc) == MPI_ERR_RMA_SYNC, "iflush_local_all outside an epoch: class %d",
          error_class(rc));
    CHECK(req == MPI_REQUEST_NULL, "a failed call handed out a request");

    if (nprocs > 1) {   /* a lock on one target does not allow flushing another */
        const int locked = (rank + 1) % nprocs;
        CHECK_MPI(MPI_Win_lock(MPI_LOCK_SHARED, locked, 0, win));
        rc = MPIX_Win_iflush(rank, win, &req);
        CHECK(error_class(rc) == MPI_ERR_RMA_SYNC, "iflush of an unlocked target: class %d",
              error_class(rc));
        CHECK_MPI(MPI_Win_unlock(locked, win));
    }

    CHECK_MPI(MPI_Win_lock_all(0, win));
    rc = MPIX_Win_iflush(nprocs, win, &req);
    CHECK(error_class(rc) == MPI_ERR_RANK, "rank out of range: class %d", error_class(rc));
    rc = MPIX_Win_iflush_local(-7, win, &req);
    CHECK(error_class(rc) == MPI_ERR_RANK, "negative rank: class %d", error_class(rc));
    CHECK_MPI(MPIX_Win_iflush(MPI_PROC_NULL, win, &req));
    CHECK_MPI(MPI_Test(&req, &done, MPI_STATUS_IGNORE));
    CHECK(done, "a flush of MPI_PROC_NULL is not complete at once");
    CHECK_MPI(MPI_Win_unlock_all(win));
    CHECK_MPI(MPI_Win_free(&win));
}

/* Local flushes one after the other toward one target, on a window over
 * memory of MPI_Win_allocate or of malloc: a blocking one while a
 * nonblocking one is in flight, then two nonblocking ones with an operation
 * between them; each origin buffer is overwritten as soon as a local flush
 * that covers it completed, and the target must still get every original.
 * A local flush that took the operations of an earlier one in flight as
 * complete would let a buffer be overwritten before its transfer read it. */
static void local_flushes_in_a_row(int create)
{
    const int part = BIG / 4;
    int *base, *src[3];
    MPI_Win win;
    MPI_Request first, second;
    const int target = (rank + 1) % nprocs, origin = (rank + nprocs - 1) % nprocs;

    if (create) {
        base = malloc(3 * (size_t) part * sizeof(int));
        CHECK_MPI(MPI_Win_create(base, 3 * (MPI_Aint) part * sizeof(int), sizeof(int),
                                 MPI_INFO_NULL, MPI_COMM_WORLD, &win));
    } else
        CHECK_MPI(MPI_Win_allocate(3 * (MPI_Aint) part * sizeof(int), sizeof(int),
                                   MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win));
    memset(base, 0, 3 * (size_t) part * sizeof(int));
    for (int k = 0; k < 3; k++) {
        src[k] = malloc(part * sizeof(int));
        for (int i = 0; i < part; i++)
            src[k][i] = pattern(rank, target, k * part + i);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK_MPI(MPI_Win_lock_all(0, win));
    /* a first operation toward the target, flushed: the ones after it go
     * without the epoch machinery, counted per target (the path under test) */
    CHECK_MPI(MPI_Put(src[0], 1, MPI_INT, target, 0, 1, MPI_INT, win));
    CHECK_MPI(MPI_Win_flush(target, win));
    /* a blocking local flush while a nonblocking one is in flight */
    CHECK_MPI(MPI_Put(src[0], part, MPI_INT, target, 0, part, MPI_INT, win));
    CHECK_MPI(MPIX_Win_iflush_local(target, win, &first));
    CHECK_MPI(MPI_Win_flush_local(target, win));
    memset(src[0], 0xab, part * sizeof(int));
    wait_or_abort(&first, TIMEOUT, "MPIX_Win_iflush_local before MPI_Win_flush_local");
    /* two nonblocking ones, the second completed first */
    CHECK_MPI(MPI_Put(src[1], part, MPI_INT, target, part, part, MPI_INT, win));
    CHECK_MPI(MPIX_Win_iflush_local(target, win, &first));
    CHECK_MPI(MPI_Put(src[2], part, MPI_INT, target, 2 * part, part, MPI_INT, win));
    CHECK_MPI(MPIX_Win_iflush_local(target, win, &second));
    wait_or_abort(&second, TIMEOUT, "the second of two MPIX_Win_iflush_local");
    memset(src[2], 0xab, part * sizeof(int));
    memset(src[1], 0xab, part * sizeof(int));
    wait_or_abort(&first, TIMEOUT, "the first of two MPIX_Win_iflush_local");
    CHECK_MPI(MPI_Win_flush(target, win));
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK_MPI(MPI_Win_sync(win));
    int bad = 0;
    for (int i = 0; i < 3 * part; i++)
        bad += base[i] != pattern(origin, rank, i);
    CHECK(bad == 0, "local flushes in a row (%s window): %d of %d ints wrong at the target",
          create ? "create" : "allocate", bad, 3 * part);
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK_MPI(MPI_Win_unlock_all(win));
    CHECK_MPI(MPI_Win_free(&win));
    for (int k = 0; k < 3; k++)
        free(src[k]);
    if (create)
        free(base);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);

    test_iflush_each_target();
    test_iflush_in_lock_epoch();
    local_flush_then_reuse(0);
    local_flush_then_reuse(1);
    local_flushes_in_a_row(0);
    local_flushes_in_a_row(1);
    flush_waits_for_busy_target(start_iflush);
    test_wrong_use();
    return report_and_finalize();
}
