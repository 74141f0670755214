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
 *   chained  the target queues two nonblocking exposure epochs before it
 *            sleeps (MPIX_Win_ipost, _iwait, _ipost, _iwait): the second
 *            post becomes active only when the target has seen the first
 *            epoch's end, which its CPU must read (on shared memory a store
 *            in its mailbox, over tcp a message); two access epochs of puts
 * After each phase the target checks what the origin left in its memory and
 * the origin checks what it read.
 *
 * With `threads`, both ranks run at MPI_THREAD_MULTIPLE with 4 threads: the
 * origin's operations come from all 4 (each its share of the puts, gets,
 * fetch_and_ops and accumulates, the exclusive-lock cycles one thread at a
 * time, the PSCW puts inside one access epoch), and the target's 4 threads
 * all sleep outside MPI (one of them then writes the awake word).
 *
 *   agent_asleep on|off [tcp] [threads] [seconds]
 * on: the agent runs (the program sets MPIR_CVAR_NBRMA_ASYNC_PROGRESS=1
 * before MPI_Init) and every phase must finish before the target wakes.
 * off: no agent, and some phase must find the target awake: the proof that
 * the check can fail (over tcp every phase waits; on shared memory the
 * accumulates on the malloc'ed window do). tcp sets UCX_TLS=tcp,self (the
 * path between nodes). Run with 2 processes.
 */
#include "nbrma_test_threads.h"
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define N_OPS 200
#define ACC_BYTES 65536
#define ACC_REPS 10
#define N_LOCKS 50
#define N_THREADS 4

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
    int n_threads;              /* 1, or N_THREADS with `threads` */
    int64_t olds[N_OPS];        /* what each fetch_and_op fetched */
} ctx_t;

/* The context of the phase the threads run (one phase at a time). */
static ctx_t *phase;
static pthread_mutex_t lock_turn = PTHREAD_MUTEX_INITIALIZER;

/* The target's threads: all sleep outside MPI; the first then says it is
 * awake. */
static void *sleeper(void *arg)
{
    sleep(phase->sleep_s);
    if ((long) arg == 0)
        __atomic_store_n(&phase->words[AWAKE], 1, __ATOMIC_SEQ_CST);
    return NULL;
}

static void sleep_then_wake(ctx_t * c)
{
    phase = c;
    if (c->n_threads == 1)
        sleeper((void *) 0);
    else
        run_threads(c->n_threads, sleeper);
}

/* Runs the origin's work of a phase in c->n_threads threads, each given its
 * index. */
