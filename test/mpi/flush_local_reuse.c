/*
 * MPI_Win_flush_local returns only once every put toward the target has left
 * its origin buffer, also when a later put toward the same target completed
 * in its call. The origin puts a large buffer (UCX still sends it from the
 * buffer when the call returns: over tcp in fragments, on shared memory for a
 * window UCX emulates puts on) and then a small one, flushes locally,
 * overwrites the large buffer at once and only then completes the epoch; the
 * target checks that its window holds the first contents, element by
 * element. MPICH 4.0.2's UCX netmod let the small put's "only a remote flush
 * needed" replace the large one's "local flush needed", so its
 * MPI_Win_flush_local skipped the endpoint flush and the target could
 * receive part of the overwritten buffer (patch 0043). That takes a large
 * put still in progress on one UCX lane and a small one done in its call on
 * another, as on RDMA networks; on this project's machines (shared memory,
 * tcp) every put toward a target takes one lane and the small one waits
 * behind the large one, so the test passes there with vanilla too.
 *
 * Windows from MPI_Win_allocate and MPI_Win_create over malloc'ed memory,
 * lock and lock_all epochs, flush_local and flush_local_all. Run with
 * MPIR_CVAR_NBRMA_EPOCHS=0 (MPICH keeps the epochs: the netmod's own marks
 * decide) and without (the component's epochs). 2 or more processes: every
 * other rank puts into rank 0 in turn; argument "tcp": UCX over tcp only.
 */
#include "nbrma_test.h"
#include <stdint.h>

#define BIG_INTS (2 * 1024 * 1024 / (int) sizeof(int))
#define ROUNDS 4

static int first_value(int origin, int round, int i)
{
    return (origin * ROUNDS + round) * 7919 + i + 1;
}

static void run(MPI_Win win, int *mem, int *big, int rank, int size, int all, int round,
                const char *what)
{
    int small = -1 - round;

    for (int origin = 1; origin < size; origin++) {
        memset(mem, 0, sizeof(int) * (BIG_INTS + 1));
        CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
        if (rank == origin) {
            for (int i = 0; i < BIG_INTS; i++)
                big[i] = first_value(origin, round, i);
            if (all)
                CHECK_MPI(MPI_Win_lock_all(0, win));
            else
                CHECK_MPI(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, win));
            CHECK_MPI(MPI_Put(big, BIG_INTS, MPI_INT, 0, 0, BIG_INTS, MPI_INT, win));
            CHECK_MPI(MPI_Put(&small, 1, MPI_INT, 0, BIG_INTS, 1, MPI_INT, win));
            if (all)
                CHECK_MPI(MPI_Win_flush_local_all(win));
            else
                CHECK_MPI(MPI_Win_flush_local(0, win));
            /* MPI allows this now: both puts left their buffers */
            for (int i = 0; i < BIG_INTS; i++)
                big[i] = -first_value(origin, round, i);
            if (all)
                CHECK_MPI(MPI_Win_unlock_all(win));
            else
                CHECK_MPI(MPI_Win_unlock(0, win));
        }
        CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
        if (rank == 0) {
            int bad = 0, first_bad = -1;

            CHECK_MPI(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, win));
            for (int i = 0; i < BIG_INTS; i++)
                if (mem[i] != first_value(origin, round, i) && bad++ == 0)
                    first_bad = i;
            CHECK(bad == 0, "%s, origin %d, round %d: %d of %d ints are not what the origin "
                  "put (first at %d: %d, expected %d)", what, origin, round, bad, BIG_INTS,
                  first_bad, first_bad < 0 ? 0 : mem[first_bad],
                  first_bad < 0 ? 0 : first_value(origin, round, first_bad));
            CHECK(mem[BIG_INTS] == small, "%s, origin %d: small put %d, expected %d", what,
                  origin, mem[BIG_INTS], small);
            CHECK_MPI(MPI_Win_unlock(0, win));
        }
    }
}

int main(int argc, char **argv)
{
    int rank, size;
    MPI_Aint bytes = sizeof(int) * (BIG_INTS + 1);
    int *big, *mem, *created;
    MPI_Win win;

    use_tcp_only_if_asked(argc, argv);
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    big = malloc(sizeof(int) * BIG_INTS);
    CHECK(big != NULL, "malloc");

    watchdog_arm((unsigned) (60 * time_scale()), "flush_local_reuse, allocate window");
    CHECK_MPI(MPI_Win_allocate(bytes, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &win));
    for (int round = 0; round < ROUNDS; round++)
        run(win, mem, big, rank, size, round & 1, round, round & 1 ? "allocate, lock_all" :
            "allocate, lock");
    CHECK_MPI(MPI_Win_free(&win));

    watchdog_arm((unsigned) (60 * time_scale()), "flush_local_reuse, create window");
    created = malloc(bytes);
    CHECK(created != NULL, "malloc");
    CHECK_MPI(MPI_Win_create(created, bytes, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &win));
    for (int round = 0; round < ROUNDS; round++)
        run(win, created, big, rank, size, round & 1, round, round & 1 ? "create, lock_all" :
            "create, lock");
    CHECK_MPI(MPI_Win_free(&win));
    free(created);
    free(big);
    watchdog_disarm();
    return report_and_finalize();
}
