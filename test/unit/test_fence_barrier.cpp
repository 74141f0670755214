// The fence barrier (rule 5, core/include/nbrma_fence_barrier.h): a k-ary
// dissemination barrier, k = min(P, 64). Its arithmetic for process counts
// up to 4200, and the engines of a simulated world: P - 1 messages per
// process and fence up to 64 processes, (k - 1) * ceil(log_k P) beyond (P - 1
// before), no fence passes while one process has not arrived, and what a
// message tells about single peers (rule F1).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "nbrma_fence_barrier.h"
#include "sim_world.hpp"

using nbrma_sim::msg_kind;
using nbrma_sim::request;
using nbrma_sim::sim_op;
using nbrma_sim::world;

namespace {

int messages_per_process(int p)
{
    int n = 0;
    for (int j = 0; j < nbrma_fence_rounds(p); ++j)
        for (int i = 1; nbrma_fence_index_valid(p, j, i); ++i)
            ++n;
    return n;
}

}  // namespace

TEST(fence_barrier, rounds_partners_and_coverage)
{
    EXPECT_EQ(nbrma_fence_rounds(1), 0);
    EXPECT_EQ(nbrma_fence_rounds(2), 1);
    EXPECT_EQ(nbrma_fence_rounds(64), 1);
    EXPECT_EQ(nbrma_fence_rounds(65), 2);
    EXPECT_EQ(nbrma_fence_rounds(4096), 2);
    EXPECT_EQ(nbrma_fence_rounds(4097), 3);
    EXPECT_EQ(messages_per_process(2), 1);
    EXPECT_EQ(messages_per_process(64), 63);
    EXPECT_EQ(messages_per_process(100), 64);
    EXPECT_EQ(messages_per_process(4096), 126);
    for (int p : {2, 3, 7, 63, 64, 65, 100, 128, 129, 4095, 4096, 4100}) {
        for (int me : {0, 1, p / 2, p - 1}) {
            SCOPED_TRACE(std::to_string(me) + " of " + std::to_string(p));
            for (int j = 0; j < nbrma_fence_rounds(p); ++j) {
                EXPECT_NE(nbrma_fence_round_mask(p, j), 0u);
                for (int i = 1; nbrma_fence_index_valid(p, j, i); ++i) {
                    const int to = nbrma_fence_to(me, p, j, i), from = nbrma_fence_from(me, p, j, i);
                    EXPECT_NE(to, me);
                    EXPECT_NE(from, me);
                    EXPECT_EQ(nbrma_fence_from(to, p, j, i), me) << "whom I tell hears me with that message";
                }
            }
            // every other process is covered by one message that exists
            for (int peer = 0; peer < p; ++peer) {
                if (peer == me)
                    continue;
                int j = -1, i = -1;
                nbrma_fence_covering(me, p, peer, &j, &i);
                ASSERT_TRUE(nbrma_fence_index_valid(p, j, i)) << peer << ": " << j << "." << i;
            }
        }
    }
    const std::uint64_t token = nbrma_fence_token(123456789, 2, 63);
    EXPECT_EQ(nbrma_fence_token_seq(token), 123456789u);
    EXPECT_EQ(nbrma_fence_token_round(token), 2);
    EXPECT_EQ(nbrma_fence_token_index(token), 63);
}

// One fence on P processes: each sends the barrier's messages, no more; none
// passes while one process stays away, everything else delivered; all pass
// once it came.
TEST(fence_barrier, messages_per_process_and_no_early_pass)
{
    for (int p : {2, 3, 5, 64, 65, 100, 130}) {
        SCOPED_TRACE(p);
        world w(p);
        std::vector<request *> fences(static_cast<std::size_t>(p));
        for (int r = 1; r < p; ++r) {  // process 0 comes last
            fences[static_cast<std::size_t>(r)] = w.new_request(r);
            ASSERT_EQ(nbrma_ifence(w.e(r), 0, fences[static_cast<std::size_t>(r)]), NBRMA_OK);
        }
        w.deliver_all();
        for (int r = 1; r < p; ++r)
            ASSERT_EQ(fences[static_cast<std::size_t>(r)]->completions, 0) << r << " passed without process 0";
        fences[0] = w.new_request(0);
        ASSERT_EQ(nbrma_ifence(w.e(0), 0, fences[0]), NBRMA_OK);
        w.deliver_all();
        for (int r = 0; r < p; ++r)
            ASSERT_EQ(fences[static_cast<std::size_t>(r)]->completions, 1) << r;
        EXPECT_EQ(w.fence_arrivals_sent(), static_cast<std::size_t>(p * messages_per_process(p)));
        EXPECT_TRUE(w.failures().empty()) << w.failures().front();
    }
}

// Rule F1 asks whether one peer arrived before the barrier passed: a
// message tells it for the peers it covers, and for no other. 70 processes,
// two rounds: round 0 from the 63 processes before 0, round 1 from the one
// 64 before (rank 6), which covers ranks 6 .. 1 (distances 64 .. 69).
TEST(fence_barrier, a_message_tells_which_peers_arrived)
{
    const int p = 70, absent = 6;
    world w(p);
    const unsigned both_access_flags = NBRMA_REORDER_ACCESS_AFTER_ACCESS | NBRMA_REORDER_ACCESS_AFTER_EXPOSURE;
    ASSERT_EQ(nbrma_set_reorder_flags(w.e(0), both_access_flags), NBRMA_OK);
    for (int r = 0; r < p; ++r)
        if (r != absent)
            ASSERT_EQ(nbrma_ifence(w.e(r), NBRMA_MODE_NOSUCCEED, nullptr), NBRMA_OK);
    w.deliver_all();
    EXPECT_EQ(w.impl(0).fence_barriers_passed(), 0u);
    // process 0's lock epochs toward 69 (distance 1) and 7 (63) begin; toward
    // 6 (absent) and 5 (65: covered by 6's message only) they wait
    std::vector<sim_op *> ops(static_cast<std::size_t>(p), nullptr);
    for (int t : {69, 7, absent, 5}) {
        ASSERT_EQ(nbrma_ilock(w.e(0), NBRMA_LOCK_SHARED, t, 0, nullptr), NBRMA_OK);
        ASSERT_EQ(w.record_op(0, t, 0, &ops[static_cast<std::size_t>(t)]), NBRMA_OK);
        ASSERT_EQ(nbrma_iunlock(w.e(0), t, nullptr), NBRMA_OK);
    }
    w.deliver_all();
    EXPECT_TRUE(ops[69]->issued);
    EXPECT_TRUE(ops[7]->issued);
    EXPECT_FALSE(ops[absent]->issued) << "process 6 has not arrived";
    EXPECT_FALSE(ops[5]->issued) << "only process 6's message would tell of 5";
    ASSERT_EQ(nbrma_ifence(w.e(absent), NBRMA_MODE_NOSUCCEED, nullptr), NBRMA_OK);
    w.deliver_all();
    EXPECT_TRUE(ops[absent]->issued && ops[5]->issued);
    EXPECT_EQ(w.impl(0).fence_barriers_passed(), 1u);
    EXPECT_TRUE(w.failures().empty()) << w.failures().front();
}
