/*
 * Latencies of three Quo Vadis extensions (Schuchart et al., EuroMPI'21) next
 * to what an application writes without them, OSU style (two ranks, rank 0
 * the origin, a lock_all epoch on an MPI_Win_allocate window, sizes
 * 8 B .. --max-size, --iterations per size after --warmup):
 *
 *   osu_quovadis_latency order    put of Size, then an 8-byte MPI_SUM
 *                                 accumulate on its first element, per iteration:
 *                                   flush:   put, flush, accumulate, flush
 *                                   ordered: put, accumulate, flush on a window
 *                                            with mpi_win_order=true (paper Fig. 10)
 *   osu_quovadis_latency rrput    --others=K accumulates of 64 KiB long doubles
 *                                 (active messages) in flight toward the target,
 *                                 then a put of Size whose completion at the
 *                                 target is awaited; time of the latter:
 *                                   flush:   MPI_Rput, wait, MPI_Win_flush
 *                                   rrput:   MPIX_Rrput, wait
 *                                 on an allocated window (engine) and a dynamic
 *                                 window (--kind=allocate|dynamic)
 *   osu_quovadis_latency notify   ping-pong, half the round trip:
 *                                   flush:   put, flush, MPI_Send of 0 bytes / MPI_Recv
 *                                   notify:  MPIX_Put_notify / MPIX_Win_notify_request
 *                                            (a request for the counter's next value)
 *   osu_quovadis_latency getnotify  ping-pong, half the round trip: each side
 *                                 reads Size from the other's window and tells
 *                                 it the data was read (it may be overwritten):
 *                                   flush:   get, flush, MPI_Send of 0 bytes / MPI_Recv
 *                                   notify:  MPIX_Get_notify, flush /
 *                                            MPIX_Win_notify_request
 *   osu_quovadis_latency signal   the same ping-pong as MPI alone offers it on a
 *                                 window (one column; the extension column is
 *                                 "-"): put, flush, an 8-byte MPI_SUM accumulate
 *                                 into the peer's signal word, flush / the peer
 *                                 polls its signal word with MPI_Fetch_and_op
 *                                 (MPI_NO_OP) on itself and a flush
 *
 * The second column is "-" where the MPI lacks the extension (vanilla MPICH:
 * mpi.h without MPIX_MAX_MEMHANDLE_SIZE, the patch-set's marker). Each run
 * checks the data at the target once per size (the last iteration's put),
 * and aborts if wrong. run-quovadis-bench.sh repeats runs and takes medians.
 */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef MPIX_MAX_MEMHANDLE_SIZE
#define HAVE_QUOVADIS 1
#else
#define HAVE_QUOVADIS 0
#endif

/* the others: long doubles, which neither UCX's atomics nor the CPU's on
 * mapped memory take, so that they travel as active messages */
#define OTHER_BYTES 65536
#define OTHER_ELEMENTS (OTHER_BYTES / (int) sizeof(long double))

static int rank, iterations = 1000, warmup = 100, others = 1;
static size_t max_size = 65536;
static const char *kind = "allocate";

static void die(const char *what)
{
    fprintf(stderr, "rank %d: %s\n", rank, what);
    MPI_Abort(MPI_COMM_WORLD, 1);
}

#define CK(call) do { if ((call) != MPI_SUCCESS) die(#call); } while (0)

/* `size` bytes of pattern `seed` at the target, checked there. */
static void check_at_target(MPI_Win win, const char *mem, size_t size, int seed)
{
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 1) {
        CK(MPI_Win_sync(win));
        for (size_t i = 0; i < size; i++)
            if (mem[i] != (char) (seed + i))
                die("data not at the target");
    }
    MPI_Barrier(MPI_COMM_WORLD);
}

/* a table row: the plain variant, and the extension's ("-" where t[1] < 0) */
static void print_row(size_t size, const double t[2])
{
    if (rank != 0)
        return;
    if (t[1] < 0)
        printf("%-12zu%16.2f%16s\n", size, t[0], "-");
    else
        printf("%-12zu%16.2f%16.2f\n", size, t[0], t[1]);
}

static void fill(char *buf, size_t size, int seed)
{
    for (size_t i = 0; i < size; i++)
        buf[i] = (char) (seed + i);
}

