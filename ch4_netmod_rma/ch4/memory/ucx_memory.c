/*
 * mpich-nbrma: memory that UCX allocated (ucx_memory.h). Three tables of
 * ../../formats/address_table.c under one lock: the allocations by base address
 * (payload: the ucp_mem_h); the mappings of other memory made for RMA, and the
 * peers' keys of MPICH's windows, both keyed by the handle itself (size 0), so
 * that MPI_Finalize can release what a program never freed. System calls:
 * ../../os/private_memory.c.
 */

#include "ucx_memory.h"
#include "address_table.h"
#include "private_memory.h"
#include <pthread.h>
#include <stdint.h>

static pthread_mutex_t table_lock = PTHREAD_MUTEX_INITIALIZER;
static nbrma_address_table_t table, mappings, rkeys;

void *MPIDI_NBRMA_memory_alloc(ucp_context_h context, size_t size)
{
    ucp_mem_map_params_t params = {
        .field_mask = UCP_MEM_MAP_PARAM_FIELD_ADDRESS | UCP_MEM_MAP_PARAM_FIELD_LENGTH |
            UCP_MEM_MAP_PARAM_FIELD_FLAGS,
        .address = NULL,
        .length = size,
        .flags = UCP_MEM_MAP_ALLOCATE
    };
    ucp_mem_attr_t attr = {.field_mask = UCP_MEM_ATTR_FIELD_ADDRESS };
    ucp_mem_h mem_h;
    bool inserted;

    /* Not for half the memory or more: when shmget refuses, UCX 1.13's posix
     * fallback fills /dev/shm to the tmpfs limit (half the memory), fails and
     * leaves the file behind for the OOM killer. Such sizes get MPICH's
     * malloc, which refuses impossible ones at once. */
    if (size == 0 || nbrma_at_least_half_of_memory(size) ||
        ucp_mem_map(context, &params, &mem_h) != UCS_OK)
        return NULL;
    if (ucp_mem_query(mem_h, &attr) != UCS_OK) {
        ucp_mem_unmap(context, mem_h);
        return NULL;
    }
    pthread_mutex_lock(&table_lock);
    inserted = nbrma_address_table_insert(&table, (uintptr_t) attr.address, size, mem_h);
    pthread_mutex_unlock(&table_lock);
    if (!inserted) {
        ucp_mem_unmap(context, mem_h);
        return NULL;
    }
    return attr.address;
}

bool MPIDI_NBRMA_memory_free(ucp_context_h context, void *base)
{
    void *mem_h = NULL;

    pthread_mutex_lock(&table_lock);
    nbrma_address_table_remove(&table, (uintptr_t) base, &mem_h);
    pthread_mutex_unlock(&table_lock);
    if (mem_h == NULL)
        return false;
    ucp_mem_unmap(context, mem_h);
    return true;
}

bool MPIDI_NBRMA_memory_find(const void *addr, size_t size, ucp_mem_h * mem_h)
{
    const nbrma_address_range_t *al;

    pthread_mutex_lock(&table_lock);
    al = nbrma_address_table_containing(&table, (uintptr_t) addr, size);
    if (al && mem_h)
        *mem_h = al->payload;
    pthread_mutex_unlock(&table_lock);
    return al != NULL;
}

ucs_status_t MPIDI_NBRMA_memory_map(ucp_context_h context, void *addr, size_t size,
                                    ucp_mem_h * mem_h, bool *owned)
{
    ucp_mem_map_params_t params = {
        .field_mask = UCP_MEM_MAP_PARAM_FIELD_ADDRESS | UCP_MEM_MAP_PARAM_FIELD_LENGTH,
        .address = addr,
        .length = size
    };

    if (size > 0 && MPIDI_NBRMA_memory_find(addr, size, mem_h)) {
        *owned = false;
        return UCS_OK;
    }
    *owned = true;
    return MPIDI_NBRMA_mapping_add(context, &params, mem_h);
}

void MPIDI_NBRMA_memory_unmap(ucp_context_h context, ucp_mem_h mem_h, bool owned)
{
    if (owned && mem_h)
        MPIDI_NBRMA_mapping_remove(context, mem_h);
}

