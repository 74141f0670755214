/*
 * mpich-nbrma: memory that UCX allocated. UCX 1.13's shared-memory transports
 * do RMA directly only on memory their memory domain allocated; elsewhere they
 * emulate it with active messages that wait for the target's progress
 * (../README.md, "RMA without the target's CPU"). So MPI_Win_allocate and
 * MPI_Alloc_mem take memory from here, and mappings for RMA reuse an
 * allocation's own (MPIDI_NBRMA_memory_map). The tables have their own mutex
 * (MPI_Alloc_mem may run in several threads); no MPICH header here.
 */

#ifndef NBRMA_UCX_MEMORY_H_INCLUDED
#define NBRMA_UCX_MEMORY_H_INCLUDED

#include <ucp/api/ucp.h>
#include <stdbool.h>
#include <stddef.h>

/* NULL when UCX cannot, or for half the machine's memory or more (ucx_memory.c). */
void *MPIDI_NBRMA_memory_alloc(ucp_context_h context, size_t size);
/* false (nothing done) when `base` is no allocation of MPIDI_NBRMA_memory_alloc */
bool MPIDI_NBRMA_memory_free(ucp_context_h context, void *base);
/* Whether [addr, addr + size) lies inside one allocation; its mapping in *mem_h. */
bool MPIDI_NBRMA_memory_find(const void *addr, size_t size, ucp_mem_h * mem_h);

/* The mapping of the allocation containing the range (*owned = false), or a
 * new one (*owned = true). */
ucs_status_t MPIDI_NBRMA_memory_map(ucp_context_h context, void *addr, size_t size,
                                    ucp_mem_h * mem_h, bool *owned);
void MPIDI_NBRMA_memory_unmap(ucp_context_h context, ucp_mem_h mem_h, bool owned);

/* ucp_mem_map/unmap of other memory (memory_map; MPICH's window creation,
 * patch 0034), listed so that MPIDI_NBRMA_memory_finalize can release it. */
ucs_status_t MPIDI_NBRMA_mapping_add(ucp_context_h context, const ucp_mem_map_params_t * params,
                                     ucp_mem_h * mem_h);
/* (nothing for a mapping MPIDI_NBRMA_memory_finalize released already) */
void MPIDI_NBRMA_mapping_remove(ucp_context_h context, ucp_mem_h mem_h);

/* Unpack and destroy of a peer's window key (patch 0034), listed for
 * MPIDI_NBRMA_rkeys_finalize: keys of a window never freed make their worker
 * warn ("not returned to mpool"). */
ucs_status_t MPIDI_NBRMA_rkey_add(ucp_ep_h ep, const void *packed, ucp_rkey_h * rkey);
/* (nothing for a key MPIDI_NBRMA_rkeys_finalize destroyed already) */
void MPIDI_NBRMA_rkey_remove(ucp_rkey_h rkey);
/* ucp_rkey_destroy, for the tables that hand keys back as void * */
void MPIDI_NBRMA_rkey_destroy(void *rkey);
/* MPI_Finalize, before the workers go: destroys every key still listed. */
void MPIDI_NBRMA_rkeys_finalize(void);

/* MPI_Finalize, before ucp_cleanup (which aborts while a mapping is left).
 * MPI does not require MPI_Free_mem first and MPICH's own (malloc) memory stays
 * usable after it, so each allocation left keeps its address and contents as
 * private memory; other mappings are released. Returns the allocations lost. */
size_t MPIDI_NBRMA_memory_finalize(ucp_context_h context);

#endif /* NBRMA_UCX_MEMORY_H_INCLUDED */
