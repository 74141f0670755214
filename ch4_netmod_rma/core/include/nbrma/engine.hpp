// The nonblocking-epoch engine of one window. See nbrma_core.h for the
// contract; this is the C++ side the C functions forward to.
//
// Life of an epoch. Application level and internal level move independently:
// an epoch can be closed while still deferred, or active while still open.
//
//     application:   open ----------------------------> closed
//                      |                                  |
//     internal:   deferred --(head of queue, rules)--> active --(closed, all
//                 (queued with its operations,          |     peers finished)--> completed
//                  replayed on activation)               |
//                                                     per peer slot:
//                                    origin side: wait grant -> issue ops -> notify (done/release)
//                                    target side: send grant -> wait done
//
// Only the head of the deferred queue is ever tried (rule 4), so activation
// order is open order, which is what makes the per-peer counters match FIFO
// (rule 3) with O(1) state per peer.
#ifndef NBRMA_ENGINE_HPP
#define NBRMA_ENGINE_HPP

#include <cstdint>
#include <list>
#include <memory>
#include <algorithm>
#include <unordered_map>
#include <vector>

#include "nbrma_core.h"
#include "nbrma_fence_barrier.h"
#include "nbrma/deferred_epoch_queue.hpp"
#include "nbrma/epoch.hpp"
#include "nbrma/fifo.hpp"
#include "nbrma/flat_map.hpp"
#include "nbrma/lock_manager.hpp"
#include "nbrma/match_triple.hpp"

namespace nbrma {

// What an operation report says: its origin buffer is free again (local),
// or it completed at the target (remote).
enum completion : int { local_completion = 0, remote_completion = 1 };

// Per-peer state of my access epochs toward that peer, other than matching:
// outstanding operations, slots awaiting its grant, locks held; fixed size
// like the triple.
struct peer_access_state {
    std::uint64_t ops_outstanding[2] = {0, 0};  // toward this peer, per completion, for iflush
    slot_ref awaiting_grant_head;         // oldest slot waiting for this peer's grant
    slot_ref awaiting_grant_tail;
    std::uint32_t active_lock_epochs = 0; // mine toward this peer: no recursive locking
    std::int32_t open_access_slot = -1;   // slot of this peer in the open start epoch
    epoch *open_lock = nullptr;           // my open lock epoch toward this peer
    bool listed_awaiting_grant = false;
    bool eager_locks = false;             // rule L1 guessed wrong toward this peer once
    // rule R8's stream: operations counted toward this peer since none was
    // outstanding (remotely), and how many the burst before that had
    std::uint64_t burst = 0;
    std::uint64_t last_burst = 0;
};

// A message to my own rank: handled by the engine itself, after the current
// event, so handlers never re-enter each other.
struct loopback_message {
    enum class type : std::uint8_t { grant, done, lock_request, lock_release } what;
    std::uint64_t id;
    bool exclusive;
    void *payload;  // lock_request of a whole epoch (transport.pack_lock_epoch)
};

struct pending_flush {
    int target;  // NBRMA_ALL_RANKS for all
    completion waits_for;
    std::uint64_t age_stamp;
    std::uint64_t remaining;  // older operations not completed yet
    void *cookie;
};

class engine {
  public:
    engine(int my_rank, int nprocs, const nbrma_transport &transport);
    ~engine();  // drops the payloads it still holds
    engine(const engine &) = delete;
    engine &operator=(const engine &) = delete;

    int set_reorder_flags(unsigned flags);
    int set_ordered_notifications(bool enabled);

    int ifence(int assert_bits, void *cookie);
    int ipost(const int *ranks, int nranks, int assert_bits, void *cookie);
    int istart(const int *ranks, int nranks, int assert_bits, void *cookie);
    int icomplete(void *cookie);
    int iwait(void *cookie);
    int test(int *flag);
    int ilock(int lock_type, int rank, int assert_bits, void *cookie);
    int iunlock(int rank, void *cookie);
    int ilock_all(int assert_bits, void *cookie);
    int iunlock_all(void *cookie);

