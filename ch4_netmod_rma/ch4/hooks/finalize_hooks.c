/*
 * mpich-nbrma: the last barrier of the UCX netmod's MPI_Finalize (patch 0026).
 *
 * MPICH 4.0.2 closes every endpoint in flush mode, progresses its worker until
 * its own closes completed, and then waits in a PMI barrier. Over UCX's tcp
 * transport a close completes only when the peer's worker answers, and a peer
 * that waits in the PMI barrier does not progress its worker: MPI_Finalize
 * hung whenever one rank finished its closes before another (see the patch's
 * header). Here the PMI barrier runs in a helper thread while the calling
 * thread keeps progressing the workers, so that every rank answers the
 * others' closes until all of them reached the barrier (Open MPI's UCX
 * components progress their worker during a nonblocking PMIx fence for the
 * same reason). The helper thread only talks to the process manager; the
 * workers stay with the calling thread.
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
