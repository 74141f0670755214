/*
 * Thread-scope flushes (info key mpi_win_scope=thread, Quo Vadis MPI RMA 2.1):
 * MPI_Win_flush* and MPIX_Win_iflush* complete the calling thread's
 * operations and need not wait for other threads'.
 *  - MPI_Win_get_info reports the scope in force: "thread" where asked,
 *    "process" by default and for values it does not know;
 *  - a flush that must not wait: on rank 0, thread B sends an MPI_LXOR
 *    accumulate (an active message: the target's CPU applies it) to the last
 *    rank, which computes outside MPI until a flag arrives, and then waits in
 *    its own thread-scope flush; thread A puts data, flushes with thread
 *    scope, and puts the flag. The target must see the flag, and the data
 *    before it, while it still computes (5 s at most); B's flush completes
 *    once the target enters MPI;
 *  - 4 threads per rank put, accumulate and flush with every flush call
 *    (MPI_Win_flush, _flush_local, _flush_all, MPIX_Win_iflush,
 *    _iflush_all), also inside their own MPIX_Win_ilock epochs whose
 *    operations may be recorded until the lock is granted, and on a dynamic
 *    window; every value is checked at its target.
 * Every request is waited for with a time limit.
 */
#include "nbrma_test_threads.h"

#define N_THREADS 4
#define N_ROUNDS 300
#define TIMEOUT 60.0

static int rank, nprocs;
static pthread_barrier_t barrier;

static MPI_Win allocate_scoped(MPI_Aint bytes, const char *scope, long **base)
{
    MPI_Win win;
    CHECK_MPI(allocate_engine_win_with(bytes, sizeof(long), MPI_COMM_WORLD, base, &win,
                                       scope ? "mpi_win_scope" : NULL, scope));
    return win;
}

static void scope_in_info(void)
{
    long *base;
    MPI_Win win = allocate_scoped(SMALL_WIN_BYTES, "thread", &base);
    check_win_info(win, "mpi_win_scope", "thread", "asked for thread");
    CHECK_MPI(MPI_Win_free(&win));
    win = allocate_scoped(SMALL_WIN_BYTES, NULL, &base);
    check_win_info(win, "mpi_win_scope", "process", "default");
    CHECK_MPI(MPI_Win_free(&win));
    win = allocate_scoped(SMALL_WIN_BYTES, "fiber", &base);
    check_win_info(win, "mpi_win_scope", "process", "unknown value");
    CHECK_MPI(MPI_Win_free(&win));
}

/* --- a thread-scope flush that must not wait for another thread's ---------- */

enum { DATA = 0, FLAG = 1, ACCUMULATED = 2 };
static MPI_Win busy_win;
static const long payload = 4242;

static void *busy_target_thread(void *arg)
{
    const int target = nprocs - 1;
    long t = (long) arg, one = 1, seven = 7;

    if (t == 1) {       /* B: an active message the target must apply */
        CHECK_MPI(MPI_Accumulate(&seven, 1, MPI_LONG, target, ACCUMULATED, 1, MPI_LONG,
                                 MPI_LXOR, busy_win));
        pthread_barrier_wait(&barrier);
        /* its own flush waits for the target's CPU, and lets A into MPI */
        CHECK_MPI(MPI_Win_flush(target, busy_win));
    } else {    /* A: waits until B's accumulate is out */
        pthread_barrier_wait(&barrier);
        CHECK_MPI(MPI_Put(&payload, 1, MPI_LONG, target, DATA, 1, MPI_LONG, busy_win));
        CHECK_MPI(MPI_Win_flush(target, busy_win));
        CHECK_MPI(MPI_Put(&one, 1, MPI_LONG, target, FLAG, 1, MPI_LONG, busy_win));
        CHECK_MPI(MPI_Win_flush(target, busy_win));
    }
    return NULL;
}

static void flush_without_waiting_for_others(void)
{
    long *base;
    busy_win = allocate_scoped(SMALL_WIN_BYTES, "thread", &base);
    base[DATA] = base[FLAG] = base[ACCUMULATED] = 0;
    CHECK_MPI(MPI_Win_lock_all(0, busy_win));
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) {
        run_threads(2, busy_target_thread);
    } else if (rank == nprocs - 1) {
        volatile long *seen = base;
        double deadline = MPI_Wtime() + 5.0;
        while (seen[FLAG] == 0 && MPI_Wtime() < deadline)
            ;   /* computing: no MPI call */
        if (shared_memory_between_peers()) {
            CHECK(seen[FLAG] == 1, "thread A's thread-scope flush waited for thread B's "
                  "accumulate, which needs this rank's CPU");
            CHECK(seen[FLAG] == 0 || seen[DATA] == payload,
                  "the flag came before the flushed data (%ld)", seen[DATA]);
        }
    }
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK_MPI(MPI_Win_unlock_all(busy_win));
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == nprocs - 1)
        CHECK(base[DATA] == payload && base[FLAG] == 1 && base[ACCUMULATED] == 1,
              "after the epoch: data %ld flag %ld accumulated %ld (0 lxor 7: 1)", base[DATA],
              base[FLAG], base[ACCUMULATED]);
    CHECK_MPI(MPI_Win_free(&busy_win));
}

