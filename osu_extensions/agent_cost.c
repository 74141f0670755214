/*
 * agent_cost: what a progress thread costs the application (plain MPI-3, C99;
 * builds with MPICH and Open MPI alike). Two ranks.
 *
 *   mpiexec -n 2 ./agent_cost idle [seconds]
 *     Both ranks sleep outside MPI after a barrier. Prints the CPU time
 *     (user + system, all threads, getrusage) each rank used during the
 *     sleep: a progress thread that spins shows here.
 *
 *   mpiexec -n 2 ./agent_cost waiting [seconds]
 *     Rank 1 waits in MPI_Win_wait while rank 0 sleeps outside MPI, then
 *     starts, puts and completes. Prints the CPU time (all threads) rank 1
 *     used in its wait and checks the value put: a wait that spins shows
 *     here (MPIR_CVAR_NBRMA_PARK_AFTER_US).
 *
 *   mpiexec -n 2 ./agent_cost compute [work]
 *     Rank 1 computes (a fixed amount of arithmetic, no MPI call) twice:
 *     once while rank 0 waits in a barrier, once while rank 0 puts + flushes
 *     8 bytes into rank 1's MPI_Win_allocate window in a loop until rank 1 is
 *     done. Prints both times and their ratio (the slowdown that serving the
 *     RMA costs the computation), the operations rank 0 completed meanwhile
 *     and rank 1's CPU time; rank 1 checks that the last value put arrived.
 *
 * Run it with and without the progress thread (MPIR_CVAR_NBRMA_ASYNC_PROGRESS=1
 * or MPIR_CVAR_ASYNC_PROGRESS=1 on MPICH; Open MPI has none for osc/ucx).
 */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

static double cpu_seconds(void)
{
    struct rusage ru;

    getrusage(RUSAGE_SELF, &ru);
    return ru.ru_utime.tv_sec + ru.ru_utime.tv_usec * 1e-6 + ru.ru_stime.tv_sec +
        ru.ru_stime.tv_usec * 1e-6;
}

/* Arithmetic the compiler cannot drop. */
static double compute(long work)
{
    volatile double x = 1.0;
    for (long i = 0; i < work; i++)
        x = x * 1.0000001 + 1e-9;
    return x;
}

static int idle(int rank, int seconds)
{
    double cpu0, cpu1, all[2];

    MPI_Barrier(MPI_COMM_WORLD);
    cpu0 = cpu_seconds();
    sleep(seconds);
    cpu1 = cpu_seconds() - cpu0;
    MPI_Gather(&cpu1, 1, MPI_DOUBLE, all, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    if (rank == 0)
        printf("idle %d s: cpu rank0 %.3f s rank1 %.3f s total %.3f s\n", seconds, all[0],
               all[1], all[0] + all[1]);
    return 0;
}

static int waiting(int rank, int seconds)
{
    int *mem, peer_rank = 1 - rank, errors = 0;
    MPI_Group world, peer;
    MPI_Win win;

    MPI_Win_allocate(sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &win);
    mem[0] = 0;
    MPI_Comm_group(MPI_COMM_WORLD, &world);
    MPI_Group_incl(world, 1, &peer_rank, &peer);
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 1) {
        double t = MPI_Wtime(), c = cpu_seconds();
        MPI_Win_post(peer, 0, win);
        MPI_Win_wait(win);
        c = cpu_seconds() - c;
        t = MPI_Wtime() - t;
        if (mem[0] != 42) {
            fprintf(stderr, "rank 1: the put left %d, expected 42\n", mem[0]);
            errors++;
        }
        printf("waiting %.3f s: cpu rank1 %.3f s\n", t, c);
    } else {
        int v = 42;
        sleep(seconds);
        MPI_Win_start(peer, 0, win);
        MPI_Put(&v, 1, MPI_INT, 1, 0, 1, MPI_INT, win);
        MPI_Win_complete(win);
    }
    MPI_Group_free(&peer);
    MPI_Group_free(&world);
    MPI_Win_free(&win);
    return errors;
}

static int compute_under_rma(int rank, long work)
{
    int64_t *mem, done = 0, ops = 0;
    MPI_Win win;
    double alone = 0, busy = 0, cpu = 0;
    int errors = 0;

    MPI_Win_allocate(2 * sizeof(int64_t), sizeof(int64_t), MPI_INFO_NULL, MPI_COMM_WORLD, &mem,
                     &win);
    mem[0] = mem[1] = 0;
    MPI_Win_lock_all(0, win);
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 1) {            /* alone */
        double t = MPI_Wtime();
        compute(work);
        alone = MPI_Wtime() - t;
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 1) {            /* under RMA */
        double t = MPI_Wtime(), c = cpu_seconds();
        compute(work);
        busy = MPI_Wtime() - t;
        cpu = cpu_seconds() - c;
        __atomic_store_n(&mem[1], 1, __ATOMIC_SEQ_CST);
        MPI_Recv(&ops, 1, MPI_INT64_T, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Win_sync(win);
        if (mem[0] != ops) {
            fprintf(stderr, "rank 1: last value put %lld, expected %lld\n",
                    (long long) mem[0], (long long) ops);
            errors++;
        }
        printf("compute %ld: alone %.3f s, under RMA %.3f s (%.2fx), cpu %.3f s, "
               "%lld put+flush meanwhile\n", work, alone, busy, busy / alone, cpu,
               (long long) ops);
    } else {
        while (!done) {
            ops++;
            MPI_Put(&ops, 1, MPI_INT64_T, 1, 0, 1, MPI_INT64_T, win);
            MPI_Win_flush(1, win);
            MPI_Get(&done, 1, MPI_INT64_T, 1, 1, 1, MPI_INT64_T, win);
            MPI_Win_flush(1, win);
        }
        MPI_Send(&ops, 1, MPI_INT64_T, 1, 0, MPI_COMM_WORLD);
    }
    MPI_Win_unlock_all(win);
    MPI_Win_free(&win);
    return errors;
}

int main(int argc, char **argv)
{
    int rank, size, errors = 0;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size != 2 || argc < 2) {
        if (rank == 0)
            fprintf(stderr, "usage: mpiexec -n 2 %s idle [seconds] | waiting [seconds] | "
                    "compute [work]\n", argv[0]);
        MPI_Finalize();
        return 2;
    }
    if (strcmp(argv[1], "idle") == 0)
        errors = idle(rank, argc > 2 ? atoi(argv[2]) : 2);
    else if (strcmp(argv[1], "waiting") == 0)
        errors = waiting(rank, argc > 2 ? atoi(argv[2]) : 1);
    else
        errors = compute_under_rma(rank, argc > 2 ? atol(argv[2]) : 300000000L);
    MPI_Finalize();
    return errors ? 1 : 0;
}
