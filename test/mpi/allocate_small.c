/*
 * Windows of 1, 4, 8 and 16 bytes per process, of every kind: each process
 * accumulates into, fetches-and-adds on, puts to and gets from its right
 * neighbour, and every value must land at the process it was aimed at.
 *
 * Vanilla MPICH 4.0.2 (ch4:ucx) lets rank 1's accumulates land at rank 0
 * with 8 bytes per process (patch 0024): several processes' memory shares a
 * page of the node-shared segment, and the window's base became the page's.
 * The same happens with any size that is not a multiple of the page (rank
 * 1's memory then starts inside a page): last, windows of 4 KiB + 8 and
 * 64 KiB + 8 bytes per process on MPICH's memory, with a put at the start
 * and an accumulate into the last word of each process's memory (vanilla:
 * rank 1 finds neither).
 *
 * Kinds: MPI_Win_allocate on UCX memory and on MPICH's own, the same with
 * MPICH's synchronization instead of the engine (mpich_nbrma_epochs=false),
 * MPI_Win_create over malloc'ed memory, MPI_Win_allocate_shared (when every
 * process shares this node), and a dynamic window with the memory attached.
 * Element types by size: 1 byte uint8, 4 bytes int32, 8 bytes int64, 16
 * bytes two int64. Run with 2 to 4 processes.
 */
#include "nbrma_test.h"
#include <stdint.h>
#include <string.h>

enum kind { ALLOCATE_UCX, ALLOCATE_MPICH, ALLOCATE_NO_ENGINE, CREATE, SHARED, DYNAMIC, N_KINDS };
static const char *kind_name[N_KINDS] = {
    "allocate (UCX memory)", "allocate (MPICH memory)", "allocate (no engine)",
    "create over malloc", "allocate_shared", "dynamic"
};

static int rank, nprocs, right, left;

struct layout {
    MPI_Datatype type;
    int count;                  /* elements per process */
    int size;                   /* bytes per element */
};

static struct layout layout_of(int bytes)
{
    switch (bytes) {
        case 1:
            return (struct layout) { MPI_UINT8_T, 1, 1 };
        case 4:
            return (struct layout) { MPI_INT32_T, 1, 4 };
        case 8:
            return (struct layout) { MPI_INT64_T, 1, 8 };
        default:
            return (struct layout) { MPI_INT64_T, 2, 8 };
    }
}

/* element i of a buffer of the layout's type, as a number */
static long load(const void *buf, struct layout l, int i)
{
    switch (l.size) {
        case 1:
            return ((const uint8_t *) buf)[i];
        case 4:
            return ((const int32_t *) buf)[i];
        default:
            return (long) ((const int64_t *) buf)[i];
    }
}

static void store(void *buf, struct layout l, int i, long v)
{
    switch (l.size) {
        case 1:
            ((uint8_t *) buf)[i] = (uint8_t) v;
            break;
        case 4:
            ((int32_t *) buf)[i] = (int32_t) v;
            break;
        default:
            ((int64_t *) buf)[i] = v;
    }
}

static void fill(void *buf, struct layout l, long v)
{
    for (int i = 0; i < l.count; i++)
        store(buf, l, i, v + i);
}

/* my window's memory must hold v, v+1, ... */
static void expect_mine(const void *mem, struct layout l, long v, const char *what, int bytes,
                        enum kind k)
{
    for (int i = 0; i < l.count; i++)
        CHECK(load(mem, l, i) == v + i, "%s, %d bytes, %s: element %d holds %ld here, expected %ld",
              kind_name[k], bytes, what, i, load(mem, l, i), v + i);
}

/* The window of kind k with `bytes` per process; *mem is this process's part,
 * *disp what its neighbours use as target displacement 0 toward `right`. */
static void make(enum kind k, int bytes, MPI_Win * win, void **mem, MPI_Aint * disp_right,
                 void **to_free)
{
    MPI_Info info;
    MPI_Info_create(&info);
    *to_free = NULL;
    *disp_right = 0;
    switch (k) {
        case ALLOCATE_UCX:
        case ALLOCATE_MPICH:
        case ALLOCATE_NO_ENGINE:
            MPI_Info_set(info, "mpich_nbrma_ucx_memory", k == ALLOCATE_UCX ? "true" : "false");
            if (k == ALLOCATE_NO_ENGINE)
                MPI_Info_set(info, "mpich_nbrma_epochs", "false");
            CHECK_MPI(MPI_Win_allocate(bytes, 1, info, MPI_COMM_WORLD, mem, win));
            break;
        case CREATE:
            *mem = *to_free = malloc(bytes);
            CHECK_MPI(MPI_Win_create(*mem, bytes, 1, info, MPI_COMM_WORLD, win));
            break;
        case SHARED:
            CHECK_MPI(MPI_Win_allocate_shared(bytes, 1, info, MPI_COMM_WORLD, mem, win));
            break;
        case DYNAMIC:{
                MPI_Aint mine, *all = malloc(nprocs * sizeof(*all));
                *mem = *to_free = malloc(bytes);
                CHECK_MPI(MPI_Win_create_dynamic(info, MPI_COMM_WORLD, win));
                CHECK_MPI(MPI_Win_attach(*win, *mem, bytes));
                MPI_Get_address(*mem, &mine);
                MPI_Allgather(&mine, 1, MPI_AINT, all, 1, MPI_AINT, MPI_COMM_WORLD);
                *disp_right = all[right];
                free(all);
                break;
            }
        default:
            break;
    }
    MPI_Info_free(&info);
}

