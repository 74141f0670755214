/*
 * mpich-nbrma: a window's mailboxes as one process sees them
 * (ch4/mailbox/mailbox.h says what they are for): its own mailbox, which
 * ring of which mailbox each process of the window writes (one per process
 * of the node, in rank order: nbrma_mailbox_rings), the peers' mailboxes
 * mapped here, sending into them and reading its own ring by ring.
 * MPICH- and UCX-free so that it is tested without MPI
 * (test/unit/test_mailboxes.cpp): the node ids are the caller's (MPICH's), a
 * peer's mailbox is a pointer the caller attached (a System V segment,
 * ../os/kept_segments.h) with a record of mapping_cache.h that keeps it
 * attached, and every message read goes to the caller's deliver function.
 * The glue (ch4/mailbox/mailbox.c) makes, exchanges and attaches them.
 *
 * Sending, polling, the lock words and the readable pids are inline: they
 * run for every synchronization message or progress call.
 */

#ifndef NBRMA_MAILBOXES_H_INCLUDED
#define NBRMA_MAILBOXES_H_INCLUDED

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "mailbox_ring.h"

#ifdef __cplusplus
extern "C" {
#endif

struct nbrma_kept_mapping;

/* A message taken from the ring of rank `from`; a nonzero result (never
 * negative: an MPI error code) stops the poll and is returned. */
typedef int (*nbrma_mailboxes_deliver_t) (void *ctx, int from, const nbrma_ring_msg_t * msg);

/* A peer of this node, by its ring. */
typedef struct {
    nbrma_mailbox_t *box;       /* its mailbox, mapped here; NULL: none */
    struct nbrma_kept_mapping *mapping; /* keeps it mapped (the caller's) */
    nbrma_ring_sender_t sender; /* my side of my ring in it */
    uint64_t pid;               /* its process, whose agent a message may wake */
    uint64_t readable_pid;      /* its memory is readable with that pid; 0: not */
} nbrma_mailbox_peer_t;

typedef struct nbrma_mailboxes {
    nbrma_mailbox_t *mine;      /* NULL until nbrma_mailboxes_own */
    int my_rank, nprocs;
    int nrings;                 /* processes of this node */
    int n_mapped, n_readable;   /* peers with a mailbox mapped here; readable too */
    int *ring_of;               /* [nprocs]: a rank's ring on this node, -1: none */
    int *rank_of_ring;          /* [nrings] */
    nbrma_mailbox_peer_t *peer; /* [nrings], by ring */
    uint64_t doorbell_seen;
    nbrma_mailboxes_deliver_t deliver;
    void *ctx;
    struct nbrma_mailboxes *next;       /* in the caller's list (nbrma_mailboxes_link) */
} nbrma_mailboxes_t;

/* Rank `my_rank` of `nprocs`, whose nodes node_of[] gives: a ring for each
 * process of my node, no peer mapped yet, no mailbox of my own yet. NULL
 * when there is no memory. */
nbrma_mailboxes_t *nbrma_mailboxes_new(const int *node_of, int nprocs, int my_rank,
                                       nbrma_mailboxes_deliver_t deliver, void *ctx);
/* Bytes of my mailbox (nbrma_mailbox_bytes of my node's rings). */
size_t nbrma_mailboxes_bytes(const nbrma_mailboxes_t * m);
/* My mailbox is at `memory` (nbrma_mailboxes_bytes long): emptied. */
void nbrma_mailboxes_own(nbrma_mailboxes_t * m, void *memory);
/* Whether `peer`'s mailbox has a ring for me: of my node, and not me. */
bool nbrma_mailboxes_wants(const nbrma_mailboxes_t * m, int peer);
/* `peer`'s mailbox (nbrma_mailboxes_wants) is mapped here at `box`, kept by
 * `mapping`; `pid` is its process, whose memory this one reads if `readable`. */
void nbrma_mailboxes_mapped(nbrma_mailboxes_t * m, int peer, nbrma_mailbox_t * box,
                            struct nbrma_kept_mapping *mapping, uint64_t pid, bool readable);
/* Gives back every peer's mapping through unmap(), then the memory of `m`;
 * my mailbox's memory (m->mine) is the caller's. */
void nbrma_mailboxes_free(nbrma_mailboxes_t * m, void (*unmap) (struct nbrma_kept_mapping *));

/* The caller's list of windows' mailboxes: `m` goes first; unlinking says
 * whether any is left. */
void nbrma_mailboxes_link(nbrma_mailboxes_t ** list, nbrma_mailboxes_t * m);
bool nbrma_mailboxes_unlink(nbrma_mailboxes_t ** list, nbrma_mailboxes_t * m);

/* Reads every ring of my mailbox in ring order, each until it is empty,
 * handing each message to deliver() (*arrived, if not NULL, set to 1).
 * Returns 0, deliver's nonzero result (the poll stops there), or
 * NBRMA_RING_MALFORMED (a ring holds a stamp no sender writes; the rings
 * after it are not read). nbrma_mailboxes_poll reads only when the doorbell
 * moved since it last looked (one load otherwise; nothing for m == NULL). */
int nbrma_mailboxes_read(nbrma_mailboxes_t * m, int *arrived);

static inline int nbrma_mailboxes_poll(nbrma_mailboxes_t * m, int *arrived)
{
    uint64_t bell;

    if (m == NULL || (bell = nbrma_mailbox_doorbell(m->mine)) == m->doorbell_seen)
        return 0;
    m->doorbell_seen = bell;
    return nbrma_mailboxes_read(m, arrived);
}

/* For a caller that waits for a message of this mailbox (a blocking
 * synchronization call's loop): a mailbox of at most
 * NBRMA_MAILBOX_WAIT_READS_RINGS rings is read whatever its doorbell says,
 * so that the loads of the doorbell and of the ring's slot, which both miss
 * the cache once a peer wrote them, overlap instead of the second waiting
 * for the first (8 B, 2 ranks, -w allocate, 6-8 alternating runs, medians,
 * us: osu_get_latency -s fence 1.175 -> 1.055, osu_put_latency -s pscw
 * 0.81 -> 0.745). Not at every progress call: a process with many windows
 * would read all their rings there. */
#define NBRMA_MAILBOX_WAIT_READS_RINGS 2
static inline int nbrma_mailboxes_poll_waiting(nbrma_mailboxes_t * m, int *arrived)
{
    if (m == NULL || m->nrings > NBRMA_MAILBOX_WAIT_READS_RINGS)
        return nbrma_mailboxes_poll(m, arrived);
    m->doorbell_seen = nbrma_mailbox_doorbell(m->mine);
    return nbrma_mailboxes_read(m, arrived);
}

/* nbrma_mailboxes_poll of every mailbox of the list, in order, until one
 * returns nonzero (for the progress hook: inline too). */
static inline int nbrma_mailboxes_poll_list(nbrma_mailboxes_t * list, int *arrived)
{
    int rc = 0;

    for (nbrma_mailboxes_t * m = list; m && rc == 0;) {
        /* delivering may not free a window, but keep the next one first */
        nbrma_mailboxes_t *next = m->next;
        rc = nbrma_mailboxes_poll(m, arrived);
        m = next;
    }
    return rc;
}

/* `peer` (not me) where its mailbox is mapped here, or NULL (also for
 * m == NULL: no mailboxes). */
static inline nbrma_mailbox_peer_t *nbrma_mailboxes_peer(const nbrma_mailboxes_t * m, int peer)
{
    nbrma_mailbox_peer_t *p;

    if (m == NULL || m->ring_of[peer] < 0)
        return NULL;
    p = &m->peer[m->ring_of[peer]];
    return p->box ? p : NULL;
}

/* Writes `msg` into my ring of `peer`'s mailbox; false when it cannot (not
 * mapped, or the ring is full: the caller sends otherwise). Whether the
 * peer must be woken for it: nbrma_mailboxes_owner_to_wake. */
static inline bool nbrma_mailboxes_send(nbrma_mailboxes_t * m, int peer,
                                        const nbrma_ring_msg_t * msg)
{
    nbrma_mailbox_peer_t *p = nbrma_mailboxes_peer(m, peer);

    return p && nbrma_ring_send(p->box, &p->box->ring[m->ring_of[m->my_rank]], &p->sender, msg);
}

/* After a store the peer's agent must see (a message sent, a lock word it
 * waits for; `serves_peer` as nbrma_mailbox_owner_to_wake has it): the
 * peer's process when its agent sleeps and waits to be woken for it (the
 * caller wakes it: ../os/wake_socket.h), else 0. */
static inline uint64_t nbrma_mailboxes_owner_to_wake(nbrma_mailboxes_t * m, int peer,
                                                     bool serves_peer)
{
    nbrma_mailbox_peer_t *p = nbrma_mailboxes_peer(m, peer);

    return p && nbrma_mailbox_owner_to_wake(p->box, serves_peer) ? p->pid : 0;
}

/* Whether `peer`'s progress agent alone serves what needs its CPU now
 * (nbrma_mailbox_agent_serves); false where its mailbox is not mapped here. */
static inline bool nbrma_mailboxes_peer_agent_serves(const nbrma_mailboxes_t * m, int peer)
{
    const nbrma_mailbox_peer_t *p = nbrma_mailboxes_peer(m, peer);

    return p && nbrma_mailbox_agent_serves(p->box);
}

/* Every mailbox of the list says whether this process's agent alone serves
 * (nbrma_mailbox_set_agent_serves). */
void nbrma_mailboxes_agent_serves_list(nbrma_mailboxes_t * list, bool serves);

/* This process's agent is about to sleep (`how`: NBRMA_MAILBOX_ASLEEP or
 * _ASLEEP_AWAY): every mailbox of the list asks its senders for a wake-up
 * (nbrma_mailbox_sleep). False, with every wish taken back, when one of
 * them has messages to read first. */
bool nbrma_mailboxes_sleep_list(nbrma_mailboxes_t * list, uint64_t how);
/* nbrma_mailbox_wake_for_all of every mailbox of the list: whether any
 * changed (the caller then reads the list: nbrma_mailboxes_poll_list). */
bool nbrma_mailboxes_wake_for_all_list(nbrma_mailboxes_t * list);
/* Awake again: no mailbox of the list asks for a wake-up. */
void nbrma_mailboxes_awake_list(nbrma_mailboxes_t * list);
/* The application is back in MPI: the marks of a sleep away go
 * (nbrma_mailbox_unmark_away). */
void nbrma_mailboxes_unmark_away_list(nbrma_mailboxes_t * list);
/* How many mailboxes of the list every peer of their window writes to (all
 * of them mapped here: the whole window on one node, reached by shared
 * memory): where each window has one, a sleep away's marks reach every
 * peer that may need this process's CPU. */
int nbrma_mailboxes_reaching_all_list(const nbrma_mailboxes_t * list);

/* The lock word of `peer`'s window (mine for peer == my rank) where this
 * process reaches it with the CPU's atomics; NULL: by message. */
static inline uint64_t *nbrma_mailboxes_lock_word(nbrma_mailboxes_t * m, int peer)
{
    nbrma_mailbox_peer_t *p;

    if (m == NULL)
        return NULL;
    if (peer == m->my_rank)
        return &m->mine->lock;
    p = nbrma_mailboxes_peer(m, peer);
    return p ? &p->box->lock : NULL;
}

/* The pid under which this process reads `peer`'s memory (cross_memory.h),
 * or 0: only peers whose mailbox is mapped here (same host) and whose probe
 * read back right (epochs/pulled_epoch.c). */
static inline uint64_t nbrma_mailboxes_readable_pid(const nbrma_mailboxes_t * m, int peer)
{
    const nbrma_mailbox_peer_t *p = nbrma_mailboxes_peer(m, peer);

    return p ? p->readable_pid : 0;
}

/* How many peers this process writes to directly; how many it reads. */
static inline int nbrma_mailboxes_peers(const nbrma_mailboxes_t * m)
{
    return m ? m->n_mapped : 0;
}

static inline int nbrma_mailboxes_readable_peers(const nbrma_mailboxes_t * m)
{
    return m ? m->n_readable : 0;
}

#ifdef __cplusplus
}
#endif

#endif /* NBRMA_MAILBOXES_H_INCLUDED */