    int op_record(int target, void *record);
    int op_issue_direct(int target, std::uint64_t count, nbrma_op_ticket &ticket, bool &issued);
    int op_issue_first(int target, nbrma_op_ticket &ticket, bool &issued);
    int op_completed(const nbrma_op_ticket &ticket, bool local_too = false);
    int op_performed(const nbrma_op_ticket &ticket);
    int op_local_completed(const nbrma_op_ticket &ticket);
    int set_local_completion_reports(bool enabled);
    int iflush(int rank, int local_only, void *cookie);
    int flush_ready(int rank, int local_only, bool &ready) const;
    bool in_stream(int target, std::uint64_t max) const;
    bool local_flush_waiting() const;
    bool ends_by_notice(const nbrma_op_ticket &ticket) const;

    int on_grant(int from, std::uint64_t granted);
    int on_done(int from, std::uint64_t access_id);
    int on_lock_request(int from, std::uint64_t access_id, int lock_type, void *payload = nullptr);
    int on_lock_release(int from, std::uint64_t access_id);
    int on_fence_arrival(int from, std::uint64_t token);
    int on_access_epoch(int from, std::uint64_t access_id, void *payload);
    int on_access_applied(int from, std::uint64_t access_id);
    int progress(int *made_progress);

    bool lock_attempts_pending() const { return !word_waiters_.empty() || own_word_busy_; }
    bool has_pending_epochs() const;
    bool has_open_epochs() const;
    bool fence_grants_every_rank() const;
    match_triple *counter_memory() { return match_.data(); }
    std::size_t counter_memory_bytes() const { return match_.size() * sizeof(match_triple); }

    // --- introspection for tests and the simulator ---
    int rank() const { return my_rank_; }
    int nprocs() const { return nprocs_; }
    const match_triple &triple(int peer) const { return match_[peer]; }
    std::size_t deferred_count() const { return deferred_.size(); }
    std::size_t active_count() const { return active_.size(); }
    const epoch *deferred_head() const { return deferred_.peek(); }
    std::vector<const epoch *> active_epochs() const
    {
        std::vector<const epoch *> list;
        for (const std::unique_ptr<epoch> &e : active_)
            list.push_back(e.get());
        return list;
    }
    // Bytes held for matching and per-peer bookkeeping (capacity, not size).
    std::size_t per_peer_state_bytes() const;
    const lock_manager &locks() const { return locks_; }
    std::uint32_t active_exposure_count() const { return active_exposures_; }
    std::uint64_t epochs_opened() const { return epochs_opened_; }
    std::uint64_t fence_barriers_passed() const { return fence_barrier_passed_; }
    std::uint64_t fences_reached() const { return fence_reached_; }
    // The active exposure epoch that expects `origin`'s done for `access_id`.
    const epoch *exposure_expecting(int origin, std::uint64_t access_id) const;

  private:
    struct done_key {
        std::int64_t origin;
        std::uint64_t id;
        bool operator==(const done_key &o) const { return origin == o.origin && id == o.id; }
    };
    struct done_key_hash {
        std::size_t operator()(const done_key &k) const
        {
            // Ids of one origin are consecutive: keep them in neighbouring buckets.
            return static_cast<std::size_t>(k.id ^ (static_cast<std::uint64_t>(k.origin) << 40));
        }
    };
    // For flat_map, which masks the low bits: the origins of a stencil's
    // round expect the same id, so the origin must reach the low bits too.
    struct done_key_mix {
        std::size_t operator()(const done_key &k) const
        {
            const std::uint64_t h = k.id * 0x9E3779B97F4A7C15ull ^
                static_cast<std::uint64_t>(k.origin) * 0xC2B2AE3D27D4EB4Full;
            return static_cast<std::size_t>(h ^ (h >> 29));
        }
    };

    class payload_guard;  // engine_internal.hpp
    void drop_payload(void *payload) const;

    template <class Body> int run(Body &&body);
    void settle();
    void fire_finished_requests();

    bool valid_rank(int r) const { return r >= 0 && r < nprocs_; }
    // The sender of an inbound event: another process of the window (my own
    // messages to myself never leave the engine: they come by loopback).
    bool valid_peer(int r) const { return valid_rank(r) && r != my_rank_; }
    int flush_older(int rank, int local_only, std::uint64_t &older) const;
    int check_group(const int *ranks, int nranks) const;
    bool any_epoch_open() const;
    void end_tentative_fence();
    bool nothing_outstanding_but_open_fence() const;
    bool renew_open_fence(void *cookie);
    std::unique_ptr<epoch> make_epoch(epoch_kind kind);
    void recycle_retired();
    epoch &open_epoch(std::unique_ptr<epoch> e);
    int open_group_epoch(epoch_kind kind, const int *ranks, int nranks, void *cookie);
    void close_epoch(epoch &e, void *cookie);
    slot_ref route(int target);
    target_slot *granted_slot(int target, slot_ref &where, int &rc);

