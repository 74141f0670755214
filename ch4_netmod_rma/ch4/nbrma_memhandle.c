/*
 * mpich-nbrma: memory-handle windows (MPIX_Memhandle_create,
 * MPIX_Win_from_memhandle, MPIX_Memhandle_release), and RDMA on plain dynamic
 * windows through an rkey cache (the section of that name below): both give a
 * dynamic window's attached memory to UCX RDMA, and share the window's state.
 *
 * A dynamic window cannot use RDMA in MPICH 4.0.2: the origin does not know the
 * target's registration, so every operation travels as an active message and
 * needs the target's CPU. A memory handle carries the registration (a packed
 * UCX rkey) to the origin, and the owner promises that the memory stays
 * registered until it releases the handle. The origin's window made from it has
 * a single target and a single region, so contiguous put and get go straight to
 * ucp_put/get with the unpacked rkey.
 *
 * What does not go through RDMA travels on the parent window, with the absolute
 * address as displacement (a dynamic window's displacements are addresses):
 *  - the accumulate family and the atomics: in MPICH 4.0.2 every accumulate of
 *    the UCX netmod is applied by the target's active-message handler. Sending
 *    ours the same way keeps them atomic with respect to the accumulates of the
 *    parent window and of every other memory-handle window on the same memory;
 *    UCX atomics would not be atomic with those.
 *  - put and get with a non-contiguous side, as MPICH does for its own windows;
 *  - everything to a target UCX cannot reach with the rkey.
 *
 * Epochs are the parent's (the paper's rule): an operation on a memory-handle
 * window is valid when the parent holds a lock on the target, and the parent's
 * unlock and flushes complete the RDMA issued through its memory-handle
 * windows, which only the component knows about: that is why the parent gets a
 * component state too.
 *
 * All of this runs under MPICH's global critical section (the bindings hold
 * it); UCX calls take the VCI lock as the UCX netmod does.
 */

#include "mpidimpl.h"
#include "ucx_impl.h"
#include "mpidi_nbrma_hooks.h"
#include "nbrma_memhandle.h"

#define NBRMA_ALL_TARGETS (-1)

/* --- the handle ------------------------------------------------------------
 * A byte string of at most MPIX_MAX_MEMHANDLE_SIZE bytes: this header (fixed-
 * width fields, no padding), then the packed rkey. The checksum covers both,
 * with the checksum field taken as zero, so that a handle that was truncated
 * in transit (its tail is whatever the receive buffer held) or altered is
 * refused instead of being used as an address and a key. */

#define NBRMA_MEMHANDLE_MAGIC   0x4d48424eu     /* "NBHM" */
#define NBRMA_MEMHANDLE_VERSION 1

typedef struct {
    uint32_t magic;
    uint16_t version;
    uint16_t rkey_bytes;
    uint32_t total_bytes;       /* header and rkey */
    int32_t owner_rank;         /* rank of the creator in the parent window */
    uint64_t win_id;            /* the parent's MPIDIG id: equal at all its processes */
    uint64_t generation;        /* of the creator's registration */
    uint64_t base;              /* the creator's address of the memory */
    uint64_t size;
    uint64_t checksum;
} MPIDI_NBRMA_memhandle_header_t;

MPL_COMPILE_TIME_ASSERT(sizeof(MPIDI_NBRMA_memhandle_header_t) == 56);
MPL_COMPILE_TIME_ASSERT(sizeof(MPIDI_NBRMA_memhandle_header_t) < MPIX_MAX_MEMHANDLE_SIZE);

/* registrations of this process, over all parent windows */
static uint64_t last_generation;

/* FNV-1a, 64 bits */
static uint64_t handle_checksum(const void *handle, size_t bytes)
{
    unsigned char copy[MPIX_MAX_MEMHANDLE_SIZE];
    uint64_t hash = 14695981039346656037ULL;

    memcpy(copy, handle, bytes);
    memset(copy + offsetof(MPIDI_NBRMA_memhandle_header_t, checksum), 0, sizeof(uint64_t));
    for (size_t i = 0; i < bytes; i++)
        hash = (hash ^ copy[i]) * 1099511628211ULL;
    return hash;
}

/* Reads and checks a handle for use with the dynamic window `parent`. */
static int decode_handle(const void *memhandle, MPIR_Win * parent,
                         MPIDI_NBRMA_memhandle_header_t * hdr)
{
    int mpi_errno = MPI_SUCCESS;

    memcpy(hdr, memhandle, sizeof(*hdr));
    MPIR_ERR_CHKANDJUMP1(hdr->magic != NBRMA_MEMHANDLE_MAGIC, mpi_errno, MPI_ERR_ARG,
                         "**nbrmamhcorrupt", "**nbrmamhcorrupt %s", "not a memory handle");
    MPIR_ERR_CHKANDJUMP1(hdr->version != NBRMA_MEMHANDLE_VERSION, mpi_errno, MPI_ERR_ARG,
                         "**nbrmamhcorrupt", "**nbrmamhcorrupt %s", "unknown version");
    MPIR_ERR_CHKANDJUMP1(hdr->total_bytes != sizeof(*hdr) + hdr->rkey_bytes ||
                         hdr->total_bytes > MPIX_MAX_MEMHANDLE_SIZE, mpi_errno, MPI_ERR_ARG,
                         "**nbrmamhcorrupt", "**nbrmamhcorrupt %s", "bad length");
    MPIR_ERR_CHKANDJUMP1(handle_checksum(memhandle, hdr->total_bytes) != hdr->checksum,
                         mpi_errno, MPI_ERR_ARG, "**nbrmamhcorrupt", "**nbrmamhcorrupt %s",
                         "checksum mismatch: truncated or altered");
    MPIR_ERR_CHKANDJUMP(hdr->win_id != MPIDIG_WIN(parent, win_id), mpi_errno, MPI_ERR_WIN,
                        "**nbrmamhotherwin");
    MPIR_ERR_CHKANDJUMP1(hdr->owner_rank < 0 || hdr->owner_rank >= parent->comm_ptr->local_size,
                         mpi_errno, MPI_ERR_ARG, "**nbrmamhcorrupt", "**nbrmamhcorrupt %s",
                         "owner rank out of range");

  fn_exit:
    return mpi_errno;
  fn_fail:
    goto fn_exit;
}

/* --- parent state ------------------------------------------------------- */

static MPIDI_NBRMA_parent_t *parent_state(MPIR_Win * win)
{
    MPIDI_NBRMA_win_state_t *state = MPIDI_NBRMA_WIN_STATE(win);
    return state && state->kind == MPIDI_NBRMA_WIN_MEMHANDLE_PARENT ?
        (MPIDI_NBRMA_parent_t *) state : NULL;
}

/* Memory handles need a dynamic window as parent, one without other component state. */
static int check_parent(MPIR_Win * win)
{
    int mpi_errno = MPI_SUCCESS;

    MPIR_ERR_CHKANDJUMP(win->create_flavor != MPI_WIN_FLAVOR_DYNAMIC ||
                        (MPIDIG_WIN(win, nbrma) && !parent_state(win)), mpi_errno, MPI_ERR_WIN,
                        "**nbrmamhnotdynamic");
  fn_exit:
    return mpi_errno;
  fn_fail:
    goto fn_exit;
}

