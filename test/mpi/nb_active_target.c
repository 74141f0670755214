/*
 * MPIX_Win_ifence, _ipost, _istart, _icomplete, _iwait on 2-4 ranks, the data
 * checked at the target each time:
 *  - ifence with every combination of the asserts a fence may carry;
 *  - a ring of PSCW epochs with nonblocking and blocking calls mixed;
 *  - PSCW rounds whose groups are made anew, with other members, and freed
 *    right after the call each round (the window keeps the last group's
 *    ranks: a new group must never be taken for the kept one);
 *  - deferred matching: the target opens (and closes) several exposure epochs
 *    before the origin starts its first access epoch;
 *  - 1000 back-to-back pending access epochs toward one target, completed with
 *    one MPI_Waitall, each epoch's put landing in the target's own slot;
 *  - operations of every kind (put, get, accumulate, get_accumulate,
 *    fetch_and_op, compare_and_swap, rput/rget with a derived datatype) issued
 *    in an epoch that is still deferred, then replayed.
 */
#include "nbrma_test.h"
#include <string.h>

#define TIMEOUT 60.0
#define N_PENDING 1000

static int rank, nprocs;

static void test_ifence_asserts(void)
{
    const int asserts[] = { 0, MPI_MODE_NOPRECEDE, MPI_MODE_NOSTORE, MPI_MODE_NOPUT,
        MPI_MODE_NOSTORE | MPI_MODE_NOPUT, MPI_MODE_NOPRECEDE | MPI_MODE_NOSTORE
    };
    const int n_asserts = sizeof(asserts) / sizeof(asserts[0]);
    int *base;
    MPI_Win win;
    MPI_Request req;

    CHECK_MPI(allocate_engine_win(SMALL_WIN_BYTES, sizeof(int), MPI_COMM_WORLD, &base, &win));
    memset(base, 0, SMALL_WIN_BYTES);
    MPI_Barrier(MPI_COMM_WORLD);
    for (int a = 0; a < n_asserts; a++) {
        int value = 100 * (a + 1) + rank;
        int right = (rank + 1) % nprocs;

        CHECK_MPI(MPIX_Win_ifence(asserts[a], win, &req));
        /* operations may be issued before the fence request completes */
        CHECK_MPI(MPI_Put(&value, 1, MPI_INT, right, a, 1, MPI_INT, win));
        wait_or_abort(&req, TIMEOUT, "MPIX_Win_ifence (opening)");
        CHECK_MPI(MPIX_Win_ifence(MPI_MODE_NOSUCCEED, win, &req));
        wait_or_abort(&req, TIMEOUT, "MPIX_Win_ifence (closing)");
        int left = (rank + nprocs - 1) % nprocs;
        CHECK(base[a] == 100 * (a + 1) + left, "assert %#x: slot %d holds %d, expected %d",
              asserts[a], a, base[a], 100 * (a + 1) + left);
    }
    /* blocking and nonblocking fences mixed in one sequence */
    CHECK_MPI(MPI_Win_fence(MPI_MODE_NOPRECEDE, win));
    for (int round = 0; round < 10; round++) {
        int value = 7000 + round * 10 + rank;
        /* a slot per round: once my fence returned, my neighbours may already
         * write the next round's slot */
        CHECK_MPI(MPI_Accumulate(&value, 1, MPI_INT, (rank + 1) % nprocs, 100 + round, 1,
                                 MPI_INT, MPI_REPLACE, win));
        if (round % 2) {
            CHECK_MPI(MPI_Win_fence(0, win));
        } else {
            CHECK_MPI(MPIX_Win_ifence(0, win, &req));
            wait_or_abort(&req, TIMEOUT, "MPIX_Win_ifence (mixed)");
        }
        int left = (rank + nprocs - 1) % nprocs;
        CHECK(base[100 + round] == 7000 + round * 10 + left, "round %d: %d, expected %d", round,
              base[100 + round], 7000 + round * 10 + left);
    }
    CHECK_MPI(MPI_Win_fence(MPI_MODE_NOSUCCEED, win));
    CHECK_MPI(MPI_Win_free(&win));
}

static void group_of(int peer, MPI_Group * out)
{
    MPI_Group world;
    MPI_Comm_group(MPI_COMM_WORLD, &world);
    MPI_Group_incl(world, 1, &peer, out);
    MPI_Group_free(&world);
}

