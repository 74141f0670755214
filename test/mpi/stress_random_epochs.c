/*
 * Stress: random mixes of every epoch kind, blocking and nonblocking, on one
 * engine window, with every accumulate checked at its target.
 *
 * All ranks draw from the same seeded generator, so each knows what every
 * rank does in each round and what each window must hold. A round is one
 * epoch kind: fence, PSCW on a ring, exclusive or shared lock toward a drawn
 * target, lock_all with flushes in between. Each rank draws on its own
 * whether it uses the blocking call or its MPIX_Win_i* twin (mixing them in
 * one epoch is legal with this engine), and a nonblocking passive epoch may
 * stay incomplete into the next round, so that later epochs queue behind it.
 * Every accumulate adds a value derived from (round, origin, target) to the
 * origin's slot in the target's window; every CHECK_EVERY rounds all
 * requests are completed, the ranks meet, and each checks its own window
 * against the expected sums exactly.
 *
 *   stress_random_epochs [rounds] [seconds] [seed]
 * Stops after `rounds` rounds or, if seconds > 0, after that many seconds
 * (the soak: scripts/soak.sh); prints the seed so a failure can be replayed.
 * A round whose blocking calls do not return within ROUND_LIMIT fails with
 * the round, its kind and the stack of each rank that waits (watchdog_arm).
 */
#include <stdint.h>
#include "nbrma_test.h"

#define CHECK_EVERY 8
#define MAX_PROCS 16
#define WAIT_LIMIT 60.0
#define ROUND_LIMIT 90          /* s; beyond WAIT_LIMIT, whose message says more */

enum { FENCE, PSCW_RING, LOCK_EXCLUSIVE, LOCK_SHARED, LOCK_ALL_FLUSH, N_KINDS };
static const char *const kind_names[N_KINDS] = {
    "fence", "pscw ring", "exclusive lock", "shared lock", "lock_all + flush_all"
};

