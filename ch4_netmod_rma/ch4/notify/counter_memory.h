/*
 * mpich-nbrma: where a window's notification counters live. Each process's
 * counters are memory UCX allocated (ucx_memory.h), whose address and key
 * every process of the window has; an increment is then a UCX atomic add on
 * the target's endpoint, issued once the notifying operation completed: no
 * message for the target's CPU where UCX reaches its memory (shared memory
 * on this host), and UCX's own emulation where it does not (tcp, served by
 * the target's progress or its agent). Where UCX could not allocate the
 * counters or unpack a target's key, the caller sends the increment as an
 * active message instead. The target reads its counters with atomic loads.
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
int MPIDI_NBRMA_counter_memory_create(MPIR_Win * win, int n, MPIDI_NBRMA_counter_memory_t ** cm_out);
/* Counter `idx` of process `target` incremented by a UCX atomic add (true),
 * or nothing done (false: no key for it, or UCX refused; the caller sends
 * the increment). `behind_data`: a worker fence first, so that UCX performs
 * the add after the operations this process issued before it. Not toward
 * the calling process itself. */
bool MPIDI_NBRMA_counter_memory_add(MPIDI_NBRMA_counter_memory_t * cm, MPIR_Win * win,
                                    int target, int idx, bool behind_data);
/* Every increment this process issued as a UCX atomic is done at its target
 * (an endpoint flush toward each process it incremented): before the
 * collective step after which the targets free their counters. */
int MPIDI_NBRMA_counter_memory_quiesce(MPIDI_NBRMA_counter_memory_t * cm, MPIR_Win * win);
/* Frees the counters, the keys and `cm` itself. */
void MPIDI_NBRMA_counter_memory_free(MPIDI_NBRMA_counter_memory_t * cm);

#endif /* NBRMA_COUNTER_MEMORY_H_INCLUDED */
