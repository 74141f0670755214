/*
 * mpich-nbrma: a window lock in one 64-bit word of its owner's mailbox, which
 * origins that map the mailbox take and release with the CPU's atomics, and
 * the owner with its own (after foMPI, Gerstenberger et al., SC13, section on
 * passive target; one word instead of their two, as lock_all is a shared lock
 * per target here). MPICH-free: test/unit/test_lock_word.cpp.
 *
 *   bits 0-60  shared holders
 *   bit 61     the owner waits for the word (to grant a lock request that
 *              came as a message) and wants to hear when it is free: its
 *              progress agent may sleep (../os/wake_socket.h); takes
 *              nothing, blocks nobody
 *   bit 62     an exclusive request waits: new shared requests stay out, so
 *              a stream of shared locks cannot starve an exclusive one
 *   bit 63     held exclusively
 *
 * Neither call waits: a request that is refused is tried again by its caller
 * (the engine, from the progress hook).
 */

#ifndef NBRMA_LOCK_WORD_H_INCLUDED
#define NBRMA_LOCK_WORD_H_INCLUDED

#include <stdbool.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define NBRMA_LOCK_WORD_EXCLUSIVE      (UINT64_C(1) << 63)
#define NBRMA_LOCK_WORD_WRITER_WAITING (UINT64_C(1) << 62)
#define NBRMA_LOCK_WORD_OWNER_WAITING  (UINT64_C(1) << 61)
#define NBRMA_LOCK_WORD_SHARED_HOLDERS (NBRMA_LOCK_WORD_OWNER_WAITING - 1)

/* Takes the lock (acquire order) or, refused, returns false; an exclusive
 * request that is refused raises the writer-waiting bit. */
bool nbrma_lock_word_try(uint64_t * word, bool exclusive);
/* Releases a lock this caller holds (release order); true when the owner
 * waits for the word (bit 61) and no holder is left: the caller wakes the
 * owner where it sleeps. Sequentially consistent, before the caller looks
 * whether the owner sleeps (../formats/mailbox_ring.h). */
bool nbrma_lock_word_release(uint64_t * word, bool exclusive);
/* The owner: raises (true) or clears its waiting bit. A release between the
 * owner's refused try and the raise saw no bit: the owner tries once more
 * after raising it, and again after it said it sleeps. */
void nbrma_lock_word_owner_waits(uint64_t * word, bool waits);
/* A lock request on a word: nbrma_lock_word_try, and where the word is the
 * caller's own (`own`) and busy, the owner's bit raised and one more try;
 * an own word taken drops the bit. True when taken. */
bool nbrma_lock_word_take(uint64_t * word, bool exclusive, bool own);

#ifdef __cplusplus
}
#endif

#endif /* NBRMA_LOCK_WORD_H_INCLUDED */
