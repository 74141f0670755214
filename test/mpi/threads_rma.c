/*
 * MPI_THREAD_MULTIPLE: 4 threads per rank use the engine and every MPIX_ call
 * at once, the data checked at the targets:
 *  - one shared window in a lock_all epoch: each thread puts into its own
 *    slots of another rank, adds to a counter there by accumulate (UCX atomics
 *    on allocated windows) and fetch_and_op, and flushes with MPI_Win_flush,
 *    MPIX_Win_iflush, MPI_Win_flush_all and MPIX_Win_iflush_all in turn;
 *  - a window per thread: each thread runs its own fence, PSCW, exclusive
 *    lock and lock_all epochs, blocking and nonblocking (MPIX_Win_ifence,
 *    _ipost, _istart, _icomplete, _iwait, _ilock, _iunlock, _ilock_all,
 *    _iunlock_all, _iflush_local_all) mixed, on its own window;
 *  - a dynamic window whose threads each attach memory and create a memory
 *    handle at once, then put through the rkey cache (by address) and
 *    through memory-handle windows they make, flushing the parent;
 *  - requests one thread creates (MPIX_Win_iflush_all, MPIX_Win_iflush_local)
 *    and another thread completes;
 *  - a blocking call must let the process's other threads into MPI: rank 0
 *    locks its own window while rank 1 holds that lock until a message from
 *    another thread of rank 0 arrives;
 *  - blocking calls of several threads on one window at once: rank 1's
 *    threads put and flush while its lock epoch waits for rank 0's lock,
 *    each flush waiting in the engine (the window's blocking call for one,
 *    requests for the others); the puts checked at rank 0.
 * Every request is waited for with a time limit; a blocking call that hangs is
 * stopped by the harness's limit.
 */
#include "nbrma_test_threads.h"
#include <stdint.h>

#define N_THREADS 4
#define N_PUTS 200
#define FLUSH_EVERY 10
#define N_EPOCHS 30
#define TIMEOUT 60.0

static int rank, nprocs;
static pthread_barrier_t barrier;

/* The rank thread t of this rank targets: never itself, spread over the others. */
static int target_of(int r, int t)
{
    return (r + 1 + t % (nprocs - 1)) % nprocs;
}

static long slot_value(int origin, int t, int i)
{
    return 1000000L * (origin + 1) + 1000L * t + i;
}

/* ---- one shared window, passive target ---- */

static MPI_Win shared_win;
static long *shared_base;       /* [nprocs][N_THREADS][N_PUTS] slots, then a counter */
#define COUNTER_INDEX (nprocs * N_THREADS * N_PUTS)

static void flush_in_turn(int target, int round)
{
    MPI_Request req;
    switch (round % 4) {
    case 0:
        CHECK_MPI(MPI_Win_flush(target, shared_win));
        break;
    case 1:
        CHECK_MPI(MPIX_Win_iflush(target, shared_win, &req));
        wait_or_abort(&req, TIMEOUT, "MPIX_Win_iflush from a thread");
        break;
    case 2:
        CHECK_MPI(MPI_Win_flush_all(shared_win));
        break;
    default:
        CHECK_MPI(MPIX_Win_iflush_all(shared_win, &req));
        wait_or_abort(&req, TIMEOUT, "MPIX_Win_iflush_all from a thread");
        break;
    }
}

static void *shared_window_thread(void *arg)
{
    const int t = (int) (long) arg;
    const int target = target_of(rank, t);
    long values[N_PUTS];
    long one = 1, fetched;

    for (int i = 0; i < N_PUTS; i++) {
        values[i] = slot_value(rank, t, i);
        MPI_Aint disp = ((MPI_Aint) rank * N_THREADS + t) * N_PUTS + i;
        CHECK_MPI(MPI_Put(&values[i], 1, MPI_LONG, target, disp, 1, MPI_LONG, shared_win));
        if (i % 2)
            CHECK_MPI(MPI_Accumulate(&one, 1, MPI_LONG, target, COUNTER_INDEX, 1, MPI_LONG,
                                     MPI_SUM, shared_win));
        else
            CHECK_MPI(MPI_Fetch_and_op(&one, &fetched, MPI_LONG, target, COUNTER_INDEX,
                                       MPI_SUM, shared_win));
        if (i % FLUSH_EVERY == FLUSH_EVERY - 1)
            flush_in_turn(target, i / FLUSH_EVERY);
    }
    CHECK_MPI(MPI_Win_flush(target, shared_win));
    return NULL;
}

