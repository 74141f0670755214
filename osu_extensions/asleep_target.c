/*
 * asleep_target: does passive-target RMA complete while the target process is
 * outside MPI?
 *
 *   mpiexec -n 2 ./asleep_target [--sleep=S] [--ops=N] [--warmup=W]
 *                [--kinds=allocate,create_malloc,create_allocmem,shared]
 *                [--tests=put,get,fop,cas,acc,lockput,lockallput,dacc,dfop,max]
 *                [--first-after=MS] [--long] [--verbose]
 *
 * Plain standard MPI-3 (C99); builds with MPICH and Open MPI alike.
 * Two ranks: rank 0 is the origin, rank 1 the target.
 *
 * For every window kind and every test, a fresh window is made and:
 *   1. the target initializes its window memory (inside a lock of its own
 *      window), barrier;
 *   2. the origin opens MPI_Win_lock_all (except for "lockput" and
 *      "lockallput") and does W
 *      warm-up operations while the target waits in MPI_Barrier (first-use
 *      costs such as connection set-up are paid here, with the target in MPI);
 *   3. barrier; then the target sleeps S seconds (nanosleep, no MPI call at
 *      all) while the origin times N operations, each completed on its own:
 *        put      MPI_Put of one int64 + MPI_Win_flush
 *        get      MPI_Get of one int64 + MPI_Win_flush
 *        fop      MPI_Fetch_and_op (MPI_SUM, +1) + MPI_Win_flush
 *        cas      MPI_Compare_and_swap (i -> i+1) + MPI_Win_flush
 *        acc      MPI_Accumulate of one int64 (MPI_SUM, +1) + MPI_Win_flush
 *        lockput  MPI_Win_lock(EXCLUSIVE) + MPI_Put + MPI_Win_unlock
 *        lockallput  MPI_Win_lock_all + MPI_Put + MPI_Win_flush +
 *                 MPI_Win_unlock_all
 *        dacc     MPI_Accumulate of one double (MPI_SUM, +1.0) + MPI_Win_flush
 *        dfop     MPI_Fetch_and_op of one double (MPI_SUM, +1.0) + MPI_Win_flush
 *        max      MPI_Accumulate of one int64 (MPI_MAX, i + 1) + MPI_Win_flush
 *   4. barrier (the target enters it when it wakes up), the origin closes
 *      its epoch, barrier, and the target reads its memory under a lock of
 *      its own window and checks what the RMA operations left there: the last
 *      value put, the counter after W+N fetch_and_op/accumulate/CAS updates.
 *      The origin checks the values it fetched (get results, fop and cas old
 *      values).
 *
 * Output, one line per (kind, test), on rank 0:
 *   kind test us_per_op waited|no-wait ok|WRONG
 * us_per_op is the loop time divided by N. "waited" means the origin's loop
 * ended at or after the target woke up (loop end >= S minus 10 ms of barrier
 * skew, measured from the barrier on the origin's clock): the origin could not
 * finish while the target slept. With S = 1 s and N = 2000, a loop that stalls
 * until the wake-up shows about 500 us per op. Lines starting with '#' are
 * details (loop end, the target's actual sleep). Exit status 1 if any check
 * failed.
 *
 * Window kinds (4 KiB per rank, since vanilla MPICH 4.0.2 ch4:ucx misroutes
 * operations on windows of only 8 bytes per rank):
 *   allocate         MPI_Win_allocate
 *   create_malloc    MPI_Win_create over malloc'ed memory
 *   create_allocmem  MPI_Win_create over MPI_Alloc_mem'ed memory
 *   shared           MPI_Win_allocate_shared (both ranks on one node)
 *
 * --long uses MPI_LONG instead of MPI_INT64_T (only where long has 64 bits).
 *
 * The first operation of every row is timed on its own too, a '#' line:
 *   #   first operation: kind test us
 * --first-after=MS has the origin wait MS milliseconds outside MPI after the
 * barrier before it begins (MS below S x 1000): its first operation then
 * finds the target asleep for a while, and its time is the wake-up latency
 * of whatever serves the target (the progress agent, MPICH's thread), or the
 * rest of the target's sleep where nothing does.
 */