    // activation (rules 2-5 and the reorder flags)
    void activate_ready_epochs();
    bool ordering_allows(const epoch &head) const;
    bool reorder_permits(epoch_side earlier, epoch_side later) const;
    bool resources_allow(const epoch &head) const;
    bool lock_request_precedes(const epoch &exposure) const;
    bool fence_barrier_reached(epoch &head);
    bool may_activate_before_barrier(const epoch &fence) const;
    void pass_fence_barrier(epoch &fence);
    bool arrived_at_fence(int peer, std::uint64_t fence_seq) const;
    void begin_locks_after_arrivals();
    void begin_lock(epoch &e, std::uint32_t s);
    void activate(std::unique_ptr<epoch> owned, bool barrier_passed = true);
    void request_access(epoch &e, std::uint32_t s, bool lock_protocol, void *payload = nullptr);
    void *pack_whole_lock_epoch(epoch &e, std::uint32_t s);
    bool lock_waits_lazily(epoch &head);
    bool flush_waits_for(int rank) const;
    void collect_slot_records(const epoch &e, std::uint32_t s);
    void offer_pulled_access(epoch &e, std::uint32_t s);
    void grant_exposure(epoch &e, std::uint32_t s);
    bool take_lock_word(epoch &e, std::uint32_t s);
    int try_lock_word(int peer, bool exclusive);
    void retry_lock_words();

    // slots and completion
    void await_grant(epoch &e, std::uint32_t s);
    void serve_grants(int peer);
    void poll_granted_counters();
    void slot_granted(epoch &e, std::uint32_t s);
    void issue(epoch &e, std::uint32_t s, int target, void *record, std::uint64_t age);
    int covering_slot(int target, slot_ref &where);
    std::uint64_t count_op(epoch &e, target_slot &slot, int target, std::uint64_t count = 1);
    void finish_slot_if_done(epoch &e, std::uint32_t s);
    void notify_end_of_epoch(const epoch &e, const target_slot &slot);
    void complete_if_done(epoch &e);
    void list_close_stamp_if_active(epoch &e);

    // target side
    void receive_done(int from, std::uint64_t access_id);
    void receive_lock_request(int from, std::uint64_t access_id, bool exclusive, void *payload);
    void receive_lock_release(int from);
    void receive_grant(int from, std::uint64_t granted);
    void receive_access_epoch(int from, std::uint64_t access_id, void *payload);
    void apply_pulled_access(int from, std::uint64_t access_id, void *payload);
    void receive_access_applied(int from, std::uint64_t access_id);
    void grant_waiting_locks();
    void grant_lock(const lock_request &request);
    bool take_own_word(bool exclusive);
    void release_own_word(bool exclusive);
    void flush_loopback();
    target_slot *ticket_slot(const nbrma_op_ticket &ticket) const;
    void op_reached(completion what, int target, std::uint64_t age, std::uint64_t count = 1);

    // outbound, with loopback for my own rank
    void send_done(int peer, std::uint64_t id);
    void send_lock_request(int peer, std::uint64_t id, bool exclusive, void *payload);
    void send_lock_release(int peer, std::uint64_t id);
    void send_grant(int peer, std::uint64_t granted);
    void check_transport(int rc) const;
    void finish_request(void *cookie);

    const int my_rank_;
    const int nprocs_;
    const nbrma_transport transport_;
    unsigned reorder_flags_ = 0;
    bool ordered_notifications_ = false;

    std::vector<match_triple> match_;
    std::vector<peer_access_state> peer_access_;

    deferred_epoch_queue deferred_;
    std::list<std::unique_ptr<epoch>> active_;
    // Nodes of active_ whose epoch completed, empty, for the next activation:
    // an epoch's activation and completion then allocate and free no node.
    std::list<std::unique_ptr<epoch>> spare_active_nodes_;
    std::vector<std::unique_ptr<epoch>> retired_;  // completed during this call
    // Completed epochs of few slots kept for the next ones (recycle_retired):
    // opening such an epoch then allocates neither the epoch nor its slots.
    std::vector<std::unique_ptr<epoch>> spare_epochs_;
    // The close stamps of the active epochs closed at application level, per
    // side, in ascending order: ordering_allows() reads the least. A sorted
    // vector rather than a multiset: epochs close in stamp order nearly
    // always (insertion at the end), few are listed at once, and a PSCW or
    // lock round then allocates no tree node.
    std::vector<std::uint64_t> closed_active_stamps_[epoch_side_count];
    std::uint64_t epochs_opened_ = 0;

