// The completion ledger's lists of endpoint flushes and outside parts
// (include/nbrma_ledger_flights.h): their growth and the kept open list,
// out of line (the rare paths of a blocking flush).

#include "nbrma_ledger_flights.h"
#include "reserve_one.hpp"

#include <cstdlib>

namespace {

// the list of the last wait that had open flushes (F2), for the next one;
// like the ledger, it lives as long as the process
nbrma_open_flush *spare_open;
size_t spare_open_cap;
// the same for the outside parts (F4)
nbrma_outside_part *spare_parts;
size_t spare_parts_cap;

} // namespace

extern "C" {

__attribute__((noinline, cold)) int nbrma_flights_grow(nbrma_flights *flights,
                                                        nbrma_open_flushes *open)
{
    bool ok = nbrma::reserve_one(flights->v, flights->n, flights->cap, 16);

    if (open->v == nullptr && spare_open) {
        open->v = spare_open;
        open->cap = spare_open_cap;
        spare_open = nullptr;
    }
    if (ok)
        ok = nbrma::reserve_one(open->v, open->n, open->cap, 4);
    return ok ? NBRMA_OK : NBRMA_ERR_NOMEM;
}

void nbrma_open_flushes_release(nbrma_open_flushes *open)
{
    if (open->v && spare_open == nullptr && open->cap <= 16) {
        spare_open = open->v;
        spare_open_cap = open->cap;
    } else {
        std::free(open->v);
    }
    *open = nbrma_open_flushes{};
}

__attribute__((noinline)) int nbrma_outside_parts_grow(nbrma_outside_parts *parts)
{
    if (parts->v == nullptr && spare_parts) {
        parts->v = spare_parts;
        parts->cap = spare_parts_cap;
        spare_parts = nullptr;
        return NBRMA_OK;
    }
    return nbrma::reserve_one(parts->v, parts->n, parts->cap, 2) ? NBRMA_OK : NBRMA_ERR_NOMEM;
}

void nbrma_outside_parts_free(nbrma_outside_parts *parts)
{
    if (parts->v && spare_parts == nullptr && parts->cap <= 16) {
        spare_parts = parts->v;
        spare_parts_cap = parts->cap;
    } else {
        std::free(parts->v);
    }
    *parts = nbrma_outside_parts{};
}

} // extern "C"