static void origin_threads(ctx_t * c, void *(*work) (void *))
{
    phase = c;
    if (c->n_threads == 1)
        work((void *) 0);
    else
        run_threads(c->n_threads, work);
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

static unsigned char ones[ACC_BYTES];  /* the accumulates' origin buffer */

/* The origin's passive-phase share of thread t: operations i = t, t + n, ... */
static void *passive_work(void *arg)
{
    ctx_t *c = phase;
    long t = (long) arg;
    const int64_t one = 1;

    for (int64_t i = t; i < N_OPS; i += c->n_threads) {
        int64_t value = 1000 + i;
        CHECK_MPI(MPI_Put(&value, 1, MPI_INT64_T, 1, PUT_WORDS + i, 1, MPI_INT64_T, c->win));
        CHECK_MPI(MPI_Win_flush(1, c->win));
    }
    for (int64_t i = t; i < N_OPS; i += c->n_threads) {
        int64_t got = -1;
        CHECK_MPI(MPI_Get(&got, 1, MPI_INT64_T, 1, PUT_WORDS + i, 1, MPI_INT64_T, c->win));
        CHECK_MPI(MPI_Win_flush(1, c->win));
        TCHECK(got == 1000 + i, "%s passive: get %lld read %lld", c->what, (long long) i,
               (long long) got);
    }
    for (int64_t i = t; i < N_OPS; i += c->n_threads) {
        c->olds[i] = -1;
        CHECK_MPI(MPI_Fetch_and_op(&one, &c->olds[i], MPI_INT64_T, 1, FOP_COUNTER, MPI_SUM,
                                   c->win));
        CHECK_MPI(MPI_Win_flush(1, c->win));
    }
    for (int i = t; i < ACC_REPS; i += c->n_threads) {
        CHECK_MPI(MPI_Accumulate(ones, ACC_BYTES, MPI_CHAR, 1, N_WORDS, ACC_BYTES, MPI_CHAR,
                                 MPI_SUM, c->win));
        CHECK_MPI(MPI_Win_flush(1, c->win));
    }
    return NULL;
}

static int64_t passive_phase(ctx_t * c)
{
    int64_t awake = -1;

    reset(c);
    CHECK_MPI(MPI_Win_lock_all(0, c->win));
    if (c->rank == 0)
        (void) read_awake(c);   /* the epoch is granted before the target sleeps */
    CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
    if (c->rank == 1) {
        sleep_then_wake(c);
    } else {
        bool fetched[N_OPS] = { false };
        int repeated = 0;

        memset(ones, 1, sizeof(ones));
        origin_threads(c, passive_work);
        /* the fetch_and_ops fetched 0 .. N_OPS-1, each once, in any order */
        for (int i = 0; i < N_OPS; i++) {
            if (c->olds[i] < 0 || c->olds[i] >= N_OPS || fetched[c->olds[i]])
                repeated++;
            else
                fetched[c->olds[i]] = true;
        }
        CHECK(repeated == 0, "%s passive: %d fetch_and_ops fetched a wrong or repeated value",
              c->what, repeated);
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

/* The origin's lock cycles of thread t; one epoch toward the target at a
 * time per process, so the threads take turns. */
static void *lock_work(void *arg)
{
    ctx_t *c = phase;

    for (int64_t i = (long) arg; i < N_LOCKS; i += c->n_threads) {
        int64_t value = 2000 + i;
        pthread_mutex_lock(&lock_turn);
        CHECK_MPI(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 1, 0, c->win));
        CHECK_MPI(MPI_Put(&value, 1, MPI_INT64_T, 1, PUT_WORDS + i, 1, MPI_INT64_T, c->win));
        CHECK_MPI(MPI_Win_unlock(1, c->win));
        pthread_mutex_unlock(&lock_turn);
    }
    return NULL;
}

static int64_t lock_phase(ctx_t * c)
{
    int64_t awake = -1;

    reset(c);
    CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
    if (c->rank == 1) {
        sleep_then_wake(c);
    } else {
        origin_threads(c, lock_work);
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

/* The origin's PSCW puts of thread t, inside the process's access epoch. */
static void *pscw_work(void *arg)
{
    static int64_t values[N_OPS];
    ctx_t *c = phase;

    for (int64_t i = (long) arg; i < N_OPS; i += c->n_threads) {
        values[i] = 3000 + i;
        CHECK_MPI(MPI_Put(&values[i], 1, MPI_INT64_T, 1, PUT_WORDS + i, 1, MPI_INT64_T,
                          c->win));
    }
    return NULL;
}

/* The group of the other rank, for PSCW. */
static MPI_Group other_rank(const ctx_t * c)
{
    MPI_Group world, peer;
    int other = 1 - c->rank;

    CHECK_MPI(MPI_Comm_group(MPI_COMM_WORLD, &world));
    CHECK_MPI(MPI_Group_incl(world, 1, &other, &peer));
    CHECK_MPI(MPI_Group_free(&world));
    return peer;
}

static int64_t pscw_phase(ctx_t * c)
{
    int64_t awake = -1;
    MPI_Group peer = other_rank(c);

    reset(c);
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
        CHECK_MPI(MPI_Win_start(peer, 0, c->win));
        origin_threads(c, pscw_work);
        CHECK_MPI(MPI_Get(&awake, 1, MPI_INT64_T, 1, AWAKE, 1, MPI_INT64_T, c->win));
        CHECK_MPI(MPI_Win_complete(c->win));
    }
    CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
    CHECK_MPI(MPI_Group_free(&peer));
    return awake;
}

/* The target's exposure epochs, all four calls made before it sleeps. */
static void chained_target(ctx_t * c, MPI_Group peer)
{
    MPI_Request reqs[4];

    CHECK_MPI(MPIX_Win_ipost(peer, 0, c->win, &reqs[0]));
    CHECK_MPI(MPIX_Win_iwait(c->win, &reqs[1]));
    CHECK_MPI(MPIX_Win_ipost(peer, 0, c->win, &reqs[2]));
    CHECK_MPI(MPIX_Win_iwait(c->win, &reqs[3]));
    CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
    sleep_then_wake(c);
    for (int r = 0; r < 4; r++)
        wait_or_abort(&reqs[r], 60.0, "a chained exposure epoch's request");
    int wrong = 0;
    for (int64_t i = 0; i < N_OPS; i++)
        wrong += c->words[PUT_WORDS + i] != 4000 + i + N_OPS * (i % 2);
    CHECK(wrong == 0, "%s chained: %d put words wrong at the target", c->what, wrong);
}

/* The origin's two access epochs: even words in the first, odd ones (4000 +
 * N_OPS + i) in the second, which reads the awake word too. */
static int64_t chained_origin(ctx_t * c, MPI_Group peer)
{
    static int64_t values[N_OPS];
    int64_t awake = -1;

    CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
    /* the target's agent lingers a while after the barrier's last message:
     * begin once it has gone to sleep */
    usleep(200000);
    for (int epoch = 0; epoch < 2; epoch++) {
        CHECK_MPI(MPI_Win_start(peer, 0, c->win));
        for (int64_t i = epoch; i < N_OPS; i += 2) {
            values[i] = 4000 + i + N_OPS * epoch;
            CHECK_MPI(MPI_Put(&values[i], 1, MPI_INT64_T, 1, PUT_WORDS + i, 1, MPI_INT64_T,
                              c->win));
        }
        if (epoch == 1)
            CHECK_MPI(MPI_Get(&awake, 1, MPI_INT64_T, 1, AWAKE, 1, MPI_INT64_T, c->win));
        CHECK_MPI(MPI_Win_complete(c->win));
    }
    return awake;
}

static int64_t chained_phase(ctx_t * c)
{
    int64_t awake = -1;
    MPI_Group peer = other_rank(c);

    reset(c);
    if (c->rank == 1)
        chained_target(c, peer);
    else
        awake = chained_origin(c, peer);
    CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
    CHECK_MPI(MPI_Group_free(&peer));
    return awake;
}

int main(int argc, char **argv)
{
    bool agent = argc > 1 && strcmp(argv[1], "on") == 0;
    bool tcp = false;
    int n_threads = 1, rank, nprocs, phases_awake = 0, provided;
    unsigned sleep_s = 2;

    if (argc < 2 || (!agent && strcmp(argv[1], "off") != 0)) {
        fprintf(stderr, "usage: agent_asleep on|off [tcp] [threads] [seconds]\n");
        return 2;
    }
    for (int a = 2; a < argc; a++) {
        if (strcmp(argv[a], "tcp") == 0)
            tcp = true;
        else if (strcmp(argv[a], "threads") == 0)
            n_threads = N_THREADS;
        else
            sleep_s = (unsigned) atoi(argv[a]);
    }
    setenv("MPIR_CVAR_NBRMA_ASYNC_PROGRESS", agent ? "1" : "0", 1);
    if (tcp)
        setenv("UCX_TLS", "tcp,self", 1);
    MPI_Init_thread(&argc, &argv, n_threads > 1 ? MPI_THREAD_MULTIPLE : MPI_THREAD_SINGLE,
                    &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    if (nprocs != 2 || (n_threads > 1 && provided != MPI_THREAD_MULTIPLE)) {
        fprintf(stderr, "run with 2 processes (threads: at MPI_THREAD_MULTIPLE)\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    /* the agent no longer raises the thread level (patch 0036): without
     * `threads` it serves through the guard, not MPICH's mutex */
    CHECK(n_threads > 1 || provided == MPI_THREAD_SINGLE, "asked for MPI_THREAD_SINGLE, got "
          "thread level %d", provided);
    for (int kind = 0; kind < 2; kind++) {
        static ctx_t c;

        c = (ctx_t) {.rank = rank,.sleep_s = sleep_s,.n_threads = n_threads };
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
        int64_t awake[4] = { passive_phase(&c), lock_phase(&c), pscw_phase(&c),
            chained_phase(&c)
        };
        const char *names[4] = { "passive", "locks", "pscw", "chained" };
        if (rank == 0) {
            for (int p = 0; p < 4; p++) {
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
