/*
 * mpich-nbrma: the byte layout of a whole lock epoch, MPICH-free so that the
 * decoder of what a peer sends is reachable by unit tests and fuzzers.
 *
 * A whole lock epoch travels as one active-message header: the header below
 * (a protocol message of kind NBRMA_CTRL_LOCK_EPOCH, then the count of
 * operations and the size of the whole buffer), n_ops descriptors, then each
 * operation's data at a 16-byte aligned offset. The whole buffer is at most
 * NBRMA_WHOLE_EPOCH_MAX_BYTES, so that it travels eagerly.
 */

#ifndef NBRMA_WHOLE_EPOCH_CODEC_H_INCLUDED
#define NBRMA_WHOLE_EPOCH_CODEC_H_INCLUDED

#include <stdbool.h>
#include "wire.h"

#define NBRMA_WHOLE_EPOCH_MAX_BYTES 4096

typedef struct {
    nbrma_ctrl_msg_t ctrl;      /* kind NBRMA_CTRL_LOCK_EPOCH */
    uint32_t n_ops;
    uint32_t bytes;             /* the whole buffer */
} nbrma_whole_epoch_t;

typedef enum {
    NBRMA_WHOLE_OP_PUT = 1,
    NBRMA_WHOLE_OP_ACCUMULATE
} nbrma_whole_op_kind_t;

typedef struct {
    int32_t kind;               /* nbrma_whole_op_kind_t */
    int32_t datatype;           /* a predefined MPI_Datatype, origin = target */
    int32_t op;                 /* a predefined MPI_Op (accumulate) */
    int32_t count;
    int64_t target_disp;
} nbrma_whole_epoch_op_t;

NBRMA_STATIC_ASSERT(sizeof(nbrma_whole_epoch_t) == 40, "no padding in the wire format");
NBRMA_STATIC_ASSERT(sizeof(nbrma_whole_epoch_op_t) == 24, "no padding in the wire format");

/* Bytes an operation's data takes in the buffer (aligned). */
size_t nbrma_whole_epoch_span(size_t data_bytes);
/* Where the data of the first operation begins in an epoch of n_ops. */
size_t nbrma_whole_epoch_data_offset(size_t n_ops);

/* Planning: an epoch of n_ops starts at data_offset(n_ops) bytes; each
 * operation adds the span of its data. Adds one operation of `data_bytes` to
 * *bytes and says whether the epoch still fits NBRMA_WHOLE_EPOCH_MAX_BYTES
 * (once false, the epoch travels by the lock protocol). */
bool nbrma_whole_epoch_plan_add(size_t *bytes, size_t data_bytes);

/* Writing: a buffer of data_offset(n_ops) + the spans of the operations'
 * data, then each operation in order. The header's protocol message gets its
 * kind here; the rest is the sender's to fill in (an epoch toward the own
 * rank is handed over without being sent). */
typedef struct {
    char *buf;
    uint32_t next;
    size_t data_offset;
} nbrma_whole_epoch_writer_t;

void nbrma_whole_epoch_writer_init(nbrma_whole_epoch_writer_t * writer, void *buf,
                                   uint32_t n_ops, size_t bytes);
void nbrma_whole_epoch_write(nbrma_whole_epoch_writer_t * writer,
                             const nbrma_whole_epoch_op_t * desc, const void *data,
                             size_t data_bytes);

/* The size in bytes of one element of `datatype`, or 0 if the receiving side
 * does not accept the type (not predefined, ...). */
typedef size_t(*nbrma_whole_epoch_type_size_fn) (int32_t datatype, void *arg);

/* Reading what a peer sent, `bytes` bytes: every operation is checked before
 * anything is returned: the header claims exactly `bytes` (at most the
 * maximum), the descriptors and every operation's data (count elements of
 * type_size) lie inside, kinds and counts are valid. Returns 0 and sets up the
 * reader if the epoch may be applied, -1 if not. */
typedef struct {
    const char *buf;
    uint32_t n_ops, next;
    size_t data_offset;
    nbrma_whole_epoch_type_size_fn type_size;
    void *arg;
} nbrma_whole_epoch_reader_t;

int nbrma_whole_epoch_read_init(nbrma_whole_epoch_reader_t * reader, const void *buf,
                                size_t bytes, nbrma_whole_epoch_type_size_fn type_size,
                                void *arg);
/* The next operation and its data (*data_bytes long), or NULL after the last. */
const nbrma_whole_epoch_op_t *nbrma_whole_epoch_read(nbrma_whole_epoch_reader_t * reader,
                                                     const void **data, size_t *data_bytes);

#endif /* NBRMA_WHOLE_EPOCH_CODEC_H_INCLUDED */
