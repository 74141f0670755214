/*
 * RDMA on plain dynamic windows (the rkey cache): memory attached with
 * MPI_Win_attach is reached with UCX RDMA once the origin has its rkey, and
 * the data is right at the target every time:
 *  - puts and gets in lock_all epochs with flushes, checked at the target, and
 *    MPI_Win_get_info's mpich_nbrma_dynamic_rdma_ops shows that the cache was
 *    used (the first operations go MPICH's way while the key is fetched);
 *  - request-based MPI_Rput/MPI_Rget, a strided put (MPICH's path), and
 *    accumulates (always active messages) on the same memory;
 *  - MPIX_Win_iflush and MPIX_Win_iflush_all complete puts that went with a
 *    cached rkey;
 *  - detach and attach of new memory, many times: the origins drop the old
 *    key, fetch the new one, and every round's data lands in the new memory;
 *    the count of registrations (mpich_nbrma_attached_registrations: made
 *    at the first query, not at the attach) follows;
 *  - a window created with mpich_nbrma_dynamic_rdma=false reports it, never
 *    uses the cache, and still moves the data.
 * Over tcp only (argument "tcp", or across hosts) the cache is never used:
 * UCX would emulate the RDMA with messages the target answers, each flush a
 * round trip more than MPICH's active message; the data moves all the same.
 *
 *   dynamic_rdma [tcp]
 */
#include "nbrma_test.h"
#include <string.h>

#define LONGS 64
#define ROUNDS 40
#define REATTACH 30

static long info_long(MPI_Win win, const char *key, const char *if_absent)
{
    char value[MPI_MAX_INFO_VAL + 1];
    if (!win_info_value(win, key, value))
        strcpy(value, if_absent);
    if (!strcmp(value, "true"))
        return 1;
    if (!strcmp(value, "false"))
        return 0;
    return atol(value);
}

/* Every rank puts into its slot of the right neighbour's buffer and gets the
 * neighbour's own slot back; checked at the target after a barrier. */
static void exchange(MPI_Win win, long *buf, MPI_Aint *addrs, int round, int rank, int nprocs)
{
    const int right = (rank + 1) % nprocs, left = (rank + nprocs - 1) % nprocs;
    long mine = 1000L * round + rank, got = -1;

    buf[nprocs + rank] = 5000L * round + rank;  /* what my left neighbour gets */
    CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
    CHECK_MPI(MPI_Win_lock_all(0, win));
    CHECK_MPI(MPI_Put(&mine, 1, MPI_LONG, right, addrs[right] + rank * sizeof(long), 1, MPI_LONG,
                      win));
    CHECK_MPI(MPI_Get(&got, 1, MPI_LONG, right, addrs[right] + (nprocs + right) * sizeof(long),
                      1, MPI_LONG, win));
    CHECK_MPI(MPI_Win_flush(right, win));
    CHECK_MPI(MPI_Win_unlock_all(win));
    CHECK(got == 5000L * round + right, "round %d: got %ld from %d", round, got, right);
    CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
    CHECK(buf[left] == 1000L * round + left, "round %d: slot of %d holds %ld", round, left,
          buf[left]);
}

static void attach_and_publish(MPI_Win win, long *buf, MPI_Aint *addrs, int rank)
{
    CHECK_MPI(MPI_Win_attach(win, buf, 2 * LONGS * sizeof(long)));
    CHECK_MPI(MPI_Get_address(buf, &addrs[rank]));
    CHECK_MPI(MPI_Allgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, addrs, 1, MPI_AINT,
                            MPI_COMM_WORLD));
}

