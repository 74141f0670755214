// Epochs opened at application level and not activated yet, in open order.
// Activation is serial (rule 4), so only the head is ever a candidate.
#ifndef NBRMA_DEFERRED_EPOCH_QUEUE_HPP
#define NBRMA_DEFERRED_EPOCH_QUEUE_HPP

#include <memory>

#include "nbrma/epoch.hpp"
#include "nbrma/fifo.hpp"

namespace nbrma {

class deferred_epoch_queue {
  public:
    void push(std::unique_ptr<epoch> e) { queue_.push_back(std::move(e)); }
    bool empty() const { return queue_.empty(); }
    std::size_t size() const { return queue_.size(); }
    epoch &head() { return *queue_.front(); }
    const epoch *peek() const { return queue_.empty() ? nullptr : queue_.front().get(); }
    std::unique_ptr<epoch> pop_head()
    {
        std::unique_ptr<epoch> e = std::move(queue_.front());
        queue_.pop_front();
        return e;
    }

  private:
    fifo<std::unique_ptr<epoch>> queue_;
};

}  // namespace nbrma

#endif
