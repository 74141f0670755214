// UCX 1.13's lane table as ucp_ep_print_info() prints it, read without MPI
// or UCX (formats/ucx_lane_table.c): lanes counted per usage, transports
// matched by their exact names, lines that do not read as a lane, and the
// answers kept per (endpoint, usage, transports) through the cache's growth.

#include <gtest/gtest.h>

#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

extern "C" {
#include "ucx_lane_table.h"
}

namespace {

// The lists the glue asks about (ch4/common/nbrma_ucx_lanes.c).
const char *const cpu_transports[] = {"posix", "sysv", "xpmem", "self", "cma", "knem"};
const char *const mapping[] = {"posix", "sysv", "xpmem"};
const char *const emulating[] = {"tcp"};
// usages as the callers' constants: the cache's keys are their addresses
const char amo[] = "amo#", rma[] = "rma_bw#", any[] = "";

// Captured from UCX 1.13.1 on one host, an endpoint to its own worker:
// ucx_info -e -u ta.
const char *const loopback_table =
    "#\n"
    "# UCP endpoint \n"
    "#\n"
    "#               peer: <no debug data>\n"
    "#                 lane[0]:  0:self/memory0.0 md[0]          -> md[0]/self/sysdev[255] amo#0 am am_bw#0\n"
    "#                 lane[1]:  5:cma/memory.0 md[4]            -> md[4]/cma/sysdev[255] rma_bw#0\n"
    "#\n"
    "#                tag_send: 0..<egr/short>..8185..<egr/bcopy>..8192..<rndv>..(inf)\n"
    "#            tag_send_nbr: 0..<egr/short>..8185..<egr/bcopy>..262144..<rndv>..(inf)\n"
    "#           tag_send_sync: 0..<egr/short>..8185..<egr/bcopy>..8192..<rndv>..(inf)\n"
    "#\n"
    "#                  rma_bw: mds rndv_rkey_size 9\n"
    "#\n";

// The same with RMA, 32- and 64-bit atomics and active messages asked for
// (ucp_init, ucp_ep_print_info): lanes 1 and 2 carry no usage this table
// names, and only "" counts them.
const char *const loopback_rma_table =
    "#\n"
    "# UCP endpoint \n"
    "#\n"
    "#               peer: <no debug data>\n"
    "#                 lane[0]:  0:self/memory0.0 md[0]          -> md[0]/self/sysdev[255] amo#0 am am_bw#0\n"
    "#                 lane[1]:  3:sysv/memory.0 md[2]           -> md[2]/sysv/sysdev[255]\n"
    "#                 lane[2]:  4:posix/memory.0 md[3]          -> md[3]/posix/sysdev[255]\n"
    "#                 lane[3]:  5:cma/memory.0 md[4]            -> md[4]/cma/sysdev[255] rma_bw#0\n"
    "#\n"
    "#                 am_send: 0..<egr/short>..8185..<egr/bcopy>..8192..<rndv>..(inf)\n"
    "#                  put[0]: 0..<short>..4294967296..<bcopy>..(inf)\n"
    "#                  get[0]: 0..<bcopy>..(inf)\n"
    "#                  put[1]: 0..<short>..4294967296..<bcopy>..(inf)\n"
    "#                  get[1]: 0..<bcopy>..(inf)\n"
    "#\n"
    "#                  rma_bw: mds rndv_rkey_size 9\n"
    "#\n";

// The samples below are composed of lines as UCX 1.13 prints them.
// A peer of the same node: shared memory, cross-memory attach, loopback.
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
    "#\n"
    "#                  rma_bw: mds [2] [3] rndv_rkey_size 19\n"
    "#\n";

// A peer over TCP alone: UCX emulates puts, gets and atomics with messages.
const char *const tcp_table =
    "#\n"
    "# UCP endpoint \n"
    "#\n"
    "#               peer: <no debug data>\n"
    "#                 lane[0]:  8:tcp/lo.0 md[4]          -> md[4]/tcp/sysdev[255] rma_bw#0 am am_bw#0 wireup\n"
    "#                 lane[1]:  9:tcp/eth0 md[4]          -> md[4]/tcp/sysdev[255] rma_bw#1 am_bw#1\n"
    "#\n"
    "#                tag_send: 0..<egr/short>..8185..<egr/bcopy>..8192..<rndv>..(inf)\n"
    "#\n";

// Shared memory for atomics, TCP next to it for puts and gets.
const char *const mixed_table =
    "#                 lane[0]:  8:tcp/lo.0 md[4]          -> md[4]/tcp/sysdev[255] rma_bw#0 am am_bw#0 wireup\n"
    "#                 lane[1]:  4:posix/memory.0 md[2]  -> md[2]/posix/sysdev[255] rma_bw#1 amo#0\n"
    "#                 lane[2]:  5:sysv/memory.0 md[3]   -> md[3]/sysv/sysdev[255] rma_bw#2\n";

struct counted {
    int lanes, on;
    bool operator==(const counted &o) const { return lanes == o.lanes && on == o.on; }
};

void PrintTo(const counted &c, std::ostream *os)
{
    *os << "{lanes " << c.lanes << ", on " << c.on << "}";
}

counted count(const char *text, const char *usage, const char *const *transports, size_t n)
{
    counted c{-1, -1};
    nbrma_ucx_lane_table_count(text, usage, transports, n, &c.lanes, &c.on);
    return c;
}

template <size_t N> counted count(const char *text, const char *usage, const char *const (&transports)[N])
{
    return count(text, usage, transports, N);
}

const void *endpoint(uintptr_t i)
{
    // spaced like heap objects, so that the hash sees realistic low bits
    return reinterpret_cast<const void *>(uintptr_t{0x7f3a12000000} + i * 4096);
}

}  // namespace

