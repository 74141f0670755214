/*
 * Memory per window per process: W windows made with MPI_Win_allocate
 * (4 KiB each), then one MPI_Win_lock_all/MPI_Win_unlock_all on each (every
 * peer contacted), with /proc/self/smaps_rollup read before, after creation
 * and after the epochs. Prints, averaged over the processes, the growth per
 * window of Rss (every page mapped, shared pages counted in every process
 * that maps them), Pss (shared pages divided among their mappers: what the
 * node really spends), and Pss's shared-memory and anonymous parts.
 *
 *   mpiexec -n 16 ./window_memory [-n WINDOWS]
 *
 * Rss overstates shared memory: a window's mailbox page that N peers map
 * (lock words, rings) counts N times in the sum of Rss over the node, once in
 * the sum of Pss. Builds against any MPI; Linux only.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum { RSS, PSS, PSS_SHMEM, PSS_ANON, N_FIELDS };
static const char *field_names[N_FIELDS] = { "Rss", "Pss", "Pss_Shmem", "Pss_Anon" };

static void rollup(long kib[N_FIELDS])
{
    FILE *f = fopen("/proc/self/smaps_rollup", "r");
    char line[256];

    memset(kib, 0, N_FIELDS * sizeof(long));
    while (f && fgets(line, sizeof(line), f))
        for (int i = 0; i < N_FIELDS; i++) {
            size_t len = strlen(field_names[i]);
            if (strncmp(line, field_names[i], len) == 0 && line[len] == ':')
                kib[i] = atol(line + len + 1);
        }
    if (f)
        fclose(f);
}

int main(int argc, char **argv)
{
    int rank, nprocs, windows = 50, opt;
    long before[N_FIELDS], created[N_FIELDS], contacted[N_FIELDS];
    double mine[2 * N_FIELDS], sum[2 * N_FIELDS];

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    while ((opt = getopt(argc, argv, "n:")) != -1)
        if (opt == 'n')
            windows = atoi(optarg);
    if (windows < 1) {
        if (rank == 0)
            fprintf(stderr, "usage: window_memory [-n WINDOWS]\n");
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    MPI_Win *win = malloc(windows * sizeof(MPI_Win));
    void *base;

    MPI_Barrier(MPI_COMM_WORLD);
    rollup(before);
    for (int i = 0; i < windows; i++)
        MPI_Win_allocate(4096, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win[i]);
    MPI_Barrier(MPI_COMM_WORLD);
    rollup(created);
    for (int i = 0; i < windows; i++) {
        MPI_Win_lock_all(0, win[i]);
        MPI_Win_unlock_all(win[i]);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    rollup(contacted);
    for (int i = 0; i < N_FIELDS; i++) {
        mine[i] = (double) (created[i] - before[i]) / windows;
        mine[N_FIELDS + i] = (double) (contacted[i] - before[i]) / windows;
    }
    MPI_Reduce(mine, sum, 2 * N_FIELDS, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
    if (rank == 0) {
        printf("# KiB per window per process, mean of %d processes, %d windows\n", nprocs,
               windows);
        printf("# %-22s %10s %10s %10s %10s\n", "", "Rss", "Pss", "Pss_Shmem", "Pss_Anon");
        printf("%-24s %10.1f %10.1f %10.1f %10.1f\n", "created", sum[0] / nprocs,
               sum[1] / nprocs, sum[2] / nprocs, sum[3] / nprocs);
        printf("%-24s %10.1f %10.1f %10.1f %10.1f\n", "after lock_all/unlock_all",
               sum[4] / nprocs, sum[5] / nprocs, sum[6] / nprocs, sum[7] / nprocs);
    }
    for (int i = 0; i < windows; i++)
        MPI_Win_free(&win[i]);
    free(win);
    MPI_Finalize();
    return 0;
}
