/*
 * MPIX_Win_dup_with_info: another handle to the same window. On every window
 * kind: both handles used alternately inside one epoch (opened through one,
 * closed through the other), data checked at the target; the duplicate's own
 * key (mpi_assert_accumulate_intrinsic) and the window's keys it cannot
 * change, as MPI_Win_get_info reports them; an epoch of one is the epoch of
 * the other; freeing the duplicate leaves the parent working, and freeing the
 * parent (collectively, while only rank 0 holds a duplicate) leaves the
 * duplicate working; wrong uses are error classes.
 */
#include "nbrma_test.h"

#define N 64

static int rank, nprocs;

/* Each origin puts N longs (value: origin, index, round) into its slice of
 * every other rank, half through each handle, alternately, in one lock_all
 * epoch opened on `open_on` and closed on the other; then a fence epoch the
 * same way. The targets check after a barrier. */
static void alternate(MPI_Win parent, MPI_Win dup, long *mem, MPI_Aint base, const char *what)
{
    MPI_Win open_on = dup, close_on = parent;
    long vals[N];       /* an origin buffer stays untouched until the epoch ends */

    for (int round = 0; round < 2; round++) {
        memset(mem, 0, (size_t) nprocs * N * sizeof(long));
        MPI_Barrier(MPI_COMM_WORLD);
        CHECK_MPI(MPI_Win_lock_all(0, open_on));
        for (int t = 0; t < nprocs; t++) {
            if (t == rank)
                continue;
            for (int i = 0; i < N; i++) {
                MPI_Aint disp = base + ((MPI_Aint) rank * N + i) * sizeof(long);
                vals[i] = rank * 100000L + i * 10 + round;
                CHECK_MPI(MPI_Put(&vals[i], 1, MPI_LONG, t, disp, 1, MPI_LONG,
                                  i % 2 ? dup : parent));
                if (i == N / 2)
                    CHECK_MPI(MPI_Win_flush(t, i % 4 ? parent : dup));
            }
        }
        CHECK_MPI(MPI_Win_unlock_all(close_on));
        MPI_Barrier(MPI_COMM_WORLD);
        for (int o = 0; o < nprocs; o++) {
            if (o == rank)
                continue;
            int bad = 0;
            for (int i = 0; i < N; i++)
                bad += mem[(size_t) o * N + i] != o * 100000L + i * 10 + round;
            CHECK(bad == 0, "%s round %d: %d of %d values from %d wrong", what, round, bad, N, o);
        }
        open_on = parent;
        close_on = dup;
    }
}

/* An epoch of the parent is the duplicate's: opening another is an error. */
static void shared_epoch(MPI_Win parent, MPI_Win dup, const char *what)
{
    int rc;

    CHECK_MPI(MPI_Win_lock_all(0, parent));
    rc = MPI_Win_lock_all(0, dup);
    CHECK(rc != MPI_SUCCESS && error_class(rc) == MPI_ERR_RMA_SYNC,
          "%s: lock_all on the duplicate inside the parent's lock_all returned class %d", what,
          rc == MPI_SUCCESS ? 0 : error_class(rc));
    CHECK_MPI(MPI_Win_unlock_all(dup));
    rc = MPI_Win_unlock_all(parent);
    CHECK(rc != MPI_SUCCESS && error_class(rc) == MPI_ERR_RMA_SYNC,
          "%s: the parent's epoch was still open after unlock_all on the duplicate", what);
}

static void check_keys(MPI_Win parent, MPI_Win dup, const char *what)
{
    char pv[MPI_MAX_INFO_VAL + 1], dv[MPI_MAX_INFO_VAL + 1];

    check_win_info(dup, "mpix_win_duplicate", "true", what);
    /* a key of the window, not of the handle: the parent's value */
    if (win_info_value(parent, "mpich_nbrma_epochs", pv)) {
        CHECK(win_info_value(dup, "mpich_nbrma_epochs", dv) && !strcmp(pv, dv),
              "%s: mpich_nbrma_epochs %s on the parent, %s on the duplicate", what, pv, dv);
    }
}

