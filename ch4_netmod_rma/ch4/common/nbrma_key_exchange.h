/*
 * mpich-nbrma: every process's record and the key by which the others reach
 * its memory (a packed UCX remote key, or a shared segment's key:
 * ../../os/shared_segment.h). One allgather of the records, each key in a
 * slot of NBRMA_KEY_SLOT bytes; a second one of padded keys only if some key
 * is longer, which every process sees in the records.
 */

#ifndef NBRMA_KEY_EXCHANGE_H_INCLUDED
#define NBRMA_KEY_EXCHANGE_H_INCLUDED

/* Collective over `comm`. `mine`: this process's record, its key's length a
 * uint64_t at `key_bytes_at` (0: no key, `key` may be NULL). `all` receives
 * the records by rank; *keys (MPL_malloc'd, the caller frees) process r's key
 * at *keys + r * *stride. */
int MPIDI_NBRMA_exchange_keys(MPIR_Comm * comm, const void *mine, size_t rec_bytes, void *all,
                              size_t key_bytes_at, const void *key, char **keys, size_t *stride);

#endif /* NBRMA_KEY_EXCHANGE_H_INCLUDED */
