/*
 * MPIX_Win_ilock, _iunlock, _ilock_all, _iunlock_all and the engine's flushes
 * on 2-4 ranks:
 *  - exclusive-lock counters: every rank increments a counter at every rank
 *    through 200 pending exclusive epochs (get, add, put: only the lock makes
 *    the read-modify-write atomic); the counters end exact;
 *  - shared locks and lock_all with accumulates;
 *  - 1000 pending lock epochs toward one target, one MPI_Waitall;
 *  - MPI_Request_free on epoch requests, pending ones included;
 *  - a process locking itself really takes the lock;
 *  - blocking and nonblocking lock calls mixed.
 */
#include "nbrma_test.h"
#include <string.h>

#define TIMEOUT 60.0
#define N_EXCL 200
#define N_PENDING 1000

static int rank, nprocs;

/* A non-atomic read-modify-write (get, then put of value+1) is only correct if
 * the exclusive lock serializes the epochs. All epochs are pending at once:
 * each get's result is needed before its put, so every epoch is closed with
 * its own wait here. The lock requests still overlap with other ranks'. */
static void test_exclusive_counters(void)
{
    long *base;
    MPI_Win win;

    CHECK_MPI(allocate_engine_win(SMALL_WIN_BYTES, sizeof(long), MPI_COMM_WORLD, &base, &win));
    base[0] = 0;
    base[1] = 0;
    MPI_Barrier(MPI_COMM_WORLD);
    for (int i = 0; i < N_EXCL; i++) {
        int target = (rank + i) % nprocs;
        long value = -1, next;
        MPI_Request lock_req, unlock_req;
        CHECK_MPI(MPIX_Win_ilock(MPI_LOCK_EXCLUSIVE, target, 0, win, &lock_req));
        CHECK_MPI(MPI_Get(&value, 1, MPI_LONG, target, 0, 1, MPI_LONG, win));
        CHECK_MPI(MPI_Win_flush(target, win));
        next = value + 1;
        CHECK_MPI(MPI_Put(&next, 1, MPI_LONG, target, 0, 1, MPI_LONG, win));
        CHECK_MPI(MPIX_Win_iunlock(target, win, &unlock_req));
        wait_or_abort(&lock_req, TIMEOUT, "MPIX_Win_ilock");
        wait_or_abort(&unlock_req, TIMEOUT, "MPIX_Win_iunlock");
    }
    /* the same with blocking calls, on the second counter, mixed with
     * nonblocking unlocks */
    for (int i = 0; i < N_EXCL; i++) {
        int target = (rank + i) % nprocs;
        long value = -1, next;
        MPI_Request unlock_req;
        CHECK_MPI(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, target, 0, win));
        CHECK_MPI(MPI_Get(&value, 1, MPI_LONG, target, 1, 1, MPI_LONG, win));
        CHECK_MPI(MPI_Win_flush(target, win));
        next = value + 1;
        CHECK_MPI(MPI_Put(&next, 1, MPI_LONG, target, 1, 1, MPI_LONG, win));
        if (i % 2) {
            CHECK_MPI(MPI_Win_unlock(target, win));
        } else {
            CHECK_MPI(MPIX_Win_iunlock(target, win, &unlock_req));
            wait_or_abort(&unlock_req, TIMEOUT, "MPIX_Win_iunlock");
        }
    }
    MPI_Barrier(MPI_COMM_WORLD);
    /* each rank received N_EXCL increments from every rank, spread evenly */
    {
        long expect = 0;
        for (int r = 0; r < nprocs; r++)
            for (int i = 0; i < N_EXCL; i++)
                expect += (r + i) % nprocs == rank;
        CHECK_MPI(MPI_Win_lock(MPI_LOCK_SHARED, rank, 0, win));
        CHECK(base[0] == expect, "nonblocking counter %ld, expected %ld", base[0], expect);
        CHECK(base[1] == expect, "blocking counter %ld, expected %ld", base[1], expect);
        CHECK_MPI(MPI_Win_unlock(rank, win));
    }
    CHECK_MPI(MPI_Win_free(&win));
}

/* Every rank opens N_PENDING shared lock epochs toward rank 0, each with one
 * accumulate, before waiting for any; then lock_all epochs the same way. */
