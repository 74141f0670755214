/*
 * mpich-nbrma: a window lock in one 64-bit word of its owner's mailbox, which
 * origins that map the mailbox take and release with the CPU's atomics, and
 * the owner with its own (after foMPI, Gerstenberger et al., SC13, section on
 * passive target; one word instead of their two, as lock_all is a shared lock
 * per target here). MPICH-free: test/unit/test_lock_word.cpp.
 *
 *   bits 0-61  shared holders
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

/* Takes the lock (acquire order) or, refused, returns false; an exclusive
 * request that is refused raises the writer-waiting bit. */
bool nbrma_lock_word_try(uint64_t * word, bool exclusive);
/* Releases a lock this caller holds (release order). */
void nbrma_lock_word_release(uint64_t * word, bool exclusive);

#ifdef __cplusplus
}
#endif

#endif /* NBRMA_LOCK_WORD_H_INCLUDED */
