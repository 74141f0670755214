/*
 * Notified RMA whose origin computes without calling MPI right after its
 * notifying calls: where UCX reaches the target's memory with this CPU
 * (shared memory, cross-memory attach), the counter increment follows the
 * data at once (the core's rule R6), so the target's counters move while the
 * origin still computes.
 *
 * Rank 0 is the silent origin, every other rank a target, on an
 * MPI_Win_allocate and an MPI_Win_create window with 2 counters each. In a
 * lock_all epoch granted beforehand, rank 0 issues toward each target an
 * 8-byte MPIX_Put_notify and a 64 KiB one (counter 0) and an MPIX_Get_notify
 * of a word the target set (counter 1), then sleeps outside MPI and writes 1
 * into an "awake" word of its own memory in a third window. Each target waits
 * (time-limited) until counter 0 reaches 2 and counter 1 reaches 1, checks
 * every word of the data, overwrites the word read (the get must have
 * returned the old value: rank 0 checks after its flush), and reads the awake
 * word with MPI_Get + flush: it must still be 0. Not judged by time: a
 * counter that waited for the origin's next MPI call is seen only after the
 * origin wrote 1. Over tcp only (no UCX lane of this CPU's), a put's or
 * get's increment travels inside the operation's own active message (rule
 * R7, patches 0037 and 0038): the target applies a put's after the data and a
 * get's once it sent the reply, both without the origin. There the awake word
 * cannot be read without the origin, so the target checks that counters 0 and
 * 1 moved within half the origin's sleep after the barrier (the 8-byte put
 * went whole in its message; without R7 a counter moves only once the origin
 * wakes: the get's did so before patch 0038), and then the data and the
 * counts.
 *
 * Without the origin's copies (MPIR_CVAR_NBRMA_CROSS_MEMORY_RMA=0) the
 * window over malloc'ed memory has UCX emulate its puts and gets with
 * messages: the increments then wait for the operations' completion, and
 * the target checks the data and the counts only (an increment that rode
 * ahead of such a put announced data not yet there).
 *
 * Argument: "tcp" (UCX over tcp only).
 */
#include "nbrma_test.h"
#include <stdint.h>
#include <unistd.h>

#define LIMIT_S 30.0
#define SLEEP_S 2
enum { PUT_WORD, GET_WORD, BLOCK, BLOCK_WORDS = 8192, N_WORDS = BLOCK + BLOCK_WORDS };

static int rank, nprocs;
static int64_t *awake_mem;
static MPI_Win awake_win;

static void check_origin_asleep(const char *what)
{
    int64_t awake = -1;
    CHECK_MPI(MPI_Get(&awake, 1, MPI_INT64_T, 0, 0, 1, MPI_INT64_T, awake_win));
    CHECK_MPI(MPI_Win_flush(0, awake_win));
    CHECK(awake == 0, "%s: rank %d's counters waited for the origin's next MPI call", what, rank);
}

/* Whether the origin copies into this window with its own CPU (mapped memory
 * or cross-memory attach; the peers are symmetric on one host): without it
 * (MPIR_CVAR_NBRMA_CROSS_MEMORY_RMA=0 on a window over malloc) UCX emulates
 * the puts and gets with messages, and an increment must wait for their
 * completion, which the origin sees at its next MPI call; the data and the
 * counts are checked all the same. */
static int origin_copies(MPI_Win win)
{
    char peers[MPI_MAX_INFO_VAL + 1];

    CHECK(win_info_value(win, "mpich_nbrma_cross_memory_peers", peers), "no peers reported");
    return atoi(peers) > 0;
}

static int64_t put_value(int target)
{
    return 1000 + target;
}

static int64_t block_word(int target, int i)
{
    return (int64_t) i * 7 + target;
}

static int64_t get_value(int target)
{
    return 5000 + target;
}

