/*
 * Whole lock epochs: a lock epoch that the application closed (MPIX_Win_iunlock)
 * while it waited behind an earlier epoch travels with its lock request, and
 * the target performs its puts and accumulates when it grants the lock.
 *
 * Checked at the targets: exclusive-lock counters updated by every rank through
 * many pending epochs toward random targets (itself included) end exact, puts
 * of several types and accumulates with MPI_SUM, MPI_MAX and MPI_REPLACE land
 * at the right displacement (windows with a displacement unit other than 1),
 * shared-lock accumulates from every rank add up, epochs on a dynamic window
 * land in the attached blocks, and epochs with a get (not packed) still
 * deliver their result. MPI_Win_get_info tells that whole epochs
 * were sent, and that none are once the info key turns them off. The windows
 * have no mailboxes: with them, locks toward peers on this host are taken in
 * their lock words (lock_words.c tests those) and no epoch travels whole.
 */
#include "nbrma_test.h"
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#define SLOTS 64
#define PENDING 16

static int rank, nprocs;
/* Rounds per test. */
static int rounds;

/* Whole epochs travel with lock requests, which are messages only toward
 * peers whose lock word this process does not reach (another host, tcp):
 * these windows have no mailboxes, so that every peer is such a peer. */
static int allocate_by_message(MPI_Aint size, int disp_unit, void *base, MPI_Win * win,
                               bool native_atomics)
{
    MPI_Info info = engine_info();
    MPI_Info_set(info, "mpich_nbrma_mailboxes", "false");
    MPI_Info_set(info, "mpich_nbrma_native_atomics", native_atomics ? "true" : "false");
    int rc = MPI_Win_allocate(size, disp_unit, info, MPI_COMM_WORLD, base, win);
    MPI_Info_free(&info);
    return rc;
}

/* Integer MPI_SUM and MPI_REPLACE accumulates would be UCX atomics on windows
 * of UCX memory, which whole epochs carry under exclusive locks only (the
 * target would apply them next to other origins' atomics): these windows keep
 * them active messages, so that shared epochs travel whole too. */
static int allocate_whole_epoch_win(MPI_Aint size, int disp_unit, void *base, MPI_Win * win)
{
    return allocate_by_message(size, disp_unit, base, win, false);
}

static long whole_epochs_sent(MPI_Win win)
{
    char value[MPI_MAX_INFO_VAL + 1];
    if (!win_info_value(win, "mpich_nbrma_whole_lock_epochs_sent", value))
        return -1;
    return atol(value);
}

/* The unlocks still pending, oldest first: at most PENDING epochs are
 * pending at once, as in an application that bounds its outstanding work. */
typedef struct {
    MPI_Request req[PENDING];
    int n, oldest;
} pending_unlocks_t;

static void wait_oldest(pending_unlocks_t * p)
{
    wait_or_abort(&p->req[p->oldest], 60.0, "an unlock");
    p->oldest = (p->oldest + 1) % PENDING;
    p->n--;
}

static void wait_all_unlocks(pending_unlocks_t * p)
{
    while (p->n > 0)
        wait_oldest(p);
}

/* Opens a lock epoch toward `target` (its request needs no wait: opening
 * calls complete at once), waiting for the oldest unlock first if PENDING are
 * outstanding. */
static void open_epoch(pending_unlocks_t * p, int lock_type, int target, MPI_Win win)
{
    MPI_Request lock;
    if (p->n == PENDING)
        wait_oldest(p);
    CHECK_MPI(MPIX_Win_ilock(lock_type, target, 0, win, &lock));
    CHECK_MPI(MPI_Request_free(&lock));
}

static void close_epoch(pending_unlocks_t * p, int target, MPI_Win win)
{
    CHECK_MPI(MPIX_Win_iunlock(target, win, &p->req[(p->oldest + p->n) % PENDING]));
    p->n++;
}

/* Every rank increments random slots of random targets, each increment in its
 * own exclusive epoch (every third one in a shared epoch if `mix_shared`), up
 * to PENDING epochs pending; returns the count sent whole by this rank. */
