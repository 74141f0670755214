/*
 * MPIX_Win_iflush_all: the request completes only once every earlier RMA
 * operation of the caller on the window is complete at its target. Each check
 * of data happens at the target, inside the epoch (before any unlock), so only
 * the flush can have made the data arrive.
 */
#include "nbrma_test.h"
#include <string.h>

#define N 1024          /* ints per origin slot */
#define ROUNDS 20
#define TIMEOUT 30.0

static int rank, nprocs;

static int pattern(int origin, int round, int i)
{
    return origin * 1000003 + round * 7919 + i;
}

/* Every rank puts a pattern into its slot at every other rank, flushes with
 * MPIX_Win_iflush_all and then tells the targets, which check their memory. */
static void put_then_iflush(MPI_Win win, const int *base, MPI_Aint slot_disp(int target, int origin))
{
    for (int round = 0; round < ROUNDS; round++) {
        int src[N];
        MPI_Request req;

        CHECK_MPI(MPI_Win_lock_all(0, win));
        for (int t = 0; t < nprocs; t++) {
            if (t == rank)
                continue;
            for (int i = 0; i < N; i++)
                src[i] = pattern(rank, round, i);
            CHECK_MPI(MPI_Put(src, N, MPI_INT, t, slot_disp(t, rank), N, MPI_INT, win));
        }
        CHECK_MPI(MPIX_Win_iflush_all(win, &req));
        CHECK(req != MPI_REQUEST_NULL, "iflush_all returned MPI_REQUEST_NULL");
        wait_or_abort(&req, TIMEOUT, "MPIX_Win_iflush_all after puts");

        MPI_Barrier(MPI_COMM_WORLD);    /* every origin's flush is complete */
        CHECK_MPI(MPI_Win_sync(win));
        for (int o = 0; o < nprocs; o++) {
            if (o == rank)
                continue;
            const int *slot = base + o * N;
            int bad = 0;
            for (int i = 0; i < N; i++)
                bad += slot[i] != pattern(o, round, i);
            CHECK(bad == 0, "round %d: %d of %d ints from origin %d missing after its flush",
                  round, bad, N, o);
        }
        MPI_Barrier(MPI_COMM_WORLD);    /* checked before the next round overwrites */
        CHECK_MPI(MPI_Win_unlock_all(win));
    }
}

static MPI_Aint slot_of_allocated(int target, int origin)
{
    (void) target;
    return (MPI_Aint) origin * N;       /* disp_unit is sizeof(int) */
}

static MPI_Aint *dynamic_bases;         /* address of each rank's attached buffer */

static MPI_Aint slot_of_dynamic(int target, int origin)
{
    return MPI_Aint_add(dynamic_bases[target], (MPI_Aint) origin * N * sizeof(int));
}

static void test_allocated_window(void)
{
    int *base;
    MPI_Win win;
    CHECK_MPI(MPI_Win_allocate((MPI_Aint) nprocs * N * sizeof(int), sizeof(int), MPI_INFO_NULL,
                               MPI_COMM_WORLD, &base, &win));
    memset(base, 0xff, (size_t) nprocs * N * sizeof(int));
    MPI_Barrier(MPI_COMM_WORLD);
    put_then_iflush(win, base, slot_of_allocated);
    CHECK_MPI(MPI_Win_free(&win));
}

/* Accumulates travel as active messages: the flush must wait for the target's
 * acknowledgement, not just for the network. */
static void test_accumulate_counters(void)
{
    long *counter;
    MPI_Win win;
    CHECK_MPI(MPI_Win_allocate(SMALL_WIN_BYTES, sizeof(long), MPI_INFO_NULL, MPI_COMM_WORLD,
                               &counter, &win));
    *counter = 0;
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK_MPI(MPI_Win_lock_all(0, win));
    for (int round = 1; round <= ROUNDS; round++) {
        MPI_Request req;
        long one = 1;
        for (int t = 0; t < nprocs; t++)
            CHECK_MPI(MPI_Accumulate(&one, 1, MPI_LONG, t, 0, 1, MPI_LONG, MPI_SUM, win));
        CHECK_MPI(MPIX_Win_iflush_all(win, &req));
        wait_or_abort(&req, TIMEOUT, "MPIX_Win_iflush_all after accumulates");
        MPI_Barrier(MPI_COMM_WORLD);
        long seen;
        /* read through MPI: a local load could race with accumulates in flight */
        CHECK_MPI(MPI_Fetch_and_op(NULL, &seen, MPI_LONG, rank, 0, MPI_NO_OP, win));
        CHECK_MPI(MPI_Win_flush(rank, win));
        CHECK(seen == (long) round * nprocs, "round %d: counter is %ld, expected %ld", round,
              seen, (long) round * nprocs);
        MPI_Barrier(MPI_COMM_WORLD);
    }
    CHECK_MPI(MPI_Win_unlock_all(win));
    CHECK_MPI(MPI_Win_free(&win));
}

