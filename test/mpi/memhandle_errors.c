/*
 * Bad input to the memory-handle calls and to memory-handle windows returns an
 * error of the documented class, and the process goes on working: at the end
 * a put through a fresh memory-handle window arrives at its owner.
 *
 * Two ranks or more (argument "tcp": UCX over tcp only); rank 0 and rank 1
 * exchange handles. All windows return errors (MPI_ERRORS_RETURN on the
 * parents; memory-handle windows inherit it).
 */
#include "nbrma_test.h"
#include <string.h>

#define BUF_LONGS 512
#define HSIZE MPIX_MAX_MEMHANDLE_SIZE

static MPI_Win make_dynamic(void)
{
    MPI_Win win;
    CHECK_MPI(MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &win));
    CHECK_MPI(MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN));
    return win;
}

/* The handle of my peer: rank 0's peer is rank 1, everybody else's is rank 0. */
static void get_peer_handle(const char *mine, char *peer)
{
    char h0[HSIZE], h1[HSIZE];
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    memcpy(h0, mine, HSIZE);
    memcpy(h1, mine, HSIZE);
    MPI_Bcast(h0, HSIZE, MPI_BYTE, 0, MPI_COMM_WORLD);
    MPI_Bcast(h1, HSIZE, MPI_BYTE, 1, MPI_COMM_WORLD);
    memcpy(peer, rank == 0 ? h1 : h0, HSIZE);
}

