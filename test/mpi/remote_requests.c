/*
 * MPIX_Rrput, MPIX_Rraccumulate, MPIX_Rrget_accumulate: once the request
 * completes, the operation is complete at the target. Every origin issues a
 * 128 KiB put, an accumulate and a get-accumulate toward the last rank, waits
 * for the three requests (and nothing else: no flush), then sends the target
 * a message; the target reads its window memory right after that message
 * arrived and checks that origin's data. On each window kind: engine windows
 * (allocate; create over malloc'ed memory), a window without the engine over
 * malloc'ed memory (MPICH's UCX RDMA, which UCX emulates there: its MPI_Rput
 * request completes before the data is at the target), and a dynamic window.
 * Then the wrong uses: each an MPI error class.
 */
#include "nbrma_test.h"

#define N_LONGS 16384           /* 128 KiB per origin */
#define N_ACC 8

static int rank, nprocs, target;

static long pattern(int origin, int i, int round)
{
    return (long) origin * 1000003L + i * 7L + round;
}

/* The target's window: one slice of N_LONGS per rank, then N_ACC counters
 * that every origin adds to, then one counter for the fetches. */
static size_t win_longs(void)
{
    return (size_t) nprocs * N_LONGS + N_ACC + 1;
}

static void run_round(MPI_Win win, long *mem, MPI_Aint base_disp, int round, const char *what)
{
    MPI_Aint disp_slice = base_disp + (MPI_Aint) rank * N_LONGS * sizeof(long);
    MPI_Aint disp_acc = base_disp + (MPI_Aint) nprocs * N_LONGS * sizeof(long);
    MPI_Aint disp_fetch = disp_acc + N_ACC * sizeof(long);

    CHECK_MPI(MPI_Win_lock_all(0, win));
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank != target) {
        long *src = malloc(N_LONGS * sizeof(long));
        long ones[N_ACC], one = 1, fetched = -1;
        MPI_Request reqs[3];
        int token = round;

        for (int i = 0; i < N_LONGS; i++)
            src[i] = pattern(rank, i, round);
        for (int i = 0; i < N_ACC; i++)
            ones[i] = rank + 1;
        CHECK_MPI(MPIX_Rrput(src, N_LONGS, MPI_LONG, target, disp_slice, N_LONGS, MPI_LONG, win,
                             &reqs[0]));
        CHECK_MPI(MPIX_Rraccumulate(ones, N_ACC, MPI_LONG, target, disp_acc, N_ACC, MPI_LONG,
                                    MPI_SUM, win, &reqs[1]));
        CHECK_MPI(MPIX_Rrget_accumulate(&one, 1, MPI_LONG, &fetched, 1, MPI_LONG, target,
                                        disp_fetch, 1, MPI_LONG, MPI_SUM, win, &reqs[2]));
        wait_all_or_abort(3, reqs, 60.0, what);
        CHECK(fetched >= 0 && fetched < nprocs - 1, "%s: fetched %ld, expected 0..%d", what,
              fetched, nprocs - 2);
        /* the message that tells the target: no flush before it */
        CHECK_MPI(MPI_Send(&token, 1, MPI_INT, target, round, MPI_COMM_WORLD));
        free(src);
    } else {
        long expected_acc = 0;
        for (int n = 0; n < nprocs - 1; n++) {
            MPI_Status status;
            int token, origin, bad = 0;
            CHECK_MPI(MPI_Recv(&token, 1, MPI_INT, MPI_ANY_SOURCE, round, MPI_COMM_WORLD,
                               &status));
            CHECK_MPI(MPI_Win_sync(win));
            origin = status.MPI_SOURCE;
            expected_acc += origin + 1;
            const volatile long *slice = mem + (size_t) origin * N_LONGS;
            for (int i = 0; i < N_LONGS; i++)
                bad += slice[i] != pattern(origin, i, round);
            CHECK(bad == 0, "%s: %d of %d elements of origin %d not at the target when its "
                  "message arrived (first: %ld)", what, bad, N_LONGS, origin, slice[0]);
        }
        /* every origin's accumulate was complete before its message */
        const volatile long *acc = mem + (size_t) nprocs * N_LONGS;
        for (int i = 0; i < N_ACC; i++)
            CHECK(acc[i] == expected_acc, "%s: counter %d is %ld, expected %ld", what, i, acc[i],
                  expected_acc);
        CHECK(acc[N_ACC] == nprocs - 1, "%s: fetch counter is %ld, expected %d", what, acc[N_ACC],
              nprocs - 1);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK_MPI(MPI_Win_unlock_all(win));
}

/* n rounds on a window whose target memory starts zeroed each time */
static void run_rounds(MPI_Win win, long *mem, MPI_Aint base_disp, int n, const char *what)
{
    for (int round = 0; round < n; round++) {
        memset(mem, 0, win_longs() * sizeof(long));
        MPI_Barrier(MPI_COMM_WORLD);
        run_round(win, mem, base_disp, round, what);
    }
}

