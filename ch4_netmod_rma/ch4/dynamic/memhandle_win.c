/*
 * mpich-nbrma: memory-handle windows (MPIX_Win_from_memhandle): one target, one
 * remote region, one rkey. Contiguous put and get go to UCX with that rkey
 * (rdma.c). The rest travels on the parent with the address as displacement:
 * non-contiguous put/get, targets the rkey does not reach, and every accumulate
 * and atomic, since MPICH 4.0.2's UCX netmod applies accumulates in the target's
 * active-message handler and UCX atomics would not be atomic with those of the
 * parent and of other windows on the same memory. Epochs are the parent's (the
 * paper's rule): an operation needs the parent's lock on the target, and only
 * flushes are offered here.
 */

#include "mpidimpl.h"
#include "ucx_impl.h"
#include "dynamic_win.h"
#include "nbrma_mpich_path.h"
#include "nbrma_request.h"
#include "nbrma_settings.h"
#include "nbrma_window_object.h"

static bool registered(const MPIDI_NBRMA_dynamic_win_t * dw, uint64_t generation)
{
    return dw && nbrma_registrations_find(&dw->registrations, generation) != NULL;
}

int MPIR_Win_from_memhandle_impl(const void *memhandle, MPI_Aint size, MPI_Aint disp_unit,
                                 MPIR_Info * info_ptr, int target, MPIR_Win * win_ptr,
                                 MPIR_Win ** newwin_ptr)
{
    int mpi_errno = MPI_SUCCESS;
    nbrma_memhandle_header_t hdr;
    MPIDI_NBRMA_dynamic_win_t *dw;
    MPIDI_NBRMA_memhandle_win_t *mh = NULL;

    MPIR_FUNC_ENTER;

    mpi_errno = MPIDI_NBRMA_memhandle_parent(win_ptr, &dw);
    MPIR_ERR_CHECK(mpi_errno);
    /* MPIX_Win_from_memhandle_c passes an MPI_Aint; a window keeps an int */
    MPIR_ERR_CHKANDJUMP1(disp_unit > INT_MAX, mpi_errno, MPI_ERR_DISP, "**arg", "**arg %s",
                         "disp_unit");
    mpi_errno = MPIDI_NBRMA_memhandle_decode(memhandle, win_ptr, &hdr);
    MPIR_ERR_CHECK(mpi_errno);
    MPIR_ERR_CHKANDJUMP2(hdr.owner_rank != target, mpi_errno, MPI_ERR_RANK,
                         "**nbrmamhowner", "**nbrmamhowner %d %d", hdr.owner_rank, target);
    MPIR_ERR_CHKANDJUMP2((uint64_t) size > hdr.size, mpi_errno, MPI_ERR_RMA_RANGE,
                         "**nbrmamhsize", "**nbrmamhsize %L %L", (long long) size,
                         (long long) hdr.size);
    /* the owner can tell whether its own handle is still registered */
    MPIR_ERR_CHKANDJUMP(target == win_ptr->comm_ptr->rank &&
                        !registered(dw, hdr.generation),
                        mpi_errno, MPI_ERR_ARG, "**nbrmamhreleased");

    mh = MPL_calloc(1, sizeof(*mh), MPL_MEM_RMA);
    MPIR_ERR_CHKANDJUMP(mh == NULL, mpi_errno, MPI_ERR_NO_MEM, "**nomem");
    mh->state.ops = &MPIDI_NBRMA_memhandle_win_ops;
    mh->entry = (nbrma_memhandle_window_t) {
    .parent = win_ptr,.target = target,.remote_base = hdr.base,.generation = hdr.generation};

    /* no rkey where RDMA does not pay (tcp): operations travel on the parent */
    if (target != win_ptr->comm_ptr->rank && hdr.rkey_bytes > 0 &&
        MPIDI_NBRMA_rdma_pays(dw, win_ptr, target)) {
        int vni = MPIDI_UCX_get_win_vni(win_ptr);
        ucp_rkey_h rkey = NULL;
        ucs_status_t status;

        MPID_THREAD_CS_ENTER(VCI, MPIDI_VCI(vni).lock);
        status = ucp_ep_rkey_unpack(MPIDI_UCX_WIN_TO_EP(win_ptr, target, vni),
                                    (const char *) memhandle + sizeof(hdr), &rkey);
        MPID_THREAD_CS_EXIT(VCI, MPIDI_VCI(vni).lock);
        /* unreachable with RDMA: the operations travel on the parent */
        if (status != UCS_ERR_UNREACHABLE)
            MPIDI_UCX_CHK_STATUS(status);
        mh->entry.rkey = status == UCS_OK ? rkey : NULL;
    }

    /* unknown to MPIDIG, no local memory; the hooks keep MPIDIG away from its
     * empty device part, which only names the parent's VCI */
    mpi_errno = MPIDI_NBRMA_window_object_create(win_ptr, newwin_ptr);
    MPIR_ERR_CHECK(mpi_errno);
    (*newwin_ptr)->size = size;
    (*newwin_ptr)->disp_unit = (int) disp_unit;
    MPIDI_WIN(*newwin_ptr, am_vci) = MPIDI_WIN(win_ptr, am_vci);
    MPIDIG_WIN(*newwin_ptr, nbrma) = mh;
    nbrma_memhandle_windows_add(&dw->children, &mh->entry);

  fn_exit:
    MPIR_FUNC_EXIT;
    return mpi_errno;
  fn_fail:
    if (mh && mh->entry.rkey)
        ucp_rkey_destroy(mh->entry.rkey);
    MPL_free(mh);
    goto fn_exit;
}

