/*
 * OSU-style put/get latency on four kinds of window, after osu_put_latency and
 * osu_get_latency (passive target, lock once, then operation + flush per
 * iteration), and the progress test of Schuchart et al. ("Quo Vadis MPI RMA?",
 * EuroMPI'21, section 4.1.2).
 *
 *   osu_memhandle_latency put|get [--kinds=create,allocate,dynamic,memhandle]
 *                         [--create-in-loop] [--max-size=BYTES]
 *   osu_memhandle_latency progress [--kinds=...] [--busy-seconds=S] [--ops=N]
 *
 * Two ranks: rank 0 is the origin, rank 1 the target. Window kinds:
 *   create    MPI_Win_create on malloc'ed memory
 *   allocate  MPI_Win_allocate
 *   dynamic   MPI_Win_create_dynamic + MPI_Win_attach; displacements are addresses
 *   memhandle the target exposes its memory with MPIX_Memhandle_create on a
 *             dynamic window; the origin makes a window with
 *             MPIX_Win_from_memhandle; lock/unlock on the dynamic parent
 *             (only where mpi.h declares MPIX_MAX_MEMHANDLE_SIZE)
 *
 * --create-in-loop puts the window's creation and destruction into every
 * iteration: collective MPI_Win_create/allocate/create_dynamic(+attach) and
 * MPI_Win_free for the first three, with lock and unlock; for memhandle the
 * origin's local MPIX_Win_from_memhandle and MPI_Win_free, the parent staying
 * locked (the paper's Figure 12).
 *
 * progress: the target computes outside MPI for --busy-seconds while the origin
 * does --ops put+flush pairs of 1 byte; the per-operation latency is reported.
 * A latency near busy-seconds/ops (or above) means the origin waited for the
 * target to enter MPI: no progress without the target's CPU.
 *
 * Output: OSU-style tables, "# Size  Latency (us)" per kind, one column per
 * kind. Timings are those of this one run; scripts/../run-memhandle-bench.sh
 * repeats runs and takes medians.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef MPIX_MAX_MEMHANDLE_SIZE
#define HAVE_MEMHANDLE 1
#else
#define HAVE_MEMHANDLE 0
#endif

enum kind { CREATE, ALLOCATE, DYNAMIC, MEMHANDLE, NKINDS };
static const char *kind_names[NKINDS] = { "create", "allocate", "dynamic", "memhandle" };

#define MAX_SIZE_DEFAULT (1 << 20)
#define PAD 4096                /* vanilla misroutes tiny windows; see test/mpi */

static int rank;

/* One window of the given kind over `bytes` bytes at the target. For dynamic
 * windows *disp0 is the target's address; memhandle windows also keep their
 * parent (which carries lock and unlock). */
typedef struct {
    enum kind kind;
    MPI_Win win, parent;
    void *mem;                  /* the target's (and origin's) memory */
    MPI_Aint disp0;
#if HAVE_MEMHANDLE
    char handle[MPIX_MAX_MEMHANDLE_SIZE];
#endif
} bench_win_t;

static void die(const char *what)
{
    fprintf(stderr, "rank %d: %s\n", rank, what);
    MPI_Abort(MPI_COMM_WORLD, 1);
}

#define CK(call) do { if ((call) != MPI_SUCCESS) die(#call); } while (0)

/* The memhandle kind's parent and handle live across windows. */
static void memhandle_setup(bench_win_t * w, size_t bytes)
{
#if HAVE_MEMHANDLE
    int size;
    w->mem = calloc(1, bytes);
    CK(MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &w->parent));
    if (rank == 1)
        CK(MPIX_Memhandle_create(w->mem, bytes, MPI_INFO_NULL, w->parent, w->handle, &size));
    CK(MPI_Bcast(w->handle, MPIX_MAX_MEMHANDLE_SIZE, MPI_BYTE, 1, MPI_COMM_WORLD));
#else
    (void) w;
    (void) bytes;
#endif
}

static void memhandle_teardown(bench_win_t * w)
{
#if HAVE_MEMHANDLE
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 1)
        CK(MPIX_Memhandle_release(w->handle, w->parent));
    CK(MPI_Win_free(&w->parent));
    free(w->mem);
#else
    (void) w;
#endif
}