TEST(UcxLaneTable, LoopbackCountsPerUsage)
{
    EXPECT_EQ(count(loopback_table, "amo#", cpu_transports), (counted{1, 1}));
    EXPECT_EQ(count(loopback_table, "rma_bw#", cpu_transports), (counted{1, 1}));
    EXPECT_EQ(count(loopback_table, "", cpu_transports), (counted{2, 2}));
    EXPECT_EQ(count(loopback_table, "", mapping), (counted{2, 0})) << "self and cma map no memory";
    EXPECT_EQ(count(loopback_table, "rma_bw#", emulating), (counted{1, 0}));
}

TEST(UcxLaneTable, LanesWithoutAUsageCountOnlyForEveryLane)
{
    EXPECT_EQ(count(loopback_rma_table, "amo#", cpu_transports), (counted{1, 1}));
    EXPECT_EQ(count(loopback_rma_table, "rma_bw#", cpu_transports), (counted{1, 1}));
    EXPECT_EQ(count(loopback_rma_table, "", cpu_transports), (counted{4, 4}));
    EXPECT_EQ(count(loopback_rma_table, "", mapping), (counted{4, 2})) << "sysv and posix map memory";
    EXPECT_EQ(count(loopback_rma_table, "rma_bw#", mapping), (counted{1, 0}));
}

TEST(UcxLaneTable, SameNodeCountsPerUsage)
{
    EXPECT_EQ(count(same_node_table, "amo#", cpu_transports), (counted{3, 3}));
    EXPECT_EQ(count(same_node_table, "rma_bw#", cpu_transports), (counted{4, 4}));
    EXPECT_EQ(count(same_node_table, "", cpu_transports), (counted{5, 5}));
    EXPECT_EQ(count(same_node_table, "", mapping), (counted{5, 3}));
    EXPECT_EQ(count(same_node_table, "amo#", mapping), (counted{3, 2}));
    EXPECT_EQ(count(same_node_table, "rma_bw#", emulating), (counted{4, 0}));
    // "am" is in every line with "amo#" and in "am am_bw#0": a substring
    EXPECT_EQ(count(same_node_table, "am", cpu_transports), (counted{3, 3}));
}

TEST(UcxLaneTable, TcpCountsPerUsage)
{
    EXPECT_EQ(count(tcp_table, "rma_bw#", emulating), (counted{2, 2}));
    EXPECT_EQ(count(tcp_table, "amo#", cpu_transports), (counted{0, 0})) << "\"am am_bw#0\" is no amo#";
    EXPECT_EQ(count(tcp_table, "", cpu_transports), (counted{2, 0}));
    EXPECT_EQ(count(tcp_table, "", mapping), (counted{2, 0}));
    EXPECT_EQ(count(tcp_table, "wireup", emulating), (counted{1, 1}));
}

TEST(UcxLaneTable, MixedCountsPerUsage)
{
    EXPECT_EQ(count(mixed_table, "amo#", cpu_transports), (counted{1, 1}));
    EXPECT_EQ(count(mixed_table, "rma_bw#", cpu_transports), (counted{3, 2}));
    EXPECT_EQ(count(mixed_table, "rma_bw#", emulating), (counted{3, 1}));
    EXPECT_EQ(count(mixed_table, "", mapping), (counted{3, 2}));
}

