/*
 * MPI_Win_flush returns only once the flushed puts are in the target's memory,
 * also where it starts no endpoint flush (rule R9: a put that UCX's call
 * copied into memory it maps here, on shared memory). The target makes no MPI
 * call while it checks: it waits outside MPI (no progress, the agent off) and
 * reads a word of a node-shared segment into which the origin stores the
 * case's number as soon as its flush returned; if the number is there, the
 * put's data must be in the target's window memory too. A flush that
 * returned before its put landed (a put UCX emulates with messages that the
 * sleeping target has not read: MPI_Win_create's memory on shared memory, or
 * anything over tcp) fails here; a flush that waits for the target's
 * progress lets the target see no number, which is fine, and the data is
 * checked again after the target's next MPI call.
 *
 * Gets likewise: once MPI_Win_flush returned, the origin's buffer holds the
 * target's data (patch 0040 lets a get that UCX completed in its call count
 * so at once).
 *
 * Fetch-and-ops likewise, the second of a lock epoch toward the one target
 * (the first goes through the engine, the later ones directly, and their
 * flush waits for MPIDIG's counters toward that target alone:
 * common/nbrma_ledger_wait.c, block_on_parts): once MPI_Win_flush returned,
 * the fetched value is in the origin's buffer.
 *
 * Windows from MPI_Win_allocate (UCX memory: R9 holds on shared memory) and
 * MPI_Win_create over malloc'ed memory (UCX emulates puts there), 8 bytes
 * and 64 KiB. 2 processes on one host; argument "tcp": UCX over tcp only.
 */
#include "nbrma_test.h"
#include <stdint.h>
#include <stdbool.h>
#include <unistd.h>

#define INTS (64 * 1024 / (int) sizeof(int))
#define WAIT_S 1.0              /* the target's wait outside MPI per case */

static int value(int round, int i)
{
    return round * 1000003 + i + 1;
}

/* One case: the origin puts `n` ints, flushes and stores `round` into
 * *landed; the target waits outside MPI and then checks. */
static void run_case(MPI_Win win, int *mem, int rank, int n, int round, volatile int *landed,
                     const char *what)
{
    int *src = malloc(sizeof(int) * n);

    for (int i = 0; i < n; i++)
        src[i] = value(round, i);
    memset(mem, 0, sizeof(int) * INTS);
    CHECK_MPI(MPI_Win_lock_all(0, win));
    CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == 0) {
        CHECK_MPI(MPI_Put(src, n, MPI_INT, 1, 0, n, MPI_INT, win));
        CHECK_MPI(MPI_Win_flush(1, win));
        __atomic_store_n(landed, round, __ATOMIC_SEQ_CST);
    } else {
        /* no MPI call in here: only the origin's own means can land the put */
        double end = MPI_Wtime() + WAIT_S * time_scale();
        while (__atomic_load_n(landed, __ATOMIC_SEQ_CST) != round && MPI_Wtime() < end)
            usleep(1000);
        if (__atomic_load_n(landed, __ATOMIC_SEQ_CST) == round) {
            int bad = 0;
            __atomic_thread_fence(__ATOMIC_SEQ_CST);
            for (int i = 0; i < n; i++)
                bad += ((volatile int *) mem)[i] != value(round, i);
            CHECK(bad == 0, "%s: MPI_Win_flush returned with %d of %d ints not in the "
                  "target's memory", what, bad, n);
        }
    }
    CHECK_MPI(MPI_Win_unlock_all(win));
    CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == 1) {
        int bad = 0;
        for (int i = 0; i < n; i++)
            bad += mem[i] != value(round, i);
        CHECK(bad == 0, "%s: %d of %d ints wrong after the epoch", what, bad, n);
    }
    free(src);
}

/* The same for a get: once MPI_Win_flush returned, the data is in the
 * origin's buffer, read right there, while the target stays outside MPI
 * (a get UCX emulates with messages waits for the target's progress). */
