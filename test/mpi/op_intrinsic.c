/*
 * MPIX_Win_op_intrinsic and the info key mpi_assert_accumulate_intrinsic.
 *
 * The answers per window kind and (operations, datatype); that an answer of
 * true holds: an MPI_SUM and an MPI_MAX accumulate with a flush complete
 * while the target computes outside MPI (UCX's atomics; the CPU's on memory
 * mapped at the origin); that an answer of false for MPI_LXOR is right too:
 * its flush cannot complete then. With the assertion in force, a non-intrinsic
 * accumulate is MPI_ERR_OP and nothing reaches the target; the intrinsic ones
 * work. Wrong uses are error classes.
 */
#include "nbrma_test.h"

static int rank, nprocs, shared_memory;

static int query(const char *ops, MPI_Aint max_count, MPI_Datatype type, MPI_Win win)
{
    int flag = -1;
    CHECK_MPI(MPIX_Win_op_intrinsic(ops, max_count, type, win, &flag));
    CHECK(flag == 0 || flag == 1, "flag %d", flag);
    return flag;
}

static void answers(void)
{
    MPI_Win win;
    long *mem;
    const int yes = shared_memory;      /* over tcp UCX emulates atomics */
    static const struct {
        const char *ops;
        MPI_Datatype type;
        int intrinsic;          /* on an allocated engine window over shared memory */
    } cases[] = {
        {"sum", MPI_LONG, 1}, {"replace", MPI_INT, 1}, {"no_op", MPI_UINT64_T, 1},
        {"cas", MPI_INT32_T, 1}, {"band,bor, bxor", MPI_UNSIGNED_LONG, 1},
        {"SUM,Replace,cas,no_op", MPI_LONG_LONG, 1},
        /* the CPU's atomics on every peer's memory, mapped at the origin */
        {"max", MPI_LONG, 1}, {"min", MPI_INT, 1}, {"prod", MPI_LONG, 1},
        {"sum,max", MPI_LONG, 1}, {"sum", MPI_DOUBLE, 1}, {"sum", MPI_SHORT, 1},
        {"max,min,sum", MPI_FLOAT, 1},
        {"land", MPI_INT, 0}, {"maxloc", MPI_2INT, 0}, {"sum", MPI_LONG_DOUBLE, 0},
    };

    CHECK_MPI(allocate_engine_win(64, sizeof(long), MPI_COMM_WORLD, &mem, &win));
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        int expected = cases[i].intrinsic && yes;
        for (MPI_Aint count = 1; count <= 1024; count *= 32)
            CHECK(query(cases[i].ops, count, cases[i].type, win) == expected,
                  "allocated engine window: '%s' x %ld is %s", cases[i].ops, (long) count,
                  expected ? "intrinsic" : "not intrinsic");
    }
    CHECK_MPI(MPI_Win_free(&win));

    /* windows whose accumulates are active messages: never */
    {
        MPI_Info info;
        long *heap = calloc(64, sizeof(long));
        MPI_Info_create(&info);
        MPI_Info_set(info, "mpich_nbrma_epochs", "true");
        CHECK_MPI(MPI_Win_create(heap, 64 * sizeof(long), sizeof(long), info, MPI_COMM_WORLD,
                                 &win));
        CHECK(query("sum", 1, MPI_LONG, win) == 0, "create over malloc'ed memory: intrinsic");
        CHECK_MPI(MPI_Win_free(&win));
        MPI_Info_set(info, "mpich_nbrma_epochs", "false");
        CHECK_MPI(MPI_Win_allocate(64, sizeof(long), info, MPI_COMM_WORLD, &mem, &win));
        CHECK(query("sum", 1, MPI_LONG, win) == 0, "window without the engine: intrinsic");
        CHECK_MPI(MPI_Win_free(&win));
        MPI_Info_set(info, "mpich_nbrma_epochs", "true");
        MPI_Info_set(info, "mpich_nbrma_native_atomics", "false");
        /* without UCX's atomics, the CPU's on memory mapped at the origin */
        CHECK_MPI(MPI_Win_allocate(64, sizeof(long), info, MPI_COMM_WORLD, &mem, &win));
        CHECK(query("sum", 1, MPI_LONG, win) == shared_memory,
              "native atomics off, mapped memory: intrinsic %d", !shared_memory);
        CHECK_MPI(MPI_Win_free(&win));
        MPI_Info_set(info, "mpich_nbrma_cross_memory_rma", "false");
        CHECK_MPI(MPI_Win_allocate(64, sizeof(long), info, MPI_COMM_WORLD, &mem, &win));
        CHECK(query("sum", 1, MPI_LONG, win) == 0, "native atomics and mapping off: intrinsic");
        CHECK_MPI(MPI_Win_free(&win));
        MPI_Info_set(info, "mpich_nbrma_cross_memory_rma", "true");
        CHECK_MPI(MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &win));
        CHECK(query("sum", 1, MPI_LONG, win) == 0, "dynamic window: intrinsic");
        CHECK_MPI(MPI_Win_free(&win));
        MPI_Info_free(&info);
        free(heap);
    }
}

