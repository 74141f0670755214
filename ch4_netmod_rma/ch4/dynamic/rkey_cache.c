/*
 * mpich-nbrma: RDMA on plain dynamic windows through an rkey cache.
 *
 * An origin that misses in its cache sends the operation MPICH's way and,
 * from its second miss on, asks the target (one query at a time per target)
 * for the region holding the address. The target registers that attached
 * region with UCX the first time it is asked, packs its rkey once, and answers
 * with the address range, a generation and the packed rkey. The origin caches
 * them: later contiguous puts and gets inside the range go to UCX directly,
 * completed by the window's flushes and unlocks (rdma.c).
 *
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
 * MPIR_CVAR_NBRMA_DYNAMIC_RDMA=0, keeps MPICH's own path for a process (a
 * target that does not register answers "no region"). The regions' and the
 * queries' bookkeeping is ../../formats/rkey_regions.c; here the UCX calls
 * and the messages.
 */

#include "mpidimpl.h"
#include "ucx_impl.h"
#include "dynamic_win.h"
#include "ucx_memory.h"
#include "rkey_wire.h"
#include "nbrma_am.h"
#include "nbrma_mpich_path.h"
#include "nbrma_settings.h"

_Static_assert(NBRMA_RKEY_MAX_BYTES == MPIX_MAX_MEMHANDLE_SIZE, "one limit for packed rkeys");
_Static_assert(MPI_PROC_NULL < 0, "nbrma_rdma_remote_rank refuses MPI_PROC_NULL as negative");

static int rkey_handler_id = -1;

static int send_rkey_msg(MPIR_Win * win, int peer, nbrma_rkey_msg_t * msg, nbrma_rkey_msg_kind_t kind,
                         const void *rkey)
{
    char buf[NBRMA_RKEY_MSG_MAX_BYTES];
    size_t bytes = nbrma_rkey_msg_pack(buf, msg, kind, MPIDIG_WIN(win, win_id),
                                       win->comm_ptr->rank, rkey);

    return MPIDI_NBRMA_am_send(win, peer, rkey_handler_id, buf, bytes);
}

int MPIDI_NBRMA_rkey_cache_init(MPIDI_NBRMA_dynamic_win_t * dw, MPIR_Win * win, MPIR_Info * info)
{
    int mpi_errno = MPI_SUCCESS;
    bool enabled = MPIR_CVAR_NBRMA_DYNAMIC_RDMA;

    MPIDI_NBRMA_info_get_bool(info, MPIDI_NBRMA_INFO_DYNAMIC_RDMA, &enabled);
    if (enabled && !nbrma_cached_regions_init(&dw->cached, win->comm_ptr->local_size))
        MPIR_ERR_SETANDJUMP(mpi_errno, MPI_ERR_NO_MEM, "**nomem");

  fn_exit:
    return mpi_errno;
  fn_fail:
    goto fn_exit;
}

/* --- this process as a target ------------------------------------------- */

/* MPI_Win_attach: remember the region, also with the rkey cache off (whole
 * and pulled epochs are checked against the regions at the target). It is
 * registered when an origin first asks for it (answer_query): registering
 * every attached region at once would cost each MPI_Win_attach a UCX
 * registration, also for memory that no origin accesses more than once (and
 * pinning, on a NIC). */
int MPIDI_NBRMA_rkey_cache_attach(MPIR_Win * win, void *base, MPI_Aint size)
{
    int mpi_errno = MPI_SUCCESS;

    if (size != 0 &&
        !nbrma_attached_regions_add(&MPIDI_NBRMA_dynamic_win(win)->attached,
                                    (uint64_t) (uintptr_t) base, (uint64_t) size,
                                    nbrma_next_generation(), win->comm_ptr->local_size))
        MPIR_ERR_SETANDJUMP(mpi_errno, MPI_ERR_NO_MEM, "**nomem");

  fn_exit:
    return mpi_errno;
  fn_fail:
    goto fn_exit;
}

