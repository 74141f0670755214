/*
 * mpich-nbrma: every process's record and the key by which the others
 * reach its memory (a window's notification counters: a packed UCX remote
 * key; its mailbox: a shared segment's key, ../../os/shared_segment.h): one
 * allgather of the records, each with its key in a slot of 128 bytes; only
 * where some key is longer (which every process sees in the records), a
 * second one of the keys padded to the longest.
 */

#ifndef NBRMA_KEY_EXCHANGE_H_INCLUDED
#define NBRMA_KEY_EXCHANGE_H_INCLUDED

/* Collective over `comm`. `mine` is this process's record of `rec_bytes`
 * bytes, with its key's length as a uint64_t at `key_bytes_at` (0: no key;
 * `key` may then be NULL); `all` receives every process's record by rank,
 * and *keys (MPL_malloc'd, the caller frees) process r's key at
 * *keys + r * *stride. */
int MPIDI_NBRMA_exchange_keys(MPIR_Comm * comm, const void *mine, size_t rec_bytes, void *all,
                              size_t key_bytes_at, const void *key, char **keys, size_t *stride);

#endif /* NBRMA_KEY_EXCHANGE_H_INCLUDED */
