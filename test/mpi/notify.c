/*
 * Request-based notification (Quo Vadis MPI RMA, section 5.2): MPIX_Put_notify
 * and MPIX_Accumulate_notify, and MPIX_Win_wait_notify's requests at the
 * target.
 *
 * Counting: 10^5 notifying puts in all from the origins (every rank but the
 * last), each into a slot of its own, with the origin's rank as id; the target
 * takes them one request at a time per id, and whenever a request completed
 * checks (every 997th time, a scan) that at least as many of that origin's
 * slots hold their data as notifications were taken: no notification before
 * its data. Then exactly that many: one more request per id must not
 * complete, and MPI_Win_free completes it with MPI_ERR_WIN. Then requests
 * made before the operations, accumulates, active-target epochs (fence) and
 * the other window kinds that carry notifications, and the wrong uses.
 */
#include "nbrma_test.h"
#include <stdbool.h>

#define TOTAL 100000
#define SMALL 200

static int rank, nprocs, target, n_origins;

static void free_expecting(MPI_Win * win, MPI_Request * extra, int n_extra)
{
    CHECK_MPI(MPI_Win_free(win));
    for (int i = 0; i < n_extra; i++) {
        int rc = MPI_Wait(&extra[i], MPI_STATUS_IGNORE);
        CHECK(rc != MPI_SUCCESS && error_class(rc) == MPI_ERR_WIN,
              "an unmatched wait completed at MPI_Win_free with class %d, expected MPI_ERR_WIN",
              rc == MPI_SUCCESS ? 0 : error_class(rc));
    }
}

static void counted(void)
{
    int per_origin = (TOTAL + n_origins - 1) / n_origins;
    MPI_Win win;
    long *mem;
    MPI_Request extra[64];

    CHECK_MPI(allocate_engine_win((MPI_Aint) nprocs * per_origin * sizeof(long), sizeof(long),
                                  MPI_COMM_WORLD, &mem, &win));
    memset(mem, 0, (size_t) nprocs * per_origin * sizeof(long));
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank != target) {
        long *vals = malloc(per_origin * sizeof(long));
        CHECK_MPI(MPI_Win_lock_all(0, win));
        for (int i = 0; i < per_origin; i++) {
            vals[i] = i + 1;
            CHECK_MPI(MPIX_Put_notify(&vals[i], 1, MPI_LONG, target,
                                      (MPI_Aint) rank * per_origin + i, 1, MPI_LONG, rank, win));
        }
        CHECK_MPI(MPI_Win_unlock_all(win));
        free(vals);
    } else {
        int *taken = calloc(nprocs, sizeof(int)), left = n_origins * per_origin;
        double deadline = MPI_Wtime() + 120.0;
        MPI_Request *reqs = malloc(nprocs * sizeof(MPI_Request));

        CHECK_MPI(MPI_Win_lock_all(0, win));    /* for MPI_Win_sync */
        for (int o = 0; o < n_origins; o++)
            CHECK_MPI(MPIX_Win_wait_notify(win, o, &reqs[o]));
        while (left > 0) {
            for (int o = 0; o < n_origins; o++) {
                int done = 0;
                if (taken[o] == per_origin)
                    continue;
                CHECK_MPI(MPI_Test(&reqs[o], &done, MPI_STATUS_IGNORE));
                if (!done)
                    continue;
                taken[o]++;
                left--;
                if (taken[o] % 997 == 0 || taken[o] == per_origin) {
                    int there = 0;
                    CHECK_MPI(MPI_Win_sync(win));
                    for (int i = 0; i < per_origin; i++)
                        there += ((volatile long *) mem)[(size_t) o * per_origin + i] == i + 1;
                    CHECK(there >= taken[o], "origin %d: %d notifications taken, only %d of "
                          "its puts in the window", o, taken[o], there);
                }
                if (taken[o] < per_origin)
                    CHECK_MPI(MPIX_Win_wait_notify(win, o, &reqs[o]));
            }
            if (MPI_Wtime() > deadline) {
                fprintf(stderr, "%d notifications did not arrive within 120 s\n", left);
                MPI_Abort(MPI_COMM_WORLD, 3);
            }
        }
        CHECK_MPI(MPI_Win_unlock_all(win));
        free(taken);
        free(reqs);
        /* exactly as many: one more per id stays pending */
        for (int o = 0; o < n_origins; o++)
            CHECK_MPI(MPIX_Win_wait_notify(win, o, &extra[o]));
        double until = MPI_Wtime() + 0.3;
        while (MPI_Wtime() < until)
            for (int o = 0; o < n_origins; o++) {
                int done = 0;
                CHECK_MPI(MPI_Request_get_status(extra[o], &done, MPI_STATUS_IGNORE));
                CHECK(!done, "id %d: a notification more than the %d sent", o, per_origin);
                if (done)
                    until = 0;
            }
    }
    MPI_Barrier(MPI_COMM_WORLD);
    free_expecting(&win, extra, rank == target ? n_origins : 0);
}