/* An accumulate of `op` toward the last rank, then MPIX_Win_iflush, tested
 * once while the target computes outside MPI for up to 5 s, spinning on a
 * flag that the origin raises by RDMA afterwards (needs no target CPU where
 * UCX reaches its memory). Returns whether the flush was complete at that
 * test; the target checks the value after. */
static int flush_done_while_target_busy(MPI_Op op, long expect, int *flag_arrived)
{
    const int origin = 0, target = nprocs - 1;
    long *data, *flag;
    MPI_Win data_win, flag_win;
    int done = 0;

    CHECK_MPI(allocate_engine_win(64, sizeof(long), MPI_COMM_WORLD, &data, &data_win));
    CHECK_MPI(allocate_engine_win(64, sizeof(long), MPI_COMM_WORLD, &flag, &flag_win));
    data[0] = 0;
    flag[0] = 0;
    *flag_arrived = 1;
    CHECK_MPI(MPI_Win_lock_all(0, data_win));
    CHECK_MPI(MPI_Win_lock_all(0, flag_win));
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == origin) {
        long five = 5, one = 1;
        MPI_Request req;
        double deadline;
        let_target_leave_mpi();
        deadline = MPI_Wtime() + 0.5;
        CHECK_MPI(MPI_Accumulate(&five, 1, MPI_LONG, target, 0, 1, MPI_LONG, op, data_win));
        CHECK_MPI(MPIX_Win_iflush(target, data_win, &req));
        /* a little while for the intrinsic case, which needs nothing of the target */
        while (!done && MPI_Wtime() < deadline)
            CHECK_MPI(MPI_Test(&req, &done, MPI_STATUS_IGNORE));
        CHECK_MPI(MPI_Put(&one, 1, MPI_LONG, target, 0, 1, MPI_LONG, flag_win));
        CHECK_MPI(MPI_Win_flush(target, flag_win));
        if (!done)
            wait_or_abort(&req, 60.0, "a flush toward a busy target");
    } else if (rank == target) {
        volatile long *seen = flag;
        double deadline = MPI_Wtime() + 5.0;
        while (*seen == 0 && MPI_Wtime() < deadline)
            ;   /* computing, no MPI call */
        *flag_arrived = *seen != 0;
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == target) {
        CHECK_MPI(MPI_Win_sync(data_win));
        CHECK(data[0] == expect, "the accumulate left %ld at the target, expected %ld", data[0],
              expect);
    }
    MPI_Bcast(&done, 1, MPI_INT, origin, MPI_COMM_WORLD);
    MPI_Bcast(flag_arrived, 1, MPI_INT, target, MPI_COMM_WORLD);
    CHECK_MPI(MPI_Win_unlock_all(flag_win));
    CHECK_MPI(MPI_Win_unlock_all(data_win));
    CHECK_MPI(MPI_Win_free(&flag_win));
    CHECK_MPI(MPI_Win_free(&data_win));
    return done;
}

/* The answer is what happens: intrinsic operations complete without the
 * target's CPU, the others do not, unless the progress agent serves them.
 * Only where UCX reaches the target's memory (else the flag itself needs the
 * target's CPU). */
static void answers_hold(void)
{
    MPI_Win win;
    long *mem;
    int sum_intrinsic, max_intrinsic, lxor_intrinsic, arrived, agent = progress_agent_runs();

    if (!shared_memory)
        return;
    CHECK_MPI(allocate_engine_win(64, sizeof(long), MPI_COMM_WORLD, &mem, &win));
    sum_intrinsic = query("sum", 1, MPI_LONG, win);
    max_intrinsic = query("max", 1, MPI_LONG, win);
    lxor_intrinsic = query("lxor", 1, MPI_LONG, win);
    CHECK_MPI(MPI_Win_free(&win));

    int done = flush_done_while_target_busy(MPI_SUM, 5, &arrived);
    CHECK(arrived, "the flag did not reach the computing target");
    /* the progress agent serves what is not intrinsic while the target computes */
    CHECK(done == (sum_intrinsic || agent), "MPI_SUM: intrinsic %d, agent %d, but the flush %s "
          "while the target computed", sum_intrinsic, agent, done ? "completed" : "did not complete");
    done = flush_done_while_target_busy(MPI_MAX, 5, &arrived);
    CHECK(arrived, "the flag did not reach the computing target");
    CHECK(done == (max_intrinsic || agent), "MPI_MAX: intrinsic %d, agent %d, but the flush %s "
          "while the target computed", max_intrinsic, agent, done ? "completed" : "did not complete");
    done = flush_done_while_target_busy(MPI_LXOR, 1, &arrived);        /* 0 lxor 5 */
    CHECK(arrived, "the flag did not reach the computing target");
    CHECK(!lxor_intrinsic, "MPI_LXOR counts as intrinsic");
    CHECK(done == agent, "MPI_LXOR: agent %d, but the flush %s while the target computed", agent,
          done ? "completed" : "did not complete");
}