TEST(UcxLaneTable, TransportsMatchByExactName)
{
    const char *text =
        "# lane[0]:  4:posixx/memory.0 md[2] -> md[2]/posixx/sysdev[255] amo#0\n"
        "# lane[1]:  4:posi/memory.0 md[2]   -> md[2]/posi/sysdev[255] amo#1\n"
        "# lane[2]:  5:sysv2/memory.0 md[3]  -> md[3]/sysv2/sysdev[255] amo#2\n"
        "# lane[3]:  6:xtcp/eth0 md[4]       -> md[4]/xtcp/sysdev[255] amo#3\n"
        "# lane[4]:  4:POSIX/memory.0 md[2]  -> md[2]/POSIX/sysdev[255] amo#4\n";
    EXPECT_EQ(count(text, "amo#", cpu_transports), (counted{5, 0}));
    EXPECT_EQ(count(text, "amo#", emulating), (counted{5, 0}));
    const char *const longer[] = {"posixx"};
    EXPECT_EQ(count(text, "amo#", longer), (counted{5, 1}));
    const char *const none[] = {"unused"};
    EXPECT_EQ(count(text, "amo#", none, 0), (counted{5, 0})) << "no transports: on none";
}

TEST(UcxLaneTable, TheTransportIsBeforeTheFirstSlashAfterTheLanesColon)
{
    // resource index, spaces and further colons skipped; what the "->"
    // side names does not count
    const char *text =
        "lane[0]:4:posix/memory.0 -> md[2]/tcp/sysdev[255] amo#0\n"
        "lane[1]:   12:  sysv/memory.0 amo#1\n"
        "lane[2]: 3::self/memory0 amo#2\n";
    EXPECT_EQ(count(text, "amo#", cpu_transports), (counted{3, 3}));
    EXPECT_EQ(count(text, "amo#", emulating), (counted{3, 0}));
}

TEST(UcxLaneTable, UnreadableLaneLinesCountAsOnNone)
{
    const char *text =
        "#  lane[0]: posix memory.0 md[2] amo#0\n"  // no slash
        "#  lane[2]:  4:/memory.0 md[2] amo#2\n"    // an empty transport
        "#  lane[3]:  4:posix\n"                    // the slash is on the next line
        "/memory.0 amo#3\n"
        "#  lane[1]  4 posix/memory.0 amo#1\n"      // no colon on this line (the
        "#  lane[4]:  4:posix/memory.0 amo#4\n";    // next one's does not count)
    EXPECT_EQ(count(text, "amo#", cpu_transports), (counted{4, 1}));
    EXPECT_EQ(count(text, "", cpu_transports), (counted{5, 1}));
    const char *const nameless[] = {""};
    EXPECT_EQ(count(text, "", nameless), (counted{5, 0})) << "an empty transport is unread";
}

TEST(UcxLaneTable, UsageAndLaneMustBeOnTheSameLine)
{
    const char *text =
        "#  lane[0]:  4:posix/memory.0 md[2]\n"
        "#    amo#0\n"
        "amo#1 #  lane[1]:  5:sysv/memory.0 md[3]\n";  // the usage may come first
    EXPECT_EQ(count(text, "amo#", cpu_transports), (counted{1, 1}));
    EXPECT_EQ(count(text, "", cpu_transports), (counted{2, 2}));
}

TEST(UcxLaneTable, LinesWithoutLaneAreNotCounted)
{
    const char *text =
        "# UCP endpoint \n"
        "#               peer: <no debug data>\n"
        "#  lanes 0:  4:posix/memory.0 amo#0\n"
        "#  lane 1:  4:posix/memory.0 amo#1\n"
        "#  Lane[2]:  4:posix/memory.0 amo#2\n"
        "#                  rma_bw: mds rndv_rkey_size 9 amo#\n";
    EXPECT_EQ(count(text, "", cpu_transports), (counted{0, 0}));
    EXPECT_EQ(count(text, "amo#", cpu_transports), (counted{0, 0}));
}

