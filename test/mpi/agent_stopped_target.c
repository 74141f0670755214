/*
 * The progress agent and small puts toward window memory UCX does not map
 * (MPI_Win_create over malloc'ed memory of a peer on this host) on a window
 * that asked for local completion (MPI_Win_flush_local): below
 * MPIR_CVAR_NBRMA_CROSS_MEMORY_MIN_BYTES they take UCX's path, which the
 * target's CPU serves, while the target's application serves it; once the
 * target's agent alone serves (its application outside MPI), they are the
 * origin's own copies (rule R1 of core/src/route.cpp, the mailbox's
 * agent_serves word), which need no CPU of the target at all. Gets (and the
 * puts of a window without a local flush) are such copies at any size.
 *
 * Shown without timing: the origin stops the target process with SIGSTOP
 * (every thread of it, its agent too) and then puts, gets and locks, puts
 * and unlocks with small contiguous data, each completed on its own. A path
 * that needs the target's CPU cannot complete while it is stopped: an alarm
 * then continues the target (SIGCONT) and the run says so.
 *
 *   rank 1  the target: fills its window, then sleeps outside MPI
 *   rank 0  the origin: one fetch_and_op + flush while the target sleeps
 *           (an atomic on memory UCX cannot map: the target's agent serves
 *           it, and from then on says it alone serves), then stops the
 *           target, runs the operations, continues the target; both then
 *           check what the operations left and read
 *
 *   agent_stopped_target on|off
 * on: the agent runs, and no operation may wait for the stopped target;
 * off: no agent, and the operations must wait (the alarm fires): the proof
 * that the check can fail. On one host only. Run with 2 processes.
 */
#include "nbrma_test.h"
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <unistd.h>

#define N_OPS 200
#define ALARM_S 5
enum { FOP_COUNTER, PUT_WORDS, GET_WORDS = PUT_WORDS + N_OPS, LOCK_WORD = GET_WORDS + N_OPS,
    N_WORDS
};

static volatile sig_atomic_t alarm_fired;
static volatile pid_t target_pid;

static void continue_target(int sig)
{
    (void) sig;
    alarm_fired = 1;
    kill(target_pid, SIGCONT);
}

/* The state letter of /proc/<pid>/stat ('T': stopped), or 0. */
static char process_state(pid_t pid)
{
    char path[64], line[512];
    FILE *f;
    char *paren, state = 0;

    snprintf(path, sizeof(path), "/proc/%d/stat", (int) pid);
    f = fopen(path, "r");
    if (!f)
        return 0;
    if (fgets(line, sizeof(line), f) && (paren = strrchr(line, ')')) && paren[1] == ' ')
        state = paren[2];
    fclose(f);
    return state;
}

static void stop_target(pid_t pid)
{
    CHECK(kill(pid, SIGSTOP) == 0, "SIGSTOP to the target %d failed", (int) pid);
    for (int i = 0; i < 5000 && process_state(pid) != 'T'; i++)
        usleep(1000);
    CHECK(process_state(pid) == 'T', "the target %d did not stop", (int) pid);
}

static void origin_ops(MPI_Win win, int64_t * got)
{
    for (int64_t i = 0; i < N_OPS; i++) {
        int64_t value = 1000 + i;
        CHECK_MPI(MPI_Put(&value, 1, MPI_INT64_T, 1, PUT_WORDS + i, 1, MPI_INT64_T, win));
        CHECK_MPI(MPI_Win_flush(1, win));
        CHECK_MPI(MPI_Get(&got[i], 1, MPI_INT64_T, 1, GET_WORDS + i, 1, MPI_INT64_T, win));
        CHECK_MPI(MPI_Win_flush(1, win));
    }
}

