/*
 * A blocking wait that lasts parks (MPIR_CVAR_NBRMA_PARK_AFTER_US,
 * common/nbrma_parked_wait.c): with the progress agent, a rank that waits in
 * MPI for a peer that sleeps outside MPI leaves its core and sleeps until
 * the agent rings it, and the wait still ends with the peer's data.
 *
 * In each case rank 1 waits while rank 0 sleeps SLEEP_MS outside MPI and
 * then acts; rank 1 reads the CPU time of its waiting thread
 * (CLOCK_THREAD_CPUTIME_ID) around the wait and checks the value rank 0 put
 * into its window. The waits:
 *   wait     MPI_Win_wait (posted before; rank 0 starts, puts and completes
 *            after its sleep): the component's blocking call
 *   fence    MPI_Win_fence closing an epoch in which rank 0 puts after its
 *            sleep
 *   ifence   MPIX_Win_ifence and MPI_Wait (MPICH's waiting loop)
 *   lock     MPI_Win_lock of its own window, which rank 0 holds exclusively
 *            over its sleep (its put lands before the unlock)
 *   barrier  MPI_Barrier, which rank 0 enters after its sleep and a put
 *            with lock and unlock (MPICH's collective)
 *   served   MPI_Barrier again, but rank 0 does not sleep: for SLEEP_MS it
 *            streams put + flush into rank 1's MPI_Win_create window over
 *            malloc'ed memory, which UCX reaches by its own messages only
 *            (rank 1's CPU serves each put; the window's cross-memory
 *            copies are off, mpich_nbrma_cross_memory_rma), then puts as
 *            in barrier. A wait
 *            that serves its peers is not idle: it must not park (patch
 *            0042), and with "on" must use more than half of its time on
 *            the CPU; parked, each put would wait for the agent's wake-up.
 *
 *   agent_parked_wait on|off [tcp] [multiple]
 * on: the agent runs and waits park after 2 ms (the default): every wait
 * must use less than half of its time on the CPU. off: the agent runs and
 * waits never park (MPIR_CVAR_NBRMA_PARK_AFTER_US=-1): some wait must spin
 * for more than half of its time, the proof that the check can fail. tcp
 * sets UCX_TLS=tcp,self (the path between nodes); multiple asks for
 * MPI_THREAD_MULTIPLE (a parked wait then leaves MPICH's global critical
 * section instead of the agent's guard). Run with 2 processes.
 */
#include "nbrma_test.h"
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define SLEEP_MS 300

enum { WAIT, FENCE, IFENCE, LOCK, BARRIER, SERVED, N_CASES };
static const char *const case_names[N_CASES] = {
    "wait", "fence", "ifence", "lock", "barrier", "served"
};

/* the window of the served case, over malloc'ed memory */
static MPI_Win served_win;
static int *served_base;

static double thread_cpu_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return (double) t.tv_sec + t.tv_nsec * 1e-9;
}

static int value_of(int c)
{
    return 1000 + c;
}

/* Rank 0: sleeps outside MPI, then gives case `c` its value. */
static void origin(int c, MPI_Win win, MPI_Group peer)
{
    int v = value_of(c);
    MPI_Request req;

    switch (c) {
        case WAIT:
            usleep(SLEEP_MS * 1000);
            CHECK_MPI(MPI_Win_start(peer, 0, win));
            CHECK_MPI(MPI_Put(&v, 1, MPI_INT, 1, 0, 1, MPI_INT, win));
            CHECK_MPI(MPI_Win_complete(win));
            break;
        case FENCE:
            CHECK_MPI(MPI_Win_fence(0, win));
            usleep(SLEEP_MS * 1000);
            CHECK_MPI(MPI_Put(&v, 1, MPI_INT, 1, 0, 1, MPI_INT, win));
            CHECK_MPI(MPI_Win_fence(0, win));
            break;
        case IFENCE:
            CHECK_MPI(MPI_Win_fence(0, win));
            usleep(SLEEP_MS * 1000);
            CHECK_MPI(MPI_Put(&v, 1, MPI_INT, 1, 0, 1, MPI_INT, win));
            CHECK_MPI(MPIX_Win_ifence(0, win, &req));
            wait_or_abort(&req, 60 * time_scale(), "rank 0's ifence");
            break;
        case LOCK:
            /* the lock is taken (its flush waits for the grant) before rank
             * 1 asks for its own */
            CHECK_MPI(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 1, 0, win));
            CHECK_MPI(MPI_Put(&v, 1, MPI_INT, 1, 0, 1, MPI_INT, win));
            CHECK_MPI(MPI_Win_flush(1, win));
            CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
            usleep(SLEEP_MS * 1000);
            CHECK_MPI(MPI_Put(&v, 1, MPI_INT, 1, 0, 1, MPI_INT, win));
            CHECK_MPI(MPI_Win_unlock(1, win));
            break;
        case SERVED:
        case BARRIER:
            if (c == BARRIER) {
                usleep(SLEEP_MS * 1000);
            } else {
                double end = MPI_Wtime() + SLEEP_MS * 1e-3;

                CHECK_MPI(MPI_Win_lock(MPI_LOCK_SHARED, 1, 0, served_win));
                while (MPI_Wtime() < end) {
                    CHECK_MPI(MPI_Put(&v, 1, MPI_INT, 1, 0, 1, MPI_INT, served_win));
                    CHECK_MPI(MPI_Win_flush(1, served_win));
                }
                CHECK_MPI(MPI_Win_unlock(1, served_win));
            }
            CHECK_MPI(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 1, 0, win));
            CHECK_MPI(MPI_Put(&v, 1, MPI_INT, 1, 0, 1, MPI_INT, win));
            CHECK_MPI(MPI_Win_unlock(1, win));
            CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
            break;
    }
}

