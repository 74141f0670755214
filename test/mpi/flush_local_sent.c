/*
 * An accumulate that travels as MPICH's active message is locally complete
 * once its data left the origin buffer (patch 0045): MPI_Win_flush_local
 * returns without the target's CPU, and the origin may then overwrite its
 * buffer. Before, MPICH counted local completion only at the target's
 * acknowledgement, so a local flush waited a round trip and a target that
 * computes outside MPI held it until it called MPI again.
 *
 * The target sleeps outside MPI. The origin accumulates a buffer (1, 4 and
 * 256 MPI_INTs, MPI_SUM: more than one element, so MPICH's message rather
 * than an atomic of UCX's or the CPU's) into a window from MPI_Win_create over
 * malloc'ed memory, flushes locally and overwrites the buffer with a value
 * that must not arrive, ROUNDS times, then reads the target's "awake" word
 * from a node-shared segment (no RMA: the target's CPU is not needed to read
 * it). It must still be 0. After the target woke, the epoch ends and the
 * target checks every element of its window: the sums of the values before
 * each overwrite.
 *
 * MPI_Win_fence and PSCW epochs then check that remote completion still waits
 * for the acknowledgement (patch 0045 changes MPIDIG's fence and
 * MPI_Win_complete; MPIR_CVAR_NBRMA_EPOCHS=0 runs them): accumulates, a fence
 * or complete, and the target reads its memory at once.
 *
 * Run with 2 processes (more wait at the barriers); argument "tcp": UCX over
 * tcp only. Same host only: the awake word is in node-shared memory.
 */
#include "nbrma_test.h"
#include <stdbool.h>
#include <unistd.h>

#define ROUNDS 8
#define SLEEP_S 2
#define SPOILED (-1000000)

static const int counts[] = { 1, 4, 256 };

#define N_COUNTS ((int) (sizeof(counts) / sizeof(counts[0])))
#define WIN_INTS (256 + 4 + 1)

/* where the accumulate of counts[c] lands in the window */
static int offset_of(int c)
{
    int off = 0;
    for (int i = 0; i < c; i++)
        off += counts[i];
    return off;
}

static int value(int round, int c, int i)
{
    return (round + 1) * 1000 + c * 300 + i;
}

static int expected_sum(int c, int i)
{
    int sum = 0;
    for (int round = 0; round < ROUNDS; round++)
        sum += value(round, c, i);
    return sum;
}

/* every element holds `origins` times its sum over the rounds */
static void check_sums(const int *mem, int origins, const char *what)
{
    int bad = 0;
    for (int c = 0; c < N_COUNTS; c++)
        for (int i = 0; i < counts[c]; i++) {
            int got = __atomic_load_n(&mem[offset_of(c) + i], __ATOMIC_SEQ_CST);
            if (got != origins * expected_sum(c, i) && bad++ == 0)
                CHECK(0, "%s: accumulate of %d ints, element %d is %d, expected %d", what,
                      counts[c], i, got, origins * expected_sum(c, i));
        }
    CHECK(bad == 0, "%s: %d elements wrong", what, bad);
}

/* ROUNDS accumulates of every count toward `target`. Flushed locally (lock
 * epochs): from one buffer, spoiled right after each flush. Else each from its
 * own part of `buf` (ROUNDS * WIN_INTS ints), which stays until the epoch ends. */
static void accumulate_rounds(MPI_Win win, int target, int *buf, bool flush_local)
{
    for (int round = 0; round < ROUNDS; round++)
        for (int c = 0; c < N_COUNTS; c++) {
            int *origin = flush_local ? buf : buf + round * WIN_INTS + offset_of(c);
            for (int i = 0; i < counts[c]; i++)
                origin[i] = value(round, c, i);
            CHECK_MPI(MPI_Accumulate(origin, counts[c], MPI_INT, target, offset_of(c),
                                     counts[c], MPI_INT, MPI_SUM, win));
            if (flush_local) {
                CHECK_MPI(MPI_Win_flush_local(target, win));
                for (int i = 0; i < counts[c]; i++)
                    origin[i] = SPOILED;
            }
        }
}

