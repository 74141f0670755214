/*
 * mpich-nbrma: request-based notification (notify.h).
 */

#include "mpidimpl.h"
#include "nbrma_win.h"
#include "nbrma_am.h"
#include "nbrma_array.h"
#include "nbrma_ledger_adapter.h"
#include "nbrma_request.h"
#include "notify.h"
#include "notify_wire.h"

/* --- the origin: notifications waiting for their operation ---------------- */

/* A notification to send once its operation completed (a ledger wait). */
typedef struct {
    MPIR_Win *win;
    int target;
    int notify_id;
} outgoing_notify_t;

static int handler_id = -1;

/* --- the target: arrivals and waits per window and id --------------------- */

typedef struct {
    int notify_id;
    uint64_t arrived;           /* not yet taken by a wait */
    MPIR_Request **waits;       /* unmatched, oldest first */
    size_t n_waits, cap_waits;
} notify_count_t;

typedef struct notify_window {
    MPIR_Win *win;
    notify_count_t *counts;
    size_t n_counts, cap_counts;
    struct notify_window *next;
} notify_window_t;

static notify_window_t *windows;

bool MPIDI_NBRMA_notify_possible(MPIR_Win * win)
{
    return !MPIDI_NBRMA_win_ops(win)->local_free;
}

/* *c: the count of `notify_id` on `win`, made at its first use. */
static int count_of(MPIR_Win * win, int notify_id, notify_count_t ** c)
{
    int mpi_errno = MPI_SUCCESS;
    notify_window_t *nw;

    for (nw = windows; nw && nw->win != win; nw = nw->next);
    if (nw == NULL) {
        nw = MPL_calloc(1, sizeof(*nw), MPL_MEM_RMA);
        MPIR_ERR_CHKANDJUMP(nw == NULL, mpi_errno, MPI_ERR_NO_MEM, "**nomem");
        nw->win = win;
        nw->next = windows;
        windows = nw;
    }
    for (size_t i = 0; i < nw->n_counts; i++)
        if (nw->counts[i].notify_id == notify_id) {
            *c = &nw->counts[i];
            goto fn_exit;
        }
    mpi_errno = MPIDI_NBRMA_reserve_one((void **) &nw->counts, nw->n_counts, &nw->cap_counts,
                                        sizeof(*nw->counts), 4);
    MPIR_ERR_CHECK(mpi_errno);
    nw->counts[nw->n_counts] = (notify_count_t) {.notify_id = notify_id };
    *c = &nw->counts[nw->n_counts++];

  fn_exit:
    return mpi_errno;
  fn_fail:
    goto fn_exit;
}

/* Arrivals meet waits, oldest first. */
static void match(notify_count_t * c)
{
    size_t n = 0;

    while (c->arrived > 0 && n < c->n_waits) {
        c->arrived--;
        MPID_Request_complete(c->waits[n++]);
    }
    c->n_waits -= n;
    memmove(c->waits, c->waits + n, c->n_waits * sizeof(*c->waits));
}

static int notify_target_msg_cb(void *am_hdr, void *data, MPI_Aint data_sz, uint32_t attr,
                                MPIR_Request ** req)
{
    int mpi_errno = MPI_SUCCESS;
    nbrma_notify_msg_t msg;
    MPIR_Win *win;
    notify_count_t *c;

    (void) data;
    (void) data_sz;
    /* the window first: that settles the handler's request either way */
    memcpy(&msg, am_hdr, sizeof(msg));
    win = MPIDI_NBRMA_am_window(msg.win_id, attr, req);
    MPIR_ERR_CHKANDJUMP1(nbrma_notify_decode(am_hdr, sizeof(msg), &msg) != 0, mpi_errno,
                         MPI_ERR_INTERN, "**nbrmaengine", "**nbrmaengine %s",
                         "malformed notification");
    if (win == NULL)
        goto fn_exit;   /* freed here before the notification came: nobody waits */
    mpi_errno = count_of(win, msg.notify_id, &c);
    MPIR_ERR_CHECK(mpi_errno);
    c->arrived++;
    match(c);

  fn_exit:
    return mpi_errno;
  fn_fail:
    goto fn_exit;
}

