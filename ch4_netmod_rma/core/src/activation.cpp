// Activation and completion of epochs: the head of the deferred queue
// (rule 4), ordering_allows() with the reorder flags, resources_allow(), the
// fence barrier (rule 5), activate(), and complete_if_done() with the close
// stamps that ordering_allows() consults.
#include "engine_internal.hpp"

namespace nbrma {

// Rule F1: what lets access and lock epochs overtake a fence epoch, which is
// an access and an exposure epoch at once.
constexpr unsigned access_after_fence = NBRMA_REORDER_ACCESS_AFTER_ACCESS | NBRMA_REORDER_ACCESS_AFTER_EXPOSURE;

// Rule 4: epochs activate in open order, and the scan stops at the first one
// that cannot (paper VII-A). A fence at the head waits there for its barrier
// (rule 5), unless rule F1 lets it wait active, where later epochs may
// overtake it.
void engine::activate_ready_epochs()
{
    if (fence_awaiting_barrier_ && fence_barrier_reached(*fence_awaiting_barrier_)) {
        epoch &fence = *fence_awaiting_barrier_;
        fence_awaiting_barrier_ = nullptr;
        pass_fence_barrier(fence);
        complete_if_done(fence);
    }
    if (!locks_awaiting_arrival_.empty())
        begin_locks_after_arrivals();
    while (!deferred_.empty()) {
        epoch &head = deferred_.head();
        if (!ordering_allows(head) || !resources_allow(head))
            return;
        if (fence_awaiting_barrier_ && !head.closed)
            return;  // F1: only an epoch the application closed overtakes a fence
        if (head.kind == epoch_kind::fence && !fence_barrier_reached(head)) {
            if (!may_activate_before_barrier(head))
                return;
            activate(deferred_.pop_head(), false);
            continue;
        }
        if (lock_waits_lazily(head))
            return;
        activate(deferred_.pop_head());
    }
}

// Rule L1: a lock epoch whose lock travels as messages that the target's CPU
// answers (no lock word) waits at the head of the queue, unactivated, while
// it is open, nothing is queued behind it, no flush waits and everything it
// recorded could travel whole (transport.defer_lock); a flush toward another
// target (not flush_all) does not need it active. Closed, it activates
// whole (pack_whole_lock_epoch): lock, operations and release in one round
// trip instead of two or more. MPI lets a lock be acquired this late (the
// epoch's operations are performed at the target under the lock all the
// same). If it must activate while still open because of its own content (an
// operation that cannot travel whole, a flush), the guess was wrong: the
// lock's round trip now comes after the application's call instead of
// overlapping what it did since MPI_Win_lock, and later lock epochs toward
// that peer activate at once.
bool engine::lock_waits_lazily(epoch &head)
{
    if (head.kind != epoch_kind::lock || head.closed || head.nocheck)
        return false;
    const int peer = head.slots[0].rank;
    peer_access_state &peer_state = peer_access_[static_cast<std::size_t>(peer)];
    if (peer_state.eager_locks || peer == my_rank_ || deferred_.size() != 1 || !transport_.defer_lock ||
        !transport_.pack_lock_epoch || !transport_.send_lock_epoch || !transport_.apply_lock_epoch)
        return false;
    int defer = 0;
    if (!flush_waits_for(peer)) {
        collect_slot_records(head, 0);
        check_transport(transport_.defer_lock(transport_.ctx, peer,
                                              head.exclusive ? NBRMA_LOCK_EXCLUSIVE : NBRMA_LOCK_SHARED,
                                              whole_epoch_records_.data(), whole_epoch_records_.size(),
                                              &defer));
    }
    if ((!defer && head.lazy) || defer < 0)
        peer_state.eager_locks = true;  // a wrong guess, or never toward this peer
    head.lazy = defer > 0;
    return head.lazy;
}

// By default E(k+1) activates only after every earlier epoch that was closed
// before E(k+1) was opened completed. Epochs that overlap at application
// level (post+start, locks toward several targets) were concurrent under
// blocking MPI too, so they may be active together. The reorder flags relax
// the rest pairwise by side.
bool engine::ordering_allows(const epoch &head) const
{
    for (int side = 0; side < epoch_side_count; ++side) {
        const std::vector<std::uint64_t> &stamps = closed_active_stamps_[side];
        if (!stamps.empty() && stamps.front() < head.seq &&
            !reorder_permits(static_cast<epoch_side>(side), head.side()))
            return false;
    }
    return true;
}

// The four flags of paper VI-B, and rule F1 next to fences: a fence epoch is
// an access and an exposure epoch at once, toward and from every process, so
// an access or lock epoch may overtake an earlier one only where it may
// overtake both (A_A_A_R and A_A_E_R). Nothing overtakes toward a later fence
// (its arrival tells every process that all before it completed here), no
// exposure overtakes a fence (see may_activate_before_barrier), and lock_all
// never reorders.
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
    else if (earlier == epoch_side::fence && later == epoch_side::origin)
        needed = access_after_fence;
    return needed != 0 && (reorder_flags_ & needed) == needed;
}

