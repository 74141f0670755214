// Epoch objects: application-level life (open/closed) and internal life
// (deferred/active/completed) are separate fields because they advance
// independently (paper section VI).
#ifndef NBRMA_EPOCH_HPP
#define NBRMA_EPOCH_HPP

#include <cstdint>
#include <list>
#include <memory>
#include <vector>

namespace nbrma {

enum class epoch_kind : std::uint8_t { fence, access, exposure, lock, lock_all };

enum class epoch_phase : std::uint8_t { deferred, active, completed };

// What the reorder flags look at: origin side (start, lock), target side
// (post), fence (only origin-side epochs overtake one, under rule F1, see
// engine::reorder_permits) and lock_all, which never reorders.
enum class epoch_side : std::uint8_t { origin, target, fence, lock_all };
constexpr int epoch_side_count = 4;

inline epoch_side side_of(epoch_kind kind)
{
    switch (kind) {
    case epoch_kind::access:
    case epoch_kind::lock:
        return epoch_side::origin;
    case epoch_kind::exposure:
        return epoch_side::target;
    case epoch_kind::fence:
        return epoch_side::fence;
    case epoch_kind::lock_all:
        break;
    }
    return epoch_side::lock_all;
}

constexpr std::uint32_t no_index = UINT32_MAX;

// An operation recorded while its target could not be served yet; replayed
// in recording order. Its target is its slot's peer, except in a fence
// epoch, whose one slot stands for every process.
struct queued_op {
    void *record;
    std::uint64_t age;
    std::uint32_t next;
    std::int32_t target;
};

struct epoch;

struct slot_ref {
    epoch *owner = nullptr;
    std::uint32_t slot = 0;
};

// The epoch's relation with one peer, or, for a fence epoch, with every
// process at once (rank fence_slot_rank): its barrier grants them all
// together and its completion waits for its operations toward any of them,
// so one slot does, and a fence costs the same whatever the number of
// processes (rule G3).
constexpr std::int32_t fence_slot_rank = -2;  // not a rank

struct target_slot {
    std::int32_t rank = -1;
    // origin side: the peer granted match_id (or no grant is needed);
    // target side: the peer's done for match_id arrived.
    bool granted = false;
    // The peer was told the epoch is over for it (done or release sent).
    bool notified = false;
    // Nothing left to do toward this peer (notified and operations completed,
    // or, target side, done received).
    bool finished = false;
    std::uint64_t match_id = 0;
    std::uint64_t ops_outstanding = 0;  // recorded and not yet completed
    // Origin side: the epoch went whole with its lock request; the grant
    // means its operations were performed and the lock released. For an
    // access epoch: the peer pulls its operations, and its "applied" report
    // completes them.
    bool sent_whole = false;
    // Origin side of a pulled access epoch: the peer has not reported it
    // applied yet (also when it holds no operation).
    bool pull_pending = false;
    // Origin side of a lock: held in the peer's lock word (transport.try_lock),
    // not granted by its messages.
    bool lock_word = false;
    std::uint32_t queue_head = no_index;
    std::uint32_t queue_tail = no_index;
    slot_ref next_awaiting_grant;  // chain of slots waiting for the same peer's grant
};

// What an epoch is apart from its slots and its recorded operations, apart
// so that an epoch kept for reuse is reset by one assignment
// (engine::recycle_retired) and keeps its vectors' capacity.
struct epoch_state {
    std::uint64_t seq = 0;  // open order, 1-based
    epoch_kind kind = epoch_kind::fence;
    epoch_phase phase = epoch_phase::deferred;
    bool closed = false;  // application level
    // Opened before or while this epoch was open at application level: later
    // epochs opened before close_stamp overlap it (see engine::ordering_allows).
    std::uint64_t close_stamp = 0;
    bool exclusive = false;  // lock
    bool nocheck = false;    // lock, lock_all: no lock protocol at all
    std::uint32_t fence_rounds_sent = 0;  // fence: the barrier's rounds announced (rule 5)
    bool lazy = false;       // lock: waited in the deferred queue under rule L1
    bool tentative = false;  // fence: no operation yet, another epoch kind may end it
    std::uint64_t fence_seq = 0;
    void *open_cookie = nullptr;   // fence: completes when the barrier passes
    void *close_cookie = nullptr;  // completes with the epoch
    std::uint32_t unfinished_slots = 0;
    std::list<std::unique_ptr<epoch>>::iterator active_pos;
    bool close_stamp_listed = false;  // in engine::closed_active_stamps_
};

struct epoch : epoch_state {
    std::vector<target_slot> slots;
    std::vector<queued_op> queued_ops;

    epoch_side side() const { return side_of(kind); }
};

}  // namespace nbrma

#endif