static long random_exclusive_increments(MPI_Win win, long *base, int transactions,
                                        bool mix_shared, const MPI_Aint * addrs)
{
    pending_unlocks_t pending = { .n = 0 };
    long *sent_to = calloc((size_t) nprocs * SLOTS, sizeof(long));
    long *expect = calloc((size_t) nprocs * SLOTS, sizeof(long));
    unsigned seed = 977u * (unsigned) rank + 13u;
    long one = 1;

    memset(base, 0, SLOTS * sizeof(long));
    MPI_Barrier(MPI_COMM_WORLD);
    for (int i = 0; i < transactions; i++) {
        int target = (int) (rand_r(&seed) % (unsigned) nprocs);
        int slot = (int) (rand_r(&seed) % SLOTS);
        open_epoch(&pending, mix_shared && i % 3 == 0 ? MPI_LOCK_SHARED : MPI_LOCK_EXCLUSIVE,
                   target, win);
        /* a dynamic window's displacement is the address in the target's block */
        MPI_Aint disp = addrs ? addrs[target] + slot * (MPI_Aint) sizeof(long) : slot;
        CHECK_MPI(MPI_Accumulate(&one, 1, MPI_LONG, target, disp, 1, MPI_LONG, MPI_SUM, win));
        close_epoch(&pending, target, win);
        sent_to[target * SLOTS + slot]++;
    }
    wait_all_unlocks(&pending);
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK_MPI(MPI_Allreduce(sent_to, expect, nprocs * SLOTS, MPI_LONG, MPI_SUM, MPI_COMM_WORLD));
    CHECK_MPI(MPI_Win_lock(MPI_LOCK_SHARED, rank, 0, win));
    for (int s = 0; s < SLOTS; s++)
        CHECK(base[s] == expect[rank * SLOTS + s], "slot %d holds %ld, %ld increments were sent",
              s, base[s], expect[rank * SLOTS + s]);
    CHECK_MPI(MPI_Win_unlock(rank, win));
    free(sent_to);
    free(expect);
    return whole_epochs_sent(win);
}

static void test_exclusive_counters(void)
{
    long *base;
    MPI_Win win;
    long sent;

    CHECK_MPI(allocate_whole_epoch_win(SMALL_WIN_BYTES, sizeof(long), &base, &win));
    sent = random_exclusive_increments(win, base, 6 * rounds, false, NULL);
    CHECK(sent > 0, "no lock epoch was sent whole (%ld)", sent);
    CHECK_MPI(MPI_Win_free(&win));
}

/* On a dynamic window: the epochs carry the targets' addresses, and each
 * target performs them in the block it attached. */
static void test_dynamic_counters(void)
{
    long *base = calloc(SLOTS, sizeof(long));
    MPI_Aint mine, *addrs = malloc(nprocs * sizeof(MPI_Aint));
    MPI_Info info = engine_info();
    MPI_Win win;
    long sent;

    MPI_Info_set(info, "mpich_nbrma_mailboxes", "false");
    CHECK_MPI(MPI_Win_create_dynamic(info, MPI_COMM_WORLD, &win));
    MPI_Info_free(&info);
    CHECK_MPI(MPI_Win_attach(win, base, SLOTS * sizeof(long)));
    CHECK_MPI(MPI_Get_address(base, &mine));
    CHECK_MPI(MPI_Allgather(&mine, 1, MPI_AINT, addrs, 1, MPI_AINT, MPI_COMM_WORLD));
    check_win_info(win, "mpich_nbrma_whole_lock_epochs", "true", "dynamic window");
    sent = random_exclusive_increments(win, base, 6 * rounds, false, addrs);
    CHECK(sent > 0, "dynamic window: no lock epoch was sent whole (%ld)", sent);
    CHECK_MPI(MPI_Win_detach(win, base));
    CHECK_MPI(MPI_Win_free(&win));
    free(addrs);
    free(base);
}

/* With native atomics: exclusive epochs carry the integer accumulates whole
 * and the target applies them with plain stores, while shared epochs of the
 * other ranks send theirs as UCX atomics to the same slots; the lock keeps
 * the two apart, so no increment may be lost. */
