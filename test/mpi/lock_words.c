/*
 * Locks in lock words (README, "Synchronization without the target's CPU"):
 * toward peers that map a window's mailbox, MPI_Win_lock and its kin take the
 * target's lock word with the CPU's atomics, and a lock request that comes as
 * a message takes the same word. Checked at the targets, every wait with a
 * time limit:
 *   - exclusive counters: every rank increments random slots of random targets
 *     (itself included) by get, flush, put inside MPIX_Win_ilock exclusive
 *     epochs, several epochs pending; each slot ends at the exact count;
 *   - shared readers against exclusive writers: writers update two words of a
 *     target with a flush in between, readers under shared locks (and under
 *     lock_all) must never see them differ;
 *   - mixed: the same counters on a window whose mailboxes are off on rank 0
 *     only (its locks and the locks toward it are messages), so that words
 *     and messages guard one window together.
 * Run with 2 to 4 processes.
 */
#include "nbrma_test.h"
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>

#define SLOTS 16
#define LIMIT_S 60.0

static int rank, nprocs;

static MPI_Win make_win(int64_t ** mem, bool mailboxes)
{
    MPI_Info info;
    MPI_Win win;

    MPI_Info_create(&info);
    MPI_Info_set(info, "mpich_nbrma_mailboxes", mailboxes ? "true" : "false");
    CHECK_MPI(MPI_Win_allocate(SLOTS * sizeof(int64_t), sizeof(int64_t), info, MPI_COMM_WORLD,
                               mem, &win));
    MPI_Info_free(&info);
    for (int i = 0; i < SLOTS; i++)
        (*mem)[i] = 0;
    CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
    return win;
}

/* Non-atomic increments under exclusive locks; returns nothing, checks the
 * totals at every target. */
static void exclusive_counters(MPI_Win win, int64_t * mem, int rounds, const char *what)
{
    int64_t *mine = calloc((size_t) nprocs * SLOTS, sizeof(int64_t));
    int64_t *totals = calloc((size_t) nprocs * SLOTS, sizeof(int64_t));
    MPI_Request unlocks[4];
    int n_unlocks = 0;
    unsigned seed = 7u + 13u * (unsigned) rank;

    for (int i = 0; i < rounds; i++) {
        int target = rand_r(&seed) % nprocs, slot = rand_r(&seed) % SLOTS;
        int64_t value = -1;
        MPI_Request lock;

        CHECK_MPI(MPIX_Win_ilock(MPI_LOCK_EXCLUSIVE, target, 0, win, &lock));
        CHECK_MPI(MPI_Request_free(&lock));
        CHECK_MPI(MPI_Get(&value, 1, MPI_INT64_T, target, slot, 1, MPI_INT64_T, win));
        CHECK_MPI(MPI_Win_flush(target, win));
        value++;
        CHECK_MPI(MPI_Put(&value, 1, MPI_INT64_T, target, slot, 1, MPI_INT64_T, win));
        CHECK_MPI(MPIX_Win_iunlock(target, win, &unlocks[n_unlocks++]));
        mine[target * SLOTS + slot]++;
        if (n_unlocks == 4) {   /* unlocks pending while the next locks start */
            wait_all_or_abort(n_unlocks, unlocks, LIMIT_S, what);
            n_unlocks = 0;
        }
    }
    wait_all_or_abort(n_unlocks, unlocks, LIMIT_S, what);
    CHECK_MPI(MPI_Allreduce(mine, totals, nprocs * SLOTS, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD));
    CHECK_MPI(MPI_Win_lock(MPI_LOCK_SHARED, rank, 0, win));
    for (int s = 0; s < SLOTS; s++)
        CHECK(mem[s] == totals[rank * SLOTS + s], "%s: slot %d holds %lld, %lld increments",
              what, s, (long long) mem[s], (long long) totals[rank * SLOTS + s]);
    CHECK_MPI(MPI_Win_unlock(rank, win));
    CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
    free(mine);
    free(totals);
}