static void on_allocated_window(const char *epochs, const char *what)
{
    MPI_Info info;
    MPI_Win win;
    long *mem;

    MPI_Info_create(&info);
    MPI_Info_set(info, "mpich_nbrma_epochs", epochs);
    CHECK_MPI(MPI_Win_allocate(win_longs() * sizeof(long), 1, info, MPI_COMM_WORLD, &mem, &win));
    MPI_Info_free(&info);
    run_rounds(win, mem, 0, 3, what);
    CHECK_MPI(MPI_Win_free(&win));
}

static void on_created_window(const char *epochs, const char *what)
{
    MPI_Info info;
    MPI_Win win;
    long *mem = malloc(win_longs() * sizeof(long));

    MPI_Info_create(&info);
    MPI_Info_set(info, "mpich_nbrma_epochs", epochs);
    CHECK_MPI(MPI_Win_create(mem, win_longs() * sizeof(long), 1, info, MPI_COMM_WORLD, &win));
    MPI_Info_free(&info);
    run_rounds(win, mem, 0, 3, what);
    CHECK_MPI(MPI_Win_free(&win));
    free(mem);
}

/* Displacements of a dynamic window are addresses: the target's base goes to
 * every origin. Several rounds, so that the rkey cache serves RDMA. */
static void on_dynamic_window(void)
{
    MPI_Win win;
    long *mem = malloc(win_longs() * sizeof(long));
    MPI_Aint base;

    CHECK_MPI(MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &win));
    CHECK_MPI(MPI_Win_attach(win, mem, win_longs() * sizeof(long)));
    CHECK_MPI(MPI_Get_address(mem, &base));
    MPI_Bcast(&base, 1, MPI_AINT, target, MPI_COMM_WORLD);
    run_rounds(win, mem, base, 4, "dynamic window");
    CHECK_MPI(MPI_Win_detach(win, mem));
    CHECK_MPI(MPI_Win_free(&win));
    free(mem);
}

static void wrong_uses(void)
{
    MPI_Win win;
    long *mem, v = 1, r;
    MPI_Request req = MPI_REQUEST_NULL;

    CHECK_MPI(MPI_Win_allocate(64, sizeof(long), MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &win));
    CHECK_MPI(MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN));
    CHECK_MPI(MPI_Win_lock_all(0, win));
    EXPECT_CLASS(MPIX_Rrput(&v, 1, MPI_LONG, target, 0, 1, MPI_LONG, MPI_WIN_NULL, &req),
                 MPI_ERR_WIN);
    EXPECT_CLASS(MPIX_Rrput(&v, -1, MPI_LONG, target, 0, 1, MPI_LONG, win, &req), MPI_ERR_COUNT);
    EXPECT_CLASS(MPIX_Rrput(&v, 1, MPI_LONG, nprocs, 0, 1, MPI_LONG, win, &req), MPI_ERR_RANK);
    EXPECT_CLASS(MPIX_Rrput(&v, 1, MPI_DATATYPE_NULL, target, 0, 1, MPI_LONG, win, &req),
                 MPI_ERR_TYPE);
    EXPECT_CLASS(MPIX_Rrput(&v, 1, MPI_LONG, target, -1, 1, MPI_LONG, win, &req), MPI_ERR_DISP);
    EXPECT_CLASS(MPIX_Rrput(&v, 1, MPI_LONG, target, 0, 1, MPI_LONG, win, NULL), MPI_ERR_ARG);
    EXPECT_CLASS(MPIX_Rraccumulate(&v, 1, MPI_LONG, target, 0, 1, MPI_LONG, MPI_OP_NULL, win,
                                   &req), MPI_ERR_OP);
    EXPECT_CLASS(MPIX_Rrget_accumulate(&v, 1, MPI_LONG, &r, 1, MPI_LONG, target, 0, 1, MPI_LONG,
                                       MPI_OP_NULL, win, &req), MPI_ERR_OP);
    /* MPI_PROC_NULL: a request that is complete at once */
    CHECK_MPI(MPIX_Rrput(&v, 1, MPI_LONG, MPI_PROC_NULL, 0, 1, MPI_LONG, win, &req));
    CHECK(req != MPI_REQUEST_NULL, "MPI_PROC_NULL gave no request");
    wait_or_abort(&req, 10.0, "MPIX_Rrput to MPI_PROC_NULL");
    CHECK_MPI(MPI_Win_unlock_all(win));
    /* outside any epoch */
    EXPECT_CLASS(MPIX_Rrput(&v, 1, MPI_LONG, target, 0, 1, MPI_LONG, win, &req),
                 MPI_ERR_RMA_SYNC);
    CHECK_MPI(MPI_Win_free(&win));
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    target = nprocs - 1;

    on_allocated_window("true", "engine window (allocate)");
    on_created_window("true", "engine window (create)");
    on_created_window("false", "window without the engine (create)");
    on_allocated_window("false", "window without the engine (allocate)");
    on_dynamic_window();
    wrong_uses();
    return report_and_finalize();
}
