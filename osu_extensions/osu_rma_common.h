/*
 * What the OSU-compatible one-sided benchmarks of osu_extensions/ share:
 * OSU 7.4's options and output format, its windows and its synchronization
 * loops, plus the nonblocking synchronization modes of the patch-set.
 *
 * Options (as osu_put_latency & co. of OSU 7.4, where they exist there):
 *   -w create|allocate|dynamic   window creation (default allocate); the
 *      |memhandle                patched MPICH's memory-handle windows too
 *                                (rank 1 exposes its memory with
 *                                MPIX_Memhandle_create on a dynamic window,
 *                                rank 0 makes the window with
 *                                MPIX_Win_from_memhandle; passive target, the
 *                                locks on the dynamic parent)
 *   -s MODE                      synchronization (default flush): OSU's
 *                                lock, pscw, fence, flush, flush_local,
 *                                lock_all; the patched MPICH's ilock, ipscw,
 *                                ifence, iflush, iflush_local, iflush_all,
 *                                iflush_local_all, ilock_all (the MPIX_Win_i*
 *                                call, then MPI_Wait on its request)
 *   -m [MIN:]MAX                 message sizes (default 1:4194304)
 *   -i ITERS, -x SKIP            timed and warm-up iterations (default
 *                                10000/100, 1000/10 above 8192 bytes)
 *   -c [US] -t CALLS             overlap benchmarks only (osu_rma_overlap.c)
 *
 * Output: OSU's header lines ("# OSU MPI_Put Latency Test v7.4", "# Window
 * creation: ...", "# Synchronization: ...") and rows ("%-10d%20.2f"), so that
 * scripts that read OSU's output read ours. After each size the data the
 * operations left is checked (at the target, or at the origin for what it
 * fetched); a wrong byte prints "# FAILED ..." and the run exits with 1.
 */
#ifndef OSU_RMA_COMMON_H_INCLUDED
#define OSU_RMA_COMMON_H_INCLUDED

#include <mpi.h>
#include <stddef.h>

/* Only the patched MPICH declares the nonblocking synchronization calls; its
 * mpi.h is recognized by a macro of the same patch-set. */
#ifdef MPIX_MAX_MEMHANDLE_SIZE
#define OSU_HAVE_NBRMA 1
#else
#define OSU_HAVE_NBRMA 0
#endif

#define OSU_VERSION "7.4"

enum osu_win_kind { OSU_WIN_CREATE, OSU_WIN_ALLOCATE, OSU_WIN_DYNAMIC, OSU_WIN_MEMHANDLE };

/* How the epochs of a mode are shaped (OSU's loops). */
enum osu_family {
    OSU_HELD,                   /* one lock around the loop, a flush per operation */
    OSU_PER_OP,                 /* lock/unlock or lock_all/unlock_all per operation */
    OSU_FENCE,                  /* ping-pong of fence epochs */
    OSU_PSCW                    /* ping-pong of post/start/complete/wait epochs */
};

struct osu_sync_mode {
    const char *name;           /* -s value */
    const char *label;          /* "# Synchronization: " line */
    enum osu_family family;
    int nonblocking;            /* an MPIX_Win_i* call plus MPI_Wait */
    /* OSU_HELD: completes the operations toward target; OSU_PER_OP: closes the
     * epoch. Nonblocking modes set *req, blocking ones leave it null. */
    int (*close)(int target, MPI_Win win, MPI_Request * req);
    /* OSU_PER_OP: opens the epoch */
    int (*open)(int lock_type, int target, MPI_Win win);
};

struct osu_options {
    enum osu_win_kind win_kind;
    const struct osu_sync_mode *sync;
    size_t min_size, max_size;
    int iters, skip, iters_large, skip_large;
    double compute_us;          /* -c: <0 as long as the pure communication, 0 none */
    int test_calls;             /* -t */
};

struct osu_run;

/* One operation family (put, get, accumulate, fetch_and_op, compare_and_swap). */
struct osu_op {
    const char *title;          /* "OSU MPI_Put Latency Test" */
    const char *call;           /* "MPI_Put" */
    const char *datatype;       /* "# Datatype: ..." line, NULL for none */
    size_t fixed_size;          /* fop/cas: one row of this size; 0: the -m range */
    int lock_type;              /* of the lock modes: OSU takes fop/cas exclusively */
    /* fills the window and buffers before a size */
    void (*prepare)(struct osu_run * r);
    /* one operation toward target */
    int (*issue)(struct osu_run * r, int target);
    /* after a size: the bytes that are wrong, given how many operations the
     * peer issued into this rank's window and this rank issued */
    long (*check)(struct osu_run * r, long received, long issued);
};