static void while_target_sleeps(MPI_Win win, int *mem, int *buf, volatile int *awake, int rank)
{
    memset(mem, 0, WIN_INTS * sizeof(int));
    *awake = 0;
    CHECK_MPI(MPI_Win_lock_all(0, win));
    if (rank == 1) {
        /* the epoch is granted before the target sleeps */
        int got;
        CHECK_MPI(MPI_Get(&got, 1, MPI_INT, 0, 0, 1, MPI_INT, win));
        CHECK_MPI(MPI_Win_flush(0, win));
    }
    CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == 0) {
        sleep(SLEEP_S);         /* no MPI call: no progress here */
        __atomic_store_n(awake, 1, __ATOMIC_SEQ_CST);
    } else if (rank == 1) {
        let_target_leave_mpi();
        accumulate_rounds(win, 0, buf, true);
        CHECK(__atomic_load_n(awake, __ATOMIC_SEQ_CST) == 0, "lock_all: the origin's local "
              "flushes waited for the target (it was awake when they returned)");
    }
    CHECK_MPI(MPI_Win_unlock_all(win));
    CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == 0) {
        CHECK_MPI(MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win));    /* memory model: sync */
        check_sums(mem, 1, "lock_all, target asleep");
        CHECK_MPI(MPI_Win_unlock(0, win));
    }
}

/* fence and PSCW: the target reads its memory right after the epoch closed */
static void active_target(MPI_Win win, int *mem, int *buf, int rank, int size)
{
    MPI_Group world, peer;
    int others = size - 1;

    memset(mem, 0, WIN_INTS * sizeof(int));
    CHECK_MPI(MPI_Win_fence(0, win));
    if (rank != 0)
        accumulate_rounds(win, 0, buf, false);
    CHECK_MPI(MPI_Win_fence(0, win));
    if (rank == 0)
        check_sums(mem, others, "fence");
    CHECK_MPI(MPI_Win_fence(0, win));

    memset(mem, 0, WIN_INTS * sizeof(int));
    CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
    MPI_Comm_group(MPI_COMM_WORLD, &world);
    if (rank == 0) {
        int *ranks = malloc(sizeof(int) * others);
        for (int i = 0; i < others; i++)
            ranks[i] = i + 1;
        MPI_Group_incl(world, others, ranks, &peer);
        free(ranks);
        CHECK_MPI(MPI_Win_post(peer, 0, win));
        CHECK_MPI(MPI_Win_wait(win));
        check_sums(mem, others, "pscw");
    } else {
        int zero = 0;
        MPI_Group_incl(world, 1, &zero, &peer);
        CHECK_MPI(MPI_Win_start(peer, 0, win));
        accumulate_rounds(win, 0, buf, false);
        CHECK_MPI(MPI_Win_complete(win));
    }
    MPI_Group_free(&peer);
    MPI_Group_free(&world);
}

int main(int argc, char **argv)
{
    int rank, size, *mem, *buf, *awake;
    MPI_Comm node;
    MPI_Win win, awake_win;
    MPI_Aint awake_size;
    int awake_disp;

    use_tcp_only_if_asked(argc, argv);
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    watchdog_arm((unsigned) (60 * time_scale()), "flush_local_sent");

    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
    CHECK_MPI(MPI_Win_allocate_shared(rank == 0 ? sizeof(int) : 0, sizeof(int), MPI_INFO_NULL,
                                      node, &awake, &awake_win));
    CHECK_MPI(MPI_Win_shared_query(awake_win, 0, &awake_size, &awake_disp, &awake));

    mem = calloc(WIN_INTS, sizeof(int));
    buf = malloc(ROUNDS * WIN_INTS * sizeof(int));
    CHECK(mem && buf, "malloc");
    CHECK_MPI(MPI_Win_create(mem, WIN_INTS * sizeof(int), sizeof(int), MPI_INFO_NULL,
                             MPI_COMM_WORLD, &win));
    while_target_sleeps(win, mem, buf, awake, rank);
    active_target(win, mem, buf, rank, size);
    CHECK_MPI(MPI_Win_free(&win));
    CHECK_MPI(MPI_Win_free(&awake_win));
    MPI_Comm_free(&node);
    free(mem);
    free(buf);
    watchdog_disarm();
    return report_and_finalize();
}