static void run(enum kind k, int bytes)
{
    struct layout l = layout_of(bytes);
    MPI_Win win;
    void *mem, *to_free;
    MPI_Aint disp;
    int64_t value[2], got[2];

    make(k, bytes, &win, &mem, &disp, &to_free);

    /* fence: accumulate 100+rank into the right neighbour's elements, then
     * fetch-and-add 1 on its first, which must fetch what I accumulated */
    CHECK_MPI(MPI_Win_fence(0, win));
    memset(mem, 0, bytes);
    CHECK_MPI(MPI_Win_fence(0, win));
    fill(value, l, 100 + rank);
    CHECK_MPI(MPI_Accumulate(value, l.count, l.type, right, disp, l.count, l.type, MPI_SUM, win));
    CHECK_MPI(MPI_Win_fence(0, win));
    expect_mine(mem, l, 100 + left, "fence accumulate", bytes, k);
    CHECK_MPI(MPI_Win_fence(0, win));
    store(value, l, 0, 1);
    CHECK_MPI(MPI_Fetch_and_op(value, got, l.type, right, disp, MPI_SUM, win));
    CHECK_MPI(MPI_Win_fence(0, win));
    CHECK(load(got, l, 0) == 100 + rank, "%s, %d bytes: fetch_and_op fetched %ld from rank %d, "
          "expected %d", kind_name[k], bytes, load(got, l, 0), right, 100 + rank);
    CHECK(load(mem, l, 0) == 101 + left, "%s, %d bytes: fetch_and_op left %ld here, expected %d",
          kind_name[k], bytes, load(mem, l, 0), 101 + left);
    /* the left neighbour's lock below may need none of my CPU (lock words):
     * my loads above must be done before its put lands */
    CHECK_MPI(MPI_Win_fence(MPI_MODE_NOSUCCEED, win));

    /* lock: a put read back by its origin, then checked at the target */
    fill(value, l, 200 + rank);
    CHECK_MPI(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, right, 0, win));
    CHECK_MPI(MPI_Put(value, l.count, l.type, right, disp, l.count, l.type, win));
    CHECK_MPI(MPI_Win_flush(right, win));
    memset(got, 0, sizeof(got));
    CHECK_MPI(MPI_Get(got, l.count, l.type, right, disp, l.count, l.type, win));
    CHECK_MPI(MPI_Win_unlock(right, win));
    for (int i = 0; i < l.count; i++)
        CHECK(load(got, l, i) == 200 + rank + i, "%s, %d bytes: read back %ld from rank %d, "
              "expected %d", kind_name[k], bytes, load(got, l, i), right, 200 + rank + i);
    CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
    CHECK_MPI(MPI_Win_lock(MPI_LOCK_SHARED, rank, 0, win));
    expect_mine(mem, l, 200 + left, "lock put", bytes, k);
    CHECK_MPI(MPI_Win_unlock(rank, win));
    CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));

    if (k == DYNAMIC)
        CHECK_MPI(MPI_Win_detach(win, mem));
    CHECK_MPI(MPI_Win_free(&win));
    free(to_free);
}

/* A window of `bytes` per process (not a multiple of the page) on MPICH's
 * memory: a put of 8 bytes at the start of the right neighbour's memory and
 * a fetch-and-add into its last word, both checked where they landed. */
static void unaligned(int bytes)
{
    MPI_Info info;
    MPI_Win win;
    char *mem;
    int64_t value = 300 + rank, one = 1, old = -1, mine[1];
    MPI_Aint last = bytes - (int) sizeof(int64_t);

    MPI_Info_create(&info);
    MPI_Info_set(info, "mpich_nbrma_ucx_memory", "false");
    CHECK_MPI(MPI_Win_allocate(bytes, 1, info, MPI_COMM_WORLD, &mem, &win));
    MPI_Info_free(&info);
    memset(mem, 0, bytes);
    CHECK_MPI(MPI_Win_lock_all(0, win));
    CHECK_MPI(MPI_Win_sync(win));
    CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
    CHECK_MPI(MPI_Put(&value, 1, MPI_INT64_T, right, 0, 1, MPI_INT64_T, win));
    CHECK_MPI(MPI_Fetch_and_op(&one, &old, MPI_INT64_T, right, last, MPI_SUM, win));
    CHECK_MPI(MPI_Win_flush(right, win));
    CHECK(old == 0, "%d bytes per process: the fetch-and-add at rank %d found %lld, not 0",
          bytes, right, (long long) old);
    CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
    CHECK_MPI(MPI_Win_sync(win));
    memcpy(mine, mem, sizeof(mine));
    CHECK(mine[0] == 300 + left, "%d bytes per process: the put from rank %d is not at the "
          "start of my memory (%lld)", bytes, left, (long long) mine[0]);
    memcpy(mine, mem + last, sizeof(mine));
    CHECK(mine[0] == 1, "%d bytes per process: the fetch-and-add from rank %d is not in my "
          "last word (%lld)", bytes, left, (long long) mine[0]);
    CHECK_MPI(MPI_Win_unlock_all(win));
    CHECK_MPI(MPI_Win_free(&win));
}

int main(int argc, char **argv)
{
    static const int sizes[] = { 1, 4, 8, 16 };
    MPI_Comm node;
    int node_size;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    right = (rank + 1) % nprocs;
    left = (rank + nprocs - 1) % nprocs;
    /* allocate_shared needs every process on this node (not across hosts) */
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
    MPI_Comm_size(node, &node_size);
    MPI_Comm_free(&node);

    for (int k = 0; k < N_KINDS; k++) {
        if (k == SHARED && node_size != nprocs)
            continue;
        for (int s = 0; s < (int) (sizeof(sizes) / sizeof(sizes[0])); s++)
            run((enum kind) k, sizes[s]);
    }
    unaligned(4096 + 8);
    unaligned(65536 + 8);
    return report_and_finalize();
}