static MPIDI_NBRMA_memhandle_win_t *memhandle_win(MPIR_Win * win)
{
    return (MPIDI_NBRMA_memhandle_win_t *) MPIDI_NBRMA_WIN_STATE(win);
}

static int check_target_range(MPIR_Win * win, MPI_Aint disp, int count, MPI_Datatype datatype)
{
    int mpi_errno = MPI_SUCCESS;
    MPI_Aint true_lb, true_extent, extent;
    int64_t lo, hi;

    if (count == 0)
        goto fn_exit;
    MPIR_Type_get_true_extent_impl(datatype, &true_lb, &true_extent);
    MPIR_Datatype_get_extent_macro(datatype, extent);
    MPIR_ERR_CHKANDJUMP3(!nbrma_target_range_inside(disp, win->disp_unit, count, true_lb,
                                                    true_extent, extent, win->size, &lo, &hi),
                         mpi_errno, MPI_ERR_RMA_RANGE,
                         "**nbrmamhoprange", "**nbrmamhoprange %L %L %L", (long long) lo,
                         (long long) hi, (long long) win->size);
  fn_exit:
    return mpi_errno;
  fn_fail:
    goto fn_exit;
}

static int memhandle_rma(const MPIDI_NBRMA_rma_op_t * op, MPIR_Win * win)
{
    int mpi_errno = MPI_SUCCESS;
    MPIDI_NBRMA_memhandle_win_t *mh = memhandle_win(win);
    MPIR_Win *parent = mh->entry.parent;
    int target = mh->entry.target;
    ucp_rkey_h rkey = mh->entry.rkey;
    MPIDI_NBRMA_rma_op_t on_parent;
    MPIDI_NBRMA_rdma_args_t args = { 0 };
    bool by_rdma;
    uint64_t remote_addr;

    MPIR_FUNC_ENTER;

    MPIR_ERR_CHKANDJUMP(parent == NULL, mpi_errno, MPI_ERR_WIN, "**nbrmamhorphan");
    MPIR_ERR_CHKANDJUMP2(op->target_rank != target, mpi_errno, MPI_ERR_RANK,
                         "**nbrmamhrank", "**nbrmamhrank %d %d", op->target_rank, target);
    /* use after release: the owner can tell, a remote origin cannot without asking */
    MPIR_ERR_CHKANDJUMP(target == parent->comm_ptr->rank &&
                        !registered(MPIDI_NBRMA_dynamic_win(parent), mh->entry.generation),
                        mpi_errno, MPI_ERR_WIN, "**nbrmamhuseafterrelease");
    mpi_errno = check_target_range(win, op->target_disp, op->target_count, op->target_datatype);
    MPIR_ERR_CHECK(mpi_errno);

    on_parent = *op;
    on_parent.target_disp =
        (MPI_Aint) nbrma_memhandle_window_address(&mh->entry, op->target_disp, win->disp_unit);
    by_rdma = rkey && MPIDI_NBRMA_rdma_eligible(op, &args);
    remote_addr = (uint64_t) on_parent.target_disp + args.target_true_lb;
    if (MPIDI_NBRMA_WIN_STATE(parent)->ops->carries_engine) {
        /* the handle's rkey only once the parent's epoch toward the target is
         * granted; before that, and for requests, the parent's engine takes it */
        if (op->request == NULL && by_rdma && MPIDI_NBRMA_epochs_granted_now(parent, target)) {
            mpi_errno = MPIDI_NBRMA_rdma_transfer(parent, target, rkey, &args, remote_addr, NULL);
            if (mpi_errno == MPI_SUCCESS)
                mpi_errno = MPIDI_NBRMA_epochs_count_rdma(parent, target);
        } else {
            mpi_errno = MPIDI_NBRMA_WIN_STATE(parent)->ops->rma(&on_parent, parent);
        }
        goto fn_exit;
    }
    if (by_rdma) {
        MPIDIG_RMA_OP_CHECK_SYNC(target, parent);
        mpi_errno = MPIDI_NBRMA_rdma_transfer(parent, target, rkey, &args, remote_addr,
                                              op->request);
    } else {
        mpi_errno = MPIDI_NBRMA_mpich_rma(&on_parent, parent);
    }
    MPIR_ERR_CHECK(mpi_errno);
    /* requests complete at the origin; remote completion: mpich_path.h */
    mpi_errno = MPIDI_NBRMA_remote_request_wrap(parent, target, op);

  fn_exit:
    MPIR_FUNC_EXIT;
    return mpi_errno;
  fn_fail:
    goto fn_exit;
}

