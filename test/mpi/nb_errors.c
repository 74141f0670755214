/*
 * Wrong uses of the nonblocking epoch calls get the MPI error class the
 * standard names, through the window's error handler (MPI_ERRORS_RETURN here),
 * and the window goes on working afterwards.
 */
#include "nbrma_test.h"

/* `rc` is MPI_ERR_RMA_SYNC and its message holds `call` and `why`. */
static void expect_message(int rc, const char *call, const char *why)
{
    char msg[MPI_MAX_ERROR_STRING];
    int len = 0, cls = MPI_SUCCESS;
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_RMA_SYNC, "%s: error class %d, expected MPI_ERR_RMA_SYNC", call, cls);
    if (rc == MPI_SUCCESS)
        return;
    MPI_Error_string(rc, msg, &len);
    CHECK(strstr(msg, call) && strstr(msg, why), "%s: the message does not say '%s': %s",
          call, why, msg);
}

static int rank, nprocs;

int main(int argc, char **argv)
{
    long *base, one = 1;
    MPI_Win win, dyn;
    MPI_Request req;
    MPI_Group world_g, self_g, bad_g;
    MPI_Comm half;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    CHECK_MPI(allocate_engine_win(SMALL_WIN_BYTES, sizeof(long), MPI_COMM_WORLD, &base, &win));
    MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN);
    MPI_Comm_group(MPI_COMM_WORLD, &world_g);
    MPI_Group_incl(world_g, 1, &rank, &self_g);

    /* closing calls without an epoch */
    EXPECT_CLASS(MPIX_Win_icomplete(win, &req), MPI_ERR_RMA_SYNC);
    EXPECT_CLASS(MPIX_Win_iwait(win, &req), MPI_ERR_RMA_SYNC);
    EXPECT_CLASS(MPIX_Win_iunlock(0, win, &req), MPI_ERR_RMA_SYNC);
    EXPECT_CLASS(MPIX_Win_iunlock_all(win, &req), MPI_ERR_RMA_SYNC);
    EXPECT_CLASS(MPI_Win_unlock(0, win), MPI_ERR_RMA_SYNC);
    /* an RMA call and a flush outside any epoch */
    EXPECT_CLASS(MPI_Put(&one, 1, MPI_LONG, 0, 0, 1, MPI_LONG, win), MPI_ERR_RMA_SYNC);
    EXPECT_CLASS(MPIX_Win_iflush(0, win, &req), MPI_ERR_RMA_SYNC);
    /* a rank outside the window */
    EXPECT_CLASS(MPIX_Win_ilock(MPI_LOCK_SHARED, nprocs, 0, win, &req), MPI_ERR_RANK);

    /* ifence inside a lock epoch; a lock on a rank locked already */
    CHECK_MPI(MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win));
    EXPECT_CLASS(MPIX_Win_ifence(0, win, &req), MPI_ERR_RMA_SYNC);
    EXPECT_CLASS(MPIX_Win_ilock(MPI_LOCK_SHARED, 0, 0, win, &req), MPI_ERR_RMA_SYNC);
    /* freeing the window with an open epoch is refused; the window stays */
    EXPECT_CLASS(MPI_Win_free(&win), MPI_ERR_RMA_SYNC);
    CHECK_MPI(MPI_Win_unlock(0, win));

    /* a lock epoch while exposed by post */
    CHECK_MPI(MPIX_Win_ipost(self_g, 0, win, &req));
    wait_or_abort(&req, 60.0, "MPIX_Win_ipost");
    EXPECT_CLASS(MPIX_Win_ilock(MPI_LOCK_EXCLUSIVE, rank, 0, win, &req), MPI_ERR_RMA_SYNC);
    CHECK_MPI(MPIX_Win_istart(self_g, 0, win, &req));
    wait_or_abort(&req, 60.0, "MPIX_Win_istart");
    CHECK_MPI(MPI_Put(&one, 1, MPI_LONG, rank, 5, 1, MPI_LONG, win));
    CHECK_MPI(MPI_Win_complete(win));
    CHECK_MPI(MPI_Win_wait(win));
    CHECK(base[5] == 1, "self put in PSCW left %ld", base[5]);

    /* a group that is not a subset of the window's group */
    MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &half);
    if (nprocs > 1) {
        MPI_Win sub;
        long *sub_base;
        int other = (rank + 1) % nprocs;        /* never in my half when nprocs is even */
        CHECK_MPI(allocate_engine_win(SMALL_WIN_BYTES, sizeof(long), half, &sub_base, &sub));
        MPI_Win_set_errhandler(sub, MPI_ERRORS_RETURN);
        MPI_Group_incl(world_g, 1, &other, &bad_g);
        if (nprocs % 2 == 0)
            EXPECT_CLASS(MPIX_Win_istart(bad_g, 0, sub, &req), MPI_ERR_GROUP);
        MPI_Group_free(&bad_g);
        CHECK_MPI(MPI_Win_free(&sub));
    }
    MPI_Comm_free(&half);

    /* a dynamic window whose engine the info key switched off keeps MPICH's
     * synchronization: the nonblocking epoch calls say so, naming the
     * user's call and the key, instead of misbehaving */
    {
        MPI_Info off;
        MPI_Info_create(&off);
        MPI_Info_set(off, "mpich_nbrma_epochs", "false");
        CHECK_MPI(MPI_Win_create_dynamic(off, MPI_COMM_WORLD, &dyn));
        MPI_Info_free(&off);
    }
    MPI_Win_set_errhandler(dyn, MPI_ERRORS_RETURN);
    EXPECT_CLASS(MPIX_Win_ifence(0, dyn, &req), MPI_ERR_RMA_SYNC);
    expect_message(MPIX_Win_ilock_all(0, dyn, &req), "MPIX_Win_ilock_all",
                   "it was created with the info key mpich_nbrma_epochs=false");
    {
        char value[MPI_MAX_INFO_VAL + 1];
        int flag = win_info_value(dyn, "mpich_nbrma_epochs", value);
        CHECK(flag && value[0] == 'f', "MPI_Win_get_info of the dynamic window with the engine "
              "off does not report mpich_nbrma_epochs=false");
    }
    CHECK_MPI(MPI_Win_free(&dyn));
    {
        MPI_Info off;
        long *off_base;
        MPI_Win off_win;
        MPI_Info_create(&off);
        MPI_Info_set(off, "mpich_nbrma_epochs", "false");
        CHECK_MPI(MPI_Win_allocate(SMALL_WIN_BYTES, sizeof(long), off, MPI_COMM_WORLD, &off_base,
                                   &off_win));
        MPI_Info_free(&off);
        MPI_Win_set_errhandler(off_win, MPI_ERRORS_RETURN);
        expect_message(MPIX_Win_ipost(MPI_GROUP_EMPTY, 0, off_win, &req), "MPIX_Win_ipost",
                       "it was created with the info key mpich_nbrma_epochs=false");
        CHECK_MPI(MPI_Win_free(&off_win));
    }

    /* a fence epoch used only by operations that go uncounted (rules G1 and
     * G2; performed at return on shared memory) is a real epoch: no
     * other epoch and no MPI_Win_free may follow it without a fence; an
     * unused one may be followed by either */
    base[5] = 0;
    CHECK_MPI(MPI_Win_fence(0, win));
    CHECK_MPI(MPI_Put(&one, 1, MPI_LONG, (rank + 1) % nprocs, 5, 1, MPI_LONG, win));
    EXPECT_CLASS(MPI_Win_lock(MPI_LOCK_SHARED, rank, 0, win), MPI_ERR_RMA_SYNC);
    EXPECT_CLASS(MPI_Win_free(&win), MPI_ERR_RMA_SYNC);
    CHECK_MPI(MPI_Win_fence(0, win));
    CHECK(base[5] == 1, "put of the used fence epoch left %ld, expected 1", base[5]);
    CHECK_MPI(MPI_Win_lock(MPI_LOCK_SHARED, rank, 0, win));
    CHECK_MPI(MPI_Win_unlock(rank, win));

    /* the window still works */
    CHECK_MPI(MPI_Win_fence(0, win));
    CHECK_MPI(MPI_Accumulate(&one, 1, MPI_LONG, 0, 7, 1, MPI_LONG, MPI_SUM, win));
    CHECK_MPI(MPI_Win_fence(0, win));
    if (rank == 0)
        CHECK(base[7] == nprocs, "accumulate after the errors left %ld, expected %d", base[7],
              nprocs);
    {
        char value[MPI_MAX_INFO_VAL + 1];
        int flag = win_info_value(win, "mpich_nbrma_epochs", value);
        CHECK(flag && value[0] == 't', "MPI_Win_get_info does not report mpich_nbrma_epochs");
    }
    MPI_Group_free(&self_g);
    MPI_Group_free(&world_g);
    CHECK_MPI(MPI_Win_free(&win));

    /* only rank 0 frees with an epoch open: it is refused there, and once
     * rank 0 closed its epoch and frees again, every process's MPI_Win_free
     * completes (the others wait for it in the same collective) */
    CHECK_MPI(allocate_engine_win(SMALL_WIN_BYTES, sizeof(long), MPI_COMM_WORLD, &base, &win));
    MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN);
    if (rank == 0) {
        CHECK_MPI(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, win));
        EXPECT_CLASS(MPI_Win_free(&win), MPI_ERR_RMA_SYNC);
        CHECK_MPI(MPI_Put(&one, 1, MPI_LONG, 0, 3, 1, MPI_LONG, win));
        CHECK_MPI(MPI_Win_unlock(0, win));
        CHECK(base[3] == 1, "put after the refused free left %ld", base[3]);
    }
    CHECK_MPI(MPI_Win_free(&win));
    return report_and_finalize();
}
