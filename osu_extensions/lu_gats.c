/*
 * LU decomposition with general active target synchronization: the
 * application kernel of Zounmevo et al., "Nonblocking epochs in MPI one-sided
 * communication" (SC14, section VIII-B, figure 13).
 *
 *   lu_gats --series=blocking|nonblocking [--complete-first] [--size=M]
 *           [--iters=N]
 *
 * An M x M diagonally dominant matrix is factorized without pivoting (Doolittle,
 * in place: L below the diagonal, U on and above it). Rows are mapped
 * cyclically (row i on rank i % nprocs). At step k the owner of row k sends the
 * row's columns k..M-1 to every other rank with MPI_Put inside a PSCW access
 * epoch toward all of them; each other rank exposes a window slot to that owner
 * with a post epoch. Then every rank eliminates column k from its rows below k.
 *
 * Series (blocking runs on any MPICH):
 *   blocking         the owner eliminates its own rows inside its epoch, between
 *                    the puts and MPI_Win_complete: the overlap the paper's
 *                    blocking series has, which makes the other ranks wait in
 *                    MPI_Win_wait for the owner's work (Late Complete).
 *                    With --complete-first the owner completes its epoch
 *                    before eliminating: no Late Complete, no overlap.
 *   nonblocking      MPIX_Win_istart/icomplete, MPIX_Win_ipost/iwait: the owner
 *                    closes its epoch right after the puts and eliminates while
 *                    it completes (MPI_Test after every row); the other ranks
 *                    post the exposure of step k+1 before eliminating step k.
 *                    Needs the patched MPICH.
 *
 * Prints the median and minimum factorization time over --iters runs (max over
 * ranks), and checks the result against a serial factorization on rank 0 (the
 * program fails if any entry differs by more than 1e-9 relative).
 */
#include <mpi.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef MPIX_MAX_MEMHANDLE_SIZE
#define HAVE_NBRMA 1
#else
#define HAVE_NBRMA 0
#endif

enum series { BLOCKING_INSIDE, BLOCKING_AFTER, NONBLOCKING };

static int rank, nprocs, m = 768, iters = 5;
static enum series series = BLOCKING_INSIDE;

