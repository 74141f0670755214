/*
 * Notified RMA with counters, as Intel MPI and the MPI Forum's proposal
 * spell it: MPIX_Win_create_notify / _free_notify, MPIX_Put_notify,
 * MPIX_Get_notify, MPIX_Accumulate_notify, MPIX_Win_get_notify /
 * _set_notify, and the extension MPIX_Win_notify_request.
 *
 * Counting: 10^5 notified puts in all from the origins (every rank but the
 * last), each into a slot of its own, counter = the origin's rank; the target
 * polls its counters with MPIX_Win_get_notify and, whenever a counter moved
 * (every 997th step, a scan), checks that at least as many of that origin's
 * slots hold their data as the counter says: no increment before its data.
 * Then exactly that many: a request for one more must not complete, and
 * MPIX_Win_free_notify completes it with MPI_ERR_WIN. Then MPIX_Get_notify
 * (the target overwrites only after its counter says the data was read, and
 * the origins check they read the old data), set and reset, requests made
 * before the operations on every window kind that carries counters, lock_all
 * and fence, MPI_Win_free right after notified puts with the counters still
 * attached (their increments possibly still on the way), and the wrong uses
 * with their error classes.
 */
#include "nbrma_test.h"
#include <stdbool.h>

#define TOTAL 100000
#define SMALL 200

static int rank, nprocs, target, n_origins;

/* Waits for a request that must fail with MPI_ERR_WIN. */
static void expect_win_error(MPI_Request * req, const char *what)
{
    int rc = MPI_Wait(req, MPI_STATUS_IGNORE);
    CHECK(rc != MPI_SUCCESS && error_class(rc) == MPI_ERR_WIN,
          "%s: completed with class %d, expected MPI_ERR_WIN", what,
          rc == MPI_SUCCESS ? 0 : error_class(rc));
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
    CHECK_MPI(MPIX_Win_create_notify(win, n_origins));
    if (rank != target) {
        long *vals = malloc(per_origin * sizeof(long));
        CHECK_MPI(MPI_Win_lock_all(0, win));
        for (int i = 0; i < per_origin; i++) {
            vals[i] = i + 1;
            CHECK_MPI(MPIX_Put_notify(&vals[i], 1, MPI_LONG, target,
                                      (MPI_Aint) rank * per_origin + i, 1, MPI_LONG, win, rank));
        }
        CHECK_MPI(MPI_Win_unlock_all(win));
        free(vals);
    } else {
        MPI_Count *seen = calloc(nprocs, sizeof(MPI_Count));
        long left = (long) n_origins * per_origin, checks = 0;
        double deadline = MPI_Wtime() + 120.0 * time_scale();

        CHECK_MPI(MPI_Win_lock_all(0, win));    /* for MPI_Win_sync */
        while (left > 0) {
            for (int o = 0; o < n_origins; o++) {
                MPI_Count now;
                CHECK_MPI(MPIX_Win_get_notify(win, o, &now));
                CHECK(now >= seen[o] && now <= per_origin, "origin %d: counter went from %lld "
                      "to %lld (%d sent)", o, (long long) seen[o], (long long) now, per_origin);
                if (now == seen[o])
                    continue;
                left -= (long) (now - seen[o]);
                seen[o] = now;
                if (++checks % 997 == 0 || now == per_origin) {
                    int there = 0;
                    CHECK_MPI(MPI_Win_sync(win));
                    for (int i = 0; i < per_origin; i++)
                        there += ((volatile long *) mem)[(size_t) o * per_origin + i] == i + 1;
                    CHECK(there >= now, "origin %d: counter %lld, only %d of its puts in the "
                          "window", o, (long long) now, there);
                }
            }
            if (MPI_Wtime() > deadline) {
                fprintf(stderr, "%ld increments did not arrive within the time limit\n", left);
                MPI_Abort(MPI_COMM_WORLD, 3);
            }
        }
        CHECK_MPI(MPI_Win_unlock_all(win));
        free(seen);
        /* exactly as many: a request for one more stays pending */
        for (int o = 0; o < n_origins; o++)
            CHECK_MPI(MPIX_Win_notify_request(win, o, per_origin + 1, &extra[o]));
        double until = MPI_Wtime() + 0.3;
        while (MPI_Wtime() < until)
            for (int o = 0; o < n_origins; o++) {
                int done = 0;
                CHECK_MPI(MPI_Test(&extra[o], &done, MPI_STATUS_IGNORE));
                CHECK(!done, "counter %d: more than the %d increments sent", o, per_origin);
                if (done)
                    until = 0;
            }
    }
    CHECK_MPI(MPIX_Win_free_notify(win));
    for (int o = 0; rank == target && o < n_origins; o++)
        expect_win_error(&extra[o], "a request still waiting at MPIX_Win_free_notify");
    CHECK_MPI(MPI_Win_free(&win));
}