/* Only flushes (epochs are the parent's): the parent's flush of the target,
 * whose table flushes the RDMA and MPIDIG the rest, checking the epoch. */
static int flush_on_parent(const MPIDI_NBRMA_sync_call_t * call, MPIR_Win * win,
                           MPIR_Request ** request)
{
    int mpi_errno = MPI_SUCCESS;
    MPIDI_NBRMA_memhandle_win_t *mh = memhandle_win(win);
    MPIR_Win *parent = mh->entry.parent;
    MPIDI_NBRMA_sync_call_t on_parent = {
        .kind = NBRMA_SYNC_FLUSH,.rank = mh->entry.target,.local = call->local
    };

    MPIR_ERR_CHKANDJUMP(call->kind != NBRMA_SYNC_FLUSH, mpi_errno, MPI_ERR_RMA_SYNC,
                        "**nbrmamhsync");
    MPIR_ERR_CHKANDJUMP2(call->rank != NBRMA_ALL_RANKS && call->rank != mh->entry.target, mpi_errno,
                         MPI_ERR_RANK, "**nbrmamhrank", "**nbrmamhrank %d %d", call->rank,
                         mh->entry.target);
    MPIR_ERR_CHKANDJUMP(parent == NULL, mpi_errno, MPI_ERR_WIN, "**nbrmamhorphan");
    if (request)
        mpi_errno = MPIDI_NBRMA_WIN_STATE(parent)->ops->start_sync(&on_parent, parent, request);
    else
        mpi_errno = MPIDI_NBRMA_WIN_STATE(parent)->ops->sync(&on_parent, parent);

  fn_exit:
    return mpi_errno;
  fn_fail:
    goto fn_exit;
}

static int memhandle_sync(const MPIDI_NBRMA_sync_call_t * call, MPIR_Win * win)
{
    return flush_on_parent(call, win, NULL);
}

/* The parent's hints (accumulates travel on the parent), then this window's. */
static int memhandle_get_info(MPIR_Win * win, MPIR_Info ** info_p_p)
{
    MPIDI_NBRMA_memhandle_win_t *mh = memhandle_win(win);
    const MPIDI_NBRMA_info_entry_t keys[] = {
        INFO_INT("mpix_memhandle_target", mh->entry.target),
        INFO_STRING("mpix_memhandle_put_get", mh->entry.rkey ? "rdma" : "active_message"),
        /* order not tracked on this kind (README: ordered operations) */
        INFO_BOOL(MPIDI_NBRMA_INFO_WIN_ORDER, false),
    };
    int mpi_errno = mh->entry.parent ? MPIDI_NM_mpi_win_get_info(mh->entry.parent, info_p_p)
        : MPIR_Info_alloc(info_p_p);

    if (mpi_errno == MPI_SUCCESS)
        mpi_errno = MPIDI_NBRMA_info_set_all(*info_p_p, INFO_ENTRIES(keys));
    return mpi_errno;
}

/* No hints of its own: MPIDIG has no state for it. */
static int memhandle_set_info(MPIR_Win * win, MPIR_Info * info)
{
    (void) win;
    (void) info;
    return MPI_SUCCESS;
}

static int memhandle_free(MPIR_Win ** win_ptr, int *handled)
{
    int mpi_errno = MPI_SUCCESS;
    MPIR_Win *win = *win_ptr;
    MPIDI_NBRMA_memhandle_win_t *mh = memhandle_win(win);
    MPIR_Win *parent = mh->entry.parent;
    MPIDI_NBRMA_dynamic_win_t *dw = parent ? MPIDI_NBRMA_dynamic_win(parent) : NULL;

    *handled = 0;
    if (dw) {
        /* UCX must not see the rkey destroyed under operations still using it */
        mpi_errno = MPIDI_NBRMA_rdma_complete(parent, mh->entry.target);
        MPIR_ERR_CHECK(mpi_errno);
        nbrma_memhandle_windows_remove(&dw->children, &mh->entry);
    }
    if (mh->entry.rkey)
        ucp_rkey_destroy(mh->entry.rkey);
    MPL_free(mh);
    MPIDI_NBRMA_window_object_free(win);
    *handled = 1;

  fn_exit:
    return mpi_errno;
  fn_fail:
    goto fn_exit;
}

const MPIDI_NBRMA_win_ops_t MPIDI_NBRMA_memhandle_win_ops = {
    .rma = memhandle_rma,
    .sync = memhandle_sync,
    .start_sync = flush_on_parent,
    .get_info = memhandle_get_info,
    .set_info = memhandle_set_info,
    .free = memhandle_free,
    .local_free = true,
};
