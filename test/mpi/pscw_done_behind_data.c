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
 * Argument "tcp": UCX over tcp only.
 */
#include "nbrma_test.h"
#include <string.h>

#define ROUNDS 600
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

/* Round r adds r + 1 to each of `count` elements of the origin's block. */
static void run(int count, const char *what)
{
    double *base, *mine = malloc(count * sizeof(double));
    MPI_Win win;
    MPI_Request req;
    MPI_Group origins = nprocs > 1 ? group_of(1, nprocs - 1) : MPI_GROUP_EMPTY;
    MPI_Group target = group_of(0, 0);
    MPI_Aint bytes = (MPI_Aint) count * nprocs * sizeof(double);
    int failures = 0;

    CHECK_MPI(allocate_engine_win(bytes, sizeof(double), MPI_COMM_WORLD, &base, &win));
    memset(base, 0, bytes);
    MPI_Barrier(MPI_COMM_WORLD);
    for (int r = 0; r < ROUNDS; r++) {
        int nonblocking = r % 2;

        watchdog_arm(90, "%s round %d (%s)", what, r, nonblocking ? "nonblocking" : "blocking");
        if (rank == 0) {
            double expected = (double) (r + 1) * (r + 2) / 2;
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
            CHECK_MPI(MPI_Accumulate(mine, count, MPI_DOUBLE, 0, (MPI_Aint) rank * count, count,
                                     MPI_DOUBLE, MPI_SUM, win));
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
    run(COUNT_SMALL, "8 B accumulates");
    run(COUNT_LARGE, "32 KiB accumulates");
    MPI_Group_free(&world_group);
    return report_and_finalize();
}
