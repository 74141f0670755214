// Target side of passive-target synchronization: who holds this process's
// window lock and who waits for it.
#ifndef NBRMA_LOCK_MANAGER_HPP
#define NBRMA_LOCK_MANAGER_HPP

#include <cstdint>
#include <functional>
#include <list>
#include <unordered_map>

namespace nbrma {

struct lock_request {
    int origin;
    std::uint64_t access_id;
    bool exclusive;
    // A whole epoch's operations (transport.pack_lock_epoch): performed at the
    // grant, which releases the lock at once.
    void *payload = nullptr;
};

class lock_manager {
  public:
    void enqueue(const lock_request &request) { waiting_.push_back(request); }

    // Grants, in arrival order, every waiting request that is compatible with
    // the holders. `may_grant` adds the caller's conditions (FIFO id order,
    // window not exposed); `acquire`, asked only once the request would be
    // granted, takes what else the grant needs (the target's lock word) or
    // says it is busy; `grant` performs the grant. An exclusive request that
    // must wait stops later shared ones from overtaking it.
    void grant_compatible(const std::function<bool(const lock_request &)> &may_grant,
                          const std::function<bool(const lock_request &)> &acquire,
                          const std::function<void(const lock_request &)> &grant);

    // False if `origin` holds no lock here.
    bool release(int origin);

    bool is_locked() const { return exclusive_holder_ >= 0 || !shared_holders_.empty(); }
    bool holds(int origin) const
    {
        return exclusive_holder_ == origin || shared_holders_.count(origin) != 0;
    }
    int exclusive_holder() const { return exclusive_holder_; }
    std::size_t shared_holder_count() const { return shared_holders_.size(); }
    bool holds_shared(int origin) const { return shared_holders_.count(origin) != 0; }
    std::size_t waiting_count() const { return waiting_.size(); }
    template <class Visit> void for_each_waiting(Visit &&visit) const
    {
        for (const lock_request &request : waiting_)
            visit(request);
    }

  private:
    bool compatible(const lock_request &request) const;

    std::list<lock_request> waiting_;
    int exclusive_holder_ = -1;
    // origin -> shared grants held. An origin's next request may arrive before
    // the release of its previous lock, so one origin can briefly hold two.
    std::unordered_map<int, unsigned> shared_holders_;
};

}  // namespace nbrma

#endif
