/*
 * Epochs whose origin computes without calling MPI once it closed them: the
 * notifications that end them at their targets (a complete's done, a fence
 * arrival, an unlock's release) travel as stores into the targets' mailboxes
 * (README, "Synchronization without the target's CPU"), so the targets' epochs
 * end while the origin still computes.
 *
 * Rank 0 is the silent origin, every other rank a target. After its closing
 * call (MPIX_Win_icomplete, MPIX_Win_ifence, MPIX_Win_iunlock) rank 0 sleeps
 * outside MPI, then writes 1 into an "awake" word of its own memory in a
 * second window. Each target, once its epoch ended (a wait with a time limit),
 * reads that word with MPI_Get + flush in a lock_all epoch granted before the
 * sleep: it must still be 0. Not judged by time: a target whose epoch waited
 * for the origin reads 1. The data the origin put and accumulated is checked
 * at each target. With 3 or more ranks, rank 2 also locks rank 1 exclusively
 * after rank 0's unlock and puts: its epoch, too, ends before rank 0 wakes.
 * Last, the targets post only after rank 0 closed its access epoch: they
 * perform its operations themselves (pscw_late_post), on the window and on a
 * dynamic window with the same block attached.
 *
 * Argument: rank 0's sleep in seconds (default 2).
 */
#include "nbrma_test.h"
#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>

#define LIMIT_S 30.0
enum { PUT_WORD, ACC_WORD, LOCK_WORD, BLOCK, BLOCK_WORDS = 8192, N_WORDS = BLOCK + BLOCK_WORDS };

static int rank, nprocs;
static unsigned sleep_s = 2;
static int64_t *awake_mem;
static MPI_Win awake_win;

/* A barrier before rank 0's closing call, with rank 0 asleep from before
 * it: a target may read the awake word as soon as that call returned, before
 * rank 0 ran another instruction. */
static void barrier_origin_asleep(void)
{
    if (rank == 0)
        __atomic_store_n(awake_mem, 0, __ATOMIC_SEQ_CST);
    CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
}

/* Rank 0 only: the silent part. */
static void sleep_then_wake(MPI_Request * req, const char *what)
{
    sleep(sleep_s);             /* no MPI call: no progress here */
    __atomic_store_n(awake_mem, 1, __ATOMIC_SEQ_CST);
    wait_or_abort(req, LIMIT_S, what);
}

/* Whether rank 0 woke already (through the window it does not serve). */
static void check_origin_asleep(const char *what)
{
    int64_t awake = -1;
    CHECK_MPI(MPI_Get(&awake, 1, MPI_INT64_T, 0, 0, 1, MPI_INT64_T, awake_win));
    CHECK_MPI(MPI_Win_flush(0, awake_win));
    CHECK(awake == 0, "%s: rank %d's epoch waited for the origin's next MPI call", what, rank);
}

static void pscw(MPI_Win win, int64_t * mem, MPI_Group targets, MPI_Group origin)
{
    const int64_t value = 4242, one = 1;
    MPI_Request req;

    /* posted before the origin starts: an origin that closes its epoch
     * before the grants arrived has to issue its operations later itself */
    if (rank != 0)
        CHECK_MPI(MPI_Win_post(origin, 0, win));
    barrier_origin_asleep();
    if (rank == 0) {
        CHECK_MPI(MPI_Win_start(targets, 0, win));
        for (int t = 1; t < nprocs; t++) {
            CHECK_MPI(MPI_Put(&value, 1, MPI_INT64_T, t, PUT_WORD, 1, MPI_INT64_T, win));
            CHECK_MPI(MPI_Accumulate(&one, 1, MPI_INT64_T, t, ACC_WORD, 1, MPI_INT64_T, MPI_SUM,
                                     win));
        }
        CHECK_MPI(MPIX_Win_icomplete(win, &req));
        sleep_then_wake(&req, "pscw: complete");
    } else {
        CHECK_MPI(MPIX_Win_iwait(win, &req));
        wait_or_abort(&req, LIMIT_S, "pscw: wait");
        check_origin_asleep("pscw");
        CHECK(mem[PUT_WORD] == value && mem[ACC_WORD] == 1, "pscw: rank %d holds %lld, %lld",
              rank, (long long) mem[PUT_WORD], (long long) mem[ACC_WORD]);
    }
}

/* The origin closes before the targets post (they post late): its grants
 * reach it while it sleeps, so the targets perform its puts themselves,
 * reading its memory (a pulled access epoch; accumulates that go to UCX
 * atomics keep the grant protocol). 64 KiB of the put data span pages;
 * every word is checked. Where the targets cannot read the
 * origin's memory (mpich_nbrma_readable_peers), the epoch waits for the
 * origin, and only the data is checked. */
/* Word `word` of target `t`: its index (windows with displacement unit 8),
 * or its address on a dynamic window (`addrs`: each rank's attached block). */
