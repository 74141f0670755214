// The nonblocking-epoch engine. Where each rule of the paper (SC14, section
// VI-A) lives:
//   rule 1 (any mix of blocking and nonblocking): every call is nonblocking;
//          the glue waits on the cookie for the blocking variants.
//   rule 2 (completion only via the request): close cookies complete in
//          complete_if_done().
//   rule 3 (FIFO matching): request_access(), grant_exposure(), grant_lock(),
//          serve_grants() with the per-peer match_triple.
//   rule 4 (serial activation): activate_ready_epochs() + ordering_allows().
//   rule 5 (fence barrier): fence_barrier_reached().
//   reorder flags: reorder_permits(), consulted only by ordering_allows().
#include "nbrma/engine.hpp"

#include <algorithm>
#include <new>

namespace nbrma {

namespace {

// Internal unwinding only: run() turns these into return codes.
struct transport_failure {
    int code;
};
struct protocol_failure {};

bool valid_lock_type(int lock_type)
{
    return lock_type == NBRMA_LOCK_EXCLUSIVE || lock_type == NBRMA_LOCK_SHARED;
}

}  // namespace

engine::engine(int my_rank, int nprocs, const nbrma_transport &transport)
    : my_rank_(my_rank), nprocs_(nprocs), transport_(transport),
      match_(static_cast<std::size_t>(nprocs)), traffic_(static_cast<std::size_t>(nprocs))
{
}

// Every public entry point goes through here: do the call, let everything
// that became possible happen, then report finished requests once the state
// is consistent (callbacks may call back in).
template <class Body> int engine::run(Body &&body)
{
    int rc;
    ++depth_;
    try {
        rc = body();
        if (rc == NBRMA_OK)
            settle();
    } catch (const transport_failure &failure) {
        rc = failure.code;
    } catch (const protocol_failure &) {
        rc = NBRMA_ERR_INTERN;
    } catch (const std::bad_alloc &) {
        rc = NBRMA_ERR_NOMEM;
    } catch (...) {
        rc = NBRMA_ERR_INTERN;
    }
    if (--depth_ == 0) {
        retired_.clear();
        fire_finished_requests();
    }
    return rc;
}

void engine::settle()
{
    do {
        dirty_ = false;
        flush_loopback();
        if (locks_dirty_)
            grant_waiting_locks();
        activate_ready_epochs();
    } while (dirty_ || locks_dirty_ || !loopback_.empty());
}

void engine::fire_finished_requests()
{
    if (finished_requests_.empty())
        return;
    // Callbacks may call back in and finish more requests: fire from a copy.
    std::vector<void *> finished;
    finished.swap(finished_requests_);
    for (void *cookie : finished)
        transport_.request_complete(transport_.ctx, cookie, NBRMA_OK);
    // Hand the storage back, so that one finished request per call (a flush,
    // an unlock) does not cost an allocation each time.
    if (finished_requests_.empty()) {
        finished.clear();
        finished_requests_.swap(finished);
    }
}

void engine::finish_request(void *cookie)
{
    if (cookie)
        finished_requests_.push_back(cookie);
}

void engine::check_transport(int rc) const
{
    if (rc != NBRMA_OK)
        throw transport_failure{rc};
}

int engine::set_reorder_flags(unsigned flags)
{
    const unsigned known = NBRMA_REORDER_ACCESS_AFTER_ACCESS | NBRMA_REORDER_ACCESS_AFTER_EXPOSURE |
        NBRMA_REORDER_EXPOSURE_AFTER_EXPOSURE | NBRMA_REORDER_EXPOSURE_AFTER_ACCESS;
    if (flags & ~known)
        return NBRMA_ERR_ARG;
    return run([&] {
        reorder_flags_ = flags;
        dirty_ = true;
        return NBRMA_OK;
    });
}

int engine::set_ordered_notifications(bool enabled)
{
    return run([&] {
        ordered_notifications_ = enabled;
        return NBRMA_OK;
    });
}

// --- opening and closing at application level ------------------------------

int engine::check_group(const int *ranks, int nranks) const
{
    if (nranks < 0 || (nranks > 0 && !ranks))
        return NBRMA_ERR_ARG;
    std::vector<int> sorted(ranks, ranks + nranks);
    for (int r : sorted)
        if (!valid_rank(r))
            return NBRMA_ERR_RANK;
    std::sort(sorted.begin(), sorted.end());
    if (std::adjacent_find(sorted.begin(), sorted.end()) != sorted.end())
        return NBRMA_ERR_ARG;
    return NBRMA_OK;
}

bool engine::any_epoch_open() const
{
    return open_fence_ || open_access_ || open_exposure_ || open_lock_all_ || !open_locks_.empty();
}

// A fence without NOSUCCEED opens an epoch that is only tentative until an
// operation uses it (MPICH's REFENCE): programs may follow it with another
// kind of epoch, or free the window, as if NOSUCCEED had been given.
void engine::end_tentative_fence()
{
    if (!open_fence_ || !open_fence_->tentative)
        return;
    epoch &fence = *open_fence_;
    open_fence_ = nullptr;
    close_epoch(fence, nullptr);
}

std::unique_ptr<epoch> engine::make_epoch(epoch_kind kind)
{
    std::unique_ptr<epoch> e(new epoch);
    e->kind = kind;
    return e;
}

static void add_slots(epoch &e, const int *ranks, int nranks)
{
    e.slots.resize(static_cast<std::size_t>(nranks));
    for (int i = 0; i < nranks; ++i)
        e.slots[static_cast<std::size_t>(i)].rank = ranks[i];
}

static void add_slots_for_all(epoch &e, int nprocs)
{
    e.slots.resize(static_cast<std::size_t>(nprocs));
    for (int r = 0; r < nprocs; ++r)
        e.slots[static_cast<std::size_t>(r)].rank = r;
}

epoch &engine::open_epoch(std::unique_ptr<epoch> e)
{
    e->seq = ++epochs_opened_;
    e->unfinished_slots = static_cast<std::uint32_t>(e->slots.size());
    epoch &opened = *e;
    deferred_.push(std::move(e));
    return opened;
}

void engine::close_epoch(epoch &e, void *cookie)
{
    e.closed = true;
    // Epochs opened up to now overlap e; those opened later come after it.
    e.close_stamp = epochs_opened_;
    e.close_cookie = cookie;
    if (e.phase != epoch_phase::active)
        return;  // replayed on activation
    list_close_stamp(e);
    for (std::uint32_t s = 0; s < e.slots.size(); ++s)
        finish_slot_if_done(e, s);
    complete_if_done(e);
}

int engine::ifence(int assert_bits, void *cookie)
{
    return run([&] {
        if (open_access_ || open_exposure_ || open_lock_all_ || !open_locks_.empty())
            return NBRMA_ERR_SYNC;
        if (open_fence_) {
            epoch &previous = *open_fence_;
            open_fence_ = nullptr;
            close_epoch(previous, nullptr);
        }
        std::unique_ptr<epoch> f = make_epoch(epoch_kind::fence);
        f->fence_seq = ++fence_calls_;
        f->open_cookie = cookie;
        f->tentative = true;
        add_slots_for_all(*f, nprocs_);
        epoch &opened = open_epoch(std::move(f));
        // A NOSUCCEED fence still is a barrier; it just opens nothing after it.
        if (assert_bits & NBRMA_MODE_NOSUCCEED)
            close_epoch(opened, nullptr);
        else
            open_fence_ = &opened;
        return NBRMA_OK;
    });
}

// Post and start: one epoch of each may be open at a time, together (PSCW
// on both sides), but not with fence or passive target epochs.
int engine::open_group_epoch(epoch_kind kind, const int *ranks, int nranks, void *cookie)
{
    const int rc = check_group(ranks, nranks);
    if (rc != NBRMA_OK)
        return rc;
    end_tentative_fence();
    epoch *&open_same_kind = kind == epoch_kind::exposure ? open_exposure_ : open_access_;
    if (open_same_kind || open_fence_ || open_lock_all_ || !open_locks_.empty())
        return NBRMA_ERR_SYNC;
    std::unique_ptr<epoch> e = make_epoch(kind);
    add_slots(*e, ranks, nranks);
    if (kind == epoch_kind::access)
        for (int i = 0; i < nranks; ++i)
            traffic_[static_cast<std::size_t>(ranks[i])].open_access_slot = i;
    open_same_kind = &open_epoch(std::move(e));
    finish_request(cookie);
    return NBRMA_OK;
}

int engine::ipost(const int *ranks, int nranks, int assert_bits, void *cookie)
{
    (void) assert_bits;  // NOCHECK/NOSTORE/NOPUT: hints the engine does not need
    return run([&] { return open_group_epoch(epoch_kind::exposure, ranks, nranks, cookie); });
}

int engine::istart(const int *ranks, int nranks, int assert_bits, void *cookie)
{
    (void) assert_bits;  // NOCHECK: the grant is still needed to keep the counters in step
    return run([&] { return open_group_epoch(epoch_kind::access, ranks, nranks, cookie); });
}

int engine::icomplete(void *cookie)
{
    return run([&] {
        if (!open_access_)
            return NBRMA_ERR_SYNC;
        epoch &e = *open_access_;
        open_access_ = nullptr;
        for (const target_slot &slot : e.slots)
            traffic_[static_cast<std::size_t>(slot.rank)].open_access_slot = -1;
        close_epoch(e, cookie);
        return NBRMA_OK;
    });
}

int engine::iwait(void *cookie)
{
    return run([&] {
        if (!open_exposure_)
            return NBRMA_ERR_SYNC;
        epoch &e = *open_exposure_;
        open_exposure_ = nullptr;
        close_epoch(e, cookie);
        return NBRMA_OK;
    });
}

int engine::test(int *flag)
{
    if (!flag)
        return NBRMA_ERR_ARG;
    return run([&] {
        if (!open_exposure_)
            return NBRMA_ERR_SYNC;
        // MPI_Win_test is a progress call: whatever can advance does first.
        poll_granted_counters();
        settle();
        epoch &e = *open_exposure_;
        *flag = e.phase == epoch_phase::active && e.unfinished_slots == 0;
        if (*flag) {
            open_exposure_ = nullptr;
            close_epoch(e, nullptr);
        }
        return NBRMA_OK;
    });
}

int engine::ilock(int lock_type, int rank, int assert_bits, void *cookie)
{
    return run([&] {
        if (!valid_lock_type(lock_type))
            return NBRMA_ERR_ARG;
        if (!valid_rank(rank))
            return NBRMA_ERR_RANK;
        // MPI forbids locking a window that is exposed, and mixing passive
        // with active target access on one window.
        end_tentative_fence();
        if (open_fence_ || open_exposure_ || open_access_ || open_lock_all_ || open_locks_.count(rank))
            return NBRMA_ERR_SYNC;
        std::unique_ptr<epoch> e = make_epoch(epoch_kind::lock);
        e->exclusive = lock_type == NBRMA_LOCK_EXCLUSIVE;
        e->nocheck = (assert_bits & NBRMA_MODE_NOCHECK) != 0;
        add_slots(*e, &rank, 1);
        open_locks_[rank] = &open_epoch(std::move(e));
        finish_request(cookie);
        return NBRMA_OK;
    });
}

int engine::iunlock(int rank, void *cookie)
{
    return run([&] {
        if (!valid_rank(rank))
            return NBRMA_ERR_RANK;
        auto held = open_locks_.find(rank);
        if (held == open_locks_.end())
            return NBRMA_ERR_SYNC;
        epoch &e = *held->second;
        open_locks_.erase(held);
        close_epoch(e, cookie);
        return NBRMA_OK;
    });
}

int engine::ilock_all(int assert_bits, void *cookie)
{
    return run([&] {
        end_tentative_fence();
        if (any_epoch_open())
            return NBRMA_ERR_SYNC;
        std::unique_ptr<epoch> e = make_epoch(epoch_kind::lock_all);
        e->nocheck = (assert_bits & NBRMA_MODE_NOCHECK) != 0;
        add_slots_for_all(*e, nprocs_);
        open_lock_all_ = &open_epoch(std::move(e));
        finish_request(cookie);
        return NBRMA_OK;
    });
}

int engine::iunlock_all(void *cookie)
{
    return run([&] {
        if (!open_lock_all_)
            return NBRMA_ERR_SYNC;
        epoch &e = *open_lock_all_;
        open_lock_all_ = nullptr;
        close_epoch(e, cookie);
        return NBRMA_OK;
    });
}

// --- activation ---------------------------------------------------------------

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
// only through A_A_A_R), and a window is never exposed while locked.
bool engine::resources_allow(const epoch &head) const
{
    if (head.kind == epoch_kind::lock)
        return traffic_[static_cast<std::size_t>(head.slots[0].rank)].active_lock_epochs == 0;
    if (head.kind == epoch_kind::exposure)
        return !locks_.is_locked();
    return true;
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
            ++traffic_[static_cast<std::size_t>(e.slots[s].rank)].active_lock_epochs;
            if (e.nocheck)
                slot_granted(e, s);
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
    if (triple.granted() >= slot.match_id)
        slot_granted(e, s);
    else
        await_grant(e, s);
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
    whole_epoch_records_.clear();
    for (std::uint32_t i = slot.queue_head; i != no_index; i = e.queued_ops[i].next)
        whole_epoch_records_.push_back(e.queued_ops[i].record);
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

// Rule 3 on the target side.
void engine::grant_exposure(epoch &e, std::uint32_t s)
{
    target_slot &slot = e.slots[s];
    match_triple &triple = match_[static_cast<std::size_t>(slot.rank)];
    slot.match_id = ++triple.exposures_opened;
    locks_dirty_ = true;  // a lock request of that origin may be next in id order
    expected_dones_[done_key{slot.rank, slot.match_id}] = slot_ref{&e, s};
    send_grant(slot.rank, slot.match_id);
}

// --- slots, operations, completion --------------------------------------------

void engine::await_grant(epoch &e, std::uint32_t s)
{
    peer_traffic &peer = traffic_[static_cast<std::size_t>(e.slots[s].rank)];
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
    peer_traffic &traffic = traffic_[static_cast<std::size_t>(peer)];
    const std::uint64_t granted = match_[static_cast<std::size_t>(peer)].granted();
    while (traffic.awaiting_grant_head.owner) {
        const slot_ref ref = traffic.awaiting_grant_head;
        target_slot &slot = ref.owner->slots[ref.slot];
        if (slot.match_id > granted)
            break;
        traffic.awaiting_grant_head = slot.next_awaiting_grant;
        slot.next_awaiting_grant = slot_ref{};
        if (!traffic.awaiting_grant_head.owner)
            traffic.awaiting_grant_tail = slot_ref{};
        slot_granted(*ref.owner, ref.slot);
        complete_if_done(*ref.owner);
    }
}

// Replays the operations recorded for this peer while the epoch was deferred
// or not granted yet.
void engine::slot_granted(epoch &e, std::uint32_t s)
{
    target_slot &slot = e.slots[s];
    slot.granted = true;
    progressed_ = true;
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
        issue(e, s, op.record, op.age);
    }
    slot.queue_tail = no_index;
    finish_slot_if_done(e, s);
}

void engine::issue(epoch &e, std::uint32_t s, void *record, std::uint64_t age)
{
    const int target = e.slots[s].rank;
    const nbrma_op_ticket ticket{age, &e, s, target};
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
    const bool behind_data = ordered_notifications_ && slot.rank != my_rank_;
    if (!slot.notified && (behind_data || slot.ops_outstanding == 0)) {
        slot.notified = true;
        notify_end_of_epoch(e, slot);
    }
    if (slot.ops_outstanding != 0)
        return;
    slot.finished = true;
    --e.unfinished_slots;
    if (e.kind == epoch_kind::lock || e.kind == epoch_kind::lock_all) {
        --traffic_[static_cast<std::size_t>(slot.rank)].active_lock_epochs;
        dirty_ = true;
    }
}

void engine::notify_end_of_epoch(const epoch &e, const target_slot &slot)
{
    if (e.kind == epoch_kind::access)
        send_done(slot.rank, slot.match_id);
    else if ((e.kind == epoch_kind::lock || e.kind == epoch_kind::lock_all) && !e.nocheck)
        send_lock_release(slot.rank, slot.match_id);
}

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

slot_ref engine::route(int target)
{
    if (open_fence_)
        return slot_ref{open_fence_, static_cast<std::uint32_t>(target)};
    if (open_lock_all_)
        return slot_ref{open_lock_all_, static_cast<std::uint32_t>(target)};
    auto held = open_locks_.find(target);
    if (held != open_locks_.end())
        return slot_ref{held->second, 0};
    const std::int32_t s = traffic_[static_cast<std::size_t>(target)].open_access_slot;
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
            issue(e, where.slot, record, age);
            return NBRMA_OK;
        }
        const std::uint32_t index = static_cast<std::uint32_t>(e.queued_ops.size());
        e.queued_ops.push_back(queued_op{record, age, no_index});
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
std::uint64_t engine::count_op(epoch &e, target_slot &slot, int target)
{
    e.tentative = false;
    ++slot.ops_outstanding;
    for (int what : {local_completion, remote_completion}) {
        ++traffic_[static_cast<std::size_t>(target)].ops_outstanding[what];
        ++ops_outstanding_[what];
    }
    return ++op_age_;
}

// The common case of op_record without a record: the epoch is active and
// granted, so the operation would be issued at once anyway. Counting it
// changes nothing that activation or notification depends on, so the call
// skips run()'s settling and can neither throw nor complete a request.
int engine::op_issue_direct(int target, nbrma_op_ticket &ticket, bool &issued)
{
    issued = false;
    slot_ref where;
    if (const int rc = covering_slot(target, where); rc != NBRMA_OK)
        return rc;
    epoch &e = *where.owner;
    target_slot &slot = e.slots[where.slot];
    if (e.phase != epoch_phase::active || !slot.granted)
        return NBRMA_OK;
    ticket = nbrma_op_ticket{count_op(e, slot, target), &e, where.slot, target};
    issued = true;
    return NBRMA_OK;
}

// The ticket comes back from the glue: check what can be checked cheaply.
target_slot *engine::ticket_slot(const nbrma_op_ticket &ticket) const
{
    epoch *e = static_cast<epoch *>(ticket.epoch);
    if (!e || e->phase != epoch_phase::active || ticket.slot >= e->slots.size() || ticket.age > op_age_)
        return nullptr;
    target_slot &slot = e->slots[ticket.slot];
    return slot.ops_outstanding == 0 ? nullptr : &slot;
}

int engine::op_completed(const nbrma_op_ticket &ticket)
{
    return run([&] {
        target_slot *slot = ticket_slot(ticket);
        if (!slot)
            return NBRMA_ERR_ARG;
        epoch &e = *static_cast<epoch *>(ticket.epoch);
        --slot->ops_outstanding;
        if (!local_reports_)
            op_reached(local_completion, slot->rank, ticket.age);
        op_reached(remote_completion, slot->rank, ticket.age);
        finish_slot_if_done(e, ticket.slot);
        complete_if_done(e);
        return NBRMA_OK;
    });
}

int engine::op_local_completed(const nbrma_op_ticket &ticket)
{
    return run([&] {
        const target_slot *slot = ticket_slot(ticket);
        if (!local_reports_ || !slot)
            return NBRMA_ERR_ARG;
        op_reached(local_completion, slot->rank, ticket.age);
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

// Paper VII-C: a flush counts the operations older than itself; only those
// count it down, so newer operations never delay it.
void engine::op_reached(completion what, int target, std::uint64_t age)
{
    --traffic_[static_cast<std::size_t>(target)].ops_outstanding[what];
    --ops_outstanding_[what];
    auto done = std::remove_if(flushes_.begin(), flushes_.end(), [&](pending_flush &flush) {
        if (flush.waits_for != what || (flush.target != NBRMA_ALL_RANKS && flush.target != target) ||
            age > flush.age_stamp)
            return false;
        if (--flush.remaining != 0)
            return false;
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
    const bool passive = open_lock_all_ || (rank == NBRMA_ALL_RANKS ? !open_locks_.empty()
                                                                    : open_locks_.count(rank) != 0);
    if (!passive)
        return NBRMA_ERR_SYNC;
    older = rank == NBRMA_ALL_RANKS ? ops_outstanding_[what]
                                    : traffic_[static_cast<std::size_t>(rank)].ops_outstanding[what];
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

int engine::flush_ready(int rank, int local_only, bool &ready) const
{
    std::uint64_t older = 0;
    const int rc = flush_older(rank, local_only, older);
    ready = rc == NBRMA_OK && older == 0;
    return rc;
}

// --- inbound events -----------------------------------------------------------

void engine::receive_grant(int from, std::uint64_t granted)
{
    match_[static_cast<std::size_t>(from)].raise_granted(granted);
    serve_grants(from);
}

void engine::receive_done(int from, std::uint64_t access_id)
{
    auto expected = expected_dones_.find(done_key{from, access_id});
    if (expected == expected_dones_.end())
        throw protocol_failure{};
    const slot_ref ref = expected->second;
    expected_dones_.erase(expected);
    target_slot &slot = ref.owner->slots[ref.slot];
    slot.granted = true;
    slot.finished = true;
    --ref.owner->unfinished_slots;
    complete_if_done(*ref.owner);
}

void engine::receive_lock_request(int from, std::uint64_t access_id, bool exclusive, void *payload)
{
    if (match_[static_cast<std::size_t>(from)].exposures_opened >= access_id)
        throw protocol_failure{};
    locks_.enqueue(lock_request{from, access_id, exclusive, payload});
    locks_dirty_ = true;
    dirty_ = true;
}

void engine::receive_lock_release(int from)
{
    if (!locks_.release(from))
        throw protocol_failure{};
    locks_dirty_ = true;
    dirty_ = true;
}

int engine::on_grant(int from, std::uint64_t granted)
{
    return run([&] {
        if (!valid_rank(from))
            return NBRMA_ERR_RANK;
        receive_grant(from, granted);
        return NBRMA_OK;
    });
}

int engine::on_done(int from, std::uint64_t access_id)
{
    return run([&] {
        if (!valid_rank(from))
            return NBRMA_ERR_RANK;
        receive_done(from, access_id);
        return NBRMA_OK;
    });
}

int engine::on_lock_request(int from, std::uint64_t access_id, int lock_type, void *payload)
{
    return run([&] {
        if (!valid_rank(from))
            return NBRMA_ERR_RANK;
        if (!valid_lock_type(lock_type) || (payload && !transport_.apply_lock_epoch))
            return NBRMA_ERR_ARG;
        receive_lock_request(from, access_id, lock_type == NBRMA_LOCK_EXCLUSIVE, payload);
        return NBRMA_OK;
    });
}

int engine::on_lock_release(int from, std::uint64_t access_id)
{
    (void) access_id;  // an origin holds at most one lock here at a time
    return run([&] {
        if (!valid_rank(from))
            return NBRMA_ERR_RANK;
        receive_lock_release(from);
        return NBRMA_OK;
    });
}

int engine::on_fence_arrival(int from, std::uint64_t fence_seq)
{
    return run([&] {
        if (!valid_rank(from) || from == my_rank_)
            return NBRMA_ERR_RANK;
        // A peer can be at most one fence ahead of the barrier we wait for.
        if (fence_seq != fence_barrier_passed_ + 1 && fence_seq != fence_barrier_passed_ + 2)
            return NBRMA_ERR_INTERN;
        std::uint32_t &arrivals = fence_arrivals_[fence_seq & 1];
        if (arrivals == static_cast<std::uint32_t>(nprocs_))
            return NBRMA_ERR_INTERN;
        ++arrivals;
        dirty_ = true;
        return NBRMA_OK;
    });
}

// Grants may have been written into counter memory behind our back.
void engine::poll_granted_counters()
{
    std::size_t kept = 0;
    for (std::size_t i = 0; i < peers_awaiting_grant_.size(); ++i) {
        const int peer = peers_awaiting_grant_[i];
        serve_grants(peer);
        peer_traffic &traffic = traffic_[static_cast<std::size_t>(peer)];
        if (traffic.awaiting_grant_head.owner)
            peers_awaiting_grant_[kept++] = peer;
        else
            traffic.listed_awaiting_grant = false;
    }
    peers_awaiting_grant_.resize(kept);
}

int engine::progress(int *made_progress)
{
    progressed_ = false;
    const int rc = run([&] {
        poll_granted_counters();
        dirty_ = true;
        return NBRMA_OK;
    });
    if (made_progress)
        *made_progress = progressed_;
    return rc;
}

// --- target side -------------------------------------------------------------

// Lock grants share the matching counters (paper VII-B): a request with id A
// is granted only after every earlier access of that origin was granted, and
// never while the window is exposed.
void engine::grant_waiting_locks()
{
    locks_dirty_ = false;
    locks_.grant_compatible(
        [&](const lock_request &request) {
            return active_exposures_ == 0 &&
                match_[static_cast<std::size_t>(request.origin)].exposures_opened + 1 == request.access_id;
        },
        [&](const lock_request &request) { grant_lock(request); });
}

void engine::grant_lock(const lock_request &request)
{
    match_[static_cast<std::size_t>(request.origin)].exposures_opened = request.access_id;
    if (request.payload) {
        // A whole epoch: its operations under the lock, then the release.
        check_transport(transport_.apply_lock_epoch(transport_.ctx, request.origin, request.payload));
        locks_.release(request.origin);
        locks_dirty_ = true;
        dirty_ = true;
    }
    send_grant(request.origin, request.access_id);
    progressed_ = true;
}

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

// --- queries --------------------------------------------------------------------

bool engine::has_pending_epochs() const
{
    // An active tentative fence epoch holds nothing back: MPI_Win_free after
    // MPI_Win_fence(0) is fine.
    const bool tentative_fence_active =
        open_fence_ && open_fence_->tentative && open_fence_->phase == epoch_phase::active;
    const std::size_t holding = active_.size() - (tentative_fence_active ? 1 : 0);
    const bool open_besides_fence = open_access_ || open_exposure_ || open_lock_all_ || !open_locks_.empty();
    return !deferred_.empty() || holding != 0 || open_besides_fence ||
        (open_fence_ && !tentative_fence_active) || !flushes_.empty();
}

// What the application opened and has not closed; a fence epoch counts once an
// operation was recorded in it (a tentative one may be ended by Win_free).
bool engine::has_open_epochs() const
{
    return open_access_ || open_exposure_ || open_lock_all_ || !open_locks_.empty() ||
        (open_fence_ && !open_fence_->tentative);
}

std::size_t engine::per_peer_state_bytes() const
{
    return match_.capacity() * sizeof(match_triple) + traffic_.capacity() * sizeof(peer_traffic);
}

const epoch *engine::exposure_expecting(int origin, std::uint64_t access_id) const
{
    auto expected = expected_dones_.find(done_key{origin, access_id});
    return expected == expected_dones_.end() ? nullptr : expected->second.owner;
}

}  // namespace nbrma