static int get_parent_state(MPIR_Win * win, MPIDI_NBRMA_parent_t ** parent_out)
{
    int mpi_errno = MPI_SUCCESS;
    MPIDI_NBRMA_parent_t *parent = parent_state(win);

    if (parent == NULL) {
        parent = MPL_calloc(1, sizeof(*parent), MPL_MEM_RMA);
        MPIR_ERR_CHKANDJUMP(parent == NULL, mpi_errno, MPI_ERR_NO_MEM, "**nomem");
        parent->rdma_pending = MPL_calloc(win->comm_ptr->local_size, sizeof(bool), MPL_MEM_RMA);
        if (parent->rdma_pending == NULL) {
            MPL_free(parent);
            MPIR_ERR_SETANDJUMP(mpi_errno, MPI_ERR_NO_MEM, "**nomem");
        }
        parent->state.kind = MPIDI_NBRMA_WIN_MEMHANDLE_PARENT;
        MPIDIG_WIN(win, nbrma) = parent;
    }
    *parent_out = parent;

  fn_exit:
    return mpi_errno;
  fn_fail:
    goto fn_exit;
}

static MPIDI_NBRMA_registration_t *find_registration(MPIDI_NBRMA_parent_t * parent,
                                                     uint64_t generation)
{
    for (MPIDI_NBRMA_registration_t * reg = parent ? parent->registrations : NULL; reg;
         reg = reg->next)
        if (reg->generation == generation)
            return reg;
    return NULL;
}

static int wait_ucx_request(ucs_status_ptr_t request, int vni)
{
    int mpi_errno = MPI_SUCCESS;
    ucs_status_t status = UCS_OK;

    if (UCS_PTR_IS_ERR(request))
        status = UCS_PTR_STATUS(request);
    else if (request != NULL) {
        while ((status = ucp_request_check_status(request)) == UCS_INPROGRESS)
            ucp_worker_progress(MPIDI_UCX_global.ctx[vni].worker);
        ucp_request_free(request);
    }
    MPIDI_UCX_CHK_STATUS(status);

  fn_exit:
    return mpi_errno;
  fn_fail:
    goto fn_exit;
}

static void destroy_retired_rkeys(MPIDI_NBRMA_parent_t * parent, int rank);

bool MPIDI_NBRMA_rdma_pending(MPIR_Win * win, int rank)
{
    MPIDI_NBRMA_parent_t *parent = parent_state(win);

    if (parent == NULL || parent->num_rdma_pending == 0)
        return false;
    return rank == NBRMA_ALL_TARGETS || parent->rdma_pending[rank];
}

/* Completes at their targets the RDMA operations issued on `win` (through its
 * memory-handle windows or with cached rkeys) to `rank`, or to all ranks.
 * Nothing to do costs a test of a counter. */
static int complete_pending_rdma(MPIR_Win * win, int rank)
{
    int mpi_errno = MPI_SUCCESS;
    MPIDI_NBRMA_parent_t *parent = parent_state(win);
    ucp_request_param_t param = { 0 };
    int vni;

    if (parent == NULL || parent->num_rdma_pending == 0 ||
        (rank != NBRMA_ALL_TARGETS && !parent->rdma_pending[rank]))
        goto fn_exit;

    vni = MPIDI_UCX_get_win_vni(win);
    MPID_THREAD_CS_ENTER(VCI, MPIDI_VCI(vni).lock);
    if (rank == NBRMA_ALL_TARGETS)
        mpi_errno = wait_ucx_request(ucp_worker_flush_nbx(MPIDI_UCX_global.ctx[vni].worker,
                                                          &param), vni);
    else
        mpi_errno = wait_ucx_request(ucp_ep_flush_nbx(MPIDI_UCX_WIN_TO_EP(win, rank, vni),
                                                      &param), vni);
    MPID_THREAD_CS_EXIT(VCI, MPIDI_VCI(vni).lock);
    MPIR_ERR_CHECK(mpi_errno);

    if (rank == NBRMA_ALL_TARGETS) {
        memset(parent->rdma_pending, 0, win->comm_ptr->local_size * sizeof(bool));
        parent->num_rdma_pending = 0;
    } else {
        parent->rdma_pending[rank] = false;
        parent->num_rdma_pending--;
    }
    destroy_retired_rkeys(parent, rank);

  fn_exit:
    return mpi_errno;
  fn_fail:
    goto fn_exit;
}

/* --- MPIX_Memhandle_create / MPIX_Memhandle_release ---------------------- */

int MPIR_Memhandle_create_impl(void *base, MPI_Aint size, MPIR_Info * info_ptr,
                               MPIR_Win * win_ptr, void *memhandle, int *memhandle_size)
{
    int mpi_errno = MPI_SUCCESS;
    MPIDI_NBRMA_parent_t *parent;
    MPIDI_NBRMA_registration_t *reg = NULL;
    MPIDI_NBRMA_memhandle_header_t hdr = { 0 };
    void *rkey_buf = NULL;
    size_t rkey_bytes = 0;
    ucs_status_t status;

    MPIR_FUNC_ENTER;

    mpi_errno = check_parent(win_ptr);
    MPIR_ERR_CHECK(mpi_errno);
    MPIR_ERR_CHKANDJUMP(base == NULL && size > 0, mpi_errno, MPI_ERR_ARG, "**nbrmamhnullbase");
    mpi_errno = get_parent_state(win_ptr, &parent);
    MPIR_ERR_CHECK(mpi_errno);

    reg = MPL_calloc(1, sizeof(*reg), MPL_MEM_RMA);
    MPIR_ERR_CHKANDJUMP(reg == NULL, mpi_errno, MPI_ERR_NO_MEM, "**nomem");
    reg->base = base;
    reg->size = size;
    if (size > 0) {
        ucp_mem_map_params_t map_params = {
            .field_mask = UCP_MEM_MAP_PARAM_FIELD_ADDRESS | UCP_MEM_MAP_PARAM_FIELD_LENGTH,
            .address = base,
            .length = size
        };
        status = ucp_mem_map(MPIDI_UCX_global.context, &map_params, &reg->mem_h);
        MPIDI_UCX_CHK_STATUS(status);
        status = ucp_rkey_pack(MPIDI_UCX_global.context, reg->mem_h, &rkey_buf, &rkey_bytes);
        MPIDI_UCX_CHK_STATUS(status);
    }
    MPIR_ERR_CHKANDJUMP2(sizeof(hdr) + rkey_bytes > MPIX_MAX_MEMHANDLE_SIZE, mpi_errno,
                         MPI_ERR_INTERN, "**nbrmamhtoobig", "**nbrmamhtoobig %d %d",
                         (int) (sizeof(hdr) + rkey_bytes), MPIX_MAX_MEMHANDLE_SIZE);

    reg->generation = ++last_generation;
    hdr.magic = NBRMA_MEMHANDLE_MAGIC;
    hdr.version = NBRMA_MEMHANDLE_VERSION;
    hdr.rkey_bytes = (uint16_t) rkey_bytes;
    hdr.total_bytes = (uint32_t) (sizeof(hdr) + rkey_bytes);
    hdr.owner_rank = win_ptr->comm_ptr->rank;
    hdr.win_id = MPIDIG_WIN(win_ptr, win_id);
    hdr.generation = reg->generation;
    hdr.base = (uint64_t) (uintptr_t) base;
    hdr.size = (uint64_t) size;
    memcpy(memhandle, &hdr, sizeof(hdr));
    if (rkey_bytes)
        memcpy((char *) memhandle + sizeof(hdr), rkey_buf, rkey_bytes);
    hdr.checksum = handle_checksum(memhandle, hdr.total_bytes);
    memcpy((char *) memhandle + offsetof(MPIDI_NBRMA_memhandle_header_t, checksum),
           &hdr.checksum, sizeof(hdr.checksum));
    *memhandle_size = (int) hdr.total_bytes;

    reg->next = parent->registrations;
    parent->registrations = reg;
    parent->num_registrations++;
    reg = NULL;

  fn_exit:
    if (rkey_buf)
        ucp_rkey_buffer_release(rkey_buf);
    MPIR_FUNC_EXIT;
    return mpi_errno;
  fn_fail:
    if (reg && reg->mem_h)
        ucp_mem_unmap(MPIDI_UCX_global.context, reg->mem_h);
    MPL_free(reg);
    goto fn_exit;
}

