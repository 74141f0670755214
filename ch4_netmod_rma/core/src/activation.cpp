// Activation and completion of epochs: the head of the deferred queue
// (rule 4), ordering_allows() with the reorder flags, resources_allow(), the
// fence barrier (rule 5), activate(), and complete_if_done() with the close
// stamps that ordering_allows() consults.
#include "engine_internal.hpp"

namespace nbrma {

// Rule 4: epochs activate in open order, and the scan stops at the first one
// that cannot (paper VII-A).
void engine::activate_ready_epochs()
{
    while (!deferred_.empty()) {
        epoch &head = deferred_.head();
        if (!ordering_allows(head) || !resources_allow(head))
            return;
        if (head.kind == epoch_kind::fence && !fence_barrier_reached(head))
            return;
        activate(deferred_.pop_head());
    }
}

// By default E(k+1) activates only after every earlier epoch that was closed
// before E(k+1) was opened completed. Epochs that overlap at application
// level (post+start, locks toward several targets) were concurrent under
// blocking MPI too, so they may be active together. The reorder flags relax
// the rest pairwise by side.
bool engine::ordering_allows(const epoch &head) const
{
    for (int side = 0; side < epoch_side_count; ++side) {
        const std::multiset<std::uint64_t> &stamps = closed_active_stamps_[side];
        if (!stamps.empty() && *stamps.begin() < head.seq &&
            !reorder_permits(static_cast<epoch_side>(side), head.side()))
            return false;
    }
    return true;
}

// The four flags of paper VI-B. Fence and lock_all sides never match, so the
// flags never apply next to them.
bool engine::reorder_permits(epoch_side earlier, epoch_side later) const
{
    unsigned needed = 0;
    if (earlier == epoch_side::origin && later == epoch_side::origin)
        needed = NBRMA_REORDER_ACCESS_AFTER_ACCESS;
    else if (earlier == epoch_side::target && later == epoch_side::origin)
        needed = NBRMA_REORDER_ACCESS_AFTER_EXPOSURE;
    else if (earlier == epoch_side::target && later == epoch_side::target)
        needed = NBRMA_REORDER_EXPOSURE_AFTER_EXPOSURE;
    else if (earlier == epoch_side::origin && later == epoch_side::target)
        needed = NBRMA_REORDER_EXPOSURE_AFTER_ACCESS;
    return needed != 0 && (reorder_flags_ & needed) != 0;
}

// Conditions beyond ordering: no recursive lock toward one target (reachable
// only through A_A_A_R), and a window is never exposed while locked, nor
// before a lock that its origin requested first.
bool engine::resources_allow(const epoch &head) const
{
    if (head.kind == epoch_kind::lock)
        return peer_access_[static_cast<std::size_t>(head.slots[0].rank)].active_lock_epochs == 0;
    if (head.kind == epoch_kind::exposure)
        return !locks_.is_locked() && !lock_request_precedes(head);
    return true;
}

// A lock request that waits here (my lock word busy, another exposure active
// under a reorder flag) with the next access id of an origin in this
// exposure's group is that origin's next epoch toward me: granting the
// exposure first would hand the lock's id to the exposure, and the origin
// would take my PSCW grant for its lock.
bool engine::lock_request_precedes(const epoch &exposure) const
{
    bool precedes = false;
    locks_.for_each_waiting([&](const lock_request &request) {
        if (match_[static_cast<std::size_t>(request.origin)].exposures_opened + 1 != request.access_id)
            return;
        for (const target_slot &slot : exposure.slots)
            precedes = precedes || slot.rank == request.origin;
    });
    return precedes;
}

// Rule 5: announce once that everything before this fence completed here,
// then wait until every process announced the same.
bool engine::fence_barrier_reached(epoch &head)
{
    const std::uint32_t parity = static_cast<std::uint32_t>(head.fence_seq & 1);
    if (!head.fence_arrival_sent) {
        head.fence_arrival_sent = true;
        fence_reached_ = head.fence_seq;
        for (int r = 0; r < nprocs_; ++r)
            if (r != my_rank_)
                check_transport(transport_.send_fence_arrival(transport_.ctx, r, head.fence_seq));
        ++fence_arrivals_[parity];
    }
    return fence_arrivals_[parity] == static_cast<std::uint32_t>(nprocs_);
}

void engine::activate(std::unique_ptr<epoch> owned)
{
    epoch &e = *owned;
    e.phase = epoch_phase::active;
    active_.push_back(std::move(owned));
    e.active_pos = std::prev(active_.end());
    progressed_ = true;
    if (e.closed)
        list_close_stamp(e);

    const std::uint32_t nslots = static_cast<std::uint32_t>(e.slots.size());
    switch (e.kind) {
    case epoch_kind::fence:
        fence_arrivals_[e.fence_seq & 1] = 0;
        for (std::uint8_t &arrived : fence_arrived_)
            arrived = static_cast<std::uint8_t>(arrived & ~(1u << (e.fence_seq & 1)));
        fence_barrier_passed_ = e.fence_seq;
        finish_request(e.open_cookie);
        for (std::uint32_t s = 0; s < nslots; ++s)
            slot_granted(e, s);
        break;
    case epoch_kind::access:
        for (std::uint32_t s = 0; s < nslots; ++s)
            request_access(e, s, false);
        break;
    case epoch_kind::lock:
    case epoch_kind::lock_all:
        for (std::uint32_t s = 0; s < nslots; ++s) {
            ++peer_access_[static_cast<std::size_t>(e.slots[s].rank)].active_lock_epochs;
            if (e.nocheck)
                slot_granted(e, s);
            else if (take_lock_word(e, s))
                continue;  // granted, or waiting for the word
            else if (e.kind == epoch_kind::lock && e.closed)
                request_access(e, s, true, pack_whole_lock_epoch(e, s));
            else
                request_access(e, s, true);
        }
        break;
    case epoch_kind::exposure:
        ++active_exposures_;
        for (std::uint32_t s = 0; s < nslots; ++s)
            grant_exposure(e, s);
        break;
    }
    complete_if_done(e);
}

// --- completion --------------------------------------------------------------

void engine::complete_if_done(epoch &e)
{
    if (e.phase != epoch_phase::active || !e.closed || e.unfinished_slots != 0)
        return;
    e.phase = epoch_phase::completed;
    if (e.close_stamp_listed)
        closed_active_stamps_[static_cast<int>(e.side())].erase(e.close_stamp_pos);
    e.close_stamp_listed = false;
    if (e.kind == epoch_kind::exposure) {
        --active_exposures_;
        locks_dirty_ = true;
    }
    finish_request(e.close_cookie);
    // Kept alive until the outermost call returns: callers may still hold e.
    retired_.push_back(std::move(*e.active_pos));
    active_.erase(e.active_pos);
    progressed_ = true;
    dirty_ = true;
}

void engine::list_close_stamp(epoch &e)
{
    e.close_stamp_pos = closed_active_stamps_[static_cast<int>(e.side())].insert(e.close_stamp);
    e.close_stamp_listed = true;
}

}  // namespace nbrma