/* Collective for create/allocate/dynamic; local at the origin for memhandle. */
static void win_open(bench_win_t * w, size_t bytes)
{
    switch (w->kind) {
        case CREATE:
            if (!w->mem)
                w->mem = calloc(1, bytes);
            CK(MPI_Win_create(w->mem, bytes, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &w->win));
            w->disp0 = 0;
            break;
        case ALLOCATE:
            CK(MPI_Win_allocate(bytes, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &w->mem, &w->win));
            w->disp0 = 0;
            break;
        case DYNAMIC:
            if (!w->mem)
                w->mem = calloc(1, bytes);
            CK(MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &w->win));
            CK(MPI_Win_attach(w->win, w->mem, bytes));
            CK(MPI_Get_address(w->mem, &w->disp0));
            CK(MPI_Bcast(&w->disp0, 1, MPI_AINT, 1, MPI_COMM_WORLD));
            break;
        case MEMHANDLE:
#if HAVE_MEMHANDLE
            if (rank == 0)
                CK(MPIX_Win_from_memhandle(w->handle, bytes, 1, MPI_INFO_NULL, 1, w->parent,
                                           &w->win));
            w->disp0 = 0;
#endif
            break;
        default:
            break;
    }
}

static void win_close(bench_win_t * w)
{
    if (w->kind == MEMHANDLE) {
        if (rank == 0)
            CK(MPI_Win_free(&w->win));
        return;
    }
    if (w->kind == DYNAMIC)
        CK(MPI_Win_detach(w->win, w->mem));
    CK(MPI_Win_free(&w->win));
}

/* The window that carries lock and unlock. */
static MPI_Win sync_win(bench_win_t * w)
{
    return w->kind == MEMHANDLE ? w->parent : w->win;
}

static void rma(int is_put, void *buf, size_t bytes, bench_win_t * w)
{
    if (is_put)
        CK(MPI_Put(buf, (int) bytes, MPI_BYTE, 1, w->disp0, (int) bytes, MPI_BYTE, w->win));
    else
        CK(MPI_Get(buf, (int) bytes, MPI_BYTE, 1, w->disp0, (int) bytes, MPI_BYTE, w->win));
    CK(MPI_Win_flush(1, w->win));
}

/* Average latency in microseconds of put|get+flush of `bytes` (rank 0). */
static double latency(int is_put, enum kind kind, size_t bytes, size_t max_bytes,
                      int create_in_loop, void *local)
{
    int iters = bytes <= 8192 ? 2000 : 200, skip = bytes <= 8192 ? 200 : 20;
    bench_win_t w = { .kind = kind };
    double t0 = 0, t = 0;

    if (create_in_loop) {
        iters /= 10;
        skip /= 10;
    }
    if (kind == MEMHANDLE)
        memhandle_setup(&w, max_bytes);

    if (!create_in_loop) {
        win_open(&w, max_bytes);
        if (rank == 0) {
            CK(MPI_Win_lock(MPI_LOCK_SHARED, 1, 0, sync_win(&w)));
            for (int i = 0; i < iters + skip; i++) {
                if (i == skip)
                    t0 = MPI_Wtime();
                rma(is_put, local, bytes, &w);
            }
            t = MPI_Wtime() - t0;
            CK(MPI_Win_unlock(1, sync_win(&w)));
        }
        MPI_Barrier(MPI_COMM_WORLD);
        win_close(&w);
    } else {
        if (kind == MEMHANDLE && rank == 0)
            CK(MPI_Win_lock(MPI_LOCK_SHARED, 1, 0, w.parent));
        for (int i = 0; i < iters + skip; i++) {
            if (i == skip)
                t0 = MPI_Wtime();
            if (kind == MEMHANDLE && rank == 1)
                break;          /* local to the origin: the target just waits */
            win_open(&w, max_bytes);
            if (rank == 0) {
                if (kind != MEMHANDLE)
                    CK(MPI_Win_lock(MPI_LOCK_SHARED, 1, 0, w.win));
                rma(is_put, local, bytes, &w);
                if (kind != MEMHANDLE)
                    CK(MPI_Win_unlock(1, w.win));
            }
            win_close(&w);
        }
        t = MPI_Wtime() - t0;
        if (kind == MEMHANDLE && rank == 0)
            CK(MPI_Win_unlock(1, w.parent));
        MPI_Barrier(MPI_COMM_WORLD);
        if (kind != MEMHANDLE && kind != ALLOCATE)
            free(w.mem);
        w.mem = NULL;
    }
    if (!create_in_loop && kind != MEMHANDLE && kind != ALLOCATE)
        free(w.mem);
    if (kind == MEMHANDLE)
        memhandle_teardown(&w);
    return rank == 0 ? t * 1e6 / iters : 0;
}

