/*
 * RMA that needs no one's CPU but the origin's: the target sleeps outside MPI
 * while the origin puts, gets, fetches-and-adds, compares-and-swaps and
 * accumulates into its window memory and flushes, on a window from
 * MPI_Win_allocate and on one that MPI_Win_create makes over MPI_Alloc_mem
 * memory; and puts and gets on one that MPI_Win_create makes over malloc'ed
 * memory, which UCX does not map but the origin writes and reads by
 * cross-memory attach (accumulates there wait for the target: not run), and
 * everything on one from MPI_Win_allocate_shared, whose node-shared segment
 * the origin maps: it copies into and out of it and updates it with its own
 * CPU's atomics (double sums and int maxima too, by compare-and-swap loops,
 * as on the windows of UCX memory, which ucp_rkey_ptr maps at the origin).
 *
 * Whether the origin was done before the target woke is not judged by time:
 * the target writes an "awake" word into its own window as soon as it wakes,
 * and the origin reads that word with MPI_Get + flush after its operations; a
 * path that waited for the target sees 1 there. After the target woke, it
 * checks every value the origin's operations left in its memory, and the
 * origin checks what it fetched.
 *
 * Then the same for lock epochs: exclusive lock, put, unlock cycles while the
 * target sleeps (locks in the target's lock word, README "Synchronization
 * without the target's CPU").
 *
 * Run with 2 processes; argument: the target's sleep in seconds (default 3).
 */
#include "nbrma_test.h"
#include <stdint.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum { AWAKE, PUT_WORD, FOP_COUNTER, CAS_WORD, ACC_COUNTER, DOUBLE_SUM, DOUBLE_FOP, INT_MAX_WORD,
    N_WORDS
};
#define N_OPS 1000

/* UCX memory: copies through UCX's mapping of the peer's memory and UCX's
 * atomics; other memory: cross-memory attach. Either way the one peer. */
static void check_paths(MPI_Win win, bool ucx_memory, const char *what)
{
    check_win_info(win, "mpich_nbrma_ucx_memory", ucx_memory ? "true" : "false", what);
    check_win_info(win, "mpich_nbrma_native_atomics", ucx_memory ? "true" : "false", what);
    check_win_info(win, "mpich_nbrma_cross_memory_peers", "1", what);
}

/* typed: also double MPI_SUM accumulates and fetch_and_ops and int MPI_MAX
 * accumulates, which UCX has no atomics for (compare-and-swap loops of the
 * origin's CPU on mapped memory) */
