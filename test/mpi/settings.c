/*
 * The component's settings are MPICH CVARs: MPI_T lists them in their category
 * with their defaults, and a value written through MPI_T is what the next
 * window creation uses, unless the window's info key says otherwise; the
 * window's MPI_Win_get_info reports what is in force.
 *
 * Run without MPIR_CVAR_NBRMA_* / MPICH_NBRMA_* in the environment (the
 * defaults are checked).
 */
#include "nbrma_test.h"
#include <string.h>

static const char *const cvar_names[] = {
    "MPIR_CVAR_NBRMA_EPOCHS", "MPIR_CVAR_NBRMA_WHOLE_LOCK_EPOCHS",
    "MPIR_CVAR_NBRMA_DYNAMIC_RDMA", "MPIR_CVAR_NBRMA_TRACE",
    "MPIR_CVAR_NBRMA_UCX_MEMORY", "MPIR_CVAR_NBRMA_NATIVE_ATOMICS",
    "MPIR_CVAR_NBRMA_MAILBOXES", "MPIR_CVAR_NBRMA_PULLED_EPOCHS",
    "MPIR_CVAR_NBRMA_YIELD_AFTER_IDLE_US", "MPIR_CVAR_NBRMA_CROSS_MEMORY_RMA",
    "MPIR_CVAR_NBRMA_CROSS_MEMORY_MIN_BYTES", "MPIR_CVAR_NBRMA_MESSAGE_OPS_MAX",
    "MPIR_CVAR_NBRMA_CROSS_MEMORY_CALL_MAX_NS"
};
static const int cvar_defaults[] = { 1, 1, 1, 0, 1, 1, 1, 1, 10, 1, 4096, 8, 500 };

#define N_CVARS (int) (sizeof(cvar_names) / sizeof(cvar_names[0]))

static MPI_T_cvar_handle handles[N_CVARS];

static int cvar_read(int i)
{
    int value = -1;
    CHECK_MPI(MPI_T_cvar_read(handles[i], &value));
    return value;
}

static void cvar_write(int i, int value)
{
    CHECK_MPI(MPI_T_cvar_write(handles[i], &value));
}

/* An info with key = value, or MPI_INFO_NULL if key is NULL. */
static MPI_Info info_with(const char *key, const char *value)
{
    MPI_Info info = MPI_INFO_NULL;
    if (key) {
        MPI_Info_create(&info);
        MPI_Info_set(info, key, value);
    }
    return info;
}

static MPI_Win allocate(const char *key, const char *value)
{
    MPI_Info info = info_with(key, value);
    MPI_Win win;
    void *base;
    CHECK_MPI(MPI_Win_allocate(SMALL_WIN_BYTES, 1, info, MPI_COMM_WORLD, &base, &win));
    if (info != MPI_INFO_NULL)
        MPI_Info_free(&info);
    MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN);
    return win;
}

/* A window of allocate(key, value) reports `expected` for `reported`. */
static void check_allocated(const char *key, const char *value, const char *reported,
                            const char *expected, const char *what)
{
    MPI_Win win = allocate(key, value);

    check_win_info(win, reported, expected, what);
    CHECK_MPI(MPI_Win_free(&win));
}

/* MPI_Win_create over malloc'ed memory (one buffer for all such windows,
 * freed at the end), with key = value if key is not NULL. */
static char *malloced;

static MPI_Win create_over_malloc(const char *key, const char *value)
{
    MPI_Info info = info_with(key, value);
    MPI_Win win;

    if (malloced == NULL)
        malloced = calloc(1, SMALL_WIN_BYTES);
    CHECK(malloced != NULL, "out of memory");
    CHECK_MPI(MPI_Win_create(malloced, SMALL_WIN_BYTES, 1, info, MPI_COMM_WORLD, &win));
    if (info != MPI_INFO_NULL)
        MPI_Info_free(&info);
    return win;
}

/* Creates such a window (with key = value if key is not NULL), checks that
 * MPI_Win_get_info reports `reported` = `expected`, frees it. */
static void check_created(const char *key, const char *value, const char *reported,
                          const char *expected, const char *what)
{
    MPI_Win win = create_over_malloc(key, value);

    check_win_info(win, reported, expected, what);
    CHECK_MPI(MPI_Win_free(&win));
}