static MPI_Aint disp_of(const MPI_Aint * addrs, int t, int word)
{
    return addrs ? addrs[t] + word * (MPI_Aint) sizeof(int64_t) : word;
}

static void pscw_late_post(MPI_Win win, int64_t * mem, MPI_Group targets, MPI_Group origin,
                           int pulls, const MPI_Aint * addrs)
{
    static int64_t block[BLOCK_WORDS];
    const int64_t marker = 5151;
    MPI_Request req;

    for (int i = 0; i < BLOCK_WORDS; i++)
        block[i] = (int64_t) i * 7 + 3;
    barrier_origin_asleep();
    if (rank == 0) {
        CHECK_MPI(MPIX_Win_istart(targets, 0, win, &req));
        wait_or_abort(&req, LIMIT_S, "late post: start");
        for (int t = 1; t < nprocs; t++) {
            CHECK_MPI(MPI_Put(block, BLOCK_WORDS, MPI_INT64_T, t, disp_of(addrs, t, BLOCK),
                              BLOCK_WORDS, MPI_INT64_T, win));
            CHECK_MPI(MPI_Put(&marker, 1, MPI_INT64_T, t, disp_of(addrs, t, PUT_WORD), 1,
                              MPI_INT64_T, win));
        }
        CHECK_MPI(MPIX_Win_icomplete(win, &req));
        sleep_then_wake(&req, "late post: complete");
    } else {
        usleep(300 * 1000);     /* the origin closed meanwhile */
        CHECK_MPI(MPI_Win_post(origin, 0, win));
        CHECK_MPI(MPIX_Win_iwait(win, &req));
        wait_or_abort(&req, LIMIT_S, "late post: wait");
        if (pulls)
            check_origin_asleep("late post");
        for (int i = 0; i < BLOCK_WORDS; i++)
            CHECK(mem[BLOCK + i] == block[i], "late post: rank %d word %d holds %lld", rank, i,
                  (long long) mem[BLOCK + i]);
        CHECK(mem[PUT_WORD] == marker, "late post: rank %d holds %lld", rank,
              (long long) mem[PUT_WORD]);
    }
}

static void fence(MPI_Win win, int64_t * mem)
{
    const int64_t value = 777, one = 1;
    MPI_Request req;

    barrier_origin_asleep();
    CHECK_MPI(MPI_Win_fence(0, win));
    if (rank == 0) {
        for (int t = 1; t < nprocs; t++) {
            CHECK_MPI(MPI_Put(&value, 1, MPI_INT64_T, t, PUT_WORD, 1, MPI_INT64_T, win));
            CHECK_MPI(MPI_Accumulate(&one, 1, MPI_INT64_T, t, ACC_WORD, 1, MPI_INT64_T, MPI_SUM,
                                     win));
        }
        CHECK_MPI(MPIX_Win_ifence(MPI_MODE_NOSUCCEED, win, &req));
        sleep_then_wake(&req, "fence: closing fence");
    } else {
        CHECK_MPI(MPIX_Win_ifence(MPI_MODE_NOSUCCEED, win, &req));
        wait_or_abort(&req, LIMIT_S, "fence: closing fence");
        check_origin_asleep("fence");
        CHECK(mem[PUT_WORD] == value && mem[ACC_WORD] == 2, "fence: rank %d holds %lld, %lld",
              rank, (long long) mem[PUT_WORD], (long long) mem[ACC_WORD]);
    }
}

/* Rank 0 unlocks rank 1 and sleeps; rank 2 then locks rank 1 and puts. */
static void late_unlock(MPI_Win win, int64_t * mem)
{
    const int64_t first = 1, second = 2;
    MPI_Request req, barrier;

    if (rank == 0) {
        CHECK_MPI(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 1, 0, win));
        CHECK_MPI(MPI_Put(&first, 1, MPI_INT64_T, 1, LOCK_WORD, 1, MPI_INT64_T, win));
        CHECK_MPI(MPI_Win_flush(1, win));
    }
    barrier_origin_asleep();   /* rank 0 holds the lock */
    if (rank == 0) {
        CHECK_MPI(MPIX_Win_iunlock(1, win, &req));
        sleep_then_wake(&req, "late unlock: unlock");
    } else if (rank == 2) {
        int64_t seen = -1;
        CHECK_MPI(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 1, 0, win));
        CHECK_MPI(MPI_Get(&seen, 1, MPI_INT64_T, 1, LOCK_WORD, 1, MPI_INT64_T, win));
        CHECK_MPI(MPI_Win_flush(1, win));
        CHECK(seen == first, "late unlock: rank 2 locked before rank 0's put (read %lld)",
              (long long) seen);
        CHECK_MPI(MPI_Put(&second, 1, MPI_INT64_T, 1, LOCK_WORD, 1, MPI_INT64_T, win));
        CHECK_MPI(MPIX_Win_iunlock(1, win, &req));
        wait_or_abort(&req, LIMIT_S, "late unlock: second origin's unlock");
        check_origin_asleep("late unlock");
    }
    /* the target serves lock requests while it waits */
    CHECK_MPI(MPI_Ibarrier(MPI_COMM_WORLD, &barrier));
    wait_or_abort(&barrier, LIMIT_S + sleep_s, "late unlock: barrier");
    if (rank == 1) {
        CHECK_MPI(MPI_Win_lock(MPI_LOCK_SHARED, 1, 0, win));
        CHECK(mem[LOCK_WORD] == second, "late unlock: rank 1 holds %lld", (long long)
              mem[LOCK_WORD]);
        CHECK_MPI(MPI_Win_unlock(1, win));
    }
}

