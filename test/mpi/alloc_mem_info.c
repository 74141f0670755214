/*
 * MPI_Alloc_mem and MPI_Free_mem with the input users get wrong (patch 0027):
 * an unknown mpich_buf_type value is an ignored hint (vanilla 4.0.2:
 * assert(0)); mpi_minimum_memory_alignment values that are not a power of
 * two above 16 leave the default alignment (vanilla: "0" divides by zero,
 * "1" returns a misaligned buffer) and a large power of two is honored; a
 * request no allocator can satisfy is MPI_ERR_NO_MEM (vanilla: a pointer
 * computed from NULL); freeing memory MPI_Alloc_mem did not return, or
 * freeing it twice, is MPI_ERR_BASE (vanilla: assert). Memory of each kind
 * then serves as a window that a peer puts into, checked at the target.
 */
#include <stdint.h>
#include "nbrma_test.h"

#define WORDS 64

static void *alloc_with(const char *key, const char *value, MPI_Aint size)
{
    MPI_Info info;
    void *p = NULL;
    MPI_Info_create(&info);
    MPI_Info_set(info, key, value);
    CHECK_MPI(MPI_Alloc_mem(size, info, &p));
    MPI_Info_free(&info);
    return p;
}

/* The memory is usable: a peer's puts land in it (checked here, at the target). */
static void check_as_window(void *base, const char *what)
{
    int rank, nprocs;
    MPI_Win win;
    int64_t *words = base;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    for (int i = 0; i < WORDS; i++)
        words[i] = -1;
    CHECK_MPI(MPI_Win_create(base, WORDS * sizeof(int64_t), sizeof(int64_t), MPI_INFO_NULL,
                             MPI_COMM_WORLD, &win));
    int target = (rank + 1) % nprocs;
    int64_t mine[WORDS];
    for (int i = 0; i < WORDS; i++)
        mine[i] = rank * 1000 + i;
    CHECK_MPI(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, target, 0, win));
    CHECK_MPI(MPI_Put(mine, WORDS, MPI_INT64_T, target, 0, WORDS, MPI_INT64_T, win));
    CHECK_MPI(MPI_Win_unlock(target, win));
    CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
    int origin = (rank + nprocs - 1) % nprocs;
    CHECK_MPI(MPI_Win_lock(MPI_LOCK_SHARED, rank, 0, win));
    for (int i = 0; i < WORDS; i++)
        CHECK(words[i] == origin * 1000 + i, "%s: word %d is %ld, expected %d", what, i,
              (long) words[i], origin * 1000 + i);
    CHECK_MPI(MPI_Win_unlock(rank, win));
    CHECK_MPI(MPI_Win_free(&win));
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    /* MPI_Alloc_mem and MPI_Free_mem report through MPI_COMM_WORLD's handler */
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);

    void *p = alloc_with("mpich_buf_type", "no-such-memory", WORDS * sizeof(int64_t));
    CHECK(p != NULL && (uintptr_t) p % 16 == 0, "unknown mpich_buf_type: %p", p);
    check_as_window(p, "unknown mpich_buf_type");
    CHECK_MPI(MPI_Free_mem(p));

    static const char *ignored[] = { "0", "1", "8", "3", "-4096", "junk", "64k", "" };
    for (size_t i = 0; i < sizeof(ignored) / sizeof(ignored[0]); i++) {
        p = alloc_with("mpi_minimum_memory_alignment", ignored[i], WORDS * sizeof(int64_t));
        CHECK(p != NULL && (uintptr_t) p % 16 == 0,
              "mpi_minimum_memory_alignment \"%s\": %p not 16-byte aligned", ignored[i], p);
        if (i == 1)
            check_as_window(p, "alignment 1");
        CHECK_MPI(MPI_Free_mem(p));
    }
    p = alloc_with("mpi_minimum_memory_alignment", "4096", WORDS * sizeof(int64_t));
    CHECK((uintptr_t) p % 4096 == 0, "alignment 4096 asked, got %p", p);
    check_as_window(p, "alignment 4096");
    CHECK_MPI(MPI_Free_mem(p));

    /* more than the address space: no allocator can, the call must say so */
    p = NULL;
    EXPECT_CLASS(MPI_Alloc_mem((MPI_Aint) 1 << 60, MPI_INFO_NULL, &p), MPI_ERR_NO_MEM);

    int64_t not_from_mpi[4];
    EXPECT_CLASS(MPI_Free_mem(not_from_mpi), MPI_ERR_BASE);
    CHECK_MPI(MPI_Alloc_mem(64, MPI_INFO_NULL, &p));
    CHECK_MPI(MPI_Free_mem(p));
    EXPECT_CLASS(MPI_Free_mem(p), MPI_ERR_BASE);
    CHECK_MPI(MPI_Free_mem(NULL));      /* MPI: freeing NULL does nothing */

    return report_and_finalize();
}
