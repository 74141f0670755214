/*
 * The progress agent and lock words: a lock request that reaches a target as
 * a message (from a process without a lock word toward it) takes the
 * target's own lock word before the target grants it; while a same-host
 * origin holds that word, the target's engine waits. The target sleeps
 * outside MPI meanwhile: the origin's release must wake its agent
 * (formats/lock_word.h, NBRMA_LOCK_WORD_OWNER_WAITING), or the request waits
 * until the target wakes.
 *
 *   rank 0  the target: sleeps outside MPI, then writes its awake word
 *   rank 1  holds rank 0's lock word exclusively (a same-host origin with a
 *           mailbox), puts, and releases it 0.2 s into the target's sleep
 *   rank 2  without a mailbox (info mpich_nbrma_mailboxes false: reached
 *           and reaching by messages): locks rank 0 exclusively, reads the
 *           awake word and rank 1's put, unlocks
 *
 *   agent_word_waits on|off [seconds]
 * on: the agent runs, and rank 2's epoch must end before the target wakes;
 * off: no agent, and it must not (the proof that the check can fail). On one
 * host only (rank 1 must map rank 0's mailbox). Run with 3 processes.
 */
#include "nbrma_test.h"
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum { AWAKE, FROM_HOLDER, N_WORDS };

int main(int argc, char **argv)
{
    bool agent = argc > 1 && strcmp(argv[1], "on") == 0;
    unsigned sleep_s = argc > 2 ? (unsigned) atoi(argv[2]) : 2;
    int rank;
    int64_t *words, awake = -1, seen = -1;
    MPI_Info info;
    MPI_Win win;

    if (argc < 2 || (!agent && strcmp(argv[1], "off") != 0)) {
        fprintf(stderr, "usage: agent_word_waits on|off [seconds]\n");
        return 2;
    }
    setenv("MPIR_CVAR_NBRMA_ASYNC_PROGRESS", agent ? "1" : "0", 1);
    rank = init_with_processes(&argc, &argv, 3);
    CHECK_MPI(MPI_Info_create(&info));
    CHECK_MPI(MPI_Info_set(info, "mpich_nbrma_mailboxes", rank == 2 ? "false" : "true"));
    CHECK_MPI(MPI_Win_allocate(N_WORDS * sizeof(int64_t), sizeof(int64_t), info,
                               MPI_COMM_WORLD, &words, &win));
    CHECK_MPI(MPI_Info_free(&info));
    memset(words, 0, N_WORDS * sizeof(int64_t));
    CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == 1) {
        char peers[MPI_MAX_INFO_VAL + 1];
        CHECK(win_info_value(win, "mpich_nbrma_mailbox_peers", peers) && atoi(peers) >= 1,
              "rank 1 maps no peer's mailbox: no lock word toward rank 0 (one host only)");
        CHECK_MPI(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, win));
    }
    CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));        /* rank 1 holds the word */
    if (rank == 0) {
        sleep(sleep_s);
        __atomic_store_n(&words[AWAKE], 1, __ATOMIC_SEQ_CST);
    } else if (rank == 1) {
        const int64_t value = 77;
        usleep(200000);         /* the target's agent tried the word and sleeps */
        CHECK_MPI(MPI_Put(&value, 1, MPI_INT64_T, 0, FROM_HOLDER, 1, MPI_INT64_T, win));
        CHECK_MPI(MPI_Win_unlock(0, win));
    } else {
        CHECK_MPI(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, win));
        CHECK_MPI(MPI_Get(&awake, 1, MPI_INT64_T, 0, AWAKE, 1, MPI_INT64_T, win));
        CHECK_MPI(MPI_Get(&seen, 1, MPI_INT64_T, 0, FROM_HOLDER, 1, MPI_INT64_T, win));
        CHECK_MPI(MPI_Win_unlock(0, win));
        CHECK(awake == 0 || awake == 1, "awake word %lld", (long long) awake);
        CHECK(seen == 77, "read %lld of the holder's put, expected 77: the locks overlapped",
              (long long) seen);
        if (agent)
            CHECK(awake == 0, "the lock waited for the target to wake although the agent runs");
        else
            CHECK(awake == 1, "without the agent the lock did not wait for the target: the test "
                  "cannot tell whether the agent helps");
    }
    CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == 0)
        CHECK(words[FROM_HOLDER] == 77, "the holder's put: %lld at the target",
              (long long) words[FROM_HOLDER]);
    CHECK_MPI(MPI_Win_free(&win));
    return report_and_finalize();
}