TEST(UcxLaneTable, EmptyTextsAndTheLastLineWithoutNewline)
{
    EXPECT_EQ(count("", "", cpu_transports), (counted{0, 0}));
    EXPECT_EQ(count(nullptr, "", cpu_transports), (counted{0, 0}));
    EXPECT_EQ(count("\n\n\n", "", cpu_transports), (counted{0, 0}));
    EXPECT_EQ(count("\n\nlane[0]: 4:posix/memory.0 amo#0", "amo#", cpu_transports), (counted{1, 1}));
    EXPECT_EQ(count("lane[0]: 4:posix/memory.0 amo#0\n\n\nlane[1]: 1:cma/memory.0 amo#1\n",
                         "amo#", cpu_transports), (counted{2, 2}));
}

TEST(UcxLaneTable, TheTextIsOnlyRead)
{
    std::string text(same_node_table);
    const std::string before = text;
    EXPECT_EQ(count(text.c_str(), "rma_bw#", cpu_transports), (counted{4, 4}));
    EXPECT_EQ(text, before);
    EXPECT_EQ(count(text.c_str(), "rma_bw#", cpu_transports), (counted{4, 4})) << "the same the second time";
}

TEST(UcxLaneAnswers, AnEmptyCacheKnowsNothing)
{
    nbrma_ucx_lane_answers_t answers{};
    int lanes = -7, on = -7;
    EXPECT_FALSE(nbrma_ucx_lane_answers_find(&answers, endpoint(1), amo, cpu_transports, &lanes, &on));
    EXPECT_EQ(lanes, -7) << "unknown writes nothing";
    EXPECT_EQ(on, -7);
    nbrma_ucx_lane_answers_free(&answers);
}

TEST(UcxLaneAnswers, KeysAreTheEndpointAndTheAddressesOfUsageAndTransports)
{
    static const char other_amo[] = "amo#";
    nbrma_ucx_lane_answers_t answers{};
    int lanes, on;

    nbrma_ucx_lane_answers_keep(&answers, endpoint(1), amo, cpu_transports, 2, 1);
    nbrma_ucx_lane_answers_keep(&answers, endpoint(1), rma, cpu_transports, 4, 3);
    nbrma_ucx_lane_answers_keep(&answers, endpoint(1), amo, mapping, 2, 0);
    nbrma_ucx_lane_answers_keep(&answers, endpoint(2), amo, cpu_transports, 5, 5);
    EXPECT_EQ(answers.used, 4u);

    ASSERT_TRUE(nbrma_ucx_lane_answers_find(&answers, endpoint(1), amo, cpu_transports, &lanes, &on));
    EXPECT_EQ(lanes, 2);
    EXPECT_EQ(on, 1);
    ASSERT_TRUE(nbrma_ucx_lane_answers_find(&answers, endpoint(1), rma, cpu_transports, &lanes, &on));
    EXPECT_EQ(lanes, 4);
    EXPECT_EQ(on, 3);
    ASSERT_TRUE(nbrma_ucx_lane_answers_find(&answers, endpoint(1), amo, mapping, &lanes, &on));
    EXPECT_EQ(lanes, 2);
    EXPECT_EQ(on, 0);
    ASSERT_TRUE(nbrma_ucx_lane_answers_find(&answers, endpoint(2), amo, cpu_transports, &lanes, &on));
    EXPECT_EQ(lanes, 5);
    EXPECT_EQ(on, 5);

    // never kept: another endpoint, usage, list, or the same text elsewhere
    EXPECT_FALSE(nbrma_ucx_lane_answers_find(&answers, endpoint(3), amo, cpu_transports, &lanes, &on));
    EXPECT_FALSE(nbrma_ucx_lane_answers_find(&answers, endpoint(2), rma, cpu_transports, &lanes, &on));
    EXPECT_FALSE(nbrma_ucx_lane_answers_find(&answers, endpoint(2), amo, mapping, &lanes, &on));
    EXPECT_FALSE(nbrma_ucx_lane_answers_find(&answers, endpoint(1), amo, emulating, &lanes, &on));
    EXPECT_FALSE(nbrma_ucx_lane_answers_find(&answers, endpoint(1), other_amo, cpu_transports, &lanes, &on));
    EXPECT_FALSE(nbrma_ucx_lane_answers_find(&answers, nullptr, amo, cpu_transports, &lanes, &on));
    nbrma_ucx_lane_answers_free(&answers);
}

