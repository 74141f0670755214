// The lock word of a window (formats/lock_word.c) without MPI: its states,
// exclusive counters updated non-atomically under it by 4 threads, readers
// that never see a writer's half-done update, and exclusive requests that get
// through a stream of shared ones.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

#include "lock_word.h"

TEST(LockWord, SharedHoldersExcludeAWriterWhoThenKeepsNewReadersOut)
{
    uint64_t word = 0;
    EXPECT_TRUE(nbrma_lock_word_try(&word, false));
    EXPECT_TRUE(nbrma_lock_word_try(&word, false));
    EXPECT_EQ(word, 2u);
    EXPECT_FALSE(nbrma_lock_word_try(&word, true));
    EXPECT_EQ(word, 2u | NBRMA_LOCK_WORD_WRITER_WAITING);
    EXPECT_FALSE(nbrma_lock_word_try(&word, false)) << "a shared lock overtook a waiting writer";
    nbrma_lock_word_release(&word, false);
    EXPECT_FALSE(nbrma_lock_word_try(&word, true));
    nbrma_lock_word_release(&word, false);
    EXPECT_TRUE(nbrma_lock_word_try(&word, true));
    EXPECT_EQ(word, NBRMA_LOCK_WORD_EXCLUSIVE);
    EXPECT_FALSE(nbrma_lock_word_try(&word, false));
    EXPECT_FALSE(nbrma_lock_word_try(&word, true));
    nbrma_lock_word_release(&word, true);
    EXPECT_EQ(word, NBRMA_LOCK_WORD_WRITER_WAITING) << "the second writer still waits";
    EXPECT_TRUE(nbrma_lock_word_try(&word, true));
    nbrma_lock_word_release(&word, true);
    EXPECT_EQ(word, 0u);
    EXPECT_TRUE(nbrma_lock_word_try(&word, false));
}

// The owner's waiting bit takes nothing and keeps nobody out; the release
// that leaves the word without holders reports it (the releaser wakes the
// owner), an earlier one does not, and none after the owner cleared it.
TEST(LockWord, TheOwnersWaitBlocksNobodyAndTheLastReleaseReportsIt)
{
    uint64_t word = 0;
    nbrma_lock_word_owner_waits(&word, true);
    EXPECT_EQ(word, NBRMA_LOCK_WORD_OWNER_WAITING);
    EXPECT_TRUE(nbrma_lock_word_try(&word, true));
    EXPECT_EQ(word, NBRMA_LOCK_WORD_EXCLUSIVE | NBRMA_LOCK_WORD_OWNER_WAITING);
    EXPECT_FALSE(nbrma_lock_word_try(&word, false));
    EXPECT_TRUE(nbrma_lock_word_release(&word, true));
    EXPECT_EQ(word, NBRMA_LOCK_WORD_OWNER_WAITING);

    EXPECT_TRUE(nbrma_lock_word_try(&word, false));
    EXPECT_TRUE(nbrma_lock_word_try(&word, false));
    EXPECT_EQ(word & NBRMA_LOCK_WORD_SHARED_HOLDERS, 2u);
    EXPECT_FALSE(nbrma_lock_word_release(&word, false)) << "a holder is left";
    EXPECT_TRUE(nbrma_lock_word_release(&word, false));

    nbrma_lock_word_owner_waits(&word, false);
    EXPECT_EQ(word, 0u);
    EXPECT_TRUE(nbrma_lock_word_try(&word, true));
    EXPECT_FALSE(nbrma_lock_word_release(&word, true)) << "the owner no longer waits";
    EXPECT_TRUE(nbrma_lock_word_try(&word, false));
    EXPECT_FALSE(nbrma_lock_word_release(&word, false));
    EXPECT_EQ(word, 0u);
}

