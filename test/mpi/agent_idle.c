/*
 * The progress agent (MPIR_CVAR_NBRMA_ASYNC_PROGRESS) arms only while its
 * process has a window: before the first window and after the last, no
 * message wakes it (MPIDI_NBRMA_agent_windows, common/nbrma_progress_agent.c).
 *
 * In each phase rank 1 sleeps outside MPI while rank 0 sends it N_MSGS small
 * messages GAP_US apart; rank 1 then receives them (values checked) and
 * counts how often its agent thread ("nbrma-agent") went to sleep meanwhile
 * (voluntary context switches in /proc/self/task/<tid>/status: one per
 * sleep, so one per wake-up).
 *   before   no window yet: at most QUIET sleeps
 *   window   an MPI_Win_allocate window exists: at least N_MSGS / 4 (the
 *            agent is armed and each message wakes it: the proof that the
 *            count sees wake-ups)
 *   after    the window freed: at most QUIET again
 *
 *   agent_idle [tcp]   (tcp: UCX_TLS=tcp,self, the path between nodes)
 * Run with 2 processes.
 */
#include "nbrma_test.h"
#include <dirent.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define N_MSGS 40
#define GAP_US 5000
#define QUIET 5

/* The voluntary context switches of this process's thread named `name`, or
 * -1 when there is none. */
static long thread_sleeps(const char *name)
{
    DIR *tasks = opendir("/proc/self/task");
    struct dirent *t;
    long sleeps = -1;

    CHECK(tasks != NULL, "cannot read /proc/self/task");
    while (tasks && sleeps < 0 && (t = readdir(tasks)) != NULL) {
        char path[300], line[256];
        FILE *f;

        if (t->d_name[0] == '.')
            continue;
        snprintf(path, sizeof(path), "/proc/self/task/%s/comm", t->d_name);
        if ((f = fopen(path, "r")) == NULL)
            continue;
        bool match = fgets(line, sizeof(line), f) && strncmp(line, name, strlen(name)) == 0;
        fclose(f);
        if (!match)
            continue;
        snprintf(path, sizeof(path), "/proc/self/task/%s/status", t->d_name);
        if ((f = fopen(path, "r")) == NULL)
            continue;
        while (fgets(line, sizeof(line), f))
            if (sscanf(line, "voluntary_ctxt_switches: %ld", &sleeps) == 1)
                break;
        fclose(f);
    }
    if (tasks)
        closedir(tasks);
    return sleeps;
}

/* One phase; rank 1 returns how often its agent slept meanwhile. */
static long phase(int rank, int round)
{
    long before = 0, after = 0;

    CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == 0) {
        for (int i = 0; i < N_MSGS; i++) {
            int value = round * 1000 + i;
            usleep(GAP_US);
            CHECK_MPI(MPI_Send(&value, 1, MPI_INT, 1, i, MPI_COMM_WORLD));
        }
    } else {
        MPI_Request reqs[N_MSGS];
        int got[N_MSGS];

        before = thread_sleeps("nbrma-agent");
        CHECK(before >= 0, "no thread named nbrma-agent: the agent does not run");
        usleep(N_MSGS * GAP_US * 2);    /* outside MPI while the messages come */
        after = thread_sleeps("nbrma-agent");
        for (int i = 0; i < N_MSGS; i++)
            CHECK_MPI(MPI_Irecv(&got[i], 1, MPI_INT, 0, i, MPI_COMM_WORLD, &reqs[i]));
        wait_all_or_abort(N_MSGS, reqs, 60.0, "the phase's messages");
        for (int i = 0; i < N_MSGS; i++)
            CHECK(got[i] == round * 1000 + i, "round %d message %d: got %d", round, i, got[i]);
    }
    CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
    return after - before;
}

int main(int argc, char **argv)
{
    int rank;
    MPI_Win win;
    void *base;

    setenv("MPIR_CVAR_NBRMA_ASYNC_PROGRESS", "1", 1);
    use_tcp_only_if_asked(argc, argv);
    rank = init_with_processes(&argc, &argv, 2);
    long quiet_before = phase(rank, 0);
    CHECK_MPI(MPI_Win_allocate(64, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win));
    long with_window = phase(rank, 1);
    CHECK_MPI(MPI_Win_free(&win));
    long quiet_after = phase(rank, 2);
    if (rank == 1) {
        CHECK(quiet_before <= QUIET, "the agent slept %ld times while %d messages came before "
              "any window (at most %d)", quiet_before, N_MSGS, QUIET);
        CHECK(with_window >= N_MSGS / 4, "the agent slept only %ld times while %d messages came "
              "with a window: armed, it should wake for them", with_window, N_MSGS);
        CHECK(quiet_after <= QUIET, "the agent slept %ld times while %d messages came after the "
              "last window was freed (at most %d)", quiet_after, N_MSGS, QUIET);
    }
    return report_and_finalize();
}
