/*
 * mpich-nbrma: request-based notification (notify.h).
 */

#include "mpidimpl.h"
#include "nbrma_win.h"
#include "nbrma_am.h"
#include "nbrma_array.h"
#include "nbrma_progress.h"
#include "nbrma_request.h"
#include "notify.h"
#include "notify_wire.h"

/* --- the origin: notifications waiting for their operation ---------------- */

typedef struct pending_notify {
    MPIR_Win *win;
    int target;
    int notify_id;
    MPIR_Request *data_req;
    struct pending_notify *next;
} pending_notify_t;

static pending_notify_t *pending;       /* newest first */
static int handler_id = -1;

static int poll_pending(int *made_progress);
static MPIDI_NBRMA_poller_t pending_poller = {.poll = poll_pending };

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

/* Sends the notification if its operation completed; true when it is done
 * with (sent, or dropped with its failed operation). */
static bool try_send(pending_notify_t * p, int *mpi_errno)
{
    nbrma_notify_msg_t msg;

    *mpi_errno = MPI_SUCCESS;
    if (!MPIR_Request_is_complete(p->data_req))
        return false;
    /* an operation that failed reported its error to no one: the
     * notification would claim data that is not there */
    if (p->data_req->status.MPI_ERROR == MPI_SUCCESS) {
        nbrma_notify_encode(&msg, MPIDIG_WIN(p->win, win_id), p->notify_id);
        *mpi_errno = MPIDI_NBRMA_am_send(p->win, p->target, handler_id, &msg, sizeof(msg));
    }
    MPIR_Request_free(p->data_req);
    return true;
}

/* Sends what can go, of `win` only or (NULL) of every window. */
static int send_completed(MPIR_Win * win, int *made_progress)
{
    int mpi_errno = MPI_SUCCESS;

    for (pending_notify_t ** link = &pending; *link && mpi_errno == MPI_SUCCESS;) {
        pending_notify_t *p = *link;

        if ((win && p->win != win) || !try_send(p, &mpi_errno)) {
            link = &p->next;
            continue;
        }
        *link = p->next;
        MPL_free(p);
        if (made_progress)
            *made_progress = 1;
    }
    return mpi_errno;
}

static int poll_pending(int *made_progress)
{
    int mpi_errno = send_completed(NULL, made_progress);

    if (mpi_errno == MPI_SUCCESS && pending == NULL)
        mpi_errno = MPIDI_NBRMA_poller_sleep(&pending_poller);
    return mpi_errno;
}

int MPIDI_NBRMA_notify_after(MPIR_Win * win, int target, int notify_id, MPIR_Request * data_req)
{
    int mpi_errno = MPI_SUCCESS;
    pending_notify_t *p = MPL_malloc(sizeof(*p), MPL_MEM_RMA);

    MPIR_ERR_CHKANDJUMP(p == NULL, mpi_errno, MPI_ERR_NO_MEM, "**nomem");
    *p = (pending_notify_t) {.win = win,.target = target,.notify_id = notify_id,
        .data_req = data_req,.next = pending
    };
    /* complete already (shared memory, a local target): no poller round */
    if (try_send(p, &mpi_errno)) {
        MPL_free(p);
        goto fn_exit;
    }
    pending = p;
    mpi_errno = MPIDI_NBRMA_poller_wake(&pending_poller);

  fn_exit:
    return mpi_errno;
  fn_fail:
    MPIR_Request_free(data_req);
    goto fn_exit;
}

static bool pending_on(MPIR_Win * win)
{
    for (pending_notify_t * p = pending; p; p = p->next)
        if (p->win == win)
            return true;
    return false;
}

int MPIDI_NBRMA_notify_settle(MPIR_Win * win)
{
    int mpi_errno = MPI_SUCCESS;
    notify_window_t *nw;

    while (pending_on(win)) {
        mpi_errno = send_completed(win, NULL);
        MPIR_ERR_CHECK(mpi_errno);
        if (pending_on(win)) {
            mpi_errno = MPIDI_NBRMA_progress_blocking_round();
            MPIR_ERR_CHECK(mpi_errno);
        }
    }
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
