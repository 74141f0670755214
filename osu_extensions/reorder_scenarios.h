/*
 * The five reorder scenarios of the nonblocking-epochs paper (Zounmevo et al.,
 * SC14, section VIII-A-2, Figs. 7-11) and a sixth next to a fence epoch (the
 * paper's future work), shared by the benchmark
 * (osu_reorder_scenarios.c) and the MPI test (test/mpi/reorder_scenarios.c).
 *
 * In each scenario one rank is late by `delay_us` (it sleeps, so that 3-4 ranks
 * fit on 2 cores), one rank chains two epochs (the first one with the late
 * rank), and a third rank, the "victim", has its epoch with the second of
 * them. Without the reorder flag the chaining rank activates its epochs one
 * after the other, so the late rank's delay reaches the victim; with it the
 * second epoch progresses while the first one waits. Every epoch holds one
 * put of `size` bytes (the paper: 1 MB), which its target checks.
 *
 *   aaar_pscw  [0 origin O, 1 late target T0, 2 victim target T1]
 *              O: istart(T0) put icomplete; istart(T1) put icomplete.
 *   aaar_lock  [0 O0, 1 victim O1, 2 target T0, 3 target T1]
 *              O0 locks T0 exclusively, puts and flushes (so it holds the
 *              lock), then sleeps in its epoch; then O1 runs ilock(T0) put
 *              iunlock; ilock(T1) put iunlock.
 *              The chaining rank is also the measured one: its second epoch.
 *   aaer       [0 late origin P0, 1 victim target P1, 2 P2]
 *              P2: ipost(P0) iwait; istart(P1) put icomplete.
 *   eaer       [0 late origin O0, 1 victim origin O1, 2 target T]
 *              T: ipost(O0) iwait; ipost(O1) iwait.
 *   eaar       [0 late target P0, 1 victim origin P1, 2 P2]
 *              P2: istart(P0) put icomplete; ipost(P1) iwait.
 *   aaar_fence [0 origin O, 1 victim target T, 2 late rank L]; the paper's
 *              future work, rule F1 of the core README, under A_A_A_R and
 *              A_A_E_R together. All: MPI_Win_fence(NOPRECEDE), then a fence
 *              epoch: O puts into T, L (late) into O; ifence(NOSUCCEED).
 *              O then: ilock(T) put iunlock. Without the flags O's lock epoch
 *              waits for the fence's barrier, so for L; with them it goes as
 *              soon as T arrived at the fence. The victim is O's lock epoch.
 *
 * Times, from the end of a barrier that starts each round (each rank's own
 * clock): `victim` is when the victim's epoch completed, `chain` when both
 * epochs of the chaining rank completed (the paper's cumulative latency).
 * Needs the patched MPICH (MPIX_Win_i*).
 */
#ifndef REORDER_SCENARIOS_H_INCLUDED
#define REORDER_SCENARIOS_H_INCLUDED

#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

struct reorder_run;

/* One round of a scenario, at rank `me`: sets mine[0] at the victim (when its
 * epoch completed, us after t0) and mine[1] at the chaining rank (when both
 * of its epochs had); returns the wrong bytes this rank found as a target. */
typedef long (*reorder_round_fn) (struct reorder_run * r, int me, double t0, double mine[2]);

struct reorder_scenario {
    const char *name;
    const char *key;            /* the reorder flag the scenario is about */
    int nprocs;
    const char *victim_is;      /* what the victim time measures */
    reorder_round_fn round;
    const char *key2;           /* a second flag it needs too, or NULL */
    const char *keys_label;     /* how a table names the two (one word), or NULL */
};

/* What a scenario needs: its window (from reorder_window), the put's size,
 * the delay and a buffer of `size` bytes to put from. An MPI error aborts. */
struct reorder_run {
    const struct reorder_scenario *scenario;
    MPI_Win win;
    char *base;                 /* the window's memory, `size` bytes per origin slot */
    char *buf;
    int size;
    double delay_us;
    int round;                  /* makes each round's data distinct */
    MPI_Comm comm;              /* the scenario's ranks (extra ranks sit out) */
};

#define RS_CK(call) do { int rc_ = (call); if (rc_ != MPI_SUCCESS) {             \
            fprintf(stderr, "%s:%d: %s failed (%d)\n", __FILE__, __LINE__, #call, rc_); \
            MPI_Abort(MPI_COMM_WORLD, 2); } } while (0)

static double rs_now_us(void)
{
    return MPI_Wtime() * 1e6;
}

static void rs_sleep_us(double us)
{
    struct timespec pause = { (time_t) (us / 1e6), (long) (us * 1000.0) % 1000000000L };
    nanosleep(&pause, NULL);
}