static void unregister_region(MPIDI_NBRMA_dynamic_win_t * dw, nbrma_attached_region_t * region)
{
    if (region->packed_rkey) {
        ucp_rkey_buffer_release(region->packed_rkey);
        dw->num_registered--;
    }
    MPIDI_NBRMA_memory_unmap(MPIDI_UCX_global.context, region->mem_h, region->mem_h_owned);
    region->packed_rkey = NULL;
    region->mem_h = NULL;
}

/* Registers an attached region and packs its rkey, once. A registration UCX
 * refuses is not an error: operations on that memory keep MPICH's active
 * messages. Returns whether the region is registered. */
static bool register_region(MPIDI_NBRMA_dynamic_win_t * dw, nbrma_attached_region_t * region)
{
    ucp_mem_h mem_h;
    bool owned;
    void *packed = NULL;
    size_t packed_bytes = 0;

    if (!nbrma_attached_region_unasked(region))
        return region->packed_rkey != NULL;
    if (MPIDI_NBRMA_memory_map(MPIDI_UCX_global.context, (void *) (uintptr_t) region->base,
                               region->size, &mem_h, &owned) != UCS_OK) {
        region->refused = true;
        return false;
    }
    if (ucp_rkey_pack(MPIDI_UCX_global.context, mem_h, &packed, &packed_bytes) != UCS_OK)
        packed = NULL;
    if (!nbrma_attached_region_registered(region, mem_h, owned, packed, packed_bytes,
                                          NBRMA_RKEY_MAX_BYTES)) {
        if (packed)
            ucp_rkey_buffer_release(packed);
        MPIDI_NBRMA_memory_unmap(MPIDI_UCX_global.context, mem_h, owned);
        return false;
    }
    dw->num_registered++;
    return true;
}

static void free_region(MPIDI_NBRMA_dynamic_win_t * dw, nbrma_attached_region_t * region)
{
    unregister_region(dw, region);
    nbrma_attached_region_free(region);
}

/* MPI_Win_detach: the origins that hold the region's rkey drop it. */
int MPIDI_NBRMA_rkey_cache_detach(MPIR_Win * win, const void *base)
{
    int mpi_errno = MPI_SUCCESS;
    MPIDI_NBRMA_dynamic_win_t *dw = MPIDI_NBRMA_dynamic_win(win);
    nbrma_attached_region_t *region =
        nbrma_attached_regions_remove(&dw->attached, (uint64_t) (uintptr_t) base);

    if (region == NULL)
        goto fn_exit;
    for (int rank = nbrma_attached_region_next_origin(region, 0);
         rank >= 0 && mpi_errno == MPI_SUCCESS;
         rank = nbrma_attached_region_next_origin(region, rank + 1)) {
        nbrma_rkey_msg_t msg = {.generation = region->generation };
        mpi_errno = send_rkey_msg(win, rank, &msg, NBRMA_RKEY_INVALIDATE, NULL);
    }
    free_region(dw, region);
    MPIR_ERR_CHECK(mpi_errno);

  fn_exit:
    return mpi_errno;
  fn_fail:
    goto fn_exit;
}

bool MPIDI_NBRMA_attached_bytes(MPIR_Win * win, int64_t target_disp, size_t len, char **addr)
{
    if (!nbrma_attached_regions_find(&MPIDI_NBRMA_dynamic_win(win)->attached,
                                     (uint64_t) target_disp, len))
        return false;
    *addr = (char *) (uintptr_t) (uint64_t) target_disp;
    return true;
}

static int answer_query(MPIR_Win * win, MPIDI_NBRMA_dynamic_win_t * dw,
                        const nbrma_rkey_msg_t * query)
{
    nbrma_rkey_msg_t reply = {.addr = query->addr };
    nbrma_rkey_msg_kind_t kind = NBRMA_RKEY_NONE;
    const void *rkey = NULL;
    /* the newest region holding the byte at the address */
    nbrma_attached_region_t *r = MPIDI_NBRMA_rkey_cache_on(dw) ?
        nbrma_attached_regions_find(&dw->attached, query->addr, 1) : NULL;

    if (r && register_region(dw, r)) {
        kind = NBRMA_RKEY_REPLY;
        rkey = nbrma_attached_region_answer(r, query->from, &reply);
    }
    return send_rkey_msg(win, query->from, &reply, kind, rkey);
}