int main(int argc, char **argv)
{
    int64_t *mem;
    MPI_Win win;
    MPI_Group world, targets, origin;
    const int zero = 0;
    char peers[16];

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    if (argc > 1)
        sleep_s = (unsigned) atoi(argv[1]);
    if (nprocs < 2) {
        fprintf(stderr, "run with 2 or more processes\n");
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    MPI_Comm_group(MPI_COMM_WORLD, &world);
    MPI_Group_excl(world, 1, &zero, &targets);
    MPI_Group_incl(world, 1, &zero, &origin);

    CHECK_MPI(MPI_Win_allocate(sizeof(int64_t), sizeof(int64_t), MPI_INFO_NULL, MPI_COMM_WORLD,
                               &awake_mem, &awake_win));
    CHECK_MPI(MPI_Win_allocate(N_WORDS * sizeof(int64_t), sizeof(int64_t), MPI_INFO_NULL,
                               MPI_COMM_WORLD, &mem, &win));
    snprintf(peers, sizeof(peers), "%d", nprocs - 1);
    check_win_info(win, "mpich_nbrma_mailboxes", "true", "window");
    check_win_info(win, "mpich_nbrma_mailbox_peers", peers, "window");
    for (int i = 0; i < N_WORDS; i++)
        mem[i] = 0;
    *awake_mem = 0;
    CHECK_MPI(MPI_Win_lock_all(0, awake_win));
    if (rank != 0) {    /* granted while rank 0 is in MPI */
        int64_t dummy;
        CHECK_MPI(MPI_Get(&dummy, 1, MPI_INT64_T, 0, 0, 1, MPI_INT64_T, awake_win));
        CHECK_MPI(MPI_Win_flush(0, awake_win));
    }

    pscw(win, mem, targets, origin);
    fence(win, mem);
    if (nprocs >= 3)
        late_unlock(win, mem);
    {
        char readable[MPI_MAX_INFO_VAL + 1] = "0", sent[MPI_MAX_INFO_VAL + 1] = "0";
        int pulls;

        win_info_value(win, "mpich_nbrma_readable_peers", readable);
        pulls = atoi(readable) == nprocs - 1;
        if (!pulls && rank == 0)
            printf("note: %s of %d peers' memory readable here (cross-memory attach): "
                   "the late-post epoch is checked for its data only\n", readable, nprocs - 1);
        pscw_late_post(win, mem, targets, origin, pulls, NULL);
        win_info_value(win, "mpich_nbrma_pulled_epochs_sent", sent);
        if (rank == 0 && pulls)
            CHECK(atoi(sent) == nprocs - 1, "late post: %s pulled epochs reported, %d expected",
                  sent, nprocs - 1);

        /* the same on a dynamic window: the targets pull into the block they
         * attached, at the addresses the origin's operations name */
        {
            MPI_Win dyn;
            MPI_Aint mine, *addrs = malloc(nprocs * sizeof(MPI_Aint));

            for (int i = 0; i < N_WORDS; i++)
                mem[i] = 0;
            CHECK_MPI(MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &dyn));
            CHECK_MPI(MPI_Win_attach(dyn, mem, N_WORDS * sizeof(int64_t)));
            CHECK_MPI(MPI_Get_address(mem, &mine));
            CHECK_MPI(MPI_Allgather(&mine, 1, MPI_AINT, addrs, 1, MPI_AINT, MPI_COMM_WORLD));
            check_win_info(dyn, "mpich_nbrma_pulled_epochs", "true", "dynamic window");
            pscw_late_post(dyn, mem, targets, origin, pulls, addrs);
            win_info_value(dyn, "mpich_nbrma_pulled_epochs_sent", sent);
            if (rank == 0 && pulls)
                CHECK(atoi(sent) == nprocs - 1, "late post, dynamic window: %s pulled epochs "
                      "reported, %d expected", sent, nprocs - 1);
            CHECK_MPI(MPI_Win_detach(dyn, mem));
            CHECK_MPI(MPI_Win_free(&dyn));
            free(addrs);
        }
    }

    CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
    CHECK_MPI(MPI_Win_unlock_all(awake_win));
    CHECK_MPI(MPI_Win_free(&win));
    CHECK_MPI(MPI_Win_free(&awake_win));
    MPI_Group_free(&world);
    MPI_Group_free(&targets);
    MPI_Group_free(&origin);
    return report_and_finalize();
}