/* Under the table lock: whether `handle` could be listed in `list`; whether it
 * was listed there. */
static bool list_handle(nbrma_address_table_t * list, void *handle)
{
    bool kept;

    pthread_mutex_lock(&table_lock);
    kept = nbrma_address_table_insert(list, (uintptr_t) handle, 0, handle);
    pthread_mutex_unlock(&table_lock);
    return kept;
}

static bool unlist_handle(nbrma_address_table_t * list, void *handle)
{
    void *unused;
    bool listed;

    pthread_mutex_lock(&table_lock);
    listed = nbrma_address_table_remove(list, (uintptr_t) handle, &unused);
    pthread_mutex_unlock(&table_lock);
    return listed;
}

ucs_status_t MPIDI_NBRMA_mapping_add(ucp_context_h context, const ucp_mem_map_params_t * params,
                                     ucp_mem_h * mem_h)
{
    ucs_status_t status = ucp_mem_map(context, params, mem_h);

    if (status != UCS_OK)
        return status;
    if (!list_handle(&mappings, *mem_h)) {
        ucp_mem_unmap(context, *mem_h);
        *mem_h = NULL;          /* no caller keeps a handle that is gone */
        return UCS_ERR_NO_MEMORY;
    }
    return UCS_OK;
}

void MPIDI_NBRMA_mapping_remove(ucp_context_h context, ucp_mem_h mem_h)
{
    /* not listed: MPIDI_NBRMA_memory_finalize released it already */
    if (unlist_handle(&mappings, mem_h))
        ucp_mem_unmap(context, mem_h);
}

ucs_status_t MPIDI_NBRMA_rkey_add(ucp_ep_h ep, const void *packed, ucp_rkey_h * rkey)
{
    ucs_status_t status = ucp_ep_rkey_unpack(ep, packed, rkey);

    if (status != UCS_OK)
        return status;
    if (!list_handle(&rkeys, *rkey)) {
        ucp_rkey_destroy(*rkey);
        *rkey = NULL;           /* no caller keeps a key that is gone */
        return UCS_ERR_NO_MEMORY;
    }
    return UCS_OK;
}

void MPIDI_NBRMA_rkey_remove(ucp_rkey_h rkey)
{
    /* not listed: MPIDI_NBRMA_rkeys_finalize destroyed it already */
    if (unlist_handle(&rkeys, rkey))
        ucp_rkey_destroy(rkey);
}

void MPIDI_NBRMA_rkey_destroy(void *rkey)
{
    ucp_rkey_destroy(rkey);
}

void MPIDI_NBRMA_rkeys_finalize(void)
{
    pthread_mutex_lock(&table_lock);
    for (size_t i = 0; i < rkeys.n; i++)
        ucp_rkey_destroy(rkeys.range[i].payload);
    nbrma_address_table_free(&rkeys);
    pthread_mutex_unlock(&table_lock);
}

/* Moves the bytes into private memory at the same address so UCX's mapping
 * can go: copy elsewhere, unmap, move the copy back. False (memory lost) when
 * the address is not page-aligned or the kernel refuses; unmapped either way. */
static bool keep_as_private_memory(ucp_context_h context, const nbrma_address_range_t * al)
{
    void *copy = nbrma_private_copy((void *) al->base, al->size);

    ucp_mem_unmap(context, al->payload);
    return copy && nbrma_private_copy_move(copy, (void *) al->base, al->size);
}

size_t MPIDI_NBRMA_memory_finalize(ucp_context_h context)
{
    size_t lost = 0;

    pthread_mutex_lock(&table_lock);
    for (size_t i = 0; i < mappings.n; i++)
        ucp_mem_unmap(context, mappings.range[i].payload);      /* the memory stays the program's */
    nbrma_address_table_free(&mappings);
    for (size_t i = 0; i < table.n; i++)
        lost += !keep_as_private_memory(context, &table.range[i]);
    nbrma_address_table_free(&table);
    pthread_mutex_unlock(&table_lock);
    return lost;
}
