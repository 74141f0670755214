/*
 * osu_thread_flush: put + flush latency when several threads of one process
 * do it at once on one window (RMA-MT's pattern, in the OSU micro-benchmarks'
 * output format).
 *
 *   mpiexec -n 2 ./osu_thread_flush [-t max_threads] [-i iterations] [-x warmup]
 *                [-m bytes] [-s flush|flush_local|iflush] [-S process|thread]
 *
 * Rank 0 opens MPI_Win_lock_all on a window from MPI_Win_allocate (rank 1's
 * memory is the target) and, for 1, 2, 4, ... max_threads threads, starts the
 * threads together; each does `iterations` times: MPI_Put of `bytes` into its
 * own slot at rank 1, then MPI_Win_flush (or MPI_Win_flush_local, or
 * MPIX_Win_iflush + MPI_Wait where the patch-set's MPIX calls exist). It
 * prints the mean over threads of each thread's time per put+flush and the
 * slowest thread's. Rank 1 waits in MPI_Barrier, then checks that every
 * thread's last put is in its slot.
 *
 * -S sets the window's info key mpi_win_scope (Quo Vadis MPI RMA, section
 * 2.1: a flush completes only the calling thread's operations under
 * "thread"); the header reports the scope MPI_Win_get_info says is in force
 * ("process" when the key is not reported). Plain MPI-3 otherwise: builds with
 * any MPI that has MPI_THREAD_MULTIPLE.
 */
#define _POSIX_C_SOURCE 200809L  /* pthread_barrier_t, getopt under -std=c99 */
#include <mpi.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MAX_THREADS 64

static int max_threads = 8, iterations = 10000, warmup = 1000;
static size_t bytes = 8;
static const char *sync_mode = "flush", *scope = "process";
static MPI_Win win;
static char *base;
static pthread_barrier_t start_line;
static double per_thread_us[MAX_THREADS];

static void flush_once(void)
{
    if (!strcmp(sync_mode, "flush_local")) {
        MPI_Win_flush_local(1, win);
#ifdef MPIX_MAX_MEMHANDLE_SIZE  /* the patch-set's mpi.h */
    } else if (!strcmp(sync_mode, "iflush")) {
        MPI_Request req;
        MPIX_Win_iflush(1, win, &req);
        MPI_Wait(&req, MPI_STATUS_IGNORE);
#endif
    } else {
        MPI_Win_flush(1, win);
    }
}

static char fill_of(int t, int i)
{
    return (char) ('A' + (t * 7 + i) % 26);
}

static void *origin_thread(void *arg)
{
    const int t = (int) (long) arg;
    char *src = malloc(bytes);
    double start = MPI_Wtime();

    for (int i = 0; i < warmup + iterations; i++) {
        if (i == warmup) {
            pthread_barrier_wait(&start_line);
            start = MPI_Wtime();
        }
        memset(src, fill_of(t, i), bytes);
        MPI_Put(src, (int) bytes, MPI_BYTE, 1, (MPI_Aint) t * bytes, (int) bytes, MPI_BYTE, win);
        flush_once();
    }
    per_thread_us[t] = (MPI_Wtime() - start) * 1e6 / iterations;
    free(src);
    return NULL;
}

/* 1, 2, 4, ... and max_threads itself last */
static int next_thread_count(int n)
{
    if (n == max_threads)
        return n + 1;
    return n * 2 > max_threads ? max_threads : n * 2;
}

static void usage(void)
{
    fprintf(stderr, "usage: osu_thread_flush [-t max_threads] [-i iterations] [-x warmup] "
            "[-m bytes] [-s flush|flush_local|iflush] [-S process|thread]\n");
}