static uint64_t rng_state;
static uint64_t draw(void)
{                               /* splitmix64: the same sequence on every rank */
    uint64_t z = (rng_state += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

static int rank, nprocs;
static MPI_Win win;
static int64_t *slots;          /* my window: slot[o] is what origin o added */
static int64_t expected[MAX_PROCS][MAX_PROCS];  /* [target][origin] */
static MPI_Request pending[4 * MAX_PROCS];      /* nonblocking calls not yet waited */
static int n_pending;

static int64_t value_of(long round, int origin, int target)
{
    return (round * 7 + origin * 3 + target) % 1000 + 1;
}

/* Origin `o` adds its value to target `t` (every rank runs this for every
 * origin to keep `expected`; only `o` itself issues the accumulate). */
static void add(long round, int o, int t)
{
    int64_t v = value_of(round, o, t);
    expected[t][o] += v;
    if (o == rank) {
        static int64_t values[1 << 12];
        static int next;
        /* the origin buffer must stay untouched until the epoch completes:
         * a ring of buffers larger than what can be pending */
        int64_t *buf = &values[next++ % (1 << 12)];
        *buf = v;
        CHECK_MPI(MPI_Accumulate(buf, 1, MPI_INT64_T, t, o, 1, MPI_INT64_T, MPI_SUM, win));
    }
}

static void keep(MPI_Request req)
{
    pending[n_pending++] = req;
}

static void wait_pending(const char *what)
{
    wait_all_or_abort(n_pending, pending, WAIT_LIMIT, what);
    n_pending = 0;
}

static void fence_round(long round, const int *nonblocking)
{
    MPI_Request r;
    if (nonblocking[rank]) {
        CHECK_MPI(MPIX_Win_ifence(0, win, &r));
        keep(r);
    } else
        CHECK_MPI(MPI_Win_fence(0, win));
    for (int o = 0; o < nprocs; o++)
        for (int t = 0; t < nprocs; t++)
            add(round, o, t);
    if (nonblocking[rank]) {
        CHECK_MPI(MPIX_Win_ifence(0, win, &r));
        keep(r);
    } else
        CHECK_MPI(MPI_Win_fence(0, win));
}

static void pscw_round(long round, const int *nonblocking)
{
    MPI_Group world, left_g, right_g;
    int left = (rank + nprocs - 1) % nprocs, right = (rank + 1) % nprocs;
    MPI_Request r;

    MPI_Comm_group(MPI_COMM_WORLD, &world);
    MPI_Group_incl(world, 1, &left, &left_g);
    MPI_Group_incl(world, 1, &right, &right_g);
    if (nonblocking[rank]) {
        CHECK_MPI(MPIX_Win_ipost(left_g, 0, win, &r));
        keep(r);
        CHECK_MPI(MPIX_Win_istart(right_g, 0, win, &r));
        keep(r);
    } else {
        CHECK_MPI(MPI_Win_post(left_g, 0, win));
        CHECK_MPI(MPI_Win_start(right_g, 0, win));
    }
    for (int o = 0; o < nprocs; o++)
        add(round, o, (o + 1) % nprocs);
    if (nonblocking[rank]) {
        CHECK_MPI(MPIX_Win_icomplete(win, &r));
        keep(r);
        CHECK_MPI(MPIX_Win_iwait(win, &r));
        keep(r);
    } else {
        CHECK_MPI(MPI_Win_complete(win));
        CHECK_MPI(MPI_Win_wait(win));
    }
    MPI_Group_free(&left_g);
    MPI_Group_free(&right_g);
    MPI_Group_free(&world);
}

static void lock_round(long round, const int *nonblocking, const int *target, int type)
{
    MPI_Request r;
    int t = target[rank];
    if (nonblocking[rank]) {
        CHECK_MPI(MPIX_Win_ilock(type, t, 0, win, &r));
        keep(r);
    } else
        CHECK_MPI(MPI_Win_lock(type, t, 0, win));
    for (int o = 0; o < nprocs; o++)
        add(round, o, target[o]);
    if (nonblocking[rank]) {
        CHECK_MPI(MPIX_Win_iunlock(t, win, &r));
        keep(r);
    } else
        CHECK_MPI(MPI_Win_unlock(t, win));
}

static void lock_all_round(long round, const int *nonblocking)
{
    MPI_Request r;
    if (nonblocking[rank]) {
        CHECK_MPI(MPIX_Win_ilock_all(0, win, &r));
        keep(r);
    } else
        CHECK_MPI(MPI_Win_lock_all(0, win));
    for (int o = 0; o < nprocs; o++)
        add(round, o, (o + 1) % nprocs);
    if (nonblocking[rank]) {
        CHECK_MPI(MPIX_Win_iflush_all(win, &r));
        keep(r);
    } else
        CHECK_MPI(MPI_Win_flush_all(win));
    for (int o = 0; o < nprocs; o++)
        add(round, o, (o + 2) % nprocs);
    if (nonblocking[rank]) {
        CHECK_MPI(MPIX_Win_iunlock_all(win, &r));
        keep(r);
    } else
        CHECK_MPI(MPI_Win_unlock_all(win));
}

static void check_window(long round)
{
    wait_pending("the epochs of the last rounds");
    CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
    CHECK_MPI(MPI_Win_lock(MPI_LOCK_SHARED, rank, 0, win));
    for (int o = 0; o < nprocs; o++)
        CHECK(slots[o] == expected[rank][o], "after round %ld: slot of origin %d holds %ld, "
              "expected %ld", round, o, (long) slots[o], (long) expected[rank][o]);
    CHECK_MPI(MPI_Win_unlock(rank, win));
    CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
}

int main(int argc, char **argv)
{
    long rounds = argc > 1 ? atol(argv[1]) : 400;
    double seconds = argc > 2 ? atof(argv[2]) : 0;
    uint64_t seed = argc > 3 ? strtoull(argv[3], NULL, 0) : 20261124;
    long counts[N_KINDS] = { 0 }, nonblocking_calls = 0, round;
    int kind_since_sync = -1;   /* 1 active, 0 passive, -1 none since the ranks met */

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    if (nprocs > MAX_PROCS)
        MPI_Abort(MPI_COMM_WORLD, 1);
    CHECK_MPI(allocate_engine_win(SMALL_WIN_BYTES, sizeof(int64_t), MPI_COMM_WORLD, &slots, &win));
    for (int o = 0; o < nprocs; o++)
        slots[o] = 0;
    rng_state = seed;
    CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
    double t0 = MPI_Wtime();

    for (round = 0; seconds > 0 || round < rounds; round++) {
        int kind = (int) (draw() % N_KINDS);
        int nonblocking[MAX_PROCS], target[MAX_PROCS];
        for (int r = 0; r < nprocs; r++) {
            nonblocking[r] = (int) (draw() % 2);
            target[r] = (int) (draw() % nprocs);
            nonblocking_calls += nonblocking[r] && r == rank;
        }
        counts[kind]++;
        /* MPI forbids a window locked and exposed at once (MPI-3.1 11.5.3:
         * erroneous to lock a target that called MPI_Win_post and not yet
         * MPI_Win_wait, and to call MPI_Win_post while the window is locked),
         * and a fence exposes it too. A lock epoch of an earlier round may
         * still be on its way to a rank that already posts or fences, and a
         * rank that went on to a lock round may lock a window whose owner
         * has yet to post in the last one: a rank blocked in its unlock or
         * flush then waits for a rank blocked in its complete, which waits
         * for a post that the lock holds back. So the epochs of one kind end
         * everywhere before a round of the other kind. */
        int active = kind == FENCE || kind == PSCW_RING;
        if (kind_since_sync >= 0 && kind_since_sync != active) {
            wait_pending(active ? "the passive epochs before an active round"
                         : "the active epochs before a passive round");
            CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
        }
        kind_since_sync = active;
        watchdog_arm(ROUND_LIMIT, "rank %d, seed %llu, round %ld: %s, %s calls, target %d, %d "
                     "requests pending", rank, (unsigned long long) seed, round, kind_names[kind],
                     nonblocking[rank] ? "nonblocking" : "blocking", target[rank], n_pending);
        switch (kind) {
            case FENCE:
                fence_round(round, nonblocking);
                break;
            case PSCW_RING:
                pscw_round(round, nonblocking);
                break;
            case LOCK_EXCLUSIVE:
                lock_round(round, nonblocking, target, MPI_LOCK_EXCLUSIVE);
                break;
            case LOCK_SHARED:
                lock_round(round, nonblocking, target, MPI_LOCK_SHARED);
                break;
            default:
                lock_all_round(round, nonblocking);
        }
        /* half the time the round's nonblocking calls stay incomplete into
         * the next round, whose epochs then queue behind them */
        if ((draw() % 2) == 0 || n_pending > 2 * MAX_PROCS)
            wait_pending("a round's epochs");
        if ((round + 1) % CHECK_EVERY == 0) {
            watchdog_arm(ROUND_LIMIT, "rank %d, seed %llu: the check after round %ld", rank,
                         (unsigned long long) seed, round);
            check_window(round);
            kind_since_sync = -1;
            if (seconds > 0) {
                int stop = MPI_Wtime() - t0 > seconds;
                MPI_Bcast(&stop, 1, MPI_INT, 0, MPI_COMM_WORLD);
                if (stop) {
                    round++;
                    break;
                }
            }
        }
    }
    watchdog_arm(ROUND_LIMIT, "rank %d, seed %llu: the last check and MPI_Win_free", rank,
                 (unsigned long long) seed);
    check_window(round);
    if (rank == 0)
        printf("seed %llu: %ld rounds in %.1f s (fence %ld, pscw %ld, exclusive %ld, shared "
               "%ld, lock_all %ld); rank 0 used the nonblocking call in %ld rounds\n",
               (unsigned long long) seed, round, MPI_Wtime() - t0, counts[FENCE],
               counts[PSCW_RING], counts[LOCK_EXCLUSIVE], counts[LOCK_SHARED],
               counts[LOCK_ALL_FLUSH], nonblocking_calls);
    CHECK_MPI(MPI_Win_free(&win));
    watchdog_disarm();
    return report_and_finalize();
}