/* --- every flush call from 4 threads, checked at the targets --------------- */

/* Layout of a window: for each origin rank and thread, N_ROUNDS slots the
 * thread puts into, then one counter per origin rank that threads add to. */
static MPI_Win many_win;
/* on a dynamic window: every rank's attached block (NULL otherwise: the
 * displacement unit is a long) */
static MPI_Aint *many_addrs;

static MPI_Aint at(int target, long index)
{
    return many_addrs ? many_addrs[target] + index * (MPI_Aint) sizeof(long) : index;
}
#define SLOT(origin, t, i) (((origin) * N_THREADS + (t)) * N_ROUNDS + (i))
#define COUNTER(origin) (nprocs * N_THREADS * N_ROUNDS + (origin))

static long value_of(int origin, int t, int i)
{
    return 1000000L * origin + 1000L * t + i + 1;
}

static void flush_in_turn(int target, int i)
{
    MPI_Request req;
    switch (i % 5) {
        case 0:
            CHECK_MPI(MPI_Win_flush(target, many_win));
            break;
        case 1:
            CHECK_MPI(MPI_Win_flush_local(target, many_win));
            CHECK_MPI(MPI_Win_flush(target, many_win));
            break;
        case 2:
            CHECK_MPI(MPI_Win_flush_all(many_win));
            break;
        case 3:
            CHECK_MPI(MPIX_Win_iflush(target, many_win, &req));
            wait_or_abort(&req, TIMEOUT, "MPIX_Win_iflush");
            break;
        default:
            CHECK_MPI(MPIX_Win_iflush_all(many_win, &req));
            wait_or_abort(&req, TIMEOUT, "MPIX_Win_iflush_all");
            break;
    }
}

static void *many_thread(void *arg)
{
    int t = (int) (long) arg;
    long one = 1;

    for (int i = 0; i < N_ROUNDS; i++) {
        int target = (rank + 1 + (t + i) % (nprocs - 1)) % nprocs;
        long v = value_of(rank, t, i);
        CHECK_MPI(MPI_Put(&v, 1, MPI_LONG, target, at(target, SLOT(rank, t, i)), 1, MPI_LONG,
                          many_win));
        CHECK_MPI(MPI_Accumulate(&one, 1, MPI_LONG, target, at(target, COUNTER(rank)), 1,
                                 MPI_LONG, MPI_SUM, many_win));
        flush_in_turn(target, i);
        /* after my flush my put is at the target: read it back */
        long back = 0;
        CHECK_MPI(MPI_Get(&back, 1, MPI_LONG, target, at(target, SLOT(rank, t, i)), 1, MPI_LONG,
                          many_win));
        CHECK_MPI(MPI_Win_flush(target, many_win));
        TCHECK(back == v, "thread %d round %d read back %ld from %d, put %ld", t, i, back,
               target, v);
    }
    return NULL;
}

/* a window per thread: lock epochs of one process toward one target must
 * not overlap */
static MPI_Win lock_wins[N_THREADS];

static void *locking_thread(void *arg)
{
    int t = (int) (long) arg;
    MPI_Win win = lock_wins[t];

    for (int i = 0; i < N_ROUNDS / 10; i++) {
        int target = (rank + 1 + (t + i) % (nprocs - 1)) % nprocs;
        long v = value_of(rank, t, i), back = 0;
        MPI_Request req;
        /* the put may be recorded until the lock is granted */
        CHECK_MPI(MPIX_Win_ilock(MPI_LOCK_SHARED, target, 0, win, &req));
        CHECK_MPI(MPI_Put(&v, 1, MPI_LONG, target, SLOT(rank, t, i), 1, MPI_LONG, win));
        CHECK_MPI(MPI_Win_flush(target, win));
        CHECK_MPI(MPI_Get(&back, 1, MPI_LONG, target, SLOT(rank, t, i), 1, MPI_LONG, win));
        CHECK_MPI(MPI_Win_flush(target, win));
        TCHECK(back == v, "lock epoch, thread %d round %d read back %ld, put %ld", t, i, back, v);
        wait_or_abort(&req, TIMEOUT, "MPIX_Win_ilock");
        CHECK_MPI(MPIX_Win_iunlock(target, win, &req));
        wait_or_abort(&req, TIMEOUT, "MPIX_Win_iunlock");
    }
    return NULL;
}