static void unregister(MPIDI_NBRMA_registration_t * reg)
{
    if (reg->mem_h)
        ucp_mem_unmap(MPIDI_UCX_global.context, reg->mem_h);
    MPL_free(reg);
}

int MPIR_Memhandle_release_impl(void *memhandle, MPIR_Win * win_ptr)
{
    int mpi_errno = MPI_SUCCESS;
    MPIDI_NBRMA_memhandle_header_t hdr;
    MPIDI_NBRMA_parent_t *parent;
    MPIDI_NBRMA_registration_t **link;

    MPIR_FUNC_ENTER;

    mpi_errno = check_parent(win_ptr);
    MPIR_ERR_CHECK(mpi_errno);
    mpi_errno = decode_handle(memhandle, win_ptr, &hdr);
    MPIR_ERR_CHECK(mpi_errno);
    MPIR_ERR_CHKANDJUMP2(hdr.owner_rank != win_ptr->comm_ptr->rank, mpi_errno, MPI_ERR_ARG,
                         "**nbrmamhnotmine", "**nbrmamhnotmine %d %d", hdr.owner_rank,
                         win_ptr->comm_ptr->rank);

    parent = parent_state(win_ptr);
    for (link = parent ? &parent->registrations : NULL; link && *link; link = &(*link)->next)
        if ((*link)->generation == hdr.generation)
            break;
    MPIR_ERR_CHKANDJUMP(link == NULL || *link == NULL, mpi_errno, MPI_ERR_ARG,
                        "**nbrmamhreleased");

    MPIDI_NBRMA_registration_t *reg = *link;
    *link = reg->next;
    parent->num_registrations--;
    unregister(reg);

  fn_exit:
    MPIR_FUNC_EXIT;
    return mpi_errno;
  fn_fail:
    goto fn_exit;
}

/* --- MPIX_Win_from_memhandle -------------------------------------------- */

int MPIR_Win_from_memhandle_impl(const void *memhandle, MPI_Aint size, MPI_Aint disp_unit,
                                 MPIR_Info * info_ptr, int target, MPIR_Win * win_ptr,
                                 MPIR_Win ** newwin_ptr)
{
    int mpi_errno = MPI_SUCCESS;
    MPIDI_NBRMA_memhandle_header_t hdr;
    MPIDI_NBRMA_parent_t *parent;
    MPIDI_NBRMA_memhandle_win_t *mh = NULL;
    MPIR_Win *win = NULL;

    MPIR_FUNC_ENTER;

    mpi_errno = check_parent(win_ptr);
    MPIR_ERR_CHECK(mpi_errno);
    /* MPIX_Win_from_memhandle_c passes an MPI_Aint; a window keeps an int */
    MPIR_ERR_CHKANDJUMP1(disp_unit > INT_MAX, mpi_errno, MPI_ERR_DISP, "**arg", "**arg %s",
                         "disp_unit");
    mpi_errno = decode_handle(memhandle, win_ptr, &hdr);
    MPIR_ERR_CHECK(mpi_errno);
    MPIR_ERR_CHKANDJUMP2(hdr.owner_rank != target, mpi_errno, MPI_ERR_RANK,
                         "**nbrmamhowner", "**nbrmamhowner %d %d", hdr.owner_rank, target);
    MPIR_ERR_CHKANDJUMP2((uint64_t) size > hdr.size, mpi_errno, MPI_ERR_RMA_RANGE,
                         "**nbrmamhsize", "**nbrmamhsize %L %L", (long long) size,
                         (long long) hdr.size);
    /* the owner can tell whether its own handle is still registered */
    MPIR_ERR_CHKANDJUMP(target == win_ptr->comm_ptr->rank &&
                        !find_registration(parent_state(win_ptr), hdr.generation),
                        mpi_errno, MPI_ERR_ARG, "**nbrmamhreleased");

    mpi_errno = get_parent_state(win_ptr, &parent);
    MPIR_ERR_CHECK(mpi_errno);
    mh = MPL_calloc(1, sizeof(*mh), MPL_MEM_RMA);
    MPIR_ERR_CHKANDJUMP(mh == NULL, mpi_errno, MPI_ERR_NO_MEM, "**nomem");
    mh->state.kind = MPIDI_NBRMA_WIN_MEMHANDLE;
    mh->parent = win_ptr;
    mh->target = target;
    mh->remote_base = hdr.base;
    mh->generation = hdr.generation;

    if (target != win_ptr->comm_ptr->rank && hdr.rkey_bytes > 0) {
        int vni = MPIDI_UCX_get_win_vni(win_ptr);
        ucs_status_t status;

        MPID_THREAD_CS_ENTER(VCI, MPIDI_VCI(vni).lock);
        status = ucp_ep_rkey_unpack(MPIDI_UCX_WIN_TO_EP(win_ptr, target, vni),
                                    (const char *) memhandle + sizeof(hdr), &mh->rkey);
        MPID_THREAD_CS_EXIT(VCI, MPIDI_VCI(vni).lock);
        /* unreachable with RDMA: the operations travel on the parent */
        if (status == UCS_ERR_UNREACHABLE)
            mh->rkey = NULL;
        else
            MPIDI_UCX_CHK_STATUS(status);
    }

    win = (MPIR_Win *) MPIR_Handle_obj_alloc(&MPIR_Win_mem);
    MPIR_ERR_CHKANDJUMP(win == NULL, mpi_errno, MPI_ERR_NO_MEM, "**nomem");
    MPIR_Object_set_ref(win, 1);
    {
        int thr_err;
        MPID_Thread_mutex_create(&win->mutex, &thr_err);
        MPIR_Assert(thr_err == 0);
    }
    /* the parent's error handler: errors of the parent's handles were reported there too */
    win->errhandler = win_ptr->errhandler;
    if (win->errhandler && !HANDLE_IS_BUILTIN(win->errhandler->handle))
        MPIR_Errhandler_add_ref(win->errhandler);
    /* no local memory: the window's memory is the target's */
    win->base = NULL;
    win->size = size;
    win->disp_unit = (int) disp_unit;
    win->attributes = NULL;
    win->comm_ptr = win_ptr->comm_ptr;
    MPIR_Comm_add_ref(win->comm_ptr);
    win->copyDispUnit = 0;
    win->copySize = 0;
    win->name[0] = '\0';
    win->create_flavor = MPI_WIN_FLAVOR_CREATE;
    win->model = MPI_WIN_UNIFIED;
    win->copyCreateFlavor = 0;
    win->copyModel = 0;
    /* MPIDIG's and the netmod's parts stay empty: the hooks keep MPIDIG away */
    memset(&win->dev, 0, sizeof(win->dev));
    MPIDI_WIN(win, am_vci) = MPIDI_WIN(win_ptr, am_vci);
    MPIDIG_WIN(win, nbrma) = mh;
    mh->win = win;

    mh->next_sibling = parent->children;
    parent->children = mh;
    parent->num_children++;
    *newwin_ptr = win;

  fn_exit:
    MPIR_FUNC_EXIT;
    return mpi_errno;
  fn_fail:
    if (mh && mh->rkey)
        ucp_rkey_destroy(mh->rkey);
    MPL_free(mh);
    goto fn_exit;
}

