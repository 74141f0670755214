// Held ordered records (core/include/nbrma_held_queue.h) without MPI: rules
// H1-H3 one by one, then random programs of holds and releases checked
// against a plain list: only a target's first record is offered, records
// toward one target leave in replay order, and the per-target question
// agrees with the list.

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <vector>

#include "nbrma_held_queue.h"

namespace {

struct queue_ptr {
    nbrma_held_queue *q = nbrma_held_queue_create();
    ~queue_ptr() { nbrma_held_queue_destroy(q); }
};

void *rec(uintptr_t id)
{
    return reinterpret_cast<void *>(id);
}

nbrma_op_ticket ticket_of(uint64_t age)
{
    nbrma_op_ticket t{};
    t.age = age;
    return t;
}

std::vector<uintptr_t> heads(const nbrma_held_queue *q)
{
    std::vector<uintptr_t> out;
    size_t cursor = 0;
    void *r;
    while (nbrma_held_queue_next_head(q, &cursor, &r))
        out.push_back(reinterpret_cast<uintptr_t>(r));
    return out;
}

TEST(held_queue, only_the_first_record_toward_each_target_is_offered_in_replay_order)
{
    queue_ptr p;
    ASSERT_TRUE(nbrma_held_queue_hold(p.q, 1, rec(10), ticket_of(10)));
    ASSERT_TRUE(nbrma_held_queue_hold(p.q, 2, rec(20), ticket_of(20)));
    ASSERT_TRUE(nbrma_held_queue_hold(p.q, 1, rec(11), ticket_of(11)));
    ASSERT_TRUE(nbrma_held_queue_hold(p.q, 3, rec(30), ticket_of(30)));
    EXPECT_EQ(heads(p.q), (std::vector<uintptr_t>{10, 20, 30}));
    EXPECT_TRUE(nbrma_held_queue_toward(p.q, 1));
    EXPECT_FALSE(nbrma_held_queue_toward(p.q, 4));
    EXPECT_EQ(nbrma_held_queue_size(p.q), 4u);
}

TEST(held_queue, taking_a_head_offers_its_targets_next_record_in_the_same_pass)
{
    queue_ptr p;
    ASSERT_TRUE(nbrma_held_queue_hold(p.q, 1, rec(10), ticket_of(10)));
    ASSERT_TRUE(nbrma_held_queue_hold(p.q, 2, rec(20), ticket_of(20)));
    ASSERT_TRUE(nbrma_held_queue_hold(p.q, 1, rec(11), ticket_of(11)));
    size_t cursor = 0;
    void *r;
    nbrma_op_ticket t;
    ASSERT_TRUE(nbrma_held_queue_next_head(p.q, &cursor, &r));
    nbrma_held_queue_take(p.q, &cursor, &r, &t);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(r), 10u);
    EXPECT_EQ(t.age, 10u);
    ASSERT_TRUE(nbrma_held_queue_next_head(p.q, &cursor, &r));     // 20 stays
    EXPECT_EQ(reinterpret_cast<uintptr_t>(r), 20u);
    ASSERT_TRUE(nbrma_held_queue_next_head(p.q, &cursor, &r));     // 11, now 1's head
    EXPECT_EQ(reinterpret_cast<uintptr_t>(r), 11u);
    nbrma_held_queue_take(p.q, &cursor, &r, &t);
    EXPECT_FALSE(nbrma_held_queue_next_head(p.q, &cursor, &r));
    EXPECT_FALSE(nbrma_held_queue_toward(p.q, 1));
    EXPECT_TRUE(nbrma_held_queue_toward(p.q, 2));
}

TEST(held_queue, dropping_empties_the_queue)
{
    queue_ptr p;
    ASSERT_TRUE(nbrma_held_queue_hold(p.q, 1, rec(10), ticket_of(10)));
    ASSERT_TRUE(nbrma_held_queue_hold(p.q, 1, rec(11), ticket_of(11)));
    void *r;
    int n = 0;
    while (nbrma_held_queue_drop(p.q, &r))
        n++;
    EXPECT_EQ(n, 2);
    EXPECT_FALSE(nbrma_held_queue_toward(p.q, 1));
    EXPECT_EQ(nbrma_held_queue_size(p.q), 0u);
}

// Random holds and release passes in which each offered head goes with
// probability 1/2 (its earlier operations complete or not).
TEST(held_queue_sim, records_toward_a_target_leave_in_replay_order_and_only_as_heads)
{
    constexpr int n_targets = 4;
    for (unsigned seed = 1; seed <= 500; seed++) {
        std::mt19937 rng(seed);
        queue_ptr p;
        std::vector<std::pair<int, uintptr_t>> model;  // (target, id) in replay order
        std::vector<uintptr_t> next_out(n_targets, 1);  // per target: the id expected next
        std::vector<uintptr_t> next_in(n_targets, 1);
        for (int step = 0; step < 200; step++) {
            if (rng() % 2) {
                int target = static_cast<int>(rng() % n_targets);
                uintptr_t id = next_in[target]++ * n_targets + target;
                ASSERT_TRUE(nbrma_held_queue_hold(p.q, target, rec(id), ticket_of(id)));
                model.push_back({target, id});
                continue;
            }
            size_t cursor = 0;
            void *r;
            while (nbrma_held_queue_next_head(p.q, &cursor, &r)) {
                uintptr_t id = reinterpret_cast<uintptr_t>(r);
                int target = static_cast<int>(id % n_targets);
                // a head: nothing toward its target is before it in the model
                auto at = std::find_if(model.begin(), model.end(),
                                       [&](auto &m) { return m.first == target; });
                ASSERT_NE(at, model.end()) << "seed " << seed;
                ASSERT_EQ(at->second, id) << "seed " << seed << ": not its target's first";
                if (rng() % 2)
                    continue;
                nbrma_op_ticket t;
                nbrma_held_queue_take(p.q, &cursor, &r, &t);
                ASSERT_EQ(t.age, id) << "seed " << seed;
                ASSERT_EQ(id, next_out[target]++ * n_targets + target) << "seed " << seed;
                model.erase(at);
            }
            ASSERT_EQ(nbrma_held_queue_size(p.q), model.size()) << "seed " << seed;
            for (int t = 0; t < n_targets; t++)
                ASSERT_EQ(nbrma_held_queue_toward(p.q, t),
                          std::any_of(model.begin(), model.end(),
                                      [&](auto &m) { return m.first == t; }))
                    << "seed " << seed;
        }
    }
}

} // namespace