/* A wait of a scenario: with a time limit (a hang aborts the run with a
 * message instead of stalling it), and either sleeping between tests (the
 * ranks that only serve, so that they leave the cores to the measured ones)
 * or spinning (the measured ranks). */
#define RS_WAIT_LIMIT_S 60.0

static void rs_wait_until(MPI_Request * req, int lazy, double give_up, const char *what)
{
    int flag = 0;
    for (;;) {
        RS_CK(MPI_Test(req, &flag, MPI_STATUS_IGNORE));
        if (flag)
            return;
        if (MPI_Wtime() > give_up) {
            fprintf(stderr, "reorder scenario: %s did not complete within %.0f s\n", what,
                    RS_WAIT_LIMIT_S);
            MPI_Abort(MPI_COMM_WORLD, 3);
        }
        if (lazy)
            rs_sleep_us(20);
    }
}

static void rs_wait(MPI_Request * req, int lazy, const char *what)
{
    rs_wait_until(req, lazy, MPI_Wtime() + RS_WAIT_LIMIT_S, what);
}

static void rs_lazy_wait(MPI_Request * req, const char *what)
{
    rs_wait(req, 1, what);
}

static void rs_spin_wait(MPI_Request * req, const char *what)
{
    rs_wait(req, 0, what);
}

static void rs_lazy_barrier(MPI_Comm comm)
{
    MPI_Request req;
    RS_CK(MPI_Ibarrier(comm, &req));
    rs_lazy_wait(&req, "a barrier");
}

static MPI_Group rs_group_of(MPI_Comm comm, int peer)
{
    MPI_Group world, g;
    RS_CK(MPI_Comm_group(comm, &world));
    RS_CK(MPI_Group_incl(world, 1, &peer, &g));
    RS_CK(MPI_Group_free(&world));
    return g;
}

/* The window of a scenario: 2 slots of `size` bytes (a target receives from at
 * most two origins in one round), under the nonblocking-epoch engine, with the
 * scenario's flag when `reorder` is set. Collective. */
static MPI_Win reorder_window(struct reorder_run *r, int reorder)
{
    MPI_Info info;
    MPI_Win win;
    RS_CK(MPI_Info_create(&info));
    RS_CK(MPI_Info_set(info, "mpich_nbrma_epochs", "true"));
    if (reorder)
        RS_CK(MPI_Info_set(info, r->scenario->key, "true"));
    if (reorder && r->scenario->key2)
        RS_CK(MPI_Info_set(info, r->scenario->key2, "true"));
    RS_CK(MPI_Win_allocate((MPI_Aint) r->size * 2, 1, info, r->comm, &r->base, &win));
    RS_CK(MPI_Info_free(&info));
    return win;
}

/* Fill byte of a put: distinct per round and origin, never 0 (the window is
 * cleared before every round). */
static char rs_pattern(int round, int origin)
{
    return (char) (1 + (round * 7 + origin) % 250);
}

static void rs_put(struct reorder_run *r, int target, int slot)
{
    int me;
    MPI_Comm_rank(r->comm, &me);
    memset(r->buf, rs_pattern(r->round, me), (size_t) r->size);
    RS_CK(MPI_Put(r->buf, r->size, MPI_BYTE, target, (MPI_Aint) slot * r->size, r->size,
                  MPI_BYTE, r->win));
}

/* Checks, at a target after its epoch, that `origin`'s put of this round is in
 * `slot`; returns the number of wrong bytes. */
static long rs_check_slot(const struct reorder_run *r, int slot, int origin)
{
    char want = rs_pattern(r->round, origin);
    long wrong = 0;
    for (int i = 0; i < r->size; i++)
        wrong += r->base[(size_t) slot * r->size + i] != want;
    return wrong;
}

static void rs_access(struct reorder_run *r, int target, int slot, MPI_Request * done)
{
    MPI_Group g = rs_group_of(r->comm, target);
    MPI_Request start;
    RS_CK(MPIX_Win_istart(g, 0, r->win, &start));
    RS_CK(MPI_Request_free(&start));
    rs_put(r, target, slot);
    RS_CK(MPIX_Win_icomplete(r->win, done));
    RS_CK(MPI_Group_free(&g));
}

static void rs_exposure(struct reorder_run *r, int origin, MPI_Request * done)
{
    MPI_Group g = rs_group_of(r->comm, origin);
    MPI_Request post;
    RS_CK(MPIX_Win_ipost(g, 0, r->win, &post));
    RS_CK(MPI_Request_free(&post));
    RS_CK(MPIX_Win_iwait(r->win, done));
    RS_CK(MPI_Group_free(&g));
}