/* Checks the slots of rounds 0..rounds-1 of threads first..last at this rank,
 * and the counters when every round of every thread added to them. */
static void check_many(const long *base, int rounds, int first, int last)
{
    for (int origin = 0; origin < nprocs; origin++) {
        if (origin == rank)
            continue;
        long expected_count = 0;
        for (int t = first; t <= last; t++)
            for (int i = 0; i < rounds; i++) {
                int target = (origin + 1 + (t + i) % (nprocs - 1)) % nprocs;
                if (target != rank)
                    continue;
                expected_count++;
                CHECK(base[SLOT(origin, t, i)] == value_of(origin, t, i),
                      "slot of rank %d thread %d round %d holds %ld", origin, t, i,
                      base[SLOT(origin, t, i)]);
            }
        if (rounds == N_ROUNDS)
            CHECK(base[COUNTER(origin)] == expected_count, "counter of rank %d is %ld, "
                  "expected %ld", origin, base[COUNTER(origin)], expected_count);
    }
}

static void many_threads_many_flushes(void)
{
    long *base;
    MPI_Aint bytes = (MPI_Aint) (COUNTER(nprocs) + 1) * sizeof(long);

    many_win = allocate_scoped(bytes, "thread", &base);
    memset(base, 0, bytes);
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK_MPI(MPI_Win_lock_all(0, many_win));
    run_threads(N_THREADS, many_thread);
    CHECK_MPI(MPI_Win_unlock_all(many_win));
    MPI_Barrier(MPI_COMM_WORLD);
    check_many(base, N_ROUNDS, 0, N_THREADS - 1);
    CHECK_MPI(MPI_Win_free(&many_win));

    /* lock epochs of each thread on its own window */
    long *lock_base[N_THREADS];
    for (int t = 0; t < N_THREADS; t++) {
        lock_wins[t] = allocate_scoped(bytes, "thread", &lock_base[t]);
        memset(lock_base[t], 0, bytes);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    run_threads(N_THREADS, locking_thread);
    MPI_Barrier(MPI_COMM_WORLD);
    for (int t = 0; t < N_THREADS; t++) {
        check_many(lock_base[t], N_ROUNDS / 10, t, t);
        CHECK_MPI(MPI_Win_free(&lock_wins[t]));
    }
}

/* The same threads on a dynamic window, whose rkey cache takes puts and gets
 * by RDMA MPICH does not know of: each thread's flush completes its own. */
static void many_threads_dynamic(void)
{
    MPI_Aint bytes = (MPI_Aint) (COUNTER(nprocs) + 1) * sizeof(long), mine;
    long *base = calloc(1, bytes);
    MPI_Info info = engine_info();

    MPI_Info_set(info, "mpi_win_scope", "thread");
    CHECK_MPI(MPI_Win_create_dynamic(info, MPI_COMM_WORLD, &many_win));
    MPI_Info_free(&info);
    check_win_info(many_win, "mpi_win_scope", "thread", "dynamic window asked for thread");
    CHECK_MPI(MPI_Win_attach(many_win, base, bytes));
    many_addrs = malloc(nprocs * sizeof(MPI_Aint));
    CHECK_MPI(MPI_Get_address(base, &mine));
    CHECK_MPI(MPI_Allgather(&mine, 1, MPI_AINT, many_addrs, 1, MPI_AINT, MPI_COMM_WORLD));
    CHECK_MPI(MPI_Win_lock_all(0, many_win));
    run_threads(N_THREADS, many_thread);
    CHECK_MPI(MPI_Win_unlock_all(many_win));
    MPI_Barrier(MPI_COMM_WORLD);
    check_many(base, N_ROUNDS, 0, N_THREADS - 1);
    CHECK_MPI(MPI_Win_detach(many_win, base));
    CHECK_MPI(MPI_Win_free(&many_win));
    free(many_addrs);
    many_addrs = NULL;
    free(base);
}

int main(int argc, char **argv)
{
    int provided;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    if (provided != MPI_THREAD_MULTIPLE || nprocs < 2) {
        if (rank == 0)
            printf("needs MPI_THREAD_MULTIPLE and 2 ranks\n");
        MPI_Finalize();
        return 1;
    }
    pthread_barrier_init(&barrier, NULL, 2);
    scope_in_info();
    flush_without_waiting_for_others();
    many_threads_many_flushes();
    many_threads_dynamic();
    pthread_barrier_destroy(&barrier);
    return report_and_finalize();
}
