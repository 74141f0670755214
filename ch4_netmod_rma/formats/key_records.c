/*
 * mpich-nbrma: the entries of the key exchange (key_records.h).
 */

#include "key_records.h"

#include <string.h>

uint64_t nbrma_key_record_key_bytes(const void *rec, size_t key_bytes_at)
{
    uint64_t bytes;

    memcpy(&bytes, (const char *) rec + key_bytes_at, sizeof(bytes));
    return bytes;
}

void nbrma_key_entry_pack(void *entry, const void *rec, size_t rec_bytes, size_t key_bytes_at,
                          const void *key)
{
    uint64_t key_bytes = nbrma_key_record_key_bytes(rec, key_bytes_at);

    memcpy(entry, rec, rec_bytes);
    if (key_bytes && key_bytes <= NBRMA_KEY_SLOT)
        memcpy((char *) entry + rec_bytes, key, key_bytes);
}

size_t nbrma_key_entries_unpack(const void *entries, int nprocs, size_t rec_bytes,
                                size_t key_bytes_at, void *all, int *bad_rank)
{
    size_t entry = nbrma_key_entry_bytes(rec_bytes), max_bytes = 1;

    for (int r = 0; r < nprocs; r++) {
        const char *e = (const char *) entries + (size_t) r * entry;
        uint64_t key_bytes = nbrma_key_record_key_bytes(e, key_bytes_at);

        memcpy((char *) all + (size_t) r * rec_bytes, e, rec_bytes);
        if (key_bytes > NBRMA_KEY_MAX_BYTES) {
            *bad_rank = r;
            return 0;
        }
        if (key_bytes > max_bytes)
            max_bytes = key_bytes;
    }
    return max_bytes;
}

void nbrma_key_entries_keys(const void *entries, int nprocs, size_t rec_bytes, size_t max_bytes,
                            char *keys)
{
    size_t entry = nbrma_key_entry_bytes(rec_bytes);

    for (int r = 0; r < nprocs; r++)
        memcpy(keys + (size_t) r * max_bytes,
               (const char *) entries + (size_t) r * entry + rec_bytes, max_bytes);
}
