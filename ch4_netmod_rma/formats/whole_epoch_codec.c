/*
 * mpich-nbrma: writing and checked reading of whole lock epochs
 * (whole_epoch_codec.h). No MPICH here: unit tests build this file alone.
 */

#include "whole_epoch_codec.h"
#include <string.h>

#define ALIGNMENT 16

size_t nbrma_whole_epoch_span(size_t data_bytes)
{
    return (data_bytes + ALIGNMENT - 1) & ~(size_t) (ALIGNMENT - 1);
}

size_t nbrma_whole_epoch_data_offset(size_t n_ops)
{
    return nbrma_whole_epoch_span(sizeof(nbrma_whole_epoch_t) +
                                  n_ops * sizeof(nbrma_whole_epoch_op_t));
}

bool nbrma_whole_epoch_plan_add(size_t *bytes, size_t data_bytes)
{
    /* a size no epoch reaches, so that the sum cannot wrap */
    if (data_bytes > NBRMA_WHOLE_EPOCH_MAX_BYTES)
        *bytes = NBRMA_WHOLE_EPOCH_MAX_BYTES + 1;
    else
        *bytes += nbrma_whole_epoch_span(data_bytes);
    return *bytes <= NBRMA_WHOLE_EPOCH_MAX_BYTES;
}

void nbrma_whole_epoch_writer_init(nbrma_whole_epoch_writer_t * writer, void *buf,
                                   uint32_t n_ops, size_t bytes)
{
    nbrma_whole_epoch_t *epoch = buf;

    memset(epoch, 0, sizeof(*epoch));
    epoch->ctrl.kind = NBRMA_CTRL_LOCK_EPOCH;
    epoch->n_ops = n_ops;
    epoch->bytes = (uint32_t) bytes;
    writer->buf = buf;
    writer->next = 0;
    writer->data_offset = nbrma_whole_epoch_data_offset(n_ops);
}

void nbrma_whole_epoch_write(nbrma_whole_epoch_writer_t * writer,
                             const nbrma_whole_epoch_op_t * desc, const void *data,
                             size_t data_bytes)
{
    char *descs = writer->buf + sizeof(nbrma_whole_epoch_t);

    memcpy(descs + writer->next * sizeof(*desc), desc, sizeof(*desc));
    if (data_bytes > 0)
        memcpy(writer->buf + writer->data_offset, data, data_bytes);
    writer->data_offset += nbrma_whole_epoch_span(data_bytes);
    writer->next++;
}

/* The data size of an operation, or 0 with *ok cleared if it is invalid. */
static size_t op_data_bytes(const nbrma_whole_epoch_reader_t * reader,
                            const nbrma_whole_epoch_op_t * op, int *ok)
{
    size_t elem;

    *ok = 0;
    if (op->kind != NBRMA_WHOLE_OP_PUT && op->kind != NBRMA_WHOLE_OP_ACCUMULATE)
        return 0;
    if (op->count < 0 || op->count > NBRMA_WHOLE_EPOCH_MAX_BYTES)
        return 0;
    elem = reader->type_size(op->datatype, reader->arg);
    if (elem == 0 || elem > NBRMA_WHOLE_EPOCH_MAX_BYTES)
        return 0;
    *ok = 1;
    return (size_t) op->count * elem;
}

int nbrma_whole_epoch_read_init(nbrma_whole_epoch_reader_t * reader, const void *buf,
                                size_t bytes, nbrma_whole_epoch_type_size_fn type_size,
                                void *arg)
{
    nbrma_whole_epoch_t epoch;
    size_t offset;

    if (bytes < sizeof(epoch) || bytes > NBRMA_WHOLE_EPOCH_MAX_BYTES)
        return -1;
    memcpy(&epoch, buf, sizeof(epoch));
    if (epoch.ctrl.kind != NBRMA_CTRL_LOCK_EPOCH || epoch.bytes != bytes ||
        epoch.n_ops > (bytes - sizeof(epoch)) / sizeof(nbrma_whole_epoch_op_t))
        return -1;
    reader->buf = buf;
    reader->n_ops = epoch.n_ops;
    reader->next = 0;
    reader->type_size = type_size;
    reader->arg = arg;
    offset = nbrma_whole_epoch_data_offset(epoch.n_ops);
    for (uint32_t i = 0; i < epoch.n_ops; i++) {
        nbrma_whole_epoch_op_t op;
        int ok;
        size_t len;

        memcpy(&op, (const char *) buf + sizeof(epoch) + i * sizeof(op), sizeof(op));
        len = op_data_bytes(reader, &op, &ok);
        if (!ok || offset > bytes || len > bytes - offset)
            return -1;
        offset += nbrma_whole_epoch_span(len);
    }
    reader->data_offset = nbrma_whole_epoch_data_offset(epoch.n_ops);
    return 0;
}

const nbrma_whole_epoch_op_t *nbrma_whole_epoch_read(nbrma_whole_epoch_reader_t * reader,
                                                     const void **data, size_t *data_bytes)
{
    const nbrma_whole_epoch_op_t *op;
    int ok;

    if (reader->next == reader->n_ops)
        return NULL;
    op = (const nbrma_whole_epoch_op_t *) (reader->buf + sizeof(nbrma_whole_epoch_t)) +
        reader->next;
    *data_bytes = op_data_bytes(reader, op, &ok);
    *data = reader->buf + reader->data_offset;
    reader->data_offset += nbrma_whole_epoch_span(*data_bytes);
    reader->next++;
    return op;
}
