/*
 * The reorder scenarios of the nonblocking-epochs paper (SC14, section
 * VIII-A-2, Figs. 7-11) and a lock epoch overtaking a fence (aaar_fence, the
 * paper's future work), each with its reorder flag(s) off and on: see
 * reorder_scenarios.h for who does what.
 *
 *   mpiexec -n 4 osu_reorder_scenarios [-s NAME|all] [-m BYTES] [-D DELAY_US]
 *                                      [-i ITERS] [-x SKIP]
 *
 * A scenario needs 3 or 4 ranks (aaar_lock needs 4); with fewer the scenario
 * is skipped, extra ranks sit out. Rounds alternate between the window
 * without and the window with the flag; the table gives the medians over the
 * -i rounds of each (after -x warm-up rounds) of the victim's epoch and of the
 * chaining rank's two epochs (the paper's cumulative latency), in
 * microseconds from the start of the round. Every put is checked at its
 * target; a wrong byte fails the run. Needs the patched MPICH.
 */
#include "reorder_scenarios.h"
#include <unistd.h>

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *) a, y = *(const double *) b;
    return (x > y) - (x < y);
}

static double median(double *v, int n)
{
    qsort(v, n, sizeof(double), cmp_double);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static void usage(void)
{
    fprintf(stderr, "usage: osu_reorder_scenarios [-s NAME|all] [-m BYTES] [-D DELAY_US] "
            "[-i ITERS] [-x SKIP]\nscenarios:");
    for (int i = 0; i < N_REORDER_SCENARIOS; i++)
        fprintf(stderr, " %s", reorder_scenarios[i].name);
    fputc('\n', stderr);
}

int main(int argc, char **argv)
{
    const char *which = "all";
    int size = 1 << 20, iters = 20, skip = 2, opt, rank, nprocs;
    double delay_us = 1000.0;
    long wrong = 0;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    while ((opt = getopt(argc, argv, "s:m:D:i:x:h")) != -1) {
        switch (opt) {
            case 's': which = optarg; break;
            case 'm': size = atoi(optarg); break;
            case 'D': delay_us = atof(optarg); break;
            case 'i': iters = atoi(optarg); break;
            case 'x': skip = atoi(optarg); break;
            default:
                if (rank == 0)
                    usage();
                MPI_Finalize();
                return opt == 'h' ? 0 : 1;
        }
    }
    if (size < 1 || iters < 1 || skip < 0 || delay_us < 0) {
        if (rank == 0)
            usage();
        MPI_Finalize();
        return 1;
    }

    if (rank == 0) {
        printf("# OSU MPI Reorder Scenarios Test (SC14 VIII-A-2) v7.4-nbrma\n");
        printf("# Window creation: MPI_Win_allocate\n");
        printf("# Synchronization: MPIX_Win_i* (nonblocking epochs)\n");
        printf("# Size: %d bytes per put, late rank %.0f us late, %d rounds per series\n",
               size, delay_us, iters);
        printf("%-12s%-42s%20s%20s%20s%20s\n", "# Scenario", "Reorder key", "Victim off(us)",
               "Victim on(us)", "Cumulative off(us)", "Cumulative on(us)");
        fflush(stdout);
    }

    char *buf = malloc((size_t) size);
    double *victim[2], *chain[2];
    for (int k = 0; k < 2; k++) {
        victim[k] = calloc((size_t) iters, sizeof(double));
        chain[k] = calloc((size_t) iters, sizeof(double));
    }
    for (int s = 0; s < N_REORDER_SCENARIOS; s++) {
        const struct reorder_scenario *sc = &reorder_scenarios[s];
        if (strcmp(which, "all") && strcmp(which, sc->name))
            continue;
        if (nprocs < sc->nprocs) {
            if (rank == 0)
                printf("# %s skipped: needs %d ranks\n", sc->name, sc->nprocs);
            continue;
        }
        /* the scenario's ranks work on a communicator of their own */
        MPI_Comm comm;
        MPI_Comm_split(MPI_COMM_WORLD, rank < sc->nprocs ? 0 : MPI_UNDEFINED, rank, &comm);
        if (comm != MPI_COMM_NULL) {
            struct reorder_run run[2];
            for (int k = 0; k < 2; k++) {
                run[k] = (struct reorder_run) {
                .scenario = sc,.buf = buf,.size = size,.delay_us = delay_us,.comm = comm};
                run[k].win = reorder_window(&run[k], k);
            }
            for (int i = 0; i < skip + iters; i++)
                for (int k = 0; k < 2; k++) {
                    double t[2];
                    run[k].round = i;
                    wrong += reorder_round(&run[k], t);
                    if (i >= skip) {
                        victim[k][i - skip] = t[0];
                        chain[k][i - skip] = t[1];
                    }
                }
            for (int k = 0; k < 2; k++)
                MPI_Win_free(&run[k].win);
            MPI_Comm_free(&comm);
            if (rank == 0) {
                printf("%-12s%-42s%20.2f%20.2f%20.2f%20.2f\n", sc->name,
                       sc->keys_label ? sc->keys_label : sc->key,
                       median(victim[0], iters), median(victim[1], iters),
                       median(chain[0], iters), median(chain[1], iters));
                fflush(stdout);
            }
        }
        rs_lazy_barrier(MPI_COMM_WORLD);        /* ranks that sat out must not spin */
    }
    long all_wrong = 0;
    MPI_Reduce(&wrong, &all_wrong, 1, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
    if (rank == 0 && all_wrong)
        printf("# FAILED: %ld bytes at the targets differ from what was put\n", all_wrong);
    free(buf);
    for (int k = 0; k < 2; k++)
        free(victim[k]), free(chain[k]);
    MPI_Finalize();
    return all_wrong ? 1 : 0;
}
