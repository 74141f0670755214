/*
 * A pipelined point-to-point stencil in the spirit of the Parallel Research
 * Kernels' Synch_p2p: the grid of M rows and P*N + 1 columns is split by
 * columns, N per rank; row by row, a rank needs the last value of the same
 * row from its left neighbour before it computes its part of the row
 *
 *     a[i][j] = a[i-1][j] + a[i][j-1] - a[i-1][j-1],
 *
 * and then hands its own last value to its right neighbour, so a wavefront
 * runs across the ranks M - 1 times per iteration. The last rank sends the
 * corner back to rank 0, which starts the next iteration with
 * a[0][0] = -corner (as the PRK do: no rank runs an iteration ahead).
 *
 * How a value reaches the right neighbour's halo slot (window memory):
 *   sendrecv  MPI_Send / MPI_Recv of the value itself (no RMA)
 *   signal    MPI_Put, MPI_Win_flush, MPI_Send of 0 bytes / MPI_Recv, MPI_Win_sync
 *   notify    MPIX_Put_notify / MPIX_Win_notify_request on a counter + MPI_Wait
 *             (the patched MPICH only: "-" elsewhere)
 *   pscw      MPI_Win_start, MPI_Put, MPI_Win_complete / MPI_Win_post, MPI_Win_wait,
 *             one epoch per row
 *   fence     the wavefront in bulk steps: step s computes row s - rank + 1 and
 *             puts its value, then MPI_Win_fence (M + P - 2 fences per iteration)
 * signal and notify run in one lock_all epoch. The corner travels by
 * MPI_Send/MPI_Recv in every mode.
 *
 * Checked in every iteration: every halo value on arrival (a[i][g] = i + g - c
 * for the iteration's corner value c, exact in doubles at these sizes), and
 * at the end every point of the last iteration and rank 0's corner; a wrong
 * value aborts with exit status 1.
 *
 *   mpiexec -n P stencil_p2p [--mode=all|sendrecv|signal|notify|pscw|fence]
 *                            [--rows=M] [--cols=N] [--iterations=I] [--warmup=W]
 *
 * Prints, per mode, microseconds per iteration and per row (iteration / (M - 1)).
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef MPIX_MAX_MEMHANDLE_SIZE  /* the patch-set's marker in mpi.h */
#define HAVE_NOTIFY 1
#else
#define HAVE_NOTIFY 0
#endif

enum mode { SENDRECV, SIGNAL, NOTIFY, PSCW, FENCE, N_MODES };
static const char *const mode_names[N_MODES] = { "sendrecv", "signal", "notify", "pscw", "fence" };

static int rank, nprocs, left, right;
static int rows = 1000, cols = 100, iterations = 100, warmup = 10;
static double *grid;            /* rows x (cols + 1): column 0 is the halo copy */
static double *halo;            /* window memory: rows values from the left */
static MPI_Win win;
static MPI_Group left_group, right_group;
static double corner_value;     /* c of this iteration: a[0][0] */

#define A(i, j) grid[(size_t) (i) * (cols + 1) + (j)]

static void die(const char *what)
{
    fprintf(stderr, "rank %d: %s\n", rank, what);
    MPI_Abort(MPI_COMM_WORLD, 1);
}

#define CK(call) do { if ((call) != MPI_SUCCESS) die(#call); } while (0)

/* The exact value of point (i, global column g), i, g >= 1. */
static double expected(int i, long g)
{
    return (double) i + (double) g - corner_value;
}

/* Global column of local column j (0: the halo). */
static long global_col(int j)
{
    return (long) rank * cols + j;
}

static void take_halo(int i)
{
    double v = halo[i];

    if (v != expected(i, global_col(0)))
        die("a halo value from the left neighbour is wrong");
    A(i, 0) = v;
}

static void compute_row(int i)
{
    for (int j = 1; j <= cols; j++)
        A(i, j) = A(i - 1, j) + A(i, j - 1) - A(i - 1, j - 1);
}

/* Row 0 and rank 0's column 0 for an iteration with corner value c. */
static void set_boundary(double c)
{
    corner_value = c;
    for (int j = 0; j <= cols; j++)
        A(0, j) = (double) global_col(j);
    if (rank == 0) {
        A(0, 0) = c;
        for (int i = 1; i < rows; i++)
            A(i, 0) = halo[i] = (double) i;
    }
}