/* put of `size`, then an accumulate on its first 8 bytes */
static double order_case(MPI_Win win, char *buf, size_t size, int ordered)
{
    long one = 1;
    double t0 = 0;

    for (int i = 0; i < warmup + iterations; i++) {
        if (i == warmup)
            t0 = MPI_Wtime();
        CK(MPI_Put(buf, (int) size, MPI_CHAR, 1, 64, (int) size, MPI_CHAR, win));
        if (!ordered)
            CK(MPI_Win_flush(1, win));
        CK(MPI_Accumulate(&one, 1, MPI_LONG, 1, 0, 1, MPI_LONG, MPI_SUM, win));
        CK(MPI_Win_flush(1, win));
    }
    return (MPI_Wtime() - t0) * 1e6 / iterations;
}

static void run_order(void)
{
    MPI_Win win[2] = { MPI_WIN_NULL, MPI_WIN_NULL };
    char *mem[2], *buf = malloc(max_size);
    MPI_Info info;

    for (int w = 0; w < 1 + HAVE_QUOVADIS; w++) {
        MPI_Info_create(&info);
        if (w == 1)
            MPI_Info_set(info, "mpi_win_order", "true");
        CK(MPI_Win_allocate(max_size + 64, 1, info, MPI_COMM_WORLD, &mem[w], &win[w]));
        MPI_Info_free(&info);
        memset(mem[w], 0, max_size + 64);
        CK(MPI_Win_lock_all(0, win[w]));
    }
    if (rank == 0)
        printf("# put of Size + 8-byte accumulate to one target\n"
               "# %-10s%16s%16s\n", "Size", "flush (us)", "ordered (us)");
    for (size_t size = 8; size <= max_size; size *= 2) {
        double t[2] = { 0, -1 };
        for (int w = 0; w < 1 + HAVE_QUOVADIS; w++) {
            int seed = (int) size + w;
            fill(buf, size, seed);
            MPI_Barrier(MPI_COMM_WORLD);
            if (rank == 0)
                t[w] = order_case(win[w], buf, size, w);
            check_at_target(win[w], mem[w] + 64, size, seed);
        }
        print_row(size, t);
    }
    for (int w = 0; w < 1 + HAVE_QUOVADIS; w++) {
        CK(MPI_Win_unlock_all(win[w]));
        CK(MPI_Win_free(&win[w]));
    }
    free(buf);
}

static double rrput_case(MPI_Win win, MPI_Aint disp0, char *buf, size_t size, long double *acc,
                         int remote)
{
    double sum = 0;
    int n = 0;

    for (int i = 0; i < warmup + iterations; i++) {
        MPI_Request req;
        for (int k = 0; k < others; k++)
            CK(MPI_Accumulate(acc, OTHER_ELEMENTS, MPI_LONG_DOUBLE, 1,
                              disp0 + (MPI_Aint) max_size, OTHER_ELEMENTS, MPI_LONG_DOUBLE,
                              MPI_SUM, win));
        double t0 = MPI_Wtime();
#if HAVE_QUOVADIS
        if (remote) {
            CK(MPIX_Rrput(buf, (int) size, MPI_CHAR, 1, disp0, (int) size, MPI_CHAR, win, &req));
            CK(MPI_Wait(&req, MPI_STATUS_IGNORE));
        } else
#endif
        {
            (void) remote;
            CK(MPI_Rput(buf, (int) size, MPI_CHAR, 1, disp0, (int) size, MPI_CHAR, win, &req));
            CK(MPI_Wait(&req, MPI_STATUS_IGNORE));
            CK(MPI_Win_flush(1, win));
        }
        if (i >= warmup) {
            sum += MPI_Wtime() - t0;
            n++;
        }
        CK(MPI_Win_flush(1, win));      /* the others, untimed */
    }
    return sum * 1e6 / n;
}

