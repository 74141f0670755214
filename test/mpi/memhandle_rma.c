/*
 * Memory-handle windows carry put, get, accumulate, get_accumulate,
 * fetch_and_op, compare_and_swap and their request-based variants to the
 * memory of the handle's owner, which checks what arrived.
 *
 * Every rank exposes a malloc'ed buffer through a dynamic window with
 * MPIX_Memhandle_create, all handles are exchanged, and every rank makes one
 * memory-handle window per owner (itself included: the owner may use its own
 * handle). Epochs are opened and closed on the parent window, as the paper
 * specifies; flushes, blocking and nonblocking, go to the parent; the
 * parent's unlock_all must complete what was issued through the
 * memory-handle windows without a flush of their own. Puts and gets toward
 * another owner go by RDMA with the handle's rkey (MPI_Win_get_info's
 * mpix_memhandle_put_get), except over tcp only (argument "tcp", or across
 * hosts), where UCX would emulate the RDMA with messages the owner answers:
 * there they travel on the parent as active messages.
 *
 *   memhandle_rma [tcp]
 */
#include "nbrma_test.h"
#include <string.h>

#define MAX_RANKS 8
#define PUT_SLOTS 8             /* longs per origin in the put region */
/* layout of every owner's buffer, in longs */
#define PUT_REGION      0                       /* origin o: [o*8, o*8+8) by MPI_Put */
#define RPUT_REGION     (PUT_REGION + MAX_RANKS * PUT_SLOTS)    /* by MPI_Rput */
#define VECTOR_REGION   (RPUT_REGION + MAX_RANKS * PUT_SLOTS)   /* strided, by MPI_Put */
#define UNLOCK_REGION   (VECTOR_REGION + 2 * MAX_RANKS * PUT_SLOTS)     /* put, no flush */
#define ACC_COUNTER     (UNLOCK_REGION + MAX_RANKS)
#define FOP_COUNTER     (ACC_COUNTER + 1)
#define GACC_COUNTER    (ACC_COUNTER + 2)
#define RACC_COUNTER    (ACC_COUNTER + 3)
#define CAS_SLOT        (ACC_COUNTER + 4)
#define BUF_LONGS       512     /* 4 KiB */

static long put_value(int origin, int owner, int i)
{
    return 1000000L * (origin + 1) + 1000L * (owner + 1) + i;
}