#define _POSIX_C_SOURCE 200809L
#include <mpi.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define WIN_BYTES 4096
#define SKEW_SECONDS 0.010
#define GET_MAGIC ((int64_t) 0x0123456789abcdefLL)

enum kind { K_ALLOCATE, K_CREATE_MALLOC, K_CREATE_ALLOCMEM, K_SHARED, NKINDS };
static const char *kind_names[NKINDS] =
    { "allocate", "create_malloc", "create_allocmem", "shared" };

enum test { T_PUT, T_GET, T_FOP, T_CAS, T_ACC, T_LOCKPUT, T_LOCKALLPUT, T_DACC, T_DFOP, T_MAX,
    NTESTS
};
static const char *test_names[NTESTS] =
    { "put", "get", "fop", "cas", "acc", "lockput", "lockallput", "dacc", "dfop", "max" };

static int rank;
static double sleep_seconds = 1.0;
static long nops = 2000, nwarmup = 10;
static double first_after_seconds;
static int verbose;
static MPI_Datatype dtype;

static void usage(const char *prog)
{
    if (rank == 0)
        fprintf(stderr,
                "usage: %s [--sleep=S] [--ops=N] [--warmup=W] [--kinds=K,...] [--tests=T,...]\n"
                "          [--first-after=MS] [--long] [--verbose]\n"
                "  kinds: allocate create_malloc create_allocmem (the default), shared\n"
                "  tests: put get fop cas acc lockput lockallput (the default), dacc dfop max\n",
                prog);
}

/* Parses a comma-separated list of names into sel[]; returns 0 on an unknown name. */
static int parse_list(const char *list, const char **names, int n, int *sel)
{
    char buf[256];
    int i;
    for (i = 0; i < n; i++)
        sel[i] = 0;
    strncpy(buf, list, sizeof(buf) - 1);
    buf[sizeof(buf) - 1] = '\0';
    for (char *tok = strtok(buf, ","); tok; tok = strtok(NULL, ",")) {
        for (i = 0; i < n; i++)
            if (strcmp(tok, names[i]) == 0)
                break;
        if (i == n) {
            if (rank == 0)
                fprintf(stderr, "unknown name '%s'\n", tok);
            return 0;
        }
        sel[i] = 1;
    }
    return 1;
}

static void sleep_outside_mpi(double seconds)
{
    struct timespec ts, rem;
    ts.tv_sec = (time_t) seconds;
    ts.tv_nsec = (long) ((seconds - (double) ts.tv_sec) * 1e9);
    while (nanosleep(&ts, &rem) != 0 && errno == EINTR)
        ts = rem;
}

/* One window of the given kind; *mem is this rank's window memory. */
static MPI_Win make_window(enum kind k, int64_t **mem)
{
    MPI_Win win;
    void *base = NULL;
    switch (k) {
    case K_ALLOCATE:
        MPI_Win_allocate(WIN_BYTES, sizeof(int64_t), MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win);
        break;
    case K_SHARED:
        MPI_Win_allocate_shared(WIN_BYTES, sizeof(int64_t), MPI_INFO_NULL, MPI_COMM_WORLD, &base,
                                &win);
        break;
    case K_CREATE_MALLOC:
        base = malloc(WIN_BYTES);
        if (!base)
            MPI_Abort(MPI_COMM_WORLD, 2);
        MPI_Win_create(base, WIN_BYTES, sizeof(int64_t), MPI_INFO_NULL, MPI_COMM_WORLD, &win);
        break;
    default:
        MPI_Alloc_mem(WIN_BYTES, MPI_INFO_NULL, &base);
        MPI_Win_create(base, WIN_BYTES, sizeof(int64_t), MPI_INFO_NULL, MPI_COMM_WORLD, &win);
        break;
    }
    *mem = base;
    return win;
}

static void free_window(enum kind k, MPI_Win *win, int64_t *mem)
{
    MPI_Win_free(win);
    if (k == K_CREATE_MALLOC)
        free(mem);
    else if (k == K_CREATE_ALLOCMEM)
        MPI_Free_mem(mem);
}

/* Operation number i (0-based, warm-up included) of test t, with its
 * completion. Returns 0 if a value fetched by the origin is wrong. */
