/*
 * The progress agent and an origin that waits for a peer's busy lock word:
 * MPIX_Win_ilock toward a same-host peer takes the peer's lock word with
 * the CPU's atomics, and while another process holds the word the origin's
 * engine tries again at each progress call. The release is a plain store
 * that wakes nobody but the word's owner, so an origin that computes
 * outside MPI after MPIX_Win_ilock got the lock only at its next MPI call,
 * agent or not. With the agent it now gets it while it computes (the agent
 * looks again every millisecond while such a lock waits).
 *
 *   rank 0  the target: reads its window 0.6 s into the origin's
 *           computation, outside MPI
 *   rank 1  holds rank 0's lock word exclusively and releases it 0.2 s in,
 *           then stays outside MPI until the target has looked
 *   rank 2  the origin: MPIX_Win_ilock(rank 0), a put, MPIX_Win_iunlock,
 *           then computes (sleeps) 1 s outside MPI before it waits
 *
 *   agent_ilock_waits on|off
 * on: the agent runs, and the put must be at the target 0.6 s in; off: no
 * agent, and it must not (the proof that the check can fail). The data is
 * checked at the target in both cases once the origin waited. On one host
 * only (ranks 1 and 2 must map rank 0's mailbox). Run with 3 processes.
 */
#include "nbrma_test.h"
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#define VALUE 99

int main(int argc, char **argv)
{
    bool agent = argc > 1 && strcmp(argv[1], "on") == 0;
    int rank;
    int64_t *word, early = -1;
    MPI_Win win;

    if (argc < 2 || (!agent && strcmp(argv[1], "off") != 0)) {
        fprintf(stderr, "usage: agent_ilock_waits on|off\n");
        return 2;
    }
    setenv("MPIR_CVAR_NBRMA_ASYNC_PROGRESS", agent ? "1" : "0", 1);
    rank = init_with_processes(&argc, &argv, 3);
    CHECK_MPI(MPI_Win_allocate(sizeof(int64_t), sizeof(int64_t), MPI_INFO_NULL, MPI_COMM_WORLD,
                               &word, &win));
    *word = 0;
    if (rank != 0) {
        char peers[MPI_MAX_INFO_VAL + 1];
        CHECK(win_info_value(win, "mpich_nbrma_mailbox_peers", peers) && atoi(peers) >= 1,
              "rank %d maps no peer's mailbox: no lock word toward rank 0 (one host only)",
              rank);
    }
    CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == 1)
        CHECK_MPI(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, win));
    CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));        /* rank 1 holds the word */
    if (rank == 0) {
        usleep(600000);
        early = __atomic_load_n(word, __ATOMIC_SEQ_CST);
    } else if (rank == 1) {
        usleep(200000);
        CHECK_MPI(MPI_Win_unlock(0, win));
        /* outside MPI until the target has looked: this rank's barrier
         * messages would wake the origin's agent themselves */
        usleep(600000);
    } else {
        const int64_t value = VALUE;
        MPI_Request reqs[2];
        CHECK_MPI(MPIX_Win_ilock(MPI_LOCK_EXCLUSIVE, 0, 0, win, &reqs[0]));
        CHECK_MPI(MPI_Put(&value, 1, MPI_INT64_T, 0, 0, 1, MPI_INT64_T, win));
        CHECK_MPI(MPIX_Win_iunlock(0, win, &reqs[1]));
        sleep(1);               /* computes outside MPI */
        CHECK_MPI(MPI_Wait(&reqs[0], MPI_STATUS_IGNORE));
        CHECK_MPI(MPI_Wait(&reqs[1], MPI_STATUS_IGNORE));
    }
    CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == 0) {
        CHECK(early == 0 || early == VALUE, "0.6 s in the target held %lld", (long long) early);
        if (agent)
            CHECK(early == VALUE, "the lock waited for the origin's next MPI call although "
                  "the agent runs");
        else
            CHECK(early == 0, "without the agent the put arrived while the origin computed: "
                  "the test cannot tell whether the agent helps");
        CHECK(*word == VALUE, "the origin's put: %lld at the target", (long long) *word);
    }
    CHECK_MPI(MPI_Win_free(&win));
    return report_and_finalize();
}
