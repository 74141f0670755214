// nbrma::flat_map (core/include/nbrma/flat_map.hpp): the engine's map of the
// dones its exposure epochs expect.
#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <unordered_map>

#include "nbrma/flat_map.hpp"

namespace {

struct key {
    std::int64_t origin;
    std::uint64_t id;
    bool operator==(const key &o) const { return origin == o.origin && id == o.id; }
};

struct mixed_hash {
    std::size_t operator()(const key &k) const
    {
        const std::uint64_t h = k.id * 0x9E3779B97F4A7C15ull ^ static_cast<std::uint64_t>(k.origin) * 0xC2B2AE3D27D4EB4Full;
        return static_cast<std::size_t>(h ^ (h >> 29));
    }
};

// Every key at one home, or at two: long clusters that wrap around the
// array's end, where the backward shift of an erase must keep every
// remaining key reachable.
struct one_home {
    std::size_t operator()(const key &) const { return 7; }
};
struct two_homes {
    std::size_t operator()(const key &k) const { return k.id % 2 ? 7 : 6; }
};

struct std_hash {
    std::size_t operator()(const key &k) const { return mixed_hash()(k); }
};

using map = nbrma::flat_map<key, int, mixed_hash>;

TEST(FlatMap, EmptyAllocatesNothingAndFindsNothing)
{
    map m;
    EXPECT_EQ(m.capacity_bytes(), 0u);
    EXPECT_EQ(m.find(key{1, 1}), nullptr);
    EXPECT_FALSE(m.erase(key{1, 1}));
    int v = -1;
    EXPECT_FALSE(m.take(key{1, 1}, &v));
    EXPECT_EQ(v, -1);
    EXPECT_TRUE(m.empty());
}

TEST(FlatMap, InsertFindAssignTakeErase)
{
    map m;
    m[key{3, 1}] = 31;
    m[key{4, 1}] = 41;
    ASSERT_NE(m.find(key{3, 1}), nullptr);
    EXPECT_EQ(*m.find(key{3, 1}), 31);
    EXPECT_EQ(*m.find(key{4, 1}), 41);
    EXPECT_EQ(m.find(key{3, 2}), nullptr);
    m[key{3, 1}] = 32;  // assignment, not a second entry
    EXPECT_EQ(m.size(), 2u);
    int v = 0;
    EXPECT_TRUE(m.take(key{3, 1}, &v));
    EXPECT_EQ(v, 32);
    EXPECT_EQ(m.find(key{3, 1}), nullptr);
    EXPECT_FALSE(m.take(key{3, 1}, &v));
    EXPECT_TRUE(m.erase(key{4, 1}));
    EXPECT_TRUE(m.empty());
    m[key{5, 9}];  // value-initialized
    EXPECT_EQ(*m.find(key{5, 9}), 0);
}

TEST(FlatMap, GrowsAndKeepsEveryEntry)
{
    map m;
    for (int origin = 0; origin < 300; ++origin)
        m[key{origin, 1}] = origin;
    EXPECT_EQ(m.size(), 300u);
    for (int origin = 0; origin < 300; ++origin) {
        ASSERT_NE(m.find(key{origin, 1}), nullptr) << origin;
        EXPECT_EQ(*m.find(key{origin, 1}), origin);
    }
}

// A reference std::unordered_map next to the flat map through random
// inserts and erases: every key present in one is present with the same
// value in the other, and every erased key is gone, whatever the clusters.
template <class Hash> void against_reference(unsigned seed, int keys, int steps)
{
    nbrma::flat_map<key, int, Hash> m;
    std::unordered_map<key, int, std_hash> reference;
    std::mt19937 random(seed);
    for (int step = 0; step < steps; ++step) {
        const key k{static_cast<std::int64_t>(random() % 4), random() % static_cast<unsigned>(keys)};
        const int op = static_cast<int>(random() % 3);
        if (op == 0) {
            m[k] = step;
            reference[k] = step;
        } else if (op == 1) {
            int v = -1;
            const bool had = reference.erase(k) != 0;
            ASSERT_EQ(m.take(k, &v), had) << "step " << step;
        } else {
            ASSERT_EQ(m.erase(k), reference.erase(k) != 0) << "step " << step;
        }
        ASSERT_EQ(m.size(), reference.size()) << "step " << step;
        if (step % 16 == 0)
            for (int origin = 0; origin < 4; ++origin)
                for (int id = 0; id < keys; ++id) {
                    const key q{origin, static_cast<std::uint64_t>(id)};
                    auto found = reference.find(q);
                    const int *mine = m.find(q);
                    ASSERT_EQ(mine != nullptr, found != reference.end()) << "step " << step;
                    if (mine)
                        ASSERT_EQ(*mine, found->second);
                }
    }
}

TEST(FlatMap, MatchesReferenceWithSpreadKeys) { against_reference<mixed_hash>(1, 40, 20000); }
TEST(FlatMap, MatchesReferenceWhenEveryKeyCollides) { against_reference<one_home>(2, 6, 5000); }
TEST(FlatMap, MatchesReferenceWithTwoClustersAcrossTheEnd) { against_reference<two_homes>(3, 5, 5000); }

}  // namespace
