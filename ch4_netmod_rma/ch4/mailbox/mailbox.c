/* mpich-nbrma: a window's mailboxes (mailbox.h): allocation and exchange at
 * creation, and the poller; rings, sending, reading: ../../formats/mailboxes.c. */

#include "mpidimpl.h"
#include "ucx_impl.h"
#include "mailbox.h"
#include "kept_segments.h"
#include "shared_segment.h"
#include "nbrma_progress.h"
#include "cross_memory.h"
#include "nbrma_key_exchange.h"
#include "wake_socket.h"
#include "mpidi_nbrma_agent_guard.h"
#include "nbrma_ucx_lanes.h"
#include "wire.h"

/* Published at creation (key_bytes 0: no mailbox), with the identity for
 * cross-memory reads and the settings' bits every process must agree on. */
typedef struct {
    uint64_t addr;
    uint64_t key_bytes;         /* of its segment's key, after the record */
    nbrma_cross_memory_id_t cross_memory_id;
    uint64_t agree_bits;
} published_t;

static MPIDI_NBRMA_mailbox_t *boxes;
/* Plain bools: one party at a time runs MPICH (the agent guard or MPICH's
 * global section). What the mailboxes say in agent_serves: */
static bool agent_serves;
/* the application marked them for a sleep away (P10) */
static bool away_marked;
/* the agent's last armed sleep marked them for peers only until the
 * application's own work begins */
static bool marked_for_peers;
/* The peer whose CPU this process's last operation needed (P10): sent just
 * before the peer marked its mailboxes, it found no mark; progress looks again. */
static nbrma_mailbox_peer_t *cpu_wanted_of;
/* MPI_Finalize releases the kept mailbox memory (os/kept_segments.h) */
static bool kept_until_finalize;

/* MPICH's error for what nbrma_mailboxes_poll returned (not 0). */
static int poll_errno(int rc)
{
    int mpi_errno = MPI_SUCCESS;

    MPIR_ERR_CHKANDJUMP1(rc == NBRMA_RING_MALFORMED, mpi_errno, MPI_ERR_INTERN,
                         "**nbrmaengine", "**nbrmaengine %s",
                         "malformed message in a window's mailbox");
    mpi_errno = rc;
    MPIR_ERR_CHECK(mpi_errno);
  fn_exit:
    return mpi_errno;
  fn_fail:
    goto fn_exit;
}

/* MPI_Finalize releases the kept memory, a never-freed window's too: no RMA follows. */
static int release_kept_segments(void *unused)
{
    (void) unused;
    nbrma_kept_segments_release_all();
    kept_until_finalize = false;
    return 0;
}

/* The application is in MPI: it serves what needs its CPU itself again. */
static void application_serves(void)
{
    if (likely(!agent_serves && !away_marked) || MPIDI_NBRMA_agent_guard_on_agent_thread())
        return;
    if (away_marked) {
        away_marked = false;
        nbrma_mailboxes_unmark_away_list(boxes);
    }
    if (agent_serves) {
        agent_serves = false;
        nbrma_mailboxes_agent_serves_list(boxes, false);
    }
}

/* Wakes the agent of `p` where it sleeps away (P10); a ring that fails
 * leaves the operation to that agent's next look. */
static void wake_if_away(const nbrma_mailbox_peer_t * p)
{
    if (nbrma_mailbox_away_owner_to_wake(p->box))
        (void) nbrma_wake_socket_ring(p->pid);
}

static int poll_boxes(int *made_progress)
{
    int rc;

    application_serves();
    if (cpu_wanted_of)
        wake_if_away(cpu_wanted_of);
    rc = nbrma_mailboxes_poll_list(boxes, made_progress);

    return rc ? poll_errno(rc) : MPI_SUCCESS;
}

static MPIDI_NBRMA_poller_t box_poller = {.poll = poll_boxes };

static void publish(MPIDI_NBRMA_mailbox_t * box, published_t * pub, nbrma_segment_key_t * key)
{
    pub->addr = (uint64_t) (uintptr_t) box->mine;
    *key = nbrma_segment_key(box->mine);
    pub->key_bytes = sizeof(*key);
    nbrma_cross_memory_self(&pub->cross_memory_id);
}

