// The nonblocking-epoch engine: construction, run()'s settling loop and the
// plumbing of finished requests and transport errors, the engine-wide
// settings, the progress sweep and the queries. The rest of the engine:
//   application.cpp  opening and closing epochs at application level
//   activation.cpp   the deferred queue, activation and epoch completion
//   origin_side.cpp  access slots, operations and flushes
//   target_side.cpp  exposure and lock grants, inbound events, loopback
// Where each rule of the paper (SC14, section VI-A) lives:
//   rule 1 (any mix of blocking and nonblocking): every call is nonblocking;
//          the glue waits on the cookie for the blocking variants.
//   rule 2 (completion only via the request): close cookies complete in
//          complete_if_done() (activation.cpp).
//   rule 3 (FIFO matching): request_access(), serve_grants() (origin_side.cpp),
//          grant_exposure(), grant_lock() (target_side.cpp) with the per-peer
//          match_triple.
//   rule 4 (serial activation): activate_ready_epochs() + ordering_allows()
//          (activation.cpp).
//   rule 5 (fence barrier): fence_barrier_reached() (activation.cpp).
//   reorder flags: reorder_permits(), consulted only by ordering_allows()
//          (activation.cpp).
// run(), the template every entry point goes through, is in engine_internal.hpp.
#include "engine_internal.hpp"

namespace nbrma {

engine::engine(int my_rank, int nprocs, const nbrma_transport &transport)
    : my_rank_(my_rank), nprocs_(nprocs), transport_(transport),
      match_(static_cast<std::size_t>(nprocs)), peer_access_(static_cast<std::size_t>(nprocs)),
      fence_round_count_(static_cast<std::size_t>(nbrma_fence_rounds(nprocs)))
{
    static_assert(NBRMA_FENCE_RADIX == 64, "max_fence_rounds covers 64^6 processes");
    for (std::size_t j = 0; j < fence_round_count_; ++j)
        fence_rounds_[j] = fence_round{nbrma_fence_round_mask(nprocs, static_cast<int>(j)),
                                       nbrma_fence_stride(nprocs, static_cast<int>(j))};
}

engine::~engine()
{
    locks_.for_each_waiting([this](const lock_request &request) { drop_payload(request.payload); });
    for (const auto &early : early_pulled_)
        drop_payload(early.second);
    for (const pulled_access &ready : ready_pulled_)
        drop_payload(ready.payload);
    for (const loopback_message &message : loopback_)
        drop_payload(message.payload);
}

void engine::drop_payload(void *payload) const
{
    if (payload && transport_.drop_payload)
        transport_.drop_payload(transport_.ctx, payload);
}

void engine::settle()
{
    do {
        dirty_ = false;
        flush_loopback();
        while (!ready_pulled_.empty()) {
            const pulled_access pulled = ready_pulled_.back();
            ready_pulled_.pop_back();
            apply_pulled_access(pulled.from, pulled.id, pulled.payload);
        }
        if (locks_dirty_)
            grant_waiting_locks();
        activate_ready_epochs();
    } while (dirty_ || locks_dirty_ || !loopback_.empty() || !ready_pulled_.empty());
}

// Callbacks may call back in and finish more requests: this loop fires
// them too, in order, after those before them (an inner call's returns at
// once), by index, as the vector may grow meanwhile. Its storage is kept, so
// that one finished request per call (a flush, an unlock) does not cost an
// allocation each time.
void engine::fire_finished_requests()
{
    if (firing_ || finished_requests_.empty())
        return;
    firing_ = true;
    for (std::size_t i = 0; i < finished_requests_.size(); ++i)
        transport_.request_complete(transport_.ctx, finished_requests_[i], NBRMA_OK);
    finished_requests_.clear();
    firing_ = false;
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

int engine::progress(int *made_progress)
{
    progressed_ = false;
    const int rc = run([&] {
        poll_granted_counters();
        retry_lock_words();
        dirty_ = true;
        return NBRMA_OK;
    });
    if (made_progress)
        *made_progress = progressed_;
    return rc;
}

// --- queries -----------------------------------------------------------------

bool engine::has_pending_epochs() const
{
    // An active tentative fence epoch whose barrier passed holds nothing
    // back: MPI_Win_free after MPI_Win_fence(0) is fine.
    const bool tentative_fence_active =
        open_fence_ && open_fence_->tentative && open_fence_->phase == epoch_phase::active;
    const std::size_t holding = active_.size() - (tentative_fence_active ? 1 : 0);
    const bool open_besides_fence = open_access_ || open_exposure_ || open_lock_all_ || open_lock_count_ != 0;
    return !deferred_.empty() || fence_awaiting_barrier_ || holding != 0 || open_besides_fence ||
        (open_fence_ && !tentative_fence_active) || !flushes_.empty();
}

// What the application opened and has not closed; a fence epoch counts once an
// operation was recorded in it (a tentative one may be ended by Win_free).
bool engine::has_open_epochs() const
{
    return open_access_ || open_exposure_ || open_lock_all_ || open_lock_count_ != 0 ||
        (open_fence_ && !open_fence_->tentative);
}

// Rule G1: the open epoch is a fence epoch whose barrier passed, so every
// slot is granted (pass_fence_barrier) and nothing is queued (activation
// issued what was): operations toward any rank may go at once, and every
// operation goes to it (route) until the next synchronization call.
bool engine::fence_grants_every_rank() const
{
    return open_fence_ && open_fence_->phase == epoch_phase::active &&
        fence_awaiting_barrier_ != open_fence_;
}

std::size_t engine::per_peer_state_bytes() const
{
    return match_.capacity() * sizeof(match_triple) + peer_access_.capacity() * sizeof(peer_access_state);
}

const epoch *engine::exposure_expecting(int origin, std::uint64_t access_id) const
{
    const slot_ref *expected = expected_dones_.find(done_key{origin, access_id});
    return expected ? expected->owner : nullptr;
}

}  // namespace nbrma
