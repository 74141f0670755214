/*
 * What every OSU-compatible benchmark does around its loops: OSU 7.4's
 * options, the window and buffers of a size, the check after it, main(), and
 * the computation of the overlap benchmarks (see osu_rma_common.h).
 */
#define _POSIX_C_SOURCE 200809L /* getopt under -std=c99 */
#include "osu_rma_common.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

void osu_check_mpi(int rc, const char *what)
{
    if (rc != MPI_SUCCESS) {
        char msg[MPI_MAX_ERROR_STRING];
        int len;
        MPI_Error_string(rc, msg, &len);
        fprintf(stderr, "%s failed: %s\n", what, msg);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
}

static const char *win_kind_names[] = { "create", "allocate", "dynamic", "memhandle" };
static const char *win_kind_labels[] = { "MPI_Win_create", "MPI_Win_allocate",
    "MPI_Win_create_dynamic", "MPIX_Win_from_memhandle"
};

/* --- options ---------------------------------------------------------------- */

static void usage(const char *program, int overlap)
{
    fprintf(stderr, "Usage: %s [options]\n"
            "  -w create|allocate|dynamic|memhandle  window creation (default allocate)\n"
            "  -s MODE                     synchronization (default flush):", program);
    for (int i = 0; i < osu_n_sync_modes; i++)
        fprintf(stderr, " %s", osu_sync_modes[i].name);
    fprintf(stderr, "\n"
            "  -m [MIN:]MAX                message sizes (default 1:4194304)\n"
            "  -i ITERS                    timed iterations (default 10000, 1000 above 8192 B)\n"
            "  -x SKIP                     warm-up iterations (default 100, 10 above 8192 B)\n");
    if (overlap)
        fprintf(stderr, "  -c [US]                     compute US microseconds between the "
                "closing call and its completion\n"
                "                              (default: as long as the pure communication)\n"
                "  -t CALLS                    MPI_Test calls during the computation "
                "(default 0)\n");
#if !OSU_HAVE_NBRMA
    fprintf(stderr, "(the i* modes need the patched MPICH's mpi.h)\n");
#endif
}

static int parse_sizes(const char *arg, size_t *min, size_t *max)
{
    char *end;
    const char *colon = strchr(arg, ':');
    if (colon) {
        long lo = strtol(arg, &end, 10);
        if (end != colon || lo < 0)
            return -1;
        *min = (size_t) lo;
        if (colon[1] == '\0')
            return 0;   /* "MIN:" keeps the default maximum */
        arg = colon + 1;
    }
    long hi = strtol(arg, &end, 10);
    if (*end || hi < 1)
        return -1;
    *max = (size_t) hi;
    return *min <= *max ? 0 : -1;
}

int osu_parse_options(int argc, char **argv, const char *program, int overlap,
                      struct osu_options *opt)
{
    int rank, c, bad = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    *opt = (struct osu_options) {
        .win_kind = OSU_WIN_ALLOCATE,.sync = NULL,.min_size = 1,
        .max_size = 1 << 22,.iters = 10000,.skip = 100,.iters_large = 1000,.skip_large = 10,
        .compute_us = 0,.test_calls = 0
    };
    for (int k = 0; k < osu_n_sync_modes; k++)
        if (!strcmp(osu_sync_modes[k].name, "flush"))
            opt->sync = &osu_sync_modes[k];     /* OSU's default with MPI-3 */
    if (overlap)
        opt->compute_us = -1;
    opterr = 0;
    while (!bad && (c = getopt(argc, argv, overlap ? "w:s:m:i:x:c::t:h" : "w:s:m:i:x:h")) != -1) {
        switch (c) {
            case 'w':
                bad = 1;
                for (int k = 0; k < (OSU_HAVE_NBRMA ? 4 : 3); k++)
                    if (!strcasecmp(optarg, win_kind_names[k]))
                        opt->win_kind = (enum osu_win_kind) k, bad = 0;
                break;
            case 's':
                bad = 1;
                for (int k = 0; k < osu_n_sync_modes; k++)
                    if (!strcasecmp(optarg, osu_sync_modes[k].name))
                        opt->sync = &osu_sync_modes[k], bad = 0;
                break;
            case 'm':
                bad = parse_sizes(optarg, &opt->min_size, &opt->max_size) != 0;
                break;
            case 'i':
                opt->iters = opt->iters_large = atoi(optarg);
                bad = opt->iters < 1;
                break;
            case 'x':
                opt->skip = opt->skip_large = atoi(optarg);
                bad = opt->skip < 0;
                break;
            case 'c':
                opt->compute_us = optarg ? atof(optarg) : -1;
                bad = optarg && opt->compute_us < 0;
                break;
            case 't':
                opt->test_calls = atoi(optarg);
                bad = opt->test_calls < 0;
                break;
            case 'h':
                if (rank == 0)
                    usage(program, overlap);
                return -1;
            default:
                bad = 1;
        }
    }
    if (!bad && optind < argc)
        bad = 1;
    /* a memory-handle window is the origin's alone, over a dynamic parent
     * (which has no nonblocking epochs): passive target, flushes of any kind */
    if (!bad && opt->win_kind == OSU_WIN_MEMHANDLE &&
        (opt->sync->family == OSU_FENCE || opt->sync->family == OSU_PSCW ||
         (opt->sync->family == OSU_PER_OP && opt->sync->nonblocking))) {
        if (rank == 0)
            fprintf(stderr, "-w memhandle: passive target only (-s lock, lock_all, flush, "
                    "flush_local and the iflush modes)\n");
        return 1;
    }
    if (bad && rank == 0)
        usage(program, overlap);
    return bad;
}

int osu_iters_of(const struct osu_options *opt, size_t size)
{
    return size > OSU_LARGE_MESSAGE_SIZE ? opt->iters_large : opt->iters;
}

int osu_skip_of(const struct osu_options *opt, size_t size)
{
    return size > OSU_LARGE_MESSAGE_SIZE ? opt->skip_large : opt->skip;
}

void osu_print_header(const struct osu_options *opt, const char *title, const char *datatype)
{
    printf("# %s v%s\n", title, OSU_VERSION);
    printf("# Window creation: %s\n", win_kind_labels[opt->win_kind]);
    printf("# Synchronization: %s\n", opt->sync->label);
    if (datatype)
        printf("# Datatype: %s.\n", datatype);
}

/* --- windows ---------------------------------------------------------------- */

/* -w memhandle: rank 1 exposes win_mem through a dynamic parent, rank 0
 * makes its window from the handle (local); both keep the parent for the
 * locks. */
static void osu_memhandle_setup(struct osu_run *r, size_t bytes)
{
#if OSU_HAVE_NBRMA
    char handle[MPIX_MAX_MEMHANDLE_SIZE];
    int handle_size = 0;
    r->win_mem = calloc(1, bytes);
    r->win = MPI_WIN_NULL;
    OSU_CK(MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &r->parent));
    if (r->rank == 1)
        OSU_CK(MPIX_Memhandle_create(r->win_mem, (MPI_Aint) bytes, MPI_INFO_NULL, r->parent,
                                     handle, &handle_size));
    OSU_CK(MPI_Bcast(handle, MPIX_MAX_MEMHANDLE_SIZE, MPI_BYTE, 1, MPI_COMM_WORLD));
    if (r->rank == 0)
        OSU_CK(MPIX_Win_from_memhandle(handle, (MPI_Aint) bytes, 1, MPI_INFO_NULL, 1, r->parent,
                                       &r->win));
    memcpy(r->handle, handle, sizeof handle);
#else
    (void) r, (void) bytes;
#endif
}

