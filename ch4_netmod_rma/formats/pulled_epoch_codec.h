/*
 * mpich-nbrma: the byte layout of a pulled access epoch (pulled_epoch.c),
 * MPICH-free so that the decoder of what a peer sends is reachable by unit
 * tests and fuzzers.
 *
 * It travels as one active-message header: the header below (a protocol
 * message of kind NBRMA_CTRL_ACCESS_EPOCH, the count of operations and the
 * size of the whole buffer), then n_ops descriptors. No data: each
 * descriptor names where the operation's data lies in the origin's memory,
 * from where the target reads it.
 */

#ifndef NBRMA_PULLED_EPOCH_CODEC_H_INCLUDED
#define NBRMA_PULLED_EPOCH_CODEC_H_INCLUDED

#include "wire.h"
#include "whole_epoch_codec.h"

/* small enough to travel eagerly, and a bound on the target's work per message */
#define NBRMA_PULLED_EPOCH_MAX_OPS 64

typedef struct {
    nbrma_ctrl_msg_t ctrl;      /* kind NBRMA_CTRL_ACCESS_EPOCH */
    uint32_t n_ops;
    uint32_t bytes;             /* the whole buffer */
} nbrma_pulled_epoch_t;

typedef struct {
    int32_t kind;               /* nbrma_whole_op_kind_t: put or accumulate */
    int32_t datatype;           /* a predefined MPI_Datatype, origin = target */
    int32_t op;                 /* a predefined MPI_Op (accumulate) */
    int32_t count;
    int64_t target_disp;
    uint64_t origin_addr;       /* the data, contiguous, in the origin's memory */
} nbrma_pulled_op_t;

NBRMA_STATIC_ASSERT(sizeof(nbrma_pulled_epoch_t) == 40, "no padding in the wire format");
NBRMA_STATIC_ASSERT(sizeof(nbrma_pulled_op_t) == 32, "no padding in the wire format");

/* The size of a pulled epoch of n_ops operations. */
size_t nbrma_pulled_epoch_bytes(size_t n_ops);

/* Whether a pulled epoch whose header claims `bytes` may be copied before it
 * is checked: at least its header, at most an epoch of the maximum number of
 * operations (an active-message handler is not told the size it received,
 * and a mailbox names only the address of the epoch in the peer's memory). */
bool nbrma_pulled_epoch_claim_fits(uint32_t bytes);

/* Writing: the header of an epoch of n_ops in `buf` (nbrma_pulled_epoch_bytes
 * of them; its protocol message zeroed, the sender's to fill in) and where
 * its descriptors go. */
nbrma_pulled_op_t *nbrma_pulled_epoch_init(void *buf, uint32_t n_ops);
/* The descriptor of an operation whose data lies at `origin_addr` of the
 * origin's memory, from the description a whole epoch would carry. */
nbrma_pulled_op_t nbrma_pulled_op_of(const nbrma_whole_epoch_op_t * desc, uint64_t origin_addr);

/* Checks `bytes` bytes a peer sent before anything is read from them: the
 * header claims exactly `bytes` for its n_ops (at most the maximum), every
 * kind is known, every count >= 0, every type accepted (type_size != 0), the
 * data's size fits and its address range does not wrap. Returns the
 * descriptors (n_ops of them in *n_ops) or NULL if the epoch may not be
 * applied. */
const nbrma_pulled_op_t *nbrma_pulled_epoch_check(const void *buf, size_t bytes,
                                                  nbrma_whole_epoch_type_size_fn type_size,
                                                  void *arg, uint32_t * n_ops);

#endif /* NBRMA_PULLED_EPOCH_CODEC_H_INCLUDED */
