// Where each process keeps its notification counters (formats/counter_peers.c;
// ch4/notify/counter_memory.c makes the UCX calls), without MPI or UCX: a
// peer's key is unpacked once, on the first increment toward it, and never
// again whether that worked or not; this process and peers without a key
// get no key; counter i is 8 bytes after counter i - 1; only unpacked keys
// are flushed toward and destroyed, each exactly once.

#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

extern "C" {
#include "counter_peers.h"
}

namespace {

// does what the glue does per increment (ch4/notify/counter_memory.c): unpack
// the key if it is still to be unpacked, into a distinct handle per target
// (the address of its own slot), counting the unpacks and refusing the
// targets listed in `refuse`; then ask for the key
struct Unpacker {
    std::vector<int> calls;
    std::vector<int> refuse;
    char handle[8];

    void *key(nbrma_counter_peers_t *peers, int target)
    {
        if (nbrma_counter_peers_to_unpack(peers, target)) {
            bool ok = true;
            calls.push_back(target);
            for (int r : refuse)
                if (r == target)
                    ok = false;
            nbrma_counter_peers_unpacked_as(peers, target, ok, &handle[target]);
        }
        return nbrma_counter_peers_key(peers, target);
    }
};

std::vector<void *> destroyed;
void record_destroy(void *rkey)
{
    destroyed.push_back(rkey);
}

std::vector<nbrma_counter_published_t> four_peers()
{
    // rank 2 published no key (its counters are not UCX memory)
    return {{0x1000, 40}, {0x2000, 40}, {0x3000, 0}, {0x4000, 40}};
}

TEST(CounterPeers, CounterWordsAreEightBytesApartFromThePublishedAddress)
{
    nbrma_counter_peers_t peers;
    auto all = four_peers();

    ASSERT_TRUE(nbrma_counter_peers_init(&peers, all.data(), 4, 0));
    EXPECT_EQ(peers.nprocs, 4);
    EXPECT_EQ(nbrma_counter_peers_word(&peers, 1, 0), 0x2000u);
    EXPECT_EQ(nbrma_counter_peers_word(&peers, 1, 3), 0x2018u);
    EXPECT_EQ(nbrma_counter_peers_word(&peers, 3, 1), 0x4008u);
    nbrma_counter_peers_free(&peers, record_destroy);
}

TEST(CounterPeers, AKeyIsUnpackedOnceOnFirstUse)
{
    nbrma_counter_peers_t peers;
    auto all = four_peers();
    Unpacker u;

    ASSERT_TRUE(nbrma_counter_peers_init(&peers, all.data(), 4, 0));
    EXPECT_FALSE(nbrma_counter_peers_unpacked(&peers, 1));
    EXPECT_EQ(u.key(&peers, 1), &u.handle[1]);
    EXPECT_EQ(u.key(&peers, 1), &u.handle[1]);
    EXPECT_TRUE(nbrma_counter_peers_unpacked(&peers, 1));
    EXPECT_EQ(u.calls, std::vector<int>({1}));
    destroyed.clear();
    nbrma_counter_peers_free(&peers, record_destroy);
    EXPECT_EQ(destroyed, std::vector<void *>({&u.handle[1]}));
}

TEST(CounterPeers, SelfAndPeersWithoutAKeyAreNeverUnpacked)
{
    nbrma_counter_peers_t peers;
    auto all = four_peers();
    Unpacker u;

    ASSERT_TRUE(nbrma_counter_peers_init(&peers, all.data(), 4, 3));
    EXPECT_EQ(u.key(&peers, 3), nullptr);   // self
    EXPECT_EQ(u.key(&peers, 2), nullptr);   // no key
    EXPECT_TRUE(u.calls.empty());
    EXPECT_FALSE(nbrma_counter_peers_unpacked(&peers, 2));
    EXPECT_FALSE(nbrma_counter_peers_unpacked(&peers, 3));
    nbrma_counter_peers_free(&peers, record_destroy);
}

TEST(CounterPeers, ARefusedKeyIsNotAskedAgainNorDestroyed)
{
    nbrma_counter_peers_t peers;
    auto all = four_peers();
    Unpacker u;

    u.refuse = {1};
    ASSERT_TRUE(nbrma_counter_peers_init(&peers, all.data(), 4, 0));
    EXPECT_EQ(u.key(&peers, 1), nullptr);
    EXPECT_EQ(u.key(&peers, 1), nullptr);
    EXPECT_EQ(u.key(&peers, 3), &u.handle[3]);
    EXPECT_EQ(u.calls, std::vector<int>({1, 3}));
    EXPECT_FALSE(nbrma_counter_peers_unpacked(&peers, 1));
    destroyed.clear();
    nbrma_counter_peers_free(&peers, record_destroy);
    EXPECT_EQ(destroyed, std::vector<void *>({&u.handle[3]}));
}

TEST(CounterPeers, FreeEmptiesTheTableAndTakesAZeroedOne)
{
    nbrma_counter_peers_t peers;
    auto all = four_peers();

    ASSERT_TRUE(nbrma_counter_peers_init(&peers, all.data(), 4, 0));
    nbrma_counter_peers_free(&peers, record_destroy);
    EXPECT_EQ(peers.peer, nullptr);
    EXPECT_EQ(peers.nprocs, 0);
    EXPECT_FALSE(nbrma_counter_peers_unpacked(&peers, 0));
    // a counter memory whose creation failed before the table existed
    nbrma_counter_peers_t zeroed = {0, nullptr};
    destroyed.clear();
    nbrma_counter_peers_free(&zeroed, record_destroy);
    EXPECT_TRUE(destroyed.empty());
}

TEST(CounterPeers, ASingleProcessWindowHasNoPeerToUnpack)
{
    nbrma_counter_peers_t peers;
    nbrma_counter_published_t self = {0x1000, 40};
    Unpacker u;

    ASSERT_TRUE(nbrma_counter_peers_init(&peers, &self, 1, 0));
    EXPECT_EQ(u.key(&peers, 0), nullptr);
    EXPECT_TRUE(u.calls.empty());
    nbrma_counter_peers_free(&peers, record_destroy);
}

}  // namespace
