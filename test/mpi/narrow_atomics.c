/*
 * 1- and 2-byte accumulates as UCX compare-and-swap loops next to the ones the
 * target applies from active messages (atomics/narrow_atomics.h, patch 0025),
 * all on one window at rank 0, every process at once:
 *   - a char counter hit by MPI_Fetch_and_op (small: UCX) inside a 24-char
 *     range that MPI_Accumulate adds to as a whole (large: active message);
 *   - an unsigned short counter by MPI_Fetch_and_op, whose fetched values must
 *     be unique, in the same 8-byte word as a short at an odd address that
 *     MPI_Accumulate adds to (across two words: active message);
 *   - a spin lock on one char taken and released with MPI_Compare_and_swap,
 *     guarding a plain get-increment-put of an int: no increment lost.
 * The same on a window whose info key switches native atomics off, and
 * across hosts over tcp, where the window has no narrow atomics and the
 * target applies every such accumulate.
 *
 * Run with 2 to 4 processes.
 */
#include "nbrma_test.h"
#include <stdint.h>
#include <string.h>

#define ROUNDS 1000
#define LOCKS 100
#define RANGE 24                /* > MPIDI_NBRMA_NARROW_MAX_ELEMENTS: an active message */
enum { CHAR_COUNTER = 5, SHORT_COUNTER = 24, ODD_SHORT = 31, LOCK_BYTE = 40, GUARDED_INT = 44,
    WIN_BYTES = 64
};

static int compare_u16(const void *a, const void *b)
{
    return (int) *(const uint16_t *) a - (int) *(const uint16_t *) b;
}

static void take_lock(MPI_Win win, unsigned char me)
{
    const unsigned char free_ = 0;
    unsigned char seen = 1;
    double deadline = MPI_Wtime() + 60.0;

    while (seen != free_) {
        CHECK_MPI(MPI_Compare_and_swap(&me, &free_, &seen, MPI_UNSIGNED_CHAR, 0, LOCK_BYTE, win));
        CHECK_MPI(MPI_Win_flush(0, win));
        if (MPI_Wtime() > deadline) {
            CHECK(0, "lock byte still %u after 60 s", seen);
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
    }
}

static void release_lock(MPI_Win win, unsigned char me)
{
    const unsigned char free_ = 0;
    unsigned char seen = 0;

    CHECK_MPI(MPI_Compare_and_swap(&free_, &me, &seen, MPI_UNSIGNED_CHAR, 0, LOCK_BYTE, win));
    CHECK_MPI(MPI_Win_flush(0, win));
    CHECK(seen == me, "released a lock byte holding %u, not mine (%u)", seen, me);
}

static void run(const char *native, int rank, int nprocs)
{
    MPI_Info info;
    MPI_Win win;
    unsigned char *mem, ones[RANGE];
    uint16_t *fetched = malloc(ROUNDS * sizeof(uint16_t));
    uint16_t *all = rank == 0 ? malloc((size_t) nprocs * ROUNDS * sizeof(uint16_t)) : NULL;
    const unsigned char one = 1;
    const uint16_t one16 = 1;

    memset(ones, 1, sizeof(ones));
    MPI_Info_create(&info);
    MPI_Info_set(info, "mpich_nbrma_native_atomics", native);
    CHECK_MPI(MPI_Win_allocate(WIN_BYTES, 1, info, MPI_COMM_WORLD, &mem, &win));
    MPI_Info_free(&info);
    /* over tcp UCX emulates atomics with the target's CPU: no narrow atomics */
    check_win_info(win, "mpich_nbrma_narrow_atomics",
                   getenv("NBRMA_TEST_NO_SHARED_MEMORY") ? "false" : native,
                   "narrow atomics on shared memory only");
    memset(mem, 0, WIN_BYTES);
    CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));

    CHECK_MPI(MPI_Win_lock_all(0, win));
    for (int i = 0; i < ROUNDS; i++) {
        unsigned char c;
        CHECK_MPI(MPI_Fetch_and_op(&one, &c, MPI_UNSIGNED_CHAR, 0, CHAR_COUNTER, MPI_SUM, win));
        CHECK_MPI(MPI_Accumulate(ones, RANGE, MPI_UNSIGNED_CHAR, 0, 0, RANGE, MPI_UNSIGNED_CHAR,
                                 MPI_SUM, win));
        CHECK_MPI(MPI_Fetch_and_op(&one16, &fetched[i], MPI_UNSIGNED_SHORT, 0, SHORT_COUNTER,
                                   MPI_SUM, win));
        CHECK_MPI(MPI_Accumulate(&one16, 1, MPI_UNSIGNED_SHORT, 0, ODD_SHORT, 1,
                                 MPI_UNSIGNED_SHORT, MPI_SUM, win));
        CHECK_MPI(MPI_Win_flush(0, win));
    }
    for (int i = 0; i < LOCKS; i++) {
        int value;
        take_lock(win, (unsigned char) (rank + 1));
        CHECK_MPI(MPI_Get(&value, 1, MPI_INT, 0, GUARDED_INT, 1, MPI_INT, win));
        CHECK_MPI(MPI_Win_flush(0, win));
        value++;
        CHECK_MPI(MPI_Put(&value, 1, MPI_INT, 0, GUARDED_INT, 1, MPI_INT, win));
        CHECK_MPI(MPI_Win_flush(0, win));
        release_lock(win, (unsigned char) (rank + 1));
    }
    CHECK_MPI(MPI_Win_unlock_all(win));
    CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));

    MPI_Gather(fetched, ROUNDS, MPI_UNSIGNED_SHORT, all, ROUNDS, MPI_UNSIGNED_SHORT, 0,
               MPI_COMM_WORLD);
    if (rank == 0) {
        unsigned total = (unsigned) nprocs * ROUNDS;
        uint16_t odd;
        int guarded;

        CHECK_MPI(MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win));
        for (int b = 0; b < RANGE; b++) {
            unsigned want = (b == CHAR_COUNTER ? 2 * total : total) % 256;
            CHECK(mem[b] == want, "native %s: byte %d is %u, expected %u", native, b, mem[b],
                  want);
        }
        memcpy(&odd, mem + ODD_SHORT, 2);
        CHECK(odd == total, "native %s: short across two words %u, expected %u", native, odd,
              total);
        memcpy(&guarded, mem + GUARDED_INT, sizeof(int));
        CHECK(guarded == nprocs * LOCKS, "native %s: %d increments under the lock, expected %d",
              native, guarded, nprocs * LOCKS);
        CHECK(mem[LOCK_BYTE] == 0, "native %s: lock byte left at %u", native, mem[LOCK_BYTE]);
        CHECK_MPI(MPI_Win_unlock(0, win));
        /* each value of the short counter was fetched exactly once */
        qsort(all, total, sizeof(uint16_t), compare_u16);
        for (unsigned v = 0; v < total; v++) {
            if (all[v] != v) {
                CHECK(0, "native %s: fetched short counter values are not 0..%u (at %u: %u)",
                      native, total - 1, v, all[v]);
                break;
            }
        }
    }
    CHECK_MPI(MPI_Win_free(&win));
    free(fetched);
    free(all);
}

int main(int argc, char **argv)
{
    int rank, nprocs;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    run("true", rank, nprocs);
    run("false", rank, nprocs);
    return report_and_finalize();
}
