/*
 * mpich-nbrma: the lock word (lock_word.h).
 */

#include "lock_word.h"

#define HELD_OR_WANTED (NBRMA_LOCK_WORD_EXCLUSIVE | NBRMA_LOCK_WORD_WRITER_WAITING)
/* bits that do not keep a lock from being taken */
#define ONLY_WAITING (NBRMA_LOCK_WORD_WRITER_WAITING | NBRMA_LOCK_WORD_OWNER_WAITING)

static bool try_exclusive(uint64_t * word)
{
    uint64_t seen = __atomic_load_n(word, __ATOMIC_RELAXED);

    /* free but for waiting writers (this one among them): take it, clearing
     * the writers' bit (the others raise it again at their next try) and
     * keeping the owner's */
    if ((seen & ~ONLY_WAITING) == 0 &&
        __atomic_compare_exchange_n(word, &seen,
                                    NBRMA_LOCK_WORD_EXCLUSIVE |
                                    (seen & NBRMA_LOCK_WORD_OWNER_WAITING), false,
                                    __ATOMIC_ACQUIRE, __ATOMIC_RELAXED))
        return true;
    if (!(seen & NBRMA_LOCK_WORD_WRITER_WAITING))
        __atomic_fetch_or(word, NBRMA_LOCK_WORD_WRITER_WAITING, __ATOMIC_RELAXED);
    return false;
}

static bool try_shared(uint64_t * word)
{
    uint64_t before;

    if (__atomic_load_n(word, __ATOMIC_RELAXED) & HELD_OR_WANTED)
        return false;
    before = __atomic_fetch_add(word, 1, __ATOMIC_ACQUIRE);
    if (!(before & HELD_OR_WANTED))
        return true;
    /* a writer came first: step back out */
    __atomic_fetch_sub(word, 1, __ATOMIC_RELEASE);
    return false;
}

bool nbrma_lock_word_try(uint64_t * word, bool exclusive)
{
    return exclusive ? try_exclusive(word) : try_shared(word);
}

bool nbrma_lock_word_release(uint64_t * word, bool exclusive)
{
    uint64_t before = exclusive ?
        __atomic_fetch_and(word, ~NBRMA_LOCK_WORD_EXCLUSIVE, __ATOMIC_SEQ_CST) :
        __atomic_fetch_sub(word, 1, __ATOMIC_SEQ_CST);

    return (before & NBRMA_LOCK_WORD_OWNER_WAITING) &&
        (exclusive || (before & NBRMA_LOCK_WORD_SHARED_HOLDERS) == 1);
}

void nbrma_lock_word_owner_waits(uint64_t * word, bool waits)
{
    if (waits)
        __atomic_fetch_or(word, NBRMA_LOCK_WORD_OWNER_WAITING, __ATOMIC_SEQ_CST);
    else
        __atomic_fetch_and(word, ~NBRMA_LOCK_WORD_OWNER_WAITING, __ATOMIC_RELAXED);
}

bool nbrma_lock_word_take(uint64_t * word, bool exclusive, bool own)
{
    bool taken = nbrma_lock_word_try(word, exclusive);

    if (!taken && own) {
        nbrma_lock_word_owner_waits(word, true);
        taken = nbrma_lock_word_try(word, exclusive);
    }
    if (taken && own && (__atomic_load_n(word, __ATOMIC_RELAXED) & NBRMA_LOCK_WORD_OWNER_WAITING))
        nbrma_lock_word_owner_waits(word, false);
    return taken;
}