int main(int argc, char **argv)
{
    int provided, cat, size;
    MPI_Win win;
    MPI_Request req;

    MPI_Init(&argc, &argv);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    CHECK_MPI(MPI_T_init_thread(MPI_THREAD_SINGLE, &provided));

    /* listed, in their category, with their defaults */
    CHECK(MPI_T_category_get_index("NBRMA", &cat) == MPI_SUCCESS, "no category NBRMA");
    for (int i = 0; i < N_CVARS; i++) {
        int index, count;
        CHECK_MPI(MPI_T_cvar_get_index(cvar_names[i], &index));
        CHECK_MPI(MPI_T_cvar_handle_alloc(index, NULL, &handles[i], &count));
        CHECK(count == 1, "%s has %d values", cvar_names[i], count);
        CHECK(cvar_read(i) == cvar_defaults[i], "%s is %d, default %d", cvar_names[i],
              cvar_read(i), cvar_defaults[i]);
    }

    /* MPIR_CVAR_NBRMA_EPOCHS: on by default, off for the next window, and the
     * info key still wins */
    check_allocated(NULL, NULL, "mpich_nbrma_epochs", "true", "default window");
    cvar_write(0, 0);
    win = allocate(NULL, NULL);
    check_win_info(win, "mpich_nbrma_epochs", NULL, "window with the engine off");
    EXPECT_CLASS(MPIX_Win_ifence(0, win, &req), MPI_ERR_RMA_SYNC);
    CHECK_MPI(MPI_Win_free(&win));
    check_allocated("mpich_nbrma_epochs", "true",
                    "mpich_nbrma_epochs", "true", "info key over the CVAR");
    cvar_write(0, 1);

    /* MPIR_CVAR_NBRMA_WHOLE_LOCK_EPOCHS, and the key that overrides it */
    cvar_write(1, 0);
    check_allocated(NULL, NULL, "mpich_nbrma_whole_lock_epochs", "false", "whole lock epochs off");
    check_allocated("mpich_nbrma_whole_lock_epochs", "true",
                    "mpich_nbrma_whole_lock_epochs", "true", "info key over the CVAR");
    cvar_write(1, 1);
    check_allocated(NULL, NULL, "mpich_nbrma_whole_lock_epochs", "true", "whole lock epochs on");

    /* MPIR_CVAR_NBRMA_DYNAMIC_RDMA */
    cvar_write(2, 0);
    CHECK_MPI(MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &win));
    check_win_info(win, "mpich_nbrma_dynamic_rdma", "false", "dynamic window, rkey cache off");
    CHECK_MPI(MPI_Win_free(&win));
    cvar_write(2, 1);
    CHECK_MPI(MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &win));
    check_win_info(win, "mpich_nbrma_dynamic_rdma", "true", "dynamic window, rkey cache on");
    CHECK_MPI(MPI_Win_free(&win));

    /* MPIR_CVAR_NBRMA_UCX_MEMORY and MPIR_CVAR_NBRMA_NATIVE_ATOMICS: window
     * memory from UCX and UCX atomics, on by default; native atomics need UCX
     * memory on every process */
    win = allocate(NULL, NULL);
    check_win_info(win, "mpich_nbrma_ucx_memory", "true", "default window");
    check_win_info(win, "mpich_nbrma_native_atomics", "true", "default window");
    CHECK_MPI(MPI_Win_free(&win));
    cvar_write(4, 0);
    win = allocate(NULL, NULL);
    check_win_info(win, "mpich_nbrma_ucx_memory", "false", "UCX memory off");
    check_win_info(win, "mpich_nbrma_native_atomics", "false", "UCX memory off");
    CHECK_MPI(MPI_Win_free(&win));
    check_allocated("mpich_nbrma_ucx_memory", "true",
                    "mpich_nbrma_ucx_memory", "true", "info key over the CVAR");
    cvar_write(4, 1);
    cvar_write(5, 0);
    check_allocated(NULL, NULL, "mpich_nbrma_native_atomics", "false", "native atomics off");
    check_allocated("mpich_nbrma_native_atomics", "true",
                    "mpich_nbrma_native_atomics", "true", "info key over the CVAR");
    cvar_write(5, 1);

    /* MPIR_CVAR_NBRMA_MAILBOXES: on by default (every peer of this machine
     * reached), off for the next window, and the info key still wins */
    char peers[16];
    snprintf(peers, sizeof(peers), "%d", expected_mailbox_peers(MPI_COMM_WORLD));
    win = allocate(NULL, NULL);
    check_win_info(win, "mpich_nbrma_mailboxes", "true", "default window");
    check_win_info(win, "mpich_nbrma_mailbox_peers", peers, "default window");
    CHECK_MPI(MPI_Win_free(&win));
    cvar_write(6, 0);
    win = allocate(NULL, NULL);
    check_win_info(win, "mpich_nbrma_mailboxes", "false", "mailboxes off");
    check_win_info(win, "mpich_nbrma_mailbox_peers", "0", "mailboxes off");
    CHECK_MPI(MPI_Win_free(&win));
    check_allocated("mpich_nbrma_mailboxes", "true",
                    "mpich_nbrma_mailboxes", "true", "info key over the CVAR");
    cvar_write(6, 1);

    /* MPIR_CVAR_NBRMA_PULLED_EPOCHS: on by default, off for the next window,
     * the info key wins at creation and with MPI_Win_set_info; nothing pulled
     * yet; every peer of this machine readable where the kernel allows it */
    char readable[MPI_MAX_INFO_VAL + 1], mapped[MPI_MAX_INFO_VAL + 1];
    char value[MPI_MAX_INFO_VAL + 1];
    win = allocate(NULL, NULL);
    check_win_info(win, "mpich_nbrma_pulled_epochs", "true", "default window");
    check_win_info(win, "mpich_nbrma_pulled_epochs_sent", "0", "default window");
    CHECK(win_info_value(win, "mpich_nbrma_readable_peers", readable) &&
          atoi(readable) >= 0 && atoi(readable) <= size - 1,
          "mpich_nbrma_readable_peers reported as %s", readable);
    CHECK_MPI(MPI_Win_free(&win));
    cvar_write(7, 0);
    win = allocate(NULL, NULL);
    check_win_info(win, "mpich_nbrma_pulled_epochs", "false", "pulled epochs off");
    {
        MPI_Info on;
        CHECK_MPI(MPI_Info_create(&on));
        CHECK_MPI(MPI_Info_set(on, "mpich_nbrma_pulled_epochs", "true"));
        CHECK_MPI(MPI_Win_set_info(win, on));
        MPI_Info_free(&on);
    }
    check_win_info(win, "mpich_nbrma_pulled_epochs", "true", "MPI_Win_set_info");
    CHECK_MPI(MPI_Win_free(&win));
    check_allocated("mpich_nbrma_pulled_epochs", "true",
                    "mpich_nbrma_pulled_epochs", "true", "info key over the CVAR");
    cvar_write(7, 1);

    /* MPIR_CVAR_NBRMA_CROSS_MEMORY_RMA: on by default; a window over malloc'ed
     * memory (which UCX does not map) puts and gets by cross-memory attach
     * toward every readable peer, one over UCX memory by copies through UCX's
     * mapping toward every peer whose memory is mapped here; off for the next
     * window, and the info key wins */
    win = create_over_malloc(NULL, NULL);
    check_win_info(win, "mpich_nbrma_cross_memory_rma", "true", "default window");
    check_win_info(win, "mpich_nbrma_cross_memory_peers", readable, "window over malloc");
    CHECK_MPI(MPI_Win_free(&win));
    win = allocate(NULL, NULL);
    /* every other process, where UCX reaches it by shared memory (then it
     * maps its memory here); none over tcp only */
    CHECK(win_info_value(win, "mpich_nbrma_mapped_peers", mapped) &&
          atoi(mapped) == (shared_memory_between_peers() ? size - 1 : 0),
          "mpich_nbrma_mapped_peers reported as %s", mapped);
    check_win_info(win, "mpich_nbrma_cross_memory_peers", mapped, "window over UCX memory");
    CHECK_MPI(MPI_Win_free(&win));
    cvar_write(9, 0);
    win = create_over_malloc(NULL, NULL);
    check_win_info(win, "mpich_nbrma_cross_memory_rma", "false", "cross-memory RMA off");
    check_win_info(win, "mpich_nbrma_cross_memory_peers", "0", "cross-memory RMA off");
    CHECK_MPI(MPI_Win_free(&win));
    win = create_over_malloc("mpich_nbrma_cross_memory_rma", "true");
    check_win_info(win, "mpich_nbrma_cross_memory_peers", readable, "info key over the CVAR");
    check_win_info(win, "mpich_nbrma_cross_memory_min_bytes", "4096", "default");
    CHECK_MPI(MPI_Win_free(&win));
    cvar_write(9, 1);
    /* its size threshold: the CVAR, the info key over it, a bad value ignored */
    cvar_write(10, 64);
    check_created(NULL, NULL, "mpich_nbrma_cross_memory_min_bytes", "64", "threshold CVAR");
    check_created("mpich_nbrma_cross_memory_min_bytes", "0",
                  "mpich_nbrma_cross_memory_min_bytes", "0", "info key over the CVAR");
    check_created("mpich_nbrma_cross_memory_min_bytes", "-5",
                  "mpich_nbrma_cross_memory_min_bytes", "64", "a bad value ignored");
    cvar_write(10, 4096);
    /* the bound on the system call's price above which gets and puts of
     * every size take UCX's path (R1): the CVAR's at creation, negative
     * "any"; the price measured once a peer is readable, else none */
    win = create_over_malloc(NULL, NULL);
    check_win_info(win, "mpich_nbrma_cross_memory_call_max_ns", "500", "default");
    CHECK(win_info_value(win, "mpich_nbrma_cross_memory_call_ns", value) &&
          (atoi(readable) > 0 ? atol(value) > 0 : strcmp(value, "0") == 0),
          "mpich_nbrma_cross_memory_call_ns reported as %s with %s readable peers", value,
          readable);
    CHECK_MPI(MPI_Win_free(&win));
    cvar_write(12, -1);
    check_created(NULL, NULL, "mpich_nbrma_cross_memory_call_max_ns", "-1", "any price");
    check_created("mpich_nbrma_cross_memory_call_max_ns", "2000",
                  "mpich_nbrma_cross_memory_call_max_ns", "2000", "info key over the CVAR");
    check_created("mpich_nbrma_cross_memory_call_max_ns", "cheap",
                  "mpich_nbrma_cross_memory_call_max_ns", "-1", "a bad value ignored");
    cvar_write(12, 500);
    free(malloced);
    /* rule R2's threshold for the CPU's atomics on mapped memory: the
     * default, the info key over it, a bad value ignored */
    check_allocated(NULL, NULL, "mpich_nbrma_mapped_atomics_min_bytes", "8", "default");
    check_allocated("mpich_nbrma_mapped_atomics_min_bytes", "4096",
                    "mpich_nbrma_mapped_atomics_min_bytes", "4096", "info key");
    check_allocated("mpich_nbrma_mapped_atomics_min_bytes", "many",
                    "mpich_nbrma_mapped_atomics_min_bytes", "8", "a bad value ignored");
    /* rule R8's stream: the default, the CVAR, the info key over it */
    check_allocated(NULL, NULL, "mpich_nbrma_message_ops_max", "8", "default");
    cvar_write(11, 0);
    check_allocated(NULL, NULL, "mpich_nbrma_message_ops_max", "0", "CVAR");
    check_allocated("mpich_nbrma_message_ops_max", "64",
                    "mpich_nbrma_message_ops_max", "64", "info key over the CVAR");
    cvar_write(11, 8);

    for (int i = 0; i < N_CVARS; i++)
        MPI_T_cvar_handle_free(&handles[i]);
    /* MPICH's own key perf_preference: "none" unless asked for (patch 0028;
     * vanilla 4.0.2 reported uninitialized stack here) */
    check_allocated(NULL, NULL, "perf_preference", "none", "default window");
    check_allocated("perf_preference", "lat",
                    "perf_preference", "lat", "window asking for latency");

    MPI_T_finalize();
    return report_and_finalize();
}