/* --- operations on a memory-handle window ------------------------------- */

static void rdma_request_done(void *ucp_request, ucs_status_t status, void *user_data)
{
    MPIR_Request *req = user_data;

    if (status != UCS_OK)
        req->status.MPI_ERROR = MPI_ERR_OTHER;
    MPID_Request_complete(req);
    ucp_request_free(ucp_request);
}

/* Starts a contiguous put or get of `bytes` at `remote_addr` of `target`, a
 * rank of the dynamic window `parent_win`, with `rkey`. */
static int rdma_transfer(MPIR_Win * parent_win, int target, ucp_rkey_h rkey, bool is_put,
                         void *local_buf, size_t bytes, uint64_t remote_addr,
                         MPIR_Request ** request)
{
    int mpi_errno = MPI_SUCCESS;
    MPIDI_NBRMA_parent_t *parent = parent_state(parent_win);
    int vni = MPIDI_UCX_get_win_vni(parent_win);
    ucp_ep_h ep = MPIDI_UCX_WIN_TO_EP(parent_win, target, vni);
    ucs_status_ptr_t status_ptr;
    ucs_status_t status;
    MPIR_Request *req = NULL;

    if (request == NULL) {
        MPID_THREAD_CS_ENTER(VCI, MPIDI_VCI(vni).lock);
        status = is_put ? ucp_put_nbi(ep, local_buf, bytes, remote_addr, rkey)
            : ucp_get_nbi(ep, local_buf, bytes, remote_addr, rkey);
        MPID_THREAD_CS_EXIT(VCI, MPIDI_VCI(vni).lock);
        MPIDI_UCX_CHK_STATUS(status);
    } else {
        ucp_request_param_t param = {
            .op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA,
            .cb.send = rdma_request_done
        };
        /* two references: the user's and the completion's (as MPICH's UCX RMA) */
        req = MPIR_Request_create_from_pool(MPIR_REQUEST_KIND__RMA, 0, 2);
        MPIR_ERR_CHKANDJUMP(req == NULL, mpi_errno, MPIX_ERR_NOREQ, "**nomemreq");
        param.user_data = req;
        MPID_THREAD_CS_ENTER(VCI, MPIDI_VCI(vni).lock);
        status_ptr = is_put ? ucp_put_nbx(ep, local_buf, bytes, remote_addr, rkey, &param)
            : ucp_get_nbx(ep, local_buf, bytes, remote_addr, rkey, &param);
        MPID_THREAD_CS_EXIT(VCI, MPIDI_VCI(vni).lock);
        if (UCS_PTR_IS_ERR(status_ptr)) {
            MPIR_Request_free(req);
            MPIR_Request_free(req);
            MPIDI_UCX_CHK_STATUS(UCS_PTR_STATUS(status_ptr));
        }
        if (status_ptr == NULL)
            MPID_Request_complete(req); /* done at once: no callback comes */
        *request = req;
    }

    if (!parent->rdma_pending[target]) {
        parent->rdma_pending[target] = true;
        parent->num_rdma_pending++;
    }

  fn_exit:
    return mpi_errno;
  fn_fail:
    goto fn_exit;
}

/* The target bytes of an operation must lie inside the window. */
static int check_target_range(MPIR_Win * win, MPI_Aint disp, int count, MPI_Datatype datatype)
{
    int mpi_errno = MPI_SUCCESS;
    MPI_Aint true_lb, true_extent, extent, lo, hi;

    if (count == 0)
        goto fn_exit;
    MPIR_Type_get_true_extent_impl(datatype, &true_lb, &true_extent);
    MPIR_Datatype_get_extent_macro(datatype, extent);
    lo = disp * win->disp_unit + true_lb;
    hi = lo + true_extent;
    if (extent >= 0)
        hi += (count - 1) * extent;
    else
        lo += (count - 1) * extent;
    MPIR_ERR_CHKANDJUMP3(lo < 0 || hi > win->size, mpi_errno, MPI_ERR_RMA_RANGE,
                         "**nbrmamhoprange", "**nbrmamhoprange %L %L %L", (long long) lo,
                         (long long) hi, (long long) win->size);
  fn_exit:
    return mpi_errno;
  fn_fail:
    goto fn_exit;
}

/* What RDMA can carry: a put or get whose both sides are contiguous, nonempty
 * and in host memory. Fills in the local buffer, the byte count and the
 * offset of the first target byte from the target displacement's address. */
typedef struct {
    bool is_put;
    void *local_buf;
    size_t bytes;
    MPI_Aint target_true_lb;
} rdma_args_t;

static bool rdma_eligible(const MPIDI_NBRMA_rma_op_t * op, rdma_args_t * args)
{
    bool is_put = op->kind == MPIDI_NBRMA_OP_PUT;
    const void *local_addr = is_put ? op->origin_addr : op->result_addr;
    int local_count = is_put ? op->origin_count : op->result_count;
    MPI_Datatype local_datatype = is_put ? op->origin_datatype : op->result_datatype;
    int local_contig, target_contig;
    size_t local_bytes, target_bytes;
    MPI_Aint local_true_lb, target_true_lb;

    if (op->kind != MPIDI_NBRMA_OP_PUT && op->kind != MPIDI_NBRMA_OP_GET)
        return false;
    MPIDI_Datatype_check_origin_target_contig_size_lb(local_datatype, op->target_datatype,
                                                      local_count, op->target_count,
                                                      local_contig, target_contig,
                                                      local_bytes, target_bytes,
                                                      local_true_lb, target_true_lb);
    (void) target_bytes;
    if (!local_contig || !target_contig || local_bytes == 0 ||
        MPIR_GPU_query_pointer_is_dev(local_addr))
        return false;
    args->is_put = is_put;
    args->local_buf = (char *) MPIR_get_contig_ptr(local_addr, local_true_lb);
    args->bytes = local_bytes;
    args->target_true_lb = target_true_lb;
    return true;
}

/* Operations that need no target CPU with the rkey: contiguous put and get to
 * another process. Returns whether the operation was started. */
static int try_rdma(MPIDI_NBRMA_memhandle_win_t * mh, const MPIDI_NBRMA_rma_op_t * op,
                    int *started)
{
    int mpi_errno = MPI_SUCCESS;
    MPIR_Win *win = mh->parent;     /* MPIDIG_RMA_OP_CHECK_SYNC: the parent's epoch */
    rdma_args_t args;

    *started = 0;
    if (mh->rkey == NULL || !rdma_eligible(op, &args))
        goto fn_exit;

    MPIDIG_RMA_OP_CHECK_SYNC(mh->target, win);
    mpi_errno = rdma_transfer(win, mh->target, mh->rkey, args.is_put, args.local_buf,
                              args.bytes, mh->remote_base + op->target_disp * mh->win->disp_unit +
                              args.target_true_lb, op->request);
    MPIR_ERR_CHECK(mpi_errno);
    *started = 1;

  fn_exit:
    return mpi_errno;
  fn_fail:
    goto fn_exit;
}

