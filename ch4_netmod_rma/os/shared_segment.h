/*
 * mpich-nbrma: shared memory that other processes of the host attach by a
 * key: the windows' mailboxes (kept_segments.c keeps them across windows).
 *
 * Not UCX memory: memory that UCX allocates enters its registration cache
 * for as long as it lives, and while a region far from the others is there,
 * every later ucp_mem_map and ucp_mem_unmap (MPICH's of each window's
 * memory) walks and rebuilds a deep page table: with one MPI_Win_allocate
 * window held, MPI_Win_create + MPI_Win_free of a heap buffer took 16.5 us
 * against 13.9 in vanilla MPICH 4.0.2 here, and the mailboxes kept across
 * windows were such memory always.
 *
 * A System V segment, marked for removal as soon as its creator attached it
 * (the kernel frees it when the last process detaches, also after a crash;
 * Linux lets others attach it meanwhile, as UCX's sysv transport relies on
 * too), with a header that holds its key: the segment's id and a random
 * cookie that an attach checks, so that an id that names nothing, another
 * host's or another IPC namespace's segment, or a segment made anew with a
 * reused id is never taken for the peer's. Readable and writable by the
 * same user only. MPICH- and UCX-free (test/unit/test_shared_segment.cpp).
 */

#ifndef NBRMA_SHARED_SEGMENT_H_INCLUDED
#define NBRMA_SHARED_SEGMENT_H_INCLUDED

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* What another process needs to attach a segment; exchanged between
 * processes as it is (24 bytes). */
typedef struct {
    int64_t shmid;              /* the System V id */
    uint64_t cookie;            /* in the segment's header; never 0 */
    uint64_t bytes;             /* its usable bytes */
} nbrma_segment_key_t;

/* A new segment of `bytes` usable bytes, attached here, zeroed, aligned to 64
 * bytes; NULL when the system gives none. */
void *nbrma_segment_create(size_t bytes);
/* The key of a segment made or attached here. */
nbrma_segment_key_t nbrma_segment_key(const void *memory);
/* The segment `key` names, attached here; NULL when there is none or it is
 * not the one the key was made for (its header holds another key, or the
 * system's segment is smaller than the key says). */
void *nbrma_segment_attach(const nbrma_segment_key_t * key);
/* Detaches a segment made or attached here; the last detach frees it. */
void nbrma_segment_detach(void *memory);

#ifdef __cplusplus
}
#endif
#endif /* NBRMA_SHARED_SEGMENT_H_INCLUDED */