static void run_get_case(MPI_Win win, int *mem, int rank, int n, int round, const char *what)
{
    int *dst = calloc(n, sizeof(int));

    for (int i = 0; i < n; i++)
        mem[i] = value(round, i);
    CHECK_MPI(MPI_Win_lock_all(0, win));
    CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == 0) {
        int bad = 0;
        CHECK_MPI(MPI_Get(dst, n, MPI_INT, 1, 0, n, MPI_INT, win));
        CHECK_MPI(MPI_Win_flush(1, win));
        for (int i = 0; i < n; i++)
            bad += ((volatile int *) dst)[i] != value(round, i);
        CHECK(bad == 0, "%s: MPI_Win_flush returned with %d of %d ints not got", what, bad, n);
    } else {
        usleep((useconds_t) (WAIT_S * time_scale() * 1e6));     /* outside MPI */
    }
    CHECK_MPI(MPI_Win_unlock_all(win));
    CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
    free(dst);
}

/* Two fetch-and-adds, each flushed, while the target stays outside MPI. */
static void run_fop_case(MPI_Win win, int *mem, int rank, int round, const char *what)
{
    mem[0] = value(round, 0);
    CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == 0) {
        int one = 1, old[2] = { -1, -1 };
        CHECK_MPI(MPI_Win_lock(MPI_LOCK_SHARED, 1, 0, win));
        for (int i = 0; i < 2; i++) {
            CHECK_MPI(MPI_Fetch_and_op(&one, &old[i], MPI_INT, 1, 0, MPI_SUM, win));
            CHECK_MPI(MPI_Win_flush(1, win));
            CHECK(((volatile int *) old)[i] == value(round, 0) + i, "%s: MPI_Win_flush of "
                  "fetch-and-add %d returned with %d fetched, not %d", what, i,
                  ((volatile int *) old)[i], value(round, 0) + i);
        }
        CHECK_MPI(MPI_Win_unlock(1, win));
    } else {
        usleep((useconds_t) (WAIT_S * time_scale() * 1e6));     /* outside MPI */
    }
    CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == 1)
        CHECK(mem[0] == value(round, 0) + 2, "%s: %d after two fetch-and-adds, not %d", what,
              mem[0], value(round, 0) + 2);
}

int main(int argc, char **argv)
{
    int rank, nprocs, round = 0;
    MPI_Comm node;
    MPI_Win shared_win, win;
    int *landed, *mem, disp;
    MPI_Aint size;

    use_tcp_only_if_asked(argc, argv);
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    if (nprocs != 2 || progress_agent_runs()) {
        if (rank == 0)
            fprintf(stderr, "flush_at_target: 2 processes on one host, without the agent\n");
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
    /* the origin's word that its flush returned, read by the target with loads */
    CHECK_MPI(MPI_Win_allocate_shared(rank == 0 ? sizeof(int) : 0, sizeof(int), MPI_INFO_NULL,
                                      node, &landed, &shared_win));
    CHECK_MPI(MPI_Win_shared_query(shared_win, 0, &size, &disp, &landed));
    *landed = 0;
    CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));

    for (int kind = 0; kind < 2; kind++) {
        const char *name = kind == 0 ? "allocate" : "create";
        int *created = NULL;

        if (kind == 0) {
            CHECK_MPI(MPI_Win_allocate(sizeof(int) * INTS, sizeof(int), MPI_INFO_NULL,
                                       MPI_COMM_WORLD, &mem, &win));
        } else {
            created = malloc(sizeof(int) * INTS);
            mem = created;
            CHECK_MPI(MPI_Win_create(mem, sizeof(int) * INTS, sizeof(int), MPI_INFO_NULL,
                                     MPI_COMM_WORLD, &win));
        }
        for (int n = 2; n <= INTS; n = n == 2 ? INTS : INTS + 1) {
            char what[64];
            snprintf(what, sizeof(what), "%s, %zu bytes", name, sizeof(int) * (size_t) n);
            run_case(win, mem, rank, n, ++round, landed, what);
            strncat(what, ", get", sizeof(what) - strlen(what) - 1);
            run_get_case(win, mem, rank, n, ++round, what);
        }
        {
            char what[64];
            snprintf(what, sizeof(what), "%s, fetch-and-add", name);
            run_fop_case(win, mem, rank, ++round, what);
        }
        CHECK_MPI(MPI_Win_free(&win));
        free(created);
    }

    CHECK_MPI(MPI_Win_free(&shared_win));
    MPI_Comm_free(&node);
    return report_and_finalize();
}