int main(int argc, char **argv)
{
    int rank, nprocs;

    use_tcp_only_if_asked(argc, argv);
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    const int right = (rank + 1) % nprocs, left = (rank + nprocs - 1) % nprocs;
    MPI_Aint *addrs = malloc(nprocs * sizeof(MPI_Aint));
    MPI_Win win;
    long *buf = calloc(2 * LONGS, sizeof(long));

    CHECK_MPI(MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &win));
    CHECK(info_long(win, "mpich_nbrma_dynamic_rdma", "absent") == 1,
          "the rkey cache should be on by default");
    CHECK(info_long(win, "mpich_nbrma_attached_registrations", "-1") == 0, "nothing attached");
    attach_and_publish(win, buf, addrs, rank);
    CHECK(info_long(win, "mpich_nbrma_attached_registrations", "-1") == 0,
          "attached memory is registered when an origin asks for it, not before");

    /* puts and gets; the cache fills during the first rounds */
    for (int round = 0; round < ROUNDS; round++)
        exchange(win, buf, addrs, round, rank, nprocs);
    if (nprocs > 1 && tcp_only()) {
        CHECK(info_long(win, "mpich_nbrma_dynamic_rdma_ops", "0") == 0,
              "over tcp no operation should use the cache, %ld did",
              info_long(win, "mpich_nbrma_dynamic_rdma_ops", "0"));
        CHECK(info_long(win, "mpich_nbrma_attached_registrations", "-1") == 0,
              "over tcp no origin should ask for the memory's key");
    } else if (nprocs > 1) {
        CHECK(info_long(win, "mpich_nbrma_dynamic_rdma_ops", "0") > ROUNDS,
              "puts and gets should have used the cached rkey, %ld did",
              info_long(win, "mpich_nbrma_dynamic_rdma_ops", "0"));
        CHECK(info_long(win, "mpich_nbrma_attached_registrations", "-1") == 1,
              "the left neighbour's queries should have registered the memory");
    }

    /* requests, a strided put and accumulates on the same memory */
    {
        long vals[4] = { 11 * rank, -1, 22 * rank, -1 }, back = -1, one = 1;
        MPI_Datatype every_other;
        MPI_Request reqs[2];

        CHECK_MPI(MPI_Type_vector(2, 1, 2, MPI_LONG, &every_other));
        CHECK_MPI(MPI_Type_commit(&every_other));
        memset(buf, 0, 2 * LONGS * sizeof(long));
        buf[LONGS - 1] = 777 + rank;
        CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
        CHECK_MPI(MPI_Win_lock(MPI_LOCK_SHARED, right, 0, win));
        CHECK_MPI(MPI_Rput(&vals[0], 1, MPI_LONG, right, addrs[right] + 2 * sizeof(long), 1,
                           MPI_LONG, win, &reqs[0]));
        CHECK_MPI(MPI_Rget(&back, 1, MPI_LONG, right, addrs[right] + (LONGS - 1) * sizeof(long),
                           1, MPI_LONG, win, &reqs[1]));
        wait_all_or_abort(2, reqs, 30.0, "MPI_Rput and MPI_Rget");
        CHECK_MPI(MPI_Put(vals, 1, every_other, right, addrs[right] + 8 * sizeof(long), 1,
                          every_other, win));
        for (int i = 0; i < 10; i++)
            CHECK_MPI(MPI_Accumulate(&one, 1, MPI_LONG, right, addrs[right] + 20 * sizeof(long),
                                     1, MPI_LONG, MPI_SUM, win));
        CHECK_MPI(MPI_Win_unlock(right, win));
        CHECK(back == 777 + right, "MPI_Rget returned %ld", back);
        CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
        CHECK(buf[2] == 11 * left, "MPI_Rput: %ld", buf[2]);
        CHECK(buf[8] == 11 * left && buf[9] == 0 && buf[10] == 22 * left,
              "strided put: %ld %ld %ld", buf[8], buf[9], buf[10]);
        CHECK(buf[20] == 10, "accumulates: %ld", buf[20]);
        MPI_Type_free(&every_other);
    }

    /* nonblocking flushes cover the cache's RDMA */
    for (int round = 0; round < 4; round++) {
        long mine = 424242L + 10 * round + rank;
        MPI_Request req;

        CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
        CHECK_MPI(MPI_Win_lock_all(0, win));
        CHECK_MPI(MPI_Put(&mine, 1, MPI_LONG, right, addrs[right] + 30 * sizeof(long), 1,
                          MPI_LONG, win));
        if (round % 2)
            CHECK_MPI(MPIX_Win_iflush_all(win, &req));
        else
            CHECK_MPI(MPIX_Win_iflush(right, win, &req));
        wait_or_abort(&req, 30.0, "MPIX_Win_iflush on a dynamic window");
        CHECK_MPI(MPI_Win_unlock_all(win));
        CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
        CHECK(buf[30] == 424242L + 10 * round + left, "iflush round %d: %ld", round, buf[30]);
    }

    /* detach and attach new memory: old keys must go, new ones come */
    for (int r = 0; r < REATTACH; r++) {
        long *fresh = calloc(2 * LONGS, sizeof(long));
        long before = info_long(win, "mpich_nbrma_dynamic_rdma_ops", "0");

        CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));     /* nobody accesses buf any more */
        CHECK_MPI(MPI_Win_detach(win, buf));
        CHECK(info_long(win, "mpich_nbrma_attached_registrations", "-1") == 0,
              "detach should unregister");
        free(buf);
        buf = fresh;
        attach_and_publish(win, buf, addrs, rank);
        for (int round = 0; round < 4; round++)
            exchange(win, buf, addrs, ROUNDS + 4 * r + round, rank, nprocs);
        if (nprocs > 1 && r == REATTACH - 1 && !tcp_only())
            CHECK(info_long(win, "mpich_nbrma_dynamic_rdma_ops", "0") > before,
                  "the new memory should be reached with RDMA too");
    }
    CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
    CHECK_MPI(MPI_Win_detach(win, buf));
    CHECK_MPI(MPI_Win_free(&win));

    /* turned off: MPICH's path, same data */
    {
        MPI_Info info;
        CHECK_MPI(MPI_Info_create(&info));
        CHECK_MPI(MPI_Info_set(info, "mpich_nbrma_dynamic_rdma", "false"));
        CHECK_MPI(MPI_Win_create_dynamic(info, MPI_COMM_WORLD, &win));
        MPI_Info_free(&info);
        CHECK(info_long(win, "mpich_nbrma_dynamic_rdma", "false") == 0,
              "the window should report the cache off");
        attach_and_publish(win, buf, addrs, rank);
        for (int round = 0; round < 5; round++)
            exchange(win, buf, addrs, round, rank, nprocs);
        CHECK(info_long(win, "mpich_nbrma_dynamic_rdma_ops", "0") == 0,
              "no operation should use the cache when it is off");
        CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
        CHECK_MPI(MPI_Win_detach(win, buf));
        CHECK_MPI(MPI_Win_free(&win));
    }

    free(buf);
    free(addrs);
    return report_and_finalize();
}