TEST(LockWord, ATakeOfTheOwnWordRaisesTheOwnersBitOnlyWhileItIsBusy)
{
    uint64_t word = 0;
    // free: taken, no bit, own or not
    EXPECT_TRUE(nbrma_lock_word_take(&word, true, true));
    EXPECT_EQ(word, NBRMA_LOCK_WORD_EXCLUSIVE);
    // busy, a peer's word: refused, no owner's bit (an exclusive request
    // raises the writer's bit, as nbrma_lock_word_try does)
    EXPECT_FALSE(nbrma_lock_word_take(&word, false, false));
    EXPECT_EQ(word & NBRMA_LOCK_WORD_OWNER_WAITING, 0u);
    // busy, the own word: refused, the owner's bit raised
    EXPECT_FALSE(nbrma_lock_word_take(&word, false, true));
    EXPECT_NE(word & NBRMA_LOCK_WORD_OWNER_WAITING, 0u);
    // the last release reports the waiting owner; its take then drops the bit
    EXPECT_TRUE(nbrma_lock_word_release(&word, true));
    EXPECT_TRUE(nbrma_lock_word_take(&word, false, true));
    EXPECT_EQ(word, 1u);
    EXPECT_FALSE(nbrma_lock_word_release(&word, false));
    EXPECT_EQ(word, 0u);
    // a peer's take leaves a raised bit alone
    nbrma_lock_word_owner_waits(&word, true);
    EXPECT_TRUE(nbrma_lock_word_take(&word, false, false));
    EXPECT_EQ(word, NBRMA_LOCK_WORD_OWNER_WAITING | 1u);
}

TEST(LockWord, ExclusiveCountersFromFourThreads)
{
    uint64_t word = 0;
    volatile long counter = 0;
    const int per_thread = 200000;
    std::vector<std::thread> threads;
    for (int t = 0; t < 4; t++)
        threads.emplace_back([&] {
            for (int i = 0; i < per_thread;) {
                if (!nbrma_lock_word_try(&word, true))
                    continue;
                counter = counter + 1;  // not atomic: the lock must exclude
                nbrma_lock_word_release(&word, true);
                i++;
            }
        });
    for (auto &t : threads)
        t.join();
    EXPECT_EQ(counter, 4L * per_thread);
    EXPECT_EQ(word, 0u);
}

TEST(LockWord, ReadersNeverSeeAHalfDoneWrite)
{
    uint64_t word = 0;
    volatile long a = 0, b = 0;
    std::atomic<long> torn{0}, reads{0}, writes{0};
    std::atomic<bool> writing{true};
    std::vector<std::thread> threads;
    // The writers go on until the readers got in a hundred times (or 10 s
    // passed): 10^5 writes can end before a reader thread is even scheduled
    // (seen under AddressSanitizer on 2 busy cores), and then nothing was
    // read while a write could be half done. A writer stops only after a
    // write: a refused try leaves the writer-waiting bit set, which binds the
    // writer to try until it gets the lock.
    const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    for (int t = 0; t < 2; t++)
        threads.emplace_back([&] {
            for (int i = 0;;) {
                if (!nbrma_lock_word_try(&word, true))
                    continue;
                a = a + 1;
                b = b + 1;
                nbrma_lock_word_release(&word, true);
                writes++;
                if (++i >= 50000 && (reads >= 100 || std::chrono::steady_clock::now() >= give_up))
                    break;
            }
        });
    for (int t = 0; t < 2; t++)
        threads.emplace_back([&] {
            while (writing) {
                if (!nbrma_lock_word_try(&word, false))
                    continue;
                if (a != b)
                    torn++;
                reads++;
                nbrma_lock_word_release(&word, false);
            }
        });
    threads[0].join();
    threads[1].join();
    writing = false;
    threads[2].join();
    threads[3].join();
    EXPECT_EQ(torn.load(), 0);
    EXPECT_GE(reads.load(), 100) << "the readers hardly got in while the writers wrote";
    EXPECT_EQ(a, writes.load());
    EXPECT_EQ(word, 0u);
}

// Three threads take shared locks back to back for as long as the writer
// runs; the writer must get its 1000 exclusive locks, in bounded time.
TEST(LockWord, AStreamOfSharedLocksDoesNotStarveAWriter)
{
    uint64_t word = 0;
    std::atomic<bool> writer_done{false};
    std::vector<std::thread> readers;
    for (int t = 0; t < 3; t++)
        readers.emplace_back([&] {
            while (!writer_done)
                if (nbrma_lock_word_try(&word, false))
                    nbrma_lock_word_release(&word, false);
        });
    const auto start = std::chrono::steady_clock::now();
    int taken = 0;
    while (taken < 1000 && std::chrono::steady_clock::now() - start < std::chrono::seconds(20))
        if (nbrma_lock_word_try(&word, true)) {
            taken++;
            nbrma_lock_word_release(&word, true);
        }
    writer_done = true;
    for (auto &t : readers)
        t.join();
    EXPECT_EQ(taken, 1000) << "the writer starved";
}
