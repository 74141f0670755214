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
 * target that does not register answers "no region").
 */

#include "mpidimpl.h"
#include "ucx_impl.h"
#include "dynamic_win.h"
#include "nbrma_ledger_requests.h"
#include "rkey_wire.h"
#include "nbrma_am.h"
#include "nbrma_mpich_path.h"
#include "nbrma_settings.h"

_Static_assert(NBRMA_RKEY_MAX_BYTES == MPIX_MAX_MEMHANDLE_SIZE, "one limit for packed rkeys");

static int rkey_handler_id = -1;

static int send_rkey_msg(MPIR_Win * win, int peer, nbrma_rkey_msg_t * msg, nbrma_rkey_msg_kind_t kind,
                         const void *rkey)
{
    char buf[sizeof(nbrma_rkey_msg_t) + NBRMA_RKEY_MAX_BYTES];

    msg->win_id = MPIDIG_WIN(win, win_id);
    msg->from = win->comm_ptr->rank;
    msg->kind = kind;
    memcpy(buf, msg, sizeof(*msg));
    if (msg->rkey_bytes)
        memcpy(buf + sizeof(*msg), rkey, msg->rkey_bytes);
    return MPIDI_NBRMA_am_send(win, peer, rkey_handler_id, buf, sizeof(*msg) + msg->rkey_bytes);
}

int MPIDI_NBRMA_rkey_cache_init(MPIDI_NBRMA_dynamic_win_t * dw, MPIR_Win * win, MPIR_Info * info)
{
    int mpi_errno = MPI_SUCCESS;
    int nprocs = win->comm_ptr->local_size;
    bool enabled = MPIR_CVAR_NBRMA_DYNAMIC_RDMA;

    MPIDI_NBRMA_info_get_bool(info, MPIDI_NBRMA_INFO_DYNAMIC_RDMA, &enabled);
    if (!enabled)
        goto fn_exit;
    dw->rkeys = MPL_calloc(nprocs, sizeof(*dw->rkeys), MPL_MEM_RMA);
    dw->rkey_query_pending = MPL_calloc(nprocs, sizeof(bool), MPL_MEM_RMA);
    dw->rkey_misses = MPL_calloc(nprocs, 1, MPL_MEM_RMA);
    MPIR_ERR_CHKANDJUMP(!dw->rkeys || !dw->rkey_query_pending || !dw->rkey_misses,
                        mpi_errno, MPI_ERR_NO_MEM, "**nomem");

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
    MPIDI_NBRMA_dynamic_win_t *dw = MPIDI_NBRMA_dynamic_win(win);
    MPIDI_NBRMA_attached_region_t *region;

    if (size == 0)
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
    region->generation = MPIDI_NBRMA_next_generation();
    region->next = dw->attached;
    dw->attached = region;

  fn_exit:
    return mpi_errno;
  fn_fail:
    goto fn_exit;
}

static void unregister_region(MPIDI_NBRMA_dynamic_win_t * dw,
                              MPIDI_NBRMA_attached_region_t * region)
{
    if (region->rkey_buf) {
        ucp_rkey_buffer_release(region->rkey_buf);
        dw->num_registered--;
    }
    MPIDI_NBRMA_memory_unmap(MPIDI_UCX_global.context, region->mem_h, region->mem_h_owned);
    region->rkey_buf = NULL;
    region->mem_h = NULL;
}

/* Registers an attached region and packs its rkey, once. A registration UCX
 * refuses is not an error: operations on that memory keep MPICH's active
 * messages. Returns whether the region is registered. */
