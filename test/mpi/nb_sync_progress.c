/*
 * A process that loops on nonblocking synchronization calls which complete at
 * once (MPIX_Win_iflush and MPIX_Win_iflush_local with nothing in flight,
 * MPIX_Win_ilock of its own rank) and waits on their requests, or that polls
 * its window with MPI_Win_sync, makes progress for its peers, as one that
 * loops on the blocking calls does: MPI promises progress to a process that
 * keeps calling MPI. Its peer's two lock epochs in a row (lock, put, unlock),
 * which over tcp need the looping process's CPU, must both complete while it
 * loops: the second put's value, checked in the looping process's memory,
 * shows that the first unlock was answered. Before the fix such a request
 * waited until the loop ended (the requests were complete at once, and
 * MPI_Wait on a complete request enters no progress; MPICH's MPI_Win_sync
 * makes none, in vanilla 4.0.2 too). Also on windows without nonblocking
 * epochs (MPICH's synchronization), with the argument
 * MPIR_CVAR_NBRMA_EPOCHS=0.
 */
#include "nbrma_test.h"

#define LOOP_LIMIT 20.0         /* seconds the looping rank waits for the put, at most */

/* One call of the loop on rank 0 (`mode`), then its wait. */
static void call_once(const char *mode, MPI_Win win)
{
    MPI_Request req;

    if (!strcmp(mode, "iflush"))
        CHECK_MPI(MPIX_Win_iflush(1, win, &req));
    else if (!strcmp(mode, "iflush_local"))
        CHECK_MPI(MPIX_Win_iflush_local(1, win, &req));
    else if (!strcmp(mode, "win_sync")) {
        CHECK_MPI(MPI_Win_sync(win));
        return;
    } else {
        CHECK_MPI(MPIX_Win_ilock(MPI_LOCK_SHARED, 0, 0, win, &req));
        CHECK_MPI(MPI_Wait(&req, MPI_STATUS_IGNORE));
        CHECK_MPI(MPIX_Win_iunlock(0, win, &req));
    }
    CHECK_MPI(MPI_Wait(&req, MPI_STATUS_IGNORE));
}

static void loop_while_peer_locks(const char *mode)
{
    int rank, *base;
    MPI_Win win;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    CHECK_MPI(MPI_Win_allocate(sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &base,
                               &win));
    *base = 0;
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) {
        volatile int *seen = base;
        double start = MPI_Wtime();
        long calls = 0;
        int lock_all = strcmp(mode, "ilock_self") != 0;

        if (lock_all)
            CHECK_MPI(MPI_Win_lock_all(0, win));
        /* MPI calls only of the kind under test until the put is seen (the
         * window is unified: the put becomes visible without MPI_Win_sync) */
        while (*seen != 2 && MPI_Wtime() - start < LOOP_LIMIT * time_scale()) {
            call_once(mode, win);
            calls++;
        }
        if (lock_all)
            CHECK_MPI(MPI_Win_unlock_all(win));
        CHECK(*seen == 2, "%s: the peer's second epoch did not complete while this rank "
              "looped (%ld calls in %.1f s; value %d)", mode, calls, MPI_Wtime() - start, *seen);
    } else {
        for (int value = 1; value <= 2; value++) {
            CHECK_MPI(MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win));
            CHECK_MPI(MPI_Put(&value, 1, MPI_INT, 0, 0, 1, MPI_INT, win));
            CHECK_MPI(MPI_Win_unlock(0, win));
        }
    }
    CHECK_MPI(MPI_Win_free(&win));
}

int main(int argc, char **argv)
{
    use_tcp_only_if_asked(argc, argv);
    init_with_processes(&argc, &argv, 2);
    loop_while_peer_locks("iflush");
    loop_while_peer_locks("iflush_local");
    /* windows without nonblocking epochs (MPIR_CVAR_NBRMA_EPOCHS=0, MPICH's
     * own synchronization) take MPIX_Win_iflush and its variants only */
    if (!getenv("MPIR_CVAR_NBRMA_EPOCHS") || strcmp(getenv("MPIR_CVAR_NBRMA_EPOCHS"), "0"))
        loop_while_peer_locks("ilock_self");
    loop_while_peer_locks("win_sync");
    return report_and_finalize();
}
