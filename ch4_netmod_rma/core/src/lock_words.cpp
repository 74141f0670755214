// Locks in lock words: a lock toward a peer whose word the transport reaches
// is taken there with no access id and no message, and retried from progress
// while the word is busy (README: lock words). The target side's own word,
// taken before a grant by message, is in target_side.cpp.
#include "engine_internal.hpp"

namespace nbrma {

int engine::try_lock_word(int peer, bool exclusive)
{
    int state = NBRMA_LOCK_BY_MESSAGE;
    if (transport_.try_lock && transport_.unlock)
        check_transport(transport_.try_lock(transport_.ctx, peer,
                                            exclusive ? NBRMA_LOCK_EXCLUSIVE : NBRMA_LOCK_SHARED, &state));
    if (state != NBRMA_LOCK_BY_MESSAGE && state != NBRMA_LOCK_BUSY && state != NBRMA_LOCK_TAKEN)
        throw transport_failure{NBRMA_ERR_INTERN};
    return state;
}

// A lock toward a peer whose lock word the transport reaches is taken there,
// without the peer's CPU and without an access id: the peer's engine never
// hears of it. False: the lock protocol's messages.
bool engine::take_lock_word(epoch &e, std::uint32_t s)
{
    target_slot &slot = e.slots[s];
    const int state = try_lock_word(slot.rank, e.exclusive);
    if (state == NBRMA_LOCK_BY_MESSAGE)
        return false;
    slot.lock_word = true;
    if (state == NBRMA_LOCK_TAKEN)
        slot_granted(e, s);
    else
        word_waiters_.push_back(slot_ref{&e, s});
    return true;
}

// From progress: busy words are tried again, in the order the locks waited.
void engine::retry_lock_words()
{
    std::size_t kept = 0;
    for (std::size_t i = 0; i < word_waiters_.size(); ++i) {
        const slot_ref ref = word_waiters_[i];
        const int state = try_lock_word(ref.owner->slots[ref.slot].rank, ref.owner->exclusive);
        if (state == NBRMA_LOCK_TAKEN) {
            slot_granted(*ref.owner, ref.slot);
            complete_if_done(*ref.owner);
        } else if (state == NBRMA_LOCK_BUSY) {
            word_waiters_[kept++] = ref;
        } else {
            throw transport_failure{NBRMA_ERR_INTERN};  // the word went away
        }
    }
    word_waiters_.resize(kept);
    if (own_word_busy_)
        locks_dirty_ = true;
}

}  // namespace nbrma
