/*
 * MPI_Finalize with memory still held: MPI never requires MPI_Free_mem, a
 * detach or a memory-handle release before MPI_Finalize, so a program that
 * leaves any of them must exit cleanly (the Intel MPI Benchmarks' IMB-RMA
 * does: UCX's ucp_cleanup aborted the process with "rcache.c: Assertion
 * 'region->refcount == 0' failed" while MPI_Alloc_mem memory from UCX was
 * still mapped). Memory from MPI_Alloc_mem stays the program's after
 * MPI_Finalize, as it does on vanilla MPICH: this test reads and writes it
 * after MPI_Finalize, data that RMA wrote into it included.
 *
 *   finalize_held_memory KIND [tcp]
 *
 * KIND is the memory left held at MPI_Finalize:
 *   alloc_mem  MPI_Alloc_mem blocks of 1 B to 16 MiB, never freed
 *   window     MPI_Alloc_mem memory that backed an MPI_Win_create window
 *              (freed) into which the left neighbour put, malloc memory
 *              of an MPI_Win_create window never freed and the memory of an
 *              MPI_Win_allocate window never freed (vanilla MPICH 4.0.2
 *              aborts at exit with either of those two)
 *   dynamic    MPI_Alloc_mem and malloc memory still attached to a dynamic
 *              window when it was freed, with the neighbour's puts in both
 *   memhandle  memory handles of MPI_Alloc_mem and malloc memory never
 *              released (the parent window freed, and a second parent
 *              never freed)
 *   all        all of the above at once
 * "tcp" sets UCX_TLS=tcp,self before MPI_Init (the path between nodes).
 *
 * Each process checks its own memory after MPI_Finalize and exits with 1 on
 * a mismatch; rank 0 prints " No Errors" when its own checks passed, and the
 * harness also requires every process's exit status to be 0.
 */
#include "nbrma_test.h"
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define WORDS 1024              /* longs of the RMA targets */

static const MPI_Aint alloc_sizes[] = { 1, 8, 4096, 4097, 65536, 1 << 20, 16 << 20 };
#define N_ALLOC (sizeof(alloc_sizes) / sizeof(alloc_sizes[0]))

static unsigned char pattern(size_t block, size_t i)
{
    return (unsigned char) (block * 31 + i * 7 + 1);
}

/* What a memory region must hold after MPI_Finalize. */
typedef struct {
    const char *what;
    unsigned char *mem;
    size_t bytes;
    size_t block;               /* filled with pattern(block, i) */
    long *words;                /* or: words[i] == value + i for WORDS longs */
    long value;
} held_t;

static held_t held[32];
static int n_held;
static int rank, nprocs, right, left;

static void hold_pattern(const char *what, void *mem, size_t bytes, size_t block)
{
    for (size_t i = 0; i < bytes; i++)
        ((unsigned char *) mem)[i] = pattern(block, i);
    held[n_held++] = (held_t) {.what = what,.mem = mem,.bytes = bytes,.block = block };
}

/* `words` receives WORDS longs value + i from the left neighbour by RMA. */
static void hold_words(const char *what, long *words, long value)
{
    held[n_held++] = (held_t) {.what = what,.words = words,.value = value };
}

static long value_from(int origin, int kind)
{
    return 1000000L * (kind + 1) + 1000L * origin;
}

static void put_words(long value, int target, MPI_Aint disp, MPI_Win win)
{
    long buf[WORDS];
    for (int i = 0; i < WORDS; i++)
        buf[i] = value + i;
    CHECK_MPI(MPI_Win_lock(MPI_LOCK_SHARED, target, 0, win));
    CHECK_MPI(MPI_Put(buf, WORDS, MPI_LONG, target, disp, WORDS, MPI_LONG, win));
    CHECK_MPI(MPI_Win_unlock(target, win));
}

static void held_alloc_mem(void)
{
    for (size_t b = 0; b < N_ALLOC; b++) {
        void *mem;
        CHECK_MPI(MPI_Alloc_mem(alloc_sizes[b], MPI_INFO_NULL, &mem));
        hold_pattern("MPI_Alloc_mem block", mem, (size_t) alloc_sizes[b], b);
    }
}