static void rs_lock_epoch(struct reorder_run *r, int target, int slot, MPI_Request * done)
{
    MPI_Request lock;
    RS_CK(MPIX_Win_ilock(MPI_LOCK_EXCLUSIVE, target, 0, r->win, &lock));
    RS_CK(MPI_Request_free(&lock));
    rs_put(r, target, slot);
    RS_CK(MPIX_Win_iunlock(target, r->win, done));
}

/* Waits for the chaining rank's two epochs: *second_at is when the second
 * completed, the return value when both had. */
static double rs_wait_chain(MPI_Request reqs[2], double t0, double *second_at)
{
    /* the second first: its completion is stamped when it happens, and the
     * progress made meanwhile moves the first one too; one time limit for both */
    double give_up = MPI_Wtime() + RS_WAIT_LIMIT_S;
    rs_wait_until(&reqs[1], 0, give_up, "the chaining rank's second epoch");
    *second_at = rs_now_us() - t0;
    rs_wait_until(&reqs[0], 0, give_up, "the chaining rank's first epoch");
    return rs_now_us() - t0;
}

/* --- the roles ---------------------------------------------------------------- */

/* The late rank: sleeps, then opens and closes its epoch (one put toward
 * `peer` when it is the origin) and waits for it without holding a core. */
static void rs_late(struct reorder_run *r, int peer, int as_origin)
{
    MPI_Request done;
    rs_sleep_us(r->delay_us);
    if (as_origin)
        rs_access(r, peer, 0, &done);
    else
        rs_exposure(r, peer, &done);
    rs_lazy_wait(&done, "the late rank's epoch");
}

/* The victim: its epoch with `peer` (as origin, one put into `slot`);
 * returns when it completed, us after t0. */
static double rs_victim(struct reorder_run *r, int peer, int as_origin, int slot, double t0)
{
    MPI_Request done;
    if (as_origin)
        rs_access(r, peer, slot, &done);
    else
        rs_exposure(r, peer, &done);
    rs_spin_wait(&done, "the victim's epoch");
    return rs_now_us() - t0;
}

/* --- the scenarios (reorder_scenarios.h's header says who does what) ------------ */

static long round_aaar_pscw(struct reorder_run *r, int me, double t0, double mine[2])
{
    if (me == 0) {
        MPI_Request reqs[2];
        rs_access(r, 1, 0, &reqs[0]);
        rs_access(r, 2, 0, &reqs[1]);
        mine[1] = rs_wait_chain(reqs, t0, &(double) {0});
        return 0;
    }
    if (me == 1)
        rs_late(r, 0, 0);
    else
        mine[0] = rs_victim(r, 0, 0, 0, t0);
    return rs_check_slot(r, 0, 0);
}

static long round_aaar_lock(struct reorder_run *r, int me, double t0, double mine[2])
{
    MPI_Request have_lock;
    if (me == 0) {
        RS_CK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 2, 0, r->win));
        rs_put(r, 2, 0);
        /* MPI_Win_lock may return before the lock is granted (a lock that
         * goes as a message is asked for in the background, or lazily with
         * the epoch's operations): the put's completion at T0 says O0 holds
         * it. Notified right after MPI_Win_lock, O1's request raced O0's
         * across two hosts and won in some runs */
        RS_CK(MPI_Win_flush(2, r->win));
        RS_CK(MPI_Isend(NULL, 0, MPI_BYTE, 1, 0, r->comm, &have_lock));
        rs_sleep_us(r->delay_us);
        RS_CK(MPI_Win_unlock(2, r->win));
        rs_lazy_wait(&have_lock, "the lock notice");
    } else if (me == 1) {
        MPI_Request reqs[2];
        RS_CK(MPI_Irecv(NULL, 0, MPI_BYTE, 0, 0, r->comm, &have_lock));
        rs_lazy_wait(&have_lock, "the lock notice");
        t0 = rs_now_us();       /* O1's epochs start once O0 has the lock */
        rs_lock_epoch(r, 2, 1, &reqs[0]);
        rs_lock_epoch(r, 3, 0, &reqs[1]);
        mine[1] = rs_wait_chain(reqs, t0, &mine[0]);
    }
    rs_lazy_barrier(r->comm);   /* both origins are done with the targets */
    if (me == 2)
        return rs_check_slot(r, 0, 0) + rs_check_slot(r, 1, 1);
    return me == 3 ? rs_check_slot(r, 0, 1) : 0;
}

static long round_aaer(struct reorder_run *r, int me, double t0, double mine[2])
{
    if (me == 0) {
        rs_late(r, 2, 1);
        return 0;
    }
    if (me == 1) {
        mine[0] = rs_victim(r, 2, 0, 0, t0);
        return rs_check_slot(r, 0, 2);
    }
    MPI_Request reqs[2];
    rs_exposure(r, 0, &reqs[0]);
    rs_access(r, 1, 0, &reqs[1]);
    mine[1] = rs_wait_chain(reqs, t0, &(double) {0});
    return rs_check_slot(r, 0, 0);
}

