/*
 * Dynamic windows (MPI_Win_create_dynamic + MPI_Win_attach) carry nonblocking
 * epochs: the MPIX_Win_i* calls, mixed with the blocking ones, every datum
 * checked in the target's memory. Displacements are addresses, published
 * after each attach.
 *  1. lock_all: MPIX_Win_ilock_all, puts to the right neighbour, gets back,
 *     MPIX_Win_iflush / MPIX_Win_iflush_all, MPIX_Win_iunlock_all; many rounds,
 *     the first while the rkey cache is empty (active messages), the later
 *     ones by RDMA (the test checks that the cache was used).
 *  2. exclusive locks: every rank adds 1 to a counter at rank 0 by a get, a
 *     flush and a put under MPIX_Win_ilock(MPI_LOCK_EXCLUSIVE) or the
 *     blocking lock (odd ranks); a lock that let two ranks in loses updates.
 *  3. PSCW: rank 0 exposes to all (MPIX_Win_ipost), the others
 *     MPIX_Win_istart, put into their slot, MPIX_Win_icomplete, rank 0
 *     MPIX_Win_iwait; two origins at least from 3 ranks.
 *  4. ifence: MPIX_Win_ifence, puts to every rank, MPIX_Win_ifence.
 *  5. epochs queued behind each other: ilock_all, puts, iunlock_all and the
 *     next ilock_all at once, none waited for until the end.
 *  6. detach and attach between epochs: new memory each round.
 *  6b. attach and detach inside one open epoch, as MPI allows: within a
 *     single MPIX_Win_ilock_all, each round every rank attaches a fresh block
 *     (often at the address of the one it freed the round before), tells its
 *     left neighbour the address by MPI_Sendrecv, receives puts into it (two:
 *     the second misses the rkey cache again and asks for the block's key,
 *     which a detach must take back before the address comes again), checks
 *     them once the origin flushed and said so, and detaches and frees the
 *     block while every epoch stays open.
 *  7. a memory-handle window on the dynamic parent: puts through it in the
 *     parent's epoch, MPIX_Win_iflush on it.
 *  8. MPI_Win_get_info reports mpich_nbrma_epochs=true.
 * With "tcp" (UCX over tcp only), or across hosts, the rkey cache must stay
 * unused.
 *
 *   dynamic_epochs [tcp]
 */
#include "nbrma_test.h"

#define LONGS 64
#define ROUNDS 30
#define LIMIT 30.0              /* s for any wait */

static int rank, nprocs, right, left;
static MPI_Aint *addrs;         /* every rank's attached memory */

static void publish(long *mem)
{
    CHECK_MPI(MPI_Get_address(mem, &addrs[rank]));
    CHECK_MPI(MPI_Allgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, addrs, 1, MPI_AINT,
                            MPI_COMM_WORLD));
}

static MPI_Aint at(int target, int index)
{
    return addrs[target] + index * (MPI_Aint) sizeof(long);
}

static long info_long(MPI_Win win, const char *key)
{
    char value[MPI_MAX_INFO_VAL + 1];
    if (!win_info_value(win, key, value))
        return -1;
    if (!strcmp(value, "true"))
        return 1;
    if (!strcmp(value, "false"))
        return 0;
    return atol(value);
}

static void lock_all_rounds(MPI_Win win, long *mem)
{
    for (int round = 0; round < ROUNDS; round++) {
        long mine = 1000L * round + rank, got = -1;
        MPI_Request reqs[3];

        mem[LONGS - 1] = 7000L * round + rank;  /* what my left neighbour gets */
        CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
        CHECK_MPI(MPIX_Win_ilock_all(0, win, &reqs[0]));
        CHECK_MPI(MPI_Put(&mine, 1, MPI_LONG, right, at(right, rank), 1, MPI_LONG, win));
        CHECK_MPI(MPI_Get(&got, 1, MPI_LONG, right, at(right, LONGS - 1), 1, MPI_LONG, win));
        if (round % 2)
            CHECK_MPI(MPIX_Win_iflush_all(win, &reqs[1]));
        else
            CHECK_MPI(MPIX_Win_iflush(right, win, &reqs[1]));
        wait_all_or_abort(2, reqs, LIMIT, "MPIX_Win_ilock_all and the flush");
        CHECK(got == 7000L * round + right, "lock_all round %d: got %ld from %d", round, got,
              right);
        CHECK_MPI(MPIX_Win_iunlock_all(win, &reqs[2]));
        wait_or_abort(&reqs[2], LIMIT, "MPIX_Win_iunlock_all");
        CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
        CHECK(mem[left] == 1000L * round + left, "lock_all round %d: slot of %d holds %ld", round,
              left, mem[left]);
    }
}