int main(int argc, char **argv)
{
    int rank, nprocs;
    MPI_Win parent, mh_win[MAX_RANKS];
    long *buf;
    char *handles;
    int handle_size;

    use_tcp_only_if_asked(argc, argv);
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    if (nprocs > MAX_RANKS) {
        fprintf(stderr, "at most %d ranks\n", MAX_RANKS);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }

    buf = malloc(BUF_LONGS * sizeof(long));
    for (int i = 0; i < BUF_LONGS; i++)
        buf[i] = -1;
    buf[ACC_COUNTER] = buf[FOP_COUNTER] = buf[GACC_COUNTER] = buf[RACC_COUNTER] = 0;

    CHECK_MPI(MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &parent));
    handles = calloc(nprocs, MPIX_MAX_MEMHANDLE_SIZE);
    CHECK_MPI(MPIX_Memhandle_create(buf, BUF_LONGS * sizeof(long), MPI_INFO_NULL, parent,
                                    handles + rank * MPIX_MAX_MEMHANDLE_SIZE, &handle_size));
    CHECK(handle_size > 0 && handle_size <= MPIX_MAX_MEMHANDLE_SIZE, "handle size %d",
          handle_size);
    CHECK_MPI(MPI_Allgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, handles,
                            MPIX_MAX_MEMHANDLE_SIZE, MPI_BYTE, MPI_COMM_WORLD));
    for (int t = 0; t < nprocs; t++) {
        MPI_Info info;
        char value[MPI_MAX_INFO_VAL + 1];
        int flag;
        CHECK_MPI(MPIX_Win_from_memhandle(handles + t * MPIX_MAX_MEMHANDLE_SIZE,
                                          BUF_LONGS * sizeof(long), sizeof(long),
                                          MPI_INFO_NULL, t, parent, &mh_win[t]));
        CHECK_MPI(MPI_Win_get_info(mh_win[t], &info));
        CHECK_MPI(MPI_Info_get(info, "mpix_memhandle_target", MPI_MAX_INFO_VAL, value, &flag));
        CHECK(flag && atoi(value) == t, "get_info reports target %s, expected %d",
              flag ? value : "(none)", t);
        CHECK_MPI(MPI_Info_get(info, "mpix_memhandle_put_get", MPI_MAX_INFO_VAL, value, &flag));
        if (t != rank)
            CHECK(flag && !strcmp(value, tcp_only() ? "active_message" : "rdma"),
                  "puts and gets to owner %d travel by %s, expected %s", t, flag ? value : "?",
                  tcp_only() ? "active_message" : "rdma");
        MPI_Info_free(&info);
    }

    int cas_won[MAX_RANKS] = { 0 }, cas_winners[MAX_RANKS];

    CHECK_MPI(MPI_Win_lock_all(0, parent));
    for (int t = 0; t < nprocs; t++) {
        long src[PUT_SLOTS], vec[2 * PUT_SLOTS], got[PUT_SLOTS], one = 1, fetched = -7;
        long cas_old, cas_new = rank, cas_expect = -1, gacc_old = -7;
        MPI_Request reqs[3];
        MPI_Datatype strided;

        for (int i = 0; i < PUT_SLOTS; i++)
            src[i] = put_value(rank, t, i);
        /* contiguous: RDMA to a remote owner, a local copy to myself */
        CHECK_MPI(MPI_Put(src, PUT_SLOTS, MPI_LONG, t, PUT_REGION + rank * PUT_SLOTS,
                          PUT_SLOTS, MPI_LONG, mh_win[t]));
        /* a nonblocking flush, forwarded to the parent as the blocking one */
        CHECK_MPI(MPIX_Win_iflush(t, mh_win[t], &reqs[0]));
        wait_or_abort(&reqs[0], 60.0, "MPIX_Win_iflush");
        CHECK_MPI(MPI_Get(got, PUT_SLOTS, MPI_LONG, t, PUT_REGION + rank * PUT_SLOTS,
                          PUT_SLOTS, MPI_LONG, mh_win[t]));
        CHECK_MPI(MPI_Win_flush_local(t, mh_win[t]));
        for (int i = 0; i < PUT_SLOTS; i++)
            CHECK(got[i] == src[i], "get from %d slot %d: %ld, expected %ld", t, i, got[i],
                  src[i]);

        /* request-based */
        CHECK_MPI(MPI_Rput(src, PUT_SLOTS, MPI_LONG, t, RPUT_REGION + rank * PUT_SLOTS,
                           PUT_SLOTS, MPI_LONG, mh_win[t], &reqs[0]));
        CHECK_MPI(MPI_Raccumulate(&one, 1, MPI_LONG, t, RACC_COUNTER, 1, MPI_LONG, MPI_SUM,
                                  mh_win[t], &reqs[1]));
        wait_or_abort(&reqs[0], 60.0, "MPI_Rput");
        wait_or_abort(&reqs[1], 60.0, "MPI_Raccumulate");
        CHECK_MPI(MPI_Win_flush(t, mh_win[t]));
        memset(got, 0, sizeof(got));
        CHECK_MPI(MPI_Rget(got, PUT_SLOTS, MPI_LONG, t, RPUT_REGION + rank * PUT_SLOTS,
                           PUT_SLOTS, MPI_LONG, mh_win[t], &reqs[2]));
        wait_or_abort(&reqs[2], 60.0, "MPI_Rget");
        for (int i = 0; i < PUT_SLOTS; i++)
            CHECK(got[i] == src[i], "rget from %d slot %d: %ld, expected %ld", t, i, got[i],
                  src[i]);

        /* non-contiguous target: every other long of a region of 2*PUT_SLOTS */
        for (int i = 0; i < 2 * PUT_SLOTS; i++)
            vec[i] = put_value(rank, t, 100 + i);
        MPI_Type_vector(PUT_SLOTS, 1, 2, MPI_LONG, &strided);
        MPI_Type_commit(&strided);
        CHECK_MPI(MPI_Put(vec, PUT_SLOTS, MPI_LONG, t, VECTOR_REGION + rank * 2 * PUT_SLOTS,
                          1, strided, mh_win[t]));
        MPI_Type_free(&strided);

        /* the accumulate family and the atomics */
        CHECK_MPI(MPI_Accumulate(&one, 1, MPI_LONG, t, ACC_COUNTER, 1, MPI_LONG, MPI_SUM,
                                 mh_win[t]));
        CHECK_MPI(MPI_Fetch_and_op(&one, &fetched, MPI_LONG, t, FOP_COUNTER, MPI_SUM,
                                   mh_win[t]));
        CHECK_MPI(MPI_Get_accumulate(&one, 1, MPI_LONG, &gacc_old, 1, MPI_LONG, t,
                                     GACC_COUNTER, 1, MPI_LONG, MPI_SUM, mh_win[t]));
        CHECK_MPI(MPI_Compare_and_swap(&cas_new, &cas_expect, &cas_old, MPI_LONG, t, CAS_SLOT,
                                       mh_win[t]));
        CHECK_MPI(MPIX_Win_iflush_all(mh_win[t], &reqs[0]));
        wait_or_abort(&reqs[0], 60.0, "MPIX_Win_iflush_all");
        CHECK(fetched >= 0 && fetched < nprocs, "fetch_and_op at %d fetched %ld", t, fetched);
        CHECK(gacc_old >= 0 && gacc_old < nprocs, "get_accumulate at %d fetched %ld", t,
              gacc_old);
        CHECK(cas_old == -1 || (cas_old >= 0 && cas_old < nprocs),
              "compare_and_swap at %d found %ld", t, cas_old);
        cas_won[t] = cas_old == -1;

        /* no flush: the parent's unlock_all must complete this one */
        long mark = put_value(rank, t, 999);
        CHECK_MPI(MPI_Put(&mark, 1, MPI_LONG, t, UNLOCK_REGION + rank, 1, MPI_LONG, mh_win[t]));
    }
    CHECK_MPI(MPI_Win_unlock_all(parent));
    MPI_Allreduce(cas_won, cas_winners, MAX_RANKS, MPI_INT, MPI_SUM, MPI_COMM_WORLD);

    /* the owner checks its memory: parent and memory-handle windows are
     * unified, and the barrier orders the origins' unlocks before this */
    for (int o = 0; o < nprocs; o++) {
        for (int i = 0; i < PUT_SLOTS; i++) {
            CHECK(buf[PUT_REGION + o * PUT_SLOTS + i] == put_value(o, rank, i),
                  "put from %d slot %d: %ld", o, i, buf[PUT_REGION + o * PUT_SLOTS + i]);
            CHECK(buf[RPUT_REGION + o * PUT_SLOTS + i] == put_value(o, rank, i),
                  "rput from %d slot %d: %ld", o, i, buf[RPUT_REGION + o * PUT_SLOTS + i]);
        }
        for (int i = 0; i < 2 * PUT_SLOTS; i++) {
            long expect = i % 2 == 0 ? put_value(o, rank, 100 + i / 2) : -1;
            CHECK(buf[VECTOR_REGION + o * 2 * PUT_SLOTS + i] == expect,
                  "strided put from %d, long %d: %ld, expected %ld", o, i,
                  buf[VECTOR_REGION + o * 2 * PUT_SLOTS + i], expect);
        }
        CHECK(buf[UNLOCK_REGION + o] == put_value(o, rank, 999),
              "put from %d completed by the parent's unlock_all: %ld", o,
              buf[UNLOCK_REGION + o]);
    }
    CHECK(buf[ACC_COUNTER] == nprocs, "accumulate counter %ld, expected %d", buf[ACC_COUNTER],
          nprocs);
    CHECK(buf[RACC_COUNTER] == nprocs, "raccumulate counter %ld", buf[RACC_COUNTER]);
    CHECK(buf[FOP_COUNTER] == nprocs, "fetch_and_op counter %ld", buf[FOP_COUNTER]);
    CHECK(buf[GACC_COUNTER] == nprocs, "get_accumulate counter %ld", buf[GACC_COUNTER]);
    CHECK(buf[CAS_SLOT] >= 0 && buf[CAS_SLOT] < nprocs, "compare_and_swap slot %ld",
          buf[CAS_SLOT]);
    CHECK(cas_winners[rank] == 1, "%d origins found the compare_and_swap slot empty",
          cas_winners[rank]);
    MPI_Barrier(MPI_COMM_WORLD);

    for (int t = 0; t < nprocs; t++)
        CHECK_MPI(MPI_Win_free(&mh_win[t]));
    CHECK_MPI(MPIX_Memhandle_release(handles + rank * MPIX_MAX_MEMHANDLE_SIZE, parent));
    CHECK_MPI(MPI_Win_free(&parent));
    free(handles);
    free(buf);
    return report_and_finalize();
}