static void put_value(int i)
{
    CK(MPI_Put(&A(i, cols), 1, MPI_DOUBLE, right, i, 1, MPI_DOUBLE, win));
}

/* One iteration's rows in `m` (all but fence). */
static void rows_p2p(enum mode m, int k)
{
    MPI_Request req;

    if (m == PSCW && rank > 0)
        CK(MPI_Win_post(left_group, 0, win));
    for (int i = 1; i < rows; i++) {
        if (rank > 0) {
            switch (m) {
                case SENDRECV:
                    CK(MPI_Recv(&halo[i], 1, MPI_DOUBLE, left, i, MPI_COMM_WORLD,
                                MPI_STATUS_IGNORE));
                    break;
                case SIGNAL:
                    CK(MPI_Recv(NULL, 0, MPI_BYTE, left, i, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
                    CK(MPI_Win_sync(win));
                    break;
                case NOTIFY:
#if HAVE_NOTIFY
                    CK(MPIX_Win_notify_request(win, 0, (MPI_Count) k * (rows - 1) + i, &req));
                    CK(MPI_Wait(&req, MPI_STATUS_IGNORE));
#endif
                    break;
                default:       /* PSCW */
                    CK(MPI_Win_wait(win));
                    if (i + 1 < rows)
                        CK(MPI_Win_post(left_group, 0, win));
                    break;
            }
            take_halo(i);
        }
        compute_row(i);
        if (rank == nprocs - 1)
            continue;
        switch (m) {
            case SENDRECV:
                CK(MPI_Send(&A(i, cols), 1, MPI_DOUBLE, right, i, MPI_COMM_WORLD));
                break;
            case SIGNAL:
                put_value(i);
                CK(MPI_Win_flush(right, win));
                CK(MPI_Send(NULL, 0, MPI_BYTE, right, i, MPI_COMM_WORLD));
                break;
            case NOTIFY:
#if HAVE_NOTIFY
                CK(MPIX_Put_notify(&A(i, cols), 1, MPI_DOUBLE, right, i, 1, MPI_DOUBLE, win, 0));
#endif
                break;
            default:   /* PSCW */
                CK(MPI_Win_start(right_group, 0, win));
                put_value(i);
                CK(MPI_Win_complete(win));
                break;
        }
    }
    /* the origin buffers (the last column) are written again next iteration */
    if (m == NOTIFY)
        CK(MPI_Win_flush_local_all(win));
    (void) req;
    (void) k;
}

/* One iteration as a wavefront of bulk steps, a fence after each. */
static void rows_fence(void)
{
    for (int step = 0; step < rows - 1 + nprocs - 1; step++) {
        int i = step - rank + 1;

        if (i >= 1 && i < rows) {
            if (rank > 0)
                take_halo(i);
            compute_row(i);
            if (rank < nprocs - 1)
                put_value(i);
        }
        CK(MPI_Win_fence(0, win));
    }
}

/* The corner: from the last rank to rank 0, which turns it into the next c. */
static void pass_corner(void)
{
    double corner;

    if (nprocs == 1) {
        corner = A(rows - 1, cols);
    } else if (rank == nprocs - 1) {
        CK(MPI_Send(&A(rows - 1, cols), 1, MPI_DOUBLE, 0, rows, MPI_COMM_WORLD));
        corner = 0;
    } else if (rank == 0) {
        CK(MPI_Recv(&corner, 1, MPI_DOUBLE, nprocs - 1, rows, MPI_COMM_WORLD,
                    MPI_STATUS_IGNORE));
    } else {
        corner = 0;
    }
    if (rank == 0 &&
        corner != (double) (rows - 1) + (double) nprocs * cols - corner_value)
        die("the corner is wrong");
    /* every rank computes the next c as rank 0 does: the check above makes
     * it the value rank 0 would send */
    set_boundary(-((double) (rows - 1) + (double) nprocs * cols - corner_value));
}

static void check_grid(void)
{
    for (int i = 1; i < rows; i++)
        for (int j = 1; j <= cols; j++)
            if (A(i, j) != expected(i, global_col(j)))
                die("a point of the grid is wrong");
}

static double run_mode(enum mode m)
{
    double t0 = 0;

    set_boundary(0);
    if (m == SIGNAL || m == NOTIFY)
        CK(MPI_Win_lock_all(0, win));
#if HAVE_NOTIFY
    if (m == NOTIFY)
        CK(MPIX_Win_set_notify(win, 0, 0));
#endif
    if (m == FENCE)
        CK(MPI_Win_fence(0, win));
    CK(MPI_Barrier(MPI_COMM_WORLD));
    for (int k = 0; k < warmup + iterations; k++) {
        if (k == warmup) {
            CK(MPI_Barrier(MPI_COMM_WORLD));
            t0 = MPI_Wtime();
        }
        if (m == FENCE)
            rows_fence();
        else
            rows_p2p(m, k);
        if (k + 1 == warmup + iterations)
            check_grid();       /* before pass_corner moves the boundary on */
        pass_corner();
    }
    t0 = MPI_Wtime() - t0;
    if (m == FENCE)
        CK(MPI_Win_fence(MPI_MODE_NOSUCCEED, win));
    if (m == SIGNAL || m == NOTIFY)
        CK(MPI_Win_unlock_all(win));
    CK(MPI_Barrier(MPI_COMM_WORLD));
    return t0 * 1e6 / iterations;
}

static int arg(const char *a, const char *name, int *value)
{
    size_t n = strlen(name);

    if (strncmp(a, name, n) != 0 || a[n] != '=')
        return 0;
    *value = atoi(a + n + 1);
    return 1;
}

int main(int argc, char **argv)
{
    const char *only = "all";
    MPI_Group world;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    for (int a = 1; a < argc; a++) {
        if (!strncmp(argv[a], "--mode=", 7))
            only = argv[a] + 7;
        else if (!arg(argv[a], "--rows", &rows) && !arg(argv[a], "--cols", &cols) &&
                 !arg(argv[a], "--iterations", &iterations) && !arg(argv[a], "--warmup", &warmup))
            die("usage: stencil_p2p [--mode=all|sendrecv|signal|notify|pscw|fence] "
                "[--rows=M] [--cols=N] [--iterations=I] [--warmup=W]");
    }
    if (rows < 2 || cols < 1 || iterations < 1 || warmup < 0)
        die("rows >= 2, cols >= 1, iterations >= 1, warmup >= 0");
    left = rank - 1;
    right = rank + 1;
    MPI_Comm_group(MPI_COMM_WORLD, &world);
    MPI_Group_incl(world, rank > 0, &left, &left_group);
    MPI_Group_incl(world, rank < nprocs - 1, &right, &right_group);
    grid = malloc(sizeof(double) * rows * (cols + 1));
    if (grid == NULL)
        die("no memory for the grid");
    CK(MPI_Win_allocate(sizeof(double) * rows, sizeof(double), MPI_INFO_NULL, MPI_COMM_WORLD,
                        &halo, &win));
#if HAVE_NOTIFY
    CK(MPIX_Win_create_notify(win, 1));
#endif
    if (rank == 0)
        printf("# stencil_p2p: %d ranks, %d rows, %d columns per rank, %d iterations\n"
               "# %-10s%16s%16s\n", nprocs, rows, cols, iterations, "mode", "us/iteration",
               "us/row");
    for (int m = 0; m < N_MODES; m++) {
        if (strcmp(only, "all") != 0 && strcmp(only, mode_names[m]) != 0)
            continue;
        if (m == NOTIFY && !HAVE_NOTIFY) {
            if (rank == 0)
                printf("%-12s%16s%16s\n", mode_names[m], "-", "-");
            continue;
        }
        double t = run_mode((enum mode) m);
        if (rank == 0)
            printf("%-12s%16.2f%16.3f\n", mode_names[m], t, t / (rows - 1));
    }
#if HAVE_NOTIFY
    CK(MPIX_Win_free_notify(win));
#endif
    CK(MPI_Win_free(&win));
    MPI_Group_free(&left_group);
    MPI_Group_free(&right_group);
    MPI_Group_free(&world);
    free(grid);
    MPI_Finalize();
    return 0;
}
