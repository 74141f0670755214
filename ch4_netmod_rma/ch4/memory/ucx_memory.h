/*
 * mpich-nbrma: memory that UCX allocated, so that RMA reaches it without the
 * owner's CPU.
 *
 * UCX 1.13's shared-memory transports (sysv, posix) put, get and perform
 * atomics directly only on memory that their memory domain allocated
 * (ucp_mem_map with UCP_MEM_MAP_ALLOCATE); on any other memory UCX emulates
 * RMA with active messages, which wait until the target progresses its worker
 * (ucx_info -d; ../../README.md, "RMA without the target's CPU"). So
 * MPI_Win_allocate and MPI_Alloc_mem hand out memory allocated here, and every
 * place that maps memory for RMA (window creation in ucx_win.c, memory handles,
 * the rkey cache of dynamic windows) maps through MPIDI_NBRMA_memory_map, which
 * reuses an allocation's own mapping for any range inside it.
 *
 * The allocations are kept in a process-wide table, under a mutex of its own:
 * MPI_Alloc_mem and MPI_Free_mem may run in several threads at once. This file
 * includes no MPICH header; the callers pass MPICH's UCX context.
 */

#ifndef NBRMA_UCX_MEMORY_H_INCLUDED
#define NBRMA_UCX_MEMORY_H_INCLUDED

#include <ucp/api/ucp.h>
#include <stdbool.h>
#include <stddef.h>

/* Allocates `size` (> 0) bytes with UCX; NULL when UCX cannot or `size` is
 * more than half the machine's memory (ucx_memory.c says why). */
void *MPIDI_NBRMA_memory_alloc(ucp_context_h context, size_t size);
/* Frees an allocation of MPIDI_NBRMA_memory_alloc given by its base; false
 * (nothing done) when `base` is not one. */
bool MPIDI_NBRMA_memory_free(ucp_context_h context, void *base);
/* Whether [addr, addr + size) lies inside one allocation of this table, and
 * then that allocation's mapping in *mem_h (if not NULL). */
bool MPIDI_NBRMA_memory_find(const void *addr, size_t size, ucp_mem_h * mem_h);

/* A mapping of [addr, addr + size) for RMA: the mapping of the UCX allocation
 * that contains the range (*owned = false), or a new one (*owned = true). */
ucs_status_t MPIDI_NBRMA_memory_map(ucp_context_h context, void *addr, size_t size,
                                    ucp_mem_h * mem_h, bool *owned);
/* Releases a mapping of MPIDI_NBRMA_memory_map. */
void MPIDI_NBRMA_memory_unmap(ucp_context_h context, ucp_mem_h mem_h, bool owned);

/* ucp_mem_map and ucp_mem_unmap of memory other than the allocations above
 * (MPIDI_NBRMA_memory_map uses them; so does MPICH's window creation, patch
 * 0034), keeping the mapping in a list that MPIDI_NBRMA_memory_finalize
 * empties. */
ucs_status_t MPIDI_NBRMA_mapping_add(ucp_context_h context, const ucp_mem_map_params_t * params,
                                     ucp_mem_h * mem_h);
/* (nothing, for a mapping MPIDI_NBRMA_memory_finalize released already) */
void MPIDI_NBRMA_mapping_remove(ucp_context_h context, ucp_mem_h mem_h);

/* ucp_ep_rkey_unpack and ucp_rkey_destroy of a peer's window key (MPICH's
 * window creation and free, patch 0034), keeping the key in a list that
 * MPIDI_NBRMA_rkeys_finalize empties: a window the program never freed
 * leaves its keys in their worker, which warns once per key when it goes
 * ("object ... was not returned to mpool ucp_rkeys"). */
ucs_status_t MPIDI_NBRMA_rkey_add(ucp_ep_h ep, const void *packed, ucp_rkey_h * rkey);
/* (nothing, for a key MPIDI_NBRMA_rkeys_finalize destroyed already) */
void MPIDI_NBRMA_rkey_remove(ucp_rkey_h rkey);
/* ucp_rkey_destroy, for the tables that hand keys back as void * */
void MPIDI_NBRMA_rkey_destroy(void *rkey);
/* MPI_Finalize, before the workers go: destroys every key still listed. */
void MPIDI_NBRMA_rkeys_finalize(void);

/* MPI_Finalize, before ucp_cleanup (which aborts the process while a
 * mapping is left: UCX's rcache asserts that no region is in use). MPI
 * never requires MPI_Free_mem before MPI_Finalize, and vanilla MPICH's
 * MPI_Alloc_mem memory (malloc) stays usable after it; so every allocation
 * still in the table keeps its address and contents as private memory of
 * the process, and UCX's mapping of it is released; so are the mappings of
 * other memory still kept (windows and memory handles never freed), whose
 * memory is the program's anyway. Returns how many allocations could not
 * be kept (their memory is gone). */
size_t MPIDI_NBRMA_memory_finalize(ucp_context_h context);

#endif /* NBRMA_UCX_MEMORY_H_INCLUDED */