static void test_shared_window(void)
{
    const MPI_Aint bytes = (COUNTER_INDEX + 1) * sizeof(long);
    int expected_count = 0;

    CHECK_MPI(allocate_engine_win(bytes, sizeof(long), MPI_COMM_WORLD, &shared_base,
                                  &shared_win));
    memset(shared_base, 0, bytes);
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK_MPI(MPI_Win_lock_all(0, shared_win));
    run_threads(N_THREADS, shared_window_thread);
    CHECK_MPI(MPI_Win_unlock_all(shared_win));
    MPI_Barrier(MPI_COMM_WORLD);

    for (int origin = 0; origin < nprocs; origin++)
        for (int t = 0; t < N_THREADS; t++) {
            if (target_of(origin, t) != rank)
                continue;
            expected_count += N_PUTS;
            for (int i = 0; i < N_PUTS; i++) {
                long got = shared_base[(origin * N_THREADS + t) * N_PUTS + i];
                CHECK(got == slot_value(origin, t, i), "shared window: put %d of thread %d "
                      "of rank %d left %ld", i, t, origin, got);
            }
        }
    CHECK(shared_base[COUNTER_INDEX] == expected_count, "shared window: counter %ld, "
          "expected %d", shared_base[COUNTER_INDEX], expected_count);
    CHECK_MPI(MPI_Win_free(&shared_win));
}

/* ---- a window per thread, each thread its own epochs ---- */

static MPI_Win thread_win[N_THREADS];
static long *thread_base[N_THREADS];    /* [nprocs] slots per window */

static void check_slot(int t, int origin, long expected, const char *what, int epoch)
{
    long got = thread_base[t][origin];
    TCHECK(got == expected, "%s epoch %d, window of thread %d: slot of rank %d holds %ld, "
           "expected %ld", what, epoch, t, origin, got, expected);
}

static void fence_epoch(int t, int e)
{
    MPI_Win win = thread_win[t];
    MPI_Request req;
    long value = slot_value(rank, t, e);
    int right = (rank + 1) % nprocs, left = (rank + nprocs - 1) % nprocs;

    if (e % 2) {
        CHECK_MPI(MPIX_Win_ifence(MPI_MODE_NOPRECEDE, win, &req));
        CHECK_MPI(MPI_Put(&value, 1, MPI_LONG, right, rank, 1, MPI_LONG, win));
        wait_or_abort(&req, TIMEOUT, "MPIX_Win_ifence (opening)");
        CHECK_MPI(MPIX_Win_ifence(MPI_MODE_NOSUCCEED, win, &req));
        wait_or_abort(&req, TIMEOUT, "MPIX_Win_ifence (closing)");
    } else {
        CHECK_MPI(MPI_Win_fence(MPI_MODE_NOPRECEDE, win));
        CHECK_MPI(MPI_Put(&value, 1, MPI_LONG, right, rank, 1, MPI_LONG, win));
        CHECK_MPI(MPI_Win_fence(MPI_MODE_NOSUCCEED, win));
    }
    check_slot(t, left, slot_value(left, t, e), "fence", e);
    /* nobody writes my slots until everyone has checked theirs */
    CHECK_MPI(MPI_Win_fence(MPI_MODE_NOPRECEDE | MPI_MODE_NOSUCCEED, win));
}

static void pscw_epoch(int t, int e, MPI_Group left_group, MPI_Group right_group)
{
    MPI_Win win = thread_win[t];
    MPI_Request reqs[4];
    long value = slot_value(rank, t, e);
    int right = (rank + 1) % nprocs, left = (rank + nprocs - 1) % nprocs;

    if (e % 2) {
        CHECK_MPI(MPIX_Win_ipost(left_group, 0, win, &reqs[0]));
        CHECK_MPI(MPIX_Win_istart(right_group, 0, win, &reqs[1]));
        CHECK_MPI(MPI_Put(&value, 1, MPI_LONG, right, rank, 1, MPI_LONG, win));
        CHECK_MPI(MPIX_Win_icomplete(win, &reqs[2]));
        CHECK_MPI(MPIX_Win_iwait(win, &reqs[3]));
        wait_all_or_abort(4, reqs, TIMEOUT, "nonblocking PSCW from a thread");
    } else {
        CHECK_MPI(MPI_Win_post(left_group, 0, win));
        CHECK_MPI(MPI_Win_start(right_group, 0, win));
        CHECK_MPI(MPI_Put(&value, 1, MPI_LONG, right, rank, 1, MPI_LONG, win));
        CHECK_MPI(MPI_Win_complete(win));
        CHECK_MPI(MPI_Win_wait(win));
    }
    check_slot(t, left, slot_value(left, t, e), "PSCW", e);
    /* the next epoch may be a lock epoch, which needs nobody's post */
    CHECK_MPI(MPI_Win_fence(MPI_MODE_NOPRECEDE | MPI_MODE_NOSUCCEED, win));
}

