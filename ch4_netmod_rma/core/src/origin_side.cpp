// The origin side of active epochs: access ids and waiting for grants
// (rule 3), whole lock epochs, issuing queued and new operations, the end of
// an origin slot (done or release), operation completion reports (which
// count flushes down: flushes.cpp).
#include "engine_internal.hpp"

#include <algorithm>

namespace nbrma {

// Rule 3 on the origin side: access ids toward a peer are handed out in
// activation order, which is open order, so the k-th access meets the k-th
// grant of that peer.
void engine::request_access(epoch &e, std::uint32_t s, bool lock_protocol, void *payload)
{
    target_slot &slot = e.slots[s];
    match_triple &triple = match_[static_cast<std::size_t>(slot.rank)];
    slot.match_id = ++triple.accesses_requested;
    if (lock_protocol)
        send_lock_request(slot.rank, slot.match_id, e.exclusive, payload);
    if (triple.granted() >= slot.match_id) {
        slot_granted(e, s);
    } else {
        await_grant(e, s);
        offer_pulled_access(e, s);
    }
}

// A lock epoch that was closed while it waited in the deferred queue is
// known whole at its activation, which only a nonblocking unlock makes
// possible. If the transport packs its operations, they travel with the lock
// request and the target performs them when it grants the lock: one round
// trip, where the lock protocol needs the grant's, then the operations'
// completion before the release. Activation stays serial: the request leaves
// exactly when it would have left alone. Returns the payload, or nullptr.
void *engine::pack_whole_lock_epoch(epoch &e, std::uint32_t s)
{
    if (!transport_.pack_lock_epoch || !transport_.send_lock_epoch || !transport_.apply_lock_epoch)
        return nullptr;
    target_slot &slot = e.slots[s];
    collect_slot_records(e, s);
    void *payload = nullptr;
    check_transport(transport_.pack_lock_epoch(transport_.ctx, slot.rank,
                                               e.exclusive ? NBRMA_LOCK_EXCLUSIVE : NBRMA_LOCK_SHARED,
                                               whole_epoch_records_.data(), whole_epoch_records_.size(),
                                               &payload));
    if (!payload)
        return nullptr;
    // The records are the transport's now and their data is copied: the
    // operations are complete locally; remotely once the grant arrives.
    slot.sent_whole = true;
    for (std::uint32_t i = slot.queue_head; i != no_index; i = e.queued_ops[i].next) {
        e.queued_ops[i].record = nullptr;
        op_reached(local_completion, slot.rank, e.queued_ops[i].age);
    }
    return payload;
}

// The records queued toward slot s's peer, in recording order, into
// whole_epoch_records_ (kept, so that asking costs no allocation).
void engine::collect_slot_records(const epoch &e, std::uint32_t s)
{
    whole_epoch_records_.clear();
    for (std::uint32_t i = e.slots[s].queue_head; i != no_index; i = e.queued_ops[i].next)
        whole_epoch_records_.push_back(e.queued_ops[i].record);
}

// An access epoch closed before this peer's grant arrived: without help its
// operations would leave at my first progress call after the grant, however
// long I compute without calling MPI, and the peer's wait would last as long.
// If the transport lets the peer perform them without my CPU, they go to the
// peer now, with the access id: the peer applies them once its exposure with
// that id is granted, which stands for my done, and reports them applied.
// Matching is untouched: the id was taken in activation order and the grant
// still arrives and is still awaited.
void engine::offer_pulled_access(epoch &e, std::uint32_t s)
{
    target_slot &slot = e.slots[s];
    if (e.kind != epoch_kind::access || !e.closed || slot.granted || slot.sent_whole ||
        slot.rank == my_rank_ || !transport_.pack_access_epoch || !transport_.send_access_epoch)
        return;
    whole_epoch_records_.clear();
    for (std::uint32_t i = slot.queue_head; i != no_index; i = e.queued_ops[i].next)
        whole_epoch_records_.push_back(e.queued_ops[i].record);
    void *payload = nullptr;
    check_transport(transport_.pack_access_epoch(transport_.ctx, slot.rank, whole_epoch_records_.data(),
                                                 whole_epoch_records_.size(), &payload));
    if (!payload)
        return;
    // The records are the transport's now; the operations stay outstanding
    // (their origin buffers too) until the peer reports them applied.
    slot.sent_whole = true;
    slot.pull_pending = true;
    slot.notified = true;  // the payload is the done
    for (std::uint32_t i = slot.queue_head; i != no_index; i = e.queued_ops[i].next)
        e.queued_ops[i].record = nullptr;
    awaiting_applied_[done_key{slot.rank, slot.match_id}] = slot_ref{&e, s};
    check_transport(transport_.send_access_epoch(transport_.ctx, slot.rank, slot.match_id, payload));
}

void engine::receive_access_applied(int from, std::uint64_t access_id)
{
    auto awaited = awaiting_applied_.find(done_key{from, access_id});
    if (awaited == awaiting_applied_.end())
        throw protocol_failure{};
    const slot_ref ref = awaited->second;
    awaiting_applied_.erase(awaited);
    epoch &e = *ref.owner;
    target_slot &slot = e.slots[ref.slot];
    while (slot.queue_head != no_index) {
        const queued_op op = e.queued_ops[slot.queue_head];
        slot.queue_head = op.next;
        --slot.ops_outstanding;
        op_reached(local_completion, slot.rank, op.age);
        op_reached(remote_completion, slot.rank, op.age);
    }
    slot.queue_tail = no_index;
    slot.pull_pending = false;
    progressed_ = true;
    finish_slot_if_done(e, ref.slot);
    complete_if_done(e);
}

// --- waiting for grants, issuing, the end of a slot --------------------------

void engine::await_grant(epoch &e, std::uint32_t s)
{
    peer_access_state &peer = peer_access_[static_cast<std::size_t>(e.slots[s].rank)];
    const slot_ref ref{&e, s};
    if (peer.awaiting_grant_tail.owner)
        peer.awaiting_grant_tail.owner->slots[peer.awaiting_grant_tail.slot].next_awaiting_grant = ref;
    else
        peer.awaiting_grant_head = ref;
    peer.awaiting_grant_tail = ref;
    if (!peer.listed_awaiting_grant) {
        peer.listed_awaiting_grant = true;
        peers_awaiting_grant_.push_back(e.slots[s].rank);
    }
}

// Slots waiting for one peer are chained in id order, so a grant serves a
// prefix of the chain: O(1) per served slot, nothing for the others.
void engine::serve_grants(int peer)
{
    peer_access_state &access = peer_access_[static_cast<std::size_t>(peer)];
    const std::uint64_t granted = match_[static_cast<std::size_t>(peer)].granted();
    while (access.awaiting_grant_head.owner) {
        const slot_ref ref = access.awaiting_grant_head;
        target_slot &slot = ref.owner->slots[ref.slot];
        if (slot.match_id > granted)
            break;
        access.awaiting_grant_head = slot.next_awaiting_grant;
        slot.next_awaiting_grant = slot_ref{};
        if (!access.awaiting_grant_head.owner)
            access.awaiting_grant_tail = slot_ref{};
        slot_granted(*ref.owner, ref.slot);
        complete_if_done(*ref.owner);
    }
}

// Grants may have been written into counter memory behind our back.
void engine::poll_granted_counters()
{
    std::size_t kept = 0;
    for (std::size_t i = 0; i < peers_awaiting_grant_.size(); ++i) {
        const int peer = peers_awaiting_grant_[i];
        serve_grants(peer);
        peer_access_state &access = peer_access_[static_cast<std::size_t>(peer)];
        if (access.awaiting_grant_head.owner)
            peers_awaiting_grant_[kept++] = peer;
        else
            access.listed_awaiting_grant = false;
    }
    peers_awaiting_grant_.resize(kept);
}

// Replays the operations recorded for this peer while the epoch was deferred
// or not granted yet.
void engine::slot_granted(epoch &e, std::uint32_t s)
{
    target_slot &slot = e.slots[s];
    slot.granted = true;
    progressed_ = true;
    if (slot.sent_whole && e.kind == epoch_kind::access) {
        // The peer pulls the operations; its report completes them.
        finish_slot_if_done(e, s);
        return;
    }
    if (slot.sent_whole) {
        // The target performed the operations and released the lock.
        slot.notified = true;
        while (slot.queue_head != no_index) {
            const queued_op op = e.queued_ops[slot.queue_head];
            slot.queue_head = op.next;
            --slot.ops_outstanding;
            op_reached(remote_completion, slot.rank, op.age);
        }
    }
    while (slot.queue_head != no_index) {
        const queued_op op = e.queued_ops[slot.queue_head];
        slot.queue_head = op.next;
        issue(e, s, op.target, op.record, op.age);
    }
    slot.queue_tail = no_index;
    finish_slot_if_done(e, s);
}

void engine::issue(epoch &e, std::uint32_t s, int target, void *record, std::uint64_t age)
{
    const nbrma_op_ticket ticket{age, &e, s, target, 1};
    check_transport(transport_.issue_op(transport_.ctx, target, record, ticket));
}

// The peer is told (done for PSCW, release for locks) as soon as the epoch is
// closed, the peer granted access and every operation toward it completed, or
// merely was issued when the transport orders notifications behind data. The
// slot is finished once, in addition, its operations completed. Each peer is
// served on its own: no waiting for the epoch's other peers.
void engine::finish_slot_if_done(epoch &e, std::uint32_t s)
{
    target_slot &slot = e.slots[s];
    if (e.phase != epoch_phase::active || !e.closed || slot.finished || e.kind == epoch_kind::exposure)
        return;
    if (!slot.granted)
        return;
    // Notifications to myself take the loopback, which the transport's
    // ordering does not cover.
    const bool behind_data = ordered_notifications_ && slot.rank != my_rank_ && !slot.lock_word;
    if (!slot.notified && (behind_data || slot.ops_outstanding == 0)) {
        slot.notified = true;
        notify_end_of_epoch(e, slot);
    }
    if (slot.ops_outstanding != 0 || slot.pull_pending)
        return;
    slot.finished = true;
    --e.unfinished_slots;
    if (e.kind == epoch_kind::lock || e.kind == epoch_kind::lock_all) {
        --peer_access_[static_cast<std::size_t>(slot.rank)].active_lock_epochs;
        dirty_ = true;
    }
}

void engine::notify_end_of_epoch(const epoch &e, const target_slot &slot)
{
    if (e.kind == epoch_kind::access)
        send_done(slot.rank, slot.match_id);
    else if ((e.kind == epoch_kind::lock || e.kind == epoch_kind::lock_all) && slot.lock_word) {
        check_transport(transport_.unlock(transport_.ctx, slot.rank,
                                          e.exclusive ? NBRMA_LOCK_EXCLUSIVE : NBRMA_LOCK_SHARED));
        if (slot.rank == my_rank_)
            locks_dirty_ = true;  // a request by message may wait for my word
    }
    else if ((e.kind == epoch_kind::lock || e.kind == epoch_kind::lock_all) && !e.nocheck)
        send_lock_release(slot.rank, slot.match_id);
}

// --- operations --------------------------------------------------------------

slot_ref engine::route(int target)
{
    if (open_fence_)
        return slot_ref{open_fence_, 0};  // rule G3: its one slot
    if (open_lock_all_)
        return slot_ref{open_lock_all_, static_cast<std::uint32_t>(target)};
    if (epoch *held = peer_access_[static_cast<std::size_t>(target)].open_lock)
        return slot_ref{held, 0};
    const std::int32_t s = peer_access_[static_cast<std::size_t>(target)].open_access_slot;
    if (open_access_ && s >= 0)
        return slot_ref{open_access_, static_cast<std::uint32_t>(s)};
    return slot_ref{};
}

// The slot of the open epoch that covers an operation toward `target`.
int engine::covering_slot(int target, slot_ref &where)
{
    if (!valid_rank(target))
        return NBRMA_ERR_RANK;
    where = route(target);
    return where.owner ? NBRMA_OK : NBRMA_ERR_SYNC;
}

int engine::op_record(int target, void *record)
{
    return run([&] {
        slot_ref where;
        if (const int rc = covering_slot(target, where); rc != NBRMA_OK)
            return rc;
        epoch &e = *where.owner;
        target_slot &slot = e.slots[where.slot];
        const std::uint64_t age = count_op(e, slot, target);
        if (e.phase == epoch_phase::active && slot.granted) {
            issue(e, where.slot, target, record, age);
            return NBRMA_OK;
        }
        const std::uint32_t index = static_cast<std::uint32_t>(e.queued_ops.size());
        e.queued_ops.push_back(queued_op{record, age, no_index, target});
        if (slot.queue_tail != no_index)
            e.queued_ops[slot.queue_tail].next = index;
        else
            slot.queue_head = index;
        slot.queue_tail = index;
        return NBRMA_OK;
    });
}

// An operation enters its epoch: its age, and the counts that flushes and
// epoch completion wait on.
std::uint64_t engine::count_op(epoch &e, target_slot &slot, int target, std::uint64_t count)
{
    e.tentative = false;
    slot.ops_outstanding += count;
    peer_access_[static_cast<std::size_t>(target)].burst += count;
    for (int what : {local_completion, remote_completion}) {
        peer_access_[static_cast<std::size_t>(target)].ops_outstanding[what] += count;
        ops_outstanding_[what] += count;
    }
    return ++op_age_;
}

// The slot of the epoch covering an operation toward `target` where that
// epoch is active and granted there, else nullptr; `rc`: a wrong call's
// error (no epoch covers the target, a rank outside the window), or NBRMA_OK.
target_slot *engine::granted_slot(int target, slot_ref &where, int &rc)
{
    rc = covering_slot(target, where);
    if (rc != NBRMA_OK)
        return nullptr;
    target_slot &slot = where.owner->slots[where.slot];
    return where.owner->phase == epoch_phase::active && slot.granted ? &slot : nullptr;
}

// The common case of op_record without a record: the epoch is active and
// granted, so the operations would be issued at once anyway. Counting them
// changes nothing that activation or notification depends on, so the call
// skips run()'s settling and can neither throw nor complete a request. A batch
// shares one age: it was issued before any flush that will count it.
int engine::op_issue_direct(int target, std::uint64_t count, nbrma_op_ticket &ticket, bool &issued)
{
    slot_ref where;
    int rc;
    target_slot *slot = granted_slot(target, where, rc);
    issued = slot != nullptr;
    if (slot)
        ticket = nbrma_op_ticket{count_op(*where.owner, *slot, target, count), where.owner,
                                 where.slot, target, count};
    return rc;
}

// Rule G2: the first operation without a request toward a target goes
// uncounted (ticket.count 0) where its epoch is active and granted there and
// does not end toward it by a notice that must follow its operations (an
// access epoch toward a peer: rules R5 and R8 need the ticket): the glue's
// grant cache counts it then, as every later one, or nothing does (performed
// at return, R10), and the engine hears of it at the next synchronization
// call's hand-over, if ever. It uses the epoch (a fence epoch is no longer
// tentative). Otherwise as op_issue_direct with one operation.
int engine::op_issue_first(int target, nbrma_op_ticket &ticket, bool &issued)
{
    slot_ref where;
    int rc;
    target_slot *slot = granted_slot(target, where, rc);
    issued = slot != nullptr;
    if (!slot)
        return rc;
    epoch &e = *where.owner;
    const std::uint64_t count = e.kind == epoch_kind::access && target != my_rank_ ? 1 : 0;
    e.tentative = false;
    ticket = nbrma_op_ticket{count ? count_op(e, *slot, target, count) : 0, &e, where.slot, target,
                             count};
    return NBRMA_OK;
}

// The ticket comes back from the glue: check what can be checked cheaply.
// Its epoch is looked up among the active ones before it is touched: a
// ticket reported twice may name an epoch that completed and was freed.
target_slot *engine::ticket_slot(const nbrma_op_ticket &ticket) const
{
    epoch *e = nullptr;
    for (const std::unique_ptr<epoch> &active : active_)
        if (active.get() == ticket.epoch)
            e = active.get();
    if (!e || ticket.slot >= e->slots.size() || ticket.age > op_age_ || ticket.count == 0)
        return nullptr;
    target_slot &slot = e->slots[ticket.slot];
    const bool its_target =
        slot.rank == fence_slot_rank ? valid_rank(ticket.target) : slot.rank == ticket.target;
    return !its_target || slot.ops_outstanding < ticket.count ? nullptr : &slot;
}

int engine::op_completed(const nbrma_op_ticket &ticket, bool local_too)
{
    return run([&] {
        target_slot *slot = ticket_slot(ticket);
        if (!slot)
            return NBRMA_ERR_ARG;
        epoch &e = *static_cast<epoch *>(ticket.epoch);
        slot->ops_outstanding -= ticket.count;
        if (!local_reports_ || local_too)
            op_reached(local_completion, ticket.target, ticket.age, ticket.count);
        op_reached(remote_completion, ticket.target, ticket.age, ticket.count);
        finish_slot_if_done(e, ticket.slot);
        complete_if_done(e);
        return NBRMA_OK;
    });
}

// Rule R10 for an operation the engine counted (op_issue_direct): it was
// performed at its target when its call returned, so it leaves the counts at
// once, before any sweep. While its epoch is open and no flush waits,
// nothing can be waiting for it (a slot finishes only once its epoch is
// closed, and every later flush counts only what is outstanding when it is
// made): the counts drop as op_completed drops them (op_reached, which has
// no flush to count down then), without settling, which is the point of the
// call. Otherwise (another thread closed the epoch or flushes meanwhile) it
// is op_completed.
int engine::op_performed(const nbrma_op_ticket &ticket)
{
    target_slot *slot = ticket_slot(ticket);
    if (!slot)
        return NBRMA_ERR_ARG;
    if (static_cast<epoch *>(ticket.epoch)->closed || !flushes_.empty())
        return op_completed(ticket, true);
    slot->ops_outstanding -= ticket.count;
    op_reached(local_completion, ticket.target, ticket.age, ticket.count);
    op_reached(remote_completion, ticket.target, ticket.age, ticket.count);
    return NBRMA_OK;
}

// An access epoch (PSCW) ends toward a peer with the done, sent once its
// operations completed (finish_slot_if_done), and allows no flush: nothing
// else of the engine waits for their remote completion.
bool engine::ends_by_notice(const nbrma_op_ticket &ticket) const
{
    const target_slot *slot = ticket_slot(ticket);
    return slot && static_cast<const epoch *>(ticket.epoch)->kind == epoch_kind::access &&
           ticket.target != my_rank_;
}

int engine::op_local_completed(const nbrma_op_ticket &ticket)
{
    return run([&] {
        const target_slot *slot = ticket_slot(ticket);
        if (!local_reports_ || !slot)
            return NBRMA_ERR_ARG;
        op_reached(local_completion, ticket.target, ticket.age, ticket.count);
        return NBRMA_OK;
    });
}

int engine::set_local_completion_reports(bool enabled)
{
    return run([&] {
        // Switching with operations in flight would count some of them twice.
        if (ops_outstanding_[remote_completion] != 0)
            return NBRMA_ERR_ARG;
        local_reports_ = enabled;
        return NBRMA_OK;
    });
}

}  // namespace nbrma