static void osu_memhandle_teardown(struct osu_run *r)
{
#if OSU_HAVE_NBRMA
    if (r->rank == 0)
        OSU_CK(MPI_Win_free(&r->win));
    OSU_CK(MPI_Barrier(MPI_COMM_WORLD));        /* no window uses the handle any more */
    if (r->rank == 1)
        OSU_CK(MPIX_Memhandle_release(r->handle, r->parent));
    OSU_CK(MPI_Win_free(&r->parent));
#else
    (void) r;
#endif
}

void osu_run_setup(struct osu_run *r, const struct osu_options *opt, const struct osu_op *op,
                   size_t size)
{
    size_t bytes = size ? size : 1;
    *r = (struct osu_run) {.opt = opt,.op = op,.size = size };
    MPI_Comm_rank(MPI_COMM_WORLD, &r->rank);
    r->sbuf = calloc(1, bytes);
    r->rbuf = calloc(1, bytes);
    r->cbuf = calloc(1, bytes);
    switch (opt->win_kind) {
        case OSU_WIN_ALLOCATE:
            OSU_CK(MPI_Win_allocate((MPI_Aint) bytes, 1, MPI_INFO_NULL, MPI_COMM_WORLD,
                                    &r->win_mem, &r->win));
            break;
        case OSU_WIN_CREATE:
            r->win_mem = calloc(1, bytes);
            OSU_CK(MPI_Win_create(r->win_mem, (MPI_Aint) bytes, 1, MPI_INFO_NULL,
                                  MPI_COMM_WORLD, &r->win));
            break;
        case OSU_WIN_DYNAMIC:{
                MPI_Aint mine;
                r->win_mem = calloc(1, bytes);
                OSU_CK(MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &r->win));
                OSU_CK(MPI_Win_attach(r->win, r->win_mem, (MPI_Aint) bytes));
                OSU_CK(MPI_Get_address(r->win_mem, &mine));
                OSU_CK(MPI_Sendrecv(&mine, 1, MPI_AINT, 1 - r->rank, 0, &r->peer_disp, 1,
                                    MPI_AINT, 1 - r->rank, 0, MPI_COMM_WORLD,
                                    MPI_STATUS_IGNORE));
                break;
            }
        case OSU_WIN_MEMHANDLE:
            osu_memhandle_setup(r, bytes);
            break;
    }
    r->epoch_win = r->opt->win_kind == OSU_WIN_MEMHANDLE ? r->parent : r->win;
    /* the window's memory is written only outside epochs, before a barrier */
    op->prepare(r);
    OSU_CK(MPI_Barrier(MPI_COMM_WORLD));
}

