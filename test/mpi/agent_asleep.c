/*
 * The progress agent (MPIR_CVAR_NBRMA_ASYNC_PROGRESS, common/nbrma_progress_agent.c):
 * RMA that needs the target's CPU completes while the target sleeps outside
 * MPI. Rank 1 sleeps after a barrier and then writes an "awake" word into its
 * own window; rank 0 meanwhile runs one phase of operations and reads that
 * word last. A phase that waited for the target reads 1.
 *
 * Phases, on a window from MPI_Win_allocate and on one MPI_Win_create makes
 * over malloc'ed memory (which UCX cannot reach: its accumulates need the
 * target's CPU even on shared memory):
 *   passive  lock_all (granted before the target sleeps): put + flush, get +
 *            flush, fetch_and_op + flush, 64 KiB MPI_CHAR accumulates + flush
 *   locks    exclusive lock / put / unlock cycles
 *   pscw     the target posts before it sleeps; start, puts, complete
 * After each phase the target checks what the origin left in its memory and
 * the origin checks what it read.
 *
 *   agent_asleep on|off [tcp] [seconds]
 * on: the agent runs (the program sets MPIR_CVAR_NBRMA_ASYNC_PROGRESS=1
 * before MPI_Init) and every phase must finish before the target wakes.
 * off: no agent, and some phase must find the target awake: the proof that
 * the check can fail (over tcp every phase waits; on shared memory the
 * accumulates on the malloc'ed window do). tcp sets UCX_TLS=tcp,self (the
 * path between nodes). Run with 2 processes.
 */
#include "nbrma_test.h"
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define N_OPS 200
#define ACC_BYTES 65536
#define ACC_REPS 10
#define N_LOCKS 50

enum { AWAKE, FOP_COUNTER, PUT_WORDS };
#define N_WORDS (PUT_WORDS + N_OPS)
#define WIN_BYTES (N_WORDS * sizeof(int64_t) + ACC_BYTES)

typedef struct {
    MPI_Win win;
    int64_t *words;
    unsigned char *acc;
    int rank;
    unsigned sleep_s;
    const char *what;
} ctx_t;

/* The target: sleeps outside MPI, then says it is awake. */
static void sleep_then_wake(ctx_t * c)
{
    sleep(c->sleep_s);
    __atomic_store_n(&c->words[AWAKE], 1, __ATOMIC_SEQ_CST);
}

static void reset(ctx_t * c)
{
    memset(c->words, 0, N_WORDS * sizeof(int64_t));
    memset(c->acc, 0, ACC_BYTES);
}

static int64_t read_awake(ctx_t * c)
{
    int64_t awake = -1;

    CHECK_MPI(MPI_Get(&awake, 1, MPI_INT64_T, 1, AWAKE, 1, MPI_INT64_T, c->win));
    CHECK_MPI(MPI_Win_flush(1, c->win));
    return awake;
}

static int64_t passive_phase(ctx_t * c)
{
    int64_t awake = -1;
    static unsigned char ones[ACC_BYTES];

    reset(c);
    CHECK_MPI(MPI_Win_lock_all(0, c->win));
    if (c->rank == 0)
        (void) read_awake(c);   /* the epoch is granted before the target sleeps */
    CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
    if (c->rank == 1) {
        sleep_then_wake(c);
    } else {
        const int64_t one = 1;
        int wrong = 0;

        memset(ones, 1, sizeof(ones));
        for (int64_t i = 0; i < N_OPS; i++) {
            int64_t value = 1000 + i;
            CHECK_MPI(MPI_Put(&value, 1, MPI_INT64_T, 1, PUT_WORDS + i, 1, MPI_INT64_T, c->win));
            CHECK_MPI(MPI_Win_flush(1, c->win));
        }
        for (int64_t i = 0; i < N_OPS; i++) {
            int64_t got = -1;
            CHECK_MPI(MPI_Get(&got, 1, MPI_INT64_T, 1, PUT_WORDS + i, 1, MPI_INT64_T, c->win));
            CHECK_MPI(MPI_Win_flush(1, c->win));
            wrong += got != 1000 + i;
        }
        for (int64_t i = 0; i < N_OPS; i++) {
            int64_t old = -1;
            CHECK_MPI(MPI_Fetch_and_op(&one, &old, MPI_INT64_T, 1, FOP_COUNTER, MPI_SUM, c->win));
            CHECK_MPI(MPI_Win_flush(1, c->win));
            wrong += old != i;
        }
        for (int i = 0; i < ACC_REPS; i++) {
            CHECK_MPI(MPI_Accumulate(ones, ACC_BYTES, MPI_CHAR, 1, N_WORDS, ACC_BYTES, MPI_CHAR,
                                     MPI_SUM, c->win));
            CHECK_MPI(MPI_Win_flush(1, c->win));
        }
        CHECK(wrong == 0, "%s passive: %d gets or fetches read wrong values", c->what, wrong);
        awake = read_awake(c);
    }
    CHECK_MPI(MPI_Win_unlock_all(c->win));
    CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
    if (c->rank == 1) {
        int wrong = 0;
        for (int64_t i = 0; i < N_OPS; i++)
            wrong += c->words[PUT_WORDS + i] != 1000 + i;
        CHECK(wrong == 0, "%s passive: %d put words wrong at the target", c->what, wrong);
        CHECK(c->words[FOP_COUNTER] == N_OPS, "%s passive: counter %lld, expected %d", c->what,
              (long long) c->words[FOP_COUNTER], N_OPS);
        wrong = 0;
        for (int i = 0; i < ACC_BYTES; i++)
            wrong += c->acc[i] != ACC_REPS;
        CHECK(wrong == 0, "%s passive: %d accumulated bytes wrong at the target", c->what, wrong);
    }
    return awake;
}