/* After a passive epoch toward my right neighbour: my left neighbour's
 * unlock has returned once its fence does; then nobody writes my slot until
 * everyone has checked theirs. */
static void check_after_passive_epoch(int t, int e, const char *what)
{
    MPI_Win win = thread_win[t];
    int left = (rank + nprocs - 1) % nprocs;

    CHECK_MPI(MPI_Win_fence(MPI_MODE_NOPRECEDE | MPI_MODE_NOSUCCEED, win));
    CHECK_MPI(MPI_Win_lock(MPI_LOCK_SHARED, rank, 0, win));
    check_slot(t, left, slot_value(left, t, e), what, e);
    CHECK_MPI(MPI_Win_unlock(rank, win));
    CHECK_MPI(MPI_Win_fence(MPI_MODE_NOPRECEDE | MPI_MODE_NOSUCCEED, win));
}

static void lock_epoch(int t, int e)
{
    MPI_Win win = thread_win[t];
    MPI_Request req;
    long value = slot_value(rank, t, e);
    int right = (rank + 1) % nprocs;

    if (e % 2) {
        CHECK_MPI(MPIX_Win_ilock(MPI_LOCK_EXCLUSIVE, right, 0, win, &req));
        CHECK_MPI(MPI_Put(&value, 1, MPI_LONG, right, rank, 1, MPI_LONG, win));
        wait_or_abort(&req, TIMEOUT, "MPIX_Win_ilock from a thread");
        CHECK_MPI(MPIX_Win_iunlock(right, win, &req));
        wait_or_abort(&req, TIMEOUT, "MPIX_Win_iunlock from a thread");
    } else {
        CHECK_MPI(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, right, 0, win));
        CHECK_MPI(MPI_Put(&value, 1, MPI_LONG, right, rank, 1, MPI_LONG, win));
        CHECK_MPI(MPI_Win_unlock(right, win));
    }
    check_after_passive_epoch(t, e, "lock");
}

static void lock_all_epoch(int t, int e)
{
    MPI_Win win = thread_win[t];
    MPI_Request req;
    long value = slot_value(rank, t, e);
    int right = (rank + 1) % nprocs;

    if (e % 2) {
        CHECK_MPI(MPIX_Win_ilock_all(0, win, &req));
        CHECK_MPI(MPI_Put(&value, 1, MPI_LONG, right, rank, 1, MPI_LONG, win));
        wait_or_abort(&req, TIMEOUT, "MPIX_Win_ilock_all from a thread");
        CHECK_MPI(MPIX_Win_iflush_local_all(win, &req));
        wait_or_abort(&req, TIMEOUT, "MPIX_Win_iflush_local_all from a thread");
        CHECK_MPI(MPIX_Win_iunlock_all(win, &req));
        wait_or_abort(&req, TIMEOUT, "MPIX_Win_iunlock_all from a thread");
    } else {
        CHECK_MPI(MPI_Win_lock_all(0, win));
        CHECK_MPI(MPI_Put(&value, 1, MPI_LONG, right, rank, 1, MPI_LONG, win));
        CHECK_MPI(MPI_Win_unlock_all(win));
    }
    check_after_passive_epoch(t, e, "lock_all");
}

static void *window_per_thread(void *arg)
{
    const int t = (int) (long) arg;
    MPI_Group world, left_group, right_group;
    int left = (rank + nprocs - 1) % nprocs, right = (rank + 1) % nprocs;

    CHECK_MPI(MPI_Win_get_group(thread_win[t], &world));
    CHECK_MPI(MPI_Group_incl(world, 1, &left, &left_group));
    CHECK_MPI(MPI_Group_incl(world, 1, &right, &right_group));
    for (int e = 0; e < N_EPOCHS; e++) {
        switch ((e + t) % 4) {
        case 0:
            fence_epoch(t, e);
            break;
        case 1:
            pscw_epoch(t, e, left_group, right_group);
            break;
        case 2:
            lock_epoch(t, e);
            break;
        default:
            lock_all_epoch(t, e);
            break;
        }
    }
    MPI_Group_free(&left_group);
    MPI_Group_free(&right_group);
    MPI_Group_free(&world);
    return NULL;
}