static void exclusive_counter(MPI_Win win, long *mem)
{
    mem[0] = 0;
    CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
    for (int round = 0; round < ROUNDS; round++) {
        long value = -1;
        MPI_Request req;

        if (rank % 2 == 0)
            CHECK_MPI(MPIX_Win_ilock(MPI_LOCK_EXCLUSIVE, 0, 0, win, &req));
        else
            CHECK_MPI(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, win));
        CHECK_MPI(MPI_Get(&value, 1, MPI_LONG, 0, at(0, 0), 1, MPI_LONG, win));
        CHECK_MPI(MPI_Win_flush(0, win));
        value++;
        CHECK_MPI(MPI_Put(&value, 1, MPI_LONG, 0, at(0, 0), 1, MPI_LONG, win));
        if (rank % 2 == 0) {
            wait_or_abort(&req, LIMIT, "MPIX_Win_ilock");
            CHECK_MPI(MPIX_Win_iunlock(0, win, &req));
            wait_or_abort(&req, LIMIT, "MPIX_Win_iunlock");
        } else
            CHECK_MPI(MPI_Win_unlock(0, win));
    }
    CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == 0)
        CHECK(mem[0] == (long) nprocs * ROUNDS, "exclusive locks: counter %ld, expected %ld",
              mem[0], (long) nprocs * ROUNDS);
}

static void pscw_rounds(MPI_Win win, long *mem)
{
    MPI_Group world_g, origins_g, target_g;
    int zero = 0;

    MPI_Comm_group(MPI_COMM_WORLD, &world_g);
    MPI_Group_excl(world_g, 1, &zero, &origins_g);
    MPI_Group_incl(world_g, 1, &zero, &target_g);
    for (int round = 0; round < ROUNDS && nprocs > 1; round++) {
        MPI_Request reqs[2];

        if (rank == 0) {
            CHECK_MPI(MPIX_Win_ipost(origins_g, 0, win, &reqs[0]));
            CHECK_MPI(MPIX_Win_iwait(win, &reqs[1]));
            wait_all_or_abort(2, reqs, LIMIT, "MPIX_Win_ipost and MPIX_Win_iwait");
            for (int o = 1; o < nprocs; o++)
                CHECK(mem[o] == 3000L * round + o, "pscw round %d: slot of %d holds %ld", round,
                      o, mem[o]);
        } else {
            long mine = 3000L * round + rank;
            CHECK_MPI(MPIX_Win_istart(target_g, 0, win, &reqs[0]));
            CHECK_MPI(MPI_Put(&mine, 1, MPI_LONG, 0, at(0, rank), 1, MPI_LONG, win));
            CHECK_MPI(MPIX_Win_icomplete(win, &reqs[1]));
            wait_all_or_abort(2, reqs, LIMIT, "MPIX_Win_istart and MPIX_Win_icomplete");
        }
    }
    MPI_Group_free(&target_g);
    MPI_Group_free(&origins_g);
    MPI_Group_free(&world_g);
}

static void ifence_rounds(MPI_Win win, long *mem)
{
    for (int round = 0; round < ROUNDS; round++) {
        long mine = 5000L * round + rank;
        MPI_Request req;

        CHECK_MPI(MPIX_Win_ifence(0, win, &req));
        wait_or_abort(&req, LIMIT, "the opening MPIX_Win_ifence");
        for (int t = 0; t < nprocs; t++)
            CHECK_MPI(MPI_Put(&mine, 1, MPI_LONG, t, at(t, rank), 1, MPI_LONG, win));
        CHECK_MPI(MPIX_Win_ifence(0, win, &req));
        wait_or_abort(&req, LIMIT, "the closing MPIX_Win_ifence");
        for (int o = 0; o < nprocs; o++)
            CHECK(mem[o] == 5000L * round + o, "ifence round %d: slot of %d holds %ld", round, o,
                  mem[o]);
    }
    CHECK_MPI(MPI_Win_fence(MPI_MODE_NOSUCCEED, win));
}

