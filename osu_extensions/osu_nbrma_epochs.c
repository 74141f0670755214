/*
 * OSU-style benchmarks of nonblocking RMA epochs: the inefficiency patterns of
 * Zounmevo et al. ("Nonblocking epochs in MPI one-sided communication", SC14,
 * section VIII-A), massive unstructured atomic transactions (VIII-B), and put
 * latency with each kind of synchronization.
 *
 *   osu_nbrma_epochs PATTERN --series=blocking|nonblocking [options]
 *
 * Patterns (rank roles in brackets):
 *   late_post      [0 target, 1 two-sided partner, 2 origin] the target posts
 *                  --delay-us late (asleep, see be_late); the origin's epoch
 *                  holds one put, then it
 *                  sends --size bytes to rank 1. Times at the origin from its
 *                  start call: epoch end, end of the send, both.
 *   late_complete  [0 origin, 1 target] the origin puts, then works --delay-us
 *                  before completing. Times: at the target, post to wait's
 *                  end; at the origin, start to the epoch's completion.
 *   early_fence    [0 origin, 1 target] the origin puts in a fence epoch; the
 *                  target closes the epoch, then works --delay-us. Time at the
 *                  target: opening fence to the end of the work (and the
 *                  origin's opening fence to its epoch's completion).
 *   wait_at_fence  [0 origin, 1 target] the origin puts, then works --delay-us
 *                  before the closing fence. Times: opening fence to the end
 *                  of the closing fence, at the target and at the origin.
 *   late_unlock    [0 target, 1 first origin, 2 second origin] both lock the
 *                  target exclusively, rank 1 first; rank 1 works --delay-us
 *                  before its unlock. Times: each origin's lock call to the
 *                  completion of its unlock.
 *   atomics        [all] for --seconds, every rank updates random offsets of
 *                  random targets, each update in its own exclusive lock
 *                  epoch; prints transactions per second of the whole job and
 *                  checks that no update was lost. --window=W epochs may be
 *                  pending at once per rank in the nonblocking series;
 *                  --reorder also sets MPI_WIN_ACCESS_AFTER_ACCESS_REORDER.
 *   latency        [0 origin, 1 target] put latency for --size bytes with
 *                  fence, pscw, lock, flush (one lock, put+flush per
 *                  iteration) and lock_all (osu_put_latency's loops).
 *
 * --dynamic: every pattern on a window from MPI_Win_create_dynamic with each
 * rank's memory attached (its address exchanged once), instead of
 * MPI_Win_allocate.
 *
 * Series: "blocking" uses MPI_Win_* only and runs on any MPICH; "nonblocking"
 * closes epochs with MPIX_Win_i* and needs the patched MPICH. Windows are
 * created with the info key mpich_nbrma_epochs=true, which the patched MPICH
 * uses to put the window under the nonblocking-epoch engine (blocking calls
 * then run over the same engine) and vanilla MPICH ignores.
 *
 * Work: a fixed amount of computation, --delay-us on an idle core (calibrated
 * at start), in slices of 50 us. In the nonblocking series the working
 * process calls MPI_Test on its pending request between slices, which is what
 * an application that uses nonblocking epochs does and what lets this MPICH
 * (no asynchronous progress) move the epoch's data and send its completion
 * notice while the work goes on; the time those tests take adds to the
 * worker's times (late_complete and wait_at_fence report the origin's too).
 * In the blocking series there is nothing to test: the epoch is still open.
 * --no-poll: the worker makes no MPI call during its work in either series
 * (an application that computes without polling); what then moves during
 * the work moves without the worker's CPU.
 *
 * Processes that only wait (the two-sided partner, the lock target, ...) wait
 * with MPI_Test and a 20 us sleep, so that three ranks on two cores do not
 * compete for the CPU with the ranks whose times are measured.
 *
 * Output: "# pattern series", then one line per measured quantity with the
 * median and the minimum over --iters iterations in microseconds (atomics:
 * transactions per second). The iterations are separated by barriers.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* Only the patched MPICH declares the nonblocking epoch calls; it is
 * recognized by a macro of the same patch-set. */