/* The paper's progress test: the target is busy outside MPI for `busy` seconds. */
static double progress_latency(enum kind kind, double busy, int ops)
{
    bench_win_t w = { .kind = kind };
    char byte = 1;
    double t = 0;

    if (kind == MEMHANDLE)
        memhandle_setup(&w, PAD);
    win_open(&w, PAD);
    if (rank == 0)
        CK(MPI_Win_lock(MPI_LOCK_SHARED, 1, 0, sync_win(&w)));
    if (rank == 0)
        rma(1, &byte, 1, &w);   /* connection set up, first-use costs paid */
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) {
        double t0 = MPI_Wtime();
        for (int i = 0; i < ops; i++)
            rma(1, &byte, 1, &w);
        t = MPI_Wtime() - t0;
        CK(MPI_Win_unlock(1, sync_win(&w)));
    } else {
        double until = MPI_Wtime() + busy;
        volatile double sink = 0;
        while (MPI_Wtime() < until)     /* computing: no MPI call that progresses */
            sink += 1.0;
    }
    MPI_Barrier(MPI_COMM_WORLD);
    win_close(&w);
    if (kind != MEMHANDLE && kind != ALLOCATE)
        free(w.mem);
    if (kind == MEMHANDLE)
        memhandle_teardown(&w);
    return t * 1e6 / ops;
}

static void print_columns(const int *use, const double *lat)
{
    for (int k = 0; k < NKINDS; k++)
        if (use[k])
            printf(" %14.2f", lat[k]);
        else
            printf(" %14s", "-");
    printf("\n");
    fflush(stdout);
}

int main(int argc, char **argv)
{
    int nprocs, create_in_loop = 0, ops = 10000;
    size_t max_size = MAX_SIZE_DEFAULT;
    double busy = 1.0;
    int use[NKINDS] = { 1, 1, 1, HAVE_MEMHANDLE };
    const char *mode;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    if (nprocs != 2 || argc < 2)
        die("usage: mpiexec -n 2 osu_memhandle_latency put|get|progress [options]");
    mode = argv[1];
    for (int a = 2; a < argc; a++) {
        if (!strcmp(argv[a], "--create-in-loop"))
            create_in_loop = 1;
        else if (!strncmp(argv[a], "--max-size=", 11))
            max_size = strtoul(argv[a] + 11, NULL, 10);
        else if (!strncmp(argv[a], "--busy-seconds=", 15))
            busy = atof(argv[a] + 15);
        else if (!strncmp(argv[a], "--ops=", 6))
            ops = atoi(argv[a] + 6);
        else if (!strncmp(argv[a], "--kinds=", 8)) {
            for (int k = 0; k < NKINDS; k++)
                use[k] = strstr(argv[a] + 8, kind_names[k]) != NULL;
        } else
            die("unknown option");
    }
    if (!HAVE_MEMHANDLE)
        use[MEMHANDLE] = 0;
    if (max_size < PAD)
        max_size = PAD;

    void *local = calloc(1, max_size);
    if (rank == 0) {
        printf("# mpich-nbrma osu_memhandle_latency %s%s\n", mode,
               create_in_loop ? " (window creation and destruction in the loop)" : "");
        printf("# %-10s", !strcmp(mode, "progress") ? "Ops" : "Size");
        for (int k = 0; k < NKINDS; k++)
            printf(" %14s", use[k] ? kind_names[k] : "");
        printf("\n");
    }
    if (!strcmp(mode, "progress")) {
        double lat[NKINDS] = { 0 };
        for (int k = 0; k < NKINDS; k++)
            if (use[k])
                lat[k] = progress_latency(k, busy, ops);
        if (rank == 0) {
            printf("%-12d", ops);
            print_columns(use, lat);
            printf("# latency in us per put+flush while the target computes %.1f s;"
                   " %.1f us or more: no progress without the target\n", busy,
                   busy * 1e6 / ops);
        }
    } else if (!strcmp(mode, "put") || !strcmp(mode, "get")) {
        int is_put = !strcmp(mode, "put");
        for (size_t bytes = 1; bytes <= max_size; bytes *= 2) {
            double lat[NKINDS] = { 0 };
            if (create_in_loop && bytes > 8192)
                break;
            for (int k = 0; k < NKINDS; k++)
                if (use[k])
                    lat[k] = latency(is_put, k, bytes, max_size, create_in_loop, local);
            if (rank == 0) {
                printf("%-12zu", bytes);
                print_columns(use, lat);
            }
        }
    } else
        die("mode must be put, get or progress");
    free(local);
    MPI_Finalize();
    return 0;
}
