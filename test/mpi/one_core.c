/*
 * Every rank on one core: MPICH's waiting loops and the component's must give
 * the core away (patch 0030, MPIR_CVAR_NBRMA_YIELD_AFTER_IDLE_US), or each
 * hand-over from a waiting rank to the rank it waits for costs a scheduler
 * time slice (milliseconds) instead of a yield.
 *
 * All ranks pin themselves to the first core they may use, then run rounds
 * that hand the core over several times each: barriers, a put + flush from
 * rank 0 to rank 1 in a lock_all epoch followed by a message that tells the
 * target to check the value in its memory, and fence and PSCW epochs whose
 * waits need the other ranks to run, and nonblocking fence epochs waited
 * for by polling with MPI_Test. Data is checked at the target in every
 * round. The rounds must end within a limit that they meet 20 times over
 * when waiting ranks yield and miss without it (3 ranks, 1000 rounds of each
 * kind: 0.4 s with yields, about 36 s without).
 *
 * Run with 2-4 processes; argument: rounds per phase (default 1000).
 */
#define _GNU_SOURCE
#include "nbrma_test.h"
#include <sched.h>
#include <stdint.h>
#include <stdlib.h>

#define LIMIT_S 10.0
/* the polled rounds alone, 1000 of them: 0.1-0.2 s with yields, 4 s (2
 * ranks) and 8 s (3 ranks) when tests never yield */
#define POLLED_LIMIT_S 2.0

static void pin_to_first_core(void)
{
    cpu_set_t set;

    CHECK(sched_getaffinity(0, sizeof(set), &set) == 0, "sched_getaffinity failed");
    for (int cpu = 0; cpu < CPU_SETSIZE; cpu++)
        if (CPU_ISSET(cpu, &set)) {
            CPU_ZERO(&set);
            CPU_SET(cpu, &set);
            CHECK(sched_setaffinity(0, sizeof(set), &set) == 0, "sched_setaffinity failed");
            return;
        }
}