static void on_window(MPI_Win parent, long *mem, MPI_Aint base, const char *what)
{
    MPI_Info info;
    MPI_Win dup, dupdup;

    MPI_Info_create(&info);
    MPI_Info_set(info, "mpich_nbrma_epochs", "false");  /* not the handle's: kept */
    MPI_Info_set(info, "mpi_assert_accumulate_intrinsic", "false");
    CHECK_MPI(MPIX_Win_dup_with_info(parent, info, &dup));
    MPI_Info_free(&info);
    CHECK_MPI(MPI_Win_set_errhandler(dup, MPI_ERRORS_RETURN));
    check_keys(parent, dup, what);
    alternate(parent, dup, mem, base, what);
    shared_epoch(parent, dup, what);
    /* a duplicate of the duplicate, then the first one goes: the rest work */
    CHECK_MPI(MPIX_Win_dup_with_info(dup, MPI_INFO_NULL, &dupdup));
    CHECK_MPI(MPI_Win_free(&dup));
    CHECK(dup == MPI_WIN_NULL, "%s: MPI_Win_free left the handle", what);
    alternate(parent, dupdup, mem, base, what);
    CHECK_MPI(MPI_Win_free(&dupdup));
}

static void window_kinds(void)
{
    MPI_Info info;
    MPI_Win win;
    long *mem;
    size_t bytes = (size_t) nprocs * N * sizeof(long);

    MPI_Info_create(&info);
    MPI_Info_set(info, "mpich_nbrma_epochs", "true");
    CHECK_MPI(MPI_Win_allocate(bytes, 1, info, MPI_COMM_WORLD, &mem, &win));
    on_window(win, mem, 0, "engine window (allocate)");
    CHECK_MPI(MPI_Win_free(&win));
    MPI_Info_set(info, "mpich_nbrma_epochs", "false");
    CHECK_MPI(MPI_Win_allocate(bytes, 1, info, MPI_COMM_WORLD, &mem, &win));
    on_window(win, mem, 0, "window without the engine");
    CHECK_MPI(MPI_Win_free(&win));
    MPI_Info_free(&info);
    {
        long *heap = malloc(bytes);
        CHECK_MPI(MPI_Win_create(heap, bytes, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &win));
        on_window(win, heap, 0, "engine window (create)");
        CHECK_MPI(MPI_Win_free(&win));
        free(heap);
    }
    {
        /* dynamic: one base per rank, all the same layout; the origins use
         * rank 0's address for everyone, so each rank attaches at the
         * address it announces and the targets share it (Allgather) */
        long *heap = malloc(bytes);
        MPI_Aint *bases = malloc(nprocs * sizeof(MPI_Aint)), mine;
        int same = 1;
        CHECK_MPI(MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &win));
        CHECK_MPI(MPI_Win_attach(win, heap, bytes));
        MPI_Get_address(heap, &mine);
        MPI_Allgather(&mine, 1, MPI_AINT, bases, 1, MPI_AINT, MPI_COMM_WORLD);
        for (int r = 0; r < nprocs; r++)
            same &= bases[r] == mine;
        /* the puts of alternate() use one displacement for every target */
        if (same)
            on_window(win, heap, mine, "dynamic window");
        CHECK_MPI(MPI_Win_detach(win, heap));
        CHECK_MPI(MPI_Win_free(&win));
        free(heap);
        free(bases);
    }
}

/* Only rank 0 duplicates; the parent is freed everywhere; rank 0's duplicate
 * keeps working (the targets' memory stays until MPI_Finalize). */
