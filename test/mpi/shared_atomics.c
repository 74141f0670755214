/*
 * Accumulates, fetches and swaps on an MPI_Win_allocate_shared window, whose
 * memory every process of the node maps: an origin applies the integer ones
 * with its own CPU's atomics, and the target applies those of the same types
 * and operations that reach it as active messages (a non-contiguous layout)
 * with the same atomics, so that all of them are atomic with respect to each
 * other (README, "RMA without the target's CPU"). Every rank hits rank 0's
 * words at once, and the results are counted exactly:
 *   - fetch_and_op MPI_SUM on one 8-byte counter: every fetched value is
 *     taken exactly once, and the counter ends at the number of operations;
 *   - MPI_Accumulate MPI_SUM on 4-byte ints, contiguous (the origin's path)
 *     and through a vector type (the target's) on the same words, first
 *     alternating, then both at once from different ranks;
 *   - compare_and_swap increments of one 8-byte word, each retried until it
 *     wins: the word ends at the number of increments;
 *   - MPI_Get_accumulate MPI_SUM on MPI_CHAR elements (1-byte atomics);
 *   - the same counters through MPI_Rget_accumulate requests;
 *   - MPI_SUM of doubles and MPI_MAX of ints, which the CPUs apply by
 *     compare-and-swap loops, both ways at once on the same elements: the
 *     doubles end at the exact count, the ints at the largest operand;
 *   - long accumulates (2 KiB of MPI_CHAR, 1 KiB of MPI_DOUBLE), which the
 *     CPUs apply in hardware transactions where the processor has them:
 *     contiguous from the even ranks (the origin's CPU), runs of 128 bytes
 *     through a vector type from the odd ones (rank 0 applies each run),
 *     and single elements in the same memory from the odd ones at once (the
 *     origin's compare-and-swap): every addition counted exactly.
 * MPI_Win_get_info reports the peers reached through the segment.
 *
 * Argument "allocate": the same on an MPI_Win_allocate window, whose UCX
 * memory ucp_rkey_ptr maps at the other processes of the node: the origins
 * apply there with the same atomics, and rank 0 checks its own memory.
 */
#include "nbrma_test.h"
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define N_OPS 3000
#define INTS 8
#define INT_ROUNDS 20000

#define TYPED_ROUNDS 5000
#define LONG_ROUNDS 300
#define LONG_CHARS 2048
#define LONG_DOUBLES 128
#define RUN_CHARS 128
enum { FOP_WORD, CAS_WORD, REQ_WORD, CHAR_WORD, INT_BLOCK, DOUBLE_BLOCK = INT_BLOCK + INTS / 2,
    MAX_BLOCK = DOUBLE_BLOCK + 4, LONG_CHAR_BLOCK = MAX_BLOCK + 2,
    LONG_DOUBLE_BLOCK = LONG_CHAR_BLOCK + LONG_CHARS / 8,
    N_WORDS = LONG_DOUBLE_BLOCK + LONG_DOUBLES
};
/* the single elements the odd ranks add beside the long runs */
#define SINGLE_CHAR_A 5
#define SINGLE_CHAR_B 1029
#define SINGLE_DOUBLE 3

static int rank, nprocs;
static MPI_Comm node;
/* origin and result buffers live until the flush that completes their operation */
static char chars[8], old_chars[8];
static int ints[INTS];
static double doubles[4] = { 1, 1, 1, 1 };
static int maxima[2];
static unsigned char long_chars[LONG_CHARS];
static double long_doubles[LONG_DOUBLES];