static void test_exclusive_counters_native(void)
{
    long *base;
    MPI_Win win;
    long sent;

    CHECK_MPI(allocate_by_message(SMALL_WIN_BYTES, sizeof(long), &base, &win, true));
    check_win_info(win, "mpich_nbrma_native_atomics", "true", "native atomics by default");
    sent = random_exclusive_increments(win, base, 6 * rounds, true, NULL);
    CHECK(sent > 0, "no exclusive lock epoch was sent whole (%ld)", sent);
    CHECK_MPI(MPI_Win_free(&win));
}

/* A chain of epochs toward the right neighbour, each closed before it can
 * activate: puts of several types and accumulates with three operations,
 * displacement unit 8. */
static void test_types_and_ops(void)
{
    struct layout {
        long counter;           /* disp 0: MPI_SUM of 1 per epoch */
        long maximum;           /* disp 1: MPI_MAX of the epoch number */
        long replaced;          /* disp 2: MPI_REPLACE of the epoch number */
        double dbl[2];          /* disp 3-4: put of two doubles */
        char bytes[8];          /* disp 5: put of 8 bytes */
        int ints[2];            /* disp 6: put of two ints */
    } *base;
    MPI_Win win;
    pending_unlocks_t pending = { .n = 0 };
    const int epochs = rounds, right = (rank + 1) % nprocs, left = (rank + nprocs - 1) % nprocs;
    long one = 1, *numbers = malloc(epochs * sizeof(long));
    int (*ints)[2] = malloc(epochs * sizeof(*ints));    /* an epoch's buffer is
                                                         * its own until the unlock completes */
    double dbl[2] = { 0.5, -2.25 };
    char bytes[8] = "abcdefg";

    CHECK_MPI(allocate_whole_epoch_win(SMALL_WIN_BYTES, 8, &base, &win));
    memset(base, 0, sizeof(*base));
    MPI_Barrier(MPI_COMM_WORLD);
    for (int i = 0; i < epochs; i++) {
        numbers[i] = (i * 37) % epochs;
        ints[i][0] = rank;
        ints[i][1] = i;
        open_epoch(&pending, MPI_LOCK_EXCLUSIVE, right, win);
        CHECK_MPI(MPI_Accumulate(&one, 1, MPI_LONG, right, 0, 1, MPI_LONG, MPI_SUM, win));
        CHECK_MPI(MPI_Accumulate(&numbers[i], 1, MPI_LONG, right, 1, 1, MPI_LONG, MPI_MAX, win));
        CHECK_MPI(MPI_Accumulate(&numbers[i], 1, MPI_LONG, right, 2, 1, MPI_LONG, MPI_REPLACE,
                                 win));
        CHECK_MPI(MPI_Put(dbl, 2, MPI_DOUBLE, right, 3, 2, MPI_DOUBLE, win));
        CHECK_MPI(MPI_Put(bytes, 8, MPI_CHAR, right, 5, 8, MPI_CHAR, win));
        CHECK_MPI(MPI_Put(ints[i], 2, MPI_INT, right, 6, 2, MPI_INT, win));
        close_epoch(&pending, right, win);
    }
    wait_all_unlocks(&pending);
    CHECK(whole_epochs_sent(win) > 0, "no lock epoch was sent whole");
    MPI_Barrier(MPI_COMM_WORLD);

    CHECK_MPI(MPI_Win_lock(MPI_LOCK_SHARED, rank, 0, win));
    CHECK(base->counter == epochs, "counter %ld, expected %d", base->counter, epochs);
    CHECK(base->maximum == epochs - 1, "maximum %ld, expected %d", base->maximum, epochs - 1);
    CHECK(base->replaced == numbers[epochs - 1], "replaced %ld, expected the last epoch's %ld",
          base->replaced, numbers[epochs - 1]);
    CHECK(base->dbl[0] == 0.5 && base->dbl[1] == -2.25, "doubles %g %g", base->dbl[0],
          base->dbl[1]);
    CHECK(memcmp(base->bytes, "abcdefg", 8) == 0, "bytes '%.8s'", base->bytes);
    CHECK(base->ints[0] == left && base->ints[1] == epochs - 1, "ints %d %d, expected %d %d",
          base->ints[0], base->ints[1], left, epochs - 1);
    CHECK_MPI(MPI_Win_unlock(rank, win));
    CHECK_MPI(MPI_Win_free(&win));
    free(numbers);
    free(ints);
}

