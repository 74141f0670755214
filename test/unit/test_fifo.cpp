// The engine's queue (core/include/nbrma/fifo.hpp) without MPI: random
// programs of pushes and pops checked against std::deque, and items that own
// memory released when popped.

#include <gtest/gtest.h>

#include <deque>
#include <memory>
#include <random>
#include <vector>

#include "nbrma/fifo.hpp"

namespace {

TEST(Fifo, AgreesWithADequeOverRandomPrograms)
{
    std::mt19937 rng(20261129);
    for (int program = 0; program < 200; program++) {
        nbrma::fifo<int> q;
        std::deque<int> reference;
        int next = 0;
        // biased toward pushes in some programs, so that the queue grows
        // past the compaction limit without ever draining
        std::bernoulli_distribution push(program % 2 ? 0.5 : 0.7);
        for (int step = 0; step < 500; step++) {
            if (reference.empty() || push(rng)) {
                q.push_back(next);
                reference.push_back(next++);
            } else {
                ASSERT_EQ(q.front(), reference.front());
                q.pop_front();
                reference.pop_front();
            }
            ASSERT_EQ(q.size(), reference.size());
            ASSERT_EQ(q.empty(), reference.empty());
            ASSERT_EQ(std::vector<int>(q.begin(), q.end()),
                      std::vector<int>(reference.begin(), reference.end()));
        }
    }
}

TEST(Fifo, ReleasesWhatAPoppedItemOwnsAtOnce)
{
    nbrma::fifo<std::shared_ptr<int>> q;
    auto first = std::make_shared<int>(1);
    std::weak_ptr<int> watch = first;

    q.push_back(std::move(first));
    q.push_back(std::make_shared<int>(2));
    q.pop_front();
    EXPECT_TRUE(watch.expired()) << "not kept until the queue compacts";
    EXPECT_EQ(*q.front(), 2);
}

}  // namespace