int main(int argc, char **argv)
{
    int provided, rank, nprocs, c, errors = 0;
    MPI_Info info;
    char in_force[MPI_MAX_INFO_VAL + 1] = "process";
    int flag;

    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    while ((c = getopt(argc, argv, "t:i:x:m:s:S:h")) != -1) {
        switch (c) {
        case 't': max_threads = atoi(optarg); break;
        case 'i': iterations = atoi(optarg); break;
        case 'x': warmup = atoi(optarg); break;
        case 'm': bytes = (size_t) atol(optarg); break;
        case 's': sync_mode = optarg; break;
        case 'S': scope = optarg; break;
        default:
            if (rank == 0)
                usage();
            MPI_Finalize();
            return c == 'h' ? 0 : 1;
        }
    }
#ifndef MPIX_MAX_MEMHANDLE_SIZE
    if (!strcmp(sync_mode, "iflush")) {
        if (rank == 0)
            fprintf(stderr, "-s iflush needs the patch-set's MPIX_Win_iflush\n");
        MPI_Finalize();
        return 1;
    }
#endif
    if (provided != MPI_THREAD_MULTIPLE || nprocs != 2 || max_threads < 1 ||
        max_threads > MAX_THREADS || iterations < 1 || warmup < 0 || bytes < 1) {
        if (rank == 0)
            fprintf(stderr, "needs 2 ranks, MPI_THREAD_MULTIPLE (provided %d), 1-%d threads, "
                    "iterations >= 1, bytes >= 1\n", provided, MAX_THREADS);
        MPI_Finalize();
        return 1;
    }

    MPI_Info_create(&info);
    MPI_Info_set(info, "mpi_win_scope", scope);
    MPI_Win_allocate(rank == 1 ? (MPI_Aint) (max_threads * bytes) : 0, 1, info,
                     MPI_COMM_WORLD, &base, &win);
    MPI_Info_free(&info);
    MPI_Win_get_info(win, &info);
    MPI_Info_get(info, "mpi_win_scope", MPI_MAX_INFO_VAL, in_force, &flag);
    MPI_Info_free(&info);

    if (rank == 0) {
        printf("# OSU-style MPI_Put + %s latency from concurrent threads\n",
               !strcmp(sync_mode, "iflush") ? "MPIX_Win_iflush + MPI_Wait" :
               !strcmp(sync_mode, "flush_local") ? "MPI_Win_flush_local" : "MPI_Win_flush");
        printf("# Window: MPI_Win_allocate, MPI_Win_lock_all; mpi_win_scope asked: %s, "
               "in force: %s\n", scope, in_force);
        printf("# Size: %zu bytes, %d iterations per thread (%d warm-up)\n", bytes, iterations,
               warmup);
        printf("%-10s %20s %20s\n", "# Threads", "Avg Latency(us)", "Max Latency(us)");
        fflush(stdout);
    }
    for (int n = 1; n <= max_threads; n = next_thread_count(n)) {
        if (rank == 1)
            memset(base, 0, max_threads * bytes);
        MPI_Barrier(MPI_COMM_WORLD);
        if (rank == 0) {
            pthread_t tid[MAX_THREADS];
            double sum = 0, max = 0;
            MPI_Win_lock_all(0, win);
            pthread_barrier_init(&start_line, NULL, n);
            for (long t = 0; t < n; t++)
                pthread_create(&tid[t], NULL, origin_thread, (void *) t);
            for (int t = 0; t < n; t++) {
                pthread_join(tid[t], NULL);
                sum += per_thread_us[t];
                max = per_thread_us[t] > max ? per_thread_us[t] : max;
            }
            pthread_barrier_destroy(&start_line);
            MPI_Win_unlock_all(win);
            printf("%-10d %20.2f %20.2f\n", n, sum / n, max);
            fflush(stdout);
        }
        MPI_Barrier(MPI_COMM_WORLD);
        if (rank == 1) {
            MPI_Win_lock(MPI_LOCK_SHARED, 1, 0, win);
            for (int t = 0; t < n; t++)
                for (size_t b = 0; b < bytes; b++)
                    errors += base[t * bytes + b] != fill_of(t, warmup + iterations - 1);
            MPI_Win_unlock(1, win);
        }
    }
    MPI_Allreduce(MPI_IN_PLACE, &errors, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0 && errors)
        printf("# WRONG: %d bytes at the target differ from the threads' last puts\n", errors);
    MPI_Win_free(&win);
    MPI_Finalize();
    return errors != 0;
}