TEST(UcxLaneAnswers, KeepingAgainReplacesTheAnswer)
{
    nbrma_ucx_lane_answers_t answers{};
    int lanes, on;

    nbrma_ucx_lane_answers_keep(&answers, endpoint(1), any, mapping, 3, 1);
    nbrma_ucx_lane_answers_keep(&answers, endpoint(1), any, mapping, 3, 2);
    EXPECT_EQ(answers.used, 1u);
    ASSERT_TRUE(nbrma_ucx_lane_answers_find(&answers, endpoint(1), any, mapping, &lanes, &on));
    EXPECT_EQ(on, 2);
    nbrma_ucx_lane_answers_free(&answers);
}

TEST(UcxLaneAnswers, ANullEndpointIsNotKept)
{
    nbrma_ucx_lane_answers_t answers{};
    int lanes, on;

    nbrma_ucx_lane_answers_keep(&answers, nullptr, amo, cpu_transports, 1, 1);
    EXPECT_EQ(answers.used, 0u);
    EXPECT_FALSE(nbrma_ucx_lane_answers_find(&answers, nullptr, amo, cpu_transports, &lanes, &on));
    nbrma_ucx_lane_answers_free(&answers);
}

TEST(UcxLaneAnswers, GrowthAtHalfLoadKeepsEveryAnswer)
{
    nbrma_ucx_lane_answers_t answers{};
    const uintptr_t peers = 1000;
    int lanes, on;

    for (uintptr_t i = 1; i <= peers; i++) {
        nbrma_ucx_lane_answers_keep(&answers, endpoint(i), amo, cpu_transports, int(i % 7), int(i % 5));
        nbrma_ucx_lane_answers_keep(&answers, endpoint(i), rma, emulating, int(i % 11), int(i % 3));
        if (i == 16) {
            EXPECT_EQ(answers.cap, 64u) << "32 answers fill 64 slots to half";
        } else if (i == 17) {
            EXPECT_EQ(answers.cap, 128u) << "the 33rd answer doubles the cache";
        }
        EXPECT_LE(2 * answers.used, answers.cap);
    }
    EXPECT_EQ(answers.used, 2 * peers);
    EXPECT_EQ(answers.cap, 4096u);

    for (uintptr_t i = 1; i <= peers; i++) {
        ASSERT_TRUE(nbrma_ucx_lane_answers_find(&answers, endpoint(i), amo, cpu_transports, &lanes, &on)) << i;
        EXPECT_EQ(lanes, int(i % 7));
        EXPECT_EQ(on, int(i % 5));
        ASSERT_TRUE(nbrma_ucx_lane_answers_find(&answers, endpoint(i), rma, emulating, &lanes, &on)) << i;
        EXPECT_EQ(lanes, int(i % 11));
        EXPECT_EQ(on, int(i % 3));
        EXPECT_FALSE(nbrma_ucx_lane_answers_find(&answers, endpoint(i), amo, emulating, &lanes, &on));
    }
    for (uintptr_t i = peers + 1; i <= 2 * peers; i++)
        EXPECT_FALSE(nbrma_ucx_lane_answers_find(&answers, endpoint(i), amo, cpu_transports, &lanes, &on));

    nbrma_ucx_lane_answers_free(&answers);
    EXPECT_EQ(answers.slot, nullptr);
    EXPECT_EQ(answers.cap, 0u);
    EXPECT_EQ(answers.used, 0u);
    EXPECT_FALSE(nbrma_ucx_lane_answers_find(&answers, endpoint(1), amo, cpu_transports, &lanes, &on));
}

TEST(UcxLaneAnswers, AsTheGlueUsesThem)
{
    // read once per (endpoint, question), answered from the cache after
    nbrma_ucx_lane_answers_t answers{};
    const void *peers[] = {endpoint(1), endpoint(2), endpoint(3)};
    const char *tables[] = {same_node_table, tcp_table, mixed_table};
    int reads = 0;

    for (int round = 0; round < 3; round++)
        for (int p = 0; p < 3; p++) {
            counted c;
            if (!nbrma_ucx_lane_answers_find(&answers, peers[p], amo, cpu_transports, &c.lanes, &c.on)) {
                reads++;
                c = count(tables[p], amo, cpu_transports);
                nbrma_ucx_lane_answers_keep(&answers, peers[p], amo, cpu_transports, c.lanes, c.on);
            }
            const bool on_cpu = c.lanes > 0 && c.on == c.lanes;
            EXPECT_EQ(on_cpu, p == 0 || p == 2) << "peer " << p;
        }
    EXPECT_EQ(reads, 3);
    nbrma_ucx_lane_answers_free(&answers);
}
