/*
 * Windows whose mailboxes reuse the memory of freed windows (os/kept_segments.c
 * keeps a freed window's segment and the peers' mappings of it): rounds of
 * window creation and free that alternate between MPI_COMM_WORLD, its ranks
 * in reverse order, and the first two ranks alone (another mailbox size),
 * so that a kept segment or mapping comes back under another rank number
 * and a wrong pairing would misroute protocol messages. Each round, on an
 * engine window: a PSCW epoch (its post and complete go through the
 * mailboxes) in which every rank puts a value naming itself and the round
 * into its slot at every other rank, checked at the target; then
 * exclusive-lock increments (lock words in the mailbox) of a counter at the
 * next rank, checked by the owner after a barrier. The windows of world
 * size report every same-host peer's mailbox mapped each round. Every wait
 * is time-limited.
 *
 *   mailbox_reuse [rounds]
 */
#include "nbrma_test.h"

#define INCREMENTS 20

static void round_on(MPI_Comm comm, int round, int world_rank)
{
    int rank, nprocs, left, right;
    int64_t *mem;
    MPI_Win win;
    MPI_Group group, others;
    MPI_Request req;
    char peers[16];

    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &nprocs);
    CHECK_MPI(allocate_engine_win((nprocs + 1) * sizeof(int64_t), sizeof(int64_t), comm, &mem,
                                  &win));
    for (int i = 0; i <= nprocs; i++)
        mem[i] = -1;
    mem[nprocs] = 0;
    snprintf(peers, sizeof(peers), "%d", expected_mailbox_peers(comm));
    check_win_info(win, "mpich_nbrma_mailbox_peers", peers, "reused mailbox");
    CHECK_MPI(MPI_Barrier(comm));

    /* PSCW: everybody exposes to and accesses everybody else */
    MPI_Comm_group(comm, &group);
    MPI_Group_excl(group, 1, &rank, &others);
    CHECK_MPI(MPIX_Win_ipost(others, 0, win, &req));
    wait_or_abort(&req, 30 * time_scale(), "ipost");
    CHECK_MPI(MPIX_Win_istart(others, 0, win, &req));
    wait_or_abort(&req, 30 * time_scale(), "istart");
    int64_t mine = (int64_t) round * 1000 + world_rank;
    for (int t = 0; t < nprocs; t++)
        if (t != rank)
            CHECK_MPI(MPI_Put(&mine, 1, MPI_INT64_T, t, rank, 1, MPI_INT64_T, win));
    CHECK_MPI(MPIX_Win_icomplete(win, &req));
    wait_or_abort(&req, 30 * time_scale(), "icomplete");
    CHECK_MPI(MPIX_Win_iwait(win, &req));
    wait_or_abort(&req, 30 * time_scale(), "iwait");
    for (int o = 0; o < nprocs; o++) {
        int o_world;
        MPI_Group world_group;
        MPI_Comm_group(MPI_COMM_WORLD, &world_group);
        MPI_Group_translate_ranks(group, 1, &o, world_group, &o_world);
        MPI_Group_free(&world_group);
        if (o != rank)
            CHECK(mem[o] == (int64_t) round * 1000 + o_world,
                  "round %d: slot of rank %d holds %lld, expected %lld", round, o,
                  (long long) mem[o], (long long) round * 1000 + o_world);
    }
    MPI_Group_free(&others);
    MPI_Group_free(&group);

    /* exclusive-lock increments of the right neighbour's counter */
    right = (rank + 1) % nprocs;
    left = (rank + nprocs - 1) % nprocs;
    for (int i = 0; i < INCREMENTS; i++) {
        int64_t value;
        CHECK_MPI(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, right, 0, win));
        CHECK_MPI(MPI_Get(&value, 1, MPI_INT64_T, right, nprocs, 1, MPI_INT64_T, win));
        CHECK_MPI(MPI_Win_flush(right, win));
        value++;
        CHECK_MPI(MPI_Put(&value, 1, MPI_INT64_T, right, nprocs, 1, MPI_INT64_T, win));
        CHECK_MPI(MPI_Win_unlock(right, win));
    }
    CHECK_MPI(MPI_Barrier(comm));
    CHECK_MPI(MPI_Win_lock(MPI_LOCK_SHARED, rank, 0, win));
    CHECK(mem[nprocs] == INCREMENTS, "round %d: counter (incremented by rank %d) holds %lld, "
          "expected %d", round, left, (long long) mem[nprocs], INCREMENTS);
    CHECK_MPI(MPI_Win_unlock(rank, win));
    CHECK_MPI(MPI_Win_free(&win));
}

int main(int argc, char **argv)
{
    int rank, nprocs, rounds;
    MPI_Comm reversed, pair;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    rounds = argc > 1 ? atoi(argv[1]) : 300;
    MPI_Comm_split(MPI_COMM_WORLD, 0, nprocs - rank, &reversed);
    MPI_Comm_split(MPI_COMM_WORLD, rank < 2 ? 0 : MPI_UNDEFINED, rank, &pair);

    for (int round = 0; round < rounds; round++) {
        switch (round % 3) {
            case 0:
                round_on(MPI_COMM_WORLD, round, rank);
                break;
            case 1:
                round_on(reversed, round, rank);
                break;
            default:
                if (pair != MPI_COMM_NULL)
                    round_on(pair, round, rank);
                CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
        }
    }
    MPI_Comm_free(&reversed);
    if (pair != MPI_COMM_NULL)
        MPI_Comm_free(&pair);
    return report_and_finalize();
}