static void run_rrput(void)
{
    size_t bytes = max_size + OTHER_BYTES;
    char *mem, *buf = malloc(max_size);
    long double *acc = malloc(OTHER_BYTES);
    MPI_Aint disp0 = 0;
    MPI_Win win;

    for (int i = 0; i < OTHER_ELEMENTS; i++)
        acc[i] = 1.0;
    if (!strcmp(kind, "dynamic")) {
        mem = calloc(1, bytes);
        CK(MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &win));
        CK(MPI_Win_attach(win, mem, bytes));
        CK(MPI_Get_address(mem, &disp0));
        MPI_Bcast(&disp0, 1, MPI_AINT, 1, MPI_COMM_WORLD);
    } else {
        CK(MPI_Win_allocate(bytes, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &win));
        memset(mem, 0, bytes);
    }
    CK(MPI_Win_lock_all(0, win));
    if (rank == 0)
        printf("# %s window: put of Size complete at the target, %d accumulates of %d bytes "
               "(active messages) in flight\n# %-10s%16s%16s\n", kind, others, OTHER_BYTES,
               "Size", "flush (us)", "rrput (us)");
    for (size_t size = 8; size <= max_size; size *= 2) {
        double t[2] = { 0, -1 };
        for (int r = 0; r < 1 + HAVE_QUOVADIS; r++) {
            int seed = (int) size + r;
            fill(buf, size, seed);
            MPI_Barrier(MPI_COMM_WORLD);
            if (rank == 0)
                t[r] = rrput_case(win, disp0, buf, size, acc, r);
            check_at_target(win, mem, size, seed);
        }
        print_row(size, t);
    }
    CK(MPI_Win_unlock_all(win));
    if (!strcmp(kind, "dynamic"))
        CK(MPI_Win_detach(win, mem));
    CK(MPI_Win_free(&win));
    if (!strcmp(kind, "dynamic"))
        free(mem);
    free(buf);
    free(acc);
}

/* ping-pong: each side puts into the other's window, or gets from it, and
 * tells it */