/* Epochs queued behind each other, none waited for until the end: the last
 * round's values are what stays. */
static void queued_epochs(MPI_Win win, long *mem)
{
    MPI_Request reqs[2 * ROUNDS];
    long values[ROUNDS];

    CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
    for (int round = 0; round < ROUNDS; round++) {
        values[round] = 9000L * round + rank;
        CHECK_MPI(MPIX_Win_ilock_all(0, win, &reqs[2 * round]));
        CHECK_MPI(MPI_Put(&values[round], 1, MPI_LONG, right, at(right, rank), 1, MPI_LONG, win));
        CHECK_MPI(MPIX_Win_iunlock_all(win, &reqs[2 * round + 1]));
    }
    wait_all_or_abort(2 * ROUNDS, reqs, LIMIT, "queued lock_all epochs");
    CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
    CHECK(mem[left] == 9000L * (ROUNDS - 1) + left, "queued epochs: slot of %d holds %ld", left,
          mem[left]);
}

/* New memory between epochs: the old goes, the new is reached. */
static long *reattach_rounds(MPI_Win win, long *mem)
{
    for (int round = 0; round < 8; round++) {
        long *fresh = calloc(LONGS, sizeof(long)), mine = 11000L * round + rank;
        MPI_Request req;

        CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
        CHECK_MPI(MPI_Win_detach(win, mem));
        free(mem);
        mem = fresh;
        CHECK_MPI(MPI_Win_attach(win, mem, LONGS * sizeof(long)));
        publish(mem);
        CHECK_MPI(MPIX_Win_ilock(MPI_LOCK_SHARED, right, 0, win, &req));
        CHECK_MPI(MPI_Put(&mine, 1, MPI_LONG, right, at(right, rank), 1, MPI_LONG, win));
        CHECK_MPI(MPI_Win_unlock(right, win));  /* blocking close of a nonblocking open */
        wait_or_abort(&req, LIMIT, "MPIX_Win_ilock after an attach");
        CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
        CHECK(mem[left] == 11000L * round + left, "reattach round %d: slot of %d holds %ld", round,
              left, mem[left]);
    }
    return mem;
}