static void run_ops(MPI_Win win, int64_t * mem, int rank, unsigned sleep_s, bool ucx_memory,
                    bool atomics, bool typed, const char *what)
{
    const int64_t one = 1;
    const double one_d = 1.0;
    int64_t fetched = -1, awake = -1, got = -1;
    double fetched_d = -1;

    check_paths(win, ucx_memory, what);
    memset(mem, 0, N_WORDS * sizeof(int64_t));
    CHECK_MPI(MPI_Win_lock_all(0, win));
    if (rank == 0) {
        /* the epoch is granted before the target sleeps */
        CHECK_MPI(MPI_Get(&got, 1, MPI_INT64_T, 1, AWAKE, 1, MPI_INT64_T, win));
        CHECK_MPI(MPI_Win_flush(1, win));
    }
    CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == 1) {
        sleep(sleep_s);         /* no MPI call: no progress here */
        __atomic_store_n(&mem[AWAKE], 1, __ATOMIC_SEQ_CST);
    } else {
        int64_t expected_fop = 0, cas_old = -1;
        for (int64_t i = 0; i < N_OPS; i++) {
            CHECK_MPI(MPI_Put(&i, 1, MPI_INT64_T, 1, PUT_WORD, 1, MPI_INT64_T, win));
            CHECK_MPI(MPI_Win_flush(1, win));
            CHECK_MPI(MPI_Get(&got, 1, MPI_INT64_T, 1, PUT_WORD, 1, MPI_INT64_T, win));
            CHECK_MPI(MPI_Win_flush(1, win));
            if (got != i && !nbrma_test_errors)
                CHECK(0, "%s: get after put %lld read %lld", what, (long long) i, (long long) got);
            if (!atomics)
                continue;
            CHECK_MPI(MPI_Fetch_and_op(&one, &fetched, MPI_INT64_T, 1, FOP_COUNTER, MPI_SUM,
                                       win));
            CHECK_MPI(MPI_Win_flush(1, win));
            if (fetched != expected_fop++ && !nbrma_test_errors)
                CHECK(0, "%s: fetch_and_op %lld fetched %lld", what, (long long) i,
                      (long long) fetched);
            int64_t next = i + 1;
            CHECK_MPI(MPI_Compare_and_swap(&next, &i, &cas_old, MPI_INT64_T, 1, CAS_WORD, win));
            CHECK_MPI(MPI_Win_flush(1, win));
            if (cas_old != i && !nbrma_test_errors)
                CHECK(0, "%s: compare_and_swap %lld found %lld", what, (long long) i,
                      (long long) cas_old);
            CHECK_MPI(MPI_Accumulate(&one, 1, MPI_INT64_T, 1, ACC_COUNTER, 1, MPI_INT64_T,
                                     MPI_SUM, win));
            CHECK_MPI(MPI_Win_flush(1, win));
            if (!typed)
                continue;
            int rising = (int) i - N_OPS / 2;
            CHECK_MPI(MPI_Accumulate(&one_d, 1, MPI_DOUBLE, 1, DOUBLE_SUM, 1, MPI_DOUBLE,
                                     MPI_SUM, win));
            CHECK_MPI(MPI_Accumulate(&rising, 1, MPI_INT, 1, INT_MAX_WORD, 1, MPI_INT, MPI_MAX,
                                     win));
            CHECK_MPI(MPI_Fetch_and_op(&one_d, &fetched_d, MPI_DOUBLE, 1, DOUBLE_FOP, MPI_SUM,
                                       win));
            CHECK_MPI(MPI_Win_flush(1, win));
            if (fetched_d != (double) i && !nbrma_test_errors)
                CHECK(0, "%s: double fetch_and_op %lld fetched %g", what, (long long) i,
                      fetched_d);
        }
        CHECK_MPI(MPI_Get(&awake, 1, MPI_INT64_T, 1, AWAKE, 1, MPI_INT64_T, win));
        CHECK_MPI(MPI_Win_flush(1, win));
        CHECK(awake == 0, "%s: the origin's %d rounds of operations waited for the target "
              "(it was awake when they were done)", what, N_OPS);
    }
    CHECK_MPI(MPI_Win_unlock_all(win));
    CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == 1) {
        CHECK_MPI(MPI_Win_lock(MPI_LOCK_SHARED, 1, 0, win));    /* memory model: sync */
        CHECK(mem[PUT_WORD] == N_OPS - 1, "%s: put word %lld", what, (long long) mem[PUT_WORD]);
        if (atomics) {
            CHECK(mem[FOP_COUNTER] == N_OPS, "%s: fetch_and_op counter %lld", what,
                  (long long) mem[FOP_COUNTER]);
            CHECK(mem[CAS_WORD] == N_OPS, "%s: compare_and_swap word %lld", what,
                  (long long) mem[CAS_WORD]);
            CHECK(mem[ACC_COUNTER] == N_OPS, "%s: accumulate counter %lld", what,
                  (long long) mem[ACC_COUNTER]);
        }
        if (typed) {
            double sum, fop;
            int max;
            memcpy(&sum, &mem[DOUBLE_SUM], sizeof(sum));
            memcpy(&fop, &mem[DOUBLE_FOP], sizeof(fop));
            memcpy(&max, &mem[INT_MAX_WORD], sizeof(max));
            CHECK(sum == N_OPS && fop == N_OPS, "%s: double sums %g and %g, expected %d", what,
                  sum, fop, N_OPS);
            CHECK(max == N_OPS - 1 - N_OPS / 2, "%s: int maximum %d, expected %d", what, max,
                  N_OPS - 1 - N_OPS / 2);
        }
        CHECK_MPI(MPI_Win_unlock(1, win));
    }
    CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
}

static void run(MPI_Win win, int64_t * mem, int rank, unsigned sleep_s, bool ucx_memory,
                const char *what)
{
    run_ops(win, mem, rank, sleep_s, ucx_memory, ucx_memory, ucx_memory, what);
}

/* Lock epochs while the target sleeps: N_OPS exclusive lock, put, unlock
 * cycles, then a shared lock_all epoch that reads the awake word (lock words
 * need no grant from the target). */
