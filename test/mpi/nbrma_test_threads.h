/*
 * Helpers of the MPI tests that run threads (MPI_THREAD_MULTIPLE): a CHECK
 * that threads may call at once, and running a function in n threads.
 */
#ifndef NBRMA_TEST_THREADS_H_INCLUDED
#define NBRMA_TEST_THREADS_H_INCLUDED

#include "nbrma_test.h"
#include <pthread.h>

#define NBRMA_TEST_MAX_THREADS 16

static pthread_mutex_t nbrma_test_errors_lock = PTHREAD_MUTEX_INITIALIZER;

/* CHECK counts into one int; threads count through this lock instead */
#define TCHECK(cond, ...)                                                       \
    do {                                                                        \
        if (!(cond)) {                                                          \
            pthread_mutex_lock(&nbrma_test_errors_lock);                        \
            CHECK(cond, __VA_ARGS__);                                           \
            pthread_mutex_unlock(&nbrma_test_errors_lock);                      \
        }                                                                       \
    } while (0)

/* Runs fn in n threads (at most NBRMA_TEST_MAX_THREADS), each given its index
 * 0..n-1 as its argument, and joins them. */
static inline void run_threads(int n, void *(*fn) (void *))
{
    pthread_t tid[NBRMA_TEST_MAX_THREADS];
    if (n > NBRMA_TEST_MAX_THREADS) {
        fprintf(stderr, "run_threads: %d threads, at most %d\n", n, NBRMA_TEST_MAX_THREADS);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    for (long t = 0; t < n; t++)
        pthread_create(&tid[t], NULL, fn, (void *) t);
    for (int t = 0; t < n; t++)
        pthread_join(tid[t], NULL);
}

#endif /* NBRMA_TEST_THREADS_H_INCLUDED */
