/*
 * mpi_win_order=true (Quo Vadis MPI RMA, section 2.2): operations from one
 * origin to one target are performed in issue order, with no flush between
 * them. Every origin writes its own slots of the last rank's window, round r
 * in slot r, and each round pairs two operations on that slot whose result
 * depends on their order:
 *   put X, accumulate +1 (long: a UCX atomic behind a UCX put, a fence)
 *   put X, accumulate +1 (double: an active message behind a UCX put)
 *   accumulate +5, put X  (double: a UCX put behind an active message)
 *   put X, get            (the get must read X)
 *   put X, accumulate +1 on its lowest byte (uint8: 1-byte atomics, UCX
 *                         compare-and-swap loops behind a fence in direct
 *                         calls, an active message in replays)
 * all origins at once, then the target checks its memory (and each origin
 * its gets). Once in one lock_all epoch (operations go directly), once with
 * a shared lock per 16 rounds (they are recorded until the lock is granted
 * and replayed). On an engine window asking at creation, one switched on by
 * MPI_Win_set_info, through a duplicate with mpi_win_order=true of a window
 * without it, and on a dynamic window (with the rkey cache's RDMA).
 * MPI_Win_get_info reports the key as in force.
 */
#include "nbrma_test.h"
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>

#define ROUNDS 1000
#define PER_LOCK 16

static int rank, nprocs, target;

enum { PUT_ACC_LONG, PUT_ACC_DOUBLE, ACC_PUT_DOUBLE, PUT_GET, PUT_ACC_BYTE, N_PATTERNS };
static const char *pattern_names[] = { "put+acc (long)", "put+acc (double)",
    "acc+put (double)", "put+get", "put+acc (byte)"
};

/* What a slot holds after round r's pair of pattern p, in issue order. */
static double expected_value(int p, int r)
{
    long x = 10L * r + p;

    switch (p) {
        case PUT_ACC_LONG:
        case PUT_ACC_DOUBLE:
            return x + 1.0;
        case PUT_ACC_BYTE:     /* the lowest byte (little-endian) wraps alone */
            return (double) ((x & ~0xffL) | ((x + 1) & 0xff));
        default:
            return x;
    }
}

/* slot r of origin o for pattern p, in elements of 8 bytes */
static MPI_Aint slot(int p, int o, int r)
{
    return ((MPI_Aint) p * nprocs + o) * ROUNDS + r;
}

static size_t win_elems(void)
{
    return (size_t) N_PATTERNS * nprocs * ROUNDS;
}

/* The origin buffers stay untouched until the epoch ends, as MPI asks:
 * xs[r] and dxs[r] hold round r's values. */
static long *xs;
static double *dxs;
static const long one = 1;
static const double done_ = 1.0, five = 5.0;
static const uint8_t one_byte = 1;

/* On a dynamic window: every rank's attached block, by rank (NULL on the
 * other kinds, whose displacement unit is 8). */
static MPI_Aint *dyn_addrs;