/* Maps `peer`'s mailbox where its segment is on this host. */
static void map_peer(MPIDI_NBRMA_mailbox_t * box, MPIR_Win * win, int peer,
                     const published_t * pub, const void *key)
{
    nbrma_kept_mapping_t *mapping;
    nbrma_segment_key_t k;

    /* a peer of another node has no ring in my mailbox, nor I in its; toward
     * a peer UCX does not reach through shared memory (UCX_TLS without it,
     * e.g. tcp,self) the messages stay UCX's, as the user chose */
    if (pub->key_bytes != sizeof(k) || !nbrma_mailboxes_wants(box, peer) ||
        !MPIDI_NBRMA_win_lanes_map_memory(win, peer))
        return;
    /* its mailbox has a ring for each process of our node, as mine */
    memcpy(&k, key, sizeof(k));
    if (k.bytes != nbrma_mailboxes_bytes(box))
        return;
    mapping = nbrma_kept_mapping_get(MPIDI_UCX_WIN_TO_EP(win, peer, MPIDI_UCX_get_win_vni(win)),
                                     pub->addr, key, pub->key_bytes);
    /* readable only for peers on this host: a pid means nothing elsewhere */
    if (mapping)
        nbrma_mailboxes_mapped(box, peer, mapping->ptr, mapping, pub->cross_memory_id.pid,
                               nbrma_cross_memory_reaches(&pub->cross_memory_id));
}

/* Everybody's address and key (nbrma_key_exchange.h); *agreed ANDed over all. */
static int exchange(MPIDI_NBRMA_mailbox_t * box, MPIR_Win * win, unsigned *agreed)
{
    int mpi_errno = MPI_SUCCESS;
    MPIR_Comm *comm = win->comm_ptr;
    published_t mine = { 0 }, *all = NULL;       /* nothing to publish without a box */
    nbrma_segment_key_t my_key;
    char *keys = NULL;
    size_t stride;

    if (box)
        publish(box, &mine, &my_key);
    mine.agree_bits = agreed ? *agreed : 0;
    all = MPL_malloc(comm->local_size * sizeof(*all), MPL_MEM_RMA);
    MPIR_ERR_CHKANDJUMP(all == NULL, mpi_errno, MPI_ERR_NO_MEM, "**nomem");
    mpi_errno = MPIDI_NBRMA_exchange_keys(comm, &mine, sizeof(mine), all,
                                          offsetof(published_t, key_bytes), box ? &my_key : NULL,
                                          &keys, &stride);
    MPIR_ERR_CHECK(mpi_errno);
    for (int r = 0; r < comm->local_size; r++) {
        if (agreed)
            *agreed &= (unsigned) all[r].agree_bits;
        if (box)
            map_peer(box, win, r, &all[r], keys + (size_t) r * stride);
    }

  fn_exit:
    MPL_free(all);
    MPL_free(keys);
    return mpi_errno;
  fn_fail:
    if (agreed)
        *agreed = 0;
    goto fn_exit;
}

/* This process's view of the window's mailboxes, from MPICH's node ids. */
static int new_mailboxes(MPIR_Comm * comm, nbrma_mailboxes_deliver_t deliver, void *ctx,
                         MPIDI_NBRMA_mailbox_t ** box)
{
    int mpi_errno = MPI_SUCCESS;
    int *node_of = MPL_malloc(comm->local_size * sizeof(int), MPL_MEM_RMA);

    MPIR_ERR_CHKANDJUMP(node_of == NULL, mpi_errno, MPI_ERR_NO_MEM, "**nomem");
    for (int r = 0; r < comm->local_size; r++) {
        mpi_errno = MPID_Get_node_id(comm, r, &node_of[r]);
        MPIR_ERR_CHECK(mpi_errno);
    }
    *box = nbrma_mailboxes_new(node_of, comm->local_size, comm->rank, deliver, ctx);
    MPIR_ERR_CHKANDJUMP(*box == NULL, mpi_errno, MPI_ERR_NO_MEM, "**nomem");

  fn_exit:
    MPL_free(node_of);
    return mpi_errno;
  fn_fail:
    goto fn_exit;
}