int MPIDI_NBRMA_memhandle_rma(const MPIDI_NBRMA_rma_op_t * op, MPIR_Win * win)
{
    int mpi_errno = MPI_SUCCESS;
    MPIDI_NBRMA_memhandle_win_t *mh = (MPIDI_NBRMA_memhandle_win_t *) MPIDIG_WIN(win, nbrma);
    MPIDI_NBRMA_rma_op_t on_parent;
    int started;

    MPIR_FUNC_ENTER;

    MPIR_ERR_CHKANDJUMP(mh->parent == NULL, mpi_errno, MPI_ERR_WIN, "**nbrmamhorphan");
    MPIR_ERR_CHKANDJUMP2(op->target_rank != mh->target, mpi_errno, MPI_ERR_RANK,
                         "**nbrmamhrank", "**nbrmamhrank %d %d", op->target_rank, mh->target);
    /* use after release: the owner can tell, a remote origin cannot without asking */
    MPIR_ERR_CHKANDJUMP(mh->target == mh->parent->comm_ptr->rank &&
                        !find_registration(parent_state(mh->parent), mh->generation),
                        mpi_errno, MPI_ERR_WIN, "**nbrmamhuseafterrelease");
    mpi_errno = check_target_range(win, op->target_disp, op->target_count, op->target_datatype);
    MPIR_ERR_CHECK(mpi_errno);

    mpi_errno = try_rdma(mh, op, &started);
    MPIR_ERR_CHECK(mpi_errno);
    if (started)
        goto fn_exit;

    /* MPICH's own path on the parent, where displacements are addresses */
    on_parent = *op;
    on_parent.target_disp = (MPI_Aint) (mh->remote_base + op->target_disp * win->disp_unit);
    mpi_errno = MPIDI_NBRMA_rma_default(&on_parent, mh->parent);
    MPIR_ERR_CHECK(mpi_errno);

  fn_exit:
    MPIR_FUNC_EXIT;
    return mpi_errno;
  fn_fail:
    goto fn_exit;
}

/* --- synchronization ----------------------------------------------------- */

int MPIDI_NBRMA_memhandle_sync(const MPIDI_NBRMA_sync_call_t * call, MPIR_Win * win)
{
    int mpi_errno = MPI_SUCCESS;
    MPIDI_NBRMA_memhandle_win_t *mh = (MPIDI_NBRMA_memhandle_win_t *) MPIDIG_WIN(win, nbrma);
    bool local = false;

    MPIR_FUNC_ENTER;

    switch (call->kind) {
        case MPIDI_NBRMA_SYNC_FLUSH_LOCAL:
            local = true;
            /* fallthrough */
        case MPIDI_NBRMA_SYNC_FLUSH:
            MPIR_ERR_CHKANDJUMP2(call->rank != mh->target, mpi_errno, MPI_ERR_RANK,
                                 "**nbrmamhrank", "**nbrmamhrank %d %d", call->rank, mh->target);
            break;
        case MPIDI_NBRMA_SYNC_FLUSH_LOCAL_ALL:
            local = true;
            break;
        case MPIDI_NBRMA_SYNC_FLUSH_ALL:
            break;
        default:
            /* epochs are opened and closed on the parent window */
            MPIR_ERR_SETANDJUMP(mpi_errno, MPI_ERR_RMA_SYNC, "**nbrmamhsync");
    }
    MPIR_ERR_CHKANDJUMP(mh->parent == NULL, mpi_errno, MPI_ERR_WIN, "**nbrmamhorphan");

    /* The window's only target is flushed on the parent: its RDMA by the
     * parent's hook, its other operations (travelling on the parent) by MPIDIG,
     * which also checks that the parent's epoch allows the flush. */
    {
        MPIDI_NBRMA_sync_call_t on_parent = {
            .kind = local ? MPIDI_NBRMA_SYNC_FLUSH_LOCAL : MPIDI_NBRMA_SYNC_FLUSH,
            .rank = mh->target
        };
        mpi_errno = MPIDI_NBRMA_parent_sync(&on_parent, mh->parent);
        MPIR_ERR_CHECK(mpi_errno);
    }

  fn_exit:
    MPIR_FUNC_EXIT;
    return mpi_errno;
  fn_fail:
    goto fn_exit;
}

int MPIDI_NBRMA_parent_sync(const MPIDI_NBRMA_sync_call_t * call, MPIR_Win * win)
{
    int mpi_errno = MPI_SUCCESS;

    switch (call->kind) {
        case MPIDI_NBRMA_SYNC_UNLOCK:
        case MPIDI_NBRMA_SYNC_FLUSH:
        case MPIDI_NBRMA_SYNC_FLUSH_LOCAL:
            mpi_errno = complete_pending_rdma(win, call->rank);
            break;
        case MPIDI_NBRMA_SYNC_UNLOCK_ALL:
        case MPIDI_NBRMA_SYNC_FLUSH_ALL:
        case MPIDI_NBRMA_SYNC_FLUSH_LOCAL_ALL:
        case MPIDI_NBRMA_SYNC_FENCE:
        case MPIDI_NBRMA_SYNC_COMPLETE:
            mpi_errno = complete_pending_rdma(win, NBRMA_ALL_TARGETS);
            break;
        default:
            break;
    }
    MPIR_ERR_CHECK(mpi_errno);
    mpi_errno = MPIDI_NBRMA_sync_default(call, win);
    MPIR_ERR_CHECK(mpi_errno);

  fn_exit:
    return mpi_errno;
  fn_fail:
    goto fn_exit;
}

/* --- RDMA on plain dynamic windows: the rkey cache ----------------------------
 * MPICH 4.0.2 sends every operation on a dynamic window as an active message,
 * because the origin knows no registration of the target's attached memory.
 * Here an origin that misses in its cache sends the operation MPICH's way and,
 * from its second miss on, asks the target (one query at a time per target)
 * for the region holding the address. The target registers that attached
 * region with UCX the first time it is asked, packs its rkey once, and answers
 * with the address range, a generation and the packed rkey. The origin caches
 * them: later contiguous puts and gets inside the range go to UCX directly,
 * completed by the window's flushes and unlocks like the RDMA of memory-handle
 * windows.
 * At MPI_Win_detach the target unregisters the region and tells every origin
 * it gave the rkey to; the origin drops it. MPI already requires that no
 * operation to detached memory be outstanding. An origin learns of memory
 * attached again only through a later message of the target, sent after the
 * invalidation; UCX orders messages within a lane, not across lanes, so the
 * old key could in principle still be used once for new memory at the same
 * address. On the shared-memory transports of this project's machines a key
 * names the process and the address, so that access still lands in the right
 * memory; with a NIC it would fail instead of writing elsewhere.
 *
 * On by default; the info key mpich_nbrma_dynamic_rdma=false at creation, or
 * the environment variable MPICH_NBRMA_DYNAMIC_RDMA=0, keeps MPICH's own path
 * for a process (a target that does not register answers "no region"). */

#define DYNAMIC_RDMA_INFO_KEY "mpich_nbrma_dynamic_rdma"

int MPIDI_NBRMA_rkey_handler_id = -1;

typedef enum {
    RKEY_QUERY = 1,     /* origin -> target: which region holds `addr`? */
    RKEY_REPLY,         /* target -> origin: base, size, generation, rkey follows */
    RKEY_NONE,          /* target -> origin: no registered region holds it */
    RKEY_INVALIDATE     /* target -> origin: `generation` was detached */
} rkey_msg_kind_t;

typedef struct {
    uint64_t win_id;
    uint64_t addr;
    uint64_t base, size, generation;
    int32_t from;
    uint16_t kind;
    uint16_t rkey_bytes;
} rkey_msg_t;