/* --- this process as an origin ------------------------------------------ */

static int cache_rkey(MPIR_Win * win, MPIDI_NBRMA_dynamic_win_t * dw,
                      const nbrma_rkey_msg_t * reply, const void *packed)
{
    int mpi_errno = MPI_SUCCESS;
    int target = reply->from;
    int vni = MPIDI_UCX_get_win_vni(win);
    ucp_rkey_h rkey;

    if (nbrma_cached_regions_has(&dw->cached, target, reply->generation))
        goto fn_exit;   /* asked twice about the same region */
    if (ucp_ep_rkey_unpack(MPIDI_UCX_WIN_TO_EP(win, target, vni), packed, &rkey) != UCS_OK)
        goto fn_exit;   /* not reachable with RDMA: MPICH's path stays */
    if (!nbrma_cached_regions_add(&dw->cached, target, reply->base, reply->size,
                                  reply->generation, rkey)) {
        ucp_rkey_destroy(rkey);
        MPIR_ERR_SETANDJUMP(mpi_errno, MPI_ERR_NO_MEM, "**nomem");
    }

  fn_exit:
    return mpi_errno;
  fn_fail:
    goto fn_exit;
}

static void drop_cached_rkey(MPIDI_NBRMA_dynamic_win_t * dw, int target, uint64_t generation)
{
    void *rkey;

    if (nbrma_cached_regions_drop(&dw->cached, target, generation, &rkey))
        MPIDI_NBRMA_rdma_retire_rkey(dw, target, rkey);
}

static int rkey_msg_cb(void *am_hdr, void *data, MPI_Aint data_sz, uint32_t attr,
                       MPIR_Request ** req)
{
    int mpi_errno = MPI_SUCCESS;
    nbrma_rkey_msg_t msg;
    MPIR_Win *win;
    MPIDI_NBRMA_dynamic_win_t *dw;

    MPIR_FUNC_ENTER;

    (void) data;
    (void) data_sz;
    memcpy(&msg, am_hdr, sizeof(msg));
    /* the window may be gone here already: nothing is owed then */
    win = MPIDI_NBRMA_am_window(msg.win_id, attr, req);
    dw = win ? MPIDI_NBRMA_dynamic_win(win) : NULL;
    if (dw == NULL)
        goto fn_exit;
    MPIR_ERR_CHKANDJUMP1(!nbrma_rkey_msg_valid(&msg, win->comm_ptr->local_size), mpi_errno,
                         MPI_ERR_INTERN, "**nbrmaengine", "**nbrmaengine %s",
                         "malformed rkey-cache message");
    if (msg.kind == NBRMA_RKEY_QUERY) {
        mpi_errno = answer_query(win, dw, &msg);
    } else if (MPIDI_NBRMA_rkey_cache_on(dw)) {
        if (msg.kind == NBRMA_RKEY_INVALIDATE) {
            drop_cached_rkey(dw, msg.from, msg.generation);
        } else {
            nbrma_cached_regions_answered(&dw->cached, msg.from);
            if (msg.kind == NBRMA_RKEY_REPLY)
                mpi_errno = cache_rkey(win, dw, &msg, (const char *) am_hdr + sizeof(msg));
        }
    }
    MPIR_ERR_CHECK(mpi_errno);

  fn_exit:
    MPIR_FUNC_EXIT;
    return mpi_errno;
  fn_fail:
    goto fn_exit;
}

int MPIDI_NBRMA_rkey_cache_register_handlers(void)
{
    return MPIDI_NBRMA_am_register(rkey_msg_cb, &rkey_handler_id);
}

/* Whether `op` may go by RDMA at all (*args, *addr: how), false for
 * MPICH's path. */
