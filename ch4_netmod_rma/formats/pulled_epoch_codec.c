/*
 * mpich-nbrma: the byte layout of a pulled access epoch (pulled_epoch_codec.h).
 */

#include <string.h>
#include "pulled_epoch_codec.h"

size_t nbrma_pulled_epoch_bytes(size_t n_ops)
{
    return sizeof(nbrma_pulled_epoch_t) + n_ops * sizeof(nbrma_pulled_op_t);
}

bool nbrma_pulled_epoch_claim_fits(uint32_t bytes)
{
    return bytes >= sizeof(nbrma_pulled_epoch_t) &&
        bytes <= nbrma_pulled_epoch_bytes(NBRMA_PULLED_EPOCH_MAX_OPS);
}

nbrma_pulled_op_t *nbrma_pulled_epoch_init(void *buf, uint32_t n_ops)
{
    nbrma_pulled_epoch_t *pulled = buf;

    memset(&pulled->ctrl, 0, sizeof(pulled->ctrl));
    pulled->n_ops = n_ops;
    pulled->bytes = (uint32_t) nbrma_pulled_epoch_bytes(n_ops);
    return (nbrma_pulled_op_t *) (pulled + 1);
}

nbrma_pulled_op_t nbrma_pulled_op_of(const nbrma_whole_epoch_op_t * desc, uint64_t origin_addr)
{
    nbrma_pulled_op_t op = {
        .kind = desc->kind,
        .datatype = desc->datatype,
        .op = desc->op,
        .count = desc->count,
        .target_disp = desc->target_disp,
        .origin_addr = origin_addr
    };
    return op;
}

const nbrma_pulled_op_t *nbrma_pulled_epoch_check(const void *buf, size_t bytes,
                                                  nbrma_whole_epoch_type_size_fn type_size,
                                                  void *arg, uint32_t * n_ops)
{
    nbrma_pulled_epoch_t header;
    const nbrma_pulled_op_t *ops;

    if (bytes < sizeof(header))
        return NULL;
    memcpy(&header, buf, sizeof(header));
    if (header.ctrl.kind != NBRMA_CTRL_ACCESS_EPOCH || header.bytes != bytes ||
        header.n_ops > NBRMA_PULLED_EPOCH_MAX_OPS || bytes != nbrma_pulled_epoch_bytes(header.n_ops))
        return NULL;
    /* the buffer is the receiver's own copy, aligned by its allocator */
    ops = (const nbrma_pulled_op_t *) ((const char *) buf + sizeof(header));
    for (uint32_t i = 0; i < header.n_ops; i++) {
        size_t elem;

        if ((ops[i].kind != NBRMA_WHOLE_OP_PUT && ops[i].kind != NBRMA_WHOLE_OP_ACCUMULATE) ||
            ops[i].count < 0 || (elem = type_size(ops[i].datatype, arg)) == 0)
            return NULL;
        /* count < 2^31 and elem small: the product fits; the range must not wrap */
        if ((uint64_t) ops[i].count * elem > UINT64_MAX - ops[i].origin_addr)
            return NULL;
    }
    *n_ops = header.n_ops;
    return ops;
}