/* Barrier, put + flush from rank 0 to rank 1, a message, the check at rank 1. */
static void passive_rounds(MPI_Win win, int64_t * mem, int rank, int rounds)
{
    int wrong = 0;

    CHECK_MPI(MPI_Win_lock_all(0, win));
    for (int64_t i = 1; i <= rounds; i++) {
        CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
        if (rank == 0) {
            CHECK_MPI(MPI_Put(&i, 1, MPI_INT64_T, 1, 0, 1, MPI_INT64_T, win));
            CHECK_MPI(MPI_Win_flush(1, win));
            CHECK_MPI(MPI_Send(&i, 1, MPI_INT64_T, 1, 0, MPI_COMM_WORLD));
        } else if (rank == 1) {
            int64_t sent;
            CHECK_MPI(MPI_Recv(&sent, 1, MPI_INT64_T, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
            CHECK_MPI(MPI_Win_sync(win));
            if (mem[0] != i && wrong++ == 0)
                CHECK(0, "round %lld: target holds %lld after put + flush",
                      (long long) i, (long long) mem[0]);
        }
    }
    CHECK(wrong == 0, "%d of %d rounds read a wrong value", wrong, rounds);
    CHECK_MPI(MPI_Win_unlock_all(win));
}

/* Fence epochs: every rank puts its round number into its right neighbour,
 * into one of two words by turns: the neighbour's put of the next round may
 * arrive before this rank read the last one (the fence is no barrier), the
 * one after it may not (it accesses this window only after this rank's next
 * fence). */
static void fence_rounds(MPI_Win win, int64_t * mem, int rank, int nprocs, int rounds)
{
    int right = (rank + 1) % nprocs, left = (rank + nprocs - 1) % nprocs, wrong = 0;

    CHECK_MPI(MPI_Win_fence(0, win));
    for (int64_t i = 1; i <= rounds; i++) {
        int64_t value = i * nprocs + rank;
        int word = 1 + i % 2;
        CHECK_MPI(MPI_Put(&value, 1, MPI_INT64_T, right, word, 1, MPI_INT64_T, win));
        CHECK_MPI(MPI_Win_fence(0, win));
        if (mem[word] != i * nprocs + left && wrong++ == 0)
            CHECK(0, "fence round %lld: holds %lld, expected %lld", (long long) i,
                  (long long) mem[word], (long long) (i * nprocs + left));
    }
    CHECK(wrong == 0, "%d of %d fence rounds read a wrong value", wrong, rounds);
    CHECK_MPI(MPI_Win_fence(0, win));
}

/* PSCW: rank 0 exposes to every other rank, which each put into its own word. */
static void pscw_rounds(MPI_Win win, int64_t * mem, int rank, int nprocs, int rounds)
{
    MPI_Group world, zero, others;
    int r0 = 0, wrong = 0;

    CHECK_MPI(MPI_Comm_group(MPI_COMM_WORLD, &world));
    CHECK_MPI(MPI_Group_incl(world, 1, &r0, &zero));
    CHECK_MPI(MPI_Group_excl(world, 1, &r0, &others));
    for (int64_t i = 1; i <= rounds; i++) {
        if (rank == 0) {
            CHECK_MPI(MPI_Win_post(others, 0, win));
            CHECK_MPI(MPI_Win_wait(win));
            for (int r = 1; r < nprocs; r++)
                if (mem[3 + r] != i * r && wrong++ == 0)
                    CHECK(0, "pscw round %lld: word of rank %d holds %lld", (long long) i, r,
                          (long long) mem[3 + r]);
        } else {
            int64_t value = i * rank;
            CHECK_MPI(MPI_Win_start(zero, 0, win));
            CHECK_MPI(MPI_Put(&value, 1, MPI_INT64_T, 0, 3 + rank, 1, MPI_INT64_T, win));
            CHECK_MPI(MPI_Win_complete(win));
        }
    }
    CHECK(wrong == 0, "%d wrong words in %d pscw rounds", wrong, rounds);
    CHECK_MPI(MPI_Group_free(&others));
    CHECK_MPI(MPI_Group_free(&zero));
    CHECK_MPI(MPI_Group_free(&world));
}

/* Fence epochs closed by MPIX_Win_ifence, each waited for with MPI_Test in
 * a loop, as a program that polls its requests waits: tests that find
 * nothing done must give the core away too (patch 0044). The values differ
 * from fence_rounds' so that a put that did not land cannot pass. */
static void polled_rounds(MPI_Win win, int64_t * mem, int rank, int nprocs, int rounds)
{
    int right = (rank + 1) % nprocs, left = (rank + nprocs - 1) % nprocs, wrong = 0;
    MPI_Request req;

    CHECK_MPI(MPIX_Win_ifence(0, win, &req));
    wait_or_abort(&req, LIMIT_S, "the first ifence");
    for (int64_t i = 1; i <= rounds; i++) {
        int64_t value = (rounds + i) * nprocs + rank;
        int word = 1 + i % 2;
        CHECK_MPI(MPI_Put(&value, 1, MPI_INT64_T, right, word, 1, MPI_INT64_T, win));
        CHECK_MPI(MPIX_Win_ifence(0, win, &req));
        wait_or_abort(&req, LIMIT_S, "an ifence");
        if (mem[word] != (rounds + i) * nprocs + left && wrong++ == 0)
            CHECK(0, "polled round %lld: holds %lld, expected %lld", (long long) i,
                  (long long) mem[word], (long long) ((rounds + i) * nprocs + left));
    }
    CHECK(wrong == 0, "%d of %d polled rounds read a wrong value", wrong, rounds);
    CHECK_MPI(MPIX_Win_ifence(MPI_MODE_NOSUCCEED, win, &req));
    wait_or_abort(&req, LIMIT_S, "the last ifence");
}

int main(int argc, char **argv)
{
    int rank, nprocs, rounds = argc > 1 ? atoi(argv[1]) : 1000;
    int64_t *mem;
    MPI_Win win;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    pin_to_first_core();
    if (nprocs < 2 || nprocs > 4) {
        fprintf(stderr, "run with 2-4 processes\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    CHECK_MPI(allocate_engine_win(8 * sizeof(int64_t), sizeof(int64_t), MPI_COMM_WORLD, &mem,
                                  &win));
    for (int i = 0; i < 8; i++)
        mem[i] = 0;
    CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
    double start = MPI_Wtime();
    passive_rounds(win, mem, rank, rounds);
    fence_rounds(win, mem, rank, nprocs, rounds);
    pscw_rounds(win, mem, rank, nprocs, rounds);
    double secs = MPI_Wtime() - start;
    CHECK(secs < LIMIT_S, "%d rounds of each kind took %.1f s (limit %.0f s): waiting ranks "
          "kept the core", rounds, secs, LIMIT_S);
    start = MPI_Wtime();
    polled_rounds(win, mem, rank, nprocs, rounds);
    secs = MPI_Wtime() - start;
    CHECK(secs < POLLED_LIMIT_S, "%d polled rounds took %.1f s (limit %.0f s): ranks that poll "
          "with MPI_Test kept the core", rounds, secs, POLLED_LIMIT_S);
    CHECK_MPI(MPI_Win_free(&win));
    return report_and_finalize();
}