static double notify_case(MPI_Win win, char *buf, size_t size, int notified, int get)
{
#if HAVE_QUOVADIS
    MPI_Count arrived = 0;      /* increments of counter 0 so far */

    if (notified)
        CK(MPIX_Win_set_notify(win, 0, 0));
    CK(MPI_Barrier(MPI_COMM_WORLD));
#endif
    int peer = 1 - rank;
    double t0 = 0;

    for (int i = 0; i < warmup + iterations; i++) {
        if (i == warmup)
            t0 = MPI_Wtime();
        for (int turn = 0; turn < 2; turn++) {
            if (turn == rank) {
#if HAVE_QUOVADIS
                if (notified && get) {
                    CK(MPIX_Get_notify(buf, (int) size, MPI_CHAR, peer, 0, (int) size, MPI_CHAR,
                                       win, 0));
                    CK(MPI_Win_flush(peer, win));       /* the data is needed here */
                } else if (notified) {
                    CK(MPIX_Put_notify(buf, (int) size, MPI_CHAR, peer, 0, (int) size, MPI_CHAR,
                                       win, 0));
                } else
#endif
                {
                    (void) notified;
                    if (get)
                        CK(MPI_Get(buf, (int) size, MPI_CHAR, peer, 0, (int) size, MPI_CHAR,
                                   win));
                    else
                        CK(MPI_Put(buf, (int) size, MPI_CHAR, peer, 0, (int) size, MPI_CHAR,
                                   win));
                    CK(MPI_Win_flush(peer, win));
                    CK(MPI_Send(NULL, 0, MPI_CHAR, peer, 0, MPI_COMM_WORLD));
                }
            } else {
#if HAVE_QUOVADIS
                if (notified) {
                    MPI_Request req;
                    CK(MPIX_Win_notify_request(win, 0, ++arrived, &req));
                    CK(MPI_Wait(&req, MPI_STATUS_IGNORE));
                } else
#endif
                    CK(MPI_Recv(NULL, 0, MPI_CHAR, peer, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
            }
        }
    }
    return (MPI_Wtime() - t0) * 1e6 / iterations / 2;
}

static void ping_pong_header(const char *plain, const char *extension)
{
    if (rank == 0)
        printf("# ping-pong, half round trip: put of Size and the peer told it is there\n"
               "# %-10s%16s%16s\n", "Size", plain, extension);
}

static void run_notify(int get)
{
    char *mem, *buf = malloc(max_size);
    MPI_Win win;

    CK(MPI_Win_allocate(max_size, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &win));
    memset(mem, 0, max_size);
#if HAVE_QUOVADIS
    CK(MPIX_Win_create_notify(win, 1));
#endif
    CK(MPI_Win_lock_all(0, win));
    ping_pong_header("flush+send (us)", "notify (us)");
    for (size_t size = 8; size <= max_size; size *= 2) {
        double t[2] = { 0, -1 };
        for (int n = 0; n < 1 + HAVE_QUOVADIS; n++) {
            int seed = (int) size + n;
            if (get) {          /* what each side reads from the other */
                CK(MPI_Win_sync(win));
                fill(mem, size, seed);
                CK(MPI_Win_sync(win));
                memset(buf, 0, size);
            } else {
                fill(buf, size, seed);
            }
            MPI_Barrier(MPI_COMM_WORLD);
            t[n] = notify_case(win, buf, size, n, get);
            if (get) {
                for (size_t i = 0; i < size; i++)
                    if (buf[i] != (char) (seed + i))
                        die("data not read from the target");
            } else {
                check_at_target(win, mem, size, seed);
            }
        }
        print_row(size, t);
    }
    CK(MPI_Win_unlock_all(win));
    CK(MPI_Win_free(&win));
    free(buf);
}

/* The signal ping-pong: data at displacement 0, the signal word (int64) at
 * max_size of an MPI_Win_allocate window of max_size + SIGNAL_PAGE bytes: a
 * size that is a multiple of the page, since vanilla MPICH 4.0.2 misroutes
 * RMA on windows whose size is not (patch 0024, test/mpi/allocate_small.c). */
#define SIGNAL_PAGE 4096
static double signal_case(MPI_Win win, char *buf, size_t size)
{
    const int64_t one = 1;
    int64_t arrived = 0, seen;
    MPI_Aint signal_disp = (MPI_Aint) max_size;
    int peer = 1 - rank;
    double t0 = 0;

    CK(MPI_Barrier(MPI_COMM_WORLD));
    for (int i = 0; i < warmup + iterations; i++) {
        if (i == warmup)
            t0 = MPI_Wtime();
        for (int turn = 0; turn < 2; turn++) {
            if (turn == rank) {
                CK(MPI_Put(buf, (int) size, MPI_CHAR, peer, 0, (int) size, MPI_CHAR, win));
                CK(MPI_Win_flush(peer, win));
                CK(MPI_Accumulate(&one, 1, MPI_INT64_T, peer, signal_disp, 1, MPI_INT64_T,
                                  MPI_SUM, win));
                CK(MPI_Win_flush(peer, win));
            } else {
                arrived++;
                do {
                    CK(MPI_Fetch_and_op(NULL, &seen, MPI_INT64_T, rank, signal_disp, MPI_NO_OP,
                                        win));
                    CK(MPI_Win_flush(rank, win));
                } while (seen < arrived);
            }
        }
    }
    return (MPI_Wtime() - t0) * 1e6 / iterations / 2;
}

static void run_signal(void)
{
    char *mem, *buf = malloc(max_size);
    MPI_Win win;

    CK(MPI_Win_allocate(max_size + SIGNAL_PAGE, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &win));
    memset(mem, 0, max_size + SIGNAL_PAGE);
    CK(MPI_Win_lock_all(0, win));
    ping_pong_header("flush+acc (us)", "-");
    for (size_t size = 8; size <= max_size; size *= 2) {
        double t[2] = { 0, -1 };
        int seed = (int) size + 7;

        fill(buf, size, seed);
        MPI_Barrier(MPI_COMM_WORLD);
        t[0] = signal_case(win, buf, size);
        check_at_target(win, mem, size, seed);
        print_row(size, t);
    }
    CK(MPI_Win_unlock_all(win));
    CK(MPI_Win_free(&win));
    free(buf);
}

int main(int argc, char **argv)
{
    int nprocs;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    if (nprocs != 2 || argc < 2)
        die("usage: mpiexec -n 2 osu_quovadis_latency order|rrput|notify|getnotify|signal "
            "[--max-size=B] "
            "[--iterations=N] [--warmup=N] [--others=K] [--kind=allocate|dynamic]");
    for (int a = 2; a < argc; a++) {
        if (!strncmp(argv[a], "--max-size=", 11))
            max_size = strtoul(argv[a] + 11, NULL, 10);
        else if (!strncmp(argv[a], "--iterations=", 13))
            iterations = atoi(argv[a] + 13);
        else if (!strncmp(argv[a], "--warmup=", 9))
            warmup = atoi(argv[a] + 9);
        else if (!strncmp(argv[a], "--others=", 9))
            others = atoi(argv[a] + 9);
        else if (!strncmp(argv[a], "--kind=", 7))
            kind = argv[a] + 7;
        else
            die("unknown option");
    }
    if (!strcmp(argv[1], "order"))
        run_order();
    else if (!strcmp(argv[1], "rrput"))
        run_rrput();
    else if (!strcmp(argv[1], "notify"))
        run_notify(0);
    else if (!strcmp(argv[1], "getnotify"))
        run_notify(1);
    else if (!strcmp(argv[1], "signal"))
        run_signal();
    else
        die("unknown benchmark");
    MPI_Finalize();
    return 0;
}