static void test_window_per_thread(void)
{
    for (int t = 0; t < N_THREADS; t++) {
        CHECK_MPI(allocate_engine_win(nprocs * sizeof(long), sizeof(long), MPI_COMM_WORLD,
                                      &thread_base[t], &thread_win[t]));
        memset(thread_base[t], 0, nprocs * sizeof(long));
    }
    MPI_Barrier(MPI_COMM_WORLD);
    run_threads(N_THREADS, window_per_thread);
    for (int t = 0; t < N_THREADS; t++)
        CHECK_MPI(MPI_Win_free(&thread_win[t]));
}

/* ---- a dynamic window: attach, rkey cache and memory handles from threads ---- */

#define DYN_LONGS 64            /* per buffer: [0, 32) by address, [32, 64) by handle */
static MPI_Win dyn_win;
static MPI_Comm thread_comm[N_THREADS];

static void *dynamic_thread(void *arg)
{
    const int t = (int) (long) arg;
    const int target = target_of(rank, t);
    long *attached = calloc(DYN_LONGS, sizeof(long)), *exposed = calloc(DYN_LONGS, sizeof(long));
    char *handles = calloc(nprocs, MPIX_MAX_MEMHANDLE_SIZE);
    MPI_Aint *addrs = calloc(nprocs, sizeof(MPI_Aint));
    long values[DYN_LONGS];
    int handle_size, source = -1;
    MPI_Win mh_win;

    CHECK_MPI(MPI_Win_attach(dyn_win, attached, DYN_LONGS * sizeof(long)));
    CHECK_MPI(MPIX_Memhandle_create(exposed, DYN_LONGS * sizeof(long), MPI_INFO_NULL, dyn_win,
                                    handles + rank * MPIX_MAX_MEMHANDLE_SIZE, &handle_size));
    CHECK_MPI(MPI_Get_address(attached, &addrs[rank]));
    /* each thread talks over its own communicator: collectives of several
     * threads on one communicator would be erroneous */
    CHECK_MPI(MPI_Allgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, addrs, 1, MPI_AINT,
                            thread_comm[t]));
    CHECK_MPI(MPI_Allgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, handles,
                            MPIX_MAX_MEMHANDLE_SIZE, MPI_BYTE, thread_comm[t]));
    CHECK_MPI(MPIX_Win_from_memhandle(handles + target * MPIX_MAX_MEMHANDLE_SIZE,
                                      DYN_LONGS * sizeof(long), sizeof(long), MPI_INFO_NULL,
                                      target, dyn_win, &mh_win));
    for (int i = 0; i < DYN_LONGS / 2; i++) {
        values[i] = slot_value(rank, t, i);
        values[DYN_LONGS / 2 + i] = -slot_value(rank, t, i);
        CHECK_MPI(MPI_Put(&values[i], 1, MPI_LONG, target,
                          MPI_Aint_add(addrs[target], i * sizeof(long)), 1, MPI_LONG,
                          dyn_win));
        CHECK_MPI(MPI_Put(&values[DYN_LONGS / 2 + i], 1, MPI_LONG, target, DYN_LONGS / 2 + i,
                          1, MPI_LONG, mh_win));
        if (i % FLUSH_EVERY == FLUSH_EVERY - 1)
            CHECK_MPI(MPI_Win_flush(target, dyn_win));  /* covers the handle's window too */
    }
    CHECK_MPI(MPI_Win_flush(target, dyn_win));
    CHECK_MPI(MPI_Barrier(thread_comm[t]));     /* every thread t's puts are done */

    for (int r = 0; r < nprocs; r++)
        if (target_of(r, t) == rank)
            source = r;
    for (int i = 0; source >= 0 && i < DYN_LONGS / 2; i++) {
        TCHECK(attached[i] == slot_value(source, t, i), "dynamic window, thread %d: put %d "
               "by address from rank %d left %ld", t, i, source, attached[i]);
        TCHECK(exposed[DYN_LONGS / 2 + i] == -slot_value(source, t, i), "memory handle, "
               "thread %d: put %d from rank %d left %ld", t, i, source,
               exposed[DYN_LONGS / 2 + i]);
    }
    CHECK_MPI(MPI_Barrier(thread_comm[t]));     /* nobody uses my memory any more */
    CHECK_MPI(MPI_Win_free(&mh_win));
    CHECK_MPI(MPIX_Memhandle_release(handles + rank * MPIX_MAX_MEMHANDLE_SIZE, dyn_win));
    CHECK_MPI(MPI_Win_detach(dyn_win, attached));
    free(attached);
    free(exposed);
    free(handles);
    free(addrs);
    return NULL;
}

