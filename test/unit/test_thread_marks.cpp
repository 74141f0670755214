// Thread-scope flushes (core/include/nbrma_thread_marks.h) without MPI: the
// rules one by one, then random programs of several threads issuing and
// flushing, checked against a plain model of what each thread's flush must
// complete: every operation of the thread toward the flushed targets, and
// nothing recorded in the engine (those need a process-scope flush).

#include <gtest/gtest.h>

#include <map>
#include <random>
#include <set>
#include <utility>

#include "nbrma_core.h"
#include "nbrma_thread_marks.h"

namespace {

struct marks_ptr {
    nbrma_thread_marks *m;
    explicit marks_ptr(int n) : m(nbrma_thread_marks_create(n)) {}
    ~marks_ptr() { nbrma_thread_marks_destroy(m); }
};

// (target, needs_am) of a thread's flush toward `rank`
std::set<std::pair<int, bool>> targets(const nbrma_thread_marks *m, unsigned thread, int rank)
{
    std::set<std::pair<int, bool>> out;
    size_t cursor = 0;
    int target;
    bool am;
    while (nbrma_thread_marks_next(m, thread, rank, &cursor, &target, &am))
        out.insert({target, am});
    return out;
}

TEST(thread_marks, a_thread_without_operations_may_flush_and_needs_nothing)
{
    marks_ptr p(4);
    EXPECT_TRUE(nbrma_thread_marks_may_flush(p.m, 3, NBRMA_ALL_RANKS));
    EXPECT_TRUE(targets(p.m, 3, NBRMA_ALL_RANKS).empty());
}

TEST(thread_marks, a_flush_needs_the_threads_targets_and_the_am_counters_where_it_used_them)
{
    marks_ptr p(4);
    ASSERT_TRUE(nbrma_thread_marks_note(p.m, 0, 1, NBRMA_MARK_RDMA));
    ASSERT_TRUE(nbrma_thread_marks_note(p.m, 0, 2, NBRMA_MARK_RDMA | NBRMA_MARK_AM));
    ASSERT_TRUE(nbrma_thread_marks_note(p.m, 1, 3, NBRMA_MARK_RDMA));     // another thread's
    EXPECT_TRUE(nbrma_thread_marks_may_flush(p.m, 0, NBRMA_ALL_RANKS));
    EXPECT_EQ(targets(p.m, 0, NBRMA_ALL_RANKS),
              (std::set<std::pair<int, bool>>{{1, false}, {2, true}}));
    EXPECT_EQ(targets(p.m, 0, 2), (std::set<std::pair<int, bool>>{{2, true}}));
    EXPECT_TRUE(targets(p.m, 0, 3).empty());       // thread 1's operation is not thread 0's
}

TEST(thread_marks, an_operation_in_the_engine_needs_a_process_scope_flush_of_its_target_only)
{
    marks_ptr p(4);
    ASSERT_TRUE(nbrma_thread_marks_note(p.m, 0, 1, NBRMA_MARK_ENGINE));
    ASSERT_TRUE(nbrma_thread_marks_note(p.m, 0, 2, NBRMA_MARK_RDMA));
    EXPECT_FALSE(nbrma_thread_marks_may_flush(p.m, 0, 1));
    EXPECT_FALSE(nbrma_thread_marks_may_flush(p.m, 0, NBRMA_ALL_RANKS));
    EXPECT_TRUE(nbrma_thread_marks_may_flush(p.m, 0, 2));
    EXPECT_TRUE(nbrma_thread_marks_may_flush(p.m, 1, 1));  // another thread's engine record
}

TEST(thread_marks, a_completed_flush_clears_only_its_targets)
{
    marks_ptr p(4);
    ASSERT_TRUE(nbrma_thread_marks_note(p.m, 0, 1, NBRMA_MARK_ENGINE));
    ASSERT_TRUE(nbrma_thread_marks_note(p.m, 0, 2, NBRMA_MARK_AM));
    nbrma_thread_marks_flushed(p.m, 0, 1);
    EXPECT_TRUE(nbrma_thread_marks_may_flush(p.m, 0, NBRMA_ALL_RANKS));
    EXPECT_EQ(targets(p.m, 0, NBRMA_ALL_RANKS), (std::set<std::pair<int, bool>>{{2, true}}));
    nbrma_thread_marks_flushed(p.m, 0, NBRMA_ALL_RANKS);
    EXPECT_TRUE(targets(p.m, 0, NBRMA_ALL_RANKS).empty());
}

TEST(thread_marks, ranks_outside_the_window_are_not_noted)
{
    marks_ptr p(2);
    EXPECT_TRUE(nbrma_thread_marks_note(p.m, 0, 5, NBRMA_MARK_ENGINE));
    EXPECT_TRUE(nbrma_thread_marks_note(p.m, 0, -1, NBRMA_MARK_ENGINE));
    EXPECT_TRUE(nbrma_thread_marks_may_flush(p.m, 0, NBRMA_ALL_RANKS));
}

// The model: per (thread, target), the marks since that thread's last flush
// covering the target; a flush of thread t toward rank may go by itself iff
// no covered target holds ENGINE, and then completes exactly the covered
// targets with any mark, with MPIDIG's counters where AM was noted.
TEST(thread_marks_sim, every_flush_completes_what_its_thread_issued_there_and_no_more)
{
    const int n_ranks = 6;
    const unsigned n_threads = 4;
    for (unsigned seed = 1; seed <= 500; seed++) {
        std::mt19937 rng(seed);
        marks_ptr p(n_ranks);
        std::map<std::pair<unsigned, int>, unsigned> model;
        for (int step = 0; step < 300; step++) {
            unsigned t = rng() % n_threads;
            int rank = static_cast<int>(rng() % (n_ranks + 1));
            if (rank == n_ranks)
                rank = NBRMA_ALL_RANKS;
            if (rng() % 3) {    // an operation
                int r = static_cast<int>(rng() % n_ranks);
                unsigned bits = 1u << (rng() % 3);
                ASSERT_TRUE(nbrma_thread_marks_note(p.m, t, r, bits));
                model[{t, r}] |= bits;
                continue;
            }
            bool may = true;
            std::set<std::pair<int, bool>> expect;
            for (auto &e : model)
                if (e.first.first == t && e.second &&
                    (rank == NBRMA_ALL_RANKS || rank == e.first.second)) {
                    may = may && !(e.second & NBRMA_MARK_ENGINE);
                    expect.insert({e.first.second, (e.second & NBRMA_MARK_AM) != 0});
                }
            ASSERT_EQ(nbrma_thread_marks_may_flush(p.m, t, rank), may) << "seed " << seed;
            if (may) {
                ASSERT_EQ(targets(p.m, t, rank), expect) << "seed " << seed;
            }
            // a flush completes (by itself, or with process scope)
            nbrma_thread_marks_flushed(p.m, t, rank);
            for (auto &e : model)
                if (e.first.first == t && (rank == NBRMA_ALL_RANKS || rank == e.first.second))
                    e.second = 0;
        }
    }
}

} // namespace
