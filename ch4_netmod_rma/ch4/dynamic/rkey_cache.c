/*
 * mpich-nbrma: RDMA on dynamic windows through an rkey cache (on unless
 * mpich_nbrma_dynamic_rdma=false or MPIR_CVAR_NBRMA_DYNAMIC_RDMA=0; such a
 * target answers "no region"); bookkeeping in ../../formats/rkey_regions.c.
 * A miss goes MPICH's way; from its second miss an origin asks the target (one
 * query at a time) for the region holding the address, which the target
 * registers and answers with its range, generation and packed rkey. Contiguous
 * puts and gets inside it then go to UCX (completed by flushes and unlocks:
 * rdma.c). MPI_Win_detach tells each origin holding the key to drop it. UCX
 * orders messages within a lane, not across lanes, so news of memory attached
 * again may overtake the invalidation and the old key be used once at the same
 * address: on shared-memory transports a key names process and address, so the
 * access lands right; with a NIC it would fail, not write elsewhere.
 */

#include "mpidimpl.h"
#include "ucx_impl.h"
#include "dynamic_win.h"
#include "ucx_memory.h"
#include "rkey_wire.h"
#include "nbrma_am.h"
#include "nbrma_mpich_path.h"

_Static_assert(NBRMA_RKEY_MAX_BYTES == MPIX_MAX_MEMHANDLE_SIZE, "one limit for packed rkeys");
_Static_assert(MPI_PROC_NULL < 0, "nbrma_rdma_remote_rank refuses MPI_PROC_NULL as negative");

static int rkey_handler_id = -1;

static int send_rkey_msg(MPIR_Win * win, int peer, nbrma_rkey_msg_t * msg,
                         nbrma_rkey_msg_kind_t kind, const void *rkey)
{
    char buf[NBRMA_RKEY_MSG_MAX_BYTES];
    size_t bytes = nbrma_rkey_msg_pack(buf, msg, kind, MPIDIG_WIN(win, win_id),
                                       win->comm_ptr->rank, rkey);

    return MPIDI_NBRMA_am_send(win, peer, rkey_handler_id, buf, bytes);
}

/* --- this process as a target ------------------------------------------- */

/* Also with the cache off (whole and pulled epochs are checked against it).
 * Registered when an origin first asks (answer_query), not here: every attach
 * would pay a registration (pinning, on a NIC), even where no origin asks twice. */
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

/* Once per region. UCX refusing is no error: that memory keeps MPICH's active
 * messages. */
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
    if (region->packed_rkey) {
        ucp_rkey_buffer_release(region->packed_rkey);
        dw->num_registered--;
    }
    MPIDI_NBRMA_memory_unmap(MPIDI_UCX_global.context, region->mem_h, region->mem_h_owned);
    nbrma_attached_region_free(region);
}

/* The origins that hold the region's rkey drop it (MPI forbids operations
 * outstanding on detached memory). */
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

static int rkey_msg_cb(void *am_hdr, void *data, MPI_Aint data_sz, uint32_t attr,
                       MPIR_Request ** req)
{
    int mpi_errno = MPI_SUCCESS;
    nbrma_rkey_msg_t msg;
    MPIR_Win *win;
    MPIDI_NBRMA_dynamic_win_t *dw;
    void *dropped;

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
            if (nbrma_cached_regions_drop(&dw->cached, msg.from, msg.generation, &dropped))
                MPIDI_NBRMA_rdma_retire_rkey(dw, msg.from, dropped);
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

/* Whether `op` may go by RDMA at all; *args, *addr: how. */
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

/* Displacements are addresses here; a miss goes MPICH's way (an active message). */
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

/* MPI_Win_free is collective: no origin needs to hear of detaches, and the
 * RDMA is complete already. */
void MPIDI_NBRMA_rkey_cache_free(MPIDI_NBRMA_dynamic_win_t * dw)
{
    nbrma_attached_region_t *region;

    while ((region = nbrma_attached_regions_pop(&dw->attached)) != NULL)
        free_region(dw, region);
    nbrma_cached_regions_free(&dw->cached, MPIDI_NBRMA_rkey_destroy);
}