long osu_run_check(struct osu_run *r, long issued)
{
    long received, wrong, all_wrong;
    OSU_CK(MPI_Sendrecv(&issued, 1, MPI_LONG, 1 - r->rank, 1, &received, 1, MPI_LONG,
                        1 - r->rank, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    wrong = r->op->check(r, received, issued);
    OSU_CK(MPI_Reduce(&wrong, &all_wrong, 1, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD));
    return r->rank == 0 ? all_wrong : 0;
}

void osu_run_teardown(struct osu_run *r)
{
    if (r->opt->win_kind == OSU_WIN_MEMHANDLE)
        osu_memhandle_teardown(r);
    else {
        if (r->opt->win_kind == OSU_WIN_DYNAMIC)
            OSU_CK(MPI_Win_detach(r->win, r->win_mem));
        OSU_CK(MPI_Win_free(&r->win));
    }
    if (r->opt->win_kind != OSU_WIN_ALLOCATE)
        free(r->win_mem);
    free(r->sbuf), free(r->rbuf), free(r->cbuf);
}

int osu_main(int argc, char **argv, const char *program, const struct osu_op *op, int overlap)
{
    struct osu_options opt;
    int rank, nprocs, status = 0;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    int parsed = osu_parse_options(argc, argv, program, overlap, &opt);
    if (parsed)
        status = parsed < 0 ? 0 : 1;   /* -h: the usage, and success */
    else if (nprocs != 2) {
        if (rank == 0)
            fprintf(stderr, "This test requires exactly two processes\n");
        status = 1;
    } else if (overlap)
        status = osu_overlap_benchmark(&opt, op) ? 1 : 0;
    else
        status = osu_latency_benchmark(&opt, op) ? 1 : 0;
    MPI_Finalize();
    return status;
}

/* --- computation ------------------------------------------------------------ */

static volatile double sink;

static void spin_for(double us)
{
    double end = MPI_Wtime() + us * 1e-6, x = 1.0;
    while (MPI_Wtime() < end)
        for (int i = 0; i < 64; i++)
            x = x * 1.0000001 + 1e-9;
    sink = x;
}

double osu_compute(double us, MPI_Request * req, int calls)
{
    double in_tests = 0;
    if (calls <= 0 || !req) {
        spin_for(us);
        return 0;
    }
    for (int c = 0; c < calls; c++) {
        spin_for(us / calls);
        double t0 = MPI_Wtime();
        int flag;
        if (*req != MPI_REQUEST_NULL)
            OSU_CK(MPI_Test(req, &flag, MPI_STATUS_IGNORE));
        in_tests += (MPI_Wtime() - t0) * 1e6;
    }
    return in_tests;
}