static int send_rkey_msg(MPIR_Win * win, int peer, const rkey_msg_t * msg, const void *rkey)
{
    int mpi_errno = MPI_SUCCESS;
    int vci = MPIDI_WIN(win, am_vci);
    char buf[sizeof(rkey_msg_t) + MPIX_MAX_MEMHANDLE_SIZE];

    memcpy(buf, msg, sizeof(*msg));
    if (msg->rkey_bytes)
        memcpy(buf + sizeof(*msg), rkey, msg->rkey_bytes);
    mpi_errno = MPIDI_NM_am_send_hdr(peer, win->comm_ptr, MPIDI_NBRMA_rkey_handler_id, buf,
                                     sizeof(*msg) + msg->rkey_bytes, vci, vci);
    return mpi_errno;
}

static bool dynamic_rdma_on(const MPIDI_NBRMA_parent_t * parent)
{
    return parent && parent->rkeys != NULL;
}

int MPIDI_NBRMA_dynamic_win_init(MPIR_Win * win, MPIR_Info * info)
{
    int mpi_errno = MPI_SUCCESS;
    int nprocs = win->comm_ptr->local_size;
    const char *env = getenv("MPICH_NBRMA_DYNAMIC_RDMA");
    bool enabled = !(env && !strcmp(env, "0"));
    MPIDI_NBRMA_parent_t *parent;

    if (info) {
        char value[MPI_MAX_INFO_VAL + 1];
        int flag = 0;

        MPIR_Info_get_impl(info, DYNAMIC_RDMA_INFO_KEY, MPI_MAX_INFO_VAL, value, &flag);
        if (flag)
            enabled = strcmp(value, "false") != 0;
    }
    /* the state also when off, so that MPI_Win_get_info reports it */
    mpi_errno = get_parent_state(win, &parent);
    MPIR_ERR_CHECK(mpi_errno);
    if (!enabled)
        goto fn_exit;
    parent->rkeys = MPL_calloc(nprocs, sizeof(*parent->rkeys), MPL_MEM_RMA);
    parent->rkey_query_pending = MPL_calloc(nprocs, sizeof(bool), MPL_MEM_RMA);
    parent->rkey_misses = MPL_calloc(nprocs, 1, MPL_MEM_RMA);
    MPIR_ERR_CHKANDJUMP(!parent->rkeys || !parent->rkey_query_pending || !parent->rkey_misses,
                        mpi_errno, MPI_ERR_NO_MEM, "**nomem");

  fn_exit:
    return mpi_errno;
  fn_fail:
    goto fn_exit;
}

/* MPI_Win_attach: remember the region. It is registered when an origin first
 * asks for it (answer_query): registering every attached region at once would
 * cost each MPI_Win_attach a UCX registration, also for memory that no origin
 * accesses more than once (and pinning, on a NIC). */
int MPIDI_NBRMA_win_attach_hook(MPIR_Win * win, void *base, MPI_Aint size)
{
    int mpi_errno = MPI_SUCCESS;
    MPIDI_NBRMA_parent_t *parent = parent_state(win);
    MPIDI_NBRMA_attached_region_t *region;

    if (!dynamic_rdma_on(parent) || size == 0)
        goto fn_exit;
    region = MPL_calloc(1, sizeof(*region), MPL_MEM_RMA);
    MPIR_ERR_CHKANDJUMP(region == NULL, mpi_errno, MPI_ERR_NO_MEM, "**nomem");
    region->sent_to = MPL_calloc(win->comm_ptr->local_size, 1, MPL_MEM_RMA);
    if (region->sent_to == NULL) {
        MPL_free(region);
        MPIR_ERR_SETANDJUMP(mpi_errno, MPI_ERR_NO_MEM, "**nomem");
    }
    region->base = base;
    region->size = size;
    region->generation = ++last_generation;
    region->next = parent->attached;
    parent->attached = region;

  fn_exit:
    return mpi_errno;
  fn_fail:
    goto fn_exit;
}

/* Registers an attached region and packs its rkey, once. A registration UCX
 * refuses is not an error: operations on that memory keep MPICH's active
 * messages. Returns whether the region is registered. */
static bool register_region(MPIDI_NBRMA_parent_t * parent, MPIDI_NBRMA_attached_region_t * region)
{
    ucp_mem_map_params_t map_params = {
        .field_mask = UCP_MEM_MAP_PARAM_FIELD_ADDRESS | UCP_MEM_MAP_PARAM_FIELD_LENGTH,
        .address = region->base,
        .length = region->size
    };

    if (region->rkey_buf || region->refused)
        return region->rkey_buf != NULL;
    if (ucp_mem_map(MPIDI_UCX_global.context, &map_params, &region->mem_h) != UCS_OK) {
        region->mem_h = NULL;
        region->refused = true;
        return false;
    }
    if (ucp_rkey_pack(MPIDI_UCX_global.context, region->mem_h, &region->rkey_buf,
                      &region->rkey_bytes) != UCS_OK ||
        region->rkey_bytes > MPIX_MAX_MEMHANDLE_SIZE) {
        if (region->rkey_buf)
            ucp_rkey_buffer_release(region->rkey_buf);
        region->rkey_buf = NULL;
        ucp_mem_unmap(MPIDI_UCX_global.context, region->mem_h);
        region->mem_h = NULL;
        region->refused = true;
        return false;
    }
    parent->num_registered++;
    return true;
}

static void free_region(MPIDI_NBRMA_parent_t * parent, MPIDI_NBRMA_attached_region_t * region)
{
    if (region->rkey_buf) {
        ucp_rkey_buffer_release(region->rkey_buf);
        ucp_mem_unmap(MPIDI_UCX_global.context, region->mem_h);
        parent->num_registered--;
    }
    MPL_free(region->sent_to);
    MPL_free(region);
}

/* MPI_Win_detach: the origins that hold the region's rkey drop it. */
int MPIDI_NBRMA_win_detach_hook(MPIR_Win * win, const void *base)
{
    int mpi_errno = MPI_SUCCESS;
    MPIDI_NBRMA_parent_t *parent = parent_state(win);
    MPIDI_NBRMA_attached_region_t *region = NULL;

    if (!dynamic_rdma_on(parent))
        goto fn_exit;
    for (MPIDI_NBRMA_attached_region_t ** link = &parent->attached; *link;
         link = &(*link)->next) {
        if ((*link)->base == base) {
            region = *link;
            *link = region->next;
            break;
        }
    }
    if (region == NULL)
        goto fn_exit;
    for (int rank = 0; rank < win->comm_ptr->local_size; rank++) {
        rkey_msg_t msg = {
            .win_id = MPIDIG_WIN(win, win_id), .generation = region->generation,
            .from = win->comm_ptr->rank, .kind = RKEY_INVALIDATE
        };
        if (!region->sent_to[rank])
            continue;
        mpi_errno = send_rkey_msg(win, rank, &msg, NULL);
        if (mpi_errno != MPI_SUCCESS)
            break;
    }
    free_region(parent, region);
    MPIR_ERR_CHECK(mpi_errno);

  fn_exit:
    return mpi_errno;
  fn_fail:
    goto fn_exit;
}

static MPIDI_NBRMA_cached_rkey_t *find_cached_rkey(MPIDI_NBRMA_parent_t * parent, int target,
                                                   uint64_t addr, size_t bytes)
{
    for (MPIDI_NBRMA_cached_rkey_t * c = parent->rkeys[target]; c; c = c->next)
        if (addr >= c->base && addr - c->base <= c->size && bytes <= c->size - (addr - c->base))
            return c;
    return NULL;
}

