/*
 * mpich-nbrma: gathering a ledger wait's parts (ledger_adapter.h): endpoint
 * flushes, started and numbered as asked for, and outside parts, checked at
 * once; owns the shared state (ledger_state.h). Runs under MPICH's global
 * critical section; UCX calls take the VCI lock as the UCX netmod does.
 */

#include "mpidimpl.h"
#include "ucx_impl.h"
#include "nbrma_ledger_state.h"
#include "nbrma_completion.h"

MPIDI_NBRMA_ledger_state_t MPIDI_NBRMA_ledger_state;

SLOW_PATH int MPIDI_NBRMA_ledger_make(void)
{
    int mpi_errno = MPI_SUCCESS;
    nbrma_ledger **ledger = &MPIDI_NBRMA_ledger_state.ledger;

    if (*ledger)
        goto fn_exit;
    *ledger = nbrma_ledger_create();
    MPIR_ERR_CHKANDJUMP(*ledger == NULL, mpi_errno, MPI_ERR_NO_MEM, "**nomem");
  fn_exit:
    return mpi_errno;
  fn_fail:
    goto fn_exit;
}

void MPIDI_NBRMA_ledger_wait_init(MPIDI_NBRMA_ledger_wait_t * w, MPIR_Win * win)
{
    /* puts this CPU copied into mapped memory need no endpoint flush (R9):
     * their stores go before what this process stores once the wait is over
     * (a flush's or a sweep's notices), as UCX's shared-memory flush orders */
    __atomic_thread_fence(__ATOMIC_RELEASE);
    *w = (MPIDI_NBRMA_ledger_wait_t) {
    .win = win,.vni = MPIDI_UCX_get_win_vni(win)};
}

/* The ledger's peer for window rank `rank`: its UCX endpoint on `vni`. */
static nbrma_peer_key peer_of(MPIR_Win * win, int rank, int vni)
{
    return (nbrma_peer_key) MPIDI_UCX_WIN_TO_EP(win, rank, vni);
}

int MPIDI_NBRMA_ledger_need_endpoint(MPIDI_NBRMA_ledger_wait_t * w, int rank, bool always)
{
    MPIDI_NBRMA_ledger_state_t *ls = &MPIDI_NBRMA_ledger_state;
    int mpi_errno = MPI_SUCCESS;
    MPIR_Win *win = w->win;
    nbrma_peer_key peer;
    ucp_request_param_t param = { 0 };
    ucs_status_ptr_t status_ptr;
    int flush_errno = MPI_SUCCESS;

    /* windows without UCX RDMA of MPICH's (no info_table) only use active
     * messages, unless the component issued RDMA on them */
    if (!always && (MPIDI_UCX_WIN(win).info_table == NULL ||
                    !MPIDI_UCX_is_reachable_target(rank, win, MPIDI_WIN(win, winattr))))
        goto fn_exit;
    if (ls->ledger == NULL) {
        mpi_errno = MPIDI_NBRMA_ledger_make();
        MPIR_ERR_CHECK(mpi_errno);
    }
    peer = peer_of(win, rank, w->vni);
    MPID_THREAD_CS_ENTER(VCI, MPIDI_VCI(w->vni).lock);
    status_ptr = ucp_ep_flush_nbx((ucp_ep_h) peer, &param);
    MPID_THREAD_CS_EXIT(VCI, MPIDI_VCI(w->vni).lock);
    if (UCS_PTR_IS_ERR(status_ptr)) {
        /* the wait completes with this error, as after any failed part */
        MPIR_ERR_SET(flush_errno, MPI_ERR_OTHER, "**ucx_nm_status");
        MPIDI_NBRMA_ledger_first_error(w, flush_errno);
        status_ptr = NULL;
    }
    /* numbered now (rule W5) */
    if (nbrma_waits_flush_began(&ls->waits, ls->ledger, &ls->flights, &w->open, peer, status_ptr,
                                w->vni, flush_errno) != NBRMA_OK) {
        if (status_ptr) {       /* cannot be waited for: let it go on inside UCX */
            MPID_THREAD_CS_ENTER(VCI, MPIDI_VCI(w->vni).lock);
            ucp_request_free(status_ptr);
            MPID_THREAD_CS_EXIT(VCI, MPIDI_VCI(w->vni).lock);
        }
        MPIR_ERR_SETANDJUMP(mpi_errno, MPI_ERR_NO_MEM, "**nomem");
    }

  fn_exit:
    return mpi_errno;
  fn_fail:
    MPIDI_NBRMA_ledger_first_error(w, mpi_errno);
    goto fn_exit;
}

bool MPIDI_NBRMA_ledger_open_flush(const MPIDI_NBRMA_ledger_wait_t * w, int rank, uint64_t * seq)
{
    nbrma_peer_key peer = peer_of(w->win, rank, w->vni);

    for (size_t i = 0; i < w->open.n; i++)
        if (w->open.v[i].peer == peer) {
            *seq = w->open.v[i].seq;
            return true;
        }
    return false;
}

bool MPIDI_NBRMA_ledger_flush_succeeded(MPIR_Win * win, int rank, uint64_t seq)
{
    nbrma_ledger *ledger = MPIDI_NBRMA_ledger_state.ledger;
    int error = 0;

    return ledger &&
        nbrma_ledger_flush_done(ledger, peer_of(win, rank, MPIDI_UCX_get_win_vni(win)), seq,
                                &error) && error == 0;
}

static int add_part(MPIDI_NBRMA_ledger_wait_t * w, MPIR_Request * req, int rank, bool local)
{
    int mpi_errno = MPI_SUCCESS;

    if (nbrma_outside_parts_add(&w->parts, req, rank, local) != NBRMA_OK) {
        MPIR_ERR_SET(mpi_errno, MPI_ERR_NO_MEM, "**nomem");
        MPIDI_NBRMA_ledger_first_error(w, mpi_errno);
    }
    return mpi_errno;
}

int MPIDI_NBRMA_ledger_need_am(MPIDI_NBRMA_ledger_wait_t * w, int rank, bool local)
{
    const MPIDIG_win_target_t *t;
    int mpi_errno;

    if (rank == NBRMA_ALL_RANKS)
        return MPIDI_NBRMA_am_ops_complete(w->win, rank, local) ? MPI_SUCCESS :
            add_part(w, NULL, rank, local);
    t = MPIDIG_win_target_find(w->win, rank);
    if (MPIDI_NBRMA_am_target_complete(t, local))
        return MPI_SUCCESS;
    mpi_errno = add_part(w, NULL, rank, local);
    if (mpi_errno == MPI_SUCCESS)
        w->am_target = t;
    return mpi_errno;
}

int MPIDI_NBRMA_ledger_need_request(MPIDI_NBRMA_ledger_wait_t * w, MPIR_Request * op_req)
{
    return add_part(w, op_req, 0, false);
}
