/*
 * mpich-nbrma: how an engine window's origin reaches each process's window
 * memory on its host without that process's CPU, decided once at creation
 * from facts the glue gathers from MPICH and UCX
 * (ch4/epochs/cross_memory_rma.c, which also performs the copies and
 * atomics), MPICH- and UCX-free (test/unit/test_peer_reach.cpp). The first
 * that holds, per rank:
 *
 * - MPICH's node-shared segment maps its memory here: puts and gets of any
 *   layout are copies with loads and stores, accumulates the CPU's atomics;
 *   a peer counts among the cross-memory peers;
 * - ucp_rkey_ptr maps its memory here (UCX memory on this host): the same,
 *   puts and gets too (UCX would copy as directly, but through MPICH's and
 *   UCX's calls and a flush that asks UCX: an 8 B put + flush took 0.14-0.30
 *   us so, 0.13-0.15 copied here); this process's own memory only where
 *   peers may map it (`mapped_here`: its accumulates then take the same
 *   atomics as theirs);
 * - it has a UCX key and its mailbox gave a pid that cross-memory attach
 *   reaches: contiguous puts and gets by process_vm_readv/_writev (the
 *   mailbox gives this process none for itself);
 * - none of these.
 */

#ifndef NBRMA_PEER_REACH_H_INCLUDED
#define NBRMA_PEER_REACH_H_INCLUDED

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* A rank's window memory in this process; base NULL: not mapped. */
typedef struct {
    char *base;
    int disp_unit;
} nbrma_mapped_peer_t;

/* What the glue knows of one rank at the window's creation (all zero: none
 * of it). */
typedef struct {
    char *shared_base;          /* MPICH's node-shared segment maps it here (NULL: not) */
    int shared_disp_unit;
    char *ucx_base;             /* ucp_rkey_ptr maps it here (NULL: not) */
    int ucx_disp_unit;
    uint64_t pid;               /* its mailbox's pid that cross-memory attach reaches (0: none) */
    bool has_key;               /* a UCX key and a window address */
} nbrma_peer_facts_t;

/* The decision. All zero: no rank reached so (the window wants none). */
typedef struct {
    nbrma_mapped_peer_t *mapped;        /* per rank; NULL: no rank's memory is mapped */
    uint64_t *pid;              /* per rank, cross-memory attach (0: not); NULL: no rank */
    int n_cross_memory_peers;   /* ranks reached by copies: mapped (other than this
                                 * process) or by cross-memory attach */
    int n_mapped_peers;         /* other ranks whose memory is mapped here */
    bool all_peers_mapped;      /* every other rank's, and there is one */
} nbrma_peer_reach_t;

/* The decision for `nprocs` ranks (`self`: this process) from facts[rank];
 * tables are kept only where they hold an entry. 0, or -1 without memory
 * (*reach all zero then). */
int nbrma_peer_reach_decide(const nbrma_peer_facts_t * facts, int nprocs, int self,
                            bool mapped_here, nbrma_peer_reach_t * reach);
/* Frees the tables; *reach all zero. */
void nbrma_peer_reach_free(nbrma_peer_reach_t * reach);

/* --- per operation (inline: every put, get and accumulate may ask) -------- */

/* Where `rank`'s bytes at displacement `disp` are mapped here for puts and
 * gets (a peer's: this process's own go MPICH's local copy); NULL: not. */
static inline char *nbrma_peer_reach_copy_target(const nbrma_peer_reach_t * reach, int rank,
                                                 int self, int64_t disp)
{
    const nbrma_mapped_peer_t *peer;

    if (reach->mapped == NULL || rank == self || (peer = &reach->mapped[rank])->base == NULL)
        return NULL;
    return peer->base + disp * peer->disp_unit;
}

/* The same for the CPU's atomics: any mapping, this process's own too. */
static inline char *nbrma_peer_reach_atomics_target(const nbrma_peer_reach_t * reach, int rank,
                                                    int64_t disp)
{
    const nbrma_mapped_peer_t *peer;

    if (reach->mapped == NULL || (peer = &reach->mapped[rank])->base == NULL)
        return NULL;
    return peer->base + disp * peer->disp_unit;
}

/* The pid by which cross-memory attach reaches `rank`; 0: it does not. */
static inline uint64_t nbrma_peer_reach_pid(const nbrma_peer_reach_t * reach, int rank)
{
    return reach->pid ? reach->pid[rank] : 0;
}

#ifdef __cplusplus
}
#endif
#endif /* NBRMA_PEER_REACH_H_INCLUDED */
