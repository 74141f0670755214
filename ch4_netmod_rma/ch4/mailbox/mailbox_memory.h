/*
 * mpich-nbrma: the memory behind windows' mailboxes, kept across windows.
 *
 * A mailbox is a shared-memory segment UCX allocates (ucp_mem_map), mapped
 * by every peer on the host (ucp_ep_rkey_unpack, ucp_rkey_ptr). Making and
 * removing the segment and the peers' attachments (shmget, shmat, page
 * faults, shmdt, shmctl) cost about 100 us of each window's creation and
 * free, where vanilla MPICH's MPI_Win_create takes 15-20 us here. So the
 * segment of a freed window waits for the next window of the same size, and
 * a peer's mapping of it waits for that segment to come back: a window
 * created right after another finds both and attaches nothing. At most
 * SPARE_SEGMENTS segments and SPARE_MAPPINGS unused mappings are kept; the
 * rest is released at once, and all of it at MPI_Finalize before the UCX
 * workers go (an MPICH finalize callback).
 */

#ifndef NBRMA_MAILBOX_MEMORY_H_INCLUDED
#define NBRMA_MAILBOX_MEMORY_H_INCLUDED

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <ucp/api/ucp.h>
#include "mapping_cache.h"

/* `bytes` of UCX memory for this process's mailbox, kept or new; NULL when
 * UCX allocates none. */
void *MPIDI_NBRMA_mailbox_segment_get(size_t bytes);
/* The window is freed: its mailbox's memory, kept for another one. */
void MPIDI_NBRMA_mailbox_segment_put(void *segment, size_t bytes);

typedef nbrma_kept_mapping_t MPIDI_NBRMA_mailbox_mapping_t;

/* A peer's mailbox at `addr` (its key `key`, `key_bytes` long, packed by
 * the peer), mapped here through `ep` at the mapping's ptr. NULL when UCX
 * gives no pointer to it (not on this host). */
MPIDI_NBRMA_mailbox_mapping_t *MPIDI_NBRMA_mailbox_map(ucp_ep_h ep, uint64_t addr,
                                                       const void *key, size_t key_bytes);
/* The window that used the mapping is freed. */
void MPIDI_NBRMA_mailbox_unmap(MPIDI_NBRMA_mailbox_mapping_t * mapping);

#endif /* NBRMA_MAILBOX_MEMORY_H_INCLUDED */