static void parent_freed_first(void)
{
    MPI_Win win, dup = MPI_WIN_NULL;
    long *mem;
    const int target = nprocs - 1;

    CHECK_MPI(allocate_engine_win(N * sizeof(long), sizeof(long), MPI_COMM_WORLD, &mem, &win));
    memset(mem, 0, N * sizeof(long));
    if (rank == 0)
        CHECK_MPI(MPIX_Win_dup_with_info(win, MPI_INFO_NULL, &dup));
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK_MPI(MPI_Win_free(&win));
    CHECK(win == MPI_WIN_NULL, "MPI_Win_free left the parent's handle");
    if (rank == 0) {
        long v[N];
        int token = 1;
        for (int i = 0; i < N; i++)
            v[i] = 7000 + i;
        CHECK_MPI(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, target, 0, dup));
        CHECK_MPI(MPI_Put(v, N, MPI_LONG, target, 0, N, MPI_LONG, dup));
        CHECK_MPI(MPI_Win_unlock(target, dup));
        CHECK_MPI(MPI_Win_free(&dup));
        CHECK_MPI(MPI_Send(&token, 1, MPI_INT, target, 0, MPI_COMM_WORLD));
    }
    if (rank == target) {
        int token, bad = 0;
        CHECK_MPI(MPI_Recv(&token, 1, MPI_INT, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        for (int i = 0; i < N; i++)
            bad += ((volatile long *) mem)[i] != 7000 + i;
        CHECK(bad == 0, "%d of %d values put through the duplicate of a freed window wrong", bad,
              N);
    }
    MPI_Barrier(MPI_COMM_WORLD);
}

/* The duplicate's own promise of intrinsic accumulates, and the parent's. */
static void own_assertion(void)
{
    MPI_Info info;
    MPI_Win win, dup;
    long *mem, hundred = 100;
    int intrinsic;

    CHECK_MPI(allocate_engine_win(N * sizeof(long), sizeof(long), MPI_COMM_WORLD, &mem, &win));
    CHECK_MPI(MPIX_Win_op_intrinsic("sum", 1, MPI_LONG, win, &intrinsic));
    MPI_Info_create(&info);
    MPI_Info_set(info, "mpi_assert_accumulate_intrinsic", "true");
    CHECK_MPI(MPIX_Win_dup_with_info(win, info, &dup));
    MPI_Info_free(&info);
    CHECK_MPI(MPI_Win_set_errhandler(dup, MPI_ERRORS_RETURN));
    check_win_info(dup, "mpi_assert_accumulate_intrinsic", intrinsic ? "true" : "false",
                   "duplicate that asserts");
    check_win_info(win, "mpi_assert_accumulate_intrinsic", "false", "its parent");
    {
        /* a duplicate of the duplicate has its keys */
        MPI_Win dupdup;
        CHECK_MPI(MPIX_Win_dup_with_info(dup, MPI_INFO_NULL, &dupdup));
        check_win_info(dupdup, "mpi_assert_accumulate_intrinsic", intrinsic ? "true" : "false",
                       "duplicate of the duplicate that asserts");
        CHECK_MPI(MPI_Win_free(&dupdup));
    }
    mem[0] = 0;
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK_MPI(MPI_Win_lock_all(0, win));
    /* MPI_LXOR is intrinsic nowhere (an active message) */
    if (intrinsic)
        EXPECT_CLASS(MPI_Accumulate(&hundred, 1, MPI_LONG, (rank + 1) % nprocs, 0, 1, MPI_LONG,
                                    MPI_LXOR, dup), MPI_ERR_OP);
    CHECK_MPI(MPI_Accumulate(&hundred, 1, MPI_LONG, (rank + 1) % nprocs, 0, 1, MPI_LONG,
                             MPI_LXOR, win));
    CHECK_MPI(MPI_Win_unlock_all(dup));
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK_MPI(MPI_Win_sync(win));
    CHECK(mem[0] == 1, "MPI_LXOR through the parent left %ld, expected 1", mem[0]);
    CHECK_MPI(MPI_Win_free(&dup));
    CHECK_MPI(MPI_Win_free(&win));
}

static void wrong_uses(void)
{
    MPI_Win win, dup;
    long *mem;

    CHECK_MPI(allocate_engine_win(N * sizeof(long), sizeof(long), MPI_COMM_WORLD, &mem, &win));
    CHECK_MPI(MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN));
    EXPECT_CLASS(MPIX_Win_dup_with_info(MPI_WIN_NULL, MPI_INFO_NULL, &dup), MPI_ERR_WIN);
    EXPECT_CLASS(MPIX_Win_dup_with_info(win, MPI_INFO_NULL, NULL), MPI_ERR_ARG);
    EXPECT_CLASS(MPIX_Win_dup_with_info(win, (MPI_Info) 0x1234, &dup), MPI_ERR_INFO);
    CHECK_MPI(MPI_Win_free(&win));
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);

    window_kinds();
    parent_freed_first();
    own_assertion();
    wrong_uses();
    return report_and_finalize();
}
