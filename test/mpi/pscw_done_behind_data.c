/*
 * PSCW epochs whose operations travel as MPICH active messages (accumulates
 * of MPI_DOUBLE, which no UCX atomic performs): the origin's epoch may end
 * once they are sent (rule R5 of core/src/route.cpp), its done following
 * them on the same channel. The target checks its window right after
 * MPI_Win_wait (or MPIX_Win_iwait) returns, every round: a done that
 * overtook an accumulate (a mailbox store, say) leaves a sum short.
 *
 * Rank 0 is the target of every other rank; each origin adds to its own
 * block of the window, one element per round (8 B accumulates) or a whole
 * block (COUNT_LARGE doubles: above MPICH's UCX eager size of 16 KiB, so
 * UCX sends it in fragments). Blocking and nonblocking calls alternate.
 *
 * Then puts, on MPI_Win_allocate and MPI_Win_create windows: each origin
 * puts the round's value into the first and then the second half of its
 * block. Over tcp the first put of an epoch goes as MPICH's active message
 * with its done behind it (rule R8), the second as UCX's put, which the
 * epoch waits for; 8 B and 8 KiB halves fit one message, 16 KiB halves do
 * not (UCX's put). Argument "tcp": UCX over tcp only.
 */
#include "nbrma_test.h"
#include <stdio.h>
#include <string.h>

#define ROUNDS 600
#define PUT_ROUNDS 200         /* per size and window kind */
#define COUNT_SMALL 1
#define COUNT_LARGE 4096        /* 32 KiB of doubles */
#define TIMEOUT 60.0

static int rank, nprocs;
static MPI_Group world_group;

static MPI_Group group_of(int first, int last)
{
    int range[1][3] = { {first, last, 1} };
    MPI_Group g;
    MPI_Group_range_incl(world_group, 1, range, &g);
    return g;
}

enum { ACCUMULATE, PUT_ALLOCATE, PUT_CREATE };

/* Round r adds r + 1 to each of `count` elements of the origin's block (or
 * puts r + 1 there, in two halves). */
static void run(int count, int how, const char *what)
{
    double *base, *mine = malloc(count * sizeof(double));
    MPI_Win win;
    MPI_Request req;
    MPI_Group origins = nprocs > 1 ? group_of(1, nprocs - 1) : MPI_GROUP_EMPTY;
    MPI_Group target = group_of(0, 0);
    MPI_Aint bytes = (MPI_Aint) count * nprocs * sizeof(double);
    int failures = 0, half = count / 2;

    if (how == PUT_CREATE) {
        MPI_Info info = engine_info();
        base = malloc(bytes);
        CHECK_MPI(MPI_Win_create(base, bytes, sizeof(double), info, MPI_COMM_WORLD, &win));
        if (info != MPI_INFO_NULL)
            MPI_Info_free(&info);
    } else {
        CHECK_MPI(allocate_engine_win(bytes, sizeof(double), MPI_COMM_WORLD, &base, &win));
    }
    memset(base, 0, bytes);
    MPI_Barrier(MPI_COMM_WORLD);
    for (int r = 0; r < (how == ACCUMULATE ? ROUNDS : PUT_ROUNDS); r++) {
        int nonblocking = r % 2;

        watchdog_arm(90, "%s round %d (%s)", what, r, nonblocking ? "nonblocking" : "blocking");
        if (rank == 0) {
            double expected = how == ACCUMULATE ? (double) (r + 1) * (r + 2) / 2 : r + 1;
            if (nonblocking) {
                CHECK_MPI(MPIX_Win_ipost(origins, 0, win, &req));
                wait_or_abort(&req, TIMEOUT, "MPIX_Win_ipost");
                CHECK_MPI(MPIX_Win_iwait(win, &req));
                wait_or_abort(&req, TIMEOUT, "MPIX_Win_iwait");
            } else {
                CHECK_MPI(MPI_Win_post(origins, 0, win));
                CHECK_MPI(MPI_Win_wait(win));
            }
            /* nothing else may run in between: the window as the wait left it */
            for (int o = 1; o < nprocs && failures < 5; o++)
                for (int i = 0; i < count; i++)
                    if (base[o * count + i] != expected) {
                        CHECK(0, "%s round %d: origin %d element %d holds %.0f, expected %.0f",
                              what, r, o, i, base[o * count + i], expected);
                        failures++;
                        break;
                    }
        } else {
            for (int i = 0; i < count; i++)
                mine[i] = r + 1;
            if (nonblocking) {
                CHECK_MPI(MPIX_Win_istart(target, 0, win, &req));
                wait_or_abort(&req, TIMEOUT, "MPIX_Win_istart");
            } else {
                CHECK_MPI(MPI_Win_start(target, 0, win));
            }
            if (how == ACCUMULATE) {
                CHECK_MPI(MPI_Accumulate(mine, count, MPI_DOUBLE, 0, (MPI_Aint) rank * count,
                                         count, MPI_DOUBLE, MPI_SUM, win));
            } else {
                CHECK_MPI(MPI_Put(mine, half, MPI_DOUBLE, 0, (MPI_Aint) rank * count, half,
                                  MPI_DOUBLE, win));
                CHECK_MPI(MPI_Put(mine + half, count - half, MPI_DOUBLE, 0,
                                  (MPI_Aint) rank * count + half, count - half, MPI_DOUBLE, win));
            }
            if (nonblocking) {
                CHECK_MPI(MPIX_Win_icomplete(win, &req));
                wait_or_abort(&req, TIMEOUT, "MPIX_Win_icomplete");
            } else {
                CHECK_MPI(MPI_Win_complete(win));
            }
        }
    }
    watchdog_disarm();
    CHECK_MPI(MPI_Win_free(&win));
    if (how == PUT_CREATE)
        free(base);
    if (origins != MPI_GROUP_EMPTY)
        MPI_Group_free(&origins);
    MPI_Group_free(&target);
    free(mine);
}

int main(int argc, char **argv)
{
    use_tcp_only_if_asked(argc, argv);
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    MPI_Comm_group(MPI_COMM_WORLD, &world_group);
    run(COUNT_SMALL, ACCUMULATE, "8 B accumulates");
    run(COUNT_LARGE, ACCUMULATE, "32 KiB accumulates");
    for (int how = PUT_ALLOCATE; how <= PUT_CREATE; how++) {
        const char *kind = how == PUT_ALLOCATE ? "allocate" : "create";
        char what[64];
        const int counts[] = { 2, 2048, COUNT_LARGE };  /* halves of 8 B, 8 KiB, 16 KiB */

        for (int c = 0; c < 3; c++) {
            snprintf(what, sizeof(what), "%s, puts of %d B", kind,
                     (int) (counts[c] / 2 * sizeof(double)));
            run(counts[c], how, what);
        }
    }
    MPI_Group_free(&world_group);
    return report_and_finalize();
}