#ifdef MPIX_MAX_MEMHANDLE_SIZE
#define HAVE_NBRMA 1
#else
#define HAVE_NBRMA 0
#endif

static int rank, nprocs;
static int nonblocking;
static size_t size = 1 << 20;
static double delay_us = 1000.0;
static int iters = 50;
static double seconds = 5.0;
static int window_depth = 16;
static int reorder;
static int poll_in_work = 1;

static void die(const char *what)
{
    fprintf(stderr, "rank %d: %s\n", rank, what);
    MPI_Abort(MPI_COMM_WORLD, 1);
}

#define CK(call) do { if ((call) != MPI_SUCCESS) die(#call); } while (0)

#if HAVE_NBRMA
#define NB(call) CK(call)
#else
/* never reached: main refuses the nonblocking series without the patched MPICH */
#define NB(call) die("the nonblocking series needs the patched MPICH")
#endif

static double now_us(void)
{
    return MPI_Wtime() * 1e6;
}

/* --delay-us of computation; between slices, progress on *req if given. */
/* Loop iterations of the work that take 50 us on an idle core, measured at
 * start: the work is a fixed amount of computation, so that time spent in
 * MPI_Test between its slices shows in the worker's times instead of being
 * taken from the computation. */
static long slice_iters;

static void compute(long n)
{
    volatile double x = 1.0;
    for (long i = 0; i < n; i++)
        x = x * 1.0000001 + 1e-9;
}

static void calibrate_work(void)
{
    const long n = 20000;
    double best = 1e30;

    for (int r = 0; r < 7; r++) {
        double t0 = now_us();
        compute(n);
        double t = now_us() - t0;
        if (t < best)
            best = t;
    }
    slice_iters = (long) (n * 50.0 / (best > 0.001 ? best : 0.001));
}

static void work(MPI_Request * req)
{
    int slices = (int) (delay_us / 50.0 + 0.5);

    for (int s = 0; s < slices; s++) {
        compute(slice_iters);
        if (poll_in_work && req && *req != MPI_REQUEST_NULL) {
            int flag;
            CK(MPI_Test(req, &flag, MPI_STATUS_IGNORE));
        }
    }
}

/* Being late by --delay-us without holding a core: on a machine with fewer
 * cores than ranks a late process that computes would take the core of the
 * two-sided partner whose transfer the pattern measures. */
static void be_late(void)
{
    struct timespec pause = { 0, (long) (delay_us * 1000.0) };
    nanosleep(&pause, NULL);
}

/* Waits for *req without holding a core: for the ranks that only serve. */
static void lazy_wait(MPI_Request * req)
{
    int flag = 0;
    struct timespec pause = { 0, 20000 };

    for (;;) {
        CK(MPI_Test(req, &flag, MPI_STATUS_IGNORE));
        if (flag)
            return;
        nanosleep(&pause, NULL);
    }
}

static void lazy_barrier(void)
{
    MPI_Request req;
    CK(MPI_Ibarrier(MPI_COMM_WORLD, &req));
    lazy_wait(&req);
}

static void wait_req(MPI_Request * req)
{
    CK(MPI_Wait(req, MPI_STATUS_IGNORE));
}

/* --dynamic: each rank's attached memory and its address at every rank */
static int dynamic;
static void *dyn_mem;
static MPI_Aint *dyn_addrs;

static MPI_Win make_win(size_t bytes, void **base)
{
    MPI_Info info;
    MPI_Win win;

    CK(MPI_Info_create(&info));
    CK(MPI_Info_set(info, "mpich_nbrma_epochs", "true"));
    if (reorder)
        CK(MPI_Info_set(info, "MPI_WIN_ACCESS_AFTER_ACCESS_REORDER", "true"));
    if (dynamic) {
        MPI_Aint mine;
        dyn_mem = calloc(1, bytes);
        dyn_addrs = realloc(dyn_addrs, nprocs * sizeof(MPI_Aint));
        if (dyn_mem == NULL || dyn_addrs == NULL)
            die("out of memory");
        CK(MPI_Win_create_dynamic(info, MPI_COMM_WORLD, &win));
        CK(MPI_Win_attach(win, dyn_mem, (MPI_Aint) bytes));
        CK(MPI_Get_address(dyn_mem, &mine));
        CK(MPI_Allgather(&mine, 1, MPI_AINT, dyn_addrs, 1, MPI_AINT, MPI_COMM_WORLD));
        *base = dyn_mem;
    } else {
        CK(MPI_Win_allocate((MPI_Aint) bytes, 1, info, MPI_COMM_WORLD, base, &win));
    }
    CK(MPI_Info_free(&info));
    return win;
}