static void test_dynamic_window(void)
{
    MPI_Win win;
    int *buf = malloc((size_t) nprocs * N * sizeof(int));
    MPI_Aint mine;
    CHECK_MPI(MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &win));
    memset(buf, 0xff, (size_t) nprocs * N * sizeof(int));
    CHECK_MPI(MPI_Win_attach(win, buf, (MPI_Aint) nprocs * N * sizeof(int)));
    MPI_Get_address(buf, &mine);
    dynamic_bases = malloc(nprocs * sizeof(MPI_Aint));
    MPI_Allgather(&mine, 1, MPI_AINT, dynamic_bases, 1, MPI_AINT, MPI_COMM_WORLD);

    /* every operation on a dynamic window is an active message in vanilla CH4 */
    put_then_iflush(win, buf, slot_of_dynamic);
    CHECK_MPI(MPI_Win_detach(win, buf));
    CHECK_MPI(MPI_Win_free(&win));
    free(dynamic_bases);
    free(buf);
}

static int start_iflush_all(MPI_Win win, int target, MPI_Request * req)
{
    (void) target;
    return MPIX_Win_iflush_all(win, req);
}

/* Requests that are still pending when the epoch closes, several at once, one
 * with nothing to flush, and one left pending across MPI_Win_free. */
static void test_request_life(void)
{
    int *base;
    MPI_Win win;
    MPI_Request reqs[3];
    int value = rank + 1;

    CHECK_MPI(MPI_Win_allocate(SMALL_WIN_BYTES, sizeof(int), MPI_INFO_NULL,
                               MPI_COMM_WORLD, &base, &win));
    for (int i = 0; i < nprocs; i++)
        base[i] = -1;
    MPI_Barrier(MPI_COMM_WORLD);

    CHECK_MPI(MPI_Win_lock_all(0, win));
    CHECK_MPI(MPIX_Win_iflush_all(win, &reqs[0]));      /* nothing issued yet */
    for (int t = 0; t < nprocs; t++)
        CHECK_MPI(MPI_Put(&value, 1, MPI_INT, t, rank, 1, MPI_INT, win));
    CHECK_MPI(MPIX_Win_iflush_all(win, &reqs[1]));
    CHECK_MPI(PMPIX_Win_iflush_all(win, &reqs[2]));     /* the profiling name works too */
    CHECK_MPI(MPI_Win_unlock_all(win)); /* closes the epoch with the requests pending */
    for (int i = 0; i < 3; i++)
        wait_or_abort(&reqs[i], TIMEOUT, "iflush_all across unlock_all");
    MPI_Barrier(MPI_COMM_WORLD);
    for (int o = 0; o < nprocs; o++)
        CHECK(base[o] == o + 1, "slot %d holds %d, expected %d", o, base[o], o + 1);
    MPI_Barrier(MPI_COMM_WORLD);

    CHECK_MPI(MPI_Win_lock_all(0, win));
    for (int t = 0; t < nprocs; t++)
        CHECK_MPI(MPI_Put(&value, 1, MPI_INT, t, rank, 1, MPI_INT, win));
    CHECK_MPI(MPIX_Win_iflush_all(win, &reqs[0]));
    CHECK_MPI(MPI_Win_unlock_all(win));
    CHECK_MPI(MPI_Win_free(&win));      /* with reqs[0] not waited for yet */
    int done = 0;
    CHECK_MPI(MPI_Test(&reqs[0], &done, MPI_STATUS_IGNORE));
    CHECK(done, "a flush request is still pending after MPI_Win_free");
    if (!done)
        wait_or_abort(&reqs[0], TIMEOUT, "iflush_all across MPI_Win_free");
}

/* Wrong use returns the standard error classes through the error handlers. */
static void test_wrong_use(void)
{
    int *base;
    MPI_Win win;
    MPI_Request req = MPI_REQUEST_NULL;
    int rc;

    CHECK_MPI(MPI_Win_allocate(SMALL_WIN_BYTES, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD,
                               &base, &win));
    CHECK_MPI(MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN));

    rc = MPIX_Win_iflush_all(win, &req);        /* no epoch at all */
    CHECK(error_class(rc) == MPI_ERR_RMA_SYNC, "outside an epoch: class %d", error_class(rc));
    CHECK(req == MPI_REQUEST_NULL, "a failed call handed out a request");

    CHECK_MPI(MPI_Win_fence(0, win));   /* active target: a flush is wrong here too */
    rc = MPIX_Win_iflush_all(win, &req);
    CHECK(error_class(rc) == MPI_ERR_RMA_SYNC, "inside a fence epoch: class %d",
          error_class(rc));
    CHECK_MPI(MPI_Win_fence(MPI_MODE_NOSUCCEED, win));

    rc = MPIX_Win_iflush_all(MPI_WIN_NULL, &req);
    CHECK(error_class(rc) == MPI_ERR_WIN, "MPI_WIN_NULL: class %d", error_class(rc));

    CHECK_MPI(MPI_Win_lock_all(0, win));
    rc = MPIX_Win_iflush_all(win, NULL);
    CHECK(error_class(rc) == MPI_ERR_ARG, "NULL request pointer: class %d", error_class(rc));
    CHECK_MPI(MPI_Win_unlock_all(win));

    CHECK_MPI(MPI_Win_free(&win));
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);

    test_allocated_window();
    test_accumulate_counters();
    test_dynamic_window();
    flush_waits_for_busy_target(start_iflush_all);
    test_request_life();
    test_wrong_use();
    return report_and_finalize();
}
