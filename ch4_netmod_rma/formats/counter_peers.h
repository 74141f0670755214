/*
 * mpich-nbrma: where each process of a window keeps its notification
 * counters, as this process knows it (ch4/notify/counter_memory.h says why
 * they are UCX memory): the record each process publishes at creation (the
 * counters' address and its packed key's length), and per peer the address
 * of counter i and the state of the peer's key, unpacked the first time an
 * increment goes there. MPICH- and UCX-free so that the bookkeeping is
 * tested without MPI (test/unit/test_counter_peers.cpp): an unpacked key is
 * an opaque handle the glue makes and destroys (ch4/notify/counter_memory.c
 * makes the UCX calls).
 */

#ifndef NBRMA_COUNTER_PEERS_H_INCLUDED
#define NBRMA_COUNTER_PEERS_H_INCLUDED

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* What a process publishes: its counters' address and its key's size (0:
 * no key, increments go to it as messages). */
typedef struct {
    uint64_t addr;
    uint64_t key_bytes;
} nbrma_counter_published_t;

typedef enum {
    NBRMA_COUNTER_KEY_PACKED = 0,       /* not unpacked yet */
    NBRMA_COUNTER_KEY_UNPACKED,
    NBRMA_COUNTER_KEY_NONE      /* no key, or it could not be unpacked here */
} nbrma_counter_key_state_t;

typedef struct {
    uint64_t addr;
    nbrma_counter_key_state_t state;
    void *rkey;                 /* the unpacked key (state UNPACKED) */
} nbrma_counter_peer_t;

typedef struct {
    int nprocs;
    nbrma_counter_peer_t *peer;         /* by window rank */
} nbrma_counter_peers_t;

/* Every process's record by rank (`nprocs` of them; `self`: this process,
 * whose own counters take no key): false when memory lacks. */
bool nbrma_counter_peers_init(nbrma_counter_peers_t * peers,
                              const nbrma_counter_published_t * all, int nprocs, int self);

/* The address of counter `idx` at `target` (64-bit counters). */
static inline uint64_t nbrma_counter_peers_word(const nbrma_counter_peers_t * peers, int target,
                                                int idx)
{
    return peers->peer[target].addr + (uint64_t) idx * sizeof(int64_t);
}

/* Whether `target`'s key is still to be unpacked: the first increment toward
 * it unpacks it and reports how that went (nbrma_counter_peers_unpacked_as);
 * no later one asks again. */
static inline bool nbrma_counter_peers_to_unpack(const nbrma_counter_peers_t * peers, int target)
{
    return peers->peer[target].state == NBRMA_COUNTER_KEY_PACKED;
}

/* The glue unpacked `target`'s key (`ok`: as `rkey`) or could not. */
static inline void nbrma_counter_peers_unpacked_as(nbrma_counter_peers_t * peers, int target,
                                                   bool ok, void *rkey)
{
    peers->peer[target].state = ok ? NBRMA_COUNTER_KEY_UNPACKED : NBRMA_COUNTER_KEY_NONE;
    peers->peer[target].rkey = ok ? rkey : NULL;
}

/* The unpacked key of `target`'s counters; NULL where there is none (the
 * caller sends the increment as a message). Inline: every increment asks it. */
static inline void *nbrma_counter_peers_key(const nbrma_counter_peers_t * peers, int target)
{
    return peers->peer[target].state == NBRMA_COUNTER_KEY_UNPACKED ? peers->peer[target].rkey
        : NULL;
}

/* Whether `target`'s key was unpacked: this process may have incremented
 * its counters with the transport's atomics. */
static inline bool nbrma_counter_peers_unpacked(const nbrma_counter_peers_t * peers, int target)
{
    return peers->peer != NULL && peers->peer[target].state == NBRMA_COUNTER_KEY_UNPACKED;
}

/* Destroys every unpacked key through `destroy` and frees the table; an
 * all-zero table (init never ran, or failed) is fine. */
void nbrma_counter_peers_free(nbrma_counter_peers_t * peers, void (*destroy) (void *rkey));

#ifdef __cplusplus
}
#endif
#endif /* NBRMA_COUNTER_PEERS_H_INCLUDED */
