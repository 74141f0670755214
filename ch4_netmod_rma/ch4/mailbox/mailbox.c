/*
 * mpich-nbrma: a window's mailboxes (mailbox.h): allocation and exchange at
 * creation, sending by stores into a peer's mapped mailbox, and the poller
 * that reads this process's mailboxes.
 */

#include "mpidimpl.h"
#include "ucx_impl.h"
#include "mailbox.h"
#include "mailbox_memory.h"
#include "nbrma_progress.h"
#include "ucx_memory.h"
#include "cross_memory.h"
#include "nbrma_key_exchange.h"

/* What each process publishes at creation; rkey_bytes 0: no mailbox. With
 * the mailbox goes the process's identity for cross-memory reads, and the
 * bits of the window's settings every process must agree on. */
typedef struct {
    uint64_t addr;
    uint64_t rkey_bytes;
    nbrma_cross_memory_id_t cross_memory_id;
    uint64_t agree_bits;
} published_t;

typedef struct {
    nbrma_mailbox_t *box;       /* the peer's mailbox, mapped here; NULL: none */
    MPIDI_NBRMA_mailbox_mapping_t *mapping;     /* keeps it mapped (mailbox_memory.c) */
    nbrma_ring_sender_t sender;
    uint64_t readable_pid;      /* its memory is readable with that pid; 0: not */
} peer_t;

struct MPIDI_NBRMA_mailbox {
    nbrma_mailbox_t *mine;
    int my_rank, nprocs, n_mapped, n_readable;
    int nrings;                 /* processes of this node (nbrma_mailbox_rings) */
    int *ring_of;               /* [nprocs]: a rank's ring on this node, -1: none */
    int *rank_of_ring;          /* [nrings] */
    uint64_t doorbell_seen;
    peer_t *peers;              /* [nrings], by ring */
    MPIDI_NBRMA_mailbox_deliver_t deliver;
    void *ctx;
    struct MPIDI_NBRMA_mailbox *next;   /* in the poller's list */
};

static MPIDI_NBRMA_mailbox_t *boxes;

static int poll_boxes(int *made_progress);

static MPIDI_NBRMA_poller_t box_poller = {.poll = poll_boxes };

/* Reads the rings of `box` if its doorbell moved. */
static int poll_box(MPIDI_NBRMA_mailbox_t * box, int *made_progress)
{
    int mpi_errno = MPI_SUCCESS;
    uint64_t bell = nbrma_mailbox_doorbell(box->mine);

    if (bell == box->doorbell_seen)
        return MPI_SUCCESS;
    box->doorbell_seen = bell;
    for (int ring = 0; ring < box->nrings; ring++) {
        nbrma_ring_msg_t msg;
        int rc;

        while ((rc = nbrma_ring_receive(&box->mine->ring[ring], &msg)) == NBRMA_RING_MESSAGE) {
            if (made_progress)
                *made_progress = 1;
            mpi_errno = box->deliver(box->ctx, box->rank_of_ring[ring], &msg);
            MPIR_ERR_CHECK(mpi_errno);
        }
        MPIR_ERR_CHKANDJUMP1(rc == NBRMA_RING_MALFORMED, mpi_errno, MPI_ERR_INTERN,
                             "**nbrmaengine", "**nbrmaengine %s",
                             "malformed message in a window's mailbox");
    }
  fn_exit:
    return mpi_errno;
  fn_fail:
    goto fn_exit;
}

static int poll_boxes(int *made_progress)
{
    int mpi_errno = MPI_SUCCESS;

    for (MPIDI_NBRMA_mailbox_t * box = boxes; box && mpi_errno == MPI_SUCCESS;) {
        /* delivering may not free a window, but keep the next one first */
        MPIDI_NBRMA_mailbox_t *next = box->next;
        mpi_errno = poll_box(box, made_progress);
        box = next;
    }
    return mpi_errno;
}

/* My address and packed key, or nothing (rkey_bytes 0). */
static void publish(MPIDI_NBRMA_mailbox_t * box, published_t * pub, void **rkey_buf)
{
    ucp_mem_h mem_h;
    size_t bytes = 0;

    *rkey_buf = NULL;
    pub->addr = (uint64_t) (uintptr_t) box->mine;
    pub->rkey_bytes = 0;
    nbrma_cross_memory_self(&pub->cross_memory_id);
    if (MPIDI_NBRMA_memory_find(box->mine, nbrma_mailbox_bytes(box->nrings), &mem_h) &&
        ucp_rkey_pack(MPIDI_UCX_global.context, mem_h, rkey_buf, &bytes) == UCS_OK)
        pub->rkey_bytes = bytes;
}