/* mpi_assert_accumulate_intrinsic: in force where the window's accumulates
 * are intrinsic; then a non-intrinsic accumulate is MPI_ERR_OP and changes
 * nothing at the target. */
static void assertion(void)
{
    MPI_Win win;
    long *mem, one = 1, hundred = 100, old = -1, cmp = 0;
    long double ldhundred = 100.0;
    const int target = nprocs - 1;

    CHECK_MPI(allocate_engine_win_with(64, sizeof(long), MPI_COMM_WORLD, &mem, &win,
                                       "mpi_assert_accumulate_intrinsic", "true"));
    CHECK_MPI(MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN));
    int in_force = query("sum,replace,no_op,cas", 1, MPI_LONG, win);
    check_win_info(win, "mpi_assert_accumulate_intrinsic", in_force ? "true" : "false",
                   "window that asserts intrinsic accumulates");
    mem[0] = 0;
    mem[1] = 0;
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK_MPI(MPI_Win_lock_all(0, win));
    if (rank != target) {
        CHECK_MPI(MPI_Accumulate(&one, 1, MPI_LONG, target, 0, 1, MPI_LONG, MPI_SUM, win));
        CHECK_MPI(MPI_Fetch_and_op(&one, &old, MPI_LONG, target, 0, MPI_SUM, win));
        CHECK_MPI(MPI_Compare_and_swap(&one, &cmp, &old, MPI_LONG, target, 1, win));
        if (in_force) {
            EXPECT_CLASS(MPI_Accumulate(&hundred, 1, MPI_LONG, target, 1, 1, MPI_LONG, MPI_LXOR,
                                        win), MPI_ERR_OP);
            EXPECT_CLASS(MPI_Accumulate(&ldhundred, 1, MPI_LONG_DOUBLE, target, 1, 1,
                                        MPI_LONG_DOUBLE, MPI_SUM, win), MPI_ERR_OP);
        }
        CHECK_MPI(MPI_Win_flush(target, win));
    }
    CHECK_MPI(MPI_Win_unlock_all(win));
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == target) {
        CHECK_MPI(MPI_Win_sync(win));
        CHECK(mem[0] == 2L * (nprocs - 1), "counter %ld, expected %d", mem[0], 2 * (nprocs - 1));
        CHECK(mem[1] == 1, "the compare-and-swap word is %ld, expected 1 (the refused accumulates changed it?)",
              mem[1]);
    }
    /* the key may be switched off */
    {
        MPI_Info info;
        MPI_Info_create(&info);
        MPI_Info_set(info, "mpi_assert_accumulate_intrinsic", "false");
        CHECK_MPI(MPI_Win_set_info(win, info));
        MPI_Info_free(&info);
        check_win_info(win, "mpi_assert_accumulate_intrinsic", "false", "after set_info false");
    }
    CHECK_MPI(MPI_Win_free(&win));
}

static void wrong_uses(void)
{
    MPI_Win win;
    long *mem;
    int flag;

    CHECK_MPI(allocate_engine_win(64, sizeof(long), MPI_COMM_WORLD, &mem, &win));
    CHECK_MPI(MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN));
    EXPECT_CLASS(MPIX_Win_op_intrinsic("foo", 1, MPI_LONG, win, &flag), MPI_ERR_ARG);
    EXPECT_CLASS(MPIX_Win_op_intrinsic("", 1, MPI_LONG, win, &flag), MPI_ERR_ARG);
    EXPECT_CLASS(MPIX_Win_op_intrinsic("sum,,cas", 1, MPI_LONG, win, &flag), MPI_ERR_ARG);
    EXPECT_CLASS(MPIX_Win_op_intrinsic("sum,", 1, MPI_LONG, win, &flag), MPI_ERR_ARG);
    EXPECT_CLASS(MPIX_Win_op_intrinsic("sum max", 1, MPI_LONG, win, &flag), MPI_ERR_ARG);
    EXPECT_CLASS(MPIX_Win_op_intrinsic("summation", 1, MPI_LONG, win, &flag), MPI_ERR_ARG);
    EXPECT_CLASS(MPIX_Win_op_intrinsic(NULL, 1, MPI_LONG, win, &flag), MPI_ERR_ARG);
    EXPECT_CLASS(MPIX_Win_op_intrinsic("sum", -1, MPI_LONG, win, &flag), MPI_ERR_SIZE);
    EXPECT_CLASS(MPIX_Win_op_intrinsic("sum", 1, MPI_DATATYPE_NULL, win, &flag), MPI_ERR_TYPE);
    EXPECT_CLASS(MPIX_Win_op_intrinsic("sum", 1, MPI_LONG, MPI_WIN_NULL, &flag), MPI_ERR_WIN);
    EXPECT_CLASS(MPIX_Win_op_intrinsic("sum", 1, MPI_LONG, win, NULL), MPI_ERR_ARG);
    CHECK_MPI(MPI_Win_free(&win));
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    shared_memory = shared_memory_between_peers();

    answers();
    answers_hold();
    assertion();
    wrong_uses();
    return report_and_finalize();
}
