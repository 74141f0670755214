/*
 * Stress: N access epochs (default 10^6) pending between two ranks. Rank
 * 0 opens and closes N PSCW access epochs toward rank 1 (MPI_Win_start, one
 * accumulate of 1, MPIX_Win_icomplete), before rank 1 has posted once: the
 * engine must keep them
 * all (MPI_Win_get_info: one active, N - 1 deferred) at a memory cost per
 * epoch that rank 0 reports and that must stay bounded, with a matching
 * state that does not grow (the per-peer triple: test/unit/test_scale.cpp
 * shows its size; here the process's memory per epoch is the figure). Rank 1
 * then exposes N times, alternating blocking MPI_Win_post/MPI_Win_wait and
 * MPIX_Win_ipost/MPIX_Win_iwait, and checks after every exposure that its
 * counter holds exactly the number of epochs so far: each epoch's
 * accumulate lands in its own exposure, none lost, none early.
 *
 *   stress_pending_epochs [N]
 *
 * Every pending close holds one request: MPICH 4.0.2's request pool of
 * 256 * 1024 requests asserted at the 262144th (mpir_request.h: "Obviously
 * this is a bad solution"); patch 0029 makes it 2^20. The engine alone keeps
 * 10^6 pending epochs with constant matching state (test/unit/test_scale.cpp).
 */
#include <stdint.h>
#include <unistd.h>
#include "nbrma_test.h"

/* Bytes a pending epoch may cost at most: generous (the request, the
 * engine's epoch and its recorded accumulate are a few hundred bytes); an
 * engine that kept per-epoch state per peer or leaked would exceed it. */
#define MAX_BYTES_PER_EPOCH 4096

static long info_long(MPI_Win win, const char *key)
{
    char value[MPI_MAX_INFO_VAL + 1];
    return win_info_value(win, key, value) ? atol(value) : -1;
}

int main(int argc, char **argv)
{
    int rank, nprocs;
    long n = argc > 1 ? atol(argv[1]) : 1000000;
    int64_t *counter;
    MPI_Win win;
    MPI_Group world_group, peer_group;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    if (nprocs != 2) {
        if (rank == 0)
            fprintf(stderr, "stress_pending_epochs runs on 2 ranks\n");
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    CHECK_MPI(allocate_engine_win(SMALL_WIN_BYTES, 1, MPI_COMM_WORLD, &counter, &win));
    *counter = 0;
    MPI_Comm_group(MPI_COMM_WORLD, &world_group);
    int peer = 1 - rank;
    MPI_Group_incl(world_group, 1, &peer, &peer_group);
    CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
    /* 65 s across the two hosts in a quiet CI run: scaled there */
    double deadline = MPI_Wtime() + 100.0 * time_scale();

    if (rank == 0) {
        const int64_t one = 1;
        MPI_Request *done = malloc(n * sizeof(*done));
        CHECK(done != NULL, "no memory for %ld requests", n);
        long rss_before = rss_bytes();
        double t0 = MPI_Wtime();
        for (long i = 0; i < n; i++) {
            /* blocking start: it returns once the epoch is queued */
            CHECK_MPI(MPI_Win_start(peer_group, 0, win));
            CHECK_MPI(MPI_Accumulate(&one, 1, MPI_INT64_T, 1, 0, 1, MPI_INT64_T, MPI_SUM, win));
            CHECK_MPI(MPIX_Win_icomplete(win, &done[i]));
        }
        double t_issue = MPI_Wtime() - t0;
        long per_epoch = (rss_bytes() - rss_before) / n;
        long deferred = info_long(win, "mpich_nbrma_deferred_epochs");
        long active = info_long(win, "mpich_nbrma_active_epochs");
        printf("rank 0: %ld epochs pending before the target's first post: %ld deferred, %ld "
               "active; %ld bytes of memory per pending epoch (request included); issued in "
               "%.2f s\n", n, deferred, active, per_epoch, t_issue);
        CHECK(deferred == n - 1 && active == 1, "expected %ld deferred and 1 active", n - 1);
        CHECK(per_epoch <= MAX_BYTES_PER_EPOCH, "%ld bytes per pending epoch", per_epoch);
        CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
        /* FIFO: the epochs complete in the order they were closed */
        for (long i = 0; i < n; i++) {
            int flag = 0;
            while (!flag) {
                CHECK_MPI(MPI_Test(&done[i], &flag, MPI_STATUS_IGNORE));
                if (!flag && MPI_Wtime() > deadline) {
                    fprintf(stderr, "rank 0: epoch %ld of %ld did not complete in time\n", i, n);
                    MPI_Abort(MPI_COMM_WORLD, 3);
                }
            }
        }
        CHECK(info_long(win, "mpich_nbrma_deferred_epochs") == 0, "epochs left deferred");
        free(done);
    } else {
        CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
        long wrong = 0;
        for (long i = 0; i < n; i++) {
            if (i % 2 == 0) {
                CHECK_MPI(MPI_Win_post(peer_group, 0, win));
                CHECK_MPI(MPI_Win_wait(win));
            } else {
                MPI_Request posted, waited;
                CHECK_MPI(MPIX_Win_ipost(peer_group, 0, win, &posted));
                CHECK_MPI(MPIX_Win_iwait(win, &waited));
                wait_or_abort(&posted, deadline - MPI_Wtime(), "MPIX_Win_ipost");
                wait_or_abort(&waited, deadline - MPI_Wtime(), "MPIX_Win_iwait");
            }
            if (*counter != i + 1 && wrong++ < 5)
                CHECK(0, "after exposure %ld the counter is %ld", i + 1, (long) *counter);
            if (MPI_Wtime() > deadline) {
                fprintf(stderr, "rank 1: only %ld of %ld exposures in time\n", i + 1, n);
                MPI_Abort(MPI_COMM_WORLD, 3);
            }
        }
        CHECK(*counter == n, "counter %ld after %ld epochs", (long) *counter, n);
    }
    MPI_Group_free(&peer_group);
    MPI_Group_free(&world_group);
    CHECK_MPI(MPI_Win_free(&win));
    return report_and_finalize();
}
