// The application's synchronization calls: opening and closing epochs at
// application level (ifence, ipost/istart/icomplete/iwait/test, ilock/iunlock,
// ilock_all/iunlock_all) with the checks of wrong use. A new epoch only
// enters the deferred queue here; activation.cpp takes it from there.
#include "engine_internal.hpp"

#include <algorithm>

namespace nbrma {

int engine::check_group(const int *ranks, int nranks) const
{
    if (nranks < 0 || (nranks > 0 && !ranks))
        return NBRMA_ERR_ARG;
    for (int i = 0; i < nranks; ++i)
        if (!valid_rank(ranks[i]))
            return NBRMA_ERR_RANK;
    // duplicates: pairwise for the few members of most groups (a PSCW pair,
    // a small neighbourhood), sorted in place for those of a stencil's
    // neighbourhood, which every PSCW epoch of a stencil has, without a heap
    // allocation
    constexpr int pairwise_group = 8;
    if (nranks <= pairwise_group) {
        for (int i = 1; i < nranks; ++i)
            for (int j = 0; j < i; ++j)
                if (ranks[i] == ranks[j])
                    return NBRMA_ERR_ARG;
        return NBRMA_OK;
    }
    constexpr int small_group = 32;
    int on_stack[small_group];
    std::vector<int> on_heap;
    int *sorted = on_stack;
    if (nranks > small_group) {
        on_heap.assign(ranks, ranks + nranks);
        sorted = on_heap.data();
    } else {
        std::copy(ranks, ranks + nranks, on_stack);
    }
    std::sort(sorted, sorted + nranks);
    if (std::adjacent_find(sorted, sorted + nranks) != sorted + nranks)
        return NBRMA_ERR_ARG;
    return NBRMA_OK;
}

bool engine::any_epoch_open() const
{
    return open_fence_ || open_access_ || open_exposure_ || open_lock_all_ || open_lock_count_ != 0;
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
    std::unique_ptr<epoch> e;
    if (spare_epochs_.empty()) {
        e.reset(new epoch);
    } else {
        e = std::move(spare_epochs_.back());
        spare_epochs_.pop_back();
    }
    e->kind = kind;
    return e;
}

// The epochs completed during the outermost call, once nobody holds them:
// a few are kept, reset but with the capacity of their slots and queues, so
// that an application that opens epoch after epoch (PSCW or lock rounds)
// does not allocate and free an epoch and its slots each time. Kept only up to
// spare_limit epochs of at most spare_slots slots each: the groups of PSCW
// neighbourhoods, single locks and fences (one slot, rule G3). A lock_all's
// epoch has one slot per process and is freed: kept, it cost every window
// 1 KiB per process on 16 ranks (window_memory.c, Pss after lock_all).
void engine::recycle_retired()
{
    constexpr std::size_t spare_limit = 2, spare_slots = 8;
    for (std::unique_ptr<epoch> &e : retired_) {
        if (spare_epochs_.size() >= spare_limit || e->slots.capacity() > spare_slots ||
            e->queued_ops.capacity() > spare_slots)
            continue;  // freed with retired_
        static_cast<epoch_state &>(*e) = epoch_state();
        e->slots.clear();
        e->queued_ops.clear();
        spare_epochs_.push_back(std::move(e));
    }
    retired_.clear();
}

// Slots appended one by one: a kept epoch has the room (no call to
// reserve), and resize() went out of line to value-initialize them (about
// 50 instructions per epoch).
static void make_room(epoch &e, int nslots)
{
    if (e.slots.capacity() < static_cast<std::size_t>(nslots))
        e.slots.reserve(static_cast<std::size_t>(nslots));
}

static void add_slots(epoch &e, const int *ranks, int nranks)
{
    make_room(e, nranks);
    for (int i = 0; i < nranks; ++i)
        e.slots.emplace_back().rank = ranks[i];
}

// What a fence call's new epoch is, made or renewed (F3): tentative, its
// request completing at its barrier, one slot for every process (G3).
static void start_fence_epoch(epoch &e, std::uint64_t fence_seq, void *cookie)
{
    e.fence_seq = fence_seq;
    e.open_cookie = cookie;
    e.tentative = true;
    make_room(e, 1);
    e.slots.emplace_back().rank = fence_slot_rank;
}

static void add_slots_for_all(epoch &e, int nprocs)
{
    make_room(e, nprocs);
    for (int r = 0; r < nprocs; ++r)
        e.slots.emplace_back().rank = r;
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
    for (std::uint32_t s = 0; s < e.slots.size(); ++s) {
        offer_pulled_access(e, s);
        finish_slot_if_done(e, s);
    }
    complete_if_done(e);
    list_close_stamp_if_active(e);
}

// Rule F2: everything before a fence called now is complete here, which its
// arrival announces (rule 5), when no epoch is queued or active but the open
// fence epoch (active: its barrier passed), no operation is outstanding
// anywhere (so none of that epoch either: closing it completes it at once)
// and no flush waits.
bool engine::nothing_outstanding_but_open_fence() const
{
    return deferred_.empty() && !fence_awaiting_barrier_ && flushes_.empty() &&
        ops_outstanding_[local_completion] == 0 && ops_outstanding_[remote_completion] == 0 &&
        (active_.empty() || (active_.size() == 1 && active_.front().get() == open_fence_));
}

// Rule F3: with nothing outstanding (F2) and the open fence epoch active (its
// barrier passed), closing that epoch would complete it at once, and the new
// fence epoch would wait for its barrier at the head of an empty queue. The
// new one is the open one renewed in place instead: it waits for its barrier
// active, its slot not granted and its request held, as a fence that rule
// F1 let activate early (activate_ready_epochs passes it), without the
// closing, retiring, queueing and activation in between. A NOSUCCEED fence
// takes the general path (it opens nothing).
bool engine::renew_open_fence(void *cookie)
{
    if (!open_fence_ || open_fence_->phase != epoch_phase::active ||
        !nothing_outstanding_but_open_fence())
        return false;
    epoch &f = *open_fence_;
    const std::list<std::unique_ptr<epoch>>::iterator position = f.active_pos;
    static_cast<epoch_state &>(f) = epoch_state();
    f.active_pos = position;
    f.phase = epoch_phase::active;
    f.seq = ++epochs_opened_;
    f.slots.clear();
    f.queued_ops.clear();
    start_fence_epoch(f, ++fence_calls_, cookie);
    f.unfinished_slots = 1;
    fence_awaiting_barrier_ = &f;
    progressed_ = true;
    fence_barrier_reached(f);
    return true;
}

int engine::ifence(int assert_bits, void *cookie)
{
    return run([&] {
        if (open_access_ || open_exposure_ || open_lock_all_ || open_lock_count_ != 0)
            return NBRMA_ERR_SYNC;
        if (!(assert_bits & NBRMA_MODE_NOSUCCEED) && renew_open_fence(cookie))
            return NBRMA_OK;
        std::unique_ptr<epoch> f = make_epoch(epoch_kind::fence);
        start_fence_epoch(*f, ++fence_calls_, cookie);
        // Rule 5 at once (F2): with nothing outstanding, the arrival leaves
        // before the previous epoch is closed and retired and the new one
        // queued, so that the peers' wait does not include that bookkeeping.
        if (nothing_outstanding_but_open_fence())
            fence_barrier_reached(*f);
        if (open_fence_) {
            epoch &previous = *open_fence_;
            open_fence_ = nullptr;
            close_epoch(previous, nullptr);
        }
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
    if (open_same_kind || open_fence_ || open_lock_all_ || open_lock_count_ != 0)
        return NBRMA_ERR_SYNC;
    std::unique_ptr<epoch> e = make_epoch(kind);
    add_slots(*e, ranks, nranks);
    if (kind == epoch_kind::access)
        for (int i = 0; i < nranks; ++i)
            peer_access_[static_cast<std::size_t>(ranks[i])].open_access_slot = i;
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
            peer_access_[static_cast<std::size_t>(slot.rank)].open_access_slot = -1;
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
        if (open_fence_ || open_exposure_ || open_access_ || open_lock_all_ ||
            peer_access_[static_cast<std::size_t>(rank)].open_lock)
            return NBRMA_ERR_SYNC;
        std::unique_ptr<epoch> e = make_epoch(epoch_kind::lock);
        e->exclusive = lock_type == NBRMA_LOCK_EXCLUSIVE;
        e->nocheck = (assert_bits & NBRMA_MODE_NOCHECK) != 0;
        add_slots(*e, &rank, 1);
        peer_access_[static_cast<std::size_t>(rank)].open_lock = &open_epoch(std::move(e));
        open_lock_count_++;
        finish_request(cookie);
        return NBRMA_OK;
    });
}

int engine::iunlock(int rank, void *cookie)
{
    return run([&] {
        if (!valid_rank(rank))
            return NBRMA_ERR_RANK;
        epoch *&held = peer_access_[static_cast<std::size_t>(rank)].open_lock;
        if (!held)
            return NBRMA_ERR_SYNC;
        epoch &e = *held;
        held = nullptr;
        open_lock_count_--;
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

}  // namespace nbrma