static void test_dynamic_window(void)
{
    for (int t = 0; t < N_THREADS; t++)
        CHECK_MPI(MPI_Comm_dup(MPI_COMM_WORLD, &thread_comm[t]));
    CHECK_MPI(MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &dyn_win));
    CHECK_MPI(MPI_Win_lock_all(0, dyn_win));
    run_threads(N_THREADS, dynamic_thread);
    CHECK_MPI(MPI_Win_unlock_all(dyn_win));
    CHECK_MPI(MPI_Win_free(&dyn_win));
    for (int t = 0; t < N_THREADS; t++)
        CHECK_MPI(MPI_Comm_free(&thread_comm[t]));
}

/* ---- requests completed by a thread that did not create them ---- */

static MPI_Request handed_over[N_THREADS][2];

static void *hand_over_thread(void *arg)
{
    const int t = (int) (long) arg;
    const int target = target_of(rank, t);
    long value = slot_value(rank, t, 0);
    MPI_Aint disp = (MPI_Aint) rank * N_THREADS + t;

    CHECK_MPI(MPI_Put(&value, 1, MPI_LONG, target, disp, 1, MPI_LONG, shared_win));
    CHECK_MPI(MPIX_Win_iflush_local(target, shared_win, &handed_over[t][0]));
    CHECK_MPI(MPIX_Win_iflush_all(shared_win, &handed_over[t][1]));
    pthread_barrier_wait(&barrier);
    wait_all_or_abort(2, handed_over[(t + 1) % N_THREADS], TIMEOUT,
                      "flush requests another thread created");
    return NULL;
}

static void test_requests_handed_over(void)
{
    const MPI_Aint bytes = nprocs * N_THREADS * sizeof(long);

    CHECK_MPI(allocate_engine_win(bytes, sizeof(long), MPI_COMM_WORLD, &shared_base,
                                  &shared_win));
    memset(shared_base, 0, bytes);
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK_MPI(MPI_Win_lock_all(0, shared_win));
    run_threads(N_THREADS, hand_over_thread);
    /* the flush_all requests are complete: every put is at its target */
    MPI_Barrier(MPI_COMM_WORLD);
    for (int origin = 0; origin < nprocs; origin++)
        for (int t = 0; t < N_THREADS; t++)
            if (target_of(origin, t) == rank)
                CHECK(shared_base[origin * N_THREADS + t] == slot_value(origin, t, 0),
                      "handed-over flush: put of thread %d of rank %d left %ld", t, origin,
                      shared_base[origin * N_THREADS + t]);
    CHECK_MPI(MPI_Win_unlock_all(shared_win));
    CHECK_MPI(MPI_Win_free(&shared_win));
}

/* ---- a thread waiting in MPI_Win_lock on itself, another thread sending ---- */

static MPI_Win self_win;
static long *self_base;

static void *lock_self_thread(void *arg)
{
    (void) arg;
    CHECK_MPI(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, self_win));
    TCHECK(self_base[0] == 42, "self lock: granted while rank 1 held the lock (%ld)",
           self_base[0]);
    CHECK_MPI(MPI_Win_unlock(0, self_win));
    return NULL;
}

static void *send_release_thread(void *arg)
{
    int token = 7;
    (void) arg;
    usleep(100 * 1000);         /* the other thread is waiting for its lock by now */
    CHECK_MPI(MPI_Send(&token, 1, MPI_INT, 1, 0, MPI_COMM_WORLD));
    return NULL;
}