/* An MPI_Win_create window over MPI_Alloc_mem memory, freed, one over
 * malloc memory and one of MPI_Win_allocate that are never freed (UCX still
 * maps their memory). */
static void held_window(void)
{
    long *words, *kept = malloc(WORDS * sizeof(long)), *allocated;
    MPI_Win win, never_freed, allocated_never_freed;

    CHECK_MPI(MPI_Alloc_mem(WORDS * sizeof(long), MPI_INFO_NULL, &words));
    memset(words, 0, WORDS * sizeof(long));
    memset(kept, 0, WORDS * sizeof(long));
    CHECK_MPI(MPI_Win_create(words, WORDS * sizeof(long), sizeof(long), MPI_INFO_NULL,
                             MPI_COMM_WORLD, &win));
    CHECK_MPI(MPI_Win_create(kept, WORDS * sizeof(long), sizeof(long), MPI_INFO_NULL,
                             MPI_COMM_WORLD, &never_freed));
    CHECK_MPI(MPI_Win_allocate(WORDS * sizeof(long), sizeof(long), MPI_INFO_NULL,
                               MPI_COMM_WORLD, &allocated, &allocated_never_freed));
    memset(allocated, 0, WORDS * sizeof(long));
    CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
    put_words(value_from(rank, 1), right, 0, win);
    put_words(value_from(rank, 8), right, 0, never_freed);
    put_words(value_from(rank, 9), right, 0, allocated_never_freed);
    CHECK_MPI(MPI_Win_free(&win));      /* a barrier: the left neighbour's puts are in */
    hold_words("MPI_Win_create memory", words, value_from(left, 1));
    hold_words("malloc memory of a window never freed", kept, value_from(left, 8));
    hold_words("MPI_Win_allocate memory of a window never freed", allocated,
               value_from(left, 9));
}

/* MPI_Alloc_mem and malloc memory attached to a dynamic window that is
 * freed without a detach. */
static void held_dynamic(void)
{
    long *words[2];
    MPI_Aint mine[2], theirs[2];
    MPI_Win win;

    CHECK_MPI(MPI_Alloc_mem(WORDS * sizeof(long), MPI_INFO_NULL, &words[0]));
    words[1] = malloc(WORDS * sizeof(long));
    CHECK_MPI(MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &win));
    for (int k = 0; k < 2; k++) {
        memset(words[k], 0, WORDS * sizeof(long));
        CHECK_MPI(MPI_Win_attach(win, words[k], WORDS * sizeof(long)));
        CHECK_MPI(MPI_Get_address(words[k], &mine[k]));
    }
    CHECK_MPI(MPI_Sendrecv(mine, 2, MPI_AINT, left, 0, theirs, 2, MPI_AINT, right, 0,
                           MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    for (int k = 0; k < 2; k++)
        put_words(value_from(rank, 2 + k), right, theirs[k], win);
    CHECK_MPI(MPI_Win_free(&win));
    hold_words("MPI_Alloc_mem memory attached to a freed dynamic window", words[0],
               value_from(left, 2));
    hold_words("malloc memory attached to a freed dynamic window", words[1],
               value_from(left, 3));
}

/* Memory handles of MPI_Alloc_mem and malloc memory, never released, on a
 * parent window that is freed (`free_parent`) or left to MPI_Finalize. */
static void held_memhandles(int free_parent)
{
    char (*handles)[MPIX_MAX_MEMHANDLE_SIZE] = malloc((size_t) nprocs * 2 *
                                                      MPIX_MAX_MEMHANDLE_SIZE);
    long *words[2];
    MPI_Win parent;
    int size, kind = free_parent ? 4 : 6;

    CHECK_MPI(MPI_Alloc_mem(WORDS * sizeof(long), MPI_INFO_NULL, &words[0]));
    words[1] = malloc(WORDS * sizeof(long));
    CHECK_MPI(MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &parent));
    for (int k = 0; k < 2; k++) {
        memset(words[k], 0, WORDS * sizeof(long));
        CHECK_MPI(MPIX_Memhandle_create(words[k], WORDS * sizeof(long), MPI_INFO_NULL, parent,
                                        handles[2 * rank + k], &size));
    }
    CHECK_MPI(MPI_Allgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, handles,
                            2 * MPIX_MAX_MEMHANDLE_SIZE, MPI_BYTE, MPI_COMM_WORLD));
    for (int k = 0; k < 2; k++) {
        MPI_Win hwin;
        CHECK_MPI(MPIX_Win_from_memhandle(handles[2 * right + k], WORDS * sizeof(long),
                                          sizeof(long), MPI_INFO_NULL, right, parent, &hwin));
        long buf[WORDS];
        for (int i = 0; i < WORDS; i++)
            buf[i] = value_from(rank, kind + k) + i;
        CHECK_MPI(MPI_Win_lock(MPI_LOCK_SHARED, right, 0, parent));
        CHECK_MPI(MPI_Put(buf, WORDS, MPI_LONG, right, 0, WORDS, MPI_LONG, hwin));
        CHECK_MPI(MPI_Win_unlock(right, parent));
        CHECK_MPI(MPI_Win_free(&hwin));
    }
    CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));     /* every put is in */
    if (free_parent)
        CHECK_MPI(MPI_Win_free(&parent));
    hold_words("MPI_Alloc_mem memory of an unreleased memory handle", words[0],
               value_from(left, kind));
    hold_words("malloc memory of an unreleased memory handle", words[1],
               value_from(left, kind + 1));
    free(handles);
}