static void run_locks(MPI_Win win, int64_t * mem, int rank, unsigned sleep_s, const char *what)
{
    int64_t awake = -1;

    memset(mem, 0, N_WORDS * sizeof(int64_t));
    CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == 1) {
        sleep(sleep_s);         /* no MPI call: no progress here */
        __atomic_store_n(&mem[AWAKE], 1, __ATOMIC_SEQ_CST);
    } else {
        for (int64_t i = 0; i < N_OPS; i++) {
            CHECK_MPI(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 1, 0, win));
            CHECK_MPI(MPI_Put(&i, 1, MPI_INT64_T, 1, PUT_WORD, 1, MPI_INT64_T, win));
            CHECK_MPI(MPI_Win_unlock(1, win));
        }
        CHECK_MPI(MPI_Win_lock_all(0, win));
        CHECK_MPI(MPI_Get(&awake, 1, MPI_INT64_T, 1, AWAKE, 1, MPI_INT64_T, win));
        CHECK_MPI(MPI_Win_unlock_all(win));
        CHECK(awake == 0, "%s: the origin's %d lock, put, unlock cycles waited for the target "
              "(it was awake when they were done)", what, N_OPS);
    }
    CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == 1) {
        CHECK_MPI(MPI_Win_lock(MPI_LOCK_SHARED, 1, 0, win));
        CHECK(mem[PUT_WORD] == N_OPS - 1, "%s: locked puts left %lld", what,
              (long long) mem[PUT_WORD]);
        CHECK_MPI(MPI_Win_unlock(1, win));
    }
    CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
}

int main(int argc, char **argv)
{
    int rank, size;
    unsigned sleep_s = argc > 1 ? (unsigned) atoi(argv[1]) : 3;
    int64_t *mem;
    MPI_Win win;
    MPI_Info info;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size != 2) {
        if (rank == 0)
            fprintf(stderr, "run with 2 processes\n");
        MPI_Abort(MPI_COMM_WORLD, 1);
    }

    CHECK_MPI(MPI_Win_allocate(N_WORDS * sizeof(int64_t), sizeof(int64_t), MPI_INFO_NULL,
                               MPI_COMM_WORLD, &mem, &win));
    run(win, mem, rank, sleep_s, true, "MPI_Win_allocate");
    run_locks(win, mem, rank, sleep_s, "MPI_Win_allocate, locks");
    CHECK_MPI(MPI_Win_free(&win));

    CHECK_MPI(MPI_Alloc_mem(N_WORDS * sizeof(int64_t), MPI_INFO_NULL, &mem));
    CHECK_MPI(MPI_Win_create(mem, N_WORDS * sizeof(int64_t), sizeof(int64_t), MPI_INFO_NULL,
                             MPI_COMM_WORLD, &win));
    run(win, mem, rank, sleep_s, true, "MPI_Win_create over MPI_Alloc_mem");
    run_locks(win, mem, rank, sleep_s, "MPI_Win_create over MPI_Alloc_mem, locks");
    CHECK_MPI(MPI_Win_free(&win));
    CHECK_MPI(MPI_Free_mem(mem));

    mem = calloc(N_WORDS, sizeof(int64_t));
    CHECK(mem != NULL, "out of memory");
    /* where the system call is dear, the puts and gets of a window take
     * UCX's path, which waits for the target's CPU (rule R1): a window that
     * must not wait allows any price (a second here). The default threshold
     * holds for the puts of a window that called a local flush only, so this
     * window's puts and gets of every size are cross-memory copies */
    CHECK_MPI(MPI_Info_create(&info));
    CHECK_MPI(MPI_Info_set(info, "mpich_nbrma_cross_memory_call_max_ns", "1000000000"));
    CHECK_MPI(MPI_Win_create(mem, N_WORDS * sizeof(int64_t), sizeof(int64_t), info,
                             MPI_COMM_WORLD, &win));
    CHECK_MPI(MPI_Info_free(&info));
    check_win_info(win, "mpich_nbrma_cross_memory_min_bytes", "4096", "window over malloc");
    check_win_info(win, "mpich_nbrma_cross_memory_call_max_ns", "1000000000",
                   "window over malloc");
    run(win, mem, rank, sleep_s, false, "MPI_Win_create over malloc");
    run_locks(win, mem, rank, sleep_s, "MPI_Win_create over malloc, locks");
    CHECK_MPI(MPI_Win_free(&win));
    free(mem);

    /* MPICH's node-shared segment, which this process maps: puts and gets of
     * every size are copies with loads and stores, at the default threshold */
    CHECK_MPI(MPI_Win_allocate_shared(N_WORDS * sizeof(int64_t), sizeof(int64_t), MPI_INFO_NULL,
                                      MPI_COMM_WORLD, &mem, &win));
    run_ops(win, mem, rank, sleep_s, false, true, true, "MPI_Win_allocate_shared");
    run_locks(win, mem, rank, sleep_s, "MPI_Win_allocate_shared, locks");
    CHECK_MPI(MPI_Win_free(&win));

    return report_and_finalize();
}