static int64_t lock_phase(ctx_t * c)
{
    int64_t awake = -1;

    reset(c);
    CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
    if (c->rank == 1) {
        sleep_then_wake(c);
    } else {
        for (int64_t i = 0; i < N_LOCKS; i++) {
            int64_t value = 2000 + i;
            CHECK_MPI(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 1, 0, c->win));
            CHECK_MPI(MPI_Put(&value, 1, MPI_INT64_T, 1, PUT_WORDS + i, 1, MPI_INT64_T, c->win));
            CHECK_MPI(MPI_Win_unlock(1, c->win));
        }
        CHECK_MPI(MPI_Win_lock(MPI_LOCK_SHARED, 1, 0, c->win));
        awake = read_awake(c);
        CHECK_MPI(MPI_Win_unlock(1, c->win));
    }
    CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
    if (c->rank == 1) {
        int wrong = 0;
        for (int64_t i = 0; i < N_LOCKS; i++)
            wrong += c->words[PUT_WORDS + i] != 2000 + i;
        CHECK(wrong == 0, "%s locks: %d put words wrong at the target", c->what, wrong);
    }
    return awake;
}

static int64_t pscw_phase(ctx_t * c)
{
    int64_t awake = -1;
    MPI_Group world, peer;
    int other = 1 - c->rank;

    reset(c);
    CHECK_MPI(MPI_Comm_group(MPI_COMM_WORLD, &world));
    CHECK_MPI(MPI_Group_incl(world, 1, &other, &peer));
    if (c->rank == 1)
        CHECK_MPI(MPI_Win_post(peer, 0, c->win));
    CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
    if (c->rank == 1) {
        sleep_then_wake(c);
        CHECK_MPI(MPI_Win_wait(c->win));
        int wrong = 0;
        for (int64_t i = 0; i < N_OPS; i++)
            wrong += c->words[PUT_WORDS + i] != 3000 + i;
        CHECK(wrong == 0, "%s pscw: %d put words wrong at the target", c->what, wrong);
    } else {
        static int64_t values[N_OPS];
        CHECK_MPI(MPI_Win_start(peer, 0, c->win));
        for (int64_t i = 0; i < N_OPS; i++) {
            values[i] = 3000 + i;
            CHECK_MPI(MPI_Put(&values[i], 1, MPI_INT64_T, 1, PUT_WORDS + i, 1, MPI_INT64_T,
                              c->win));
        }
        CHECK_MPI(MPI_Get(&awake, 1, MPI_INT64_T, 1, AWAKE, 1, MPI_INT64_T, c->win));
        CHECK_MPI(MPI_Win_complete(c->win));
    }
    CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
    CHECK_MPI(MPI_Group_free(&peer));
    CHECK_MPI(MPI_Group_free(&world));
    return awake;
}

int main(int argc, char **argv)
{
    bool agent = argc > 1 && strcmp(argv[1], "on") == 0;
    bool tcp = argc > 2 && strcmp(argv[2], "tcp") == 0;
    unsigned sleep_s = argc > 3 ? (unsigned) atoi(argv[3]) : 2;
    int rank, nprocs, phases_awake = 0;

    if (argc < 2 || (!agent && strcmp(argv[1], "off") != 0)) {
        fprintf(stderr, "usage: agent_asleep on|off [tcp [seconds]]\n");
        return 2;
    }
    setenv("MPIR_CVAR_NBRMA_ASYNC_PROGRESS", agent ? "1" : "0", 1);
    if (tcp)
        setenv("UCX_TLS", "tcp,self", 1);
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    if (nprocs != 2) {
        fprintf(stderr, "run with 2 processes\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    for (int kind = 0; kind < 2; kind++) {
        ctx_t c = {.rank = rank,.sleep_s = sleep_s };
        void *mem = NULL;

        if (kind == 0) {
            c.what = "allocate";
            CHECK_MPI(MPI_Win_allocate(WIN_BYTES, sizeof(int64_t), MPI_INFO_NULL,
                                       MPI_COMM_WORLD, &mem, &c.win));
        } else {
            c.what = "create over malloc";
            mem = malloc(WIN_BYTES);
            CHECK(mem != NULL, "malloc failed");
            CHECK_MPI(MPI_Win_create(mem, WIN_BYTES, sizeof(int64_t), MPI_INFO_NULL,
                                     MPI_COMM_WORLD, &c.win));
        }
        c.words = mem;
        c.acc = (unsigned char *) mem + N_WORDS * sizeof(int64_t);
        int64_t awake[3] = { passive_phase(&c), lock_phase(&c), pscw_phase(&c) };
        const char *names[3] = { "passive", "locks", "pscw" };
        if (rank == 0) {
            for (int p = 0; p < 3; p++) {
                CHECK(awake[p] == 0 || awake[p] == 1, "%s %s: awake word %lld", c.what,
                      names[p], (long long) awake[p]);
                phases_awake += awake[p] == 1;
                if (agent)
                    CHECK(awake[p] == 0, "%s %s: the origin's operations waited for the "
                          "target to wake although the agent runs", c.what, names[p]);
            }
        }
        CHECK_MPI(MPI_Win_free(&c.win));
        if (kind == 1)
            free(mem);
    }
    if (rank == 0 && !agent)
        CHECK(phases_awake > 0, "without the agent no phase waited for the target: the test "
              "cannot tell whether the agent helps");
    return report_and_finalize();
}