/* Byte `offset` of `target`'s window memory as a displacement. */
static MPI_Aint at(int target, MPI_Aint offset)
{
    return dynamic ? dyn_addrs[target] + offset : offset;
}

static void free_win(MPI_Win * win)
{
    if (dynamic) {
        CK(MPI_Win_detach(*win, dyn_mem));
        CK(MPI_Win_free(win));
        free(dyn_mem);
        dyn_mem = NULL;
    } else {
        CK(MPI_Win_free(win));
    }
}

static MPI_Group group_of(int peer)
{
    MPI_Group world, g;
    CK(MPI_Comm_group(MPI_COMM_WORLD, &world));
    CK(MPI_Group_incl(world, 1, &peer, &g));
    CK(MPI_Group_free(&world));
    return g;
}

/* --- statistics ------------------------------------------------------------ */

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *) a, y = *(const double *) b;
    return (x > y) - (x < y);
}

static void report(const char *what, double *samples, int n)
{
    qsort(samples, n, sizeof(double), cmp_double);
    printf("%-34s %12.1f %12.1f\n", what, n % 2 ? samples[n / 2] :
           (samples[n / 2 - 1] + samples[n / 2]) / 2, samples[0]);
    fflush(stdout);
}

static void header(const char *pattern)
{
    printf("# %s %s (size %zu bytes, delay %.0f us, %d iterations)\n", pattern,
           nonblocking ? "nonblocking" : "blocking", size, delay_us, iters);
    printf("# %-32s %12s %12s\n", "what", "median(us)", "min(us)");
}

static void need_ranks(int n)
{
    if (nprocs != n)
        die("wrong number of ranks for this pattern");
}

/* --- the patterns ---------------------------------------------------------- */

static void late_post(void)
{
    char *base, *buf = calloc(1, size);
    MPI_Win win;
    double *epoch = calloc(iters, sizeof(double)), *after = calloc(iters, sizeof(double)),
        *both = calloc(iters, sizeof(double));

    need_ranks(3);
    win = make_win(size, (void **) &base);
    MPI_Group peer = group_of(rank == 0 ? 2 : 0);
    for (int i = 0; i < iters; i++) {
        lazy_barrier();
        if (rank == 0) {
            be_late();
            CK(MPI_Win_post(peer, 0, win));
            CK(MPI_Win_wait(win));
        } else if (rank == 1) {
            MPI_Request r;
            CK(MPI_Irecv(buf, (int) size, MPI_BYTE, 2, 0, MPI_COMM_WORLD, &r));
            lazy_wait(&r);
        } else {
            double t0 = now_us(), t_epoch, t_after;
            if (!nonblocking) {
                CK(MPI_Win_start(peer, 0, win));
                CK(MPI_Put(buf, (int) size, MPI_BYTE, 0, at(0, 0), (int) size, MPI_BYTE, win));
                CK(MPI_Win_complete(win));
                t_epoch = now_us();
                CK(MPI_Send(buf, (int) size, MPI_BYTE, 1, 0, MPI_COMM_WORLD));
                t_after = now_us();
            } else {
                MPI_Request start, complete, send;
                int done = 0;
                NB(MPIX_Win_istart(peer, 0, win, &start));
                CK(MPI_Put(buf, (int) size, MPI_BYTE, 0, at(0, 0), (int) size, MPI_BYTE, win));
                NB(MPIX_Win_icomplete(win, &complete));
                CK(MPI_Request_free(&start));
                CK(MPI_Isend(buf, (int) size, MPI_BYTE, 1, 0, MPI_COMM_WORLD, &send));
                t_epoch = t_after = 0;
                /* both activities progress together; each end is stamped when seen */
                while (done < 2) {
                    int flag;
                    if (!t_after) {
                        CK(MPI_Test(&send, &flag, MPI_STATUS_IGNORE));
                        if (flag)
                            t_after = now_us(), done++;
                    }
                    if (!t_epoch) {
                        CK(MPI_Test(&complete, &flag, MPI_STATUS_IGNORE));
                        if (flag)
                            t_epoch = now_us(), done++;
                    }
                }
            }
            epoch[i] = t_epoch - t0;
            after[i] = t_after - t0;
            both[i] = (t_epoch > t_after ? t_epoch : t_after) - t0;
        }
    }
    if (rank == 2) {
        header("late_post");
        report("origin: access epoch done at", epoch, iters);
        report("origin: subsequent send done at", after, iters);
        report("origin: both done at", both, iters);
    }
    CK(MPI_Group_free(&peer));
    free_win(&win);
    free(buf), free(epoch), free(after), free(both);
}