/* Maps `peer`'s mailbox where UCX gives a pointer to it. */
static void map_peer(MPIDI_NBRMA_mailbox_t * box, MPIR_Win * win, int peer,
                     const published_t * pub, const void *rkey_buf)
{
    int vni = MPIDI_UCX_get_win_vni(win);
    MPIDI_NBRMA_mailbox_mapping_t *mapping;
    peer_t *p;
    void *ptr;

    /* a peer of another node has no ring in my mailbox, nor I in its */
    if (pub->rkey_bytes == 0 || peer == box->my_rank || box->ring_of[peer] < 0)
        return;
    mapping = MPIDI_NBRMA_mailbox_map(MPIDI_UCX_WIN_TO_EP(win, peer, vni), pub->addr, rkey_buf,
                                      pub->rkey_bytes, &ptr);
    if (mapping == NULL)
        return;
    p = &box->peers[box->ring_of[peer]];
    p->box = ptr;
    p->mapping = mapping;
    box->n_mapped++;
    /* only for peers on this host: a pid means nothing elsewhere */
    if (nbrma_cross_memory_reaches(&pub->cross_memory_id)) {
        p->readable_pid = pub->cross_memory_id.pid;
        box->n_readable++;
    }
}

/* Everybody's address and key (key_exchange.h), and the AND of everybody's
 * *agreed. */
static int exchange(MPIDI_NBRMA_mailbox_t * box, MPIR_Win * win, unsigned *agreed)
{
    int mpi_errno = MPI_SUCCESS;
    MPIR_Comm *comm = win->comm_ptr;
    published_t mine = { 0 }, *all = NULL;       /* nothing to publish without a box */
    void *rkey_buf = NULL;
    char *keys = NULL;
    size_t stride;

    if (box)
        publish(box, &mine, &rkey_buf);
    mine.agree_bits = agreed ? *agreed : 0;
    all = MPL_malloc(comm->local_size * sizeof(*all), MPL_MEM_RMA);
    MPIR_ERR_CHKANDJUMP(all == NULL, mpi_errno, MPI_ERR_NO_MEM, "**nomem");
    mpi_errno = MPIDI_NBRMA_exchange_keys(comm, &mine, sizeof(mine), all,
                                          offsetof(published_t, rkey_bytes), rkey_buf, &keys,
                                          &stride);
    MPIR_ERR_CHECK(mpi_errno);
    for (int r = 0; r < comm->local_size; r++) {
        if (agreed)
            *agreed &= (unsigned) all[r].agree_bits;
        if (box)
            map_peer(box, win, r, &all[r], keys + (size_t) r * stride);
    }

  fn_exit:
    if (rkey_buf)
        ucp_rkey_buffer_release(rkey_buf);
    MPL_free(all);
    MPL_free(keys);
    return mpi_errno;
  fn_fail:
    if (agreed)
        *agreed = 0;
    goto fn_exit;
}

/* The rings of this node's mailboxes (nbrma_mailbox_rings), from MPICH's
 * node ids. */
static int find_rings(MPIDI_NBRMA_mailbox_t * box, MPIR_Comm * comm)
{
    int mpi_errno = MPI_SUCCESS;
    int *node_of = NULL;

    node_of = MPL_malloc(box->nprocs * sizeof(int), MPL_MEM_RMA);
    box->ring_of = MPL_malloc(box->nprocs * sizeof(int), MPL_MEM_RMA);
    MPIR_ERR_CHKANDJUMP(node_of == NULL || box->ring_of == NULL, mpi_errno, MPI_ERR_NO_MEM,
                        "**nomem");
    for (int r = 0; r < box->nprocs; r++) {
        mpi_errno = MPID_Get_node_id(comm, r, &node_of[r]);
        MPIR_ERR_CHECK(mpi_errno);
    }
    box->nrings = nbrma_mailbox_rings(node_of, box->nprocs, node_of[box->my_rank], box->ring_of);
    box->rank_of_ring = MPL_malloc(box->nrings * sizeof(int), MPL_MEM_RMA);
    box->peers = MPL_calloc(box->nrings, sizeof(*box->peers), MPL_MEM_RMA);
    MPIR_ERR_CHKANDJUMP(box->rank_of_ring == NULL || box->peers == NULL, mpi_errno,
                        MPI_ERR_NO_MEM, "**nomem");
    for (int r = 0; r < box->nprocs; r++)
        if (box->ring_of[r] >= 0)
            box->rank_of_ring[box->ring_of[r]] = r;

  fn_exit:
    MPL_free(node_of);
    return mpi_errno;
  fn_fail:
    goto fn_exit;
}