static void test_pending_shared(void)
{
    long *base;
    MPI_Win win;
    static MPI_Request reqs[2 * N_PENDING];
    long one = 1;
    int n = 0;

    CHECK_MPI(allocate_engine_win(SMALL_WIN_BYTES, sizeof(long), MPI_COMM_WORLD, &base, &win));
    base[0] = 0;
    base[1] = 0;
    MPI_Barrier(MPI_COMM_WORLD);
    for (int e = 0; e < N_PENDING; e++) {
        CHECK_MPI(MPIX_Win_ilock(MPI_LOCK_SHARED, 0, 0, win, &reqs[n++]));
        CHECK_MPI(MPI_Accumulate(&one, 1, MPI_LONG, 0, 0, 1, MPI_LONG, MPI_SUM, win));
        CHECK_MPI(MPIX_Win_iunlock(0, win, &reqs[n++]));
    }
    wait_all_or_abort(n, reqs, TIMEOUT, "pending shared lock epochs");
    n = 0;
    /* MPI_Request_free on the epoch requests: every opening request, and
     * every other closing request while its epoch is still pending (the
     * epochs complete all the same: the sum below counts their updates) */
    for (int e = 0; e < 100; e++) {
        MPI_Request lock_all, unlock_all;
        CHECK_MPI(MPIX_Win_ilock_all(0, win, &lock_all));
        CHECK_MPI(MPI_Request_free(&lock_all));
        CHECK(lock_all == MPI_REQUEST_NULL, "MPI_Request_free left the request set");
        CHECK_MPI(MPI_Accumulate(&one, 1, MPI_LONG, 0, 1, 1, MPI_LONG, MPI_SUM, win));
        CHECK_MPI(MPIX_Win_iunlock_all(win, &unlock_all));
        if (e % 2 == 0)   /* the last one is waited for: epochs activate serially */
            CHECK_MPI(MPI_Request_free(&unlock_all));
        else
            reqs[n++] = unlock_all;
    }
    wait_all_or_abort(n, reqs, TIMEOUT, "pending lock_all epochs");
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) {
        CHECK_MPI(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, win));
        CHECK(base[0] == (long) nprocs * N_PENDING, "shared-lock sum %ld, expected %ld",
              base[0], (long) nprocs * N_PENDING);
        CHECK(base[1] == (long) nprocs * 100, "lock_all sum %ld, expected %ld", base[1],
              (long) nprocs * 100);
        CHECK_MPI(MPI_Win_unlock(0, win));
    }
    CHECK_MPI(MPI_Win_free(&win));
}

/* Rank 0 locks itself exclusively and holds the lock while rank 1 asks for
 * it: rank 1's lock must not be granted before rank 0 unlocks. */
static void test_self_lock(void)
{
    long *base;
    MPI_Win win;
    int token = 0;

    CHECK_MPI(allocate_engine_win(SMALL_WIN_BYTES, sizeof(long), MPI_COMM_WORLD, &base, &win));
    base[0] = 0;
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) {
        long v = 1;
        CHECK_MPI(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, win));
        MPI_Send(&token, 1, MPI_INT, 1, 0, MPI_COMM_WORLD);
        /* give rank 1's request time to arrive while the lock is held */
        double until = MPI_Wtime() + 0.2;
        while (MPI_Wtime() < until)
            CHECK_MPI(MPI_Win_flush(0, win));
        CHECK_MPI(MPI_Put(&v, 1, MPI_LONG, 0, 0, 1, MPI_LONG, win));
        CHECK_MPI(MPI_Win_unlock(0, win));
    } else if (rank == 1) {
        long seen = -1;
        MPI_Request lock_req, unlock_req;
        MPI_Recv(&token, 1, MPI_INT, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        CHECK_MPI(MPIX_Win_ilock(MPI_LOCK_EXCLUSIVE, 0, 0, win, &lock_req));
        CHECK_MPI(MPI_Get(&seen, 1, MPI_LONG, 0, 0, 1, MPI_LONG, win));
        CHECK_MPI(MPIX_Win_iunlock(0, win, &unlock_req));
        wait_or_abort(&lock_req, TIMEOUT, "MPIX_Win_ilock");
        wait_or_abort(&unlock_req, TIMEOUT, "MPIX_Win_iunlock");
        CHECK(seen == 1, "read %ld inside rank 0's self-locked epoch, expected 1 after it", seen);
    }
    CHECK_MPI(MPI_Win_free(&win));
}

/* Nonblocking flushes on an engine window: a per-target flush and a flush of
 * all, each after operations of the active lock_all epoch; the data is checked
 * at the target before the epoch ends. */
static void test_iflush_in_engine(void)
{
    long *base;
    MPI_Win win;
    MPI_Request f1, f2;
    long vals[2] = { 11, 22 };

    CHECK_MPI(allocate_engine_win(SMALL_WIN_BYTES, sizeof(long), MPI_COMM_WORLD, &base, &win));
    for (int i = 0; i < 8; i++)
        base[i] = 0;
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK_MPI(MPI_Win_lock_all(0, win));
    if (rank == 0) {
        CHECK_MPI(MPI_Put(&vals[0], 1, MPI_LONG, 1, 0, 1, MPI_LONG, win));
        CHECK_MPI(MPIX_Win_iflush(1, win, &f1));
        CHECK_MPI(MPI_Accumulate(&vals[1], 1, MPI_LONG, 1, 1, 1, MPI_LONG, MPI_SUM, win));
        CHECK_MPI(MPIX_Win_iflush_all(win, &f2));
        wait_or_abort(&f1, TIMEOUT, "MPIX_Win_iflush");
        wait_or_abort(&f2, TIMEOUT, "MPIX_Win_iflush_all");
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 1) {
        CHECK_MPI(MPI_Win_sync(win));
        CHECK(base[0] == 11 && base[1] == 22, "target holds %ld %ld, expected 11 22",
              base[0], base[1]);
    }
    CHECK_MPI(MPI_Win_unlock_all(win));
    CHECK_MPI(MPI_Win_free(&win));
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    test_exclusive_counters();
    test_pending_shared();
    test_self_lock();
    test_iflush_in_engine();
    return report_and_finalize();
}
