// Room for one more element in an array grown with realloc, doubling from
// first_cap: the lists of the core's C tables (grant cache, issued
// operations, the ledger's flushes and outside parts) share this growth.
#ifndef NBRMA_RESERVE_ONE_HPP
#define NBRMA_RESERVE_ONE_HPP

#include <cstddef>
#include <cstdlib>

namespace nbrma {

// n used of cap; false without memory (the array stays as it was).
template <typename T> bool reserve_one(T *&v, std::size_t n, std::size_t &cap, std::size_t first_cap)
{
    if (n < cap)
        return true;
    const std::size_t new_cap = cap ? 2 * cap : first_cap;
    void *grown = std::realloc(v, new_cap * sizeof(T));
    if (grown == nullptr)
        return false;
    v = static_cast<T *>(grown);
    cap = new_cap;
    return true;
}

}  // namespace nbrma

#endif
