/*
 * mpich-nbrma: memory handles (MPIX_Memhandle_create, _release; Schuchart et
 * al., "Quo Vadis MPI RMA?", EuroMPI'21, section 4.2, Listing 5). The owner
 * registers memory with UCX and exposes it through a dynamic window (the
 * parent); the handle carries the packed rkey to the origins
 * (memhandle_codec.h). The memory stays registered until the owner releases it.
 */

#include "mpidimpl.h"
#include "ucx_impl.h"
#include "dynamic_win.h"

_Static_assert(NBRMA_MEMHANDLE_MAX_BYTES == MPIX_MAX_MEMHANDLE_SIZE, "the limit of mpi.h");

int MPIDI_NBRMA_memhandle_parent(MPIR_Win * win, MPIDI_NBRMA_dynamic_win_t ** dw_out)
{
    int mpi_errno = MPI_SUCCESS;

    *dw_out = MPIDI_NBRMA_dynamic_win(win);
    MPIR_ERR_CHKANDJUMP(win->create_flavor != MPI_WIN_FLAVOR_DYNAMIC || *dw_out == NULL,
                        mpi_errno, MPI_ERR_WIN, "**nbrmamhnotdynamic");
  fn_exit:
    return mpi_errno;
  fn_fail:
    goto fn_exit;
}

int MPIDI_NBRMA_memhandle_decode(const void *memhandle, MPIR_Win * parent,
                                 nbrma_memhandle_header_t * hdr)
{
    int mpi_errno = MPI_SUCCESS;
    nbrma_memhandle_status_t status =
        nbrma_memhandle_decode_for(memhandle, MPIDIG_WIN(parent, win_id),
                                   parent->comm_ptr->local_size, hdr);

    MPIR_ERR_CHKANDJUMP(status == NBRMA_MEMHANDLE_OTHER_WINDOW, mpi_errno, MPI_ERR_WIN,
                        "**nbrmamhotherwin");
    MPIR_ERR_CHKANDJUMP1(status != NBRMA_MEMHANDLE_OK, mpi_errno, MPI_ERR_ARG,
                         "**nbrmamhcorrupt", "**nbrmamhcorrupt %s",
                         nbrma_memhandle_strstatus(status));
  fn_exit:
    return mpi_errno;
  fn_fail:
    goto fn_exit;
}

static void unregister(nbrma_registration_t * reg)
{
    MPIDI_NBRMA_memory_unmap(MPIDI_UCX_global.context, reg->mem_h, reg->mem_h_owned);
    nbrma_registration_free(reg);
}

void MPIDI_NBRMA_registrations_free(MPIDI_NBRMA_dynamic_win_t * dw)
{
    nbrma_registration_t *reg;

    while ((reg = nbrma_registrations_pop(&dw->registrations)))
        unregister(reg);
}

int MPIR_Memhandle_create_impl(void *base, MPI_Aint size, MPIR_Info * info_ptr,
                               MPIR_Win * win_ptr, void *memhandle, int *memhandle_size)
{
    int mpi_errno = MPI_SUCCESS;
    MPIDI_NBRMA_dynamic_win_t *dw;
    nbrma_registration_t *reg = NULL;
    nbrma_memhandle_header_t hdr = { 0 };
    void *rkey_buf = NULL;
    size_t rkey_bytes = 0, handle_bytes;
    ucs_status_t status;

    MPIR_FUNC_ENTER;

    mpi_errno = MPIDI_NBRMA_memhandle_parent(win_ptr, &dw);
    MPIR_ERR_CHECK(mpi_errno);
    MPIR_ERR_CHKANDJUMP(base == NULL && size > 0, mpi_errno, MPI_ERR_ARG, "**nbrmamhnullbase");

    reg = nbrma_registration_new(base, (uint64_t) size);
    MPIR_ERR_CHKANDJUMP(reg == NULL, mpi_errno, MPI_ERR_NO_MEM, "**nomem");
    if (size > 0) {
        ucp_mem_h mem_h = NULL;
        bool owned;

        status = MPIDI_NBRMA_memory_map(MPIDI_UCX_global.context, base, size, &mem_h, &owned);
        MPIDI_UCX_CHK_STATUS(status);
        reg->mem_h = mem_h;
        reg->mem_h_owned = owned;
        status = ucp_rkey_pack(MPIDI_UCX_global.context, reg->mem_h, &rkey_buf, &rkey_bytes);
        MPIDI_UCX_CHK_STATUS(status);
    }

    reg->generation = nbrma_next_generation();
    hdr.owner_rank = win_ptr->comm_ptr->rank;
    hdr.win_id = MPIDIG_WIN(win_ptr, win_id);
    hdr.generation = reg->generation;
    hdr.base = (uint64_t) (uintptr_t) base;
    hdr.size = (uint64_t) size;
    handle_bytes = nbrma_memhandle_encode(memhandle, &hdr, rkey_buf, rkey_bytes);
    MPIR_ERR_CHKANDJUMP2(handle_bytes == 0, mpi_errno, MPI_ERR_INTERN, "**nbrmamhtoobig",
                         "**nbrmamhtoobig %d %d", (int) (sizeof(hdr) + rkey_bytes),
                         MPIX_MAX_MEMHANDLE_SIZE);
    *memhandle_size = (int) handle_bytes;

    nbrma_registrations_add(&dw->registrations, reg);
    reg = NULL;

  fn_exit:
    if (rkey_buf)
        ucp_rkey_buffer_release(rkey_buf);
    MPIR_FUNC_EXIT;
    return mpi_errno;
  fn_fail:
    if (reg)
        unregister(reg);
    goto fn_exit;
}

int MPIR_Memhandle_release_impl(void *memhandle, MPIR_Win * win_ptr)
{
    int mpi_errno = MPI_SUCCESS;
    nbrma_memhandle_header_t hdr;
    MPIDI_NBRMA_dynamic_win_t *dw;
    nbrma_registration_t *reg;

    MPIR_FUNC_ENTER;

    mpi_errno = MPIDI_NBRMA_memhandle_parent(win_ptr, &dw);
    MPIR_ERR_CHECK(mpi_errno);
    mpi_errno = MPIDI_NBRMA_memhandle_decode(memhandle, win_ptr, &hdr);
    MPIR_ERR_CHECK(mpi_errno);
    MPIR_ERR_CHKANDJUMP2(hdr.owner_rank != win_ptr->comm_ptr->rank, mpi_errno, MPI_ERR_ARG,
                         "**nbrmamhnotmine", "**nbrmamhnotmine %d %d", hdr.owner_rank,
                         win_ptr->comm_ptr->rank);

    reg = nbrma_registrations_remove(&dw->registrations, hdr.generation);
    MPIR_ERR_CHKANDJUMP(reg == NULL, mpi_errno, MPI_ERR_ARG, "**nbrmamhreleased");
    unregister(reg);

  fn_exit:
    MPIR_FUNC_EXIT;
    return mpi_errno;
  fn_fail:
    goto fn_exit;
}
