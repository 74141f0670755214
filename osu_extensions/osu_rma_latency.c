/*
 * The latency loops of OSU 7.4's osu_put_latency & co., per synchronization
 * family: passive target from rank 0 to rank 1 (one lock around the loop for
 * the flush modes, an epoch per operation otherwise), ping-pongs for fence
 * and PSCW (OSU divides their time by 2).
 */
#include "osu_rma_common.h"
#include <stdio.h>

/* Rank 0's microseconds per operation; *issued: the operations this rank issued. */
static double time_size(struct osu_run *r, long *issued)
{
    const struct osu_sync_mode *m = r->opt->sync;
    int iters = osu_iters_of(r->opt, r->size), skip = osu_skip_of(r->opt, r->size);
    double t_start = 0, t_end = 0;
    MPI_Request q;

    *issued = 0;
    if (m->family == OSU_HELD || m->family == OSU_PER_OP) {
        if (r->rank == 0) {
            /* epochs and flushes on epoch_win: a memory handle's parent carries them */
            if (m->family == OSU_HELD)
                OSU_CK(MPI_Win_lock(MPI_LOCK_SHARED, 1, 0, r->epoch_win));
            for (int i = 0; i < skip + iters; i++) {
                if (i == skip)
                    t_start = MPI_Wtime();
                if (m->family == OSU_PER_OP)
                    OSU_CK(m->open(r->op->lock_type, 1, r->epoch_win));
                OSU_CK(r->op->issue(r, 1));
                OSU_CK(m->close(1, r->epoch_win, &q));
                osu_wait_closed(&q);
            }
            t_end = MPI_Wtime();
            if (m->family == OSU_HELD)
                OSU_CK(MPI_Win_unlock(1, r->epoch_win));
            *issued = skip + iters;
        }
        OSU_CK(MPI_Barrier(MPI_COMM_WORLD));
        return (t_end - t_start) * 1e6 / iters;
    }

    MPI_Group peer = osu_peer_group(1 - r->rank);
    OSU_CK(MPI_Barrier(MPI_COMM_WORLD));
    for (int i = 0; i < skip + iters; i++) {
        if (m->family == OSU_FENCE) {
            if (i == skip)
                t_start = MPI_Wtime();
            /* rank 0: fence, op, fence, fence; rank 1: fence, fence, op, fence */
            osu_fence(m, r->win, &q);
            osu_wait_closed(&q);
            if (r->rank == 0)
                OSU_CK(r->op->issue(r, 1));
            osu_fence(m, r->win, &q);
            osu_wait_closed(&q);
            if (r->rank == 1)
                OSU_CK(r->op->issue(r, 0));
            osu_fence(m, r->win, &q);
            osu_wait_closed(&q);
        } else {
            /* rank 0 accesses then exposes, rank 1 the other way round */
            for (int half = 0; half < 2; half++) {
                if (i == skip && half == 0 && r->rank == 0)
                    t_start = MPI_Wtime();
                if ((half == 0) == (r->rank == 0)) {
                    osu_pscw_start(m, peer, r->win);
                    OSU_CK(r->op->issue(r, 1 - r->rank));
                    osu_pscw_complete(m, r->win, &q);
                } else {
                    osu_pscw_post(m, peer, r->win);
                    osu_pscw_wait(m, r->win, &q);
                }
                osu_wait_closed(&q);
            }
        }
        (*issued)++;
    }
    t_end = MPI_Wtime();
    OSU_CK(MPI_Group_free(&peer));
    OSU_CK(MPI_Barrier(MPI_COMM_WORLD));
    return (t_end - t_start) * 1e6 / iters / 2;
}

long osu_latency_benchmark(const struct osu_options *opt, const struct osu_op *op)
{
    int rank;
    long wrong_total = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (rank == 0) {
        osu_print_header(opt, op->title, op->datatype);
        printf("%-*s%*s\n", 10, "# Size", 20, "Latency (us)");
        fflush(stdout);
    }
    size_t lo = op->fixed_size ? op->fixed_size : opt->min_size;
    size_t hi = op->fixed_size ? op->fixed_size : opt->max_size;
    for (size_t size = lo ? lo : 1; size <= hi; size *= 2) {
        struct osu_run r;
        long issued;
        osu_run_setup(&r, opt, op, size);
        double us = time_size(&r, &issued);
        long wrong = osu_run_check(&r, issued);
        osu_run_teardown(&r);
        if (rank == 0) {
            printf("%-*zu%*.*f\n", 10, size, 20, 2, us);
            if (wrong)
                printf("# FAILED: %ld bytes wrong after %zu-byte operations\n", wrong, size);
            fflush(stdout);
            wrong_total += wrong;
        }
    }
    return wrong_total;
}