/* Every rank adds to rank 0 under shared locks, pending epochs; also epochs
 * with a get, which keep the lock protocol, read what an earlier epoch of the
 * same origin wrote. */
static void test_shared_and_gets(void)
{
    long *base;
    MPI_Win win;
    pending_unlocks_t pending = { .n = 0 };
    const int epochs = rounds;
    long one = 1, *got = malloc(epochs * sizeof(long));

    CHECK_MPI(allocate_whole_epoch_win(SMALL_WIN_BYTES, sizeof(long), &base, &win));
    memset(base, 0, SMALL_WIN_BYTES);
    MPI_Barrier(MPI_COMM_WORLD);
    for (int i = 0; i < epochs; i++) {
        open_epoch(&pending, MPI_LOCK_SHARED, 0, win);
        CHECK_MPI(MPI_Accumulate(&one, 1, MPI_LONG, 0, 0, 1, MPI_LONG, MPI_SUM, win));
        close_epoch(&pending, 0, win);
    }
    /* my own slot 1 + rank: write i in one epoch, read it back in the next */
    for (int i = 0; i < epochs; i += 2) {
        long value = i;
        open_epoch(&pending, MPI_LOCK_EXCLUSIVE, 0, win);
        CHECK_MPI(MPI_Accumulate(&value, 1, MPI_LONG, 0, 1 + rank, 1, MPI_LONG, MPI_REPLACE,
                                 win));
        close_epoch(&pending, 0, win);
        open_epoch(&pending, MPI_LOCK_EXCLUSIVE, 0, win);
        CHECK_MPI(MPI_Get(&got[i], 1, MPI_LONG, 0, 1 + rank, 1, MPI_LONG, win));
        close_epoch(&pending, 0, win);
        wait_all_unlocks(&pending);     /* value is reused */
    }
    wait_all_unlocks(&pending);
    for (int i = 0; i < epochs; i += 2)
        CHECK(got[i] == i, "the get of epoch %d read %ld", i, got[i]);
    {
        /* rank 0's epochs toward itself may complete before the next opens */
        long mine = whole_epochs_sent(win), all = 0;
        CHECK_MPI(MPI_Allreduce(&mine, &all, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD));
        CHECK(all > 0, "no lock epoch was sent whole");
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) {
        CHECK_MPI(MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win));
        CHECK(base[0] == (long) epochs * nprocs, "shared sum %ld, expected %ld", base[0],
              (long) epochs * nprocs);
        CHECK_MPI(MPI_Win_unlock(0, win));
    }
    CHECK_MPI(MPI_Win_free(&win));
    free(got);
}

/* The info key turns whole epochs off (and MPI_Win_get_info says so); the
 * counters stay exact through the lock protocol. */
static void test_switched_off(void)
{
    long *base;
    MPI_Win win;
    MPI_Info off;

    CHECK_MPI(allocate_whole_epoch_win(SMALL_WIN_BYTES, sizeof(long), &base, &win));
    check_win_info(win, "mpich_nbrma_whole_lock_epochs", "true", "default window");
    MPI_Info_create(&off);
    MPI_Info_set(off, "mpich_nbrma_whole_lock_epochs", "false");
    CHECK_MPI(MPI_Win_set_info(win, off));
    MPI_Info_free(&off);
    check_win_info(win, "mpich_nbrma_whole_lock_epochs", "false", "key turned off");
    CHECK(random_exclusive_increments(win, base, 2 * rounds, false, NULL) == 0,
          "lock epochs were sent whole although the info key turned that off");
    CHECK_MPI(MPI_Win_free(&win));
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    rounds = 500;
    test_exclusive_counters();
    test_exclusive_counters_native();
    test_dynamic_counters();
    test_types_and_ops();
    test_shared_and_gets();
    test_switched_off();
    return report_and_finalize();
}