/* A region's rkey goes. UCX must see no operation still using it, and this
 * runs inside a UCX callback, where waiting for one is not allowed: with RDMA
 * to the target outstanding, the rkey waits in `retired` for the next flush. */
static void drop_cached_rkey(MPIDI_NBRMA_parent_t * parent, int target, uint64_t generation)
{
    for (MPIDI_NBRMA_cached_rkey_t ** link = &parent->rkeys[target]; *link;
         link = &(*link)->next) {
        MPIDI_NBRMA_cached_rkey_t *c = *link;
        if (c->generation != generation)
            continue;
        *link = c->next;
        if (parent->rdma_pending[target]) {
            c->next = parent->retired;
            parent->retired = c;
        } else {
            ucp_rkey_destroy(c->rkey);
            MPL_free(c);
        }
        break;
    }
}

/* After the RDMA toward `rank` (or all) completed. */
static void destroy_retired_rkeys(MPIDI_NBRMA_parent_t * parent, int rank)
{
    for (MPIDI_NBRMA_cached_rkey_t ** link = &parent->retired; *link;) {
        MPIDI_NBRMA_cached_rkey_t *c = *link;
        if (rank != NBRMA_ALL_TARGETS && c->target != rank) {
            link = &c->next;
            continue;
        }
        *link = c->next;
        ucp_rkey_destroy(c->rkey);
        MPL_free(c);
    }
}

static int answer_query(MPIR_Win * win, MPIDI_NBRMA_parent_t * parent, const rkey_msg_t * query)
{
    rkey_msg_t reply = {
        .win_id = query->win_id, .addr = query->addr, .from = win->comm_ptr->rank,
        .kind = RKEY_NONE
    };
    const void *rkey = NULL;

    for (MPIDI_NBRMA_attached_region_t * r = dynamic_rdma_on(parent) ? parent->attached : NULL;
         r; r = r->next) {
        uint64_t base = (uint64_t) (uintptr_t) r->base;
        if (query->addr >= base && query->addr - base < (uint64_t) r->size) {
            if (!register_region(parent, r))
                break;
            reply.kind = RKEY_REPLY;
            reply.base = base;
            reply.size = (uint64_t) r->size;
            reply.generation = r->generation;
            reply.rkey_bytes = (uint16_t) r->rkey_bytes;
            rkey = r->rkey_buf;
            r->sent_to[query->from] = 1;
            break;
        }
    }
    return send_rkey_msg(win, query->from, &reply, rkey);
}

static int cache_rkey(MPIR_Win * win, MPIDI_NBRMA_parent_t * parent, const rkey_msg_t * reply,
                      const void *packed)
{
    int mpi_errno = MPI_SUCCESS;
    int target = reply->from;
    int vni = MPIDI_UCX_get_win_vni(win);
    MPIDI_NBRMA_cached_rkey_t *c;
    ucs_status_t status;

    for (c = parent->rkeys[target]; c; c = c->next)
        if (c->generation == reply->generation)
            goto fn_exit;       /* asked twice about the same region */
    c = MPL_calloc(1, sizeof(*c), MPL_MEM_RMA);
    MPIR_ERR_CHKANDJUMP(c == NULL, mpi_errno, MPI_ERR_NO_MEM, "**nomem");
    status = ucp_ep_rkey_unpack(MPIDI_UCX_WIN_TO_EP(win, target, vni), packed, &c->rkey);
    if (status != UCS_OK) {
        MPL_free(c);    /* not reachable with RDMA: MPICH's path stays */
        goto fn_exit;
    }
    c->target = target;
    c->base = reply->base;
    c->size = reply->size;
    c->generation = reply->generation;
    c->next = parent->rkeys[target];
    parent->rkeys[target] = c;

  fn_exit:
    return mpi_errno;
  fn_fail:
    goto fn_exit;
}

int MPIDI_NBRMA_rkey_msg_cb(void *am_hdr, void *data, MPI_Aint data_sz, uint32_t attr,
                            MPIR_Request ** req)
{
    int mpi_errno = MPI_SUCCESS;
    rkey_msg_t msg;
    MPIR_Win *win;
    MPIDI_NBRMA_parent_t *parent;

    MPIR_FUNC_ENTER;

    (void) data;
    (void) data_sz;
    if (attr & MPIDIG_AM_ATTR__IS_ASYNC)
        *req = NULL;
    memcpy(&msg, am_hdr, sizeof(msg));
    /* the window may be gone here already (MPI_Win_free is not synchronized
     * with these messages): nothing is owed then */
    win = (MPIR_Win *) MPIDIU_map_lookup(MPIDI_global.win_map, msg.win_id);
    parent = win ? parent_state(win) : NULL;
    if (parent == NULL || msg.from < 0 || msg.from >= win->comm_ptr->local_size)
        goto fn_exit;
    switch (msg.kind) {
        case RKEY_QUERY:
            mpi_errno = answer_query(win, parent, &msg);
            break;
        case RKEY_REPLY:
        case RKEY_NONE:
            if (!dynamic_rdma_on(parent))
                break;
            parent->rkey_query_pending[msg.from] = false;
            if (msg.kind == RKEY_REPLY)
                mpi_errno = cache_rkey(win, parent, &msg, (const char *) am_hdr + sizeof(msg));
            break;
        case RKEY_INVALIDATE:
            if (dynamic_rdma_on(parent))
                drop_cached_rkey(parent, msg.from, msg.generation);
            break;
    }
    MPIR_ERR_CHECK(mpi_errno);

  fn_exit:
    MPIR_FUNC_EXIT;
    return mpi_errno;
  fn_fail:
    goto fn_exit;
}

/* An operation on a dynamic window: displacements are addresses. */
int MPIDI_NBRMA_dynamic_rma(const MPIDI_NBRMA_rma_op_t * op, MPIR_Win * win)
{
    int mpi_errno = MPI_SUCCESS;
    MPIDI_NBRMA_parent_t *parent = parent_state(win);
    int target = op->target_rank;
    rdma_args_t args;
    uint64_t addr;
    MPIDI_NBRMA_cached_rkey_t *c;

    MPIR_FUNC_ENTER;

    if (!dynamic_rdma_on(parent) || target == MPI_PROC_NULL || target == win->comm_ptr->rank ||
        target < 0 || target >= win->comm_ptr->local_size || !rdma_eligible(op, &args))
        goto default_path;
    addr = (uint64_t) op->target_disp * win->disp_unit + args.target_true_lb;
    c = find_cached_rkey(parent, target, addr, args.bytes);
    if (c) {
        MPIDIG_RMA_OP_CHECK_SYNC(target, win);
        mpi_errno = rdma_transfer(win, target, c->rkey, args.is_put, args.local_buf, args.bytes,
                                  addr, op->request);
        MPIR_ERR_CHECK(mpi_errno);
        parent->rdma_ops++;
        goto fn_exit;
    }
    /* Ask on the second miss since the last answer: a window that carries one
     * operation to a target (made and freed around it) would gain nothing from
     * the key and pay a query, a registration and an invalidation. */
    if (!parent->rkey_query_pending[target] && ++parent->rkey_misses[target] >= 2) {
        rkey_msg_t query = {
            .win_id = MPIDIG_WIN(win, win_id), .addr = addr, .from = win->comm_ptr->rank,
            .kind = RKEY_QUERY
        };
        mpi_errno = send_rkey_msg(win, target, &query, NULL);
        MPIR_ERR_CHECK(mpi_errno);
        parent->rkey_query_pending[target] = true;
        parent->rkey_misses[target] = 0;
    }

  default_path:
    mpi_errno = MPIDI_NBRMA_rma_default(op, win);
    MPIR_ERR_CHECK(mpi_errno);

  fn_exit:
    MPIR_FUNC_EXIT;
    return mpi_errno;
  fn_fail:
    goto fn_exit;
}