int MPIDI_NBRMA_notify_register_handlers(void)
{
    return MPIDI_NBRMA_am_register(notify_target_msg_cb, &handler_id);
}

int MPIDI_NBRMA_notify_wait(MPIR_Win * win, int notify_id, MPIR_Request ** request)
{
    int mpi_errno = MPI_SUCCESS;
    notify_count_t *c;
    MPIR_Request *req = NULL;

    mpi_errno = count_of(win, notify_id, &c);
    MPIR_ERR_CHECK(mpi_errno);
    mpi_errno = MPIDI_NBRMA_reserve_one((void **) &c->waits, c->n_waits, &c->cap_waits,
                                        sizeof(*c->waits), 4);
    MPIR_ERR_CHECK(mpi_errno);
    mpi_errno = MPIDI_NBRMA_request_create(&req);
    MPIR_ERR_CHECK(mpi_errno);
    c->waits[c->n_waits++] = req;
    match(c);
    *request = req;

  fn_exit:
    return mpi_errno;
  fn_fail:
    goto fn_exit;
}

/* The notification's operation completed: it goes, unless the operation
 * failed (which it reported to no one: the notification would claim data
 * that is not there). */
static int send_notification(void *arg, int error)
{
    outgoing_notify_t *n = arg;
    nbrma_notify_msg_t msg;
    int mpi_errno = MPI_SUCCESS;

    if (error == MPI_SUCCESS) {
        nbrma_notify_encode(&msg, MPIDIG_WIN(n->win, win_id), n->notify_id);
        mpi_errno = MPIDI_NBRMA_am_send(n->win, n->target, handler_id, &msg, sizeof(msg));
    }
    MPL_free(n);
    return mpi_errno;
}

int MPIDI_NBRMA_notify_after(MPIR_Win * win, int target, int notify_id, MPIR_Request * data_req)
{
    int mpi_errno = MPI_SUCCESS;
    outgoing_notify_t *n = MPL_malloc(sizeof(*n), MPL_MEM_RMA);
    MPIDI_NBRMA_ledger_wait_t wait;

    MPIR_ERR_CHKANDJUMP(n == NULL, mpi_errno, MPI_ERR_NO_MEM, "**nomem");
    *n = (outgoing_notify_t) {
    .win = win,.target = target,.notify_id = notify_id};
    /* complete already (shared memory, a local target): sent at once */
    MPIDI_NBRMA_ledger_wait_init(&wait, win);
    mpi_errno = MPIDI_NBRMA_ledger_need_request(&wait, data_req);
    if (mpi_errno != MPI_SUCCESS) {
        MPIDI_NBRMA_ledger_cancel(&wait);
        MPIR_ERR_CHECK(mpi_errno);
    }
    mpi_errno = MPIDI_NBRMA_ledger_call_back(&wait, send_notification, n);

  fn_exit:
    return mpi_errno;
  fn_fail:
    MPL_free(n);
    MPIR_Request_free(data_req);
    goto fn_exit;
}

int MPIDI_NBRMA_notify_forget_window(MPIR_Win * win)
{
    int mpi_errno = MPI_SUCCESS;
    notify_window_t *nw;

    /* the notifications this process still sends on `win` went with the
     * ledger's waits, which MPI_Win_free settled first */
    for (notify_window_t ** link = &windows; (nw = *link) != NULL; link = &nw->next) {
        if (nw->win != win)
            continue;
        *link = nw->next;
        for (size_t i = 0; i < nw->n_counts; i++) {
            for (size_t w = 0; w < nw->counts[i].n_waits; w++) {
                MPIR_Request *req = nw->counts[i].waits[w];
                MPIR_ERR_SET(req->status.MPI_ERROR, MPI_ERR_WIN, "**nbrmanotifyfreed");
                MPID_Request_complete(req);
            }
            MPL_free(nw->counts[i].waits);
        }
        MPL_free(nw->counts);
        MPL_free(nw);
        break;
    }

  fn_exit:
    return mpi_errno;
  fn_fail:
    goto fn_exit;
}