    // application-level view, for error checking and routing of operations
    epoch *open_fence_ = nullptr;
    epoch *open_access_ = nullptr;
    epoch *open_exposure_ = nullptr;
    epoch *open_lock_all_ = nullptr;
    std::uint32_t open_lock_count_ = 0;  // peers whose open_lock is set

    // fence barrier: at most two consecutive fence numbers can be in flight
    std::uint64_t fence_calls_ = 0;
    std::uint64_t fence_barrier_passed_ = 0;
    std::uint64_t fence_reached_ = 0;  // last fence whose arrival I announced
    // The dissemination barrier (nbrma_fence_barrier.h), its answers kept
    // per round: the messages (bit index - 1) and the distance of index 1;
    // per fence_seq & 1 the messages heard for that fence, one mask per
    // round, so that a duplicate is refused rather than counted in place of
    // another
    struct fence_round {
        std::uint64_t messages;
        std::int64_t stride;
    };
    // in arrays, not vectors: a fence's barrier looks at them several times
    // (64^6 > INT_MAX processes: at most 6 rounds)
    static constexpr std::size_t max_fence_rounds = 6;
    std::size_t fence_round_count_ = 0;
    fence_round fence_rounds_[max_fence_rounds] = {};
    std::uint64_t fence_heard_[2][max_fence_rounds] = {};
    bool fence_round_heard(std::uint64_t fence_seq, std::size_t round) const
    {
        return fence_heard_[fence_seq & 1][round] == fence_rounds_[round].messages;
    }
    // A closed fence epoch activated before its barrier (rule F1), so that
    // later access and lock epochs may overtake it; at most one at a time.
    epoch *fence_awaiting_barrier_ = nullptr;
    // Slots of lock epochs that overtook fence fence_seq, until their peer
    // arrived there (begin_locks_after_arrivals).
    struct lock_awaiting_arrival {
        slot_ref ref;
        std::uint64_t fence_seq;
    };
    std::vector<lock_awaiting_arrival> locks_awaiting_arrival_;

    // target side
    lock_manager locks_;
    std::uint32_t active_exposures_ = 0;
    flat_map<done_key, slot_ref, done_key_mix> expected_dones_;
    fifo<loopback_message> loopback_;
    // pulled access epochs that arrived before my exposure with their id was
    // granted, and those of them whose exposure is granted now (settle()
    // applies them, outside the activation that granted it)
    std::unordered_map<done_key, void *, done_key_hash> early_pulled_;
    struct pulled_access {
        int from;
        std::uint64_t id;
        void *payload;
    };
    std::vector<pulled_access> ready_pulled_;
    // origin side: my slots whose pulled epoch the peer has yet to apply
    std::unordered_map<done_key, slot_ref, done_key_hash> awaiting_applied_;
    std::vector<int> peers_awaiting_grant_;
    // lock words: my lock slots waiting for a busy word, and whether a lock
    // request that arrived as a message waits for my own busy word
    std::vector<slot_ref> word_waiters_;
    bool own_word_busy_ = false;
    bool own_word_ = false;  // lock grants by message take my word too

    // operations and flushes
    std::uint64_t op_age_ = 0;
    std::uint64_t ops_outstanding_[2] = {0, 0};  // per completion
    bool local_reports_ = false;
    std::vector<pending_flush> flushes_;

    std::vector<void *> finished_requests_;
    bool firing_ = false;  // in fire_finished_requests
    // The records offered to transport.pack_lock_epoch; kept, like
    // finished_requests_, so that activating a lock epoch allocates only when
    // it holds more operations than any before.
    std::vector<void *> whole_epoch_records_;
    bool progressed_ = false;
    bool dirty_ = false;        // something happened that may let an epoch activate
    bool locks_dirty_ = false;  // ... or a waiting lock request be granted: the scan of
                                // waiting requests is not paid on every operation
    int depth_ = 0;
};

// The engine behind a C handle (defined with the C interface).
engine &engine_of(nbrma_engine *handle);

}  // namespace nbrma

#endif
