// The target side and the wire: exposure grants (rule 3), the inbound
// protocol events (receive_* and the on_* entry points), lock grants, and the
// outbound messages with the loopback that handles those to my own rank.
#include "engine_internal.hpp"

namespace nbrma {

// Rule 3 on the target side.
void engine::grant_exposure(epoch &e, std::uint32_t s)
{
    target_slot &slot = e.slots[s];
    match_triple &triple = match_[static_cast<std::size_t>(slot.rank)];
    slot.match_id = ++triple.exposures_opened;
    locks_dirty_ = true;  // a lock request of that origin may be next in id order
    expected_dones_[done_key{slot.rank, slot.match_id}] = slot_ref{&e, s};
    send_grant(slot.rank, slot.match_id);
    auto early = early_pulled_.find(done_key{slot.rank, slot.match_id});
    if (early != early_pulled_.end()) {
        ready_pulled_.push_back(pulled_access{slot.rank, slot.match_id, early->second});
        early_pulled_.erase(early);
        dirty_ = true;
    }
}

// --- inbound events ----------------------------------------------------------

void engine::receive_grant(int from, std::uint64_t granted)
{
    match_[static_cast<std::size_t>(from)].raise_granted(granted);
    serve_grants(from);
}

void engine::receive_done(int from, std::uint64_t access_id)
{
    slot_ref ref;
    if (!expected_dones_.take(done_key{from, access_id}, &ref))
        throw protocol_failure{};
    target_slot &slot = ref.owner->slots[ref.slot];
    slot.granted = true;
    slot.finished = true;
    --ref.owner->unfinished_slots;
    complete_if_done(*ref.owner);
}

// A pulled access epoch (offer_pulled_access at the origin) is applied under
// the exposure it matches, once granted; until then it waits, by id.
void engine::receive_access_epoch(int from, std::uint64_t access_id, void *payload)
{
    payload_guard held(*this, payload);
    if (match_[static_cast<std::size_t>(from)].exposures_opened >= access_id) {
        if (!expected_dones_.find(done_key{from, access_id}))
            throw protocol_failure{};
        apply_pulled_access(from, access_id, held.take());
    } else if (early_pulled_.emplace(done_key{from, access_id}, held.get()).second) {
        held.take();
    } else {
        throw protocol_failure{};  // the same epoch twice
    }
}

// Applying stands for the origin's done; the origin hears of it even when an
// operation failed (it would wait forever otherwise), and the error is mine.
void engine::apply_pulled_access(int from, std::uint64_t access_id, void *payload)
{
    const int rc = transport_.apply_access_epoch(transport_.ctx, from, payload);
    receive_done(from, access_id);
    check_transport(transport_.send_access_applied(transport_.ctx, from, access_id));
    check_transport(rc);
}

void engine::receive_lock_request(int from, std::uint64_t access_id, bool exclusive, void *payload)
{
    payload_guard held(*this, payload);
    if (match_[static_cast<std::size_t>(from)].exposures_opened >= access_id)
        throw protocol_failure{};
    locks_.enqueue(lock_request{from, access_id, exclusive, held.get()});
    held.take();
    locks_dirty_ = true;
    dirty_ = true;
}

void engine::receive_lock_release(int from)
{
    const bool exclusive = locks_.exclusive_holder() == from;
    if (!locks_.release(from))
        throw protocol_failure{};
    release_own_word(exclusive);
    locks_dirty_ = true;
    dirty_ = true;
}

int engine::on_grant(int from, std::uint64_t granted)
{
    return run([&] {
        if (!valid_peer(from))
            return NBRMA_ERR_RANK;
        receive_grant(from, granted);
        return NBRMA_OK;
    });
}

int engine::on_done(int from, std::uint64_t access_id)
{
    return run([&] {
        if (!valid_peer(from))
            return NBRMA_ERR_RANK;
        receive_done(from, access_id);
        return NBRMA_OK;
    });
}

int engine::on_lock_request(int from, std::uint64_t access_id, int lock_type, void *payload)
{
    return run([&] {
        payload_guard held(*this, payload);
        if (!valid_peer(from))
            return NBRMA_ERR_RANK;
        if (!valid_lock_type(lock_type) || (payload && !transport_.apply_lock_epoch))
            return NBRMA_ERR_ARG;
        receive_lock_request(from, access_id, lock_type == NBRMA_LOCK_EXCLUSIVE, held.take());
        return NBRMA_OK;
    });
}

int engine::on_lock_release(int from, std::uint64_t access_id)
{
    (void) access_id;  // an origin holds at most one lock here at a time
    return run([&] {
        if (!valid_peer(from))
            return NBRMA_ERR_RANK;
        receive_lock_release(from);
        return NBRMA_OK;
    });
}

int engine::on_access_epoch(int from, std::uint64_t access_id, void *payload)
{
    return run([&] {
        payload_guard held(*this, payload);
        if (!valid_peer(from))
            return NBRMA_ERR_RANK;
        if (!transport_.apply_access_epoch || !transport_.send_access_applied)
            return NBRMA_ERR_ARG;
        receive_access_epoch(from, access_id, held.take());
        return NBRMA_OK;
    });
}

int engine::on_access_applied(int from, std::uint64_t access_id)
{
    return run([&] {
        if (!valid_peer(from))
            return NBRMA_ERR_RANK;
        receive_access_applied(from, access_id);
        return NBRMA_OK;
    });
}

int engine::on_fence_arrival(int from, std::uint64_t token)
{
    return run([&] {
        if (!valid_peer(from))
            return NBRMA_ERR_RANK;
        const std::uint64_t fence_seq = nbrma_fence_token_seq(token);
        const int round = nbrma_fence_token_round(token), index = nbrma_fence_token_index(token);
        // A peer can be at most one fence ahead of the barrier we wait for,
        // and each message of a round has one sender.
        if (fence_seq != fence_barrier_passed_ + 1 && fence_seq != fence_barrier_passed_ + 2)
            return NBRMA_ERR_INTERN;
        if (static_cast<std::size_t>(round) >= fence_round_count_ || index < 1 || index > 64 ||
            ((fence_rounds_[static_cast<std::size_t>(round)].messages >> (index - 1)) & 1) == 0)
            return NBRMA_ERR_INTERN;
        if (from != nbrma_fence_before(my_rank_, nprocs_,
                                       index * fence_rounds_[static_cast<std::size_t>(round)].stride))
            return NBRMA_ERR_INTERN;
        std::uint64_t &heard = fence_heard_[fence_seq & 1][static_cast<std::size_t>(round)];
        const std::uint64_t bit = std::uint64_t{1} << (index - 1);
        if (heard & bit)
            return NBRMA_ERR_INTERN;  // the same message twice
        heard |= bit;
        dirty_ = true;
        return NBRMA_OK;
    });
}

// --- lock grants -------------------------------------------------------------

// Lock grants share the matching counters (paper VII-B): a request with id A
// is granted only after every earlier access of that origin was granted, and
// never while the window is exposed.
void engine::grant_waiting_locks()
{
    locks_dirty_ = false;
    own_word_busy_ = false;
    if (locks_.waiting_count() == 0)
        return;  // most calls (each exposure's grant and completion): nothing waits
    locks_.grant_compatible(
        [&](const lock_request &request) {
            return active_exposures_ == 0 &&
                match_[static_cast<std::size_t>(request.origin)].exposures_opened + 1 == request.access_id;
        },
        [&](const lock_request &request) { return take_own_word(request.exclusive); },
        [&](const lock_request &request) { grant_lock(request); });
}

// Peers with a word lock it without me: a lock I grant by message takes my
// word too, or waits (progress tries again) while they hold it.
bool engine::take_own_word(bool exclusive)
{
    const int state = try_lock_word(my_rank_, exclusive);
    if (state == NBRMA_LOCK_BUSY)
        own_word_busy_ = true;
    if (state == NBRMA_LOCK_TAKEN)
        own_word_ = true;  // the transport has a word for me (for good)
    return state != NBRMA_LOCK_BUSY;
}

void engine::release_own_word(bool exclusive)
{
    if (own_word_)
        check_transport(transport_.unlock(transport_.ctx, my_rank_,
                                          exclusive ? NBRMA_LOCK_EXCLUSIVE : NBRMA_LOCK_SHARED));
}

void engine::grant_lock(const lock_request &request)
{
    match_[static_cast<std::size_t>(request.origin)].exposures_opened = request.access_id;
    if (request.payload) {
        // A whole epoch: its operations under the lock, then the release.
        // One the transport refuses (an operation outside the window: the
        // application's error, reported here) still ends its epoch: released
        // and granted, so that its origin does not wait forever for the grant.
        const int rc = transport_.apply_lock_epoch(transport_.ctx, request.origin, request.payload);
        locks_.release(request.origin);
        release_own_word(request.exclusive);
        locks_dirty_ = true;
        dirty_ = true;
        send_grant(request.origin, request.access_id);
        progressed_ = true;
        check_transport(rc);
        return;
    }
    send_grant(request.origin, request.access_id);
    progressed_ = true;
}

// --- outbound, with loopback for my own rank ---------------------------------

void engine::flush_loopback()
{
    while (!loopback_.empty()) {
        const loopback_message message = loopback_.front();
        loopback_.pop_front();
        switch (message.what) {
        case loopback_message::type::grant:
            receive_grant(my_rank_, message.id);
            break;
        case loopback_message::type::done:
            receive_done(my_rank_, message.id);
            break;
        case loopback_message::type::lock_request:
            receive_lock_request(my_rank_, message.id, message.exclusive, message.payload);
            break;
        case loopback_message::type::lock_release:
            receive_lock_release(my_rank_);
            break;
        }
    }
}

void engine::send_grant(int peer, std::uint64_t granted)
{
    if (peer == my_rank_)
        loopback_.push_back(loopback_message{loopback_message::type::grant, granted, false, nullptr});
    else
        check_transport(transport_.send_grant(transport_.ctx, peer, granted));
}

void engine::send_done(int peer, std::uint64_t id)
{
    if (peer == my_rank_)
        loopback_.push_back(loopback_message{loopback_message::type::done, id, false, nullptr});
    else
        check_transport(transport_.send_done(transport_.ctx, peer, id));
}

void engine::send_lock_request(int peer, std::uint64_t id, bool exclusive, void *payload)
{
    const int lock_type = exclusive ? NBRMA_LOCK_EXCLUSIVE : NBRMA_LOCK_SHARED;
    if (peer == my_rank_)
        loopback_.push_back(loopback_message{loopback_message::type::lock_request, id, exclusive, payload});
    else if (payload)
        check_transport(transport_.send_lock_epoch(transport_.ctx, peer, id, lock_type, payload));
    else
        check_transport(transport_.send_lock_request(transport_.ctx, peer, id, lock_type));
}

void engine::send_lock_release(int peer, std::uint64_t id)
{
    if (peer == my_rank_)
        loopback_.push_back(loopback_message{loopback_message::type::lock_release, id, false, nullptr});
    else
        check_transport(transport_.send_lock_release(transport_.ctx, peer, id));
}

}  // namespace nbrma
