/*
 * mpich-nbrma: the byte layout of a memory handle (MPIX_Memhandle_create),
 * MPICH-free so that the decoder of what a user passes in is reachable by
 * unit tests and fuzzers.
 *
 * A handle is at most NBRMA_MEMHANDLE_MAX_BYTES (MPIX_MAX_MEMHANDLE_SIZE): the
 * header below (fixed-width fields, no padding), then the packed rkey. The
 * checksum covers both, with the checksum field taken as zero, so that a handle
 * that was truncated in transit (its tail is whatever the receive buffer held)
 * or altered is refused instead of being used as an address and a key.
 */

#ifndef NBRMA_MEMHANDLE_CODEC_H_INCLUDED
#define NBRMA_MEMHANDLE_CODEC_H_INCLUDED

#include <stddef.h>
#include <stdint.h>
#include "nbrma_static_assert.h"

#define NBRMA_MEMHANDLE_MAX_BYTES 512
#define NBRMA_MEMHANDLE_MAGIC   0x4d48424eu     /* "NBHM" */
#define NBRMA_MEMHANDLE_VERSION 1

typedef struct {
    uint32_t magic;
    uint16_t version;
    uint16_t rkey_bytes;
    uint32_t total_bytes;       /* header and rkey */
    int32_t owner_rank;         /* rank of the creator in the parent window */
    uint64_t win_id;            /* the parent's MPIDIG id: equal at all its processes */
    uint64_t generation;        /* of the creator's registration */
    uint64_t base;              /* the creator's address of the memory */
    uint64_t size;
    uint64_t checksum;
} nbrma_memhandle_header_t;

NBRMA_STATIC_ASSERT(sizeof(nbrma_memhandle_header_t) == 56, "no padding in the handle");

/* Writes a handle of the header's fields (magic, version, lengths and
 * checksum are filled in here) and `rkey_bytes` of rkey into `handle`.
 * Returns its size, or 0 if it would not fit. */
size_t nbrma_memhandle_encode(void *handle, nbrma_memhandle_header_t * hdr, const void *rkey,
                              size_t rkey_bytes);

typedef enum {
    NBRMA_MEMHANDLE_OK = 0,
    NBRMA_MEMHANDLE_NOT_A_HANDLE,
    NBRMA_MEMHANDLE_BAD_VERSION,
    NBRMA_MEMHANDLE_BAD_LENGTH,
    NBRMA_MEMHANDLE_BAD_CHECKSUM,
    NBRMA_MEMHANDLE_OTHER_WINDOW,       /* nbrma_memhandle_decode_for only */
    NBRMA_MEMHANDLE_BAD_OWNER   /* nbrma_memhandle_decode_for only */
} nbrma_memhandle_status_t;

/* Reads the header of the handle at `handle` (at most the maximum size is
 * read, and only as much as the header claims) and checks it. The rkey, if
 * any, follows the header. */
nbrma_memhandle_status_t nbrma_memhandle_decode(const void *handle, nbrma_memhandle_header_t * hdr);
/* nbrma_memhandle_decode, and the handle is one of the dynamic window
 * `win_id` (else NBRMA_MEMHANDLE_OTHER_WINDOW) whose creator is one of its
 * `nprocs` ranks (else NBRMA_MEMHANDLE_BAD_OWNER). */
nbrma_memhandle_status_t nbrma_memhandle_decode_for(const void *handle, uint64_t win_id,
                                                    int nprocs, nbrma_memhandle_header_t * hdr);

const char *nbrma_memhandle_strstatus(nbrma_memhandle_status_t status);

#endif /* NBRMA_MEMHANDLE_CODEC_H_INCLUDED */