/* MPIX_Get_notify: every origin reads SMALL slots of the target, counter =
 * its rank; the target overwrites them once its counter says they were read,
 * and the origins must have read the old values. Then set and reset. */
static void gets_and_set(void)
{
    MPI_Win win;
    long *mem, *got = malloc(SMALL * sizeof(long));
    MPI_Request req;
    MPI_Count value;

    CHECK_MPI(allocate_engine_win((MPI_Aint) SMALL * sizeof(long), sizeof(long), MPI_COMM_WORLD,
                                  &mem, &win));
    for (int i = 0; i < SMALL; i++)
        mem[i] = 7000 + i;
    CHECK_MPI(MPIX_Win_create_notify(win, nprocs));
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == target) {
        MPI_Request *reqs = malloc(n_origins * sizeof(MPI_Request));
        for (int o = 0; o < n_origins; o++)
            CHECK_MPI(MPIX_Win_notify_request(win, o, SMALL, &reqs[o]));
        wait_all_or_abort(n_origins, reqs, 60.0 * time_scale(), "MPIX_Get_notify increments");
        CHECK_MPI(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, rank, 0, win));
        for (int i = 0; i < SMALL; i++)
            mem[i] = -1;        /* every origin has read them */
        CHECK_MPI(MPI_Win_unlock(rank, win));
        free(reqs);
    } else {
        CHECK_MPI(MPI_Win_lock(MPI_LOCK_SHARED, target, 0, win));
        for (int i = 0; i < SMALL; i++)
            CHECK_MPI(MPIX_Get_notify(&got[i], 1, MPI_LONG, target, i, 1, MPI_LONG, win, rank));
        CHECK_MPI(MPI_Win_unlock(target, win));
        for (int i = 0; i < SMALL; i++)
            CHECK(got[i] == 7000 + i, "MPIX_Get_notify slot %d read %ld, expected %d", i,
                  got[i], 7000 + i);
    }
    MPI_Barrier(MPI_COMM_WORLD);

    /* set and reset; a request for a value already held completes at once */
    CHECK_MPI(MPIX_Win_set_notify(win, target, 5));
    CHECK_MPI(MPIX_Win_get_notify(win, target, &value));
    CHECK(value == 5, "counter set to 5 reads %lld", (long long) value);
    CHECK_MPI(MPIX_Win_notify_request(win, target, 5, &req));
    wait_or_abort(&req, 10.0, "a request for a value the counter holds");
    CHECK_MPI(MPIX_Win_notify_request(win, target, 6, &req));
    MPI_Barrier(MPI_COMM_WORLD);
    /* one increment from my left neighbour (a put of its rank into my slot 0) */
    int left = (rank + nprocs - 1) % nprocs, right = (rank + 1) % nprocs;
    long me = rank;
    CHECK_MPI(MPI_Win_lock(MPI_LOCK_SHARED, right, 0, win));
    CHECK_MPI(MPIX_Put_notify(&me, 1, MPI_LONG, right, 0, 1, MPI_LONG, win, target));
    CHECK_MPI(MPI_Win_unlock(right, win));
    wait_or_abort(&req, 30.0 * time_scale(), "a request for 6 after an increment of 5");
    CHECK_MPI(MPI_Win_lock(MPI_LOCK_SHARED, rank, 0, win));
    CHECK(mem[0] == left, "the notified put left %ld, expected %d", mem[0], left);
    CHECK_MPI(MPI_Win_unlock(rank, win));
    CHECK_MPI(MPIX_Win_set_notify(win, target, 0));
    CHECK_MPI(MPIX_Win_get_notify(win, target, &value));
    CHECK(value == 0, "counter reset reads %lld", (long long) value);
    CHECK_MPI(MPIX_Win_free_notify(win));
    CHECK_MPI(MPI_Win_free(&win));
    free(got);
}

/* Requests made before the operations; a put and an accumulate per origin
 * and round, counters 0 (puts) and 1 (accumulates); `fence`: active target. */