static long round_eaer(struct reorder_run *r, int me, double t0, double mine[2])
{
    if (me == 0) {
        rs_late(r, 2, 1);
        return 0;
    }
    if (me == 1) {
        mine[0] = rs_victim(r, 2, 1, 1, t0);
        return 0;
    }
    MPI_Request reqs[2];
    rs_exposure(r, 0, &reqs[0]);
    rs_exposure(r, 1, &reqs[1]);
    mine[1] = rs_wait_chain(reqs, t0, &(double) {0});
    return rs_check_slot(r, 0, 0) + rs_check_slot(r, 1, 1);
}

static long round_eaar(struct reorder_run *r, int me, double t0, double mine[2])
{
    if (me == 0) {
        rs_late(r, 2, 0);
        return rs_check_slot(r, 0, 2);
    }
    if (me == 1) {
        mine[0] = rs_victim(r, 2, 1, 0, t0);
        return 0;
    }
    MPI_Request reqs[2];
    rs_access(r, 0, 0, &reqs[0]);
    rs_exposure(r, 1, &reqs[1]);
    mine[1] = rs_wait_chain(reqs, t0, &(double) {0});
    return rs_check_slot(r, 0, 1);
}

static long round_aaar_fence(struct reorder_run *r, int me, double t0, double mine[2])
{
    MPI_Request fence;
    long wrong = 0;
    RS_CK(MPI_Win_fence(MPI_MODE_NOPRECEDE, r->win));
    if (me == 0) {
        MPI_Request reqs[2];
        rs_put(r, 1, 1);        /* the fence epoch's operation, toward a ready rank */
        RS_CK(MPIX_Win_ifence(MPI_MODE_NOSUCCEED, r->win, &reqs[0]));
        rs_lock_epoch(r, 1, 0, &reqs[1]);
        mine[1] = rs_wait_chain(reqs, t0, &mine[0]);
        wrong = rs_check_slot(r, 1, 2);
    } else {
        if (me == 2) {
            rs_sleep_us(r->delay_us);
            rs_put(r, 0, 1);
        }
        RS_CK(MPIX_Win_ifence(MPI_MODE_NOSUCCEED, r->win, &fence));
        rs_lazy_wait(&fence, "the fence");
    }
    rs_lazy_barrier(r->comm);   /* O's lock epoch is done at T */
    if (me == 1)
        wrong = rs_check_slot(r, 1, 0) + rs_check_slot(r, 0, 0);
    return wrong;
}

static const struct reorder_scenario reorder_scenarios[] = {
    {"aaar_pscw", "MPI_WIN_ACCESS_AFTER_ACCESS_REORDER", 3,
     "second target's exposure epoch (T1)", round_aaar_pscw},
    {"aaar_lock", "MPI_WIN_ACCESS_AFTER_ACCESS_REORDER", 4,
     "second origin's epoch toward T1 (O1)", round_aaar_lock},
    {"aaer", "MPI_WIN_ACCESS_AFTER_EXPOSURE_REORDER", 3,
     "P1's exposure epoch, P2's access", round_aaer},
    {"eaer", "MPI_WIN_EXPOSURE_AFTER_EXPOSURE_REORDER", 3,
     "O1's access epoch, T's second exposure", round_eaer},
    {"eaar", "MPI_WIN_EXPOSURE_AFTER_ACCESS_REORDER", 3,
     "P1's access epoch, P2's exposure", round_eaar},
    {"aaar_fence", "MPI_WIN_ACCESS_AFTER_ACCESS_REORDER", 3,
     "O's lock epoch after the fence", round_aaar_fence,
     "MPI_WIN_ACCESS_AFTER_EXPOSURE_REORDER", "A_A_A_R+A_A_E_R"},
};

#define N_REORDER_SCENARIOS ((int) (sizeof(reorder_scenarios) / sizeof(reorder_scenarios[0])))

/* One round. On return, times[0] (victim) and times[1] (chain) are set on
 * every rank, and the function's value is the number of wrong bytes this rank
 * found as a target (0 when it was no target). */
static long reorder_round(struct reorder_run *r, double times[2])
{
    int me;
    double t0, mine[2] = { 0, 0 };

    MPI_Comm_rank(r->comm, &me);
    memset(r->base, 0, (size_t) r->size * 2);
    rs_lazy_barrier(r->comm);
    t0 = rs_now_us();
    long wrong = r->scenario->round(r, me, t0, mine);
    RS_CK(MPI_Allreduce(mine, times, 2, MPI_DOUBLE, MPI_MAX, r->comm));
    return wrong;
}

#endif /* REORDER_SCENARIOS_H_INCLUDED */
