/*
 * mpich-nbrma: the entries of the key exchange (ch4/common/nbrma_key_exchange.c):
 * each process's record (the caller's struct, with its key's length as a
 * uint64_t at a given offset) followed by a slot of NBRMA_KEY_SLOT bytes for
 * the key itself, which one allgather carries. Keys up to that size travel
 * with the records (a shared segment's key is 24 bytes, UCX 1.13's packed
 * keys for shared memory 11-25 here), and a window's creation then makes one
 * collective call for them instead of two; where some key is longer (which
 * every process sees in the records), the glue gathers the keys padded to
 * the longest in a second one. MPICH- and UCX-free, unit-tested without MPI
 * (test/unit/test_key_records.cpp).
 */

#ifndef NBRMA_KEY_RECORDS_H_INCLUDED
#define NBRMA_KEY_RECORDS_H_INCLUDED

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define NBRMA_KEY_SLOT 128
/* The longest key a record may claim: UCX 1.13's packed keys are tens to a
 * few hundred bytes; a larger claim is a corrupt record, which would
 * otherwise size the second allgather's buffers. */
#define NBRMA_KEY_MAX_BYTES 4096

/* The length of one entry. */
static inline size_t nbrma_key_entry_bytes(size_t rec_bytes)
{
    return rec_bytes + NBRMA_KEY_SLOT;
}

/* The key's length that record `rec` gives at `key_bytes_at`. */
uint64_t nbrma_key_record_key_bytes(const void *rec, size_t key_bytes_at);

/* This process's entry (nbrma_key_entry_bytes(rec_bytes), zeroed by the
 * caller): its record, and its key if it fits the slot (`key` may be NULL
 * where the record says 0 bytes). */
void nbrma_key_entry_pack(void *entry, const void *rec, size_t rec_bytes, size_t key_bytes_at,
                          const void *key);

/* Every process's record out of the gathered entries into `all` (by rank);
 * returns the longest key's length, at least 1, or 0 if some record claims
 * more than NBRMA_KEY_MAX_BYTES (the first such rank in `*bad_rank`). */
size_t nbrma_key_entries_unpack(const void *entries, int nprocs, size_t rec_bytes,
                                size_t key_bytes_at, void *all, int *bad_rank);

/* Where the longest key, `max_bytes`, fits the slot: the keys out of the
 * entries into `keys`, process r's at keys + r * max_bytes (bytes past a
 * key's own length are its slot's: zero or what its sender had there). */
void nbrma_key_entries_keys(const void *entries, int nprocs, size_t rec_bytes, size_t max_bytes,
                            char *keys);

#ifdef __cplusplus
}
#endif
#endif /* NBRMA_KEY_RECORDS_H_INCLUDED */