static void pair(MPI_Win win, int p, int r, long *got)
{
    MPI_Aint d = dyn_addrs ? dyn_addrs[target] + slot(p, rank, r) * 8 : slot(p, rank, r);

    xs[r] = 10L * r + p;
    dxs[r] = (double) xs[r];
    switch (p) {
        case PUT_ACC_LONG:
            CHECK_MPI(MPI_Put(&xs[r], 1, MPI_LONG, target, d, 1, MPI_LONG, win));
            CHECK_MPI(MPI_Accumulate(&one, 1, MPI_LONG, target, d, 1, MPI_LONG, MPI_SUM, win));
            break;
        case PUT_ACC_DOUBLE:
            CHECK_MPI(MPI_Put(&dxs[r], 1, MPI_DOUBLE, target, d, 1, MPI_DOUBLE, win));
            CHECK_MPI(MPI_Accumulate(&done_, 1, MPI_DOUBLE, target, d, 1, MPI_DOUBLE, MPI_SUM,
                                     win));
            break;
        case ACC_PUT_DOUBLE:
            CHECK_MPI(MPI_Accumulate(&five, 1, MPI_DOUBLE, target, d, 1, MPI_DOUBLE, MPI_SUM,
                                     win));
            CHECK_MPI(MPI_Put(&dxs[r], 1, MPI_DOUBLE, target, d, 1, MPI_DOUBLE, win));
            break;
        case PUT_GET:
            CHECK_MPI(MPI_Put(&xs[r], 1, MPI_LONG, target, d, 1, MPI_LONG, win));
            CHECK_MPI(MPI_Get(&got[r], 1, MPI_LONG, target, d, 1, MPI_LONG, win));
            break;
        case PUT_ACC_BYTE:
            CHECK_MPI(MPI_Put(&xs[r], 1, MPI_LONG, target, d, 1, MPI_LONG, win));
            /* displacement unit 8: the target datatype's lower bound 0 is
             * the slot's first (lowest) byte */
            CHECK_MPI(MPI_Accumulate(&one_byte, 1, MPI_UINT8_T, target, d, 1, MPI_UINT8_T,
                                     MPI_SUM, win));
            break;
    }
}

static void run(MPI_Win ops_win, MPI_Win sync_win, void *mem, bool per_lock, const char *what)
{
    long *got = calloc(ROUNDS, sizeof(long));

    xs = calloc(ROUNDS, sizeof(long));
    dxs = calloc(ROUNDS, sizeof(double));

    memset(mem, 0, win_elems() * 8);
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank != target) {
        for (int p = 0; p < N_PATTERNS; p++) {
            if (!per_lock)
                CHECK_MPI(MPI_Win_lock_all(0, sync_win));
            for (int r = 0; r < ROUNDS; r++) {
                if (per_lock && r % PER_LOCK == 0)
                    CHECK_MPI(MPI_Win_lock(MPI_LOCK_SHARED, target, 0, sync_win));
                pair(ops_win, p, r, got);
                if (per_lock && (r % PER_LOCK == PER_LOCK - 1 || r == ROUNDS - 1))
                    CHECK_MPI(MPI_Win_unlock(target, sync_win));
            }
            if (!per_lock)
                CHECK_MPI(MPI_Win_unlock_all(sync_win));
        }
        int bad = 0, first = -1;
        for (int r = 0; r < ROUNDS; r++)
            if (got[r] != 10L * r + PUT_GET && bad++ == 0)
                first = r;
        CHECK(bad == 0, "%s, %s: %d gets did not read the put before them (round %d read %ld)",
              what, pattern_names[PUT_GET], bad, first, first >= 0 ? got[first] : 0L);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == target) {
        CHECK_MPI(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, target, 0, sync_win));
        for (int o = 0; o < nprocs; o++) {
            if (o == target)
                continue;
            for (int p = 0; p < N_PATTERNS; p++) {
                int bad = 0, first = -1;
                double seen = 0;
                for (int r = 0; r < ROUNDS; r++) {
                    double v = p == PUT_ACC_DOUBLE || p == ACC_PUT_DOUBLE ?
                        ((double *) mem)[slot(p, o, r)] : (double) ((long *) mem)[slot(p, o, r)];
                    double expected = expected_value(p, r);
                    if (v != expected && bad++ == 0) {
                        first = r;
                        seen = v;
                    }
                }
                CHECK(bad == 0, "%s, %s from origin %d: %d of %d slots out of order "
                      "(round %d holds %g)", what, pattern_names[p], o, bad, ROUNDS, first, seen);
            }
        }
        CHECK_MPI(MPI_Win_unlock(target, sync_win));
    }
    MPI_Barrier(MPI_COMM_WORLD);
    free(got);
    free(xs);
    free(dxs);
}

static void both(MPI_Win ops_win, MPI_Win sync_win, void *mem, const char *what)
{
    char name[128];

    snprintf(name, sizeof(name), "%s, lock_all", what);
    run(ops_win, sync_win, mem, false, name);
    snprintf(name, sizeof(name), "%s, a lock per %d rounds", what, PER_LOCK);
    run(ops_win, sync_win, mem, true, name);
}