static void round_on(MPI_Win win, int64_t * mem, const char *what)
{
    static int64_t block[BLOCK_WORDS];
    int64_t *got = NULL, put[64];
    MPI_Request req[2];

    for (int i = 0; i < N_WORDS; i++)
        mem[i] = 0;
    mem[GET_WORD] = rank ? get_value(rank) : 0;
    CHECK_MPI(MPIX_Win_create_notify(win, 2));
    CHECK_MPI(MPI_Win_lock_all(0, win));
    if (rank == 0) {    /* the epoch granted toward every target while in MPI */
        int64_t dummy;
        for (int t = 1; t < nprocs; t++)
            CHECK_MPI(MPI_Get(&dummy, 1, MPI_INT64_T, t, PUT_WORD, 1, MPI_INT64_T, win));
        CHECK_MPI(MPI_Win_flush_all(win));
    } else {
        CHECK_MPI(MPIX_Win_notify_request(win, 0, 2, &req[0]));
        CHECK_MPI(MPIX_Win_notify_request(win, 1, 1, &req[1]));
    }
    /* asleep from before the first notifying call: a target may read it
     * as soon as that call returned */
    if (rank == 0)
        __atomic_store_n(awake_mem, 0, __ATOMIC_SEQ_CST);
    CHECK_MPI(MPI_Win_sync(win));
    CHECK_MPI(MPI_Win_sync(awake_win));
    CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == 0) {
        got = calloc(nprocs, sizeof(*got));
        for (int t = 1; t < nprocs; t++) {
            put[t % 64] = put_value(t);
            for (int i = 0; i < BLOCK_WORDS; i++)
                block[i] = block_word(t, i);
            CHECK_MPI(MPIX_Put_notify(&put[t % 64], 1, MPI_INT64_T, t, PUT_WORD, 1, MPI_INT64_T,
                                      win, 0));
            CHECK_MPI(MPIX_Put_notify(block, BLOCK_WORDS, MPI_INT64_T, t, BLOCK, BLOCK_WORDS,
                                      MPI_INT64_T, win, 0));
            CHECK_MPI(MPIX_Get_notify(&got[t], 1, MPI_INT64_T, t, GET_WORD, 1, MPI_INT64_T, win,
                                      1));
            /* block is the next target's: complete locally before it changes */
            CHECK_MPI(MPI_Win_flush_local(t, win));
        }
        sleep(SLEEP_S);         /* no MPI call: no progress here */
        __atomic_store_n(awake_mem, 1, __ATOMIC_SEQ_CST);
        CHECK_MPI(MPI_Win_flush_all(win));
        for (int t = 1; t < nprocs; t++)
            CHECK(got[t] == get_value(t), "%s: the get from rank %d read %lld, not %lld", what,
                  t, (long long) got[t], (long long) get_value(t));
        free(got);
    } else {
        if (tcp_only()) {
            double since = MPI_Wtime();
            for (int idx = 0; idx < 2; idx++) {
                double waited;
                MPI_Count count = 0;
                while (count < 1 && MPI_Wtime() - since < LIMIT_S)
                    CHECK_MPI(MPIX_Win_get_notify(win, idx, &count));
                waited = MPI_Wtime() - since;
                CHECK(waited < SLEEP_S / 2.0, "%s: rank %d's counter %d (%s) moved after %.2f s: "
                      "the increment waited for the origin (asleep %d s)", what, rank, idx,
                      idx ? "get" : "put", waited, SLEEP_S);
            }
        }
        wait_all_or_abort(2, req, LIMIT_S, what);
        /* read: the target may change it now */
        __atomic_store_n(&mem[GET_WORD], -1, __ATOMIC_SEQ_CST);
        if (!tcp_only() && origin_copies(win))
            check_origin_asleep(what);
        CHECK(mem[PUT_WORD] == put_value(rank), "%s: rank %d holds %lld", what, rank,
              (long long) mem[PUT_WORD]);
        for (int i = 0; i < BLOCK_WORDS; i++)
            CHECK(mem[BLOCK + i] == block_word(rank, i), "%s: rank %d word %d holds %lld", what,
                  rank, i, (long long) mem[BLOCK + i]);
        MPI_Count count = -1;
        CHECK_MPI(MPIX_Win_get_notify(win, 0, &count));
        CHECK(count == 2, "%s: rank %d's counter 0 is %lld, not 2", what, rank, (long long) count);
    }
    CHECK_MPI(MPI_Win_unlock_all(win));
    CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
    CHECK_MPI(MPIX_Win_free_notify(win));
}

int main(int argc, char **argv)
{
    int64_t *mem, *created;
    MPI_Win win;

    use_tcp_only_if_asked(argc, argv);
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    if (nprocs < 2) {
        fprintf(stderr, "run with 2 or more processes\n");
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    CHECK_MPI(MPI_Win_allocate(sizeof(int64_t), sizeof(int64_t), MPI_INFO_NULL, MPI_COMM_WORLD,
                               &awake_mem, &awake_win));
    *awake_mem = 0;
    CHECK_MPI(MPI_Win_lock_all(0, awake_win));
    if (rank != 0) {    /* granted while rank 0 is in MPI */
        int64_t dummy;
        CHECK_MPI(MPI_Get(&dummy, 1, MPI_INT64_T, 0, 0, 1, MPI_INT64_T, awake_win));
        CHECK_MPI(MPI_Win_flush(0, awake_win));
    }

    CHECK_MPI(MPI_Win_allocate(N_WORDS * sizeof(int64_t), sizeof(int64_t), MPI_INFO_NULL,
                               MPI_COMM_WORLD, &mem, &win));
    round_on(win, mem, "allocate");
    CHECK_MPI(MPI_Win_free(&win));

    created = malloc(N_WORDS * sizeof(int64_t));
    CHECK(created != NULL, "no memory");
    CHECK_MPI(MPI_Win_create(created, N_WORDS * sizeof(int64_t), sizeof(int64_t), MPI_INFO_NULL,
                             MPI_COMM_WORLD, &win));
    round_on(win, created, "create");
    CHECK_MPI(MPI_Win_free(&win));
    free(created);

    CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
    CHECK_MPI(MPI_Win_unlock_all(awake_win));
    CHECK_MPI(MPI_Win_free(&awake_win));
    return report_and_finalize();
}
