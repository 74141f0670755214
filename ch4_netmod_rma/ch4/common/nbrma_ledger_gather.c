/*
 * mpich-nbrma: gathering what a wait of the completion ledger needs
 * (ledger_adapter.h): its endpoint flushes, started and numbered by the ledger
 * as they are asked for, and its outside parts (MPIDIG's counters, an
 * operation's request), checked at once. Only what is still open stays in
 * the wait; ledger_adapter.c registers that with the ledger and polls it.
 * This file also owns the state both share (ledger_state.h). Runs under
 * MPICH's global critical section; UCX calls take the VCI lock as the UCX
 * netmod does.
 */

#include "mpidimpl.h"
#include "ucx_impl.h"
#include "nbrma_ledger_state.h"
#include "nbrma_array.h"
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
    *w = (MPIDI_NBRMA_ledger_wait_t) {
    .win = win,.vni = MPIDI_UCX_get_win_vni(win)};
}

/* The list of open flushes of the last wait that had one, kept for the
 * next: a blocking flush that waits (toward a target that UCX reaches by
 * emulated RDMA, a create window's) then allocates nothing. Like the ledger,
 * it lives as long as the process. */
static struct MPIDI_NBRMA_open_flush *spare_open;
static size_t spare_open_cap;

void MPIDI_NBRMA_ledger_cancel(MPIDI_NBRMA_ledger_wait_t * w)
{
    if (w->open && spare_open == NULL && w->cap_open <= 16) {
        spare_open = w->open;
        spare_open_cap = w->cap_open;
    } else {
        MPL_free(w->open);
    }
    MPL_free(w->parts);
}

/* Room for one more flush in flight, in the wait and in the process's list. */
static SLOW_PATH int room_for_flush(MPIDI_NBRMA_ledger_wait_t * w)
{
    MPIDI_NBRMA_ledger_state_t *ls = &MPIDI_NBRMA_ledger_state;
    int mpi_errno = MPIDI_NBRMA_reserve_one((void **) &ls->flushes, ls->n_flushes,
                                            &ls->flushes_room, sizeof(*ls->flushes), 16);

    if (w->open == NULL && spare_open) {
        w->open = spare_open;
        w->cap_open = spare_open_cap;
        spare_open = NULL;
    }
    if (mpi_errno == MPI_SUCCESS)
        mpi_errno = MPIDI_NBRMA_reserve_one((void **) &w->open, w->n_open, &w->cap_open,
                                            sizeof(*w->open), 4);
    return mpi_errno;
}

int MPIDI_NBRMA_ledger_need_endpoint(MPIDI_NBRMA_ledger_wait_t * w, int rank, bool always)
{
    MPIDI_NBRMA_ledger_state_t *ls = &MPIDI_NBRMA_ledger_state;
    int mpi_errno = MPI_SUCCESS;
    MPIR_Win *win = w->win;
    nbrma_peer_key peer;
    ucp_request_param_t param = { 0 };
    ucs_status_ptr_t status_ptr;
    uint64_t seq;
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
    peer = (nbrma_peer_key) MPIDI_UCX_WIN_TO_EP(win, rank, w->vni);
    MPID_THREAD_CS_ENTER(VCI, MPIDI_VCI(w->vni).lock);
    status_ptr = ucp_ep_flush_nbx((ucp_ep_h) peer, &param);
    MPID_THREAD_CS_EXIT(VCI, MPIDI_VCI(w->vni).lock);
    if (UCS_PTR_IS_ERR(status_ptr)) {
        /* the wait completes with this error, as after any failed part */
        MPIR_ERR_SET(flush_errno, MPI_ERR_OTHER, "**ucx_nm_status");
        MPIDI_NBRMA_ledger_first_error(w, flush_errno);
        status_ptr = NULL;
    }
    /* Numbered now, before any other flush starts: the same order as at
     * its start. One that finished at once while nothing is registered can
     * release nobody, and needs no number (a blocking flush on shared
     * memory then makes no ledger call). */
    if (status_ptr == NULL && ls->waits == NULL)
        goto fn_exit;
    if ((status_ptr && (ls->n_flushes == ls->flushes_room || w->n_open == w->cap_open) &&
         room_for_flush(w) != MPI_SUCCESS) || !nbrma_ledger_start_flush(ls->ledger, peer, &seq)) {
        if (status_ptr) {       /* cannot be waited for: let it go on inside UCX */
            MPID_THREAD_CS_ENTER(VCI, MPIDI_VCI(w->vni).lock);
            ucp_request_free(status_ptr);
            MPID_THREAD_CS_EXIT(VCI, MPIDI_VCI(w->vni).lock);
        }
        MPIR_ERR_SETANDJUMP(mpi_errno, MPI_ERR_NO_MEM, "**nomem");
    }
    if (status_ptr == NULL) {
        nbrma_ledger_flush_finished(ls->ledger, peer, seq, flush_errno);
        goto fn_exit;
    }
    ls->flushes[ls->n_flushes++] = (MPIDI_NBRMA_flush_in_flight_t) {
    .peer = peer,.seq = seq,.ucx_req = status_ptr,.vni = w->vni};
    w->open[w->n_open++] = (struct MPIDI_NBRMA_open_flush) {
    .peer = peer,.seq = seq};

  fn_exit:
    return mpi_errno;
  fn_fail:
    MPIDI_NBRMA_ledger_first_error(w, mpi_errno);
    goto fn_exit;
}

static int add_part(MPIDI_NBRMA_ledger_wait_t * w, MPIDI_NBRMA_outside_part_t part)
{
    int mpi_errno = MPIDI_NBRMA_reserve_one((void **) &w->parts, w->n_parts, &w->cap_parts,
                                            sizeof(*w->parts), 2);

    if (mpi_errno == MPI_SUCCESS)
        w->parts[w->n_parts++] = part;
    else
        MPIDI_NBRMA_ledger_first_error(w, mpi_errno);
    return mpi_errno;
}

int MPIDI_NBRMA_ledger_need_am(MPIDI_NBRMA_ledger_wait_t * w, int rank, bool local)
{
    if (MPIDI_NBRMA_am_ops_complete(w->win, rank, local))
        return MPI_SUCCESS;
    return add_part(w, (MPIDI_NBRMA_outside_part_t) {
                    .rank = rank,.local = local});
}

int MPIDI_NBRMA_ledger_need_request(MPIDI_NBRMA_ledger_wait_t * w, MPIR_Request * op_req)
{
    return add_part(w, (MPIDI_NBRMA_outside_part_t) {
                    .req = op_req});
}

bool MPIDI_NBRMA_ledger_flushes_finished(MPIDI_NBRMA_ledger_wait_t * w)
{
    MPIDI_NBRMA_ledger_state_t *ls = &MPIDI_NBRMA_ledger_state;

    while (w->n_open > 0) {
        const struct MPIDI_NBRMA_open_flush *f = &w->open[w->n_open - 1];
        int error;

        if (!nbrma_ledger_flush_done(ls->ledger, f->peer, f->seq, &error))
            return false;
        MPIDI_NBRMA_ledger_first_error(w, error);
        w->n_open--;
    }
    return true;
}