int main(int argc, char **argv)
{
    int64_t *mem, one = 1;
    MPI_Win win;
    int64_t *fetched;
    MPI_Datatype every_other, every_other_double, every_other_int, every_other_run;
    MPI_Datatype single_char[2];
    char peers[16];

    int allocate = argc > 1 && !strcmp(argv[1], "allocate");

    MPI_Init(&argc, &argv);
    /* the processes that can share memory (MPI_Win_allocate_shared's rule):
     * this node's; across two hosts each host runs the test by itself */
    CHECK_MPI(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node));
    MPI_Comm_rank(node, &rank);
    MPI_Comm_size(node, &nprocs);
    if (allocate) {
        CHECK_MPI(MPI_Win_allocate(rank == 0 ? (N_WORDS + 1) * sizeof(int64_t) + 64 : 0,
                                   sizeof(int64_t), MPI_INFO_NULL, node, &mem, &win));
    } else {
        MPI_Aint size;
        int disp;
        CHECK_MPI(MPI_Win_allocate_shared(rank == 0 ? (N_WORDS + 1) * sizeof(int64_t) + 64 : 0,
                                          sizeof(int64_t), MPI_INFO_NULL, node, &mem, &win));
        CHECK_MPI(MPI_Win_shared_query(win, 0, &size, &disp, &mem));
    }
    /* puts and gets through the segment, or through UCX's mapping where UCX
     * has shared memory between the processes, toward rank 0 (the others
     * have no memory) */
    snprintf(peers, sizeof(peers), "%d",
             rank == 0 || (allocate && !shared_memory_between_peers()) ? 0 : 1);
    check_win_info(win, "mpich_nbrma_cross_memory_peers", peers,
                   allocate ? "allocate window" : "shared window");
    /* accumulates by the CPU's atomics toward rank 0, whose memory is mapped
     * here (the others have none): MPICH's segment always, UCX's memory where
     * UCX has shared memory between the processes */
    check_win_info(win, "mpich_nbrma_mapped_peers",
                   rank == 0 || (allocate && !shared_memory_between_peers()) ? "0" : "1",
                   allocate ? "allocate window" : "shared window");
    if (rank == 0)
        memset(mem, 0, (N_WORDS + 1) * sizeof(int64_t) + 64);
    /* ints 0, 2, 4, 6 of the block, through a type the origin's path does
     * not take (not contiguous): these go to the target as active messages */
    CHECK_MPI(MPI_Type_vector(INTS / 2, 1, 2, MPI_INT, &every_other));
    CHECK_MPI(MPI_Type_commit(&every_other));
    CHECK_MPI(MPI_Type_vector(2, 1, 2, MPI_DOUBLE, &every_other_double));
    CHECK_MPI(MPI_Type_commit(&every_other_double));
    CHECK_MPI(MPI_Type_vector(2, 1, 2, MPI_INT, &every_other_int));
    CHECK_MPI(MPI_Type_commit(&every_other_int));
    CHECK_MPI(MPI_Type_vector(LONG_CHARS / RUN_CHARS / 2, RUN_CHARS, 2 * RUN_CHARS, MPI_CHAR,
                              &every_other_run));
    CHECK_MPI(MPI_Type_commit(&every_other_run));
    for (int k = 0; k < 2; k++) {
        const int at = k ? SINGLE_CHAR_B : SINGLE_CHAR_A;
        CHECK_MPI(MPI_Type_create_indexed_block(1, 1, &at, MPI_CHAR, &single_char[k]));
        CHECK_MPI(MPI_Type_commit(&single_char[k]));
    }
    memset(long_chars, 1, sizeof(long_chars));
    for (int k = 0; k < LONG_DOUBLES; k++)
        long_doubles[k] = 1;
    fetched = malloc(N_OPS * sizeof(int64_t));
    for (int k = 0; k < 8; k++)
        chars[k] = 1;
    for (int k = 0; k < INTS; k++)
        ints[k] = 1;
    CHECK_MPI(MPI_Barrier(node));

    CHECK_MPI(MPI_Win_lock_all(0, win));
    for (int i = 0; i < N_OPS; i++) {
        CHECK_MPI(MPI_Fetch_and_op(&one, &fetched[i], MPI_INT64_T, 0, FOP_WORD, MPI_SUM, win));
        /* ints 0, 2, 4, 6 of the block: one contiguous int at a time (each
         * 8-byte displacement unit starts an even int), or all four through
         * the vector type */
        if (i % 2)
            CHECK_MPI(MPI_Accumulate(ints, INTS / 2, MPI_INT, 0, INT_BLOCK, 1, every_other,
                                     MPI_SUM, win));
        else
            for (int j = 0; j < INTS / 2; j++)
                CHECK_MPI(MPI_Accumulate(ints, 1, MPI_INT, 0, INT_BLOCK + j, 1, MPI_INT, MPI_SUM,
                                         win));
        CHECK_MPI(MPI_Get_accumulate(chars, 8, MPI_CHAR, old_chars, 8, MPI_CHAR, 0, CHAR_WORD,
                                     8, MPI_CHAR, MPI_SUM, win));
        {
            int64_t old = -1, cur = 0;
            for (;;) {
                int64_t next = cur + 1;
                CHECK_MPI(MPI_Compare_and_swap(&next, &cur, &old, MPI_INT64_T, 0, CAS_WORD, win));
                CHECK_MPI(MPI_Win_flush(0, win));
                if (old == cur)
                    break;
                cur = old;
            }
        }
        if (i % 50 == 0) {
            MPI_Request req;
            int64_t before;
            CHECK_MPI(MPI_Rget_accumulate(&one, 1, MPI_INT64_T, &before, 1, MPI_INT64_T, 0,
                                          REQ_WORD, 1, MPI_INT64_T, MPI_SUM, win, &req));
            wait_or_abort(&req, 60.0, "MPI_Rget_accumulate");
        }
        CHECK_MPI(MPI_Win_flush(0, win));
    }
    CHECK_MPI(MPI_Win_unlock_all(win));
    CHECK_MPI(MPI_Barrier(node));

    /* the two ways at once on the same ints, as fast as they go: odd ranks
     * add through their CPU's atomics, the others (rank 0 to itself through
     * its CPU too) through the vector type, which rank 0 applies */
    CHECK_MPI(MPI_Win_lock_all(0, win));
    for (int i = 0; i < INT_ROUNDS; i++) {
        if (rank % 2)
            for (int j = 0; j < INTS / 2; j++)
                CHECK_MPI(MPI_Accumulate(ints, 1, MPI_INT, 0, INT_BLOCK + j, 1, MPI_INT, MPI_SUM,
                                         win));
        else
            CHECK_MPI(MPI_Accumulate(ints, INTS / 2, MPI_INT, 0, INT_BLOCK, 1, every_other,
                                     MPI_SUM, win));
        if (i % 64 == 63)
            CHECK_MPI(MPI_Win_flush(0, win));
    }
    CHECK_MPI(MPI_Win_unlock_all(win));
    CHECK_MPI(MPI_Barrier(node));

    /* doubles 0 and 2 of their block and ints 0 and 2 of theirs (8 bytes
     * apart: one displacement unit), one at a
     * time through the origin's CPU (odd ranks) or both through a vector type
     * that rank 0 applies (the others); the ints' operands rise, each rank's
     * its own, so that a maximum lost to a concurrent update would show */
    CHECK_MPI(MPI_Win_lock_all(0, win));
    for (int i = 0; i < TYPED_ROUNDS; i++) {
        maxima[0] = maxima[1] = i * nprocs + rank;
        if (rank % 2) {
            for (int j = 0; j < 2; j++) {
                CHECK_MPI(MPI_Accumulate(doubles, 1, MPI_DOUBLE, 0, DOUBLE_BLOCK + 2 * j, 1,
                                         MPI_DOUBLE, MPI_SUM, win));
                CHECK_MPI(MPI_Accumulate(&maxima[j], 1, MPI_INT, 0, MAX_BLOCK + j, 1, MPI_INT,
                                         MPI_MAX, win));
            }
        } else {
            CHECK_MPI(MPI_Accumulate(doubles, 2, MPI_DOUBLE, 0, DOUBLE_BLOCK, 1,
                                     every_other_double, MPI_SUM, win));
            CHECK_MPI(MPI_Accumulate(maxima, 2, MPI_INT, 0, MAX_BLOCK, 1, every_other_int,
                                     MPI_MAX, win));
        }
        if (i % 64 == 63)
            CHECK_MPI(MPI_Win_flush(0, win));
    }
    CHECK_MPI(MPI_Win_unlock_all(win));
    CHECK_MPI(MPI_Barrier(node));

    /* long runs beside single elements, all at once */
    CHECK_MPI(MPI_Win_lock_all(0, win));
    for (int i = 0; i < LONG_ROUNDS; i++) {
        if (rank % 2 == 0) {
            CHECK_MPI(MPI_Accumulate(long_chars, LONG_CHARS, MPI_CHAR, 0, LONG_CHAR_BLOCK,
                                     LONG_CHARS, MPI_CHAR, MPI_SUM, win));
            CHECK_MPI(MPI_Accumulate(long_doubles, LONG_DOUBLES, MPI_DOUBLE, 0, LONG_DOUBLE_BLOCK,
                                     LONG_DOUBLES, MPI_DOUBLE, MPI_SUM, win));
        } else {
            CHECK_MPI(MPI_Accumulate(long_chars, LONG_CHARS / 2, MPI_CHAR, 0, LONG_CHAR_BLOCK, 1,
                                     every_other_run, MPI_SUM, win));
            /* one byte each, at byte offsets of the 8-byte units through a
             * type with a lower bound: the origin's compare-and-swap */
            for (int k = 0; k < 2; k++)
                CHECK_MPI(MPI_Accumulate(chars, 1, MPI_CHAR, 0, LONG_CHAR_BLOCK, 1,
                                         single_char[k], MPI_SUM, win));
            CHECK_MPI(MPI_Accumulate(doubles, 1, MPI_DOUBLE, 0, LONG_DOUBLE_BLOCK + SINGLE_DOUBLE,
                                     1, MPI_DOUBLE, MPI_SUM, win));
        }
        if (i % 16 == 15)
            CHECK_MPI(MPI_Win_flush(0, win));
    }
    CHECK_MPI(MPI_Win_unlock_all(win));
    CHECK_MPI(MPI_Barrier(node));

    /* every fetched value once */
    {
        int total = N_OPS * nprocs;
        int64_t *all = rank == 0 ? malloc(total * sizeof(int64_t)) : NULL;
        CHECK_MPI(MPI_Gather(fetched, N_OPS, MPI_INT64_T, all, N_OPS, MPI_INT64_T, 0,
                             node));
        if (rank == 0) {
            char *taken = calloc(total, 1);
            int twice = 0, outside = 0;
            for (int i = 0; i < total; i++) {
                if (all[i] < 0 || all[i] >= total)
                    outside++;
                else if (taken[all[i]]++)
                    twice++;
            }
            CHECK(twice == 0 && outside == 0, "fetch_and_op: %d values fetched twice, %d outside",
                  twice, outside);
            CHECK(mem[FOP_WORD] == total, "fetch_and_op counter %lld, expected %d",
                  (long long) mem[FOP_WORD], total);
            CHECK(mem[CAS_WORD] == total, "compare_and_swap word %lld, expected %d",
                  (long long) mem[CAS_WORD], total);
            CHECK(mem[REQ_WORD] == nprocs * ((N_OPS + 49) / 50), "Rget_accumulate word %lld",
                  (long long) mem[REQ_WORD]);
            {
                const int *ints = (const int *) &mem[INT_BLOCK];
                const unsigned char *chars = (const unsigned char *) &mem[CHAR_WORD];
                const int expected = total + INT_ROUNDS * nprocs;
                for (int k = 0; k < INTS; k++)
                    CHECK(ints[k] == (k % 2 ? 0 : expected), "int %d holds %d, expected %d", k,
                          ints[k], k % 2 ? 0 : expected);
                for (int k = 0; k < 8; k++)
                    CHECK(chars[k] == (unsigned char) total, "char %d holds %u, expected %u", k,
                          chars[k], (unsigned char) total);
            }
            {
                const double *d = (const double *) &mem[DOUBLE_BLOCK];
                const int *m = (const int *) &mem[MAX_BLOCK];
                const double want = (double) TYPED_ROUNDS * nprocs;
                CHECK(d[0] == want && d[2] == want && d[1] == 0 && d[3] == 0,
                      "doubles hold %g %g %g %g, expected %g 0 %g 0", d[0], d[1], d[2], d[3],
                      want, want);
                CHECK(m[0] == TYPED_ROUNDS * nprocs - 1 && m[2] == TYPED_ROUNDS * nprocs - 1 &&
                      m[1] == 0 && m[3] == 0, "int maxima %d %d %d %d, expected %d 0 %d 0", m[0],
                      m[1], m[2], m[3], TYPED_ROUNDS * nprocs - 1, TYPED_ROUNDS * nprocs - 1);
            }
            {
                const unsigned char *c = (const unsigned char *) &mem[LONG_CHAR_BLOCK];
                const double *d = (const double *) &mem[LONG_DOUBLE_BLOCK];
                const int evens = (nprocs + 1) / 2 * LONG_ROUNDS, odds = nprocs / 2 * LONG_ROUNDS;
                int wrong = 0, first_wrong = -1;
                for (int b = 0; b < LONG_CHARS; b++) {
                    const int want = evens + ((b / RUN_CHARS) % 2 == 0 ? odds : 0) +
                        (b == SINGLE_CHAR_A || b == SINGLE_CHAR_B ? odds : 0);
                    if (c[b] != (unsigned char) want && wrong++ == 0)
                        first_wrong = b;
                }
                CHECK(wrong == 0, "long runs of chars: %d bytes wrong, the first %d holds %u",
                      wrong, first_wrong, first_wrong < 0 ? 0 : c[first_wrong]);
                wrong = 0;
                for (int k = 0; k < LONG_DOUBLES; k++)
                    wrong += d[k] != (double) (evens + (k == SINGLE_DOUBLE ? odds : 0));
                CHECK(wrong == 0, "long runs of doubles: %d wrong (double 0 %g, %d %g)", wrong,
                      d[0], SINGLE_DOUBLE, d[SINGLE_DOUBLE]);
            }
            free(taken);
            free(all);
        }
    }
    free(fetched);
    MPI_Type_free(&every_other);
    MPI_Type_free(&every_other_double);
    MPI_Type_free(&every_other_int);
    MPI_Type_free(&every_other_run);
    MPI_Type_free(&single_char[0]);
    MPI_Type_free(&single_char[1]);
    CHECK_MPI(MPI_Barrier(node));
    CHECK_MPI(MPI_Win_free(&win));
    MPI_Comm_free(&node);
    return report_and_finalize();
}
