/*
 * Helpers shared by the MPI integration tests: checks that count errors instead
 * of stopping at the first one, and waits that fail after a time limit instead
 * of hanging (a hang must fail the test, not stall CI).
 */
#ifndef NBRMA_TEST_H_INCLUDED
#define NBRMA_TEST_H_INCLUDED

#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

static int nbrma_test_errors;

#define CHECK(cond, ...)                                                        \
    do {                                                                        \
        if (!(cond)) {                                                          \
            int rank_;                                                          \
            MPI_Comm_rank(MPI_COMM_WORLD, &rank_);                              \
            fprintf(stderr, "[rank %d] %s:%d: check failed: %s: ", rank_,       \
                    __FILE__, __LINE__, #cond);                                 \
            fprintf(stderr, __VA_ARGS__);                                       \
            fputc('\n', stderr);                                                \
            nbrma_test_errors++;                                                \
        }                                                                       \
    } while (0)

#define CHECK_MPI(call)                                                         \
    do {                                                                        \
        int rc_ = (call);                                                       \
        if (rc_ != MPI_SUCCESS) {                                               \
            char msg_[MPI_MAX_ERROR_STRING];                                    \
            int len_;                                                           \
            MPI_Error_string(rc_, msg_, &len_);                                 \
            fprintf(stderr, "%s:%d: %s failed: %s\n", __FILE__, __LINE__,       \
                    #call, msg_);                                               \
            MPI_Abort(MPI_COMM_WORLD, 2);                                       \
        }                                                                       \
    } while (0)

/* Waits for `req` with MPI_Test, aborting the job after `seconds`. */
static inline void wait_or_abort(MPI_Request * req, double seconds, const char *what)
{
    double deadline = MPI_Wtime() + seconds;
    int done = 0;
    while (!done) {
        CHECK_MPI(MPI_Test(req, &done, MPI_STATUS_IGNORE));
        if (!done && MPI_Wtime() > deadline) {
            fprintf(stderr, "request of %s did not complete within %.0f s\n", what, seconds);
            MPI_Abort(MPI_COMM_WORLD, 3);
        }
    }
}

/* Error class of an MPI return code. */
static inline int error_class(int rc)
{
    int cls;
    MPI_Error_class(rc, &cls);
    return cls;
}

/* Sums the error counts of all ranks; rank 0 prints MPICH's " No Errors" line
 * when there were none. Returns the process exit status. */
static inline int report_and_finalize(void)
{
    int rank, total = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Reduce(&nbrma_test_errors, &total, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
    if (rank == 0) {
        if (total == 0)
            printf(" No Errors\n");
        else
            printf(" Found %d errors\n", total);
    }
    MPI_Finalize();
    return total != 0;
}

#endif /* NBRMA_TEST_H_INCLUDED */