/* Waits made before the operations; a put and an accumulate per origin and
 * round, ids 100 (puts) and 101 (accumulates); `fence`: active target. */
static void small_rounds(MPI_Win win, long *mem, MPI_Aint base, bool fence, const char *what)
{
    long *vals = malloc(SMALL * sizeof(long)), one = 1;
    MPI_Request *reqs = NULL;
    int n_reqs = 2 * SMALL * n_origins;

    memset(mem, 0, ((size_t) nprocs * SMALL + 1) * sizeof(long));
    if (rank == target) {
        reqs = malloc(n_reqs * sizeof(MPI_Request));
        for (int i = 0; i < n_reqs; i++)
            CHECK_MPI(MPIX_Win_wait_notify(win, 100 + i % 2, &reqs[i]));
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (fence)
        CHECK_MPI(MPI_Win_fence(0, win));
    else
        CHECK_MPI(MPI_Win_lock_all(0, win));
    if (rank != target)
        for (int i = 0; i < SMALL; i++) {
            MPI_Aint d = base + ((MPI_Aint) rank * SMALL + i) * (MPI_Aint) sizeof(long);
            vals[i] = 1000L * rank + i;
            CHECK_MPI(MPIX_Put_notify(&vals[i], 1, MPI_LONG, target, d, 1, MPI_LONG, 100, win));
            CHECK_MPI(MPIX_Accumulate_notify(&one, 1, MPI_LONG, target,
                                             base + (MPI_Aint) nprocs * SMALL * sizeof(long), 1,
                                             MPI_LONG, MPI_SUM, 101, win));
        }
    if (fence)
        CHECK_MPI(MPI_Win_fence(0, win));
    else
        CHECK_MPI(MPI_Win_unlock_all(win));
    if (rank == target) {
        wait_all_or_abort(n_reqs, reqs, 60.0, what);
        int bad = 0;
        for (int o = 0; o < nprocs; o++)
            for (int i = 0; o != target && i < SMALL; i++)
                bad += mem[(size_t) o * SMALL + i] != 1000L * o + i;
        CHECK(bad == 0, "%s: %d puts not in the window after their notifications", what, bad);
        CHECK(mem[(size_t) nprocs * SMALL] == (long) n_origins * SMALL,
              "%s: accumulated %ld after the notifications, expected %d", what,
              mem[(size_t) nprocs * SMALL], n_origins * SMALL);
        free(reqs);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    free(vals);
}

static void kinds(void)
{
    size_t bytes = ((size_t) nprocs * SMALL + 1) * sizeof(long);
    MPI_Win win;
    MPI_Info info;
    long *mem;
    MPI_Aint base;

    CHECK_MPI(allocate_engine_win(bytes, 1, MPI_COMM_WORLD, &mem, &win));
    small_rounds(win, mem, 0, false, "engine window (allocate), lock_all");
    small_rounds(win, mem, 0, true, "engine window (allocate), fence");
    CHECK_MPI(MPI_Win_free(&win));

    mem = malloc(bytes);
    info = engine_info();
    CHECK_MPI(MPI_Win_create(mem, bytes, 1, info, MPI_COMM_WORLD, &win));
    MPI_Info_free(&info);
    small_rounds(win, mem, 0, false, "engine window (create), lock_all");
    CHECK_MPI(MPI_Win_free(&win));

    MPI_Info_create(&info);
    MPI_Info_set(info, "mpich_nbrma_epochs", "false");
    CHECK_MPI(MPI_Win_create(mem, bytes, 1, info, MPI_COMM_WORLD, &win));
    MPI_Info_free(&info);
    small_rounds(win, mem, 0, false, "window without the engine, lock_all");
    small_rounds(win, mem, 0, true, "window without the engine, fence");
    CHECK_MPI(MPI_Win_free(&win));

    CHECK_MPI(MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &win));
    CHECK_MPI(MPI_Win_attach(win, mem, bytes));
    CHECK_MPI(MPI_Get_address(mem, &base));
    MPI_Bcast(&base, 1, MPI_AINT, target, MPI_COMM_WORLD);
    small_rounds(win, mem, base, false, "dynamic window, lock_all");
    CHECK_MPI(MPI_Win_detach(win, mem));
    CHECK_MPI(MPI_Win_free(&win));
    free(mem);
}

static void wrong_uses(void)
{
    MPI_Win win, dup;
    long *mem, v = 1;
    MPI_Request req;
    int *tag_ub, flag;

    CHECK_MPI(allocate_engine_win(64, sizeof(long), MPI_COMM_WORLD, &mem, &win));
    CHECK_MPI(MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN));
    CHECK_MPI(MPIX_Win_dup_with_info(win, MPI_INFO_NULL, &dup));
    CHECK_MPI(MPI_Win_set_errhandler(dup, MPI_ERRORS_RETURN));
    MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &tag_ub, &flag);
    CHECK_MPI(MPI_Win_lock_all(0, win));
    EXPECT_CLASS(MPIX_Put_notify(&v, 1, MPI_LONG, target, 0, 1, MPI_LONG, -1, win), MPI_ERR_TAG);
    if (flag && *tag_ub < 0x7fffffff)
        EXPECT_CLASS(MPIX_Put_notify(&v, 1, MPI_LONG, target, 0, 1, MPI_LONG, *tag_ub + 1, win),
                     MPI_ERR_TAG);
    EXPECT_CLASS(MPIX_Put_notify(&v, 1, MPI_LONG, target, 0, 1, MPI_LONG, 0, MPI_WIN_NULL),
                 MPI_ERR_WIN);
    EXPECT_CLASS(MPIX_Put_notify(&v, 1, MPI_LONG, nprocs, 0, 1, MPI_LONG, 0, win), MPI_ERR_RANK);
    EXPECT_CLASS(MPIX_Accumulate_notify(&v, 1, MPI_LONG, target, 0, 1, MPI_LONG, MPI_OP_NULL, 0,
                                        win), MPI_ERR_OP);
    EXPECT_CLASS(MPIX_Put_notify(&v, 1, MPI_LONG, target, 0, 1, MPI_LONG, 0, dup), MPI_ERR_WIN);
    EXPECT_CLASS(MPIX_Win_wait_notify(dup, 0, &req), MPI_ERR_WIN);
    EXPECT_CLASS(MPIX_Win_wait_notify(win, -1, &req), MPI_ERR_TAG);
    EXPECT_CLASS(MPIX_Win_wait_notify(win, 0, NULL), MPI_ERR_ARG);
    EXPECT_CLASS(MPIX_Win_wait_notify(MPI_WIN_NULL, 0, &req), MPI_ERR_WIN);
    /* MPI_PROC_NULL: nothing happens, nothing is notified */
    CHECK_MPI(MPIX_Put_notify(&v, 1, MPI_LONG, MPI_PROC_NULL, 0, 1, MPI_LONG, 7, win));
    CHECK_MPI(MPI_Win_unlock_all(win));
    EXPECT_CLASS(MPIX_Put_notify(&v, 1, MPI_LONG, target, 0, 1, MPI_LONG, 0, win),
                 MPI_ERR_RMA_SYNC);
    CHECK_MPI(MPI_Win_free(&dup));
    CHECK_MPI(MPI_Win_free(&win));
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
    target = nprocs - 1;
    n_origins = nprocs - 1;

    counted();
    kinds();
    wrong_uses();
    return report_and_finalize();
}