int main(int argc, char **argv)
{
    int rank, nprocs, size;
    long *buf;
    char mine[HSIZE], peer[HSIZE], bad[HSIZE];
    MPI_Win parent, other_parent, allocated, mh, scratch;
    void *alloc_base;

    use_tcp_only_if_asked(argc, argv);
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    const int peer_rank = rank == 0 ? 1 : 0;  /* ranks >= 2 use rank 0's handle */

    buf = calloc(BUF_LONGS, sizeof(long));
    parent = make_dynamic();
    other_parent = make_dynamic();
    CHECK_MPI(MPI_Win_allocate(BUF_LONGS * sizeof(long), sizeof(long), MPI_INFO_NULL,
                               MPI_COMM_WORLD, &alloc_base, &allocated));
    CHECK_MPI(MPI_Win_set_errhandler(allocated, MPI_ERRORS_RETURN));

    /* --- MPIX_Memhandle_create ----------------------------------------- */
    EXPECT_CLASS(MPIX_Memhandle_create(buf, 64, MPI_INFO_NULL, allocated, mine, &size),
                 MPI_ERR_WIN);
    EXPECT_CLASS(MPIX_Memhandle_create(NULL, 64, MPI_INFO_NULL, parent, mine, &size),
                 MPI_ERR_ARG);
    EXPECT_CLASS(MPIX_Memhandle_create(buf, -1, MPI_INFO_NULL, parent, mine, &size),
                 MPI_ERR_SIZE);
    EXPECT_CLASS(MPIX_Memhandle_create(buf, 64, MPI_INFO_NULL, parent, NULL, &size),
                 MPI_ERR_ARG);

    memset(mine, 0, HSIZE);
    CHECK_MPI(MPIX_Memhandle_create(buf, BUF_LONGS * sizeof(long), MPI_INFO_NULL, parent,
                                    mine, &size));
    get_peer_handle(mine, peer);

    /* --- MPIX_Win_from_memhandle with bad handles ------------------------ */
    /* truncated: only the first half arrived, the rest of the buffer is zero */
    memset(bad, 0, HSIZE);
    memcpy(bad, peer, size / 2);
    EXPECT_CLASS(MPIX_Win_from_memhandle(bad, 64, 1, MPI_INFO_NULL, peer_rank, parent, &scratch),
                 MPI_ERR_ARG);
    /* truncated to the header: the packed rkey is missing */
    memset(bad, 0, HSIZE);
    memcpy(bad, peer, 56);
    EXPECT_CLASS(MPIX_Win_from_memhandle(bad, 64, 1, MPI_INFO_NULL, peer_rank, parent, &scratch),
                 MPI_ERR_ARG);
    /* one bit flipped in the last byte (the rkey), then in the address */
    memcpy(bad, peer, HSIZE);
    bad[size - 1] ^= 1;
    EXPECT_CLASS(MPIX_Win_from_memhandle(bad, 64, 1, MPI_INFO_NULL, peer_rank, parent, &scratch),
                 MPI_ERR_ARG);
    memcpy(bad, peer, HSIZE);
    bad[33] ^= 0x10;
    EXPECT_CLASS(MPIX_Win_from_memhandle(bad, 64, 1, MPI_INFO_NULL, peer_rank, parent, &scratch),
                 MPI_ERR_ARG);
    /* not a handle at all */
    memset(bad, 0x5a, HSIZE);
    EXPECT_CLASS(MPIX_Win_from_memhandle(bad, 64, 1, MPI_INFO_NULL, peer_rank, parent, &scratch),
                 MPI_ERR_ARG);
    /* another window's handle, the wrong target, too large a window */
    EXPECT_CLASS(MPIX_Win_from_memhandle(peer, 64, 1, MPI_INFO_NULL, peer_rank, other_parent,
                                         &scratch), MPI_ERR_WIN);
    EXPECT_CLASS(MPIX_Win_from_memhandle(peer, 64, 1, MPI_INFO_NULL, rank, parent, &scratch),
                 MPI_ERR_RANK);
    EXPECT_CLASS(MPIX_Win_from_memhandle(peer, BUF_LONGS * sizeof(long) + 1, 1, MPI_INFO_NULL,
                                         peer_rank, parent, &scratch), MPI_ERR_RMA_RANGE);
    EXPECT_CLASS(MPIX_Win_from_memhandle(peer, 64, 0, MPI_INFO_NULL, peer_rank, parent, &scratch),
                 MPI_ERR_DISP);
    EXPECT_CLASS(MPIX_Win_from_memhandle(peer, 64, 1, MPI_INFO_NULL, peer_rank, allocated, &scratch),
                 MPI_ERR_WIN);

    /* --- a good window, used wrongly ------------------------------------- */
    CHECK_MPI(MPIX_Win_from_memhandle(peer, 64 * sizeof(long), sizeof(long), MPI_INFO_NULL,
                                      peer_rank, parent, &mh));
    /* a memory-handle window cannot be a parent */
    EXPECT_CLASS(MPIX_Memhandle_create(buf, 64, MPI_INFO_NULL, mh, bad, &size), MPI_ERR_WIN);
    {
        long v = 1, r;
        /* no epoch on the parent yet */
        EXPECT_CLASS(MPI_Put(&v, 1, MPI_LONG, peer_rank, 0, 1, MPI_LONG, mh), MPI_ERR_RMA_SYNC);
        EXPECT_CLASS(MPI_Accumulate(&v, 1, MPI_LONG, peer_rank, 0, 1, MPI_LONG, MPI_SUM, mh),
                     MPI_ERR_RMA_SYNC);
        EXPECT_CLASS(MPI_Win_flush(peer_rank, mh), MPI_ERR_RMA_SYNC);
        {
            MPI_Request req = MPI_REQUEST_NULL;
            EXPECT_CLASS(MPIX_Win_iflush(peer_rank, mh, &req), MPI_ERR_RMA_SYNC);
            CHECK(req == MPI_REQUEST_NULL, "a refused flush should leave no request");
        }
        /* epochs are the parent's */
        EXPECT_CLASS(MPI_Win_lock(MPI_LOCK_SHARED, peer_rank, 0, mh), MPI_ERR_RMA_SYNC);
        EXPECT_CLASS(MPI_Win_lock_all(0, mh), MPI_ERR_RMA_SYNC);
        EXPECT_CLASS(MPI_Win_fence(0, mh), MPI_ERR_RMA_SYNC);
        EXPECT_CLASS(MPI_Win_sync(mh), MPI_ERR_RMA_SYNC);
        EXPECT_CLASS(MPI_Win_attach(mh, buf, 64), MPI_ERR_RMA_FLAVOR);

        CHECK_MPI(MPI_Win_lock(MPI_LOCK_SHARED, peer_rank, 0, parent));
        EXPECT_CLASS(MPI_Win_unlock(peer_rank, mh), MPI_ERR_RMA_SYNC);
        {
            /* nonblocking flushes go to the parent, as the blocking ones;
             * other nonblocking synchronization is the parent's */
            MPI_Request req = MPI_REQUEST_NULL;
            CHECK_MPI(MPIX_Win_iflush(peer_rank, mh, &req));
            wait_or_abort(&req, 60.0, "MPIX_Win_iflush on a memory-handle window");
            CHECK_MPI(MPIX_Win_iflush_local_all(mh, &req));
            wait_or_abort(&req, 60.0, "MPIX_Win_iflush_local_all on a memory-handle window");
            req = MPI_REQUEST_NULL;
            EXPECT_CLASS(MPIX_Win_iflush(rank, mh, &req), MPI_ERR_RANK);
            EXPECT_CLASS(MPIX_Win_iunlock(peer_rank, mh, &req), MPI_ERR_RMA_SYNC);
            EXPECT_CLASS(MPIX_Win_ilock_all(0, mh, &req), MPI_ERR_RMA_SYNC);
            CHECK(req == MPI_REQUEST_NULL, "a refused call should leave no request");
        }
        /* beyond the window of 64 longs; at a rank that is not the target */
        EXPECT_CLASS(MPI_Put(&v, 1, MPI_LONG, peer_rank, 64, 1, MPI_LONG, mh),
                     MPI_ERR_RMA_RANGE);
        EXPECT_CLASS(MPI_Get(&r, 2, MPI_LONG, peer_rank, 63, 2, MPI_LONG, mh),
                     MPI_ERR_RMA_RANGE);
        EXPECT_CLASS(MPI_Fetch_and_op(&v, &r, MPI_LONG, peer_rank, 64, MPI_SUM, mh),
                     MPI_ERR_RMA_RANGE);
        {
            int other = rank;   /* never my peer */
            EXPECT_CLASS(MPI_Put(&v, 1, MPI_LONG, other, 0, 1, MPI_LONG, mh), MPI_ERR_RANK);
            EXPECT_CLASS(MPI_Win_flush(other, mh), MPI_ERR_RANK);
        }
        CHECK_MPI(MPI_Win_unlock(peer_rank, parent));
    }

    /* --- MPIX_Memhandle_release ------------------------------------------ */
    EXPECT_CLASS(MPIX_Memhandle_release(mine, other_parent), MPI_ERR_WIN);
    if (rank < 2)       /* rank 0's and 1's peers are each other: not my handle */
        EXPECT_CLASS(MPIX_Memhandle_release(peer, parent), MPI_ERR_ARG);
    memcpy(bad, mine, HSIZE);
    bad[20] ^= 1;
    EXPECT_CLASS(MPIX_Memhandle_release(bad, parent), MPI_ERR_ARG);

    /* my own handle: a window on it works until the release, and not after */
    {
        MPI_Win self_mh;
        long v = 42;
        CHECK_MPI(MPIX_Win_from_memhandle(mine, 64 * sizeof(long), sizeof(long), MPI_INFO_NULL,
                                          rank, parent, &self_mh));
        CHECK_MPI(MPI_Win_lock(MPI_LOCK_SHARED, rank, 0, parent));
        CHECK_MPI(MPI_Put(&v, 1, MPI_LONG, rank, 5, 1, MPI_LONG, self_mh));
        CHECK_MPI(MPI_Win_unlock(rank, parent));
        CHECK(buf[5] == 42, "put through my own handle left %ld", buf[5]);

        MPI_Barrier(MPI_COMM_WORLD);    /* peers are done with my memory */
        CHECK_MPI(MPIX_Memhandle_release(mine, parent));
        EXPECT_CLASS(MPIX_Memhandle_release(mine, parent), MPI_ERR_ARG);       /* twice */
        EXPECT_CLASS(MPIX_Win_from_memhandle(mine, 64, 1, MPI_INFO_NULL, rank, parent, &scratch),
                     MPI_ERR_ARG);
        CHECK_MPI(MPI_Win_lock(MPI_LOCK_SHARED, rank, 0, parent));
        EXPECT_CLASS(MPI_Put(&v, 1, MPI_LONG, rank, 5, 1, MPI_LONG, self_mh), MPI_ERR_WIN);
        CHECK_MPI(MPI_Win_unlock(rank, parent));
        CHECK_MPI(MPI_Win_free(&self_mh));
    }
    CHECK_MPI(MPI_Win_free(&mh));

    /* --- a freed parent orphans its memory-handle windows ---------------- */
    {
        MPI_Win doomed = make_dynamic(), orphan;
        char h[HSIZE], ph[HSIZE];
        long v = 1;
        CHECK_MPI(MPIX_Memhandle_create(buf, 64, MPI_INFO_NULL, doomed, h, &size));
        get_peer_handle(h, ph);
        CHECK_MPI(MPIX_Win_from_memhandle(ph, 64, 1, MPI_INFO_NULL, peer_rank, doomed, &orphan));
        CHECK_MPI(MPI_Win_free(&doomed));       /* releases h, too */
        EXPECT_CLASS(MPI_Put(&v, 1, MPI_LONG, peer_rank, 0, 1, MPI_LONG, orphan), MPI_ERR_WIN);
        EXPECT_CLASS(MPI_Win_flush(peer_rank, orphan), MPI_ERR_WIN);
        CHECK_MPI(MPI_Win_free(&orphan));
    }

    /* --- and everything still works -------------------------------------- */
    {
        char h[HSIZE], ph[HSIZE];
        long v = 1000 + rank, expect = 1000 + peer_rank;
        memset(buf, 0, BUF_LONGS * sizeof(long));
        MPI_Barrier(MPI_COMM_WORLD);
        CHECK_MPI(MPIX_Memhandle_create(buf, BUF_LONGS * sizeof(long), MPI_INFO_NULL, parent,
                                        h, &size));
        /* everyone writes its number into rank 0's and rank 1's buffers */
        get_peer_handle(h, ph);
        CHECK_MPI(MPIX_Win_from_memhandle(ph, BUF_LONGS * sizeof(long), sizeof(long),
                                          MPI_INFO_NULL, peer_rank, parent, &mh));
        CHECK_MPI(MPI_Win_lock(MPI_LOCK_SHARED, peer_rank, 0, parent));
        CHECK_MPI(MPI_Put(&v, 1, MPI_LONG, peer_rank, 10 + rank, 1, MPI_LONG, mh));
        CHECK_MPI(MPI_Win_unlock(peer_rank, parent));
        MPI_Barrier(MPI_COMM_WORLD);
        if (rank < 2)
            CHECK(buf[10 + peer_rank] == expect, "the last put left %ld, expected %ld",
                  buf[10 + peer_rank], expect);
        CHECK_MPI(MPI_Win_free(&mh));
        MPI_Barrier(MPI_COMM_WORLD);
        CHECK_MPI(MPIX_Memhandle_release(h, parent));
    }

    CHECK_MPI(MPI_Win_free(&allocated));
    CHECK_MPI(MPI_Win_free(&other_parent));
    CHECK_MPI(MPI_Win_free(&parent));
    free(buf);
    return report_and_finalize();
}