static void attach_inside_epoch(MPI_Win win)
{
    MPI_Request req;
    long *block = NULL;

    CHECK_MPI(MPIX_Win_ilock_all(0, win, &req));
    wait_or_abort(&req, LIMIT, "MPIX_Win_ilock_all");
    for (int round = 0; round < ROUNDS; round++) {
        long mine[2] = { 15000L * round + rank, -15000L * round - rank };
        MPI_Aint mine_at, right_at;
        int done = 0;

        block = calloc(LONGS, sizeof(long));
        CHECK_MPI(MPI_Win_attach(win, block, LONGS * sizeof(long)));
        CHECK_MPI(MPI_Get_address(block, &mine_at));
        CHECK_MPI(MPI_Sendrecv(&mine_at, 1, MPI_AINT, left, 61, &right_at, 1, MPI_AINT, right, 61,
                               MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        CHECK_MPI(MPI_Put(&mine[0], 1, MPI_LONG, right, right_at, 1, MPI_LONG, win));
        CHECK_MPI(MPI_Put(&mine[1], 1, MPI_LONG, right, right_at + (MPI_Aint) sizeof(long), 1,
                          MPI_LONG, win));
        CHECK_MPI(MPIX_Win_iflush(right, win, &req));
        wait_or_abort(&req, LIMIT, "MPIX_Win_iflush into memory attached in the epoch");
        CHECK_MPI(MPI_Sendrecv(&done, 1, MPI_INT, right, 62, &done, 1, MPI_INT, left, 62,
                               MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        CHECK(block[0] == 15000L * round + left && block[1] == -15000L * round - left,
              "attach in an epoch, round %d: the block holds %ld %ld from %d", round, block[0],
              block[1], left);
        CHECK_MPI(MPI_Win_detach(win, block));
        free(block);
    }
    CHECK_MPI(MPIX_Win_iunlock_all(win, &req));
    wait_or_abort(&req, LIMIT, "MPIX_Win_iunlock_all");
    CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
}

static void memhandle_window(MPI_Win win)
{
    long *mem = calloc(LONGS, sizeof(long));
    char *handles = calloc(nprocs, MPIX_MAX_MEMHANDLE_SIZE);
    int size;
    MPI_Win mh;

    CHECK_MPI(MPIX_Memhandle_create(mem, LONGS * sizeof(long), MPI_INFO_NULL, win,
                                    handles + rank * MPIX_MAX_MEMHANDLE_SIZE, &size));
    CHECK_MPI(MPI_Allgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, handles, MPIX_MAX_MEMHANDLE_SIZE,
                            MPI_BYTE, MPI_COMM_WORLD));
    CHECK_MPI(MPIX_Win_from_memhandle(handles + right * MPIX_MAX_MEMHANDLE_SIZE,
                                      LONGS * sizeof(long), sizeof(long), MPI_INFO_NULL, right,
                                      win, &mh));
    for (int round = 0; round < ROUNDS; round++) {
        long mine[2] = { 13000L * round + rank, -13000L * round - rank };
        MPI_Request reqs[2];

        CHECK_MPI(MPIX_Win_ilock_all(0, win, &reqs[0]));
        CHECK_MPI(MPI_Put(&mine[0], 1, MPI_LONG, right, rank, 1, MPI_LONG, mh));
        CHECK_MPI(MPI_Put(&mine[1], 1, MPI_LONG, right, nprocs + rank, 1, MPI_LONG, mh));
        CHECK_MPI(MPIX_Win_iflush(right, mh, &reqs[1]));
        wait_all_or_abort(2, reqs, LIMIT, "MPIX_Win_iflush on a memory-handle window");
        CHECK_MPI(MPI_Win_unlock_all(win));
        CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
        CHECK(mem[left] == 13000L * round + left && mem[nprocs + left] == -13000L * round - left,
              "memory handle round %d: slots of %d hold %ld %ld", round, left, mem[left],
              mem[nprocs + left]);
        CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
    }
    CHECK_MPI(MPI_Win_free(&mh));
    CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
    CHECK_MPI(MPIX_Memhandle_release(handles + rank * MPIX_MAX_MEMHANDLE_SIZE, win));
    free(handles);
    free(mem);
}

int main(int argc, char **argv)
{
    MPI_Win win;
    long *mem = calloc(LONGS, sizeof(long));

    use_tcp_only_if_asked(argc, argv);
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    if (nprocs > LONGS / 2)
        MPI_Abort(MPI_COMM_WORLD, 1);
    right = (rank + 1) % nprocs;
    left = (rank + nprocs - 1) % nprocs;
    addrs = calloc(nprocs, sizeof(MPI_Aint));

    CHECK_MPI(MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &win));
    CHECK(info_long(win, "mpich_nbrma_epochs") == 1,
          "MPI_Win_get_info should report mpich_nbrma_epochs=true on a dynamic window");
    CHECK_MPI(MPI_Win_attach(win, mem, LONGS * sizeof(long)));
    publish(mem);

    lock_all_rounds(win, mem);
    if (nprocs > 1 && tcp_only())
        CHECK(info_long(win, "mpich_nbrma_dynamic_rdma_ops") == 0,
              "over tcp the rkey cache should not be used (UCX emulates RDMA there)");
    else if (nprocs > 1)
        CHECK(info_long(win, "mpich_nbrma_dynamic_rdma_ops") > 0,
              "the later rounds should have used the rkey cache's RDMA");
    exclusive_counter(win, mem);
    pscw_rounds(win, mem);
    ifence_rounds(win, mem);
    queued_epochs(win, mem);
    mem = reattach_rounds(win, mem);
    attach_inside_epoch(win);
    memhandle_window(win);

    CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
    CHECK_MPI(MPI_Win_detach(win, mem));
    CHECK_MPI(MPI_Win_free(&win));
    free(mem);
    free(addrs);
    return report_and_finalize();
}
