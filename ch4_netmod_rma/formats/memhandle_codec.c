/*
 * mpich-nbrma: encoding and checked decoding of memory handles
 * (memhandle_codec.h). No MPICH here: unit tests build this file alone.
 */

#include "memhandle_codec.h"
#include <string.h>

/* FNV-1a, 64 bits, over the handle with its checksum field taken as zero */
static uint64_t checksum(const void *handle, size_t bytes)
{
    unsigned char copy[NBRMA_MEMHANDLE_MAX_BYTES];
    uint64_t hash = 14695981039346656037ULL;

    memcpy(copy, handle, bytes);
    memset(copy + offsetof(nbrma_memhandle_header_t, checksum), 0, sizeof(uint64_t));
    for (size_t i = 0; i < bytes; i++)
        hash = (hash ^ copy[i]) * 1099511628211ULL;
    return hash;
}

size_t nbrma_memhandle_encode(void *handle, nbrma_memhandle_header_t * hdr, const void *rkey,
                              size_t rkey_bytes)
{
    size_t total = sizeof(*hdr) + rkey_bytes;

    if (total > NBRMA_MEMHANDLE_MAX_BYTES)
        return 0;
    hdr->magic = NBRMA_MEMHANDLE_MAGIC;
    hdr->version = NBRMA_MEMHANDLE_VERSION;
    hdr->rkey_bytes = (uint16_t) rkey_bytes;
    hdr->total_bytes = (uint32_t) total;
    hdr->checksum = 0;
    memcpy(handle, hdr, sizeof(*hdr));
    if (rkey_bytes)
        memcpy((char *) handle + sizeof(*hdr), rkey, rkey_bytes);
    hdr->checksum = checksum(handle, total);
    memcpy((char *) handle + offsetof(nbrma_memhandle_header_t, checksum), &hdr->checksum,
           sizeof(hdr->checksum));
    return total;
}

nbrma_memhandle_status_t nbrma_memhandle_decode(const void *handle, nbrma_memhandle_header_t * hdr)
{
    memcpy(hdr, handle, sizeof(*hdr));
    if (hdr->magic != NBRMA_MEMHANDLE_MAGIC)
        return NBRMA_MEMHANDLE_NOT_A_HANDLE;
    if (hdr->version != NBRMA_MEMHANDLE_VERSION)
        return NBRMA_MEMHANDLE_BAD_VERSION;
    if (hdr->total_bytes != sizeof(*hdr) + hdr->rkey_bytes ||
        hdr->total_bytes > NBRMA_MEMHANDLE_MAX_BYTES)
        return NBRMA_MEMHANDLE_BAD_LENGTH;
    if (checksum(handle, hdr->total_bytes) != hdr->checksum)
        return NBRMA_MEMHANDLE_BAD_CHECKSUM;
    return NBRMA_MEMHANDLE_OK;
}

nbrma_memhandle_status_t nbrma_memhandle_decode_for(const void *handle, uint64_t win_id,
                                                    int nprocs, nbrma_memhandle_header_t * hdr)
{
    nbrma_memhandle_status_t status = nbrma_memhandle_decode(handle, hdr);

    if (status != NBRMA_MEMHANDLE_OK)
        return status;
    if (hdr->win_id != win_id)
        return NBRMA_MEMHANDLE_OTHER_WINDOW;
    if (hdr->owner_rank < 0 || hdr->owner_rank >= nprocs)
        return NBRMA_MEMHANDLE_BAD_OWNER;
    return NBRMA_MEMHANDLE_OK;
}

const char *nbrma_memhandle_strstatus(nbrma_memhandle_status_t status)
{
    switch (status) {
        case NBRMA_MEMHANDLE_OK:
            return "valid";
        case NBRMA_MEMHANDLE_NOT_A_HANDLE:
            return "not a memory handle";
        case NBRMA_MEMHANDLE_BAD_VERSION:
            return "unknown version";
        case NBRMA_MEMHANDLE_BAD_LENGTH:
            return "bad length";
        case NBRMA_MEMHANDLE_BAD_CHECKSUM:
            return "checksum mismatch: truncated or altered";
        case NBRMA_MEMHANDLE_OTHER_WINDOW:
            return "made on another window";
        case NBRMA_MEMHANDLE_BAD_OWNER:
            return "owner rank out of range";
    }
    return "unknown";
}
