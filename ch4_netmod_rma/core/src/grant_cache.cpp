// The grant cache of one engine window (include/nbrma_grant_cache.h). Plain
// arrays grown with realloc: a count, a hand-over and a flush toward one
// target cost a few loads each, as the glue's own arrays did before.

#include "nbrma_grant_cache.h"
#include "nbrma_core.h"         // NBRMA_ALL_RANKS
#include "reserve_one.hpp"

#include <cstdlib>

namespace {

constexpr uint32_t entry_mask = ~NBRMA_GRANT_CACHE_GRANTED;
using entry = nbrma_grant_cache_entry;

bool in_window(const nbrma_grant_cache *cache, int rank)
{
    return rank >= 0 && rank < cache->n_ranks;
}

void remove_entry(nbrma_grant_cache *cache, size_t i)
{
    cache->state[cache->entries[i].rank] &= NBRMA_GRANT_CACHE_GRANTED;
    if (i + 1 != cache->n_entries) {
        cache->entries[i] = cache->entries[cache->n_entries - 1];
        uint32_t &moved = cache->state[cache->entries[i].rank];
        moved = (moved & NBRMA_GRANT_CACHE_GRANTED) | static_cast<uint32_t>(i + 1);
    }
    cache->n_entries--;
}

} // namespace

extern "C" {

nbrma_grant_cache *nbrma_grant_cache_create(int n_ranks)
{
    size_t ranks = n_ranks > 0 ? static_cast<size_t>(n_ranks) : 0;
    static_assert(sizeof(nbrma_grant_cache) % alignof(uint32_t) == 0, "state follows the structure");
    // the per-rank states follow the structure in its block: one allocation per window
    auto *cache = static_cast<nbrma_grant_cache *>(
        std::calloc(1, sizeof(nbrma_grant_cache) + (ranks + 1) * sizeof(uint32_t)));
    if (!cache)
        return nullptr;
    cache->n_ranks = static_cast<int>(ranks);
    cache->state = reinterpret_cast<uint32_t *>(cache + 1);
    return cache;
}

void nbrma_grant_cache_destroy(nbrma_grant_cache *cache)
{
    if (!cache)
        return;
    std::free(cache->granted);
    std::free(cache->entries);
    std::free(cache);
}

void nbrma_grant_cache_granted(nbrma_grant_cache *cache, int rank)
{
    if (!in_window(cache, rank) || (cache->state[rank] & NBRMA_GRANT_CACHE_GRANTED))
        return;
    // without memory the grant is not cached: the next operation asks the engine again
    if (!nbrma::reserve_one(cache->granted, cache->n_granted, cache->cap_granted, 4))
        return;
    cache->granted[cache->n_granted++] = rank;
    cache->state[rank] |= NBRMA_GRANT_CACHE_GRANTED;
}

bool nbrma_grant_cache_count_first(nbrma_grant_cache *cache, int rank, bool locally_complete,
                                   bool by_endpoint)
{
    if (!in_window(cache, rank))
        return false;
    if (!nbrma::reserve_one(cache->entries, cache->n_entries, cache->cap_entries, 4))
        return false;
    cache->entries[cache->n_entries++] = entry{rank, 1, !locally_complete, by_endpoint};
    cache->state[rank] |= static_cast<uint32_t>(cache->n_entries);
    return true;
}

bool nbrma_grant_cache_last_counted(nbrma_grant_cache *cache, int *rank, uint64_t *count,
                                    bool *locally_complete, bool *by_endpoint)
{
    while (cache->n_entries > 0 && cache->entries[cache->n_entries - 1].count == 0)
        remove_entry(cache, cache->n_entries - 1);
    if (cache->n_entries == 0)
        return false;
    const entry &e = cache->entries[cache->n_entries - 1];
    *rank = e.rank;
    *count = e.count;
    *locally_complete = e.not_local == 0;
    *by_endpoint = e.by_endpoint != 0;
    return true;
}

void nbrma_grant_cache_forget(nbrma_grant_cache *cache, int rank)
{
    const entry *e = nbrma_grant_cache_entry_of(cache, rank);
    if (e != nullptr)
        remove_entry(cache, static_cast<size_t>(e - cache->entries));
}

void nbrma_grant_cache_forget_grants(nbrma_grant_cache *cache)
{
    cache->all_granted = false;
    for (size_t i = 0; i < cache->n_granted; i++)
        cache->state[cache->granted[i]] &= entry_mask;
    cache->n_granted = 0;
}

void nbrma_grant_cache_flushed_all(nbrma_grant_cache *cache, bool local)
{
    for (size_t i = 0; i < cache->n_entries; i++)
        if (nbrma_grant_cache_covers(&cache->entries[i], NBRMA_ALL_RANKS, local))
            nbrma_grant_cache_entry_completed(&cache->entries[i]);
}

size_t nbrma_grant_cache_rank_bytes(void)
{
    return sizeof(uint32_t);
}

}       // extern "C"
