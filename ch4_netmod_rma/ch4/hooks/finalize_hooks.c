/*
 * mpich-nbrma: the PMI barrier that ends the UCX netmod's MPI_Finalize (patch
 * 0026). Over tcp an endpoint close completes only when the peer's worker
 * answers, and a peer waiting in that barrier does not progress: MPI_Finalize
 * hung when one rank finished its closes first. So a helper thread, talking
 * only to the process manager, waits in the barrier while this thread keeps
 * progressing the workers (as Open MPI's UCX components do in a PMIx fence).
 */

#include "mpidimpl.h"
#include "ucx_impl.h"
#include "mpidi_nbrma_hooks.h"
#include <pthread.h>

typedef struct {
    int mpi_errno;
    int done;
} pmi_barrier_t;

static void *pmi_barrier_thread(void *arg)
{
    pmi_barrier_t *barrier = arg;

    barrier->mpi_errno = MPIR_pmi_barrier();
    __atomic_store_n(&barrier->done, 1, __ATOMIC_RELEASE);
    return NULL;
}

int MPIDI_NBRMA_finalize_barrier_hook(void)
{
    pmi_barrier_t barrier = { MPI_SUCCESS, 0 };
    pthread_t thread;

    if (pthread_create(&thread, NULL, pmi_barrier_thread, &barrier) != 0)
        return MPIR_pmi_barrier();      /* no thread to spare: MPICH's own way */
    while (!__atomic_load_n(&barrier.done, __ATOMIC_ACQUIRE))
        for (int i = 0; i < MPIDI_UCX_global.num_vnis; i++)
            ucp_worker_progress(MPIDI_UCX_global.ctx[i].worker);
    pthread_join(thread, NULL);
    return barrier.mpi_errno;
}
