// The table of the component's pollers (ch4_netmod_rma/formats/poller_table.c)
// without MPI: listing once and up to the limit, running only the pollers
// with work in order until one fails, the count of pollers with work that
// tells the glue when its hook may go quiet, and own work.

#include <gtest/gtest.h>

#include <string>

#include "poller_table.h"

namespace {

std::string ran;
int fail_with;

int poll_a(int *made_progress)
{
    ran += "a";
    *made_progress = 1;
    return 0;
}

int poll_b(int *)
{
    ran += "b";
    return fail_with;
}

int poll_c(int *)
{
    ran += "c";
    return 0;
}

class PollerTable : public ::testing::Test {
  protected:
    void SetUp() override
    {
        ran.clear();
        fail_with = 0;
    }
    nbrma_poller_table t = {};
    nbrma_poller a = {poll_a, true, false};
    nbrma_poller b = {poll_b, false, false};
    nbrma_poller c = {poll_c, false, false};
    nbrma_poller d = {poll_c, true, true, false};  // own work no event announces
};

TEST_F(PollerTable, ListsEachOnceUpToTheLimit)
{
    EXPECT_TRUE(nbrma_pollers_list(&t, &a));
    EXPECT_TRUE(nbrma_pollers_list(&t, &a));
    EXPECT_EQ(t.n, 1);
    nbrma_poller more[NBRMA_MAX_POLLERS];
    for (int i = 1; i < NBRMA_MAX_POLLERS; i++)
        EXPECT_TRUE(nbrma_pollers_list(&t, &more[i]));
    EXPECT_EQ(t.n, NBRMA_MAX_POLLERS);
    EXPECT_FALSE(nbrma_pollers_list(&t, &b));
    EXPECT_TRUE(nbrma_pollers_list(&t, &more[3]));     // listed already
}

TEST_F(PollerTable, RunsThoseWithWorkInOrder)
{
    int made_progress = 0;

    for (nbrma_poller *p : {&a, &b, &c})
        nbrma_pollers_list(&t, p);
    EXPECT_EQ(nbrma_pollers_run(&t, &made_progress), 0);
    EXPECT_EQ(ran, "");
    nbrma_pollers_wake(&t, &c);
    nbrma_pollers_wake(&t, &a);
    EXPECT_EQ(nbrma_pollers_run(&t, &made_progress), 0);
    EXPECT_EQ(ran, "ac");
    EXPECT_EQ(made_progress, 1);
}

TEST_F(PollerTable, StopsAtTheFirstError)
{
    int made_progress = 0;

    for (nbrma_poller *p : {&a, &b, &c}) {
        nbrma_pollers_list(&t, p);
        nbrma_pollers_wake(&t, p);
    }
    fail_with = 15;
    EXPECT_EQ(nbrma_pollers_run(&t, &made_progress), 15);
    EXPECT_EQ(ran, "ab");
}

TEST_F(PollerTable, QuietOnceTheLastWithWorkSleeps)
{
    nbrma_pollers_list(&t, &a);
    nbrma_pollers_list(&t, &b);
    EXPECT_FALSE(nbrma_pollers_sleep(&t, &a));  // had no work
    nbrma_pollers_wake(&t, &a);
    nbrma_pollers_wake(&t, &b);
    EXPECT_EQ(t.awake, 2);
    EXPECT_FALSE(nbrma_pollers_sleep(&t, &a));
    EXPECT_FALSE(a.has_work);
    EXPECT_FALSE(nbrma_pollers_sleep(&t, &a));  // asleep already: no count
    EXPECT_EQ(t.awake, 1);
    EXPECT_TRUE(nbrma_pollers_sleep(&t, &b));
    EXPECT_EQ(t.awake, 0);
}

TEST_F(PollerTable, OwnWorkOnlyWhileAnOwnPollerHasWork)
{
    nbrma_pollers_list(&t, &a);
    nbrma_pollers_list(&t, &b);
    EXPECT_FALSE(nbrma_pollers_own_work(&t));
    nbrma_pollers_wake(&t, &b);
    EXPECT_FALSE(nbrma_pollers_own_work(&t));   // peers' work
    nbrma_pollers_wake(&t, &a);
    EXPECT_TRUE(nbrma_pollers_own_work(&t));
    nbrma_pollers_sleep(&t, &a);
    EXPECT_FALSE(nbrma_pollers_own_work(&t));
    nbrma_pollers_sleep(&t, &a);                // asleep already: no count
    nbrma_pollers_list(&t, &d);
    nbrma_pollers_wake(&t, &d);
    nbrma_pollers_wake(&t, &a);
    nbrma_pollers_sleep(&t, &a);
    EXPECT_TRUE(nbrma_pollers_own_work(&t));    // d's still
    nbrma_pollers_sleep(&t, &d);
    EXPECT_FALSE(nbrma_pollers_own_work(&t));
    EXPECT_EQ(t.awake, 1);                      // b's
}

// The progress agent sleeps on a timer only while such a poller has work
// (MPIX_Win_ilock toward a busy lock word of a peer).
TEST_F(PollerTable, UnannouncedWorkOnlyWhileSuchAPollerHasWork)
{
    nbrma_pollers_list(&t, &a);
    nbrma_pollers_list(&t, &d);
    nbrma_pollers_wake(&t, &a);
    EXPECT_TRUE(nbrma_pollers_own_work(&t));
    EXPECT_FALSE(nbrma_pollers_unannounced_work(&t));   // completions: events announce them
    nbrma_pollers_wake(&t, &d);
    EXPECT_TRUE(nbrma_pollers_unannounced_work(&t));
    nbrma_pollers_sleep(&t, &d);
    EXPECT_FALSE(nbrma_pollers_unannounced_work(&t));
}

}  // namespace