static int one_op(enum test t, long i, MPI_Win win)
{
    int64_t one = 1, val = (int64_t) i + 1, cmp = (int64_t) i, res = -1;
    double one_d = 1.0, res_d = -1.0;
    switch (t) {
    case T_DACC:
        MPI_Accumulate(&one_d, 1, MPI_DOUBLE, 1, 0, 1, MPI_DOUBLE, MPI_SUM, win);
        MPI_Win_flush(1, win);
        return 1;
    case T_DFOP:
        MPI_Fetch_and_op(&one_d, &res_d, MPI_DOUBLE, 1, 0, MPI_SUM, win);
        MPI_Win_flush(1, win);
        return res_d == (double) i;
    case T_MAX:
        MPI_Accumulate(&val, 1, dtype, 1, 0, 1, dtype, MPI_MAX, win);
        MPI_Win_flush(1, win);
        return 1;
    case T_PUT:
        MPI_Put(&val, 1, dtype, 1, 0, 1, dtype, win);
        MPI_Win_flush(1, win);
        return 1;
    case T_GET:
        MPI_Get(&res, 1, dtype, 1, 0, 1, dtype, win);
        MPI_Win_flush(1, win);
        return res == GET_MAGIC;
    case T_FOP:
        MPI_Fetch_and_op(&one, &res, dtype, 1, 0, MPI_SUM, win);
        MPI_Win_flush(1, win);
        return res == (int64_t) i;
    case T_CAS:
        MPI_Compare_and_swap(&val, &cmp, &res, dtype, 1, 0, win);
        MPI_Win_flush(1, win);
        return res == (int64_t) i;
    case T_ACC:
        MPI_Accumulate(&one, 1, dtype, 1, 0, 1, dtype, MPI_SUM, win);
        MPI_Win_flush(1, win);
        return 1;
    case T_LOCKALLPUT:
        MPI_Win_lock_all(0, win);
        MPI_Put(&val, 1, dtype, 1, 0, 1, dtype, win);
        MPI_Win_flush(1, win);
        MPI_Win_unlock_all(win);
        return 1;
    default:
        MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 1, 0, win);
        MPI_Put(&val, 1, dtype, 1, 0, 1, dtype, win);
        MPI_Win_unlock(1, win);
        return 1;
    }
}

/* Runs one (kind, test) row; returns 1 if all checks passed. */
static int run_row(enum kind k, enum test t)
{
    int64_t *mem;
    MPI_Win win = make_window(k, &mem);
    long total = nwarmup + nops, i;
    int ok = 1, all_ok;
    double t0, t_loop = 0.0, t_first = 0.0, slept = 0.0;

    if (rank == 1) {            /* initial value of the word the origin works on */
        MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 1, 0, win);
        mem[0] = (t == T_GET) ? GET_MAGIC : 0;
        MPI_Win_unlock(1, win);
    }
    MPI_Barrier(MPI_COMM_WORLD);

    if (rank == 0) {
        if (t != T_LOCKPUT && t != T_LOCKALLPUT)
            MPI_Win_lock_all(0, win);
        for (i = 0; i < nwarmup; i++)
            ok &= one_op(t, i, win);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    t0 = MPI_Wtime();
    if (rank == 0) {
        if (first_after_seconds > 0) {
            sleep_outside_mpi(first_after_seconds);
            t0 = MPI_Wtime();
        }
        for (i = nwarmup; i < total; i++) {
            ok &= one_op(t, i, win);
            if (i == nwarmup)
                t_first = MPI_Wtime() - t0;
        }
        t_loop = MPI_Wtime() - t0;
    } else {
        sleep_outside_mpi(sleep_seconds);
        slept = MPI_Wtime() - t0;
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0 && t != T_LOCKPUT && t != T_LOCKALLPUT)
        MPI_Win_unlock_all(win);
    MPI_Barrier(MPI_COMM_WORLD);

    if (rank == 1) {            /* what did RMA leave in my memory? */
        int64_t expect = (t == T_GET) ? GET_MAGIC : (int64_t) total, got;
        MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 1, 0, win);
        got = mem[0];
        MPI_Win_unlock(1, win);
        if (t == T_DACC || t == T_DFOP) {       /* a double's count, as an integer */
            double d;
            memcpy(&d, &got, sizeof(d));
            got = (int64_t) d;
        }
        if (got != expect) {
            fprintf(stderr, "target: %s %s: found %lld in window, expected %lld\n",
                    kind_names[k], test_names[t], (long long) got, (long long) expect);
            ok = 0;
        }
    } else if (!ok) {
        fprintf(stderr, "origin: %s %s: a fetched value was wrong\n", kind_names[k], test_names[t]);
    }
    MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
    if (rank == 1)
        MPI_Send(&slept, 1, MPI_DOUBLE, 0, 0, MPI_COMM_WORLD);
    else
        MPI_Recv(&slept, 1, MPI_DOUBLE, 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);

    if (rank == 0) {
        int waited = first_after_seconds + t_loop >= sleep_seconds - SKEW_SECONDS;
        printf("%-16s %-8s %10.3f %-8s %s\n", kind_names[k], test_names[t],
               t_loop / (double) nops * 1e6, waited ? "waited" : "no-wait", all_ok ? "ok" : "WRONG");
        printf("#   first operation: %s %s %.1f us\n", kind_names[k], test_names[t], t_first * 1e6);
        if (verbose)
            printf("#   loop ended %.3f ms after the barrier; target slept %.3f ms\n",
                   t_loop * 1e3, slept * 1e3);
        fflush(stdout);
    }
    free_window(k, &win, mem);
    return all_ok;
}

