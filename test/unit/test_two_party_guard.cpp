// The two-party guard (ch4_netmod_rma/os/two_party_guard.c) without MPI: the
// helper is refused while the application is inside and gets in once it left;
// and two threads taking turns at random moments, in both modes, never find
// each other inside, and every increment they make under the guard counts.

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <random>
#include <thread>

#include "two_party_guard.h"

namespace {

TEST(TwoPartyGuard, TheHelperIsRefusedWhileTheApplicationIsInside)
{
    nbrma_two_party_guard g;
    nbrma_guard_reset(&g, NBRMA_GUARD_FENCE);
    nbrma_guard_application_in(&g);
    EXPECT_TRUE(nbrma_guard_application_inside(&g));
    EXPECT_FALSE(nbrma_guard_helper_try_in(&g));
    nbrma_guard_application_out(&g);
    EXPECT_FALSE(nbrma_guard_application_inside(&g));
    ASSERT_TRUE(nbrma_guard_helper_try_in(&g));
    nbrma_guard_helper_out(&g);
}

// The application enters `rounds` times, the helper tries all the while;
// each increments one plain counter inside and checks that the other is
// not inside.
void take_turns(nbrma_guard_mode mode)
{
    const long rounds = 200000;
    // Beyond `rounds` the application goes on until the helper got in once
    // (a helper thread the scheduler let run late, on a loaded machine, is
    // not a failure), for at most 10 s.
    const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    nbrma_two_party_guard g;
    std::atomic<bool> app_inside{false}, helper_inside{false}, done{false};
    std::atomic<long> overlaps{0}, helper_entries{0};
    long counter = 0, app_entries = 0;

    nbrma_guard_reset(&g, mode);
    std::thread helper([&] {
        while (!done.load(std::memory_order_relaxed)) {
            if (!nbrma_guard_helper_try_in(&g))
                continue;
            helper_inside.store(true, std::memory_order_relaxed);
            overlaps += app_inside.load(std::memory_order_relaxed);
            counter++;
            helper_entries.fetch_add(1, std::memory_order_relaxed);
            helper_inside.store(false, std::memory_order_relaxed);
            nbrma_guard_helper_out(&g);
        }
    });
    std::minstd_rand random(7);
    while (app_entries < rounds ||
           (helper_entries.load(std::memory_order_relaxed) == 0 &&
            std::chrono::steady_clock::now() < give_up)) {
        nbrma_guard_application_in(&g);
        app_inside.store(true, std::memory_order_relaxed);
        overlaps += helper_inside.load(std::memory_order_relaxed);
        counter++;
        app_entries++;
        app_inside.store(false, std::memory_order_relaxed);
        nbrma_guard_application_out(&g);
        // outside for a while now and then, so that the helper gets in
        for (unsigned spin = random() % 64 == 0 ? 2000 : 0; spin > 0; spin--)
            std::atomic_signal_fence(std::memory_order_seq_cst);
    }
    done = true;
    helper.join();
    EXPECT_EQ(overlaps.load(), 0);
    EXPECT_EQ(counter, app_entries + helper_entries.load()) << "an increment was lost";
    EXPECT_GT(helper_entries.load(), 0) << "the helper never got in within 10 s";
}

TEST(TwoPartyGuard, TwoThreadsTakingTurnsWithTheAvailableMode)
{
    take_turns(nbrma_guard_mode_available());
}

TEST(TwoPartyGuard, TwoThreadsTakingTurnsWithFences)
{
    take_turns(NBRMA_GUARD_FENCE);
}

}  // namespace