int MPIDI_NBRMA_mailbox_create(MPIR_Win * win, bool wanted, nbrma_mailboxes_deliver_t deliver,
                               void *ctx, unsigned *agreed, MPIDI_NBRMA_mailbox_t ** box_out)
{
    int mpi_errno = MPI_SUCCESS;
    MPIDI_NBRMA_mailbox_t *box = NULL;
    void *mine;

    *box_out = NULL;
    if (wanted) {
        mpi_errno = new_mailboxes(win->comm_ptr, deliver, ctx, &box);
        MPIR_ERR_CHECK(mpi_errno);
        mine = nbrma_kept_segment_get(nbrma_mailboxes_bytes(box));
        if (mine) {
            nbrma_mailboxes_own(box, mine);
            if (!kept_until_finalize) {
                MPIR_Add_finalize(release_kept_segments, NULL, MPIR_FINALIZE_CALLBACK_PRIO + 1);
                kept_until_finalize = true;
            }
        } else {        /* no shared memory: active messages only */
            MPIDI_NBRMA_mailbox_free(box);
            box = NULL;
        }
    }
    mpi_errno = exchange(box, win, agreed);     /* collective: also without a mailbox */
    MPIR_ERR_CHECK(mpi_errno);
    if (box) {
        nbrma_mailboxes_link(&boxes, box);
        /* a new mailbox says what the others say, and the application is
         * here (the agent marks them all again when it serves next) */
        application_serves();
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
    void *mine = box->mine;
    size_t bytes = nbrma_mailboxes_bytes(box);

    if (!nbrma_mailboxes_unlink(&boxes, box))
        MPIDI_NBRMA_poller_sleep(&box_poller);
    if (box->peer && cpu_wanted_of >= box->peer && cpu_wanted_of < box->peer + box->nrings)
        cpu_wanted_of = NULL;
    nbrma_mailboxes_free(box, nbrma_kept_mapping_unuse);
    /* a peer that still maps it keeps the pages until it unmaps them */
    if (mine)
        nbrma_kept_segment_put(mine, bytes);
}

int MPIDI_NBRMA_mailbox_poll(MPIDI_NBRMA_mailbox_t * box, int *arrived, bool waiting)
{
    int rc = waiting ? nbrma_mailboxes_poll_waiting(box, arrived)
        : nbrma_mailboxes_poll(box, arrived);

    return rc ? poll_errno(rc) : MPI_SUCCESS;
}

bool MPIDI_NBRMA_mailbox_send(MPIDI_NBRMA_mailbox_t * box, int peer, const nbrma_ring_msg_t * msg)
{
    if (!nbrma_mailboxes_send(box, peer, msg))
        return false;
    MPIDI_NBRMA_mailbox_wake_owner(box, peer, nbrma_ctrl_kind_serves_peer(msg->kind));
    return true;
}

void MPIDI_NBRMA_mailbox_wake_owner(MPIDI_NBRMA_mailbox_t * box, int peer, bool serves_peer)
{
    uint64_t wake_pid = nbrma_mailboxes_owner_to_wake(box, peer, serves_peer);

    /* a failed ring leaves the store to the peer's next progress call */
    if (wake_pid)
        (void) nbrma_wake_socket_ring(wake_pid);
}

void MPIDI_NBRMA_mailbox_cpu_wanted(MPIDI_NBRMA_mailbox_t * box, int peer)
{
    nbrma_mailbox_peer_t *p = nbrma_mailboxes_peer(box, peer);

    if (p == NULL)
        return;
    cpu_wanted_of = p;
    wake_if_away(p);
}

bool MPIDI_NBRMA_mailboxes_sleep(bool for_all, bool until_own_work)
{
    bool marked = nbrma_mailboxes_sleep_list(boxes, for_all ? NBRMA_MAILBOX_ASLEEP :
                                             NBRMA_MAILBOX_ASLEEP_FOR_PEERS);

    marked_for_peers = marked && !for_all && until_own_work;
    return marked;
}

void MPIDI_NBRMA_mailboxes_awake(void)
{
    away_marked = false;
    marked_for_peers = false;
    nbrma_mailboxes_awake_list(boxes);
}

int MPIDI_NBRMA_mailboxes_own_work_begins(void)
{
    int rc;

    if (likely(!marked_for_peers))
        return MPI_SUCCESS;
    marked_for_peers = false;
    if (!nbrma_mailboxes_wake_for_all_list(boxes))
        return MPI_SUCCESS;     /* the agent woke meanwhile */
    /* what came while the mark held woke nobody: read now */
    rc = nbrma_mailboxes_poll_list(boxes, NULL);
    return rc ? poll_errno(rc) : MPI_SUCCESS;
}

bool MPIDI_NBRMA_mailboxes_mark_away(void)
{
    if (boxes == NULL || away_marked)
        return false;
    away_marked = nbrma_mailboxes_sleep_list(boxes, NBRMA_MAILBOX_ASLEEP_AWAY);
    return !away_marked;
}

int MPIDI_NBRMA_mailboxes_reaching_all(void)
{
    return nbrma_mailboxes_reaching_all_list(boxes);
}

void MPIDI_NBRMA_mailboxes_agent_serves(void)
{
    if (agent_serves)
        return;
    agent_serves = true;
    nbrma_mailboxes_agent_serves_list(boxes, true);
}
