/*
 * mpich-nbrma: hooks of window memory (memory/ucx_memory.h): UCX memory for
 * MPI_Alloc_mem (patch 0023) and MPI_Win_allocate (0020), its mapping at window
 * creation (0021), memory_ready to the window's table (0020), the netmod's
 * mappings and peer keys (0034), and what is left at MPI_Finalize (0033, 0034).
 */

#include "mpidimpl.h"
#include "ucx_impl.h"
#include "mpidi_nbrma_hooks.h"
#include "nbrma_win.h"
#include "nbrma_settings.h"
#include "nbrma_trace.h"
#include "ucx_memory.h"

static bool wants_ucx_memory(MPIR_Info * info)
{
    bool wanted = MPIR_CVAR_NBRMA_UCX_MEMORY;

    MPIDI_NBRMA_info_get_bool(info, MPIDI_NBRMA_INFO_UCX_MEMORY, &wanted);
    return wanted;
}

void *MPIDI_NBRMA_alloc_mem_hook(MPI_Aint size, MPIR_Info * info)
{
    if (size <= 0 || !wants_ucx_memory(info))
        return NULL;
    return MPIDI_NBRMA_memory_alloc(MPIDI_UCX_global.context, (size_t) size);
}

bool MPIDI_NBRMA_free_mem_hook(void *base)
{
    return MPIDI_NBRMA_memory_free(MPIDI_UCX_global.context, base);
}

/* MPI does not require MPI_Free_mem before MPI_Finalize (IMB-RMA leaves its
 * buffers), and ucp_cleanup aborts while a mapping is left. Memory that cannot
 * be kept is reported (MPIR_CVAR_NBRMA_TRACE): touching it later would fault. */
void MPIDI_NBRMA_finalize_memory_hook(void)
{
    size_t lost = MPIDI_NBRMA_memory_finalize(MPIDI_UCX_global.context);

    if (lost)
        MPIDI_NBRMA_TRACE(NULL, "MPI_Finalize: %zu blocks of MPI_Alloc_mem memory released "
                          "(their address could not be kept)", lost);
}

/* Only if every process wants and got UCX memory: MPICH's way allocates a
 * node-shared segment collectively. */
int MPIDI_NBRMA_win_allocate_memory_hook(MPIR_Win * win, MPIR_Info * info, MPI_Aint size,
                                         void **base_ptr, int *handled)
{
    int mpi_errno = MPI_SUCCESS;
    void *base = NULL;
    bool mine = wants_ucx_memory(info), all = false;

    *handled = 0;
    if (mine && size > 0) {
        base = MPIDI_NBRMA_memory_alloc(MPIDI_UCX_global.context, (size_t) size);
        mine = base != NULL;
    }
    mpi_errno = MPIDI_NBRMA_all_agree(win->comm_ptr, mine, &all);
    MPIR_ERR_CHECK(mpi_errno);
    if (all) {
        *base_ptr = base;
        *handled = 1;
        base = NULL;
    }

  fn_exit:
    if (base)
        MPIDI_NBRMA_memory_free(MPIDI_UCX_global.context, base);
    return mpi_errno;
  fn_fail:
    goto fn_exit;
}

bool MPIDI_NBRMA_win_release_memory_hook(MPIR_Win * win)
{
    return win->base && MPIDI_NBRMA_memory_free(MPIDI_UCX_global.context, win->base);
}

bool MPIDI_NBRMA_win_memory_mapping(void *base, MPI_Aint length, struct ucp_mem **mem_h)
{
    return length > 0 && MPIDI_NBRMA_memory_find(base, (size_t) length, mem_h);
}

int MPIDI_NBRMA_win_map_hook(const struct ucp_mem_map_params *params, struct ucp_mem **mem_h)
{
    return MPIDI_NBRMA_mapping_add(MPIDI_UCX_global.context, params, mem_h);
}

void MPIDI_NBRMA_win_unmap_hook(struct ucp_mem *mem_h)
{
    MPIDI_NBRMA_mapping_remove(MPIDI_UCX_global.context, mem_h);
}

int MPIDI_NBRMA_win_rkey_unpack_hook(struct ucp_ep *ep, const void *packed, struct ucp_rkey **rkey)
{
    return MPIDI_NBRMA_rkey_add(ep, packed, rkey);
}

void MPIDI_NBRMA_win_rkey_destroy_hook(struct ucp_rkey *rkey)
{
    MPIDI_NBRMA_rkey_remove(rkey);
}

void MPIDI_NBRMA_finalize_rkeys_hook(void)
{
    MPIDI_NBRMA_rkeys_finalize();
}

int MPIDI_NBRMA_win_memory_ready_hook(MPIR_Win * win)
{
    const MPIDI_NBRMA_win_ops_t *ops = MPIDI_NBRMA_win_ops(win);
    return ops->memory_ready ? ops->memory_ready(win) : MPI_SUCCESS;
}
