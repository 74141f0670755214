// Thread-scope flushes (core/include/nbrma_thread_marks.h) without MPI: the
// rules one by one, then random programs of several threads issuing and
// flushing, checked against a plain model of what each thread's flush must
// complete: every operation of the thread toward the flushed targets, and
// nothing recorded in the engine (those need a process-scope flush).

#include <gtest/gtest.h>

#include <condition_variable>
#include <functional>
#include <map>
#include <mutex>
#include <random>
#include <set>
#include <thread>
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

// NBRMA_THREAD_SELF: a thread that noted nothing has no number; asking for
// it gives none (explicit threads 0..1023, every number the process could
// have given here, all hold ENGINE marks that such a number would find).
TEST(thread_marks, a_thread_without_a_note_has_no_number_and_nothing_to_flush)
{
    marks_ptr p(2);
    for (unsigned t = 0; t < 1024; t++)
        ASSERT_TRUE(nbrma_thread_marks_note(p.m, t, 0, NBRMA_MARK_ENGINE));
    std::thread([&] {
        EXPECT_TRUE(nbrma_thread_marks_may_flush(p.m, NBRMA_THREAD_SELF, NBRMA_ALL_RANKS));
        EXPECT_TRUE(targets(p.m, NBRMA_THREAD_SELF, NBRMA_ALL_RANKS).empty());
        nbrma_thread_marks_flushed(p.m, NBRMA_THREAD_SELF, NBRMA_ALL_RANKS);
        EXPECT_TRUE(nbrma_thread_marks_may_flush(p.m, NBRMA_THREAD_SELF, 0));
    }).join();
    for (unsigned t = 0; t < 1024; t++)
        ASSERT_FALSE(nbrma_thread_marks_may_flush(p.m, t, 0)) << t;   // nothing cleared
}

// Threads that run one step at a time, each asked on its own thread.
class workers {
  public:
    explicit workers(unsigned n)
    {
        for (unsigned i = 0; i < n; i++)
            threads_.emplace_back([this, i] { loop(i); });
    }
    ~workers()
    {
        run(~0u, nullptr);
        for (std::thread &t : threads_)
            t.join();
    }
    // runs `f` on thread `who` (all of them for ~0u: stop) and waits for it
    void run(unsigned who, std::function<void()> f)
    {
        std::unique_lock<std::mutex> l(m_);
        who_ = who;
        f_ = std::move(f);
        done_ = false;
        cv_.notify_all();
        if (who != ~0u)
            cv_.wait(l, [this] { return done_; });
    }

  private:
    void loop(unsigned me)
    {
        std::unique_lock<std::mutex> l(m_);
        for (;;) {
            cv_.wait(l, [&] { return who_ == ~0u || (who_ == me && !done_); });
            if (who_ == ~0u)
                return;
            f_();
            done_ = true;
            cv_.notify_all();
        }
    }
    std::vector<std::thread> threads_;
    std::mutex m_;
    std::condition_variable cv_;
    unsigned who_ = 0;
    bool done_ = true;
    std::function<void()> f_;
};

// The model's random programs again, each thread's steps on a thread of its
// own naming itself NBRMA_THREAD_SELF, on two windows at once (the numbers
// are process-wide, the marks per window).
TEST(thread_marks_sim, threads_naming_themselves_get_what_the_model_says)
{
    const int n_ranks = 5;
    const unsigned n_threads = 3;
    workers w(n_threads);
    for (unsigned seed = 1; seed <= 100; seed++) {
        std::mt19937 rng(seed);
        marks_ptr win[2] = { marks_ptr(n_ranks), marks_ptr(n_ranks) };
        std::map<std::pair<unsigned, int>, unsigned> model[2];
        for (int step = 0; step < 200; step++) {
            unsigned t = rng() % n_threads;
            int which = static_cast<int>(rng() % 2);
            nbrma_thread_marks *m = win[which].m;
            auto &mod = model[which];
            int rank = static_cast<int>(rng() % (n_ranks + 1));
            if (rank == n_ranks)
                rank = NBRMA_ALL_RANKS;
            if (rng() % 3) {
                int r = static_cast<int>(rng() % n_ranks);
                unsigned bits = 1u << (rng() % 3);
                bool ok = false;
                w.run(t, [&] { ok = nbrma_thread_marks_note(m, NBRMA_THREAD_SELF, r, bits); });
                ASSERT_TRUE(ok);
                mod[{t, r}] |= bits;
                continue;
            }
            bool may = true;
            std::set<std::pair<int, bool>> expect;
            for (auto &e : mod)
                if (e.first.first == t && e.second &&
                    (rank == NBRMA_ALL_RANKS || rank == e.first.second)) {
                    may = may && !(e.second & NBRMA_MARK_ENGINE);
                    expect.insert({e.first.second, (e.second & NBRMA_MARK_AM) != 0});
                }
            bool got_may = false;
            std::set<std::pair<int, bool>> got;
            w.run(t, [&] {
                got_may = nbrma_thread_marks_may_flush(m, NBRMA_THREAD_SELF, rank);
                got = targets(m, NBRMA_THREAD_SELF, rank);
                nbrma_thread_marks_flushed(m, NBRMA_THREAD_SELF, rank);
            });
            ASSERT_EQ(got_may, may) << "seed " << seed;
            if (may) {
                ASSERT_EQ(got, expect) << "seed " << seed;
            }
            for (auto &e : mod)
                if (e.first.first == t && (rank == NBRMA_ALL_RANKS || rank == e.first.second))
                    e.second = 0;
        }
    }
}

} // namespace
