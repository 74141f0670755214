/*
 * mpich-nbrma: the memory behind windows' mailboxes, kept across windows.
 *
 * A mailbox is a shared segment (shared_segment.h: System V, not UCX
 * memory, which would make every window's registration slower while it
 * lives), attached by every peer on the host by its key. Making and
 * removing the segment and the peers' attachments (shmget, shmat, page
 * faults, shmdt) cost about 100 us of each window's creation and free,
 * where vanilla MPICH's MPI_Win_create takes 15-20 us here. So the segment
 * of a freed window waits for the next window of the same size, and a
 * peer's mapping of it waits for that segment to come back: a window
 * created right after another finds both and attaches nothing. At most
 * NBRMA_KEPT_SEGMENTS segments and NBRMA_KEPT_MAPPINGS unused mappings are
 * kept; the rest is released at once, and all of it by
 * nbrma_kept_segments_release_all (the glue calls it at MPI_Finalize,
 * ch4/mailbox/mailbox.c). The bookkeeping (spares matched by size, mappings
 * most recently used first, the eviction) is ../formats/mapping_cache.c.
 *
 * A kept mapping is found again by the peer's identity, the address and
 * the key: a segment the peer released and made anew has another key (its
 * id and cookie), so a stale mapping is never taken for a new segment; it
 * only keeps the old pages attached until it is the oldest unused one.
 *
 * No MPICH or UCX header: unit-tested without MPI
 * (test/unit/test_kept_segments.cpp). Not thread-safe: the glue calls it
 * under MPICH's protection of window creation and free.
 */

#ifndef NBRMA_KEPT_SEGMENTS_H_INCLUDED
#define NBRMA_KEPT_SEGMENTS_H_INCLUDED

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "mapping_cache.h"

#ifdef __cplusplus
extern "C" {
#endif

#define NBRMA_KEPT_SEGMENTS 4
#define NBRMA_KEPT_MAPPINGS 16

/* `bytes` of shared memory for this process's mailbox, kept or new, zeroed
 * when new; NULL when the system gives none. Peers attach it by its key
 * (nbrma_segment_key). */
void *nbrma_kept_segment_get(size_t bytes);
/* The window is freed: its mailbox's memory, kept for another one. */
void nbrma_kept_segment_put(void *segment, size_t bytes);

/* A peer's segment at `addr` (its address there; `key`, `key_bytes` long,
 * its nbrma_segment_key_t), of the peer `peer` (an opaque identity, such as
 * the endpoint toward it), mapped here at the mapping's ptr. NULL when the
 * key names no segment of this host. */
nbrma_kept_mapping_t *nbrma_kept_mapping_get(const void *peer, uint64_t addr, const void *key,
                                             size_t key_bytes);
/* The window that used the mapping is freed. */
void nbrma_kept_mapping_unuse(nbrma_kept_mapping_t * mapping);

/* Releases every kept segment and mapping, used or not (no window uses
 * them after MPI_Finalize). */
void nbrma_kept_segments_release_all(void);

#ifdef __cplusplus
}
#endif
#endif /* NBRMA_KEPT_SEGMENTS_H_INCLUDED */