int main(int argc, char **argv)
{
    bool agent = argc > 1 && strcmp(argv[1], "on") == 0;
    int rank;
    int64_t *words, got[N_OPS], one = 1, fetched = -1;
    int pid;
    MPI_Win win;

    if (argc < 2 || (!agent && strcmp(argv[1], "off") != 0)) {
        fprintf(stderr, "usage: agent_stopped_target on|off\n");
        return 2;
    }
    setenv("MPIR_CVAR_NBRMA_ASYNC_PROGRESS", agent ? "1" : "0", 1);
    rank = init_with_processes(&argc, &argv, 2);
    words = calloc(N_WORDS, sizeof(int64_t));
    CHECK(words != NULL, "out of memory");
    for (int i = 0; i < N_OPS; i++)
        words[GET_WORDS + i] = 5000 + i;
    CHECK_MPI(MPI_Win_create(words, N_WORDS * sizeof(int64_t), sizeof(int64_t), MPI_INFO_NULL,
                             MPI_COMM_WORLD, &win));
    /* the default threshold, and the target reached by cross-memory attach */
    check_win_info(win, "mpich_nbrma_cross_memory_peers", "1", "window over malloc");
    pid = (int) getpid();
    CHECK_MPI(MPI_Bcast(&pid, 1, MPI_INT, 1, MPI_COMM_WORLD));
    target_pid = (pid_t) pid;

    CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == 1) {
        sleep(2);       /* no MPI call; stopped and continued meanwhile */
    } else {
        /* the target holds no epoch: the locks below take its lock word */
        CHECK_MPI(MPI_Win_lock_all(0, win));
        /* a window that asked for local completion: R1 keeps its small puts
         * on UCX's path while the target's application serves them */
        CHECK_MPI(MPI_Win_flush_local(1, win));
        /* the target must be outside MPI, asleep, when this fetch_and_op
         * arrives: served by its application (still in the barrier) it would
         * not make the agent say that it alone serves */
        let_target_leave_mpi();
        usleep(400000);
        CHECK_MPI(MPI_Fetch_and_op(&one, &fetched, MPI_INT64_T, 1, FOP_COUNTER, MPI_SUM, win));
        CHECK_MPI(MPI_Win_flush(1, win));
        CHECK(fetched == 0, "fetch_and_op fetched %lld, expected 0", (long long) fetched);
        signal(SIGALRM, continue_target);
        stop_target(target_pid);
        alarm(ALARM_S);
        origin_ops(win, got);
        CHECK_MPI(MPI_Win_unlock_all(win));
        for (int64_t i = 0; i < N_OPS; i++) {
            int64_t value = 2000 + i;
            CHECK_MPI(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 1, 0, win));
            CHECK_MPI(MPI_Put(&value, 1, MPI_INT64_T, 1, LOCK_WORD, 1, MPI_INT64_T, win));
            CHECK_MPI(MPI_Win_unlock(1, win));
        }
        alarm(0);
        if (!alarm_fired)
            kill(target_pid, SIGCONT);
        for (int i = 0; i < N_OPS; i++)
            CHECK(got[i] == 5000 + i, "get %d read %lld, expected %d", i, (long long) got[i],
                  5000 + i);
        if (agent)
            CHECK(!alarm_fired, "the origin's puts, gets and locked puts waited for the "
                  "stopped target (continued after %d s)", ALARM_S);
        else
            CHECK(alarm_fired, "without the agent the operations did not wait for the stopped "
                  "target: the test cannot tell whether the agent's word helps");
    }
    CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == 1) {
        CHECK_MPI(MPI_Win_lock(MPI_LOCK_SHARED, 1, 0, win));    /* memory model: sync */
        CHECK(words[FOP_COUNTER] == 1, "fetch_and_op counter %lld", (long long) words[FOP_COUNTER]);
        for (int i = 0; i < N_OPS; i++)
            CHECK(words[PUT_WORDS + i] == 1000 + i, "put word %d: %lld", i,
                  (long long) words[PUT_WORDS + i]);
        CHECK(words[LOCK_WORD] == 2000 + N_OPS - 1, "locked puts left %lld",
              (long long) words[LOCK_WORD]);
        CHECK_MPI(MPI_Win_unlock(1, win));
    }
    CHECK_MPI(MPI_Win_free(&win));
    free(words);
    return report_and_finalize();
}
