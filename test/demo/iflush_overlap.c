/*
 * Demonstration of MPIX_Win_iflush_all: rank 0 writes 1 MiB into rank 1's window
 * and adds to a counter there, starts a nonblocking flush and keeps computing,
 * testing the request now and then, instead of blocking in MPI_Win_flush_all.
 * Rank 1 then checks every byte and the counter in its own memory.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BYTES (1 << 20)
#define COUNTER_DISP BYTES

int main(int argc, char **argv)
{
    int rank, nprocs, errors = 0;
    unsigned char *base;
    MPI_Win win;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    if (nprocs != 2) {
        if (rank == 0)
            fprintf(stderr, "run me with 2 ranks\n");
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    MPI_Win_allocate(BYTES + sizeof(long) * 64, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win);
    memset(base, 0, BYTES + sizeof(long));
    MPI_Barrier(MPI_COMM_WORLD);

    MPI_Win_lock_all(0, win);
    if (rank == 0) {
        unsigned char *src = malloc(BYTES);
        long add = 42;
        MPI_Request req;
        int done = 0;
        long tests = 0;
        double work = 0.0, t0;

        for (int i = 0; i < BYTES; i++)
            src[i] = (unsigned char) (i * 31 + 7);
        t0 = MPI_Wtime();
        MPI_Put(src, BYTES, MPI_BYTE, 1, 0, BYTES, MPI_BYTE, win);
        MPI_Accumulate(&add, 1, MPI_LONG, 1, COUNTER_DISP, 1, MPI_LONG, MPI_SUM, win);
        MPIX_Win_iflush_all(win, &req);
        while (!done) {
            for (int i = 0; i < 20000; i++)     /* the application's own work */
                work += (double) i *0.5;
            MPI_Test(&req, &done, MPI_STATUS_IGNORE);
            tests++;
        }
        printf("rank 0: put 1 MiB + accumulate, MPIX_Win_iflush_all completed after %ld "
               "rounds of computation (%.3f ms, checksum %.0f)\n", tests,
               (MPI_Wtime() - t0) * 1e3, work);
        free(src);
    }
    MPI_Barrier(MPI_COMM_WORLD);        /* rank 0's flush has completed */
    if (rank == 1) {
        long counter;
        MPI_Win_sync(win);
        for (int i = 0; i < BYTES; i++)
            errors += base[i] != (unsigned char) (i * 31 + 7);
        memcpy(&counter, base + COUNTER_DISP, sizeof(long));
        errors += counter != 42;
        printf("rank 1: checked the 1 MiB and the counter (%ld) in my window before any "
               "unlock: %s\n", counter, errors ? "WRONG DATA" : "all correct");
    }
    MPI_Win_unlock_all(win);
    MPI_Win_free(&win);
    MPI_Allreduce(MPI_IN_PLACE, &errors, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    MPI_Finalize();
    return errors != 0;
}
