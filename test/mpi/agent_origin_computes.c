/*
 * The progress agent (MPIR_CVAR_NBRMA_ASYNC_PROGRESS) serves the work the
 * application started itself while it computes outside MPI: rank 0 opens a
 * nonblocking epoch with a 1 MiB put and then computes for `seconds` without
 * any MPI call before it waits for the epoch's request. Rank 1, the target,
 * waits in MPI_Win_wait or MPI_Win_fence and measures how long its epoch
 * lasted. Over tcp (UCX_TLS=tcp,self, the path between nodes) the put's data
 * and the epoch's closing messages leave only while rank 0's CPU runs MPI:
 * with the agent during the computation, without it at the wait after it.
 *
 * Phases, on an MPI_Win_allocate window:
 *   pscw   the target posts; the origin: MPIX_Win_istart, MPI_Put,
 *          MPIX_Win_icomplete, compute, MPI_Wait
 *   fence  both fence; the origin puts; the closing fence is MPIX_Win_ifence
 *          at the origin (then compute, MPI_Wait), MPI_Win_fence at the target
 * After each phase the target checks every byte the put wrote.
 *
 *   agent_origin_computes on|off [tcp] [seconds]   (2 processes)
 * on: the agent runs (the program sets MPIR_CVAR_NBRMA_ASYNC_PROGRESS before
 * MPI_Init), and every target epoch must end before half of the origin's
 * computation (default 2 s) is over. off: no agent, and over tcp some target
 * epoch must last until the origin's computation ended: the proof that the
 * check can fail.
 */
#include "nbrma_test.h"
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define PUT_BYTES (1 << 20)
#define WAIT_LIMIT_S 60

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

/* Arithmetic for `seconds`, no MPI call (MPI_Wtime included). */
static double compute(double seconds)
{
    volatile double x = 1.0;
    double end = now_s() + seconds;
    while (now_s() < end)
        for (int i = 0; i < 10000; i++)
            x = x * 1.0000001 + 1e-9;
    return x;
}

static unsigned char pattern(int phase, size_t i)
{
    return (unsigned char) (i * 7 + 13 * (phase + 1));
}

/* One phase; the target returns how long its epoch lasted (s), the origin 0. */
static double run_phase(MPI_Win win, unsigned char *mem, unsigned char *buf, int rank,
                        int phase, double seconds)
{
    static const char *names[] = { "pscw", "fence" };
    MPI_Group world, peer;
    int other = 1 - rank;
    double t0, lasted = 0;

    for (size_t i = 0; i < PUT_BYTES; i++)
        buf[i] = pattern(phase, i);
    memset(mem, 0, PUT_BYTES);
    CHECK_MPI(MPI_Comm_group(MPI_COMM_WORLD, &world));
    CHECK_MPI(MPI_Group_incl(world, 1, &other, &peer));
    if (phase == 1)
        CHECK_MPI(MPI_Win_fence(0, win));
    CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
    watchdog_arm(WAIT_LIMIT_S + (unsigned) seconds, "%s phase, rank %d", names[phase], rank);
    t0 = now_s();
    if (rank == 0) {
        MPI_Request start = MPI_REQUEST_NULL, close;
        if (phase == 0)
            CHECK_MPI(MPIX_Win_istart(peer, 0, win, &start));
        CHECK_MPI(MPI_Put(buf, PUT_BYTES, MPI_BYTE, 1, 0, PUT_BYTES, MPI_BYTE, win));
        if (phase == 0)
            CHECK_MPI(MPIX_Win_icomplete(win, &close));
        else
            CHECK_MPI(MPIX_Win_ifence(MPI_MODE_NOSUCCEED, win, &close));
        compute(seconds);
        if (start != MPI_REQUEST_NULL)
            CHECK_MPI(MPI_Wait(&start, MPI_STATUS_IGNORE));
        CHECK_MPI(MPI_Wait(&close, MPI_STATUS_IGNORE));
    } else {
        if (phase == 0) {
            CHECK_MPI(MPI_Win_post(peer, 0, win));
            CHECK_MPI(MPI_Win_wait(win));
        } else {
            CHECK_MPI(MPI_Win_fence(MPI_MODE_NOSUCCEED, win));
        }
        lasted = now_s() - t0;
        size_t wrong = 0;
        for (size_t i = 0; i < PUT_BYTES; i++)
            wrong += mem[i] != pattern(phase, i);
        CHECK(wrong == 0, "%s: %zu of %d bytes wrong at the target", names[phase], wrong,
              PUT_BYTES);
        printf("%s: target epoch %.3f s (origin computes %.1f s)\n", names[phase], lasted,
               seconds);
        fflush(stdout);
    }
    watchdog_disarm();
    CHECK_MPI(MPI_Group_free(&peer));
    CHECK_MPI(MPI_Group_free(&world));
    CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
    return lasted;
}

int main(int argc, char **argv)
{
    bool agent = argc > 1 && strcmp(argv[1], "on") == 0, tcp = false;
    double seconds = 2.0;
    int rank, waited = 0;

    if (argc < 2 || (!agent && strcmp(argv[1], "off") != 0)) {
        fprintf(stderr, "usage: agent_origin_computes on|off [tcp] [seconds]\n");
        return 2;
    }
    for (int a = 2; a < argc; a++) {
        if (strcmp(argv[a], "tcp") == 0)
            tcp = true;
        else
            seconds = atof(argv[a]);
    }
    setenv("MPIR_CVAR_NBRMA_ASYNC_PROGRESS", agent ? "1" : "0", 1);
    if (tcp)
        setenv("UCX_TLS", "tcp,self", 1);
    rank = init_with_processes(&argc, &argv, 2);
    unsigned char *mem, *buf = malloc(PUT_BYTES);
    MPI_Win win;
    CHECK(buf != NULL, "malloc failed");
    CHECK_MPI(allocate_engine_win(PUT_BYTES, 1, MPI_COMM_WORLD, &mem, &win));
    for (int phase = 0; phase < 2; phase++) {
        double lasted = run_phase(win, mem, buf, rank, phase, seconds);
        if (rank == 1 && agent)
            CHECK(lasted < seconds / 2, "phase %d: the target's epoch lasted %.3f s while "
                  "the origin computed %.1f s with the agent running", phase, lasted, seconds);
        waited += rank == 1 && lasted >= seconds * 0.9;
    }
    if (rank == 1 && !agent && tcp)
        CHECK(waited > 0, "without the agent no target epoch waited for the origin's "
              "computation: the test cannot tell whether the agent helps");
    CHECK_MPI(MPI_Win_free(&win));
    free(buf);
    return report_and_finalize();
}