// Rule F1: a fence epoch that holds no operation and is closed (a NOSUCCEED
// fence, or fence(0) ended by the next epoch) may activate while its barrier
// is still missing arrivals, when this process lets access and lock epochs
// overtake fences: it then waits active, its request and its slots held until
// the barrier passes (pass_fence_barrier), and ordering_allows lets later
// access and lock epochs activate beside it. Its arrival has gone, so what
// they do comes after the fence for every process. The flags are this
// process's promise that those epochs touch nothing that the fence's epoch
// touched anywhere (the barrier is what would have ordered them). Exposures
// never overtake a fence: a lock request from before the fence may still be
// on its way, and a window exposed early would hold it back while the
// exposure's origins, without the flags, wait for that fence, and so for the
// lock's origin: a cycle. A fence with operations is followed by nothing but
// another fence, which never overtakes.
bool engine::may_activate_before_barrier(const epoch &fence) const
{
    return fence.closed && fence.tentative && (reorder_flags_ & access_after_fence) == access_after_fence;
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

// Rule 5: announce that everything before this fence completed here, then
// wait until every process announced the same: a dissemination barrier
// (nbrma_fence_barrier.h), each round's messages once every message of the
// round before was heard.
bool engine::fence_barrier_reached(epoch &head)
{
    const std::size_t rounds = fence_round_count_;
    fence_reached_ = head.fence_seq;
    while (head.fence_rounds_sent < rounds &&
           (head.fence_rounds_sent == 0 || fence_round_heard(head.fence_seq, head.fence_rounds_sent - 1u))) {
        const std::uint32_t round = head.fence_rounds_sent++;
        for (std::uint64_t left = fence_rounds_[round].messages; left != 0; left &= left - 1) {
            const int index = __builtin_ctzll(left) + 1;
            const int to = nbrma_fence_after(my_rank_, nprocs_, index * fence_rounds_[round].stride);
            const std::uint64_t token = nbrma_fence_token(head.fence_seq, static_cast<int>(round), index);
            check_transport(transport_.send_fence_arrival(transport_.ctx, to, token));
        }
    }
    return rounds == 0 || (head.fence_rounds_sent == rounds && fence_round_heard(head.fence_seq, rounds - 1));
}

// Rule 5 passed: what the fence's activation does, at once or, under F1, when
// its barrier passes later. Completes the ifence request and opens the slots.
void engine::pass_fence_barrier(epoch &fence)
{
    std::fill_n(fence_heard_[fence.fence_seq & 1], fence_round_count_, 0);
    fence_barrier_passed_ = fence.fence_seq;
    finish_request(fence.open_cookie);
    for (std::uint32_t s = 0; s < fence.slots.size(); ++s)
        slot_granted(fence, s);
}

// Whether `peer` announced its arrival at fence `fence_seq` (every epoch of
// its before that fence completed there): the barrier passed, or the message
// that covers the peer's distance was heard.
bool engine::arrived_at_fence(int peer, std::uint64_t fence_seq) const
{
    if (peer == my_rank_ || fence_barrier_passed_ >= fence_seq)
        return true;
    int round, index;
    nbrma_fence_covering(my_rank_, nprocs_, peer, &round, &index);
    return ((fence_heard_[fence_seq & 1][static_cast<std::size_t>(round)] >> (index - 1)) & 1) != 0;
}

// Rule F1: a lock epoch that overtook a fence asks each peer for its lock
// only once that peer arrived at the fence. Its epochs before the fence are
// complete then, an exposure among them too, which a lock taken earlier
// (in the peer's lock word, which its engine does not see) would have
// overlapped, or held back while the exposure's origins waited for the
// fence: a cycle. Peers that arrived serve the lock at once, late ones hold
// only the slots toward them.
void engine::begin_locks_after_arrivals()
{
    std::size_t kept = 0;
    for (std::size_t i = 0; i < locks_awaiting_arrival_.size(); ++i) {
        const lock_awaiting_arrival waiting = locks_awaiting_arrival_[i];
        epoch &e = *waiting.ref.owner;
        if (arrived_at_fence(e.slots[waiting.ref.slot].rank, waiting.fence_seq)) {
            begin_lock(e, waiting.ref.slot);
            complete_if_done(e);
        } else
            locks_awaiting_arrival_[kept++] = waiting;
    }
    locks_awaiting_arrival_.resize(kept);
}

// The lock protocol toward slot s's peer: none under NOCHECK, the peer's lock
// word, or a request, which carries the epoch's operations if it is closed
// already (a whole lock epoch).
void engine::begin_lock(epoch &e, std::uint32_t s)
{
    if (e.nocheck)
        slot_granted(e, s);
    else if (take_lock_word(e, s))
        return;  // granted, or waiting for the word
    else if (e.kind == epoch_kind::lock && e.closed)
        request_access(e, s, true, pack_whole_lock_epoch(e, s));
    else
        request_access(e, s, true);
}

void engine::activate(std::unique_ptr<epoch> owned, bool barrier_passed)
{
    epoch &e = *owned;
    e.phase = epoch_phase::active;
    if (spare_active_nodes_.empty()) {
        active_.push_back(std::move(owned));
    } else {
        active_.splice(active_.end(), spare_active_nodes_, spare_active_nodes_.begin());
        active_.back() = std::move(owned);
    }
    e.active_pos = std::prev(active_.end());
    progressed_ = true;

    const std::uint32_t nslots = static_cast<std::uint32_t>(e.slots.size());
    switch (e.kind) {
    case epoch_kind::fence:
        if (barrier_passed)
            pass_fence_barrier(e);
        else
            fence_awaiting_barrier_ = &e;
        break;
    case epoch_kind::access:
        for (std::uint32_t s = 0; s < nslots; ++s)
            request_access(e, s, false);
        break;
    case epoch_kind::lock:
    case epoch_kind::lock_all:
        for (std::uint32_t s = 0; s < nslots; ++s) {
            ++peer_access_[static_cast<std::size_t>(e.slots[s].rank)].active_lock_epochs;
            if (fence_awaiting_barrier_ && !arrived_at_fence(e.slots[s].rank, fence_awaiting_barrier_->fence_seq))
                locks_awaiting_arrival_.push_back({slot_ref{&e, s}, fence_awaiting_barrier_->fence_seq});
            else
                begin_lock(e, s);
        }
        break;
    case epoch_kind::exposure:
        ++active_exposures_;
        for (std::uint32_t s = 0; s < nslots; ++s)
            grant_exposure(e, s);
        break;
    }
    complete_if_done(e);
    list_close_stamp_if_active(e);
}

// --- completion --------------------------------------------------------------

void engine::complete_if_done(epoch &e)
{
    if (e.phase != epoch_phase::active || !e.closed || e.unfinished_slots != 0)
        return;
    e.phase = epoch_phase::completed;
    if (e.close_stamp_listed) {
        std::vector<std::uint64_t> &stamps = closed_active_stamps_[static_cast<int>(e.side())];
        stamps.erase(std::lower_bound(stamps.begin(), stamps.end(), e.close_stamp));
    }
    e.close_stamp_listed = false;
    if (e.kind == epoch_kind::exposure) {
        --active_exposures_;
        locks_dirty_ = true;
    }
    finish_request(e.close_cookie);
    // Kept alive until the outermost call returns: callers may still hold e.
    retired_.push_back(std::move(*e.active_pos));
    spare_active_nodes_.splice(spare_active_nodes_.end(), active_, e.active_pos);
    progressed_ = true;
    dirty_ = true;
}

// A closed epoch that stays active holds later ones back (ordering_allows):
// listed once its closing or activation is done, where nothing consults the
// list, so that an epoch completing at once is never listed and unlisted.
void engine::list_close_stamp_if_active(epoch &e)
{
    if (e.phase != epoch_phase::active || !e.closed)
        return;
    std::vector<std::uint64_t> &stamps = closed_active_stamps_[static_cast<int>(e.side())];
    stamps.insert(std::upper_bound(stamps.begin(), stamps.end(), e.close_stamp), e.close_stamp);
    e.close_stamp_listed = true;
}

}  // namespace nbrma