static bool rdma_candidate(MPIDI_NBRMA_dynamic_win_t * dw, const MPIDI_NBRMA_rma_op_t * op,
                           MPIR_Win * win, MPIDI_NBRMA_rdma_args_t * args, uint64_t * addr)
{
    int target = op->target_rank;

    if (!MPIDI_NBRMA_rkey_cache_on(dw) ||
        !nbrma_rdma_remote_rank(target, win->comm_ptr->rank, win->comm_ptr->local_size) ||
        !MPIDI_NBRMA_rdma_eligible(op, args))
        return false;
    *addr = (uint64_t) op->target_disp * win->disp_unit + args->target_true_lb;
    return true;
}

bool MPIDI_NBRMA_rkey_cache_has_key(const MPIDI_NBRMA_rma_op_t * op, MPIR_Win * win)
{
    MPIDI_NBRMA_dynamic_win_t *dw = MPIDI_NBRMA_dynamic_win(win);
    MPIDI_NBRMA_rdma_args_t args;
    uint64_t addr;

    return rdma_candidate(dw, op, win, &args, &addr) &&
        nbrma_cached_regions_find(&dw->cached, op->target_rank, addr, args.bytes) != NULL;
}

/* An operation on a dynamic window (displacements are addresses): by RDMA
 * with a cached rkey, else by MPICH's code (an active message). Its request,
 * if any, completes at the origin. */
int MPIDI_NBRMA_rkey_cache_issue(const MPIDI_NBRMA_rma_op_t * op, MPIR_Win * win)
{
    int mpi_errno = MPI_SUCCESS;
    MPIDI_NBRMA_dynamic_win_t *dw = MPIDI_NBRMA_dynamic_win(win);
    int target = op->target_rank;
    MPIDI_NBRMA_rdma_args_t args;
    uint64_t addr;
    nbrma_cached_region_t *c;

    MPIR_FUNC_ENTER;

    if (!rdma_candidate(dw, op, win, &args, &addr))
        goto mpich_path;
    c = nbrma_cached_regions_find(&dw->cached, target, addr, args.bytes);
    if (c) {
        MPIDIG_RMA_OP_CHECK_SYNC(target, win);
        mpi_errno = MPIDI_NBRMA_rdma_transfer(win, target, c->rkey, &args, addr, op->request);
        MPIR_ERR_CHECK(mpi_errno);
        dw->rdma_ops++;
        goto fn_exit;
    }
    /* when to ask: rkey_regions.h (from the second miss on, one at a time) */
    if (nbrma_cached_regions_miss(&dw->cached, target) && MPIDI_NBRMA_rdma_pays(dw, win, target)) {
        nbrma_rkey_msg_t query = {.addr = addr };
        mpi_errno = send_rkey_msg(win, target, &query, NBRMA_RKEY_QUERY, NULL);
        MPIR_ERR_CHECK(mpi_errno);
        nbrma_cached_regions_query_sent(&dw->cached, target);
    }

  mpich_path:
    mpi_errno = MPIDI_NBRMA_mpich_rma(op, win);

  fn_exit:
    MPIR_FUNC_EXIT;
    return mpi_errno;
  fn_fail:
    goto fn_exit;
}

/* The operation of a dynamic window without the engine; a request that is to
 * complete at the target joins an endpoint flush (mpich_path.h). */
int MPIDI_NBRMA_rkey_cache_rma(const MPIDI_NBRMA_rma_op_t * op, MPIR_Win * win)
{
    int mpi_errno = MPIDI_NBRMA_rkey_cache_issue(op, win);

    if (mpi_errno == MPI_SUCCESS)
        mpi_errno = MPIDI_NBRMA_remote_request_wrap(win, op->target_rank, op);
    return mpi_errno;
}

/* The window goes away (MPI_Win_free is collective, so every process does this
 * now): no origin needs to hear of detaches. RDMA is complete already. */
void MPIDI_NBRMA_rkey_cache_free(MPIDI_NBRMA_dynamic_win_t * dw)
{
    nbrma_attached_region_t *region;

    while ((region = nbrma_attached_regions_pop(&dw->attached)) != NULL)
        free_region(dw, region);
    nbrma_cached_regions_free(&dw->cached, MPIDI_NBRMA_rkey_destroy);
}
