// Whether a thread is runnable and the calling thread's CPU time
// (ch4_netmod_rma/os/thread_state.c) without MPI: the parser of stat lines on
// text, names with spaces and parentheses among them, then threads that spin
// and sleep as /proc shows them, and CPU time that grows while computing and
// not while asleep.

#include <gtest/gtest.h>

#include <sched.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <string>
#include <thread>

#include "thread_state.h"

namespace {

using clock_type = std::chrono::steady_clock;
constexpr uint64_t ms_ns = 1000000;

TEST(ThreadStateParse, PlainLines)
{
    EXPECT_EQ(nbrma_thread_state_parse("4242 (mpi_app) R 1 4242 4242 0 -1 4194560"), 'R');
    EXPECT_EQ(nbrma_thread_state_parse("4243 (mpi_app) S 1 4242 4242 0 -1 4194560"), 'S');
    EXPECT_EQ(nbrma_thread_state_parse("17 (kworker/0:1) D 2 0 0"), 'D');
    EXPECT_EQ(nbrma_thread_state_parse("9 (z) Z 1"), 'Z');
}

// The name is the thread's, anything up to 15 characters: the state follows
// the last ')' of the line, not the first.
TEST(ThreadStateParse, NamesWithSpacesAndParentheses)
{
    EXPECT_EQ(nbrma_thread_state_parse("123 (a b) c) R 1 123"), 'R');
    EXPECT_EQ(nbrma_thread_state_parse("123 (a b) c) S 1 123"), 'S');
    EXPECT_EQ(nbrma_thread_state_parse("7 ()) S 1"), 'S');
    EXPECT_EQ(nbrma_thread_state_parse("7 ((() R 1"), 'R');
    EXPECT_EQ(nbrma_thread_state_parse("7 (x) S) R 0"), 'R');
    EXPECT_EQ(nbrma_thread_state_parse("8 ( ) R"), 'R');
}

// What the agent counts as unknown (and so as computing): no ')', or the text
// ends at it. One character past it is the end of the text (0).
TEST(ThreadStateParse, TruncatedOrForeignText)
{
    EXPECT_EQ(nbrma_thread_state_parse(""), -1);
    EXPECT_EQ(nbrma_thread_state_parse("123 (no end R 1"), -1);
    EXPECT_EQ(nbrma_thread_state_parse("123 (name)"), -1);
    EXPECT_EQ(nbrma_thread_state_parse("123 (name) "), 0);
}

// The processor is the 39th field: the 36th after the state, whatever the
// name holds.
TEST(ThreadStateParse, TheCpuIsTheThirtyNinthField)
{
    const char *fields_to_processor =
        " 4319 4319 29851 0 -1 4194304 99 0 0 0 0 0 0 0 20 0 1 0 7360500 3133440 394 "
        "18446744073709551615 94857261170688 94857261190569 140721662183360 0 0 0 0 0 0 0 0 0 "
        "17 ";
    std::string line = std::string("4321 (cat) R") + fields_to_processor + "1 0 0 0 0 0\n";
    EXPECT_EQ(nbrma_thread_state_parse_cpu(line.c_str()), 1);
    line = std::string("4321 (a) b 7) S") + fields_to_processor + "13\n";
    EXPECT_EQ(nbrma_thread_state_parse_cpu(line.c_str()), 13);
    line = std::string("4321 (x) S") + fields_to_processor + "0";
    EXPECT_EQ(nbrma_thread_state_parse_cpu(line.c_str()), 0);
}

TEST(ThreadStateParse, ACutLineHasNoCpu)
{
    EXPECT_EQ(nbrma_thread_state_parse_cpu(""), -1);
    EXPECT_EQ(nbrma_thread_state_parse_cpu("4321 (cat) R 4319 4319 29851 0 -1"), -1);
    EXPECT_EQ(nbrma_thread_state_parse_cpu("4321 (cat"), -1);
    std::string line = "4321 (cat) R";
    for (int i = 0; i < 35; i++)  // the fields between the state and the processor
        line += " 5";
    EXPECT_EQ(nbrma_thread_state_parse_cpu((line + " ").c_str()), -1);  // the field is empty
    EXPECT_EQ(nbrma_thread_state_parse_cpu((line + " x1").c_str()), -1);
    EXPECT_EQ(nbrma_thread_state_parse_cpu((line + " 3").c_str()), 3);
}

TEST(ThreadState, UnreadableCountsAsRunnable)
{
    EXPECT_TRUE(nbrma_thread_state_read(-1).runnable);
    int fds[2];
    ASSERT_EQ(pipe(fds), 0);
    close(fds[1]);
    EXPECT_TRUE(nbrma_thread_state_read(fds[0]).runnable);  // pread fails on a pipe
    close(fds[0]);
}

// The thread that asks is running: it reads 'R' of itself, and the CPU it is
// on (it may move between the two calls: pinned for the test).
TEST(ThreadState, TheCallingThreadIsRunnable)
{
    int fd = nbrma_thread_state_open_self();
    ASSERT_GE(fd, 0) << "no /proc";
    EXPECT_TRUE(nbrma_thread_state_read(fd).runnable);
    EXPECT_TRUE(nbrma_thread_state_read(fd).runnable);  // pread: asked again from the start
    std::thread([] {
        cpu_set_t mask, one;
        ASSERT_EQ(sched_getaffinity(0, sizeof(mask), &mask), 0);
        int cpu = 0;
        while (!CPU_ISSET(cpu, &mask))
            cpu++;
        CPU_ZERO(&one);
        CPU_SET(cpu, &one);
        ASSERT_EQ(sched_setaffinity(0, sizeof(one), &one), 0);
        int own = nbrma_thread_state_open_self();
        ASSERT_GE(own, 0);
        nbrma_thread_view view = nbrma_thread_state_read(own);
        EXPECT_TRUE(view.runnable);
        EXPECT_EQ(view.cpu, cpu);
        close(own);
    }).join();
    EXPECT_EQ(nbrma_thread_state_read(-1).cpu, -1);
    close(fd);
}

// A thread opens its own stat and hands it over, as MPI_Init's thread does to
// the agent; then it spins or sleeps as told.
class observed_thread {
  public:
    explicit observed_thread(bool spin) : thread_([this, spin] { run(spin); })
    {
        std::unique_lock<std::mutex> lock(m_);
        cv_.wait(lock, [this] { return fd_ != -2; });
    }
    ~observed_thread()
    {
        {
            std::lock_guard<std::mutex> lock(m_);
            stop_ = true;
        }
        cv_.notify_all();
        thread_.join();
        if (fd_ >= 0)
            close(fd_);
    }
    int fd() const { return fd_; }