static bool register_region(MPIDI_NBRMA_dynamic_win_t * dw, MPIDI_NBRMA_attached_region_t * region)
{
    if (region->rkey_buf || region->refused)
        return region->rkey_buf != NULL;
    if (MPIDI_NBRMA_memory_map(MPIDI_UCX_global.context, region->base, region->size,
                               &region->mem_h, &region->mem_h_owned) != UCS_OK) {
        region->mem_h = NULL;
        region->refused = true;
        return false;
    }
    if (ucp_rkey_pack(MPIDI_UCX_global.context, region->mem_h, &region->rkey_buf,
                      &region->rkey_bytes) != UCS_OK) {
        region->rkey_buf = NULL;
        region->refused = true;
    } else if (region->rkey_bytes > NBRMA_RKEY_MAX_BYTES) {
        ucp_rkey_buffer_release(region->rkey_buf);
        region->rkey_buf = NULL;
        region->refused = true;
    }
    if (region->refused) {
        MPIDI_NBRMA_memory_unmap(MPIDI_UCX_global.context, region->mem_h, region->mem_h_owned);
        region->mem_h = NULL;
        return false;
    }
    dw->num_registered++;
    return true;
}

static void free_region(MPIDI_NBRMA_dynamic_win_t * dw, MPIDI_NBRMA_attached_region_t * region)
{
    unregister_region(dw, region);
    MPL_free(region->sent_to);
    MPL_free(region);
}