/* Even ranks write pairs under exclusive locks, odd ranks read them under
 * shared locks, rank 1 also under lock_all. */
static void readers_and_writers(MPI_Win win, int64_t * mem, int rounds)
{
    long torn = 0, writes = 0;
    unsigned seed = 99u + (unsigned) rank;

    CHECK_MPI(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, rank, 0, win));
    mem[0] = mem[1] = 0;
    CHECK_MPI(MPI_Win_unlock(rank, win));
    CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));

    for (int i = 0; i < rounds; i++) {
        int target = rand_r(&seed) % nprocs;
        int64_t pair[2] = { -1, -2 };
        if (rank % 2 == 0) {
            CHECK_MPI(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, target, 0, win));
            CHECK_MPI(MPI_Get(pair, 2, MPI_INT64_T, target, 0, 2, MPI_INT64_T, win));
            CHECK_MPI(MPI_Win_flush(target, win));
            pair[0]++;
            CHECK_MPI(MPI_Put(&pair[0], 1, MPI_INT64_T, target, 0, 1, MPI_INT64_T, win));
            CHECK_MPI(MPI_Win_flush(target, win));      /* half done, visible */
            pair[1]++;
            CHECK_MPI(MPI_Put(&pair[1], 1, MPI_INT64_T, target, 1, 1, MPI_INT64_T, win));
            CHECK_MPI(MPI_Win_unlock(target, win));
            writes++;
        } else if (rank == 1 && i % 2) {
            CHECK_MPI(MPI_Win_lock_all(0, win));
            CHECK_MPI(MPI_Get(pair, 2, MPI_INT64_T, target, 0, 2, MPI_INT64_T, win));
            CHECK_MPI(MPI_Win_unlock_all(win));
            torn += pair[0] != pair[1];
        } else {
            CHECK_MPI(MPI_Win_lock(MPI_LOCK_SHARED, target, 0, win));
            CHECK_MPI(MPI_Get(pair, 2, MPI_INT64_T, target, 0, 2, MPI_INT64_T, win));
            CHECK_MPI(MPI_Win_unlock(target, win));
            torn += pair[0] != pair[1];
        }
    }
    CHECK(torn == 0, "readers saw %ld half-done writes", torn);
    long all_writes = 0;
    CHECK_MPI(MPI_Allreduce(&writes, &all_writes, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD));
    int64_t here[2];
    CHECK_MPI(MPI_Win_lock(MPI_LOCK_SHARED, rank, 0, win));
    here[0] = mem[0];
    here[1] = mem[1];
    CHECK_MPI(MPI_Win_unlock(rank, win));
    int64_t sum = 0;
    CHECK_MPI(MPI_Allreduce(&here[0], &sum, 1, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD));
    CHECK(here[0] == here[1], "pair at rank %d ends %lld/%lld", rank, (long long) here[0],
          (long long) here[1]);
    CHECK(sum == all_writes, "pairs add up to %lld, %ld writes", (long long) sum, all_writes);
    CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
}

int main(int argc, char **argv)
{
    int64_t *mem;
    MPI_Win win;
    char peers[16];
    int rounds;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    rounds = nprocs <= 2 ? 2000 : 500;

    win = make_win(&mem, true);
    snprintf(peers, sizeof(peers), "%d", expected_mailbox_peers(MPI_COMM_WORLD));
    check_win_info(win, "mpich_nbrma_mailbox_peers", peers, "words");
    exclusive_counters(win, mem, rounds, "lock words");
    readers_and_writers(win, mem, rounds);
    CHECK_MPI(MPI_Win_free(&win));

    /* rank 0 without a mailbox: its locks, and those toward it, by message */
    win = make_win(&mem, rank != 0);
    exclusive_counters(win, mem, rounds, "words and messages");
    CHECK_MPI(MPI_Win_free(&win));

    return report_and_finalize();
}