int MPIDI_NBRMA_mailbox_create(MPIR_Win * win, bool wanted, MPIDI_NBRMA_mailbox_deliver_t deliver,
                               void *ctx, unsigned *agreed, MPIDI_NBRMA_mailbox_t ** box_out)
{
    int mpi_errno = MPI_SUCCESS;
    int nprocs = win->comm_ptr->local_size;
    MPIDI_NBRMA_mailbox_t *box = NULL;

    *box_out = NULL;
    if (wanted) {
        box = MPL_calloc(1, sizeof(*box), MPL_MEM_RMA);
        MPIR_ERR_CHKANDJUMP(box == NULL, mpi_errno, MPI_ERR_NO_MEM, "**nomem");
        box->my_rank = win->comm_ptr->rank;
        box->nprocs = nprocs;
        box->deliver = deliver;
        box->ctx = ctx;
        mpi_errno = find_rings(box, win->comm_ptr);
        MPIR_ERR_CHECK(mpi_errno);
        box->mine = MPIDI_NBRMA_mailbox_segment_get(nbrma_mailbox_bytes(box->nrings));
        if (box->mine == NULL) {        /* not UCX memory: active messages only */
            MPIDI_NBRMA_mailbox_free(box);
            box = NULL;
        } else {
            memset(box->mine, 0, nbrma_mailbox_bytes(box->nrings));
        }
    }
    mpi_errno = exchange(box, win, agreed);     /* collective: also without a mailbox */
    MPIR_ERR_CHECK(mpi_errno);
    if (box) {
        box->next = boxes;
        boxes = box;
        mpi_errno = MPIDI_NBRMA_poller_wake(&box_poller);
        MPIR_ERR_CHECK(mpi_errno);
        *box_out = box;
    }

  fn_exit:
    return mpi_errno;
  fn_fail:
    if (box && *box_out == NULL)
        MPIDI_NBRMA_mailbox_free(box);
    goto fn_exit;
}

void MPIDI_NBRMA_mailbox_free(MPIDI_NBRMA_mailbox_t * box)
{
    for (MPIDI_NBRMA_mailbox_t ** link = &boxes; *link; link = &(*link)->next) {
        if (*link == box) {
            *link = box->next;
            break;
        }
    }
    if (boxes == NULL)
        MPIDI_NBRMA_poller_sleep(&box_poller);
    for (int ring = 0; box->peers && ring < box->nrings; ring++)
        if (box->peers[ring].mapping)
            MPIDI_NBRMA_mailbox_unmap(box->peers[ring].mapping);
    /* a peer that still maps it keeps the pages until it unmaps them */
    if (box->mine)
        MPIDI_NBRMA_mailbox_segment_put(box->mine, nbrma_mailbox_bytes(box->nrings));
    MPL_free(box->peers);
    MPL_free(box->rank_of_ring);
    MPL_free(box->ring_of);
    MPL_free(box);
}

/* `peer` (not me) where its mailbox is mapped here, or NULL. */
static peer_t *mapped(const MPIDI_NBRMA_mailbox_t * box, int peer)
{
    peer_t *p;

    if (box == NULL || box->ring_of[peer] < 0)
        return NULL;
    p = &box->peers[box->ring_of[peer]];
    return p->box ? p : NULL;
}

bool MPIDI_NBRMA_mailbox_send(MPIDI_NBRMA_mailbox_t * box, int peer, const nbrma_ring_msg_t * msg)
{
    peer_t *p = mapped(box, peer);

    if (p == NULL)
        return false;
    return nbrma_ring_send(p->box, &p->box->ring[box->ring_of[box->my_rank]], &p->sender, msg);
}

uint64_t *MPIDI_NBRMA_mailbox_lock_word(MPIDI_NBRMA_mailbox_t * box, int peer)
{
    peer_t *p;

    if (box == NULL)
        return NULL;
    if (peer == box->my_rank)
        return &box->mine->lock;
    p = mapped(box, peer);
    return p ? &p->box->lock : NULL;
}

int MPIDI_NBRMA_mailbox_poll(MPIDI_NBRMA_mailbox_t * box, int *arrived)
{
    return box ? poll_box(box, arrived) : MPI_SUCCESS;
}

int MPIDI_NBRMA_mailbox_peers(const MPIDI_NBRMA_mailbox_t * box)
{
    return box ? box->n_mapped : 0;
}

uint64_t MPIDI_NBRMA_mailbox_readable_pid(const MPIDI_NBRMA_mailbox_t * box, int peer)
{
    const peer_t *p = mapped(box, peer);

    return p ? p->readable_pid : 0;
}

int MPIDI_NBRMA_mailbox_readable_peers(const MPIDI_NBRMA_mailbox_t * box)
{
    return box ? box->n_readable : 0;
}