#define CK(call)                                                                \
    do {                                                                        \
        if ((call) != MPI_SUCCESS) {                                            \
            fprintf(stderr, "%s:%d: %s failed\n", __FILE__, __LINE__, #call);   \
            MPI_Abort(MPI_COMM_WORLD, 2);                                       \
        }                                                                       \
    } while (0)

static double initial(int i, int j)
{
    return i == j ? 2.0 * m : 1.0 / (1.0 + abs(i - j)) + 0.001 * ((i * 7 + j * 13) % 17);
}

static int owner(int row)
{
    return row % nprocs;
}

/* How many rows rank r holds (rows r, r + nprocs, ...). */
static int local_rows(int r)
{
    return (m - r + nprocs - 1) / nprocs;
}

/* Eliminates column k of local row `row` (global index) with pivot row `pivot`
 * (columns k..m-1). */
static void eliminate(double *row, const double *pivot, int k)
{
    double l = row[k] / pivot[0];
    row[k] = l;
    for (int j = k + 1; j < m; j++)
        row[j] -= l * pivot[j - k];
}

static MPI_Group group_of_others(MPI_Group world, int me)
{
    MPI_Group others;
    CK(MPI_Group_excl(world, 1, &me, &others));
    return others;
}

/* The owner's puts of pivot row k (columns k..m-1) into slot `slot` of every
 * other rank. */
static void put_pivot(const double *pivot, int k, int slot, MPI_Win win)
{
    for (int r = 0; r < nprocs; r++)
        if (r != rank)
            CK(MPI_Put(pivot, m - k, MPI_DOUBLE, r, (MPI_Aint) slot * m + k, m - k, MPI_DOUBLE,
                       win));
}

/* Eliminates column k from the local rows first..nlocal-1. With requests (the
 * nonblocking series) it tests them after every row: without asynchronous
 * progress, that is what moves the pending epochs while the work goes on. */
static void eliminate_rows(double *rows, int first, int nlocal, const double *pivot, int k,
                           MPI_Request * pending, int n_pending)
{
    for (int i = first; i < nlocal; i++) {
        eliminate(rows + (size_t) i * m, pivot, k);
        for (int p = 0; p < n_pending; p++) {
            int done;
            if (pending[p] != MPI_REQUEST_NULL)
                CK(MPI_Test(&pending[p], &done, MPI_STATUS_IGNORE));
        }
    }
}

/* One factorization of `rows` (this rank's rows, row-major, local index i/n). */
static void factorize(double *rows, double *slots, MPI_Win win, MPI_Group * owner_group,
                      MPI_Group * others_group)
{
    int nlocal = local_rows(rank);
    /* nonblocking series: the owner's last icomplete, the exposure posted ahead */
    MPI_Request pending[2] = { MPI_REQUEST_NULL, MPI_REQUEST_NULL };
#if HAVE_NBRMA
    MPI_Request *complete_req = &pending[0], *post_req = &pending[1];
    int posted_for = -1;        /* step whose exposure is posted ahead */
#endif

    for (int k = 0; k < m; k++) {
        const int o = owner(k), slot = k % 2;
        const double *pivot;
        /* the first local row below k */
        int first = (k + 1 - rank + nprocs - 1) / nprocs;
        if (k + 1 <= rank)
            first = 0;

        if (o == rank) {
            double *row = rows + (size_t) (k / nprocs) * m;
            pivot = row + k;
            if (series == NONBLOCKING) {
#if HAVE_NBRMA
                MPI_Request start_req;
                if (*complete_req != MPI_REQUEST_NULL)
                    CK(MPI_Wait(complete_req, MPI_STATUS_IGNORE));
                CK(MPIX_Win_istart(others_group[o], 0, win, &start_req));
                CK(MPI_Request_free(&start_req));
                put_pivot(pivot, k, slot, win);
                CK(MPIX_Win_icomplete(win, complete_req));
                eliminate_rows(rows, first, nlocal, pivot, k, pending, 2);
#endif
            } else {
                CK(MPI_Win_start(others_group[o], 0, win));
                put_pivot(pivot, k, slot, win);
                if (series == BLOCKING_AFTER)
                    CK(MPI_Win_complete(win));
                eliminate_rows(rows, first, nlocal, pivot, k, NULL, 0);
                if (series == BLOCKING_INSIDE)
                    CK(MPI_Win_complete(win));
            }
        } else {
            pivot = slots + (size_t) slot * m + k;
            if (series == NONBLOCKING) {
#if HAVE_NBRMA
                if (posted_for != k)
                    CK(MPIX_Win_ipost(owner_group[o], 0, win, post_req));
                CK(MPI_Wait(post_req, MPI_STATUS_IGNORE));
                {
                    MPI_Request wait_req;
                    CK(MPIX_Win_iwait(win, &wait_req));
                    CK(MPI_Wait(&wait_req, MPI_STATUS_IGNORE));
                }
                /* expose the other slot for the next step before working */
                posted_for = -1;
                if (k + 1 < m && owner(k + 1) != rank) {
                    CK(MPIX_Win_ipost(owner_group[owner(k + 1)], 0, win, post_req));
                    posted_for = k + 1;
                }
                eliminate_rows(rows, first, nlocal, pivot, k, pending, 2);
#endif
            } else {
                CK(MPI_Win_post(owner_group[o], 0, win));
                CK(MPI_Win_wait(win));
                eliminate_rows(rows, first, nlocal, pivot, k, NULL, 0);
            }
        }
    }
    for (int p = 0; p < 2; p++)
        if (pending[p] != MPI_REQUEST_NULL)
            CK(MPI_Wait(&pending[p], MPI_STATUS_IGNORE));
}

static void fill(double *rows)
{
    int nlocal = local_rows(rank);
    for (int i = 0; i < nlocal; i++)
        for (int j = 0; j < m; j++)
            rows[(size_t) i * m + j] = initial(rank + i * nprocs, j);
}

/* Rank 0 factorizes serially and compares with the gathered rows. */
static int check(const double *rows)
{
    int nlocal = local_rows(rank), bad = 0;
    double *all = NULL, *ref = NULL;

    if (rank == 0) {
        all = malloc((size_t) m * m * sizeof(double));
        ref = malloc((size_t) m * m * sizeof(double));
        for (int i = 0; i < m; i++)
            for (int j = 0; j < m; j++)
                ref[(size_t) i * m + j] = initial(i, j);
        for (int k = 0; k < m; k++)
            for (int i = k + 1; i < m; i++)
                eliminate(ref + (size_t) i * m, ref + (size_t) k * m + k, k);
        for (int i = 0; i < nlocal; i++)
            memcpy(all + (size_t) (i * nprocs) * m, rows + (size_t) i * m, m * sizeof(double));
        for (int r = 1; r < nprocs; r++) {
            for (int i = 0; i < local_rows(r); i++)
                CK(MPI_Recv(all + (size_t) (r + i * nprocs) * m, m, MPI_DOUBLE, r, i,
                            MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        }
        for (size_t x = 0; x < (size_t) m * m && !bad; x++)
            if (fabs(all[x] - ref[x]) > 1e-9 * (1.0 + fabs(ref[x]))) {
                fprintf(stderr, "entry (%zu, %zu) is %.17g, the serial factorization has %.17g\n",
                        x / m, x % m, all[x], ref[x]);
                bad = 1;
            }
        free(all);
        free(ref);
    } else {
        for (int i = 0; i < nlocal; i++)
            CK(MPI_Send(rows + (size_t) i * m, m, MPI_DOUBLE, 0, i, MPI_COMM_WORLD));
    }
    CK(MPI_Bcast(&bad, 1, MPI_INT, 0, MPI_COMM_WORLD));
    return bad;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *) a, y = *(const double *) b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
    MPI_Group world_group, *owner_group, *others_group;
    MPI_Info info;
    MPI_Win win;
    double *rows, *slots, *times;
    const char *names[] = { "blocking", "blocking, complete first", "nonblocking" };
    int bad = 0, complete_first = 0;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    for (int a = 1; a < argc; a++) {
        if (!strncmp(argv[a], "--size=", 7))
            m = atoi(argv[a] + 7);
        else if (!strncmp(argv[a], "--iters=", 8))
            iters = atoi(argv[a] + 8);
        else if (!strcmp(argv[a], "--series=blocking"))
            series = BLOCKING_INSIDE;
        else if (!strcmp(argv[a], "--complete-first"))
            complete_first = 1;
        else if (!strcmp(argv[a], "--series=nonblocking"))
            series = NONBLOCKING;
        else {
            if (rank == 0)
                fprintf(stderr, "unknown argument %s\n", argv[a]);
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
    }
    if (complete_first && series == NONBLOCKING) {
        if (rank == 0)
            fprintf(stderr, "--complete-first is an option of the blocking series\n");
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    if (complete_first)
        series = BLOCKING_AFTER;
    if (series == NONBLOCKING && !HAVE_NBRMA) {
        if (rank == 0)
            fprintf(stderr, "the nonblocking series needs the patched MPICH\n");
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    if (nprocs < 2 || m < nprocs || iters < 1) {
        if (rank == 0)
            fprintf(stderr, "needs 2 ranks or more, --size >= ranks, --iters >= 1\n");
        MPI_Abort(MPI_COMM_WORLD, 1);
    }

    rows = malloc((size_t) local_rows(0) * m * sizeof(double));     /* rank 0 holds the most */
    times = malloc(iters * sizeof(double));
    MPI_Info_create(&info);
    MPI_Info_set(info, "mpich_nbrma_epochs", "true");
    CK(MPI_Win_allocate((MPI_Aint) (2 * m * sizeof(double)), sizeof(double), info,
                        MPI_COMM_WORLD, &slots, &win));
    MPI_Info_free(&info);
    CK(MPI_Comm_group(MPI_COMM_WORLD, &world_group));
    owner_group = malloc(nprocs * sizeof(MPI_Group));
    others_group = malloc(nprocs * sizeof(MPI_Group));
    for (int r = 0; r < nprocs; r++) {
        CK(MPI_Group_incl(world_group, 1, &r, &owner_group[r]));
        others_group[r] = group_of_others(world_group, r);
    }

    for (int it = 0; it < iters && !bad; it++) {
        double t0, mine;
        fill(rows);
        CK(MPI_Barrier(MPI_COMM_WORLD));
        t0 = MPI_Wtime();
        factorize(rows, slots, win, owner_group, others_group);
        mine = MPI_Wtime() - t0;
        CK(MPI_Allreduce(&mine, &times[it], 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD));
        bad = check(rows);
    }
    if (rank == 0 && !bad) {
        qsort(times, iters, sizeof(double), cmp_double);
        printf("# lu_gats %s (%d ranks, %d x %d, %d runs)\n", names[series], nprocs, m, m, iters);
        printf("factorization time (ms) %.2f %.2f\n", 1e3 * times[iters / 2], 1e3 * times[0]);
        printf("check: equal to the serial factorization\n");
    }

    for (int r = 0; r < nprocs; r++) {
        MPI_Group_free(&owner_group[r]);
        MPI_Group_free(&others_group[r]);
    }
    MPI_Group_free(&world_group);
    CK(MPI_Win_free(&win));
    free(owner_group);
    free(others_group);
    free(rows);
    free(times);
    MPI_Finalize();
    return bad ? 1 : 0;
}
