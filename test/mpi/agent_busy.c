/*
 * The progress agent below MPI_THREAD_MULTIPLE (patch 0036,
 * include/mpidi_nbrma_agent_guard.h): the agent and the application's thread
 * take turns inside MPICH without MPICH's mutex. Every rank is at once an
 * origin (toward the next rank) and a target (of the previous one) and, after
 * each operation, computes outside MPI for a random 0-40 us and now and then
 * calls MPI_Iprobe: so its agent serves the previous rank's operations while
 * its own thread goes in and out of MPI at random moments. A turn taken by
 * both at once corrupts MPICH's or UCX's state: lost or doubled updates,
 * crashes or hangs (the test list's time limit).
 *
 * Per window (MPI_Win_allocate, and MPI_Win_create over malloc'ed memory,
 * whose operations need the target's CPU even on shared memory), in one
 * lock_all epoch: N_OPS times fetch_and_op(+1) on the next rank's counter,
 * a put of the iteration number into its word `i`, flush. Checked: every
 * fetch_and_op fetched its iteration number (one origin per counter), the
 * counter at the target is N_OPS, and every put word is there.
 *
 *   agent_busy [tcp]
 * The program sets MPIR_CVAR_NBRMA_ASYNC_PROGRESS=1 before MPI_Init_thread
 * at MPI_THREAD_SINGLE and checks that the library stayed there (the agent
 * no longer raises the thread level). It also sets
 * MPIR_CVAR_NBRMA_ASYNC_PROGRESS_NICE to AGENT_NICE and checks that exactly
 * one thread of the process runs at that nice value (/proc/self/task).
 * tcp sets UCX_TLS=tcp,self. 2 or more processes.
 */
#include "nbrma_test.h"
#include <stdbool.h>
#include <stdint.h>
#include <dirent.h>
#include <time.h>

#define N_OPS 20000
#define AGENT_NICE 7            /* neither the default (10) nor the process's (0) */
#define MAX_COMPUTE_NS 40000

enum { COUNTER, PUT_WORDS };
#define N_WORDS (PUT_WORDS + N_OPS)

static uint64_t now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t) t.tv_sec * 1000000000u + (uint64_t) t.tv_nsec;
}

/* Busy outside MPI: no MPI call, so only the agent serves meanwhile. */
static void compute(unsigned *seed)
{
    uint64_t until = now_ns() + (uint64_t) (rand_r(seed) % MAX_COMPUTE_NS);
    while (now_ns() < until);
}

/* How many threads of this process run at nice value `nice` (field 19 of
 * /proc/self/task/TID/stat, counted after the command's closing parenthesis). */
static int threads_at_nice(int nice)
{
    int count = 0;
    DIR *tasks = opendir("/proc/self/task");
    struct dirent *e;

    CHECK(tasks != NULL, "cannot read /proc/self/task");
    while (tasks && (e = readdir(tasks)) != NULL) {
        char path[300], line[1024];
        FILE *f;
        if (e->d_name[0] == '.')
            continue;
        snprintf(path, sizeof(path), "/proc/self/task/%s/stat", e->d_name);
        f = fopen(path, "r");
        if (!f)
            continue;
        if (fgets(line, sizeof(line), f)) {
            char *p = strrchr(line, ')');
            int field = 2;
            long value = 0;
            /* after ')' come fields 3, 4, ...; nice is field 19 */
            for (char *tok = p ? strtok(p + 1, " ") : NULL; tok; tok = strtok(NULL, " "))
                if (++field == 19) {
                    value = atol(tok);
                    break;
                }
            count += field == 19 && value == nice;
        }
        fclose(f);
    }
    if (tasks)
        closedir(tasks);
    return count;
}

static void run(const char *what, MPI_Win win, int64_t * words, int rank, int nprocs)
{
    static int64_t olds[N_OPS];
    int next = (rank + 1) % nprocs, flag;
    unsigned seed = 12345u + (unsigned) rank;
    const int64_t one = 1;

    for (int i = 0; i < N_WORDS; i++)
        words[i] = -1;
    words[COUNTER] = 0;
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK_MPI(MPI_Win_lock_all(0, win));
    for (int64_t i = 0; i < N_OPS; i++) {
        CHECK_MPI(MPI_Fetch_and_op(&one, &olds[i], MPI_INT64_T, next, COUNTER, MPI_SUM, win));
        CHECK_MPI(MPI_Put(&i, 1, MPI_INT64_T, next, PUT_WORDS + i, 1, MPI_INT64_T, win));
        CHECK_MPI(MPI_Win_flush(next, win));
        compute(&seed);
        if (i % 8 == 0)
            CHECK_MPI(MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag,
                                 MPI_STATUS_IGNORE));
    }
    CHECK_MPI(MPI_Win_unlock_all(win));
    MPI_Barrier(MPI_COMM_WORLD);

    int bad_olds = 0, bad_words = 0;
    for (int i = 0; i < N_OPS; i++) {
        bad_olds += olds[i] != i;
        bad_words += words[PUT_WORDS + i] != i;
    }
    CHECK(bad_olds == 0, "%s: %d fetch_and_ops fetched another value than their iteration "
          "number", what, bad_olds);
    CHECK(words[COUNTER] == N_OPS, "%s: counter %lld, expected %d", what,
          (long long) words[COUNTER], N_OPS);
    CHECK(bad_words == 0, "%s: %d put words missing or wrong", what, bad_words);
}

int main(int argc, char **argv)
{
    int rank, nprocs, provided;

    if (argc > 1 && strcmp(argv[1], "tcp") == 0)
        setenv("UCX_TLS", "tcp,self", 1);
    setenv("MPIR_CVAR_NBRMA_ASYNC_PROGRESS", "1", 1);
    char nice[8];
    snprintf(nice, sizeof(nice), "%d", AGENT_NICE);
    setenv("MPIR_CVAR_NBRMA_ASYNC_PROGRESS_NICE", nice, 1);
    MPI_Init_thread(&argc, &argv, MPI_THREAD_SINGLE, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    CHECK(provided == MPI_THREAD_SINGLE, "asked for MPI_THREAD_SINGLE with the agent, got "
          "thread level %d", provided);
    /* the agent sets its nice value as it starts, maybe a moment after MPI_Init */
    int at_nice = 0;
    for (int tries = 0; tries < 1000 && (at_nice = threads_at_nice(AGENT_NICE)) == 0; tries++)
        usleep(1000);
    CHECK(at_nice == 1, "%d threads at nice %d, expected the agent alone", at_nice, AGENT_NICE);
    if (nprocs < 2) {
        fprintf(stderr, "run with 2 or more processes\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    for (int kind = 0; kind < 2; kind++) {
        MPI_Win win;
        int64_t *words;
        const MPI_Aint bytes = N_WORDS * sizeof(int64_t);

        if (kind == 0) {
            CHECK_MPI(MPI_Win_allocate(bytes, sizeof(int64_t), MPI_INFO_NULL, MPI_COMM_WORLD,
                                       &words, &win));
        } else {
            words = malloc(bytes);
            CHECK(words != NULL, "malloc failed");
            CHECK_MPI(MPI_Win_create(words, bytes, sizeof(int64_t), MPI_INFO_NULL,
                                     MPI_COMM_WORLD, &win));
        }
        run(kind == 0 ? "allocate" : "create over malloc", win, words, rank, nprocs);
        CHECK_MPI(MPI_Win_free(&win));
        if (kind == 1)
            free(words);
    }
    return report_and_finalize();
}