static void ordered_at_creation(void)
{
    MPI_Win win;
    void *mem;

    CHECK_MPI(allocate_engine_win_with(win_elems() * 8, 8, MPI_COMM_WORLD, &mem, &win,
                                       "mpi_win_order", "true"));
    check_win_info(win, "mpi_win_order", "true", "allocate with mpi_win_order=true");
    both(win, win, mem, "engine window (allocate, key at creation)");
    CHECK_MPI(MPI_Win_free(&win));
}

static void ordered_by_set_info(void)
{
    MPI_Win win;
    MPI_Info info = engine_info(), on;
    void *mem = malloc(win_elems() * 8);

    CHECK_MPI(MPI_Win_create(mem, win_elems() * 8, 8, info, MPI_COMM_WORLD, &win));
    MPI_Info_free(&info);
    check_win_info(win, "mpi_win_order", "false", "create without the key");
    MPI_Info_create(&on);
    MPI_Info_set(on, "mpi_win_order", "true");
    CHECK_MPI(MPI_Win_set_info(win, on));
    MPI_Info_free(&on);
    check_win_info(win, "mpi_win_order", "true", "after MPI_Win_set_info");
    both(win, win, mem, "engine window (create, MPI_Win_set_info)");
    CHECK_MPI(MPI_Win_free(&win));
    free(mem);
}

/* The parent issues nothing; the duplicate orders its own operations while
 * epochs are opened and closed through the parent. */
static void ordered_duplicate(void)
{
    MPI_Win win, dup;
    MPI_Info on;
    void *mem;

    CHECK_MPI(allocate_engine_win(win_elems() * 8, 8, MPI_COMM_WORLD, &mem, &win));
    MPI_Info_create(&on);
    MPI_Info_set(on, "mpi_win_order", "true");
    CHECK_MPI(MPIX_Win_dup_with_info(win, on, &dup));
    MPI_Info_free(&on);
    check_win_info(win, "mpi_win_order", "false", "parent of an ordered duplicate");
    check_win_info(dup, "mpi_win_order", "true", "duplicate with mpi_win_order=true");
    both(dup, win, mem, "duplicate with mpi_win_order=true");
    CHECK_MPI(MPI_Win_free(&dup));
    CHECK_MPI(MPI_Win_free(&win));
}

/* A dynamic window: the rkey cache decides per operation whether a put or
 * get goes by RDMA or as an active message (the first ones toward a target
 * do, then the cached key's), and the order holds across the change. */
static void ordered_dynamic(void)
{
    MPI_Win win;
    MPI_Info info = engine_info();
    MPI_Aint mine;
    void *mem = malloc(win_elems() * 8);

    MPI_Info_set(info, "mpi_win_order", "true");
    CHECK_MPI(MPI_Win_create_dynamic(info, MPI_COMM_WORLD, &win));
    MPI_Info_free(&info);
    CHECK_MPI(MPI_Win_attach(win, mem, win_elems() * 8));
    dyn_addrs = malloc(nprocs * sizeof(MPI_Aint));
    CHECK_MPI(MPI_Get_address(mem, &mine));
    CHECK_MPI(MPI_Allgather(&mine, 1, MPI_AINT, dyn_addrs, 1, MPI_AINT, MPI_COMM_WORLD));
    check_win_info(win, "mpi_win_order", "true", "dynamic window with mpi_win_order=true");
    both(win, win, mem, "dynamic window");
    CHECK_MPI(MPI_Win_detach(win, mem));
    CHECK_MPI(MPI_Win_free(&win));
    free(dyn_addrs);
    dyn_addrs = NULL;
    free(mem);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    target = nprocs - 1;

    ordered_at_creation();
    ordered_by_set_info();
    ordered_duplicate();
    ordered_dynamic();
    return report_and_finalize();
}