/* --- info, free ------------------------------------------------------------ */

static int info_set_int(MPIR_Info * info, const char *key, long long value)
{
    char buf[32];
    snprintf(buf, sizeof(buf), "%lld", value);
    return MPIR_Info_set_impl(info, key, buf);
}

/* A memory-handle window reports its parent's hints (its accumulates travel on
 * the parent) and how it reaches its target; a parent adds its counts. */
int MPIDI_NBRMA_memhandle_get_info(MPIR_Win * win, MPIR_Info ** info_p_p)
{
    int mpi_errno = MPI_SUCCESS;
    MPIDI_NBRMA_parent_t *parent = parent_state(win);

    if (parent) {
        mpi_errno = MPIDI_NM_mpi_win_get_info(win, info_p_p);
        MPIR_ERR_CHECK(mpi_errno);
        mpi_errno = info_set_int(*info_p_p, "mpix_memhandle_registrations",
                                 parent->num_registrations);
        MPIR_ERR_CHECK(mpi_errno);
        mpi_errno = info_set_int(*info_p_p, "mpix_memhandle_windows", parent->num_children);
        MPIR_ERR_CHECK(mpi_errno);
        /* the rkey cache: on or off, regions registered here, operations that used it */
        mpi_errno = MPIR_Info_set_impl(*info_p_p, DYNAMIC_RDMA_INFO_KEY,
                                       dynamic_rdma_on(parent) ? "true" : "false");
        MPIR_ERR_CHECK(mpi_errno);
        mpi_errno = info_set_int(*info_p_p, "mpich_nbrma_attached_registrations",
                                 parent->num_registered);
        MPIR_ERR_CHECK(mpi_errno);
        mpi_errno = info_set_int(*info_p_p, "mpich_nbrma_dynamic_rdma_ops",
                                 (long long) parent->rdma_ops);
        MPIR_ERR_CHECK(mpi_errno);
    } else {
        MPIDI_NBRMA_memhandle_win_t *mh = (MPIDI_NBRMA_memhandle_win_t *) MPIDIG_WIN(win, nbrma);

        if (mh->parent)
            mpi_errno = MPIDI_NM_mpi_win_get_info(mh->parent, info_p_p);
        else
            mpi_errno = MPIR_Info_alloc(info_p_p);
        MPIR_ERR_CHECK(mpi_errno);
        mpi_errno = info_set_int(*info_p_p, "mpix_memhandle_target", mh->target);
        MPIR_ERR_CHECK(mpi_errno);
        /* how contiguous put and get reach the target */
        mpi_errno = MPIR_Info_set_impl(*info_p_p, "mpix_memhandle_put_get",
                                       mh->rkey ? "rdma" : "active_message");
        MPIR_ERR_CHECK(mpi_errno);
    }

  fn_exit:
    return mpi_errno;
  fn_fail:
    goto fn_exit;
}

static int free_memhandle_win(MPIR_Win * win)
{
    int mpi_errno = MPI_SUCCESS;
    MPIDI_NBRMA_memhandle_win_t *mh = (MPIDI_NBRMA_memhandle_win_t *) MPIDIG_WIN(win, nbrma);
    MPIDI_NBRMA_parent_t *parent = mh->parent ? parent_state(mh->parent) : NULL;

    if (parent) {
        /* UCX must not see the rkey destroyed under operations still using it */
        mpi_errno = complete_pending_rdma(mh->parent, mh->target);
        MPIR_ERR_CHECK(mpi_errno);
        for (MPIDI_NBRMA_memhandle_win_t ** link = &parent->children; *link;
             link = &(*link)->next_sibling)
            if (*link == mh) {
                *link = mh->next_sibling;
                break;
            }
        parent->num_children--;
    }
    if (mh->rkey)
        ucp_rkey_destroy(mh->rkey);
    MPL_free(mh);

    MPIR_Comm_release(win->comm_ptr);
    {
        int thr_err;
        MPID_Thread_mutex_destroy(&win->mutex, &thr_err);
        MPIR_Assert(thr_err == 0);
    }
    MPIR_Handle_obj_free(&MPIR_Win_mem, win);

  fn_exit:
    return mpi_errno;
  fn_fail:
    goto fn_exit;
}

/* The parent goes away (MPI_Win_free is collective, so every process does this
 * now): its registrations end, its memory-handle windows here lose their
 * target (later calls on them fail with MPI_ERR_WIN; MPI_Win_free still works). */
static int free_parent_state(MPIR_Win * win)
{
    int mpi_errno = MPI_SUCCESS;
    MPIDI_NBRMA_parent_t *parent = parent_state(win);

    mpi_errno = complete_pending_rdma(win, NBRMA_ALL_TARGETS);
    MPIR_ERR_CHECK(mpi_errno);
    for (MPIDI_NBRMA_memhandle_win_t * mh = parent->children; mh; mh = mh->next_sibling) {
        if (mh->rkey)
            ucp_rkey_destroy(mh->rkey);
        mh->rkey = NULL;
        mh->parent = NULL;
    }
    while (parent->registrations) {
        MPIDI_NBRMA_registration_t *reg = parent->registrations;
        parent->registrations = reg->next;
        unregister(reg);
    }
    /* every process frees the window now: no origin needs to hear of detaches */
    while (parent->attached) {
        MPIDI_NBRMA_attached_region_t *region = parent->attached;
        parent->attached = region->next;
        free_region(parent, region);
    }
    for (int rank = 0; parent->rkeys && rank < win->comm_ptr->local_size; rank++) {
        while (parent->rkeys[rank]) {
            MPIDI_NBRMA_cached_rkey_t *c = parent->rkeys[rank];
            parent->rkeys[rank] = c->next;
            ucp_rkey_destroy(c->rkey);
            MPL_free(c);
        }
    }
    MPL_free(parent->rkeys);
    MPL_free(parent->rkey_query_pending);
    MPL_free(parent->rkey_misses);
    MPL_free(parent->rdma_pending);
    MPL_free(parent);
    MPIDIG_WIN(win, nbrma) = NULL;

  fn_exit:
    return mpi_errno;
  fn_fail:
    goto fn_exit;
}

int MPIDI_NBRMA_memhandle_win_free(MPIR_Win ** win_ptr, int *handled)
{
    int mpi_errno = MPI_SUCCESS;
    MPIR_Win *win = *win_ptr;

    MPIR_FUNC_ENTER;

    *handled = 0;
    switch (MPIDI_NBRMA_WIN_STATE(win)->kind) {
        case MPIDI_NBRMA_WIN_MEMHANDLE:
            mpi_errno = free_memhandle_win(win);
            MPIR_ERR_CHECK(mpi_errno);
            *handled = 1;
            break;
        case MPIDI_NBRMA_WIN_MEMHANDLE_PARENT:
            mpi_errno = free_parent_state(win);
            MPIR_ERR_CHECK(mpi_errno);
            break;
    }

  fn_exit:
    MPIR_FUNC_EXIT;
    return mpi_errno;
  fn_fail:
    goto fn_exit;
}
