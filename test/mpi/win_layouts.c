/*
 * Windows whose processes differ in everything MPI lets them differ in at
 * creation: displacement unit (1, 8, 4, 2 by rank), size (a process with
 * none when there are three or more), and the alignment of the memory's
 * base (MPI_Win_create over malloc'ed memory 8 bytes past an aligned
 * address on odd ranks). Patch 0041 gathers every process's key size,
 * displacement unit and base address in one allgather; a unit or an
 * address taken from the wrong process sends data to the wrong bytes.
 *
 * Each origin puts one 8-byte value into every other process's window at
 * byte offset 8 * origin (a displacement in the target's units), and adds
 * origin + 1 to the 8-byte word after those slots; each target then checks
 * its own memory, and each origin gets its slot back from every target.
 * Also checked: MPI_WIN_DISP_UNIT and MPI_WIN_SIZE as each process gave
 * them. Kinds: MPI_Win_create over malloc'ed memory, MPI_Win_allocate on
 * UCX's memory and on MPICH's, and MPI_Win_allocate without the engine.
 */
#include "nbrma_test.h"
#include <stdint.h>

enum kind { CREATE, ALLOCATE_UCX, ALLOCATE_MPICH, ALLOCATE_NO_ENGINE, N_KINDS };
static const char *kind_name[N_KINDS] = {
    "create over malloc", "allocate (UCX memory)", "allocate (MPICH memory)",
    "allocate (no engine)"
};

static int rank, nprocs;

static int disp_unit_of(int r)
{
    static const int units[] = { 1, 8, 4, 2 };
    return units[r % 4];
}

/* bytes of process r's window: none for the last of three or more */
static MPI_Aint bytes_of(int r)
{
    if (nprocs >= 3 && r == nprocs - 1)
        return 0;
    return (MPI_Aint) (nprocs + 1) * 8 + 24 * r;
}

static int64_t value_from(int origin, int target)
{
    return (int64_t) (origin + 1) * 1000 + target;
}

static void one_kind(enum kind k)
{
    const MPI_Aint bytes = bytes_of(rank);
    const int unit = disp_unit_of(rank);
    const int64_t sum_expected = (int64_t) nprocs * (nprocs + 1) / 2 - (rank + 1);
    MPI_Info info;
    MPI_Win win;
    char *raw = NULL;
    int64_t *mem = NULL;
    void *attr;
    int flag;

    MPI_Info_create(&info);
    if (k == CREATE) {
        raw = malloc(bytes + 16);
        mem = (int64_t *) (raw + (rank % 2 ? 8 : 0));
        CHECK_MPI(MPI_Win_create(bytes ? mem : NULL, bytes, unit, info, MPI_COMM_WORLD, &win));
    } else {
        MPI_Info_set(info, "mpich_nbrma_ucx_memory", k == ALLOCATE_UCX ? "true" : "false");
        if (k == ALLOCATE_NO_ENGINE)
            MPI_Info_set(info, "mpich_nbrma_epochs", "false");
        CHECK_MPI(MPI_Win_allocate(bytes, unit, info, MPI_COMM_WORLD, &mem, &win));
    }
    MPI_Info_free(&info);
    if (bytes)
        memset(mem, 0, bytes);

    CHECK_MPI(MPI_Win_get_attr(win, MPI_WIN_DISP_UNIT, &attr, &flag));
    CHECK(flag && *(int *) attr == unit, "%s: MPI_WIN_DISP_UNIT %d, expected %d", kind_name[k],
          flag ? *(int *) attr : -1, unit);
    CHECK_MPI(MPI_Win_get_attr(win, MPI_WIN_SIZE, &attr, &flag));
    CHECK(flag && *(MPI_Aint *) attr == bytes, "%s: MPI_WIN_SIZE %ld, expected %ld",
          kind_name[k], flag ? (long) *(MPI_Aint *) attr : -1L, (long) bytes);
    MPI_Barrier(MPI_COMM_WORLD);

    watchdog_arm(60, "%s: puts and accumulates", kind_name[k]);
    CHECK_MPI(MPI_Win_lock_all(0, win));
    for (int t = 0; t < nprocs; t++) {
        int64_t v = value_from(rank, t), one = rank + 1;
        int tunit = disp_unit_of(t);

        if (t == rank || bytes_of(t) == 0)
            continue;
        CHECK_MPI(MPI_Put(&v, 1, MPI_INT64_T, t, (MPI_Aint) 8 * rank / tunit, 1, MPI_INT64_T,
                          win));
        CHECK_MPI(MPI_Accumulate(&one, 1, MPI_INT64_T, t, (MPI_Aint) 8 * nprocs / tunit, 1,
                                 MPI_INT64_T, MPI_SUM, win));
        CHECK_MPI(MPI_Win_flush(t, win));
    }
    CHECK_MPI(MPI_Win_unlock_all(win));
    watchdog_disarm();
    MPI_Barrier(MPI_COMM_WORLD);

    /* at the target: every origin's value in its slot, nothing elsewhere */
    if (bytes) {
        CHECK_MPI(MPI_Win_lock(MPI_LOCK_SHARED, rank, 0, win));
        for (int o = 0; o < nprocs; o++) {
            int64_t expected = o == rank ? 0 : value_from(o, rank);
            CHECK(mem[o] == expected, "%s, rank %d (unit %d): slot %d holds %lld, expected %lld",
                  kind_name[k], rank, unit, o, (long long) mem[o], (long long) expected);
        }
        CHECK(mem[nprocs] == sum_expected, "%s, rank %d (unit %d): sum %lld, expected %lld",
              kind_name[k], rank, unit, (long long) mem[nprocs], (long long) sum_expected);
        for (MPI_Aint b = (MPI_Aint) (nprocs + 1) * 8; b < bytes; b++)
            CHECK(((char *) mem)[b] == 0, "%s, rank %d: byte %ld written", kind_name[k], rank,
                  (long) b);
        CHECK_MPI(MPI_Win_unlock(rank, win));
    }
    MPI_Barrier(MPI_COMM_WORLD);

    /* from the origin: its own slot back from every target */
    watchdog_arm(60, "%s: gets", kind_name[k]);
    CHECK_MPI(MPI_Win_lock_all(0, win));
    for (int t = 0; t < nprocs; t++) {
        int64_t got = -1;

        if (t == rank || bytes_of(t) == 0)
            continue;
        CHECK_MPI(MPI_Get(&got, 1, MPI_INT64_T, t, (MPI_Aint) 8 * rank / disp_unit_of(t), 1,
                          MPI_INT64_T, win));
        CHECK_MPI(MPI_Win_flush(t, win));
        CHECK(got == value_from(rank, t), "%s: got %lld from rank %d, expected %lld",
              kind_name[k], (long long) got, t, (long long) value_from(rank, t));
    }
    CHECK_MPI(MPI_Win_unlock_all(win));
    watchdog_disarm();

    CHECK_MPI(MPI_Win_free(&win));
    free(raw);
}

int main(int argc, char **argv)
{
    use_tcp_only_if_asked(argc, argv);
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    for (int k = 0; k < N_KINDS; k++)
        one_kind((enum kind) k);
    return report_and_finalize();
}
