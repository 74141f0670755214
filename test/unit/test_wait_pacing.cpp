// How the component's waiting loops pace themselves against the clock
// (ch4_netmod_rma/os/wait_pacing.c) without MPI: an idle period's yields
// on a made-up clock (when it starts, restarts after progress or a pause,
// yields at its limit and again each as long after), when a wait parks (its
// period began the park limit ago, yields or not; again after each park;
// never without a limit), the clock read only every NBRMA_CLOCK_EVERY
// rounds, and a bounded spin's two bounds.

#include <gtest/gtest.h>

#include <cstdint>

#include "wait_pacing.h"

namespace {

constexpr uint64_t us_ns = 1000;
constexpr uint64_t limit = 10 * us_ns;

// A reading of a loop that never parks: whether it yields.
bool yields_at(nbrma_idle_period *p, uint64_t now, uint64_t limit_ns)
{
    return nbrma_idle_period_read(p, now, limit_ns, 0) == NBRMA_IDLE_READ_YIELD;
}

TEST(IdlePeriod, FirstReadingStartsThePeriod)
{
    nbrma_idle_period p = {};

    EXPECT_FALSE(yields_at(&p, 1000 * us_ns, limit));
    EXPECT_EQ(p.since_ns, 1000 * us_ns);
    EXPECT_EQ(p.last_ns, 1000 * us_ns);
}

TEST(IdlePeriod, YieldsAtItsLimitAndAgainEachAsLongAfter)
{
    nbrma_idle_period p = {};
    uint64_t t = 1000 * us_ns;

    ASSERT_FALSE(yields_at(&p, t, limit));
    EXPECT_FALSE(yields_at(&p, t + 4 * us_ns, limit));
    EXPECT_FALSE(yields_at(&p, t + 8 * us_ns, limit));
    EXPECT_TRUE(yields_at(&p, t + 10 * us_ns, limit));
    nbrma_idle_period_yielded(&p, t + 11 * us_ns);
    EXPECT_EQ(p.since_ns, t + 11 * us_ns);
    EXPECT_FALSE(yields_at(&p, t + 15 * us_ns, limit));
    EXPECT_FALSE(yields_at(&p, t + 20 * us_ns, limit));
    EXPECT_TRUE(yields_at(&p, t + 21 * us_ns, limit));
}

TEST(IdlePeriod, APauseStartsANewPeriod)
{
    nbrma_idle_period p = {};
    uint64_t t = 1000 * us_ns;
    // longer than 2 * limit + 4 us per round between two readings
    uint64_t pause = 2 * limit + 4000u * NBRMA_CLOCK_EVERY + 1;

    ASSERT_FALSE(yields_at(&p, t, limit));
    EXPECT_FALSE(yields_at(&p, t + pause, limit));
    EXPECT_EQ(p.since_ns, t + pause);
    // exactly that long is no pause: the period goes on and is due
    nbrma_idle_period q = {};
    ASSERT_FALSE(yields_at(&q, t, limit));
    EXPECT_TRUE(yields_at(&q, t + pause - 1, limit));
}

TEST(IdlePeriod, RestartForgetsThePeriod)
{
    nbrma_idle_period p = {};
    uint64_t t = 1000 * us_ns;

    ASSERT_FALSE(yields_at(&p, t, limit));
    p.rounds = 5;
    nbrma_idle_period_restart(&p);
    EXPECT_EQ(p.rounds, 0u);
    EXPECT_FALSE(yields_at(&p, t + 50 * us_ns, limit));
    EXPECT_EQ(p.since_ns, t + 50 * us_ns);
}

TEST(IdlePeriod, ParksOnceItBeganTheParkLimitAgoWhateverItsYields)
{
    nbrma_idle_period p = {};
    uint64_t t = 1000 * us_ns;
    const uint64_t park = 200 * us_ns;

    ASSERT_EQ(nbrma_idle_period_read(&p, t, limit, park), NBRMA_IDLE_READ_SPIN);
    EXPECT_EQ(p.began_ns, t);
    // yields every `limit` meanwhile, each a new yield period, not a new wait
    uint64_t now = t;
    for (now = t + limit; now < t + park; now += limit) {
        ASSERT_EQ(nbrma_idle_period_read(&p, now, limit, park), NBRMA_IDLE_READ_YIELD)
            << (now - t) / us_ns;
        nbrma_idle_period_yielded(&p, now);
    }
    EXPECT_EQ(p.began_ns, t);
    EXPECT_EQ(nbrma_idle_period_read(&p, t + park, limit, park), NBRMA_IDLE_READ_PARK);
    // a park is a long yield: the wait goes on and parks again at the next reading
    nbrma_idle_period_yielded(&p, t + park + 1000 * us_ns);
    EXPECT_EQ(nbrma_idle_period_read(&p, t + park + 1001 * us_ns, limit, park),
              NBRMA_IDLE_READ_PARK);
}

TEST(IdlePeriod, NeverParksWithoutALimitNorAfterProgressOrAPause)
{
    nbrma_idle_period p = {};
    uint64_t t = 1000 * us_ns;
    const uint64_t park = 50 * us_ns;

    ASSERT_EQ(nbrma_idle_period_read(&p, t, NBRMA_IDLE_NEVER_NS, 0), NBRMA_IDLE_READ_SPIN);
    EXPECT_EQ(nbrma_idle_period_read(&p, t + 1000 * park, NBRMA_IDLE_NEVER_NS, 0),
              NBRMA_IDLE_READ_SPIN);
    // progress restarts the wait: its park limit counts from the next reading
    nbrma_idle_period_restart(&p);
    ASSERT_EQ(nbrma_idle_period_read(&p, t + 2000 * park, limit, park), NBRMA_IDLE_READ_SPIN);
    EXPECT_EQ(nbrma_idle_period_read(&p, t + 2000 * park + limit / 2, limit, park),
              NBRMA_IDLE_READ_SPIN);
    // a pause between readings (the thread was elsewhere) starts a new wait too
    uint64_t later = t + 3000 * park;
    EXPECT_EQ(nbrma_idle_period_read(&p, later, limit, park), NBRMA_IDLE_READ_SPIN);
    EXPECT_EQ(p.began_ns, later);
}

TEST(IdlePeriod, TheRoundSaysParkAndLeavesItToTheCaller)
{
    nbrma_idle_period p = {};
    uint64_t start = nbrma_monotonic_ns();
    bool park = false;

    // a 50 us park limit on the real clock: the rounds say park, the caller parks
    while (!park && nbrma_monotonic_ns() - start < 1000000 * us_ns)
        park = nbrma_idle_round(&p, 0, limit, 50 * us_ns);
    EXPECT_TRUE(park);
    EXPECT_GE(nbrma_monotonic_ns() - start, 50 * us_ns);
}

TEST(IdlePeriod, ReadsTheClockEveryFewRoundsOnly)
{
    nbrma_idle_period p = {};

    for (int i = 1; i < NBRMA_CLOCK_EVERY; i++) {
        nbrma_idle_round(&p, 0, limit, 0);
        EXPECT_EQ(p.since_ns, 0u) << "read the clock at round " << i;
    }
    nbrma_idle_round(&p, 0, limit, 0);
    EXPECT_NE(p.since_ns, 0u);
}

TEST(IdlePeriod, ProgressRestartsIt)
{
    nbrma_idle_period p = {};

    for (int i = 0; i < NBRMA_CLOCK_EVERY; i++)
        nbrma_idle_round(&p, 0, limit, 0);
    ASSERT_NE(p.since_ns, 0u);
    nbrma_idle_round(&p, 1, limit, 0);     // MPICH completed something
    EXPECT_EQ(p.progress_count, 1);
    EXPECT_EQ(p.since_ns, 0u);
    EXPECT_EQ(p.rounds, 1u);
}

TEST(IdlePeriod, AYieldSaysHowLongItTookAndRestartsTheCount)
{
    nbrma_idle_period p = {};
    uint64_t before = nbrma_monotonic_ns();
    uint64_t took = nbrma_idle_period_yield(&p);

    EXPECT_LE(took, nbrma_monotonic_ns() - before);
    EXPECT_GE(p.since_ns, before + took);
    EXPECT_EQ(p.last_ns, p.since_ns);
}

TEST(IdlePeriod, TheReadingSaysYieldAndLeavesItToTheCaller)
{
    nbrma_idle_period p = {};
    uint64_t start = nbrma_monotonic_ns();
    nbrma_idle_reading r = NBRMA_IDLE_READ_SPIN;

    while (r == NBRMA_IDLE_READ_SPIN && nbrma_monotonic_ns() - start < 1000000 * us_ns)
        r = nbrma_idle_round_read(&p, 0, 10 * us_ns, 0);
    EXPECT_EQ(r, NBRMA_IDLE_READ_YIELD);
    EXPECT_GE(nbrma_monotonic_ns() - start, 10 * us_ns);
    // the caller did not yield: the period goes on, the next reading says so again
    for (int i = 1; i < NBRMA_CLOCK_EVERY; i++)
        EXPECT_EQ(nbrma_idle_round_read(&p, 0, 10 * us_ns, 0), NBRMA_IDLE_READ_SPIN);
    EXPECT_EQ(nbrma_idle_round_read(&p, 0, 10 * us_ns, 0), NBRMA_IDLE_READ_YIELD);
}

TEST(IdlePeriod, AWaitLongerThanTheLimitYieldsOnTheRealClock)
{
    nbrma_idle_period p = {};
    uint64_t start = nbrma_monotonic_ns(), first_since = 0;

    // 1 us limit: spin 200 us; the period's start moves at each yield
    while (nbrma_monotonic_ns() - start < 200 * us_ns) {
        nbrma_idle_round(&p, 0, us_ns, 0);
        if (first_since == 0)
            first_since = p.since_ns;
    }
    EXPECT_NE(first_since, 0u);
    EXPECT_GT(p.since_ns, first_since);
}

TEST(BoundedSpin, GoesOnWhileEventsComeAndStopsWhenIdle)
{
    nbrma_bounded_spin s;
    uint64_t t = 1000 * us_ns;

    nbrma_bounded_spin_begin_at(&s, t, 5 * us_ns, 200 * us_ns);
    s.event_since_reading = true;
    EXPECT_TRUE(nbrma_bounded_spin_reading_at(&s, t + 4 * us_ns));
    EXPECT_EQ(s.last_event, t + 4 * us_ns);
    EXPECT_FALSE(s.event_since_reading);
    EXPECT_TRUE(nbrma_bounded_spin_reading_at(&s, t + 8 * us_ns));
    EXPECT_FALSE(nbrma_bounded_spin_reading_at(&s, t + 9 * us_ns));
}

TEST(BoundedSpin, StopsAfterItsTotalEvenWithEvents)
{
    nbrma_bounded_spin s;
    uint64_t t = 1000 * us_ns;

    nbrma_bounded_spin_begin_at(&s, t, 5 * us_ns, 200 * us_ns);
    for (uint64_t now = t + 4 * us_ns; now < t + 200 * us_ns; now += 4 * us_ns) {
        s.event_since_reading = true;
        ASSERT_TRUE(nbrma_bounded_spin_reading_at(&s, now)) << now - t;
    }
    s.event_since_reading = true;
    EXPECT_FALSE(nbrma_bounded_spin_reading_at(&s, t + 200 * us_ns));
}

TEST(BoundedSpin, ReadsTheClockEveryFewRoundsOnly)
{
    nbrma_bounded_spin s;

    // bounds of 0: any reading ends the spin
    nbrma_bounded_spin_begin_at(&s, nbrma_monotonic_ns(), 0, 0);
    for (int i = 1; i < NBRMA_CLOCK_EVERY; i++)
        EXPECT_TRUE(nbrma_bounded_spin_goes_on(&s, i % 2 == 0)) << "round " << i;
    EXPECT_FALSE(nbrma_bounded_spin_goes_on(&s, true));
}

TEST(BoundedSpin, EndsOnTheRealClockWithoutEvents)
{
    nbrma_bounded_spin s;
    uint64_t start = nbrma_monotonic_ns();
    unsigned rounds = 0;

    nbrma_bounded_spin_begin(&s, 5 * us_ns, 200 * us_ns);
    while (nbrma_bounded_spin_goes_on(&s, false))
        rounds++;
    uint64_t took = nbrma_monotonic_ns() - start;
    EXPECT_GE(took, 5 * us_ns);
    EXPECT_LT(took, 200 * us_ns * 50);  // loose: a loaded machine
    EXPECT_EQ((rounds + 1) % NBRMA_CLOCK_EVERY, 0u);
}

TEST(BoundedSpin, EventsKeepItGoingUntilItsTotal)
{
    nbrma_bounded_spin s;
    uint64_t start = nbrma_monotonic_ns();

    nbrma_bounded_spin_begin(&s, 5 * us_ns, 100 * us_ns);
    while (nbrma_bounded_spin_goes_on(&s, true)) {
    }
    EXPECT_GE(nbrma_monotonic_ns() - start, 100 * us_ns);
}

}  // namespace