/* After MPI_Finalize: every held region has its data and can be written. */
static int check_held(void)
{
    int errors = 0;

    for (int h = 0; h < n_held; h++) {
        held_t *r = &held[h];
        size_t bad = (size_t) -1;
        if (r->words) {
            for (size_t i = 0; i < WORDS && bad == (size_t) -1; i++)
                if (r->words[i] != r->value + (long) i)
                    bad = i;
            if (bad == (size_t) -1)
                memset(r->words, 0xab, WORDS * sizeof(long));
        } else {
            for (size_t i = 0; i < r->bytes && bad == (size_t) -1; i++)
                if (r->mem[i] != pattern(r->block, i))
                    bad = i;
            if (bad == (size_t) -1)
                memset(r->mem, 0xab, r->bytes);
        }
        if (bad != (size_t) -1) {
            fprintf(stderr, "[rank %d] after MPI_Finalize: %s (#%d): wrong data at element %zu\n",
                    rank, r->what, h, bad);
            errors++;
        }
    }
    return errors;
}

int main(int argc, char **argv)
{
    const char *kind = argc > 1 ? argv[1] : "all";
    int all = strcmp(kind, "all") == 0;

    if (argc > 2 && strcmp(argv[2], "tcp") == 0)
        setenv("UCX_TLS", "tcp,self", 1);
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    right = (rank + 1) % nprocs;
    left = (rank + nprocs - 1) % nprocs;

    if (!all && strcmp(kind, "alloc_mem") && strcmp(kind, "window") && strcmp(kind, "dynamic")
        && strcmp(kind, "memhandle")) {
        if (rank == 0)
            fprintf(stderr, "usage: finalize_held_memory alloc_mem|window|dynamic|memhandle|all "
                    "[tcp]\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    if (all || strcmp(kind, "alloc_mem") == 0)
        held_alloc_mem();
    if (all || strcmp(kind, "window") == 0)
        held_window();
    if (all || strcmp(kind, "dynamic") == 0)
        held_dynamic();
    if (all || strcmp(kind, "memhandle") == 0) {
        held_memhandles(1);
        held_memhandles(0);
    }

    int errors = nbrma_test_errors;
    MPI_Finalize();
    errors += check_held();
    if (rank == 0 && errors == 0)
        printf(" No Errors\n");
    return errors != 0;
}