/* One size on one window. */
struct osu_run {
    const struct osu_options *opt;
    const struct osu_op *op;
    int rank;
    size_t size;
    MPI_Win win;                /* the operations' window (MPI_WIN_NULL at a
                                 * memory handle's owner) */
    MPI_Win epoch_win;          /* the window of lock/unlock: win, or a memory
                                 * handle's dynamic parent */
    char *win_mem;              /* this rank's window memory, size bytes */
    MPI_Aint peer_disp;         /* the peer's window memory as its displacement */
    char *sbuf, *rbuf, *cbuf;   /* origin buffers, size bytes each */
    MPI_Win parent;             /* -w memhandle: the dynamic parent */
#if OSU_HAVE_NBRMA
    char handle[MPIX_MAX_MEMHANDLE_SIZE];       /* -w memhandle: the owner's handle */
#endif
};

/* The target displacement of the operations: the peer's window memory. */
static inline MPI_Aint osu_disp(const struct osu_run *r)
{
    return r->opt->win_kind == OSU_WIN_DYNAMIC ? r->peer_disp : 0;
}

/* main() of a benchmark: MPI_Init, options, exactly 2 ranks, the latency or
 * the overlap loops, MPI_Finalize; returns the exit status (1 after a wrong
 * byte or a bad option). */
int osu_main(int argc, char **argv, const char *program, const struct osu_op *op, int overlap);

/* The operation families (osu_rma_ops.c). */
extern const struct osu_op osu_op_put, osu_op_get, osu_op_acc, osu_op_fop, osu_op_cas;

/* The synchronization modes (osu_rma_sync.c) and the pieces of active-target
 * epochs: each closing call sets *req to the request of its nonblocking
 * variant, or to MPI_REQUEST_NULL after the blocking one. */
extern const struct osu_sync_mode osu_sync_modes[];
extern const int osu_n_sync_modes;
void osu_wait_closed(MPI_Request * req);
void osu_fence(const struct osu_sync_mode *m, MPI_Win win, MPI_Request * req);
void osu_pscw_start(const struct osu_sync_mode *m, MPI_Group peer, MPI_Win win);
void osu_pscw_complete(const struct osu_sync_mode *m, MPI_Win win, MPI_Request * req);
void osu_pscw_post(const struct osu_sync_mode *m, MPI_Group peer, MPI_Win win);
void osu_pscw_wait(const struct osu_sync_mode *m, MPI_Win win, MPI_Request * req);
MPI_Group osu_peer_group(int peer);

/* Parses OSU's options; on a bad one prints the usage at rank 0 and returns
 * 1, on -h prints it and returns -1 (the caller finalizes and exits). `overlap`
 * accepts -c and -t. */
int osu_parse_options(int argc, char **argv, const char *program, int overlap,
                      struct osu_options *opt);

/* Run a latency benchmark (osu_*_latency's loops, osu_rma_latency.c) or an
 * overlap benchmark (osu_rma_overlap.c) and print it; return the number of
 * wrong bytes found anywhere (0 on ranks other than 0). */
long osu_latency_benchmark(const struct osu_options *opt, const struct osu_op *op);
long osu_overlap_benchmark(const struct osu_options *opt, const struct osu_op *op);

/* Prints OSU's header lines for a benchmark titled `title`. */
void osu_print_header(const struct osu_options *opt, const char *title, const char *datatype);

/* Window and buffers of one size; collective. */
void osu_run_setup(struct osu_run *r, const struct osu_options *opt, const struct osu_op *op,
                   size_t size);
void osu_run_teardown(struct osu_run *r);
/* After a size: the op's check on both ranks, given the operations this rank
 * issued; returns at rank 0 the wrong bytes of both. Collective. */
long osu_run_check(struct osu_run *r, long issued);

/* The sizes of the run: 1, 2, 4, ... within [min, max]; iterations by size. */
#define OSU_LARGE_MESSAGE_SIZE 8192
int osu_iters_of(const struct osu_options *opt, size_t size);
int osu_skip_of(const struct osu_options *opt, size_t size);

/* Fails the run with an MPI error's text. */
void osu_check_mpi(int rc, const char *what);
#define OSU_CK(call) osu_check_mpi((call), #call)

/* Busy computation for `us` microseconds; with calls > 0, that many
 * MPI_Test calls on *req spread over it (OSU's dummy_compute). Returns the
 * time spent in those tests, in microseconds. */
double osu_compute(double us, MPI_Request * req, int calls);

#endif /* OSU_RMA_COMMON_H_INCLUDED */
