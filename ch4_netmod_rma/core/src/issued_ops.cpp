// The issued operations of an engine window until its completion sweep
// reports them (include/nbrma_issued_ops.h): one array in issue order,
// grown with realloc by doubling from 64, and one byte per rank for the
// endpoints a sweep flushes, as the glue's own arrays were.

#include "nbrma_issued_ops.h"
#include "reserve_one.hpp"

#include <cstdlib>
#include <cstring>

namespace {

constexpr size_t first_cap = 64;

} // namespace

extern "C" {

nbrma_issued_ops *nbrma_issued_ops_create(int n_ranks)
{
    size_t ranks = n_ranks > 0 ? static_cast<size_t>(n_ranks) : 0;
    // the per-rank bytes follow the structure in its block: one allocation per window
    auto *ops = static_cast<nbrma_issued_ops *>(std::calloc(1, sizeof(nbrma_issued_ops) + ranks + 1));
    if (!ops)
        return nullptr;
    ops->n_ranks = static_cast<int>(ranks);
    ops->flush = reinterpret_cast<unsigned char *>(ops + 1);
    return ops;
}

void nbrma_issued_ops_destroy(nbrma_issued_ops *ops)
{
    if (!ops)
        return;
    std::free(ops->ops);
    std::free(ops);
}

int nbrma_issued_ops_grow(nbrma_issued_ops *ops)
{
    return nbrma::reserve_one(ops->ops, ops->n, ops->cap, first_cap) ? NBRMA_OK : NBRMA_ERR_NOMEM;
}

bool nbrma_issued_ops_snapshot(nbrma_issued_ops *ops)
{
    bool all_at_local = true;

    std::memset(ops->flush, 0, static_cast<size_t>(ops->n_ranks));
    for (size_t i = 0; i < ops->n; i++) {
        const nbrma_issued_op &op = ops->ops[i];
        if (op.by_endpoint && op.ticket.target >= 0 && op.ticket.target < ops->n_ranks)
            ops->flush[op.ticket.target] = 1;
        all_at_local &= op.complete_at_local;
    }
    return all_at_local;
}

bool nbrma_issued_ops_next_flush(const nbrma_issued_ops *ops, size_t *cursor, int *rank)
{
    for (; *cursor < static_cast<size_t>(ops->n_ranks); ++*cursor)
        if (ops->flush[*cursor]) {
            *rank = static_cast<int>((*cursor)++);
            return true;
        }
    return false;
}

size_t nbrma_issued_ops_sweep_started(nbrma_issued_ops *ops)
{
    ops->sweeping = true;
    ops->n_swept = ops->n;
    return ops->n_swept;
}

size_t nbrma_issued_ops_sweep_ended(nbrma_issued_ops *ops)
{
    ops->sweeping = false;
    return ops->n_swept;
}

void nbrma_issued_ops_forget_swept(nbrma_issued_ops *ops)
{
    const size_t n_done = ops->n_swept <= ops->n ? ops->n_swept : ops->n;
    ops->n -= n_done;
    std::memmove(ops->ops, ops->ops + n_done, ops->n * sizeof(nbrma_issued_op));
    ops->n_swept = 0;
}

}       // extern "C"
