// The questions the component asks of an endpoint's lanes
// (formats/ucx_lane_questions.c) without MPI or UCX: a fake print function
// gives lane tables composed of lines as UCX 1.13 prints them; puts and gets
// emulated over tcp, atomics and RMA on this CPU's transports, mapping
// transports on any lane, and each answer printed once per endpoint and
// question.

#include <gtest/gtest.h>

#include <cstdio>
#include <map>
#include <string>

#include "ucx_lane_questions.h"

namespace {

const char *const same_node_table =
    "#\n"
    "# UCP endpoint \n"
    "#\n"
    "#               peer: <no debug data>\n"
    "#                 lane[0]:  4:posix/memory.0 md[2]  -> md[2]/posix/sysdev[255] rma_bw#0 amo#0 am am_bw#0\n"
    "#                 lane[1]:  4:posix/memory.0 md[2]  -> md[2]/posix/sysdev[255] rma_bw#0 amo#0\n"
    "#                 lane[2]:  5:sysv/memory.0 md[3]   -> md[3]/sysv/sysdev[255] rma_bw#1\n"
    "#                 lane[3]:  1:cma/memory.0 md[1]    -> md[1]/cma/sysdev[255] rma_bw#1\n"
    "#                 lane[4]:  3:self/memory0 md[0]    -> md[0]/self/sysdev[255] amo#1\n"
    "#\n";

// Another host over tcp: RMA emulated, atomics too.
const char *const tcp_table =
    "#\n"
    "# UCP endpoint \n"
    "#\n"
    "#                 lane[0]:  8:tcp/eth0.0 md[4]       -> md[4]/tcp/sysdev[255] rma_bw#0 amo#0 am am_bw#0 wireup\n"
    "#                 lane[1]:  9:tcp/eth1.0 md[4]       -> md[4]/tcp/sysdev[255] rma_bw#1\n"
    "#\n";

// The same node with cross-memory attach for RMA and tcp for atomics.
const char *const mixed_table =
    "#\n"
    "#                 lane[0]:  1:cma/memory.0 md[1]    -> md[1]/cma/sysdev[255] rma_bw#0\n"
    "#                 lane[1]:  8:tcp/lo.0 md[4]        -> md[4]/tcp/sysdev[255] amo#0 am am_bw#0\n"
    "#\n";

std::map<void *, int> prints;

void print_table(void *endpoint, FILE *stream)
{
    prints[endpoint]++;
    fputs(static_cast<const char *>(endpoint), stream);
}

// The endpoint is its table: the fake print prints what it points to.
void *ep(const char *table)
{
    return const_cast<char *>(table);
}

const char amo[] = "amo#", rma[] = "rma_bw#";

class LaneQuestions : public ::testing::Test {
  protected:
    void SetUp() override { prints.clear(); }
    void TearDown() override { nbrma_ucx_lane_answers_free(&answers); }
    nbrma_ucx_lane_answers_t answers = {};
};

TEST_F(LaneQuestions, RmaLanesEmulatedOverTcpOnly)
{
    int lanes, emulated;

    nbrma_ucx_rma_lanes(&answers, ep(same_node_table), print_table, &lanes, &emulated);
    EXPECT_EQ(lanes, 4);
    EXPECT_EQ(emulated, 0);
    nbrma_ucx_rma_lanes(&answers, ep(tcp_table), print_table, &lanes, &emulated);
    EXPECT_EQ(lanes, 2);
    EXPECT_EQ(emulated, 2);
    nbrma_ucx_rma_lanes(&answers, ep(mixed_table), print_table, &lanes, &emulated);
    EXPECT_EQ(lanes, 1);
    EXPECT_EQ(emulated, 0);
}

TEST_F(LaneQuestions, OnCpuWhenEveryLaneOfTheUsageIs)
{
    EXPECT_TRUE(nbrma_ucx_lanes_on_cpu(&answers, ep(same_node_table), print_table, amo));
    EXPECT_TRUE(nbrma_ucx_lanes_on_cpu(&answers, ep(same_node_table), print_table, rma));
    EXPECT_FALSE(nbrma_ucx_lanes_on_cpu(&answers, ep(tcp_table), print_table, amo));
    EXPECT_TRUE(nbrma_ucx_lanes_on_cpu(&answers, ep(mixed_table), print_table, rma));
    EXPECT_FALSE(nbrma_ucx_lanes_on_cpu(&answers, ep(mixed_table), print_table, amo));
    static const char none[] = "no_such_usage#";
    EXPECT_FALSE(nbrma_ucx_lanes_on_cpu(&answers, ep(same_node_table), print_table, none));
}

TEST_F(LaneQuestions, MapsMemoryWhereAnyLaneIsAMappingTransport)
{
    EXPECT_TRUE(nbrma_ucx_lanes_map_memory(&answers, ep(same_node_table), print_table));
    EXPECT_FALSE(nbrma_ucx_lanes_map_memory(&answers, ep(tcp_table), print_table));
    EXPECT_FALSE(nbrma_ucx_lanes_map_memory(&answers, ep(mixed_table), print_table));  // cma only
}

TEST_F(LaneQuestions, EachQuestionIsPrintedOncePerEndpoint)
{
    int lanes, emulated;

    for (int i = 0; i < 3; i++) {
        nbrma_ucx_rma_lanes(&answers, ep(tcp_table), print_table, &lanes, &emulated);
        EXPECT_EQ(emulated, 2);
    }
    EXPECT_EQ(prints[ep(tcp_table)], 1);
    // another question on the same endpoint is printed again, then kept
    nbrma_ucx_lanes_on_cpu(&answers, ep(tcp_table), print_table, amo);
    nbrma_ucx_lanes_on_cpu(&answers, ep(tcp_table), print_table, amo);
    nbrma_ucx_lanes_map_memory(&answers, ep(tcp_table), print_table);
    nbrma_ucx_lanes_map_memory(&answers, ep(tcp_table), print_table);
    EXPECT_EQ(prints[ep(tcp_table)], 3);
}

TEST_F(LaneQuestions, CountAnswersAnyTransportList)
{
    static const char *const cma_only[] = {"cma"};
    int lanes, on;

    nbrma_ucx_lanes_count(&answers, ep(same_node_table), print_table, rma, cma_only, 1, &lanes,
                          &on);
    EXPECT_EQ(lanes, 4);
    EXPECT_EQ(on, 1);
}

}  // namespace
