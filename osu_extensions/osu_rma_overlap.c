/*
 * Overlap benchmarks: how much of an epoch's communication a computation
 * hides, measured as OSU 7.4's nonblocking collective benchmarks do
 * (osu_iallreduce): first the pure communication time of an epoch with one
 * operation, then the same epoch with a computation as long as that (or -c
 * US), and overlap = 100 - (overall - compute) / pure * 100, at least 0.
 *
 * Where the computation goes: with a nonblocking mode (i*) between the
 * closing call (MPIX_Win_iflush, _iunlock, _icomplete, _ifence, ...) and the
 * MPI_Wait on its request, as an application using them does; with a
 * blocking mode between the operation and the closing call, which is the best
 * an application can do without them (MPI_Put itself is nonblocking). -t
 * CALLS spreads that many MPI_Test calls over the computation (on the
 * closing call's request; blocking modes have none, so they call MPI_Test
 * on MPI_REQUEST_NULL, which only costs the call); their time is reported
 * apart and not counted as computation, as OSU does. Without -t the process
 * makes no MPI call while it computes.
 *
 * Epochs go one way, rank 0 to rank 1: passive target from rank 0 (rank 1
 * waits in MPI_Barrier, as in OSU's latency loops); fence and PSCW with both
 * ranks computing for the same time (rank 1 between its closing call and
 * its completion too). Times are rank 0's, per iteration.
 */
#include "osu_rma_common.h"
#include <stdio.h>

struct overlap_times {
    double overall, compute, tests;     /* microseconds per iteration */
};

/* The computation of one epoch, at the place the mode allows. */
static void compute(const struct osu_run *r, int after_close, double us, MPI_Request * q,
                    struct overlap_times *t)
{
    if (us <= 0 || after_close != r->opt->sync->nonblocking)
        return;
    double t0 = MPI_Wtime();
    t->tests += osu_compute(us, q, r->opt->test_calls);
    t->compute += (MPI_Wtime() - t0) * 1e6;
}

/* `iters` epochs with `us` of computation each (0: the pure communication);
 * returns rank 0's times per iteration and counts this rank's operations. */
static struct overlap_times run_epochs(struct osu_run *r, int iters, int skip, double us,
                                       long *issued)
{
    const struct osu_sync_mode *m = r->opt->sync;
    struct overlap_times t = { 0, 0, 0 }, ignored = t;
    MPI_Request q = MPI_REQUEST_NULL;
    MPI_Group peer = osu_peer_group(1 - r->rank);
    double t_start = 0;
    int origin = r->rank == 0;

    OSU_CK(MPI_Barrier(MPI_COMM_WORLD));
    /* epochs and flushes on epoch_win: a memory handle's parent carries them */
    if (m->family == OSU_HELD && origin)
        OSU_CK(MPI_Win_lock(MPI_LOCK_SHARED, 1, 0, r->epoch_win));
    if (m->family == OSU_FENCE) {
        osu_fence(m, r->win, &q);       /* opens the first epoch; each closing fence the next */
        osu_wait_closed(&q);
    }
    /* the passive target only meets the origin's barrier after the warm-up */
    int passive_target = !origin && (m->family == OSU_HELD || m->family == OSU_PER_OP);
    if (passive_target)
        OSU_CK(MPI_Barrier(MPI_COMM_WORLD));
    for (int i = 0; i < skip + iters && !passive_target; i++) {
        struct overlap_times *into = i < skip ? &ignored : &t;
        if (i == skip) {
            OSU_CK(MPI_Barrier(MPI_COMM_WORLD));
            t_start = MPI_Wtime();
        }
        if (m->family == OSU_HELD || m->family == OSU_PER_OP) {
            if (m->family == OSU_PER_OP)
                OSU_CK(m->open(r->op->lock_type, 1, r->epoch_win));
            OSU_CK(r->op->issue(r, 1));
            compute(r, 0, us, &q, into);
            OSU_CK(m->close(1, r->epoch_win, &q));
        } else if (m->family == OSU_FENCE) {
            if (origin)
                OSU_CK(r->op->issue(r, 1));
            compute(r, 0, us, &q, into);
            osu_fence(m, r->win, &q);
        } else if (origin) {
            osu_pscw_start(m, peer, r->win);
            OSU_CK(r->op->issue(r, 1));
            compute(r, 0, us, &q, into);
            osu_pscw_complete(m, r->win, &q);
        } else {
            osu_pscw_post(m, peer, r->win);
            compute(r, 0, us, &q, into);
            osu_pscw_wait(m, r->win, &q);
        }
        compute(r, 1, us, &q, into);
        osu_wait_closed(&q);
        *issued += origin;
    }
    double elapsed = (MPI_Wtime() - t_start) * 1e6;
    if (m->family == OSU_HELD && origin)
        OSU_CK(MPI_Win_unlock(1, r->epoch_win));
    OSU_CK(MPI_Group_free(&peer));
    OSU_CK(MPI_Barrier(MPI_COMM_WORLD));
    t.overall = elapsed / iters;
    t.compute /= iters;
    t.tests /= iters;
    return t;
}

long osu_overlap_benchmark(const struct osu_options *opt, const struct osu_op *op)
{
    int rank;
    long wrong_total = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (rank == 0) {
        char title[128];
        snprintf(title, sizeof title, "OSU %s Overlap Test (mpich-nbrma)", op->call);
        osu_print_header(opt, title, op->datatype);
        printf("# Overall = %s + synchronization + Compute + MPI_Test + MPI_Wait, at rank 0\n",
               op->call);
        if (opt->compute_us < 0)
            printf("# Compute: as long as the pure communication; MPI_Test calls: %d\n",
                   opt->test_calls);
        else
            printf("# Compute: %.2f us; MPI_Test calls: %d\n", opt->compute_us, opt->test_calls);
        printf("%-*s%*s%*s%*s%*s\n", 10, "# Size", 20, "Overall(us)", 20, "Compute(us)", 20,
               "Pure Comm.(us)", 20, "Overlap(%)");
        fflush(stdout);
    }
    size_t lo = op->fixed_size ? op->fixed_size : opt->min_size;
    size_t hi = op->fixed_size ? op->fixed_size : opt->max_size;
    for (size_t size = lo ? lo : 1; size <= hi; size *= 2) {
        struct osu_run r;
        long issued = 0;
        int iters = osu_iters_of(opt, size), skip = osu_skip_of(opt, size);
        osu_run_setup(&r, opt, op, size);
        double pure = run_epochs(&r, iters, skip, 0, &issued).overall;
        OSU_CK(MPI_Bcast(&pure, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD));
        double us = opt->compute_us < 0 ? pure : opt->compute_us;
        struct overlap_times t = run_epochs(&r, iters, skip, us, &issued);
        long wrong = osu_run_check(&r, issued);
        osu_run_teardown(&r);
        if (rank == 0) {
            double cpu = t.compute - t.tests;
            double overlap = 100.0 - (t.overall - cpu) / pure * 100.0;
            printf("%-*zu%*.*f%*.*f%*.*f%*.*f\n", 10, size, 20, 2, t.overall, 20, 2, cpu, 20,
                   2, pure, 20, 2, overlap > 0 ? overlap : 0.0);
            if (wrong)
                printf("# FAILED: %ld bytes wrong after %zu-byte operations\n", wrong, size);
            fflush(stdout);
            wrong_total += wrong;
        }
    }
    return wrong_total;
}
