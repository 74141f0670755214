// A first-in first-out queue that allocates nothing before its first push.
// std::deque allocates its map and a 512-byte block when it is constructed:
// the engine's two queues cost four allocations and four frees at every
// window's creation and free, used or not (callgrind of an MPI_Win_create +
// MPI_Win_free loop). Here the items sit in one vector from a head index on;
// the vector is emptied (its capacity kept) whenever the queue drains, and
// compacted when more than half of it lies before the head, so that a queue
// that never drains stays at most twice its length.
#ifndef NBRMA_FIFO_HPP
#define NBRMA_FIFO_HPP

#include <cstddef>
#include <utility>
#include <vector>

namespace nbrma {

template <class T> class fifo {
  public:
    using const_iterator = typename std::vector<T>::const_iterator;

    bool empty() const { return head_ == items_.size(); }
    std::size_t size() const { return items_.size() - head_; }
    T &front() { return items_[head_]; }
    const T &front() const { return items_[head_]; }
    const_iterator begin() const { return items_.begin() + static_cast<std::ptrdiff_t>(head_); }
    const_iterator end() const { return items_.end(); }

    void push_back(T item) { items_.push_back(std::move(item)); }

    void pop_front()
    {
        items_[head_++] = T();  // what it owned goes now, not at the next compaction
        if (head_ == items_.size()) {
            items_.clear();
            head_ = 0;
        } else if (head_ > compact_after && head_ * 2 > items_.size()) {
            items_.erase(items_.begin(), items_.begin() + static_cast<std::ptrdiff_t>(head_));
            head_ = 0;
        }
    }

  private:
    static constexpr std::size_t compact_after = 32;
    std::vector<T> items_;
    std::size_t head_ = 0;
};

}  // namespace nbrma

#endif
