// The O(1) matching state between this process and one peer (paper VII-B).
#ifndef NBRMA_MATCH_TRIPLE_HPP
#define NBRMA_MATCH_TRIPLE_HPP

#include <cstddef>
#include <cstdint>

namespace nbrma {

// One per peer r, whatever the number of pending epochs toward r. Only
// activated epochs change it, so its values say how far the two sides got,
// not how much is queued.
struct match_triple {
    std::uint64_t accesses_requested = 0;  // a_l: access ids I handed out toward r
    std::uint64_t exposures_opened = 0;    // e_l: accesses I granted to r (exposures and lock grants)
    // g_r: accesses r granted me. Written by r (message or remote write), so it is
    // read and written atomically; a grant of id A covers every id below A.
    std::uint64_t accesses_granted = 0;

    std::uint64_t granted() const { return __atomic_load_n(&accesses_granted, __ATOMIC_ACQUIRE); }
    void raise_granted(std::uint64_t value)
    {
        if (value > granted())
            __atomic_store_n(&accesses_granted, value, __ATOMIC_RELEASE);
    }
};

static_assert(sizeof(match_triple) == 3 * sizeof(std::uint64_t), "the triple is registered memory");

inline std::size_t granted_counter_offset(int writer_rank)
{
    return static_cast<std::size_t>(writer_rank) * sizeof(match_triple) +
        offsetof(match_triple, accesses_granted);
}

}  // namespace nbrma

#endif
