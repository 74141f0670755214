// The spot where one thread at a time parks (ch4_netmod_rma/os/parking_spot.c)
// without MPI: a second thread cannot take a taken spot; parking rings the
// helper unless the helper sleeps where what comes wakes it, or when asked to;
// the helper's ring ends the parked thread's sleep long before its look.

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>

#include "parking_spot.h"

namespace {

const uint64_t ms = 1000000;    // ns

class ParkingSpot : public ::testing::Test {
  protected:
    void SetUp() override
    {
        ASSERT_EQ(nbrma_doorbell_open(&helper), 0);
        ASSERT_EQ(nbrma_parking_open(&spot, &helper), 0);
    }
    void TearDown() override
    {
        nbrma_parking_close(&spot);
        nbrma_doorbell_close(&helper);
    }
    bool helper_rung() { return nbrma_doorbell_wait_bell(&helper, 0) > 0; }
    nbrma_doorbell_t helper = NBRMA_DOORBELL_CLOSED;
    nbrma_parking_spot_t spot = NBRMA_PARKING_SPOT_CLOSED;
};

TEST_F(ParkingSpot, OneThreadAtATime)
{
    ASSERT_TRUE(nbrma_parking_take(&spot));
    EXPECT_TRUE(nbrma_parking_someone_parked(&spot));
    EXPECT_FALSE(nbrma_parking_take(&spot));
    nbrma_parking_sleep(&spot, false, 1 * ms);
    EXPECT_FALSE(nbrma_parking_someone_parked(&spot));
    ASSERT_TRUE(nbrma_parking_take(&spot)) << "left by the sleep";
    nbrma_parking_sleep(&spot, false, 1 * ms);
    EXPECT_EQ(spot.parks, 2u);
}

TEST_F(ParkingSpot, RingsTheHelperUnlessItSleepsWhereWhatComesWakesIt)
{
    ASSERT_TRUE(nbrma_parking_take(&spot));
    nbrma_parking_sleep(&spot, false, 1 * ms);
    EXPECT_TRUE(helper_rung()) << "an awake helper is rung";
    nbrma_parking_helper_sleeps(&spot, true);
    ASSERT_TRUE(nbrma_parking_take(&spot));
    nbrma_parking_sleep(&spot, false, 1 * ms);
    EXPECT_FALSE(helper_rung());
    ASSERT_TRUE(nbrma_parking_take(&spot));
    nbrma_parking_sleep(&spot, true, 1 * ms);
    EXPECT_TRUE(helper_rung()) << "asked to ring";
    nbrma_parking_helper_sleeps(&spot, false);
}

TEST_F(ParkingSpot, TheHelpersRingEndsTheSleep)
{
    std::atomic<double> slept_s{-1};
    std::thread parked([&] {
        auto begin = std::chrono::steady_clock::now();
        ASSERT_TRUE(nbrma_parking_take(&spot));
        nbrma_parking_sleep(&spot, false, 20000 * ms);
        slept_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count();
    });
    for (int i = 0; i < 10000 && !nbrma_parking_someone_parked(&spot); i++)
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
    ASSERT_TRUE(nbrma_parking_someone_parked(&spot));
    // rung whether it sleeps already or is about to
    nbrma_parking_ring_parked(&spot);
    parked.join();
    EXPECT_GE(slept_s.load(), 0);
    EXPECT_LT(slept_s.load(), 10.0) << "woken by the ring, not its 20 s look";
    EXPECT_EQ(spot.rings, 1u);
    EXPECT_FALSE(nbrma_parking_someone_parked(&spot));
}

}  // namespace
