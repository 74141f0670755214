/*
 * mpich-nbrma: where a window's notification counters live: memory UCX
 * allocated (ucx_memory.h), whose address and key every process of the window
 * has, so that an increment is a UCX atomic add on the target's endpoint: no
 * message for the target's CPU where UCX reaches its memory (shared memory),
 * UCX's emulation where not (tcp). Without UCX memory or a target's key the
 * caller sends an active message. The target reads its counters atomically.
 */

#ifndef NBRMA_COUNTER_MEMORY_H_INCLUDED
#define NBRMA_COUNTER_MEMORY_H_INCLUDED

#include <ucp/api/ucp.h>
#include "counter_peers.h"

typedef struct MPIDI_NBRMA_counter_memory {
    int64_t *counters;          /* this process's: UCX adds 64-bit words */
    bool ucx_allocated;         /* counters from UCX (else MPL_calloc) */
    nbrma_counter_peers_t peers;        /* every process's (../../formats/counter_peers.h) */
    char *keys;                 /* their packed keys, key_stride bytes apart */
    size_t key_stride;
} MPIDI_NBRMA_counter_memory_t;

/* Collective over `win`: *cm_out, with `n` counters here, zero, and every
 * process's address and key. */
int MPIDI_NBRMA_counter_memory_create(MPIR_Win * win, int n,
                                      MPIDI_NBRMA_counter_memory_t ** cm_out);
/* A UCX atomic add to counter `idx` of `target` (not this process); false: no
 * key or UCX refused, the caller sends it. `behind_data`: a worker fence first,
 * so that UCX performs the add after this process's earlier operations. */
bool MPIDI_NBRMA_counter_memory_add(MPIDI_NBRMA_counter_memory_t * cm, MPIR_Win * win,
                                    int target, int idx, bool behind_data);
/* This process's UCX increments done at their targets (an endpoint flush per
 * target): before the collective step after which targets free their counters. */
int MPIDI_NBRMA_counter_memory_quiesce(MPIDI_NBRMA_counter_memory_t * cm, MPIR_Win * win);
void MPIDI_NBRMA_counter_memory_free(MPIDI_NBRMA_counter_memory_t * cm);

#endif /* NBRMA_COUNTER_MEMORY_H_INCLUDED */
