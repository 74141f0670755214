/*
 * The reorder flags end to end: the five scenarios of the nonblocking-epochs
 * paper (SC14 VIII-A-2; osu_extensions/reorder_scenarios.h runs them) and a
 * lock epoch overtaking a fence (aaar_fence: rule F1 of the core README, the
 * paper's future work), each with its flag(s) off and on. A rank is late by DELAY; the chaining rank's
 * second epoch is with the victim.
 *
 * With the flag on, the victim's epoch must not include the delay: it must
 * complete within DELAY / 2 of the round's start (the transfer of 64 KiB
 * takes well under a millisecond here, tens over tcp). With the flag off the
 * epochs activate one after the other, so the victim's epoch must include the
 * delay (at least DELAY / 2): this shows that the check can fail, and that
 * the flag and not something else made the difference. Every put is checked
 * at its target. aaar_lock needs 4 ranks and runs only then.
 */
#include "nbrma_test.h"
#include "../../osu_extensions/reorder_scenarios.h"

#define ROUNDS 3
#define SIZE (64 * 1024)

int main(int argc, char **argv)
{
    int rank, nprocs;
    /* tcp across hosts is slower (NBRMA_TIME_SCALE=2 there): a longer delay
     * keeps the bounds as generous */
    double delay_us = 300e3 * time_scale();
    char *buf = malloc(SIZE);

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    for (int s = 0; s < N_REORDER_SCENARIOS; s++) {
        const struct reorder_scenario *sc = &reorder_scenarios[s];
        MPI_Comm comm;
        if (nprocs < sc->nprocs)
            continue;
        CHECK_MPI(MPI_Comm_split(MPI_COMM_WORLD, rank < sc->nprocs ? 0 : MPI_UNDEFINED, rank,
                                 &comm));
        if (comm == MPI_COMM_NULL)
            continue;
        for (int reorder = 0; reorder < 2; reorder++) {
            struct reorder_run run = {.scenario = sc,.buf = buf,.size = SIZE,
                .delay_us = delay_us,.comm = comm
            };
            char in_force[MPI_MAX_INFO_VAL + 1];
            run.win = reorder_window(&run, reorder);
            CHECK(win_info_value(run.win, sc->key, in_force) &&
                  !strcmp(in_force, reorder ? "true" : "false"),
                  "%s: MPI_Win_get_info reports %s=%s", sc->name, sc->key, in_force);
            if (sc->key2)
                CHECK(win_info_value(run.win, sc->key2, in_force) &&
                      !strcmp(in_force, reorder ? "true" : "false"),
                      "%s: MPI_Win_get_info reports %s=%s", sc->name, sc->key2, in_force);
            for (int round = 0; round < ROUNDS; round++) {
                double t[2];
                run.round = round;
                long wrong = reorder_round(&run, t);
                CHECK(wrong == 0, "%s, flag %s, round %d: %ld bytes differ at the target",
                      sc->name, reorder ? "on" : "off", round, wrong);
                if (rank == 0 && reorder)
                    CHECK(t[0] < delay_us / 2,
                          "%s, flag on, round %d: the victim (%s) took %.0f us, delay %.0f us",
                          sc->name, round, sc->victim_is, t[0], delay_us);
                if (rank == 0 && !reorder)
                    CHECK(t[0] >= delay_us / 2,
                          "%s, flag off, round %d: the victim (%s) took %.0f us, delay %.0f us:"
                          " the epochs were not serialized", sc->name, round, sc->victim_is,
                          t[0], delay_us);
                CHECK(t[1] >= delay_us / 2, "%s, flag %s: the chaining rank's epochs took "
                      "%.0f us, less than the delay %.0f us allows", sc->name,
                      reorder ? "on" : "off", t[1], delay_us);
            }
            CHECK_MPI(MPI_Win_free(&run.win));
        }
        CHECK_MPI(MPI_Comm_free(&comm));
    }
    free(buf);
    return report_and_finalize();
}