int main(int argc, char **argv)
{
    int kinds[NKINDS] = { 1, 1, 1 }, tests[NTESTS] = { 1, 1, 1, 1, 1, 1, 1 };
    int size, use_long = 0, all_ok = 1;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);

    for (int a = 1; a < argc; a++) {
        const char *s = argv[a];
        int good = 1;
        if (strncmp(s, "--sleep=", 8) == 0)
            good = (sleep_seconds = atof(s + 8)) > 0;
        else if (strncmp(s, "--ops=", 6) == 0)
            good = (nops = atol(s + 6)) > 0;
        else if (strncmp(s, "--first-after=", 14) == 0)
            good = (first_after_seconds = atof(s + 14) / 1e3) >= 0;
        else if (strncmp(s, "--warmup=", 9) == 0)
            good = (nwarmup = atol(s + 9)) >= 0;
        else if (strncmp(s, "--kinds=", 8) == 0)
            good = parse_list(s + 8, kind_names, NKINDS, kinds);
        else if (strncmp(s, "--tests=", 8) == 0)
            good = parse_list(s + 8, test_names, NTESTS, tests);
        else if (strcmp(s, "--long") == 0)
            use_long = 1;
        else if (strcmp(s, "--verbose") == 0)
            verbose = 1;
        else
            good = 0;
        if (!good) {
            usage(argv[0]);
            MPI_Finalize();
            return 2;
        }
    }
    if (size != 2) {
        if (rank == 0)
            fprintf(stderr, "asleep_target needs exactly 2 ranks (got %d)\n", size);
        MPI_Finalize();
        return 2;
    }
    if (use_long && sizeof(long) != sizeof(int64_t)) {
        if (rank == 0)
            fprintf(stderr, "--long: long is not 64 bits here\n");
        MPI_Finalize();
        return 2;
    }
    dtype = use_long ? MPI_LONG : MPI_INT64_T;
    if (first_after_seconds >= sleep_seconds) {
        if (rank == 0)
            fprintf(stderr, "--first-after must be shorter than --sleep\n");
        MPI_Finalize();
        return 2;
    }

    if (rank == 0) {
        printf("# asleep_target: target sleeps %.3f s outside MPI; %ld ops timed (%ld warm-up), %s\n",
               sleep_seconds, nops, nwarmup, use_long ? "MPI_LONG" : "MPI_INT64_T");
        printf("# %-14s %-8s %10s %-8s %s\n", "kind", "test", "us_per_op", "wait", "check");
        fflush(stdout);
    }
    for (int k = 0; k < NKINDS; k++)
        for (int t = 0; t < NTESTS; t++)
            if (kinds[k] && tests[t])
                all_ok &= run_row((enum kind) k, (enum test) t);

    MPI_Finalize();
    return all_ok ? 0 : 1;
}
