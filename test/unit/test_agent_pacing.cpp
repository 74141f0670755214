// The progress agent's pacing (core/include/nbrma_agent_pacing.h) without
// MPI: rules P1-P11 one by one, then a simulated agent serving a stream of
// peers' operations beside a computation, whose share of the time must stay
// at the setting, and beside a sleeping application, which must not slow it.

#include <gtest/gtest.h>

#include <cstdint>

#include "nbrma_agent_pacing.h"

namespace {

constexpr uint64_t us = 1000;
constexpr uint64_t ms = 1000 * us;

// Clocks of a simulated process: wall time and the agent's CPU time, and
// whether the application computes.
struct clocks {
    uint64_t wall = 5 * ms, agent = 0;
    bool computes = true;
    nbrma_agent_pacing p;
    clocks() { nbrma_agent_pacing_init(&p, true); }
    uint64_t pause(bool own_work, unsigned share)
    {
        return nbrma_agent_pacing_pause_ns(&p, wall, agent, computes, own_work, share);
    }
    // `t` passes, of which the agent served `served`
    void compute_and_serve(uint64_t t, uint64_t served)
    {
        wall += t;
        agent += served;
    }
};

TEST(agent_pacing, the_first_call_only_starts_the_clocks)
{
    clocks c;
    c.agent = 50 * ms;  // whatever happened before is not charged
    EXPECT_EQ(c.pause(false, 10), 0u);
    c.compute_and_serve(1 * ms, 50 * us);
    EXPECT_EQ(c.pause(false, 10), 0u);
}

TEST(agent_pacing, p3_service_within_the_share_of_a_computation_never_pauses)
{
    clocks c;
    c.pause(false, 10);
    for (int i = 0; i < 100; i++) {
        c.compute_and_serve(1 * ms, 90 * us);  // 9%
        EXPECT_EQ(c.pause(false, 10), 0u) << i;
    }
}

TEST(agent_pacing, p3_service_beyond_the_share_pauses_until_it_is_earned_back)
{
    clocks c;
    c.pause(false, 10);
    // a full window of computation earned the cap (1 ms at 10%) ...
    c.compute_and_serve(NBRMA_PACING_WINDOW_NS, 0);
    EXPECT_EQ(c.pause(false, 10), 0u);
    // ... and 1.5 ms of service in 2 ms spends it and 0.3 ms more
    c.compute_and_serve(2 * ms, 1500 * us);
    // a debt of 0.3 ms at 10%: 3 ms of computation earn it back
    EXPECT_EQ(c.pause(false, 10), 3 * ms);
    c.compute_and_serve(3 * ms, 0);
    EXPECT_EQ(c.pause(false, 10), 0u);
}

TEST(agent_pacing, p3_a_pause_is_at_most_the_window_then_the_agent_asks_again)
{
    clocks c;
    c.pause(false, 10);
    c.compute_and_serve(8 * ms, 7 * ms);        // 7 ms served, 0.8 earned
    const uint64_t first = c.pause(false, 10);
    EXPECT_EQ(first, NBRMA_PACING_WINDOW_NS);
    c.compute_and_serve(first, 0);              // 1 ms earned of 6.2 owed
    EXPECT_EQ(c.pause(false, 10), NBRMA_PACING_WINDOW_NS);
}

TEST(agent_pacing, p3_credit_is_capped_at_the_share_of_one_window)
{
    clocks c;
    c.pause(false, 10);
    c.compute_and_serve(1000 * ms, 0);          // a long computation without service
    EXPECT_EQ(c.pause(false, 10), 0u);
    // only 1 ms of credit was kept: 1.2 ms of service at once leaves 0.2 - 0.1 owed
    c.compute_and_serve(1 * ms, 1200 * us);
    EXPECT_EQ(c.pause(false, 10), 1 * ms);
}

TEST(agent_pacing, p1_own_work_is_never_paused_nor_charged)
{
    clocks c;
    c.pause(false, 10);
    c.compute_and_serve(2 * ms, 1900 * us);
    EXPECT_EQ(c.pause(true, 10), 0u);
    // the next period alone counts: within the share
    c.compute_and_serve(1 * ms, 50 * us);
    EXPECT_EQ(c.pause(false, 10), 0u);
}

TEST(agent_pacing, p1_time_with_own_work_still_earns)
{
    clocks c;
    c.pause(false, 10);
    c.compute_and_serve(1 * ms, 600 * us);      // a debt of 0.5 ms
    EXPECT_EQ(c.pause(false, 10), 5 * ms);
    // rounds of own work, 150 us each in 1 ms: never paused, and their time
    // pays the debt back although the agent was busy
    for (int i = 0; i < 5; i++) {
        c.compute_and_serve(1 * ms, 150 * us);
        EXPECT_EQ(c.pause(true, 10), 0u) << i;
    }
    c.compute_and_serve(1 * ms, 100 * us);      // within the share again
    EXPECT_EQ(c.pause(false, 10), 0u);
}

TEST(agent_pacing, p2_an_application_that_does_not_compute_loses_nothing)
{
    clocks c;
    c.pause(false, 10);
    // the application sleeps: the agent serves 90% of the time
    c.computes = false;
    c.compute_and_serve(10 * ms, 9 * ms);
    EXPECT_EQ(c.pause(false, 10), 0u);
    // and a debt from a computation before is forgiven once it sleeps
    c.computes = true;
    c.compute_and_serve(2 * ms, 1900 * us);
    EXPECT_GT(c.pause(false, 10), 0u);
    c.computes = false;
    c.compute_and_serve(1 * ms, 100 * us);
    EXPECT_EQ(c.pause(false, 10), 0u);
    c.computes = true;
    c.compute_and_serve(1 * ms, 50 * us);
    EXPECT_EQ(c.pause(false, 10), 0u);
}

TEST(agent_pacing, p4_lingers_only_where_no_computation_pays_for_it)
{
    nbrma_agent_pacing p;
    nbrma_agent_pacing_init(&p, true);
    EXPECT_EQ(nbrma_agent_pacing_linger(&p, false, false), NBRMA_LINGER_UNTIL_IDLE);
    EXPECT_EQ(nbrma_agent_pacing_linger(&p, false, true), NBRMA_LINGER_UNTIL_IDLE);
    // beside a computation only for the application's own work, and only
    // while it is in flight
    EXPECT_EQ(nbrma_agent_pacing_linger(&p, true, true), NBRMA_LINGER_WHILE_OWN_WORK);
    EXPECT_EQ(nbrma_agent_pacing_linger(&p, true, false), NBRMA_LINGER_NONE);
}

TEST(agent_pacing, p4_does_not_linger_in_the_round_after_a_sleep_its_timer_ended)
{
    nbrma_agent_pacing p;
    nbrma_agent_pacing_init(&p, true);
    // woken by an event: as P4 says
    nbrma_agent_pacing_slept(&p, false);
    EXPECT_EQ(nbrma_agent_pacing_linger(&p, false, false), NBRMA_LINGER_UNTIL_IDLE);
    // woken by the timer: not even for own work or a sleeping application
    nbrma_agent_pacing_slept(&p, true);
    EXPECT_EQ(nbrma_agent_pacing_linger(&p, false, true), NBRMA_LINGER_NONE);
    // only in that round: the next one lingers again
    EXPECT_EQ(nbrma_agent_pacing_linger(&p, false, true), NBRMA_LINGER_UNTIL_IDLE);
    // rounds between the sleep and its round (pauses, looks away) keep it
    nbrma_agent_pacing_slept(&p, true);
    nbrma_agent_pacing_tried_entry(&p, false, 0, 0);
    nbrma_agent_pacing_slept_away(&p, false);
    nbrma_agent_pacing_tried_entry(&p, true, 0, 0);
    EXPECT_EQ(nbrma_agent_pacing_linger(&p, false, false), NBRMA_LINGER_NONE);
    // the following sleep, ended by an event, decides anew
    nbrma_agent_pacing_slept(&p, true);
    nbrma_agent_pacing_slept(&p, false);
    EXPECT_EQ(nbrma_agent_pacing_linger(&p, false, false), NBRMA_LINGER_UNTIL_IDLE);
}

bool placed(const nbrma_agent_pacing *p, bool app_computes, int app_cpu, int cpu, bool off)
{
    const nbrma_agent_placement at = nbrma_agent_pacing_placement(p, app_computes, app_cpu);
    return at.cpu == cpu && at.off == off;
}

TEST(agent_pacing, p5_keeps_to_the_application_s_cpu_only_while_it_does_not_compute)
{
    nbrma_agent_pacing p;
    nbrma_agent_pacing_init(&p, true);
    EXPECT_TRUE(placed(&p, false, 1, 1, false));
    EXPECT_TRUE(placed(&p, false, 0, 0, false));
    EXPECT_TRUE(placed(&p, true, 1, -1, false));
    EXPECT_TRUE(placed(&p, false, -1, -1, false));
    EXPECT_TRUE(placed(&p, true, -1, -1, false));
}

// A yield of NBRMA_PACING_YIELD_TAKEN_NS or more: another thread ran there.
bool yield_long(nbrma_agent_pacing *p, int cpu)
{
    return nbrma_agent_pacing_yielded(p, cpu, NBRMA_PACING_YIELD_TAKEN_NS);
}

// NBRMA_PACING_LONG_YIELDS_TAKEN - 1 long yields on `cpu`: not yet taken.
void yield_long_but_one(nbrma_agent_pacing *p, int cpu)
{
    for (unsigned i = 1; i < NBRMA_PACING_LONG_YIELDS_TAKEN; i++)
        EXPECT_FALSE(yield_long(p, cpu)) << "long yield " << i << " on " << cpu;
}

TEST(agent_pacing, p5_keeps_off_a_cpu_where_yields_in_a_row_found_another_thread)
{
    nbrma_agent_pacing p;
    nbrma_agent_pacing_init(&p, true);
    // short yields: the CPU was the agent's alone; long ones not all in a
    // row (a thread there for a moment) are not enough
    EXPECT_FALSE(nbrma_agent_pacing_yielded(&p, 1, NBRMA_PACING_YIELD_TAKEN_NS - 1));
    yield_long_but_one(&p, 1);
    EXPECT_FALSE(nbrma_agent_pacing_yielded(&p, 1, 300));
    yield_long_but_one(&p, 1);
    EXPECT_FALSE(yield_long(&p, 0));    // another CPU's (the kernel moved it)
    EXPECT_TRUE(placed(&p, false, 1, 1, false));
    // in a row: another thread runs there; once said, not again
    yield_long_but_one(&p, 1);
    EXPECT_TRUE(yield_long(&p, 1));
    EXPECT_FALSE(yield_long(&p, 1));
    EXPECT_TRUE(placed(&p, false, 1, 1, true));
    // the application asleep on another CPU: there it goes
    EXPECT_TRUE(placed(&p, false, 0, 0, false));
    // anywhere while the application computes, or where its CPU is unknown
    EXPECT_TRUE(placed(&p, true, 1, -1, false));
    EXPECT_TRUE(placed(&p, true, 0, -1, false));
    EXPECT_TRUE(placed(&p, false, -1, -1, false));
    EXPECT_TRUE(placed(&p, false, 1, 1, true));
    // an unknown CPU says nothing
    EXPECT_FALSE(nbrma_agent_pacing_yielded(&p, -1, 50 * NBRMA_PACING_YIELD_TAKEN_NS));
    // the CPU it went to taken too: off that one now, the first one free
    yield_long_but_one(&p, 0);
    EXPECT_TRUE(yield_long(&p, 0));
    EXPECT_TRUE(placed(&p, false, 1, 1, false));
    EXPECT_TRUE(placed(&p, false, 0, 0, true));
}

TEST(agent_pacing, p6_asks_for_the_exit_ring_until_one_was_futile_then_after_an_entry)
{
    nbrma_agent_pacing p;
    nbrma_agent_pacing_init(&p, true);
    uint32_t n = 0;     // a call or more between looks (not P8's one call)
    EXPECT_NE(nbrma_agent_pacing_exit_ring(&p), NBRMA_PACING_RING_NONE);
    // found inside after a timed look: asks again
    nbrma_agent_pacing_slept_away(&p, false);
    nbrma_agent_pacing_tried_entry(&p, false, ++n, 0);
    EXPECT_NE(nbrma_agent_pacing_exit_ring(&p), NBRMA_PACING_RING_NONE);
    // rung, and got in: the ring helped
    nbrma_agent_pacing_slept_away(&p, true);
    nbrma_agent_pacing_tried_entry(&p, true, ++n, 0);
    EXPECT_NE(nbrma_agent_pacing_exit_ring(&p), NBRMA_PACING_RING_NONE);
    // rung, but the application was back inside: no more asking
    nbrma_agent_pacing_slept_away(&p, true);
    nbrma_agent_pacing_tried_entry(&p, false, ++n, 0);
    EXPECT_EQ(nbrma_agent_pacing_exit_ring(&p), NBRMA_PACING_RING_NONE);
    // timed looks that find it inside do not change that
    for (int i = 0; i < 5; i++) {
        nbrma_agent_pacing_slept_away(&p, false);
        nbrma_agent_pacing_tried_entry(&p, false, ++n, 0);
    }
    EXPECT_EQ(nbrma_agent_pacing_exit_ring(&p), NBRMA_PACING_RING_NONE);
    // until the agent gets in again
    nbrma_agent_pacing_slept_away(&p, false);
    nbrma_agent_pacing_tried_entry(&p, true, ++n, 0);
    EXPECT_NE(nbrma_agent_pacing_exit_ring(&p), NBRMA_PACING_RING_NONE);
}

// Rung out of its sleep, the agent got in and served, both at `at_ns`
// (`n`: the application's count of entries); `came_in`: the application
// came into MPI meanwhile.
void rung_and_served(nbrma_agent_pacing *p, uint32_t n, bool came_in, uint64_t at_ns)
{
    nbrma_agent_pacing_slept_away(p, true);
    nbrma_agent_pacing_tried_entry(p, true, n, at_ns);
    nbrma_agent_pacing_served(p, came_in, at_ns, n);
}

TEST(agent_pacing, p6_a_ring_whose_entry_the_application_came_back_during_was_futile)
{
    nbrma_agent_pacing p;
    nbrma_agent_pacing_init(&p, true);
    uint32_t n = 0;     // a call or more between looks (not P8's one call)
    // rung, got in, served while the application computed: the ring helped
    rung_and_served(&p, ++n, false, 0);
    EXPECT_NE(nbrma_agent_pacing_exit_ring(&p), NBRMA_PACING_RING_NONE);
    // (found inside a computation later: still helped)
    nbrma_agent_pacing_tried_entry(&p, false, ++n, NBRMA_PACING_RING_WORTH_NS);
    EXPECT_NE(nbrma_agent_pacing_exit_ring(&p), NBRMA_PACING_RING_NONE);
    // rung, got in, and the application came back meanwhile: no more asking
    rung_and_served(&p, ++n, true, 0);
    EXPECT_EQ(nbrma_agent_pacing_exit_ring(&p), NBRMA_PACING_RING_NONE);
    nbrma_agent_pacing_slept_away(&p, false);
    nbrma_agent_pacing_tried_entry(&p, false, ++n, 0);
    EXPECT_EQ(nbrma_agent_pacing_exit_ring(&p), NBRMA_PACING_RING_NONE);
    // an entry the application came in during that no ring began says
    // nothing of rings: the next entry asks again
    nbrma_agent_pacing_slept_away(&p, false);
    nbrma_agent_pacing_tried_entry(&p, true, ++n, 0);
    nbrma_agent_pacing_served(&p, true, 0, n);
    EXPECT_NE(nbrma_agent_pacing_exit_ring(&p), NBRMA_PACING_RING_NONE);
}

TEST(agent_pacing, p6_a_ring_whose_service_the_application_came_back_soon_after_was_futile)
{
    const uint64_t ms = 1000000u, served = 5 * ms;
    nbrma_agent_pacing p;
    nbrma_agent_pacing_init(&p, true);
    uint32_t n = 0;     // a call or more between looks (not P8's one call)
    // rung, got in, served; found inside soon after, having come in since:
    // no more asking
    rung_and_served(&p, ++n, false, served);
    nbrma_agent_pacing_tried_entry(&p, false, ++n, served + NBRMA_PACING_RING_WORTH_NS - 1);
    EXPECT_EQ(nbrma_agent_pacing_exit_ring(&p), NBRMA_PACING_RING_NONE);
    // until the agent gets in again
    nbrma_agent_pacing_tried_entry(&p, true, ++n, 2 * served);
    EXPECT_NE(nbrma_agent_pacing_exit_ring(&p), NBRMA_PACING_RING_NONE);
    // found inside soon after, but in the call it was in as the service
    // ended (it did not come back: it had not left): asks on
    rung_and_served(&p, ++n, false, 3 * served);
    nbrma_agent_pacing_tried_entry(&p, false, n, 3 * served + 10);
    EXPECT_NE(nbrma_agent_pacing_exit_ring(&p), NBRMA_PACING_RING_NONE);
    // only the first look after the service judges the ring
    nbrma_agent_pacing_tried_entry(&p, false, ++n, 3 * served + 20);
    EXPECT_NE(nbrma_agent_pacing_exit_ring(&p), NBRMA_PACING_RING_NONE);
    // a service no ring began is no ring's to judge
    nbrma_agent_pacing_slept_away(&p, false);
    nbrma_agent_pacing_tried_entry(&p, true, ++n, 4 * served);
    nbrma_agent_pacing_served(&p, false, 4 * served, n);
    nbrma_agent_pacing_tried_entry(&p, false, ++n, 4 * served + 10);
    EXPECT_NE(nbrma_agent_pacing_exit_ring(&p), NBRMA_PACING_RING_NONE);
}

TEST(agent_pacing, p8_a_return_ring_whose_entry_the_application_came_back_during_was_futile)
{
    nbrma_agent_pacing p;
    nbrma_agent_pacing_init(&p, true);
    uint32_t n = 0;
    // found inside twice in one call: P8 asks for the ring on return
    nbrma_agent_pacing_tried_entry(&p, false, n, 0);
    nbrma_agent_pacing_slept_away(&p, false);
    nbrma_agent_pacing_tried_entry(&p, false, n, 0);
    ASSERT_EQ(nbrma_agent_pacing_exit_ring(&p), NBRMA_PACING_RING_ON_RETURN);
    // rung as the call returned, got in, but the application came back
    // meanwhile: P8's ring is futile, P6's stays
    rung_and_served(&p, ++n, true, 0);
    nbrma_agent_pacing_slept_away(&p, false);
    nbrma_agent_pacing_tried_entry(&p, false, ++n, 0);
    nbrma_agent_pacing_slept_away(&p, false);
    nbrma_agent_pacing_tried_entry(&p, false, n, 0);
    EXPECT_EQ(nbrma_agent_pacing_exit_ring(&p), NBRMA_PACING_RING_IF_OWN_WORK);
}

TEST(agent_pacing, p6_a_ring_counts_for_the_next_entry_only)
{
    nbrma_agent_pacing p;
    nbrma_agent_pacing_init(&p, true);
    uint32_t n = 0;     // a call or more between looks (not P8's one call)
    // a ring, then an entry: helped, and forgotten
    nbrma_agent_pacing_slept_away(&p, true);
    nbrma_agent_pacing_tried_entry(&p, true, ++n, 0);
    // a refused entry after sleeps on the workers or the doorbell alone
    // (no away sleep since): no ring to blame
    nbrma_agent_pacing_slept(&p, false);
    nbrma_agent_pacing_tried_entry(&p, false, ++n, 0);
    EXPECT_NE(nbrma_agent_pacing_exit_ring(&p), NBRMA_PACING_RING_NONE);
    // a ring, then (after sleeps on the doorbell alone while there is no
    // window, which tell the pacing nothing) a refused entry: futile
    nbrma_agent_pacing_slept_away(&p, true);
    nbrma_agent_pacing_tried_entry(&p, false, ++n, 0);
    EXPECT_EQ(nbrma_agent_pacing_exit_ring(&p), NBRMA_PACING_RING_NONE);
}

// The application's entry count as the agent looks: `calls` more each time.
static void refused_after(nbrma_agent_pacing *p, uint32_t *count, uint32_t calls)
{
    *count += calls;
    nbrma_agent_pacing_tried_entry(p, false, *count, 0);
}

TEST(agent_pacing, p7_the_look_doubles_while_a_polling_application_stays_inside_then_resets)
{
    nbrma_agent_pacing p;
    nbrma_agent_pacing_init(&p, true);
    uint32_t count = 0;
    EXPECT_EQ(nbrma_agent_pacing_away_ns(&p), NBRMA_PACING_AWAY_MIN_NS);
    const uint64_t expected[] = {1000000u, 2000000u, 4000000u, 8000000u, 8000000u};
    for (uint64_t ns : expected) {
        refused_after(&p, &count, NBRMA_PACING_POLLING_ENTRIES);
        EXPECT_EQ(nbrma_agent_pacing_away_ns(&p), ns);
    }
    // far more refusals never go past the maximum
    for (int i = 0; i < 100; i++)
        refused_after(&p, &count, 1000);
    EXPECT_EQ(nbrma_agent_pacing_away_ns(&p), NBRMA_PACING_AWAY_MAX_NS);
    // one entry made: the next refusal looks again after the minimum
    nbrma_agent_pacing_tried_entry(&p, true, 0, 0);
    refused_after(&p, &count, 1000);
    EXPECT_EQ(nbrma_agent_pacing_away_ns(&p), NBRMA_PACING_AWAY_MIN_NS);
}

TEST(agent_pacing, p7_an_application_found_inside_after_few_calls_is_looked_at_again_soon)
{
    nbrma_agent_pacing p;
    nbrma_agent_pacing_init(&p, false);   // without P8's ring
    uint32_t count = 0;
    for (int i = 0; i < 3; i++)
        refused_after(&p, &count, 5000);
    EXPECT_EQ(nbrma_agent_pacing_away_ns(&p), 4 * NBRMA_PACING_AWAY_MIN_NS);
    // a blocking call (no entry since) or a few calls: back at the minimum
    refused_after(&p, &count, 0);
    EXPECT_EQ(nbrma_agent_pacing_away_ns(&p), NBRMA_PACING_AWAY_MIN_NS);
    refused_after(&p, &count, 0);
    EXPECT_EQ(nbrma_agent_pacing_away_ns(&p), NBRMA_PACING_AWAY_MIN_NS);
    refused_after(&p, &count, NBRMA_PACING_POLLING_ENTRIES);
    refused_after(&p, &count, NBRMA_PACING_POLLING_ENTRIES - 1);
    EXPECT_EQ(nbrma_agent_pacing_away_ns(&p), NBRMA_PACING_AWAY_MIN_NS);
    // the count wraps
    count = UINT32_MAX - 10;
    nbrma_agent_pacing_tried_entry(&p, true, count, 0);
    refused_after(&p, &count, 100);
    refused_after(&p, &count, 100);
    EXPECT_EQ(nbrma_agent_pacing_away_ns(&p), 2 * NBRMA_PACING_AWAY_MIN_NS);
}

TEST(agent_pacing, p7_a_futile_ring_counts_as_a_refusal_and_a_helpful_one_resets)
{
    nbrma_agent_pacing p;
    nbrma_agent_pacing_init(&p, true);
    uint32_t count = 0;
    refused_after(&p, &count, 1000);
    nbrma_agent_pacing_slept_away(&p, true);
    refused_after(&p, &count, 1000);
    EXPECT_EQ(nbrma_agent_pacing_away_ns(&p), 2 * NBRMA_PACING_AWAY_MIN_NS);
    nbrma_agent_pacing_slept_away(&p, true);
    nbrma_agent_pacing_tried_entry(&p, true, 0, 0);
    refused_after(&p, &count, 1000);
    EXPECT_EQ(nbrma_agent_pacing_away_ns(&p), NBRMA_PACING_AWAY_MIN_NS);
}

TEST(agent_pacing, p8_an_application_in_one_call_is_looked_at_less_and_rings_as_it_returns)
{
    nbrma_agent_pacing p;
    nbrma_agent_pacing_init(&p, true);
    uint32_t count = 0;
    nbrma_agent_pacing_tried_entry(&p, true, count, 0);
    // found inside after a few calls: the minimum, the ring with own work
    refused_after(&p, &count, 3);
    EXPECT_EQ(nbrma_agent_pacing_away_ns(&p), NBRMA_PACING_AWAY_MIN_NS);
    EXPECT_EQ(nbrma_agent_pacing_exit_ring(&p), NBRMA_PACING_RING_IF_OWN_WORK);
    // still in that call at the following looks: doubling, a ring on return
    const uint64_t expected[] = {1000000u, 2000000u, 4000000u, 8000000u, 8000000u};
    for (uint64_t ns : expected) {
        nbrma_agent_pacing_slept_away(&p, false);
        refused_after(&p, &count, 0);
        EXPECT_EQ(nbrma_agent_pacing_away_ns(&p), ns);
        EXPECT_EQ(nbrma_agent_pacing_exit_ring(&p), NBRMA_PACING_RING_ON_RETURN);
    }
    // the call returned and the ring let the agent in: back to the start
    nbrma_agent_pacing_slept_away(&p, true);
    nbrma_agent_pacing_tried_entry(&p, true, ++count, 0);
    refused_after(&p, &count, 1);
    EXPECT_EQ(nbrma_agent_pacing_away_ns(&p), NBRMA_PACING_AWAY_MIN_NS);
    EXPECT_EQ(nbrma_agent_pacing_exit_ring(&p), NBRMA_PACING_RING_IF_OWN_WORK);
}

TEST(agent_pacing, p8_a_futile_ring_ends_the_backing_off_until_the_agent_gets_in)
{
    nbrma_agent_pacing p;
    nbrma_agent_pacing_init(&p, true);
    uint32_t count = 0;
    refused_after(&p, &count, 3);
    refused_after(&p, &count, 0);
    refused_after(&p, &count, 0);
    EXPECT_EQ(nbrma_agent_pacing_away_ns(&p), 2 * NBRMA_PACING_AWAY_MIN_NS);
    // rung as the call returned, but the application was inside again:
    // P6's ring is still asked for (it may leave with work of its own)
    nbrma_agent_pacing_slept_away(&p, true);
    refused_after(&p, &count, 1);
    EXPECT_EQ(nbrma_agent_pacing_exit_ring(&p), NBRMA_PACING_RING_IF_OWN_WORK);
    EXPECT_EQ(nbrma_agent_pacing_away_ns(&p), NBRMA_PACING_AWAY_MIN_NS);
    // then in one call again: no ring on return, so no longer look
    refused_after(&p, &count, 0);
    EXPECT_EQ(nbrma_agent_pacing_away_ns(&p), NBRMA_PACING_AWAY_MIN_NS);
    EXPECT_EQ(nbrma_agent_pacing_exit_ring(&p), NBRMA_PACING_RING_IF_OWN_WORK);
    // a futile P6 ring then stops that one too
    nbrma_agent_pacing_slept_away(&p, true);
    refused_after(&p, &count, 0);
    EXPECT_EQ(nbrma_agent_pacing_exit_ring(&p), NBRMA_PACING_RING_NONE);
    EXPECT_EQ(nbrma_agent_pacing_away_ns(&p), NBRMA_PACING_AWAY_MIN_NS);
    // after an entry it backs off again
    nbrma_agent_pacing_tried_entry(&p, true, count, 0);
    refused_after(&p, &count, 2);
    refused_after(&p, &count, 0);
    refused_after(&p, &count, 0);
    EXPECT_EQ(nbrma_agent_pacing_away_ns(&p), 2 * NBRMA_PACING_AWAY_MIN_NS);
    EXPECT_EQ(nbrma_agent_pacing_exit_ring(&p), NBRMA_PACING_RING_ON_RETURN);
}

TEST(agent_pacing, p8_not_where_the_application_cannot_ring)
{
    nbrma_agent_pacing p;
    nbrma_agent_pacing_init(&p, false);
    uint32_t count = 0;
    for (int i = 0; i < 6; i++)
        refused_after(&p, &count, 0);
    EXPECT_EQ(nbrma_agent_pacing_away_ns(&p), NBRMA_PACING_AWAY_MIN_NS);
    EXPECT_EQ(nbrma_agent_pacing_exit_ring(&p), NBRMA_PACING_RING_IF_OWN_WORK);
}

TEST(agent_pacing, p10_asks_for_the_mark_until_a_peer_s_ring_was_futile_for_one_look)
{
    nbrma_agent_pacing p;
    nbrma_agent_pacing_init(&p, true);
    uint32_t n = 0;
    EXPECT_TRUE(nbrma_agent_pacing_away_mark(&p));
    // a timed look that finds the application inside: asks again
    nbrma_agent_pacing_slept_away(&p, false);
    nbrma_agent_pacing_tried_entry(&p, false, ++n, 0);
    EXPECT_TRUE(nbrma_agent_pacing_away_mark(&p));
    // a peer rang and the agent got in: the ring helped
    nbrma_agent_pacing_peer_rang(&p);
    nbrma_agent_pacing_slept_away(&p, false);
    nbrma_agent_pacing_tried_entry(&p, true, ++n, 0);
    EXPECT_TRUE(nbrma_agent_pacing_away_mark(&p));
    // a peer rang while the application was inside: no mark for one look
    nbrma_agent_pacing_peer_rang(&p);
    nbrma_agent_pacing_slept_away(&p, false);
    nbrma_agent_pacing_tried_entry(&p, false, ++n, 0);
    EXPECT_FALSE(nbrma_agent_pacing_away_mark(&p));
    // that look, unmarked, ended by its timer: the mark again
    nbrma_agent_pacing_slept_away(&p, false);
    nbrma_agent_pacing_tried_entry(&p, false, ++n, 0);
    EXPECT_TRUE(nbrma_agent_pacing_away_mark(&p));
}

// An application that calls MPI all the time serves what needs its CPU
// itself: the agent asks it neither to ring as it leaves with work in flight
// (P6: every one of its exits would look for such work, osu_get_latency -s
// flush 8 B: about 25 instructions of 840 per get + flush) nor to mark its
// mailboxes (P10).
TEST(agent_pacing, p6_and_p10_not_while_the_application_polls)
{
    nbrma_agent_pacing p;
    nbrma_agent_pacing_init(&p, true);
    uint32_t n = 0;
    nbrma_agent_pacing_slept_away(&p, false);
    nbrma_agent_pacing_tried_entry(&p, false, n += NBRMA_PACING_POLLING_ENTRIES, 0);
    EXPECT_EQ(nbrma_agent_pacing_exit_ring(&p), NBRMA_PACING_RING_NONE);
    EXPECT_FALSE(nbrma_agent_pacing_away_mark(&p));
    // a few calls since: it may leave, for long or with work in flight,
    // after any of them
    nbrma_agent_pacing_slept_away(&p, false);
    nbrma_agent_pacing_tried_entry(&p, false, n += 3, 0);
    EXPECT_EQ(nbrma_agent_pacing_exit_ring(&p), NBRMA_PACING_RING_IF_OWN_WORK);
    EXPECT_TRUE(nbrma_agent_pacing_away_mark(&p));
    nbrma_agent_pacing_slept_away(&p, false);
    nbrma_agent_pacing_tried_entry(&p, false, n += NBRMA_PACING_POLLING_ENTRIES, 0);
    EXPECT_EQ(nbrma_agent_pacing_exit_ring(&p), NBRMA_PACING_RING_NONE);
    EXPECT_FALSE(nbrma_agent_pacing_away_mark(&p));
    nbrma_agent_pacing_slept_away(&p, false);
    nbrma_agent_pacing_tried_entry(&p, true, n += NBRMA_PACING_POLLING_ENTRIES, 0);
    EXPECT_EQ(nbrma_agent_pacing_exit_ring(&p), NBRMA_PACING_RING_IF_OWN_WORK) << "in again";
    EXPECT_TRUE(nbrma_agent_pacing_away_mark(&p)) << "in again";
}

TEST(agent_pacing, p10_not_where_the_application_cannot_mark)
{
    nbrma_agent_pacing p;
    nbrma_agent_pacing_init(&p, false);
    EXPECT_FALSE(nbrma_agent_pacing_away_mark(&p));
}

// P11: every message wakes the agent only while the application has work of
// its own in flight and does not poll; for want of work, peers' requests
// alone wake it until the application's work begins; while it polls, peers'
// requests and the agent's look after the shortest sleep away.
TEST(agent_pacing, p11_mailboxes_wake_for_every_message_only_with_own_work_and_no_polling)
{
    nbrma_agent_pacing p;
    nbrma_agent_pacing_init(&p, true);
    uint64_t now = 10 * ms;
    uint32_t entries = 100;

    EXPECT_EQ(nbrma_agent_pacing_sleep_mark(&p, false, entries, now), NBRMA_PACING_MARK_PEERS_UNTIL_OWN_WORK);
    // a few calls since: not polling
    entries += NBRMA_PACING_POLLING_ENTRIES - 1;
    now += 100 * us;
    EXPECT_EQ(nbrma_agent_pacing_sleep_mark(&p, true, entries, now), NBRMA_PACING_MARK_ALL);
    // polling: the count of entries since the previous marking, soon after it
    entries += NBRMA_PACING_POLLING_ENTRIES;
    now += 100 * us;
    EXPECT_EQ(nbrma_agent_pacing_sleep_mark(&p, true, entries, now), NBRMA_PACING_MARK_PEERS_WHILE_POLLING);
    EXPECT_EQ(nbrma_agent_pacing_sleep_mark(&p, false, entries, now), NBRMA_PACING_MARK_PEERS_UNTIL_OWN_WORK)
        << "no work of its own: until it begins, polling or not";
    // as many calls, but spread over the longest sleep away: not polling
    entries += NBRMA_PACING_POLLING_ENTRIES;
    now += NBRMA_PACING_AWAY_MAX_NS;
    EXPECT_EQ(nbrma_agent_pacing_sleep_mark(&p, true, entries, now), NBRMA_PACING_MARK_ALL);
    // the count wraps
    p.marked_entries = UINT32_MAX - 2;
    EXPECT_EQ(nbrma_agent_pacing_sleep_mark(&p, true, NBRMA_PACING_POLLING_ENTRIES, now + us),
              NBRMA_PACING_MARK_PEERS_WHILE_POLLING);
}

TEST(agent_pacing, p11_not_where_the_application_does_not_count_its_entries)
{
    nbrma_agent_pacing p;
    nbrma_agent_pacing_init(&p, false);
    EXPECT_EQ(nbrma_agent_pacing_sleep_mark(&p, true, 0, 10 * ms), NBRMA_PACING_MARK_ALL);
    EXPECT_EQ(nbrma_agent_pacing_sleep_mark(&p, true, 1000, 10 * ms + us), NBRMA_PACING_MARK_ALL);
    EXPECT_EQ(nbrma_agent_pacing_sleep_mark(&p, false, 1000, 10 * ms + 2 * us),
              NBRMA_PACING_MARK_PEERS_UNTIL_OWN_WORK);
}

TEST(agent_pacing, share_100_never_pauses_and_share_0_pauses_the_window)
{
    clocks c;
    c.pause(false, 100);
    c.compute_and_serve(1 * ms, 900 * us);
    EXPECT_EQ(c.pause(false, 100), 0u);
    c.compute_and_serve(1 * ms, 900 * us);
    EXPECT_EQ(c.pause(false, 0), NBRMA_PACING_WINDOW_NS);
}

// A peer's stream of operations, each costing the agent `cost` of CPU time
// beside a computation: the agent serves one whenever it is not paused. Its
// share over a long run must stay within the setting (plus one operation per
// window, the granularity of the rule).
TEST(agent_pacing, a_stream_beside_a_computation_gets_the_share_and_no_more)
{
    for (unsigned share : {5u, 10u, 25u, 50u}) {
        for (uint64_t cost : {5 * us, 65 * us, 400 * us}) {
            clocks c;
            c.pause(false, share);
            const uint64_t start_wall = c.wall, start_agent = c.agent;
            while (c.wall - start_wall < 2000 * ms) {
                c.compute_and_serve(cost, cost);        // one operation served
                const uint64_t pause = c.pause(false, share);
                c.compute_and_serve(pause + 1 * us, 0);  // then a moment of computation
            }
            const double got = double(c.agent - start_agent) / double(c.wall - start_wall);
            EXPECT_LE(got, share / 100.0 + double(cost) / NBRMA_PACING_WINDOW_NS)
                << "share " << share << " cost " << cost;
            EXPECT_GE(got, share / 100.0 * 0.9) << "share " << share << " cost " << cost;
        }
    }
}

// The same stream toward an application that sleeps: never paused, however
// much of the time it takes.
TEST(agent_pacing, a_stream_toward_a_sleeping_application_is_never_paused)
{
    clocks c;
    c.computes = false;
    c.pause(false, 10);
    for (int i = 0; i < 10000; i++) {
        c.compute_and_serve(70 * us, 65 * us);
        ASSERT_EQ(c.pause(false, 10), 0u) << i;
    }
}

// P9: the agent rings a parked thread after a service that served
// something; not after one that served nothing (the parked thread's own
// ring began it and would come back), and never when no thread is parked.
TEST(agent_pacing, p9_a_parked_thread_is_rung_after_a_service_that_served)
{
    EXPECT_TRUE(nbrma_agent_pacing_rings_parked(true, true));
    EXPECT_FALSE(nbrma_agent_pacing_rings_parked(true, false));
    EXPECT_FALSE(nbrma_agent_pacing_rings_parked(false, true));
    EXPECT_FALSE(nbrma_agent_pacing_rings_parked(false, false));
}

}  // namespace