static void late_complete(void)
{
    char *base, *buf = calloc(1, size);
    MPI_Win win;
    double *target_epoch = calloc(iters, sizeof(double));
    double *origin_epoch = calloc(iters, sizeof(double));

    need_ranks(2);
    win = make_win(size, (void **) &base);
    MPI_Group peer = group_of(1 - rank);
    for (int i = 0; i < iters; i++) {
        double t0;
        CK(MPI_Barrier(MPI_COMM_WORLD));
        t0 = now_us();
        if (rank == 1) {
            CK(MPI_Win_post(peer, 0, win));
            CK(MPI_Win_wait(win));
            target_epoch[i] = now_us() - t0;
        } else if (!nonblocking) {
            CK(MPI_Win_start(peer, 0, win));
            CK(MPI_Put(buf, (int) size, MPI_BYTE, 1, at(1, 0), (int) size, MPI_BYTE, win));
            work(NULL);
            CK(MPI_Win_complete(win));
        } else {
            MPI_Request start, complete;
            NB(MPIX_Win_istart(peer, 0, win, &start));
            CK(MPI_Put(buf, (int) size, MPI_BYTE, 1, at(1, 0), (int) size, MPI_BYTE, win));
            NB(MPIX_Win_icomplete(win, &complete));
            CK(MPI_Request_free(&start));
            work(&complete);
            wait_req(&complete);
        }
        if (rank == 0)
            origin_epoch[i] = now_us() - t0;
    }
    /* rank 1 reports both */
    if (rank == 0)
        CK(MPI_Send(origin_epoch, iters, MPI_DOUBLE, 1, 1, MPI_COMM_WORLD));
    if (rank == 1) {
        CK(MPI_Recv(origin_epoch, iters, MPI_DOUBLE, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        header("late_complete");
        report("target: exposure epoch length", target_epoch, iters);
        report("origin: access epoch with the work", origin_epoch, iters);
    }
    CK(MPI_Group_free(&peer));
    free_win(&win);
    free(buf), free(target_epoch), free(origin_epoch);
}

/* early_fence: the target works after the closing fence; wait_at_fence: the
 * origin works before it. */
static void fence_pattern(int origin_works)
{
    char *base, *buf = calloc(1, size);
    MPI_Win win;
    double *target_time = calloc(iters, sizeof(double));
    double *origin_time = calloc(iters, sizeof(double));

    need_ranks(2);
    win = make_win(size, (void **) &base);
    for (int i = 0; i < iters; i++) {
        MPI_Request close = MPI_REQUEST_NULL;
        double t0;
        CK(MPI_Barrier(MPI_COMM_WORLD));
        t0 = now_us();
        CK(MPI_Win_fence(MPI_MODE_NOPRECEDE, win));
        if (rank == 0)
            CK(MPI_Put(buf, (int) size, MPI_BYTE, 1, at(1, 0), (int) size, MPI_BYTE, win));
        if (nonblocking)
            NB(MPIX_Win_ifence(MPI_MODE_NOSUCCEED, win, &close));
        /* the closing fence, with the work before or after it */
        if (rank == 0 && origin_works)
            work(&close);
        if (!nonblocking)
            CK(MPI_Win_fence(MPI_MODE_NOSUCCEED, win));
        if (rank == 1 && !origin_works)
            work(&close);
        if (nonblocking)
            wait_req(&close);
        if (rank == 1)
            target_time[i] = now_us() - t0;
        else
            origin_time[i] = now_us() - t0;
    }
    /* rank 1 reports both */
    if (rank == 0)
        CK(MPI_Send(origin_time, iters, MPI_DOUBLE, 1, 1, MPI_COMM_WORLD));
    if (rank == 1) {
        CK(MPI_Recv(origin_time, iters, MPI_DOUBLE, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        header(origin_works ? "wait_at_fence" : "early_fence");
        report(origin_works ? "target: fence epoch length" :
               "target: fence epoch + work", target_time, iters);
        report(origin_works ? "origin: fence epoch with the work" : "origin: fence epoch",
               origin_time, iters);
    }
    free_win(&win);
    free(buf), free(target_time), free(origin_time);
}

static void late_unlock(void)
{
    char *base, *buf = calloc(1, size);
    MPI_Win win;
    double *first = calloc(iters, sizeof(double)), *second = calloc(iters, sizeof(double));
    int token = 0;

    need_ranks(3);
    win = make_win(size, (void **) &base);
    for (int i = 0; i < iters; i++) {
        lazy_barrier();
        if (rank == 0)
            continue;   /* the target only serves, in the next lazy barrier */
        double t0 = now_us();
        if (rank == 1) {
            /* the first origin: its lock request leaves before the token */
            MPI_Request unlock = MPI_REQUEST_NULL;
            if (!nonblocking) {
                CK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, win));
                CK(MPI_Send(&token, 1, MPI_INT, 2, 0, MPI_COMM_WORLD));
                CK(MPI_Put(buf, (int) size, MPI_BYTE, 0, at(0, 0), (int) size, MPI_BYTE, win));
                work(NULL);
                CK(MPI_Win_unlock(0, win));
            } else {
                MPI_Request lock;
                NB(MPIX_Win_ilock(MPI_LOCK_EXCLUSIVE, 0, 0, win, &lock));
                CK(MPI_Request_free(&lock));
                CK(MPI_Send(&token, 1, MPI_INT, 2, 0, MPI_COMM_WORLD));
                CK(MPI_Put(buf, (int) size, MPI_BYTE, 0, at(0, 0), (int) size, MPI_BYTE, win));
                NB(MPIX_Win_iunlock(0, win, &unlock));
                work(&unlock);
                wait_req(&unlock);
            }
            first[i] = now_us() - t0;
        } else {
            CK(MPI_Recv(&token, 1, MPI_INT, 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
            t0 = now_us();
            if (!nonblocking) {
                CK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, win));
                CK(MPI_Put(buf, (int) size, MPI_BYTE, 0, at(0, 0), (int) size, MPI_BYTE, win));
                CK(MPI_Win_unlock(0, win));
            } else {
                MPI_Request lock, unlock;
                NB(MPIX_Win_ilock(MPI_LOCK_EXCLUSIVE, 0, 0, win, &lock));
                CK(MPI_Request_free(&lock));
                CK(MPI_Put(buf, (int) size, MPI_BYTE, 0, at(0, 0), (int) size, MPI_BYTE, win));
                NB(MPIX_Win_iunlock(0, win, &unlock));
                wait_req(&unlock);
            }
            second[i] = now_us() - t0;
        }
    }
    /* rank 2 reports both: rank 1's times travel to it */
    if (rank == 1)
        CK(MPI_Send(first, iters, MPI_DOUBLE, 2, 1, MPI_COMM_WORLD));
    if (rank == 2) {
        CK(MPI_Recv(first, iters, MPI_DOUBLE, 1, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        header("late_unlock");
        report("first origin: lock epoch length", first, iters);
        report("second origin: lock epoch length", second, iters);
    }
    lazy_barrier();
    free_win(&win);
    free(buf), free(first), free(second);
}

#define ATOMIC_SLOTS 1024

static void atomics(void)
{
    long *base, one = 1, total = 0, done = 0, sum = 0, expect = 0;
    MPI_Win win = make_win(ATOMIC_SLOTS * sizeof(long), (void **) &base);
    MPI_Request *pending = calloc(window_depth, sizeof(MPI_Request));
    int n_pending = 0, oldest = 0;
    unsigned seed = 12345u + 7919u * (unsigned) rank;
    double t0, elapsed;

    memset(base, 0, ATOMIC_SLOTS * sizeof(long));
    CK(MPI_Barrier(MPI_COMM_WORLD));
    t0 = MPI_Wtime();
    while (MPI_Wtime() - t0 < seconds) {
        int target = rand_r(&seed) % nprocs;
        /* the window's displacement unit is 1 byte */
        MPI_Aint slot = (MPI_Aint) (rand_r(&seed) % ATOMIC_SLOTS) * (MPI_Aint) sizeof(long);
        if (!nonblocking) {
            CK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, target, 0, win));
            CK(MPI_Accumulate(&one, 1, MPI_LONG, target, at(target, slot), 1, MPI_LONG, MPI_SUM, win));
            CK(MPI_Win_unlock(target, win));
        } else {
            MPI_Request lock;
            if (n_pending == window_depth) {
                /* the oldest transaction must finish before another starts */
                wait_req(&pending[oldest]);
                oldest = (oldest + 1) % window_depth;
                n_pending--;
            }
            NB(MPIX_Win_ilock(MPI_LOCK_EXCLUSIVE, target, 0, win, &lock));
            CK(MPI_Request_free(&lock));
            CK(MPI_Accumulate(&one, 1, MPI_LONG, target, at(target, slot), 1, MPI_LONG, MPI_SUM, win));
            NB(MPIX_Win_iunlock(target, win, &pending[(oldest + n_pending) % window_depth]));
            n_pending++;
        }
        done++;
    }
    while (n_pending > 0) {
        wait_req(&pending[oldest]);
        oldest = (oldest + 1) % window_depth;
        n_pending--;
    }
    elapsed = MPI_Wtime() - t0;
    CK(MPI_Barrier(MPI_COMM_WORLD));
    /* no lost update: every slot of every window adds up to the transactions */
    CK(MPI_Win_lock(MPI_LOCK_SHARED, rank, 0, win));
    for (int i = 0; i < ATOMIC_SLOTS; i++)
        sum += base[i];
    CK(MPI_Win_unlock(rank, win));
    CK(MPI_Allreduce(&sum, &total, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD));
    CK(MPI_Allreduce(&done, &expect, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD));
    {
        double max_elapsed;
        CK(MPI_Allreduce(&elapsed, &max_elapsed, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD));
        if (rank == 0) {
            printf("# atomics %s%s (%d ranks, %.1f s, %d pending epochs at most)\n",
                   nonblocking ? "nonblocking" : "blocking", reorder ? "+reorder" : "",
                   nprocs, seconds, nonblocking ? window_depth : 1);
            printf("transactions per second %.0f\n", expect / max_elapsed);
            if (total != expect)
                die("lost updates: the windows' sum differs from the transactions done");
            printf("check: %ld updates, none lost\n", total);
        }
    }
    free_win(&win);
    free(pending);
}

/* osu_put_latency's loops, one per synchronization; rank 0 puts to rank 1 */
static void latency(void)
{
    char *base, *buf = calloc(1, size);
    MPI_Win win;
    const char *names[] = { "fence", "pscw", "lock", "flush", "lock_all" };
    int warmup = iters / 10;

    need_ranks(2);
    win = make_win(size, (void **) &base);
    MPI_Group peer = group_of(1 - rank);
    if (rank == 0) {
        printf("# latency %s (size %zu bytes, %d iterations, %d warm-up)\n",
               nonblocking ? "nonblocking" : "blocking", size, iters, warmup);
        printf("# %-32s %12s\n", "synchronization", "latency(us)");
    }
    for (int s = 0; s < 5; s++) {
        double t0 = 0;
        CK(MPI_Barrier(MPI_COMM_WORLD));
        if (s == 3 && rank == 0)
            CK(MPI_Win_lock(MPI_LOCK_SHARED, 1, 0, win));
        for (int i = 0; i < warmup + iters; i++) {
            if (i == warmup)
                t0 = now_us();
            switch (s) {
                case 0:
                    CK(MPI_Win_fence(0, win));
                    if (rank == 0)
                        CK(MPI_Put(buf, (int) size, MPI_BYTE, 1, at(1, 0), (int) size, MPI_BYTE, win));
                    CK(MPI_Win_fence(0, win));
                    break;
                case 1:
                    if (rank == 0) {
                        CK(MPI_Win_start(peer, 0, win));
                        CK(MPI_Put(buf, (int) size, MPI_BYTE, 1, at(1, 0), (int) size, MPI_BYTE, win));
                        CK(MPI_Win_complete(win));
                    } else {
                        CK(MPI_Win_post(peer, 0, win));
                        CK(MPI_Win_wait(win));
                    }
                    break;
                case 2:
                    if (rank == 0) {
                        CK(MPI_Win_lock(MPI_LOCK_SHARED, 1, 0, win));
                        CK(MPI_Put(buf, (int) size, MPI_BYTE, 1, at(1, 0), (int) size, MPI_BYTE, win));
                        CK(MPI_Win_unlock(1, win));
                    }
                    break;
                case 3:
                    if (rank == 0) {
                        CK(MPI_Put(buf, (int) size, MPI_BYTE, 1, at(1, 0), (int) size, MPI_BYTE, win));
                        CK(MPI_Win_flush(1, win));
                    }
                    break;
                case 4:
                    if (rank == 0) {
                        CK(MPI_Win_lock_all(0, win));
                        CK(MPI_Put(buf, (int) size, MPI_BYTE, 1, at(1, 0), (int) size, MPI_BYTE, win));
                        CK(MPI_Win_unlock_all(win));
                    }
                    break;
            }
        }
        if (s == 3 && rank == 0)
            CK(MPI_Win_unlock(1, win));
        if (rank == 0)
            printf("%-34s %12.2f\n", names[s], (now_us() - t0) / iters);
        /* the target of the passive loops waits here, in MPI */
        CK(MPI_Barrier(MPI_COMM_WORLD));
    }
    CK(MPI_Group_free(&peer));
    free_win(&win);
    free(buf);
}

int main(int argc, char **argv)
{
    const char *pattern = argc > 1 ? argv[1] : "";

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    calibrate_work();
    for (int i = 2; i < argc; i++) {
        if (!strcmp(argv[i], "--series=nonblocking"))
            nonblocking = 1;
        else if (!strcmp(argv[i], "--series=blocking"))
            nonblocking = 0;
        else if (!strncmp(argv[i], "--size=", 7))
            size = strtoul(argv[i] + 7, NULL, 10);
        else if (!strncmp(argv[i], "--delay-us=", 11))
            delay_us = atof(argv[i] + 11);
        else if (!strncmp(argv[i], "--iters=", 8))
            iters = atoi(argv[i] + 8);
        else if (!strncmp(argv[i], "--seconds=", 10))
            seconds = atof(argv[i] + 10);
        else if (!strncmp(argv[i], "--window=", 9))
            window_depth = atoi(argv[i] + 9);
        else if (!strcmp(argv[i], "--reorder"))
            reorder = 1;
        else if (!strcmp(argv[i], "--no-poll"))
            poll_in_work = 0;
        else if (!strcmp(argv[i], "--dynamic"))
            dynamic = 1;
        else
            die("unknown option (see the comment at the top of osu_nbrma_epochs.c)");
    }
    if (nonblocking && !HAVE_NBRMA)
        die("the nonblocking series needs the patched MPICH");
    if (size < 1 || iters < 1 || window_depth < 1)
        die("--size, --iters and --window must be positive");

    if (!strcmp(pattern, "late_post"))
        late_post();
    else if (!strcmp(pattern, "late_complete"))
        late_complete();
    else if (!strcmp(pattern, "early_fence"))
        fence_pattern(0);
    else if (!strcmp(pattern, "wait_at_fence"))
        fence_pattern(1);
    else if (!strcmp(pattern, "late_unlock"))
        late_unlock();
    else if (!strcmp(pattern, "atomics"))
        atomics();
    else if (!strcmp(pattern, "latency"))
        latency();
    else
        die("unknown pattern (see the comment at the top of osu_nbrma_epochs.c)");
    MPI_Finalize();
    return 0;
}