/* Each rank exposes to its left neighbour and accesses its right one, ten
 * times, alternating nonblocking and blocking calls on both sides. */
static void test_pscw_ring_mixed(void)
{
    int *base;
    MPI_Win win;
    MPI_Group left_g, right_g;
    int left = (rank + nprocs - 1) % nprocs, right = (rank + 1) % nprocs;

    CHECK_MPI(allocate_engine_win(SMALL_WIN_BYTES, sizeof(int), MPI_COMM_WORLD, &base, &win));
    memset(base, 0, SMALL_WIN_BYTES);
    group_of(left, &left_g);
    group_of(right, &right_g);
    MPI_Barrier(MPI_COMM_WORLD);
    for (int round = 0; round < 10; round++) {
        MPI_Request post_req, start_req, complete_req, wait_req;
        int value = 1000 * round + rank;
        if (round % 2) {
            CHECK_MPI(MPIX_Win_ipost(left_g, 0, win, &post_req));
            CHECK_MPI(MPIX_Win_istart(right_g, 0, win, &start_req));
            CHECK_MPI(MPI_Put(&value, 1, MPI_INT, right, round, 1, MPI_INT, win));
            CHECK_MPI(MPIX_Win_icomplete(win, &complete_req));
            CHECK_MPI(MPIX_Win_iwait(win, &wait_req));
            wait_or_abort(&post_req, TIMEOUT, "MPIX_Win_ipost");
            wait_or_abort(&start_req, TIMEOUT, "MPIX_Win_istart");
            wait_or_abort(&complete_req, TIMEOUT, "MPIX_Win_icomplete");
            wait_or_abort(&wait_req, TIMEOUT, "MPIX_Win_iwait");
        } else {
            CHECK_MPI(MPI_Win_post(left_g, 0, win));
            CHECK_MPI(MPIX_Win_istart(right_g, 0, win, &start_req));
            CHECK_MPI(MPI_Put(&value, 1, MPI_INT, right, round, 1, MPI_INT, win));
            CHECK_MPI(MPI_Win_complete(win));
            CHECK_MPI(MPIX_Win_iwait(win, &wait_req));
            wait_or_abort(&start_req, TIMEOUT, "MPIX_Win_istart");
            wait_or_abort(&wait_req, TIMEOUT, "MPIX_Win_iwait");
        }
        CHECK(base[round] == 1000 * round + left, "round %d: %d, expected %d", round,
              base[round], 1000 * round + left);
    }
    MPI_Group_free(&left_g);
    MPI_Group_free(&right_g);
    CHECK_MPI(MPI_Win_free(&win));
}

/* Round r: every rank t exposes to origin t + k and accesses target t - k,
 * k = 1 + r % (nprocs - 1), through groups made for the call and freed right
 * after it; the put of each round lands at the round's target from the
 * round's origin. */
static void test_pscw_groups_remade(void)
{
    int *base;
    MPI_Win win;

    CHECK_MPI(allocate_engine_win(SMALL_WIN_BYTES, sizeof(int), MPI_COMM_WORLD, &base, &win));
    memset(base, 0, SMALL_WIN_BYTES);
    MPI_Barrier(MPI_COMM_WORLD);
    for (int round = 0; round < 12; round++) {
        int k = 1 + round % (nprocs - 1);
        int origin = (rank + k) % nprocs, target = (rank + nprocs - k) % nprocs;
        int value = 100 * round + rank;
        MPI_Group g;

        group_of(origin, &g);
        CHECK_MPI(MPI_Win_post(g, 0, win));
        MPI_Group_free(&g);
        group_of(target, &g);
        CHECK_MPI(MPI_Win_start(g, 0, win));
        MPI_Group_free(&g);
        CHECK_MPI(MPI_Put(&value, 1, MPI_INT, target, round, 1, MPI_INT, win));
        CHECK_MPI(MPI_Win_complete(win));
        CHECK_MPI(MPI_Win_wait(win));
        CHECK(base[round] == 100 * round + origin, "round %d: %d, expected %d", round,
              base[round], 100 * round + origin);
    }
    CHECK_MPI(MPI_Win_free(&win));
}

/* Rank 1 opens and closes three exposure epochs toward rank 0 before rank 0
 * (held back by a message) starts its three access epochs: they match in order,
 * each epoch's put goes to the exposure it matches. Then the other way round:
 * rank 0 opens and closes N_PENDING access epochs, each with one put, before
 * rank 1 posts any exposure. */