/* MPI_Win_detach: the origins that hold the region's rkey drop it. */
int MPIDI_NBRMA_rkey_cache_detach(MPIR_Win * win, const void *base)
{
    int mpi_errno = MPI_SUCCESS;
    MPIDI_NBRMA_dynamic_win_t *dw = MPIDI_NBRMA_dynamic_win(win);
    MPIDI_NBRMA_attached_region_t *region = NULL;

    for (MPIDI_NBRMA_attached_region_t ** link = &dw->attached; *link; link = &(*link)->next) {
        if ((*link)->base == base) {
            region = *link;
            *link = region->next;
            break;
        }
    }
    if (region == NULL)
        goto fn_exit;
    for (int rank = 0; rank < win->comm_ptr->local_size && mpi_errno == MPI_SUCCESS; rank++) {
        nbrma_rkey_msg_t msg = {.generation = region->generation };
        if (region->sent_to[rank])
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
    uint64_t at = (uint64_t) target_disp;

    for (MPIDI_NBRMA_attached_region_t * r = MPIDI_NBRMA_dynamic_win(win)->attached; r;
         r = r->next) {
        uint64_t base = (uint64_t) (uintptr_t) r->base;
        if (at >= base && at - base <= (uint64_t) r->size &&
            len <= (uint64_t) r->size - (at - base)) {
            *addr = (char *) (uintptr_t) at;
            return true;
        }
    }
    return false;
}

static int answer_query(MPIR_Win * win, MPIDI_NBRMA_dynamic_win_t * dw,
                        const nbrma_rkey_msg_t * query)
{
    nbrma_rkey_msg_t reply = {.addr = query->addr };
    nbrma_rkey_msg_kind_t kind = NBRMA_RKEY_NONE;
    const void *rkey = NULL;

    for (MPIDI_NBRMA_attached_region_t * r = MPIDI_NBRMA_rkey_cache_on(dw) ? dw->attached : NULL;
         r; r = r->next) {
        uint64_t base = (uint64_t) (uintptr_t) r->base;
        if (query->addr >= base && query->addr - base < (uint64_t) r->size) {
            if (!register_region(dw, r))
                break;
            kind = NBRMA_RKEY_REPLY;
            reply.base = base;
            reply.size = (uint64_t) r->size;
            reply.generation = r->generation;
            reply.rkey_bytes = (uint16_t) r->rkey_bytes;
            rkey = r->rkey_buf;
            r->sent_to[query->from] = 1;
            break;
        }
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
    MPIDI_NBRMA_cached_rkey_t *c;
    ucs_status_t status;

    for (c = dw->rkeys[target]; c; c = c->next)
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
    c->next = dw->rkeys[target];
    dw->rkeys[target] = c;

  fn_exit:
    return mpi_errno;
  fn_fail:
    goto fn_exit;
}

static void drop_cached_rkey(MPIDI_NBRMA_dynamic_win_t * dw, int target, uint64_t generation)
{
    for (MPIDI_NBRMA_cached_rkey_t ** link = &dw->rkeys[target]; *link; link = &(*link)->next) {
        MPIDI_NBRMA_cached_rkey_t *c = *link;
        if (c->generation != generation)
            continue;
        *link = c->next;
        MPIDI_NBRMA_rdma_retire_rkey(dw, target, c->rkey);
        MPL_free(c);
        break;
    }
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
            dw->rkey_query_pending[msg.from] = false;
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

static MPIDI_NBRMA_cached_rkey_t *find_cached_rkey(MPIDI_NBRMA_dynamic_win_t * dw, int target,
                                                   uint64_t addr, size_t bytes)
{
    for (MPIDI_NBRMA_cached_rkey_t * c = dw->rkeys[target]; c; c = c->next)
        if (addr >= c->base && addr - c->base <= c->size && bytes <= c->size - (addr - c->base))
            return c;
    return NULL;
}

/* Whether `op` may go by RDMA at all (*args, *addr: how), false for
 * MPICH's path. */
static bool rdma_candidate(MPIDI_NBRMA_dynamic_win_t * dw, const MPIDI_NBRMA_rma_op_t * op,
                           MPIR_Win * win, MPIDI_NBRMA_rdma_args_t * args, uint64_t * addr)
{
    int target = op->target_rank;

    if (!MPIDI_NBRMA_rkey_cache_on(dw) || target == MPI_PROC_NULL ||
        target == win->comm_ptr->rank || target < 0 || target >= win->comm_ptr->local_size ||
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
        find_cached_rkey(dw, op->target_rank, addr, args.bytes) != NULL;
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
    MPIDI_NBRMA_cached_rkey_t *c;

    MPIR_FUNC_ENTER;

    if (!rdma_candidate(dw, op, win, &args, &addr))
        goto mpich_path;
    c = find_cached_rkey(dw, target, addr, args.bytes);
    if (c) {
        MPIDIG_RMA_OP_CHECK_SYNC(target, win);
        mpi_errno = MPIDI_NBRMA_rdma_transfer(win, target, c->rkey, &args, addr, op->request);
        MPIR_ERR_CHECK(mpi_errno);
        dw->rdma_ops++;
        goto fn_exit;
    }
    /* Ask on the second miss since the last answer: a window that carries one
     * operation to a target (made and freed around it) would gain nothing from
     * the key and pay a query, a registration and an invalidation. */
    if (!dw->rkey_query_pending[target] && ++dw->rkey_misses[target] >= 2 &&
        MPIDI_NBRMA_rdma_pays(dw, win, target)) {
        nbrma_rkey_msg_t query = {.addr = addr };
        mpi_errno = send_rkey_msg(win, target, &query, NBRMA_RKEY_QUERY, NULL);
        MPIR_ERR_CHECK(mpi_errno);
        dw->rkey_query_pending[target] = true;
        dw->rkey_misses[target] = 0;
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
 * complete at the target joins an endpoint flush (ledger_requests.h). */
int MPIDI_NBRMA_rkey_cache_rma(const MPIDI_NBRMA_rma_op_t * op, MPIR_Win * win)
{
    int mpi_errno = MPIDI_NBRMA_rkey_cache_issue(op, win);

    if (mpi_errno == MPI_SUCCESS)
        mpi_errno = MPIDI_NBRMA_remote_request_wrap(win, op->target_rank, op);
    return mpi_errno;
}

/* The window goes away (MPI_Win_free is collective, so every process does this
 * now): no origin needs to hear of detaches. RDMA is complete already. */
void MPIDI_NBRMA_rkey_cache_free(MPIDI_NBRMA_dynamic_win_t * dw, MPIR_Win * win)
{
    while (dw->attached) {
        MPIDI_NBRMA_attached_region_t *region = dw->attached;
        dw->attached = region->next;
        free_region(dw, region);
    }
    for (int rank = 0; dw->rkeys && rank < win->comm_ptr->local_size; rank++) {
        while (dw->rkeys[rank]) {
            MPIDI_NBRMA_cached_rkey_t *c = dw->rkeys[rank];
            dw->rkeys[rank] = c->next;
            ucp_rkey_destroy(c->rkey);
            MPL_free(c);
        }
    }
    MPL_free(dw->rkeys);
    MPL_free(dw->rkey_query_pending);
    MPL_free(dw->rkey_misses);
}