  private:
    void run(bool spin)
    {
        {
            std::lock_guard<std::mutex> lock(m_);
            fd_ = nbrma_thread_state_open_self();
        }
        cv_.notify_all();
        if (spin) {
            while (!spinning_stop())
                ;
        } else {
            std::unique_lock<std::mutex> lock(m_);
            cv_.wait(lock, [this] { return stop_; });
        }
    }
    bool spinning_stop()
    {
        std::lock_guard<std::mutex> lock(m_);
        return stop_;
    }

    std::mutex m_;
    std::condition_variable cv_;
    int fd_ = -2;
    bool stop_ = false;
    std::thread thread_;
};

// Whether `fd`'s thread is seen runnable as `expected` within 2 s (it may
// not have reached its spin or its sleep yet when first asked).
bool seen_within_2s(int fd, bool expected)
{
    auto until = clock_type::now() + std::chrono::seconds(2);
    do {
        if (nbrma_thread_state_read(fd).runnable == expected)
            return true;
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
    } while (clock_type::now() < until);
    return false;
}

TEST(ThreadState, ASpinningThreadIsRunnable)
{
    observed_thread spinner(true);
    ASSERT_GE(spinner.fd(), 0) << "no /proc";
    EXPECT_TRUE(seen_within_2s(spinner.fd(), true));
    // and it stays so while it spins (runnable includes waiting for a core)
    for (int i = 0; i < 20; i++) {
        EXPECT_TRUE(nbrma_thread_state_read(spinner.fd()).runnable);
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
}

TEST(ThreadState, ASleepingThreadIsNotRunnable)
{
    observed_thread sleeper(false);
    ASSERT_GE(sleeper.fd(), 0) << "no /proc";
    EXPECT_TRUE(seen_within_2s(sleeper.fd(), false));
    for (int i = 0; i < 20; i++) {
        EXPECT_FALSE(nbrma_thread_state_read(sleeper.fd()).runnable);
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
}

// A thread's CPU time, not the process's: it grows while this thread
// computes, and hardly while it sleeps (another thread spinning meanwhile).
TEST(ThreadState, CpuTimeGrowsWhileComputingOnly)
{
    uint64_t before = nbrma_thread_cpu_ns();
    ASSERT_GT(before, 0u);
    // compute until 20 ms of CPU time, within 10 s of wall time on a busy host
    auto until = clock_type::now() + std::chrono::seconds(10);
    volatile uint64_t sink = 0;
    uint64_t now = before;
    while (now - before < 20 * ms_ns && clock_type::now() < until) {
        for (int i = 0; i < 100000; i++)
            sink = sink + static_cast<uint64_t>(i);
        now = nbrma_thread_cpu_ns();
    }
    EXPECT_GE(now - before, 20 * ms_ns);

    std::atomic<bool> stop{false};
    std::thread other([&] {
        while (!stop.load())
            ;
    });
    before = nbrma_thread_cpu_ns();
    auto wall_before = clock_type::now();
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    uint64_t slept_cpu = nbrma_thread_cpu_ns() - before;
    auto wall = clock_type::now() - wall_before;
    stop = true;
    other.join();
    EXPECT_GE(wall, std::chrono::milliseconds(50));
    EXPECT_LT(slept_cpu, 5 * ms_ns);
}

}  // namespace
