// Flushes of passive target epochs (paper VII-C): what a flush waits for,
// the operations' completion reports that count it down, and the questions
// the glue and the activation ask about waiting flushes.
#include "engine_internal.hpp"
#include "nbrma_route.h"  // nbrma_message_stream

#include <algorithm>

namespace nbrma {

// Paper VII-C: a flush counts the operations older than itself; only those
// count it down, so newer operations never delay it. `count` operations of one
// age (a direct batch) count as many.
void engine::op_reached(completion what, int target, std::uint64_t age, std::uint64_t count)
{
    peer_access_state &peer = peer_access_[static_cast<std::size_t>(target)];
    peer.ops_outstanding[what] -= count;
    if (what == remote_completion && peer.ops_outstanding[what] == 0) {
        peer.last_burst = peer.burst;
        peer.burst = 0;
    }
    ops_outstanding_[what] -= count;
    auto done = std::remove_if(flushes_.begin(), flushes_.end(), [&](pending_flush &flush) {
        if (flush.waits_for != what || (flush.target != NBRMA_ALL_RANKS && flush.target != target) ||
            age > flush.age_stamp)
            return false;
        if (flush.remaining > count) {
            flush.remaining -= count;
            return false;
        }
        finish_request(flush.cookie);
        return true;
    });
    flushes_.erase(done, flushes_.end());
}

// The operations a flush toward `rank` (or all) has to wait for, or an error
// when no passive target epoch covers it.
int engine::flush_older(int rank, int local_only, std::uint64_t &older) const
{
    // Without local reports, a local flush waits for remote completion: a
    // stronger guarantee than asked for.
    const completion what = local_only ? local_completion : remote_completion;
    if (rank != NBRMA_ALL_RANKS && !valid_rank(rank))
        return NBRMA_ERR_RANK;
    const bool passive = open_lock_all_ ||
        (rank == NBRMA_ALL_RANKS ? open_lock_count_ != 0
                                 : peer_access_[static_cast<std::size_t>(rank)].open_lock != nullptr);
    if (!passive)
        return NBRMA_ERR_SYNC;
    older = rank == NBRMA_ALL_RANKS ? ops_outstanding_[what]
                                    : peer_access_[static_cast<std::size_t>(rank)].ops_outstanding[what];
    return NBRMA_OK;
}

int engine::iflush(int rank, int local_only, void *cookie)
{
    return run([&] {
        std::uint64_t older = 0;
        const int rc = flush_older(rank, local_only, older);
        if (rc != NBRMA_OK)
            return rc;
        const completion what = local_only ? local_completion : remote_completion;
        if (older == 0)
            finish_request(cookie);
        else
            flushes_.push_back(pending_flush{rank, what, op_age_, older, cookie});
        return NBRMA_OK;
    });
}

// Whether a flush waits for operations toward `rank`: one toward it or
// toward all.
bool engine::flush_waits_for(int rank) const
{
    for (const pending_flush &flush : flushes_)
        if (flush.target == rank || flush.target == NBRMA_ALL_RANKS)
            return true;
    return false;
}

bool engine::local_flush_waiting() const
{
    for (const pending_flush &flush : flushes_)
        if (flush.waits_for == local_completion)
            return true;
    return false;
}

// Rule R8's stream toward `target` (nbrma_op_in_stream, nbrma_message_stream)
// as the engine counts it: since none was outstanding there, and the burst
// before.
bool engine::in_stream(int target, std::uint64_t max) const
{
    if (!valid_rank(target))
        return false;
    const peer_access_state &peer = peer_access_[static_cast<std::size_t>(target)];
    return nbrma_message_stream(peer.burst, peer.last_burst, max);
}

int engine::flush_ready(int rank, int local_only, bool &ready) const
{
    std::uint64_t older = 0;
    const int rc = flush_older(rank, local_only, older);
    ready = rc == NBRMA_OK && older == 0;
    return rc;
}

}  // namespace nbrma