/* Rank 1: waits for case `c`; returns the waiting thread's share of the
 * wait's time on the CPU. */
static double target(int c, MPI_Win win, MPI_Group peer, int *base)
{
    double t0, cpu0, share;
    MPI_Request req;

    if (c == WAIT)
        CHECK_MPI(MPI_Win_post(peer, 0, win));
    if (c == FENCE || c == IFENCE)
        CHECK_MPI(MPI_Win_fence(0, win));
    if (c == LOCK)
        CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
    t0 = MPI_Wtime();
    cpu0 = thread_cpu_s();
    switch (c) {
        case WAIT:
            CHECK_MPI(MPI_Win_wait(win));
            break;
        case FENCE:
            CHECK_MPI(MPI_Win_fence(0, win));
            break;
        case IFENCE:
            CHECK_MPI(MPIX_Win_ifence(0, win, &req));
            CHECK_MPI(MPI_Wait(&req, MPI_STATUS_IGNORE));
            break;
        case LOCK:
            CHECK_MPI(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 1, 0, win));
            break;
        case BARRIER:
        case SERVED:
            CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
            break;
    }
    share = (thread_cpu_s() - cpu0) / (MPI_Wtime() - t0);
    CHECK(MPI_Wtime() - t0 > SLEEP_MS * 1e-3 / 2, "%s: the wait ended before rank 0 woke",
          case_names[c]);
    if (c == BARRIER || c == SERVED)
        CHECK_MPI(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 1, 0, win));
    CHECK(base[0] == value_of(c), "%s: rank 0's put left %d, expected %d", case_names[c],
          base[0], value_of(c));
    if (c == LOCK || c == BARRIER || c == SERVED)
        CHECK_MPI(MPI_Win_unlock(1, win));
    if (c == SERVED) {
        CHECK_MPI(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 1, 0, served_win));
        CHECK(served_base[0] == value_of(c), "served: rank 0's stream left %d, expected %d",
              served_base[0], value_of(c));
        CHECK_MPI(MPI_Win_unlock(1, served_win));
    }
    return share;
}

int main(int argc, char **argv)
{
    bool parks = argc > 1 && strcmp(argv[1], "on") == 0;
    int rank, size, provided, other;
    bool multiple = false;
    double most = 0;
    int *base;
    MPI_Win win;
    MPI_Group world, peer;

    if (argc < 2 || (!parks && strcmp(argv[1], "off") != 0)) {
        fprintf(stderr, "usage: agent_parked_wait on|off [tcp] [multiple]\n");
        return 2;
    }
    for (int a = 2; a < argc; a++) {
        if (strcmp(argv[a], "tcp") == 0)
            setenv("UCX_TLS", "tcp,self", 1);
        else if (strcmp(argv[a], "multiple") == 0)
            multiple = true;
    }
    setenv("MPIR_CVAR_NBRMA_ASYNC_PROGRESS", "1", 1);
    if (!parks)
        setenv("MPIR_CVAR_NBRMA_PARK_AFTER_US", "-1", 1);
    MPI_Init_thread(&argc, &argv, multiple ? MPI_THREAD_MULTIPLE : MPI_THREAD_SINGLE, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size != 2) {
        fprintf(stderr, "run with 2 processes\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    CHECK(!multiple || provided == MPI_THREAD_MULTIPLE, "MPI_THREAD_MULTIPLE not provided");
    other = 1 - rank;
    MPI_Comm_group(MPI_COMM_WORLD, &world);
    MPI_Group_incl(world, 1, &other, &peer);
    CHECK_MPI(allocate_engine_win(sizeof(int), sizeof(int), MPI_COMM_WORLD, &base, &win));
    served_base = calloc(1, sizeof(int));
    {
        /* the origin's copies (rule R1) would serve the stream without rank
         * 1's CPU: its puts are UCX's messages here */
        MPI_Info info;

        MPI_Info_create(&info);
        MPI_Info_set(info, "mpich_nbrma_cross_memory_rma", "false");
        CHECK_MPI(MPI_Win_create(served_base, sizeof(int), sizeof(int), info,
                                 MPI_COMM_WORLD, &served_win));
        MPI_Info_free(&info);
    }
    for (int c = 0; c < N_CASES; c++) {
        watchdog_arm((unsigned) (60 * time_scale()), "rank %d, case %s", rank, case_names[c]);
        CHECK_MPI(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, rank, 0, win));
        base[0] = -1;
        CHECK_MPI(MPI_Win_unlock(rank, win));
        CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
        if (rank == 0) {
            origin(c, win, peer);
        } else {
            double share = target(c, win, peer, base);

            printf("%s: the waiting thread used %.0f%% of the wait on the CPU\n",
                   case_names[c], share * 100);
            if (parks && c == SERVED)
                CHECK(share > 0.5, "served: the waiting thread used %.0f%% of the wait on the "
                      "CPU (it should serve the stream itself, not park)", share * 100);
            else if (parks)
                CHECK(share < 0.5, "%s: the waiting thread used %.0f%% of the wait on the CPU "
                      "(it should sleep while the agent serves)", case_names[c], share * 100);
            if (c != SERVED) /* it spins in either mode */
                most = share > most ? share : most;
        }
        CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
    }
    watchdog_disarm();
    if (rank == 1 && !parks)
        CHECK(most > 0.5, "no wait spun for more than half of its time without parking "
              "(most %.0f%%): the check above could not fail", most * 100);
    MPI_Group_free(&peer);
    MPI_Group_free(&world);
    CHECK_MPI(MPI_Win_free(&win));
    CHECK_MPI(MPI_Win_free(&served_win));
    free(served_base);
    return report_and_finalize();
}