static void test_self_lock_lets_others_in(void)
{
    long value = 42;
    int token = 0;

    CHECK_MPI(allocate_engine_win(sizeof(long), sizeof(long), MPI_COMM_WORLD, &self_base,
                                  &self_win));
    self_base[0] = 0;
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 1) {
        CHECK_MPI(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, self_win));
        CHECK_MPI(MPI_Put(&value, 1, MPI_LONG, 0, 0, 1, MPI_LONG, self_win));
        CHECK_MPI(MPI_Win_flush(0, self_win));  /* the lock is held */
        CHECK_MPI(MPI_Send(&token, 1, MPI_INT, 0, 0, MPI_COMM_WORLD));
        CHECK_MPI(MPI_Recv(&token, 1, MPI_INT, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        CHECK(token == 7, "self lock: message %d", token);
        CHECK_MPI(MPI_Win_unlock(0, self_win));
    } else if (rank == 0) {
        pthread_t locker, sender;
        CHECK_MPI(MPI_Recv(&token, 1, MPI_INT, 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        pthread_create(&locker, NULL, lock_self_thread, NULL);
        pthread_create(&sender, NULL, send_release_thread, NULL);
        pthread_join(sender, NULL);
        pthread_join(locker, NULL);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK_MPI(MPI_Win_free(&self_win));
}

/* ---- threads that flush at once while the lock waits for its grant ---- */

static MPI_Win grant_win;
static long *grant_base;

/* Rank 1's threads: a put each into rank 0's window, then MPI_Win_flush,
 * all while rank 0 still holds the lock that rank 1's epoch waits for: every
 * flush waits in the engine at once (one thread through the window's
 * blocking call, the others through requests of their own). */
static void *put_and_flush_thread(void *arg)
{
    int t = (int) (intptr_t) arg;
    long value = slot_value(1, t, 0);

    long seen = -2;

    CHECK_MPI(MPI_Put(&value, 1, MPI_LONG, 0, t, 1, MPI_LONG, grant_win));
    CHECK_MPI(MPI_Win_flush(0, grant_win));
    /* the put is in rank 0's memory once the flush returned */
    CHECK_MPI(MPI_Get(&seen, 1, MPI_LONG, 0, t, 1, MPI_LONG, grant_win));
    CHECK_MPI(MPI_Win_flush(0, grant_win));
    TCHECK(seen == value, "grant: thread %d reads %ld after its flush, not %ld", t, seen,
           value);
    return NULL;
}

static void test_flushes_wait_for_grant(void)
{
    CHECK_MPI(allocate_engine_win(N_THREADS * sizeof(long), sizeof(long), MPI_COMM_WORLD,
                                  &grant_base, &grant_win));
    for (int t = 0; t < N_THREADS; t++)
        grant_base[t] = -1;
    if (rank == 0)
        CHECK_MPI(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, grant_win));
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 1) {
        pthread_t threads[N_THREADS];

        CHECK_MPI(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, grant_win));
        for (int t = 0; t < N_THREADS; t++)
            pthread_create(&threads[t], NULL, put_and_flush_thread, (void *) (intptr_t) t);
        for (int t = 0; t < N_THREADS; t++)
            pthread_join(threads[t], NULL);
        CHECK_MPI(MPI_Win_unlock(0, grant_win));
    } else if (rank == 0) {
        usleep(100 * 1000);     /* rank 1's threads are waiting in their flushes by now */
        for (int t = 0; t < N_THREADS; t++)
            CHECK(grant_base[t] == -1, "grant: slot %d written under my lock (%ld)", t,
                  grant_base[t]);
        CHECK_MPI(MPI_Win_unlock(0, grant_win));
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) {
        CHECK_MPI(MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, grant_win));
        for (int t = 0; t < N_THREADS; t++)
            CHECK(grant_base[t] == slot_value(1, t, 0), "grant: slot %d holds %ld, not %ld", t,
                  grant_base[t], slot_value(1, t, 0));
        CHECK_MPI(MPI_Win_unlock(0, grant_win));
    }
    CHECK_MPI(MPI_Win_free(&grant_win));
}

int main(int argc, char **argv)
{
    int provided;

    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    CHECK(provided == MPI_THREAD_MULTIPLE, "provided thread level %d", provided);
    if (provided != MPI_THREAD_MULTIPLE || nprocs < 2)
        return report_and_finalize();
    pthread_barrier_init(&barrier, NULL, N_THREADS);

    test_shared_window();
    test_window_per_thread();
    test_dynamic_window();
    test_requests_handed_over();
    test_self_lock_lets_others_in();
    test_flushes_wait_for_grant();

    pthread_barrier_destroy(&barrier);
    return report_and_finalize();
}