static void test_deferred_matching(void)
{
    int *base;
    MPI_Win win;
    MPI_Group g0, g1;
    MPI_Request reqs[2 * N_PENDING];
    int n = 0, token = 0;
    static int values[N_PENDING];

    if (rank > 1) {     /* the others only take part in the collectives */
        CHECK_MPI(allocate_engine_win(N_PENDING * sizeof(int), sizeof(int), MPI_COMM_WORLD, &base, &win));
        CHECK_MPI(MPI_Win_free(&win));
        return;
    }
    CHECK_MPI(allocate_engine_win(N_PENDING * sizeof(int), sizeof(int), MPI_COMM_WORLD, &base, &win));
    memset(base, 0, N_PENDING * sizeof(int));
    group_of(0, &g0);
    group_of(1, &g1);

    if (rank == 1) {
        for (int e = 0; e < 3; e++) {
            CHECK_MPI(MPIX_Win_ipost(g0, 0, win, &reqs[n++]));
            CHECK_MPI(MPIX_Win_iwait(win, &reqs[n++]));
        }
        /* all three exposures are open or pending before the origin starts */
        MPI_Send(&token, 1, MPI_INT, 0, 0, MPI_COMM_WORLD);
        for (int i = 0; i < n; i++)
            wait_or_abort(&reqs[i], TIMEOUT, "a deferred exposure epoch");
        for (int e = 0; e < 3; e++)
            CHECK(base[e] == 10 + e, "exposure %d got %d, expected %d", e, base[e], 10 + e);
    } else {
        MPI_Recv(&token, 1, MPI_INT, 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        for (int e = 0; e < 3; e++) {
            values[e] = 10 + e;
            CHECK_MPI(MPIX_Win_istart(g1, 0, win, &reqs[n++]));
            CHECK_MPI(MPI_Put(&values[e], 1, MPI_INT, 1, e, 1, MPI_INT, win));
            CHECK_MPI(MPIX_Win_icomplete(win, &reqs[n++]));
        }
        for (int i = 0; i < n; i++)
            wait_or_abort(&reqs[i], TIMEOUT, "an access epoch");
    }

    /* N_PENDING access epochs pending before the first exposure */
    n = 0;
    if (rank == 0) {
        for (int e = 0; e < N_PENDING; e++) {
            values[e] = 5000 + e;
            CHECK_MPI(MPIX_Win_istart(g1, 0, win, &reqs[n++]));
            CHECK_MPI(MPI_Put(&values[e], 1, MPI_INT, 1, e, 1, MPI_INT, win));
            CHECK_MPI(MPIX_Win_icomplete(win, &reqs[n++]));
        }
        MPI_Send(&token, 1, MPI_INT, 1, 1, MPI_COMM_WORLD);
    } else {
        MPI_Recv(&token, 1, MPI_INT, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        for (int e = 0; e < N_PENDING; e++) {
            CHECK_MPI(MPIX_Win_ipost(g0, 0, win, &reqs[n++]));
            CHECK_MPI(MPIX_Win_iwait(win, &reqs[n++]));
        }
    }
    wait_all_or_abort(n, reqs, TIMEOUT, "pending PSCW epochs");
    if (rank == 1) {
        int bad = 0;
        for (int e = 0; e < N_PENDING; e++)
            bad += base[e] != 5000 + e;
        CHECK(bad == 0, "%d of %d pending epochs left a wrong value", bad, N_PENDING);
    }
    MPI_Group_free(&g0);
    MPI_Group_free(&g1);
    CHECK_MPI(MPI_Win_free(&win));
}

/* Every kind of operation recorded while its epoch is deferred (the target has
 * not posted yet), then replayed; results checked at both ends. */
static void test_replay_every_op(void)
{
    long *base;
    MPI_Win win;
    MPI_Group g0, g1;
    MPI_Datatype every_other;
    MPI_Request reqs[4], rreqs[2];
    long put_src[8], get_dst[4], acc = 5, gacc_res = -1, fop_res = -1, cas_res = -1;
    long one = 1, cmp = 40, swap = 41;
    int token = 0;

    CHECK_MPI(allocate_engine_win(SMALL_WIN_BYTES, sizeof(long), MPI_COMM_WORLD, &base, &win));
    for (int i = 0; i < 64; i++)
        base[i] = 0;
    base[20] = 100;     /* get_accumulate */
    base[21] = 200;     /* fetch_and_op */
    base[22] = 40;      /* compare_and_swap */
    for (int i = 0; i < 4; i++)
        base[30 + i] = 300 + i; /* get */
    MPI_Type_vector(4, 1, 2, MPI_LONG, &every_other);
    MPI_Type_commit(&every_other);
    group_of(0, &g0);
    group_of(1, &g1);
    MPI_Barrier(MPI_COMM_WORLD);

    if (rank == 0) {
        for (int i = 0; i < 8; i++)
            put_src[i] = 900 + i;
        CHECK_MPI(MPIX_Win_istart(g1, 0, win, &reqs[0]));
        /* rank 1 waits for this message before posting: the epoch is deferred */
        CHECK_MPI(MPI_Rput(put_src, 1, every_other, 1, 0, 4, MPI_LONG, win, &rreqs[0]));
        CHECK_MPI(MPI_Rget(get_dst, 4, MPI_LONG, 1, 30, 4, MPI_LONG, win, &rreqs[1]));
        CHECK_MPI(MPI_Accumulate(&acc, 1, MPI_LONG, 1, 10, 1, MPI_LONG, MPI_SUM, win));
        CHECK_MPI(MPI_Get_accumulate(&one, 1, MPI_LONG, &gacc_res, 1, MPI_LONG, 1, 20, 1,
                                     MPI_LONG, MPI_SUM, win));
        CHECK_MPI(MPI_Fetch_and_op(&one, &fop_res, MPI_LONG, 1, 21, MPI_SUM, win));
        CHECK_MPI(MPI_Compare_and_swap(&swap, &cmp, &cas_res, MPI_LONG, 1, 22, win));
        MPI_Type_free(&every_other);    /* the recorded operation keeps its own reference */
        CHECK_MPI(MPIX_Win_icomplete(win, &reqs[1]));
        MPI_Send(&token, 1, MPI_INT, 1, 2, MPI_COMM_WORLD);
        wait_or_abort(&rreqs[0], TIMEOUT, "MPI_Rput in a deferred epoch");
        wait_or_abort(&rreqs[1], TIMEOUT, "MPI_Rget in a deferred epoch");
        wait_or_abort(&reqs[0], TIMEOUT, "MPIX_Win_istart");
        wait_or_abort(&reqs[1], TIMEOUT, "MPIX_Win_icomplete");
        for (int i = 0; i < 4; i++)
            CHECK(get_dst[i] == 300 + i, "get[%d] = %ld", i, get_dst[i]);
        CHECK(gacc_res == 100, "get_accumulate fetched %ld, expected 100", gacc_res);
        CHECK(fop_res == 200, "fetch_and_op fetched %ld, expected 200", fop_res);
        CHECK(cas_res == 40, "compare_and_swap fetched %ld, expected 40", cas_res);
    } else if (rank == 1) {
        MPI_Type_free(&every_other);
        MPI_Recv(&token, 1, MPI_INT, 0, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        CHECK_MPI(MPIX_Win_ipost(g0, 0, win, &reqs[0]));
        CHECK_MPI(MPIX_Win_iwait(win, &reqs[1]));
        wait_or_abort(&reqs[0], TIMEOUT, "MPIX_Win_ipost");
        wait_or_abort(&reqs[1], TIMEOUT, "MPIX_Win_iwait");
        for (int i = 0; i < 4; i++)
            CHECK(base[i] == 900 + 2 * i, "put[%d] = %ld, expected %d", i, base[i],
                  900 + 2 * i);
        CHECK(base[10] == 5, "accumulate left %ld, expected 5", base[10]);
        CHECK(base[20] == 101, "get_accumulate left %ld, expected 101", base[20]);
        CHECK(base[21] == 201, "fetch_and_op left %ld, expected 201", base[21]);
        CHECK(base[22] == 41, "compare_and_swap left %ld, expected 41", base[22]);
    } else {
        MPI_Type_free(&every_other);
    }
    MPI_Group_free(&g0);
    MPI_Group_free(&g1);
    CHECK_MPI(MPI_Win_free(&win));
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    test_ifence_asserts();
    test_pscw_ring_mixed();
    test_pscw_groups_remade();
    test_deferred_matching();
    test_replay_every_op();
    return report_and_finalize();
}