static void small_rounds(MPI_Win win, long *mem, MPI_Aint base, bool fence, const char *what)
{
    long *vals = malloc(SMALL * sizeof(long)), one = 1;
    MPI_Request reqs[2];

    memset(mem, 0, ((size_t) nprocs * SMALL + 1) * sizeof(long));
    CHECK_MPI(MPIX_Win_create_notify(win, 2));
    if (rank == target) {
        CHECK_MPI(MPIX_Win_notify_request(win, 0, (MPI_Count) n_origins * SMALL, &reqs[0]));
        CHECK_MPI(MPIX_Win_notify_request(win, 1, (MPI_Count) n_origins * SMALL, &reqs[1]));
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
            CHECK_MPI(MPIX_Put_notify(&vals[i], 1, MPI_LONG, target, d, 1, MPI_LONG, win, 0));
            CHECK_MPI(MPIX_Accumulate_notify(&one, 1, MPI_LONG, target,
                                             base + (MPI_Aint) nprocs * SMALL * sizeof(long), 1,
                                             MPI_LONG, MPI_SUM, win, 1));
        }
    if (fence)
        CHECK_MPI(MPI_Win_fence(0, win));
    else
        CHECK_MPI(MPI_Win_unlock_all(win));
    if (rank == target) {
        wait_all_or_abort(2, reqs, 60.0 * time_scale(), what);
        int bad = 0;
        for (int o = 0; o < nprocs; o++)
            for (int i = 0; o != target && i < SMALL; i++)
                bad += mem[(size_t) o * SMALL + i] != 1000L * o + i;
        CHECK(bad == 0, "%s: %d puts not in the window after their increments", what, bad);
        CHECK(mem[(size_t) nprocs * SMALL] == (long) n_origins * SMALL,
              "%s: accumulated %ld after the increments, expected %d", what,
              mem[(size_t) nprocs * SMALL], n_origins * SMALL);
    }
    CHECK_MPI(MPIX_Win_free_notify(win));
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

/* MPI_Win_free with counters still attached, right after notified puts
 * whose increments may still be on their way (UCX atomics over tcp, sent
 * once each put completed): the free must wait for them before anyone's
 * counters go, and return cleanly; the puts' data stays in the target's own
 * memory and is checked there. */
static void freed_with_counters(void)
{
    size_t bytes = (size_t) nprocs * SMALL * sizeof(long);
    long *mem = malloc(bytes), *vals = malloc(SMALL * sizeof(long));

    for (int round = 0; round < 10; round++) {
        MPI_Info info = engine_info();
        MPI_Win win;

        memset(mem, 0, bytes);
        CHECK_MPI(MPI_Win_create(mem, bytes, sizeof(long), info, MPI_COMM_WORLD, &win));
        MPI_Info_free(&info);
        CHECK_MPI(MPIX_Win_create_notify(win, 1));
        CHECK_MPI(MPI_Win_lock_all(0, win));
        if (rank != target)
            for (int i = 0; i < SMALL; i++) {
                vals[i] = 1000L * rank + i + round;
                CHECK_MPI(MPIX_Put_notify(&vals[i], 1, MPI_LONG, target,
                                          (MPI_Aint) rank * SMALL + i, 1, MPI_LONG, win, 0));
            }
        CHECK_MPI(MPI_Win_unlock_all(win));
        CHECK_MPI(MPI_Win_free(&win));
        if (rank == target) {
            int bad = 0;
            for (int o = 0; o < nprocs; o++)
                for (int i = 0; o != target && i < SMALL; i++)
                    bad += mem[(size_t) o * SMALL + i] != 1000L * o + i + round;
            CHECK(bad == 0, "round %d: %d puts missing after MPI_Win_free", round, bad);
        }
    }
    free(vals);
    free(mem);
}

static void wrong_uses(void)
{
    MPI_Win win, dup;
    long *mem, v = 1;
    MPI_Request req = MPI_REQUEST_NULL;
    MPI_Count value;

    CHECK_MPI(allocate_engine_win(64, sizeof(long), MPI_COMM_WORLD, &mem, &win));
    CHECK_MPI(MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN));
    CHECK_MPI(MPIX_Win_dup_with_info(win, MPI_INFO_NULL, &dup));
    CHECK_MPI(MPI_Win_set_errhandler(dup, MPI_ERRORS_RETURN));
    CHECK_MPI(MPI_Win_lock_all(0, win));
    /* no counters yet */
    EXPECT_CLASS(MPIX_Put_notify(&v, 1, MPI_LONG, target, 0, 1, MPI_LONG, win, 0), MPI_ERR_WIN);
    EXPECT_CLASS(MPIX_Win_get_notify(win, 0, &value), MPI_ERR_WIN);
    EXPECT_CLASS(MPIX_Win_set_notify(win, 0, 1), MPI_ERR_WIN);
    EXPECT_CLASS(MPIX_Win_notify_request(win, 0, 1, &req), MPI_ERR_WIN);
    EXPECT_CLASS(MPIX_Win_free_notify(win), MPI_ERR_WIN);
    CHECK_MPI(MPI_Win_unlock_all(win));
    EXPECT_CLASS(MPIX_Win_create_notify(win, -1), MPI_ERR_ARG);
    EXPECT_CLASS(MPIX_Win_create_notify(dup, 2), MPI_ERR_WIN);
    EXPECT_CLASS(MPIX_Win_create_notify(MPI_WIN_NULL, 2), MPI_ERR_WIN);
    /* different numbers at different processes: an error everywhere */
    EXPECT_CLASS(MPIX_Win_create_notify(win, rank == 0 ? 3 : 2), MPI_ERR_ARG);
    CHECK_MPI(MPIX_Win_create_notify(win, 2));
    EXPECT_CLASS(MPIX_Win_create_notify(win, 2), MPI_ERR_WIN);    /* twice */
    CHECK_MPI(MPI_Win_lock_all(0, win));
    EXPECT_CLASS(MPIX_Put_notify(&v, 1, MPI_LONG, target, 0, 1, MPI_LONG, win, 2), MPI_ERR_ARG);
    EXPECT_CLASS(MPIX_Put_notify(&v, 1, MPI_LONG, target, 0, 1, MPI_LONG, win, -1), MPI_ERR_ARG);
    EXPECT_CLASS(MPIX_Get_notify(&v, 1, MPI_LONG, target, 0, 1, MPI_LONG, win, 2), MPI_ERR_ARG);
    EXPECT_CLASS(MPIX_Win_get_notify(win, 2, &value), MPI_ERR_ARG);
    EXPECT_CLASS(MPIX_Win_get_notify(win, 0, NULL), MPI_ERR_ARG);
    EXPECT_CLASS(MPIX_Win_set_notify(win, 0, -1), MPI_ERR_COUNT);
    EXPECT_CLASS(MPIX_Win_notify_request(win, 5, 1, &req), MPI_ERR_ARG);
    EXPECT_CLASS(MPIX_Win_notify_request(win, 0, 1, NULL), MPI_ERR_ARG);
    EXPECT_CLASS(MPIX_Put_notify(&v, 1, MPI_LONG, target, 0, 1, MPI_LONG, MPI_WIN_NULL, 0),
                 MPI_ERR_WIN);
    EXPECT_CLASS(MPIX_Put_notify(&v, 1, MPI_LONG, nprocs, 0, 1, MPI_LONG, win, 0), MPI_ERR_RANK);
    EXPECT_CLASS(MPIX_Accumulate_notify(&v, 1, MPI_LONG, target, 0, 1, MPI_LONG, MPI_OP_NULL,
                                        win, 0), MPI_ERR_OP);
    EXPECT_CLASS(MPIX_Put_notify(&v, 1, MPI_LONG, target, 0, 1, MPI_LONG, dup, 0), MPI_ERR_WIN);
    /* MPI_PROC_NULL: nothing happens, nothing is counted */
    CHECK_MPI(MPIX_Put_notify(&v, 1, MPI_LONG, MPI_PROC_NULL, 0, 1, MPI_LONG, win, 1));
    CHECK_MPI(MPI_Win_unlock_all(win));
    EXPECT_CLASS(MPIX_Put_notify(&v, 1, MPI_LONG, target, 0, 1, MPI_LONG, win, 0),
                 MPI_ERR_RMA_SYNC);
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK_MPI(MPIX_Win_get_notify(win, 1, &value));
    CHECK(value == 0, "counter 1 holds %lld after refused and MPI_PROC_NULL operations",
          (long long) value);
    CHECK_MPI(MPIX_Win_free_notify(win));
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
    gets_and_set();
    kinds();
    freed_with_counters();
    wrong_uses();
    return report_and_finalize();
}
