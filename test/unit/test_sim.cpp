// The deterministic simulator: random programs of epochs, valid under MPI,
// run by N virtual processes whose messages are delivered in a seeded random
// order. Invariants are checked at every step; a failure prints its seed and
// the command that replays it.
//
//   NBRMA_SIM_SEEDS=n   number of seeds to run (default 20000, about 2 s)
//   NBRMA_SIM_FIRST_SEED=f  start at seed f (default 1), for longer runs
//   NBRMA_SIM_SEED=s    run only seed s (replay)
//   NBRMA_SIM_TRACE=1   print the generated programs
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "sim_world.hpp"

using nbrma_sim::message;
using nbrma_sim::request;
using nbrma_sim::sim_op;
using nbrma_sim::world;

namespace {

enum class code {
    fence, post, start, complete, wait, test_until_done, lock, unlock, lock_all, unlock_all, op, flush,
    wait_all,    // MPI_Waitall on every request so far
    mpi_barrier  // a two-sided MPI_Barrier (not an RMA call)
};
const char *code_name(code c);


struct instr {
    code what = code::op;
    bool blocking = false;
    int assert_bits = 0;
    std::vector<int> group;
    int target = -1;  // op, lock, unlock, flush (NBRMA_ALL_RANKS for all)
    int lock_type = NBRMA_LOCK_SHARED;
    int tag = -1;     // the epoch (per process) an op belongs to or a close ends
    int phase = -1;   // PSCW phase of post/start/wait
    std::uint64_t fence_call = 0;  // fence: its number
    int barrier = -1;              // mpi_barrier: its number
};

instr make_instr(code what)
{
    instr i;
    i.what = what;
    return i;
}

using program = std::vector<instr>;

struct scenario {
    int nprocs = 2;
    bool grants_as_writes = false;
    bool ordered_notifications = false;
    bool local_reports = false;
    bool whole_lock_epochs = false;
    bool lazy_locks = false;        // rule L1, refusing from lazy_refuse_at operations on
    std::size_t lazy_refuse_at = 0;
    bool lock_words = false;
    bool pulled_access_epochs = false;
    std::vector<unsigned> flags;
    std::vector<program> programs;
    // ops expected to land at a target: [target][pscw phase] and [target][fence epoch]
    std::vector<std::map<int, int>> pscw_ops_to;
    std::vector<std::map<std::uint64_t, int>> fence_ops_to;
    std::vector<std::map<int, int>> tag_phase;  // [process][tag] -> PSCW phase
};

class generator {
  public:
    explicit generator(std::uint64_t seed) : rng_(seed) {}

    scenario make()
    {
        s_.nprocs = 2 + pick(4);
        s_.grants_as_writes = pick(2) == 0;
        s_.ordered_notifications = pick(2) == 0;
        s_.local_reports = pick(2) == 0;
        s_.programs.assign(static_cast<std::size_t>(s_.nprocs), program());
        s_.pscw_ops_to.assign(static_cast<std::size_t>(s_.nprocs), {});
        s_.fence_ops_to.assign(static_cast<std::size_t>(s_.nprocs), {});
        s_.tag_phase.assign(static_cast<std::size_t>(s_.nprocs), {});
        tags_.assign(static_cast<std::size_t>(s_.nprocs), 0);
        for (int p = 0; p < s_.nprocs; ++p)
            s_.flags.push_back(pick(2) ? 0u : static_cast<unsigned>(pick(16)));
        enum { none, fence_phase, pscw_phase, passive_phase } previous = none;
        const int phases = 2 + pick(6);
        for (int i = 0; i < phases; ++i) {
            const int type = pick(3);
            // Under MPI a window may not be exposed while locked: passive and
            // PSCW phases must be separated (by a barrier, here a fence).
            const bool switches = (previous == passive_phase && type == 1) || (previous == pscw_phase && type == 2);
            if (switches || (previous != none && pick(5) == 0))
                barrier();
            if (type == 0) {
                fence_epochs();
                previous = fence_phase;
            } else if (type == 1) {
                pscw(i);
                previous = pscw_phase;
            } else {
                passive();
                previous = passive_phase;
            }
        }
        // drawn last, so that the programs of a seed stay what they were
        s_.whole_lock_epochs = pick(2) == 0;
        s_.lock_words = pick(2) == 0;
        s_.pulled_access_epochs = pick(2) == 0;
        s_.lazy_locks = pick(2) == 0;
        s_.lazy_refuse_at = static_cast<std::size_t>(pick(4));
        return s_;
    }

  private:
    int pick(int n) { return static_cast<int>(rng_() % static_cast<std::uint64_t>(n)); }
    bool coin() { return pick(2) == 0; }
    int new_tag(int p) { return ++tags_[static_cast<std::size_t>(p)]; }
    // With A_A_A_R, lock epochs closed by nonblocking unlocks may be active
    // together and take their locks in any order, so a program that holds one
    // lock while it waits for another (a blocking flush, a later unlock) can
    // deadlock against another process's nested locks: the flag's promise is
    // the application's. Such a process unlocks blocking here (the coin is
    // drawn anyway, so that the seed's other draws stay what they were).
    bool closes_locks_blocking(int p, bool drawn) const
    {
        return drawn || (s_.flags[static_cast<std::size_t>(p)] & NBRMA_REORDER_ACCESS_AFTER_ACCESS) != 0;
    }
    void emit(int p, instr i) { s_.programs[static_cast<std::size_t>(p)].push_back(std::move(i)); }

    void emit_ops(int p, int target, int tag, int max_ops)
    {
        const int n = pick(max_ops + 1);
        for (int k = 0; k < n; ++k) {
            instr i = make_instr(code::op);
            i.target = target;
            i.tag = tag;
            emit(p, i);
        }
    }

    // `tag` labels the epoch this fence opens (-1: none).
    void fence_call(int p, int assert_bits, bool blocking, int tag)
    {
        instr i = make_instr(code::fence);
        i.assert_bits = assert_bits;
        i.blocking = blocking;
        i.fence_call = fence_calls_;
        i.tag = tag;
        emit(p, i);
    }

    // A last fence without NOSUCCEED leaves a tentative epoch that the next
    // epoch of another kind (or the end of the program) ends.
    int closing_fence_assert(int other_bits) { return other_bits | (pick(3) ? NBRMA_MODE_NOSUCCEED : 0); }

    // Either a fence, or what an MPI program does without RMA: complete all
    // requests, then MPI_Barrier. Then notifications may still be in flight.
    void barrier()
    {
        if (coin()) {
            ++fence_calls_;
            for (int p = 0; p < s_.nprocs; ++p)
                fence_call(p, closing_fence_assert(NBRMA_MODE_NOPRECEDE), coin(), -1);
            return;
        }
        ++mpi_barriers_;
        for (int p = 0; p < s_.nprocs; ++p) {
            emit(p, make_instr(code::wait_all));
            instr b = make_instr(code::mpi_barrier);
            b.barrier = mpi_barriers_;
            emit(p, b);
        }
    }

    void fence_epochs()
    {
        const int epochs = 1 + pick(3);
        for (int k = 0; k <= epochs; ++k) {
            ++fence_calls_;
            const bool last = k == epochs;
            for (int p = 0; p < s_.nprocs; ++p) {
                const int tag = last ? -1 : new_tag(p);
                fence_call(p, last ? closing_fence_assert(0) : (k == 0 ? NBRMA_MODE_NOPRECEDE : 0), coin(), tag);
                if (last)
                    continue;
                const int n = pick(4);
                for (int j = 0; j < n; ++j) {
                    instr i = make_instr(code::op);
                    i.target = pick(s_.nprocs);
                    i.tag = tag;
                    emit(p, i);
                    ++s_.fence_ops_to[static_cast<std::size_t>(i.target)][fence_calls_];
                }
            }
        }
    }

    void pscw(int phase)
    {
        const int n = s_.nprocs;
        std::vector<std::vector<int>> access(static_cast<std::size_t>(n)), exposure(static_cast<std::size_t>(n));
        for (int o = 0; o < n; ++o)
            for (int t = 0; t < n; ++t)
                if (pick(3) == 0) {
                    access[static_cast<std::size_t>(o)].push_back(t);
                    exposure[static_cast<std::size_t>(t)].push_back(o);
                }
        for (int p = 0; p < n; ++p) {
            const std::vector<int> &targets = access[static_cast<std::size_t>(p)];
            const std::vector<int> &origins = exposure[static_cast<std::size_t>(p)];
            const bool posts = !origins.empty() || pick(6) == 0;
            const bool starts = !targets.empty() || pick(6) == 0;
            const int tag = new_tag(p);
            s_.tag_phase[static_cast<std::size_t>(p)][tag] = phase;
            instr post = make_instr(code::post);
            post.group = origins;
            post.phase = phase;
            post.blocking = coin();
            std::shuffle(post.group.begin(), post.group.end(), rng_);
            instr start = make_instr(code::start);
            start.group = targets;
            start.tag = tag;
            start.phase = phase;
            start.blocking = coin();
            const bool post_first = coin();
            if (posts && post_first)
                emit(p, post);
            if (starts)
                emit(p, start);
            if (posts && !post_first)
                emit(p, post);
            for (int t : targets) {
                const int before = static_cast<int>(s_.programs[static_cast<std::size_t>(p)].size());
                emit_ops(p, t, tag, 3);
                s_.pscw_ops_to[static_cast<std::size_t>(t)][phase] +=
                    static_cast<int>(s_.programs[static_cast<std::size_t>(p)].size()) - before;
            }
            instr complete = make_instr(code::complete);
            complete.tag = tag;
            complete.blocking = coin();
            instr wait = make_instr(pick(4) == 0 ? code::test_until_done : code::wait);
            wait.phase = phase;
            // Waiting for my exposure before completing my access could
            // deadlock under blocking MPI; only a nonblocking wait may go first.
            const bool wait_first = coin() && wait.what == code::wait;
            if (wait_first)
                wait.blocking = false;
            else
                wait.blocking = coin();
            if (posts && wait_first)
                emit(p, wait);
            if (starts)
                emit(p, complete);
            if (posts && !wait_first)
                emit(p, wait);
        }
    }

    // Exclusive locks are held one at a time, several locks at once only
    // shared: programs that cannot deadlock under blocking MPI whatever the
    // lock implementation.
    void passive()
    {
        const bool exclusive_mode = coin();
        for (int p = 0; p < s_.nprocs; ++p) {
            const int sessions = 1 + pick(2);
            for (int k = 0; k < sessions; ++k) {
                const int kind = exclusive_mode ? 0 : pick(3);
                // NOCHECK promises no conflicting lock: true when all are shared.
                const int nocheck = !exclusive_mode && pick(4) == 0 ? NBRMA_MODE_NOCHECK : 0;
                if (kind == 0)
                    single_lock(p, exclusive_mode && coin() ? NBRMA_LOCK_EXCLUSIVE : NBRMA_LOCK_SHARED, nocheck);
                else if (kind == 1)
                    multi_lock(p);
                else
                    lock_all(p, nocheck);
            }
        }
    }

    void flush(int p, int target)
    {
        instr f = make_instr(code::flush);
        f.target = target;
        f.assert_bits = coin();  // here: local_only
        f.blocking = coin();
        emit(p, f);
    }

    void single_lock(int p, int lock_type, int assert_bits = 0)
    {
        const int target = pick(s_.nprocs);
        const int tag = new_tag(p);
        instr lock = make_instr(code::lock);
        lock.target = target;
        lock.lock_type = lock_type;
        lock.assert_bits = assert_bits;
        lock.tag = tag;
        lock.blocking = coin();
        emit(p, lock);
        emit_ops(p, target, tag, 3);
        if (coin())
            flush(p, coin() ? target : NBRMA_ALL_RANKS);
        emit_ops(p, target, tag, 2);
        instr unlock = make_instr(code::unlock);
        unlock.target = target;
        unlock.tag = tag;
        unlock.blocking = closes_locks_blocking(p, coin());
        emit(p, unlock);
    }

    void multi_lock(int p)
    {
        if (s_.nprocs < 2)
            return single_lock(p, NBRMA_LOCK_SHARED);
        int a = pick(s_.nprocs), b = pick(s_.nprocs - 1);
        if (b >= a)
            ++b;
        std::vector<int> targets = {std::min(a, b), std::max(a, b)};
        std::vector<int> tags;
        for (int t : targets) {
            instr lock = make_instr(code::lock);
            lock.target = t;
            lock.tag = new_tag(p);
            lock.blocking = coin();
            tags.push_back(lock.tag);
            emit(p, lock);
        }
        for (std::size_t i = 0; i < targets.size(); ++i)
            emit_ops(p, targets[i], tags[i], 2);
        flush(p, coin() ? NBRMA_ALL_RANKS : targets[0]);
        for (std::size_t i = 0; i < targets.size(); ++i)
            emit_ops(p, targets[i], tags[i], 1);
        if (coin()) {
            std::swap(targets[0], targets[1]);
            std::swap(tags[0], tags[1]);
        }
        for (std::size_t i = 0; i < targets.size(); ++i) {
            instr unlock = make_instr(code::unlock);
            unlock.target = targets[i];
            unlock.tag = tags[i];
            unlock.blocking = closes_locks_blocking(p, coin());
            emit(p, unlock);
        }
    }

    void lock_all(int p, int assert_bits)
    {
        const int tag = new_tag(p);
        instr lock = make_instr(code::lock_all);
        lock.assert_bits = assert_bits;
        lock.tag = tag;
        lock.blocking = coin();
        emit(p, lock);
        for (int k = pick(5); k > 0; --k) {
            emit_ops(p, pick(s_.nprocs), tag, 1);
            if (pick(3) == 0)
                flush(p, coin() ? NBRMA_ALL_RANKS : pick(s_.nprocs));
        }
        instr unlock = make_instr(code::unlock_all);
        unlock.tag = tag;
        unlock.blocking = closes_locks_blocking(p, coin());
        emit(p, unlock);
    }

    std::mt19937_64 rng_;
    scenario s_;
    std::vector<int> tags_;
    std::uint64_t fence_calls_ = 0;
    int mpi_barriers_ = 0;
};

struct process_state {
    std::size_t pc = 0;
    request *blocked_on = nullptr;
    std::vector<request *> outstanding;
    std::uint64_t epochs_opened = 0;
    std::map<std::uint64_t, int> seq_phase;  // engine epoch seq -> PSCW phase
    int open_fence_tag = -1;
    const request *last_fence = nullptr;  // the latest fence request
    bool finished = false;
    int barrier_arrived = 0;  // last MPI_Barrier entered
};

class simulation {
  public:
    simulation(const scenario &s, std::uint64_t seed)
        : s_(s), w_(s.nprocs, s.grants_as_writes, s.ordered_notifications, s.whole_lock_epochs, s.lock_words,
             s.pulled_access_epochs), rng_(seed ^ 0x5DEECE66Dull),
          procs_(static_cast<std::size_t>(s.nprocs))
    {
        w_.set_lazy_locks(s.lazy_locks, s.lazy_refuse_at);
        for (int p = 0; p < s.nprocs; ++p)
            expect_ok(nbrma_set_reorder_flags(w_.e(p), s.flags[static_cast<std::size_t>(p)]), p, "set flags");
        if (s.local_reports)
            w_.enable_local_reports();
        w_.on_pscw_performed = [this](const sim_op &op, const nbrma::epoch &exposure) {
            check_fifo(op, exposure);
        };
        w_.on_request_complete = [this](request &) { ++activity_; };
    }

    std::string run()
    {
        const std::size_t step_limit = 200000;
        std::size_t steps = 0;
        while (error_.empty()) {
            if (++steps > step_limit)
                return "no termination after " + std::to_string(step_limit) + " steps: " + describe_blocked();
            if (all_finished() && w_.in_flight().empty())
                break;
            if (w_.in_flight().empty()) {
                if (!round_of_steps())
                    return "deadlock: " + describe_blocked();
            } else if (pick(3) == 0) {
                step(pick(s_.nprocs));
            } else {
                deliver_random();
            }
            check_step_invariants();
            if (!w_.failures().empty())
                error_ = w_.failures().front();
        }
        if (error_.empty())
            final_checks();
        whole_lock_epochs_sent += w_.whole_epochs_sent();
        pulled_access_epochs_sent += w_.pulled_epochs_sent();
        return error_;
    }

    // over all runs: shows that the seeds exercise whole lock epochs
    static std::size_t whole_lock_epochs_sent;
    static std::size_t pulled_access_epochs_sent;
    // and epochs that overtook a fence (rule F1): the check above saw them
    static std::size_t epochs_overtaking_fences;

  private:
    int pick(int n) { return static_cast<int>(rng_() % static_cast<std::uint64_t>(n)); }

    void fail(const std::string &what)
    {
        if (error_.empty())
            error_ = what;
    }

    void expect_ok(int rc, int p, const char *what)
    {
        if (rc != NBRMA_OK)
            fail(std::string("P") + std::to_string(p) + " " + what + ": " + nbrma_strerror(rc));
    }

    bool all_finished() const
    {
        for (const process_state &ps : procs_)
            if (!ps.finished)
                return false;
        return true;
    }

    // Random order is random delay; an ordered path only holds a notification
    // back behind the operations posted before it.
    void deliver_random()
    {
        for (;;) {
            const std::size_t index = static_cast<std::size_t>(pick(static_cast<int>(w_.in_flight().size())));
            if (w_.deliverable(index)) {
                w_.deliver(index);
                return;
            }
        }
    }

    // With nothing in flight, every process gets one step; no activity at
    // all means nobody can ever move again.
    bool round_of_steps()
    {
        const std::uint64_t before = activity_ + w_.in_flight().size();
        for (int p = 0; p < s_.nprocs; ++p)
            step(p);
        return activity_ + w_.in_flight().size() != before || all_finished();
    }

    std::string describe_blocked() const
    {
        std::ostringstream out;
        for (int p = 0; p < s_.nprocs; ++p) {
            const process_state &ps = procs_[static_cast<std::size_t>(p)];
            out << "P" << p << (ps.finished ? " finished" : "") << " pc=" << ps.pc << "/"
                << s_.programs[static_cast<std::size_t>(p)].size();
            if (ps.blocked_on)
                out << " blocked on " << ps.blocked_on->what;
            const nbrma::engine &engine = const_cast<world &>(w_).impl(p);
            out << " deferred=" << engine.deferred_count() << " active=" << engine.active_count();
            if (const nbrma::epoch *head = engine.deferred_head())
                out << " head=" << static_cast<int>(head->kind) << (head->closed ? "(closed)" : "");
            for (const nbrma::epoch *a : engine.active_epochs()) {
                out << " active{kind=" << static_cast<int>(a->kind) << " seq=" << a->seq << " closed=" << a->closed
                    << " unfinished=" << a->unfinished_slots;
                for (const nbrma::target_slot &slot : a->slots)
                    out << " [r" << slot.rank << " id" << slot.match_id << " g" << slot.granted << " f" << slot.finished
                        << " ops" << slot.ops_outstanding << "]";
                out << "}";
            }
            out << " locks: x=" << engine.locks().exclusive_holder() << " s=" << engine.locks().shared_holder_count()
                << " waiting=" << engine.locks().waiting_count();
            if (s_.lock_words)
                out << " word=" << w_.lock_words()[static_cast<std::size_t>(p)];
            out << "; ";
        }
        return out.str();
    }

    void step(int p)
    {
        process_state &ps = procs_[static_cast<std::size_t>(p)];
        // as the glue's poller: busy lock words are tried again
        if (nbrma_lock_attempts_pending(w_.e(p)) && w_.progress(p))
            ++activity_;
        if (ps.finished)
            return;
        if (ps.blocked_on) {
            if (w_.progress(p))
                ++activity_;
            if (ps.blocked_on->completions == 0)
                return;
            ps.blocked_on = nullptr;
            ++activity_;
        }
        const program &prog = s_.programs[static_cast<std::size_t>(p)];
        if (ps.pc == prog.size()) {
            finish(p, ps);
            return;
        }
        // A test loop that finds nothing is no activity: it may spin forever.
        if (execute(p, ps, prog[ps.pc])) {
            ++ps.pc;
            ++activity_;
        }
    }

    // MPI_Win_free's precondition: every request completed.
    void finish(int p, process_state &ps)
    {
        if (!all_requests_done(p, ps))
            return;
        ps.finished = true;
        ++activity_;
    }

    // Blocks on the first incomplete request, if any.
    bool all_requests_done(int p, process_state &ps)
    {
        for (request *r : ps.outstanding)
            if (r->completions == 0) {
                ps.blocked_on = r;
                if (w_.progress(p))
                    ++activity_;
                return false;
            }
        return true;
    }

    request *issue_request(int p, process_state &ps, const instr &i, std::string what)
    {
        request *r = w_.new_request(p, std::move(what));
        if (i.blocking)
            ps.blocked_on = r;
        ps.outstanding.push_back(r);
        return r;
    }

    void opened_epoch(int p, process_state &ps, int phase)
    {
        ++ps.epochs_opened;
        if (phase >= 0)
            ps.seq_phase[ps.epochs_opened] = phase;
        if (w_.impl(p).epochs_opened() != ps.epochs_opened)
            fail("P" + std::to_string(p) + ": the engine counts epochs differently");
    }

    // Returns false to stay on the same instruction (test loop).
    bool execute(int p, process_state &ps, const instr &i)
    {
        nbrma_engine *e = w_.e(p);
        switch (i.what) {
        case code::fence: {
            request *r = issue_request(p, ps, i, "fence " + std::to_string(i.fence_call));
            ps.last_fence = r;
            r->check_on_completion = [this, p, call = i.fence_call, tag = ps.open_fence_tag] {
                return check_fence_barrier(p, call, tag);
            };
            expect_ok(nbrma_ifence(e, i.assert_bits, r), p, "ifence");
            ps.open_fence_tag = i.tag;
            opened_epoch(p, ps, -1);
            return true;
        }
        case code::post:
            // noted first: the post may apply a pulled access epoch at once
            ps.seq_phase[ps.epochs_opened + 1] = i.phase;
            expect_ok(nbrma_ipost(e, i.group.data(), static_cast<int>(i.group.size()), 0,
                                  issue_request(p, ps, i, "post")), p, "ipost");
            opened_epoch(p, ps, i.phase);
            return true;
        case code::start:
            expect_ok(nbrma_istart(e, i.group.data(), static_cast<int>(i.group.size()), 0,
                                   issue_request(p, ps, i, "start")), p, "istart");
            opened_epoch(p, ps, i.phase);
            return true;
        case code::lock:
            expect_ok(nbrma_ilock(e, i.lock_type, i.target, i.assert_bits, issue_request(p, ps, i, "lock")), p, "ilock");
            opened_epoch(p, ps, -1);
            return true;
        case code::lock_all:
            expect_ok(nbrma_ilock_all(e, i.assert_bits, issue_request(p, ps, i, "lock_all")), p, "ilock_all");
            opened_epoch(p, ps, -1);
            return true;
        case code::complete:
        case code::unlock:
        case code::unlock_all: {
            request *r = issue_request(p, ps, i, "close of epoch tag " + std::to_string(i.tag));
            r->check_on_completion = [this, p, tag = i.tag, what = i.what, fence = ps.last_fence] {
                const std::string overtaking = check_fence_overtaking(p, what, fence);
                return overtaking.empty() ? check_epoch_ops_acked(p, tag) : overtaking;
            };
            const int rc = i.what == code::complete ? nbrma_icomplete(e, r)
                : i.what == code::unlock ? nbrma_iunlock(e, i.target, r) : nbrma_iunlock_all(e, r);
            expect_ok(rc, p, "close");
            return true;
        }
        case code::wait: {
            request *r = issue_request(p, ps, i, "wait of phase " + std::to_string(i.phase));
            r->check_on_completion = [this, p, phase = i.phase, fence = ps.last_fence] {
                const std::string overtaking = check_fence_overtaking(p, code::wait, fence);
                return overtaking.empty() ? check_exposure_ops(p, phase) : overtaking;
            };
            expect_ok(nbrma_iwait(e, r), p, "iwait");
            return true;
        }
        case code::test_until_done: {
            int flag = 0;
            expect_ok(nbrma_test(e, &flag), p, "test");
            if (flag) {
                const std::string violation = check_exposure_ops(p, i.phase);
                if (!violation.empty())
                    fail(violation);
            }
            return flag != 0;
        }
        case code::op: {
            const int tag = i.tag;
            expect_ok(w_.record_op(p, i.target, tag), p, "record op");
            return true;
        }
        case code::wait_all:
            return all_requests_done(p, ps);
        case code::mpi_barrier: {
            std::vector<int> &arrived = barrier_arrivals_;
            if (arrived.size() <= static_cast<std::size_t>(i.barrier))
                arrived.resize(static_cast<std::size_t>(i.barrier) + 1, 0);
            if (ps.barrier_arrived != i.barrier) {
                ps.barrier_arrived = i.barrier;
                ++arrived[static_cast<std::size_t>(i.barrier)];
                ++activity_;
            }
            return arrived[static_cast<std::size_t>(i.barrier)] == s_.nprocs;
        }
        case code::flush: {
            request *r = issue_request(p, ps, i, "flush");
            const std::uint64_t stamp = last_serial(p);
            r->check_on_completion = [this, p, target = i.target, stamp, local = i.assert_bits != 0] {
                return check_flush(p, target, stamp, local);
            };
            expect_ok(nbrma_iflush(e, i.target, i.assert_bits, r), p, "iflush");
            return true;
        }
        }
        return true;
    }

    std::uint64_t last_serial(int p) const
    {
        std::uint64_t serial = 0;
        for (const auto &op : w_.ops())
            if (op->origin == p)
                serial = std::max(serial, op->serial);
        return serial;
    }

    // --- invariants -------------------------------------------------------------

    // Rule F1 seen from outside: an epoch that completes while a fence the
    // process called before it has not passed its barrier overtook that
    // fence. Only access and lock epochs (closed by complete or unlock) of a
    // process with A_A_A_R and A_A_E_R may. `fence` is the latest fence the
    // process called before the closing call: a fence's request completes
    // only after the earlier ones'.
    std::string check_fence_overtaking(int p, code closed_by, const request *fence)
    {
        const unsigned f1 = NBRMA_REORDER_ACCESS_AFTER_ACCESS | NBRMA_REORDER_ACCESS_AFTER_EXPOSURE;
        if (fence == nullptr || fence->completions != 0)
            return std::string();
        ++epochs_overtaking_fences;
        const bool allowed = (s_.flags[static_cast<std::size_t>(p)] & f1) == f1 &&
            (closed_by == code::complete || closed_by == code::unlock);
        if (allowed)
            return std::string();
        return "P" + std::to_string(p) + ": an epoch closed by " + code_name(closed_by) +
            " completed before the barrier of an earlier fence (" + fence->what + "), flags " +
            std::to_string(s_.flags[static_cast<std::size_t>(p)]);
    }

    // Rule 3, checked where it matters: the exposure that accepts an origin's
    // operation belongs to the same PSCW phase as the origin's access epoch.
    void check_fifo(const sim_op &op, const nbrma::epoch &exposure)
    {
        const process_state &origin = procs_[static_cast<std::size_t>(op.origin)];
        const process_state &target = procs_[static_cast<std::size_t>(op.target)];
        auto o = origin.seq_phase.find(op.epoch_seq);
        auto t = target.seq_phase.find(exposure.seq);
        if (o == origin.seq_phase.end() || t == target.seq_phase.end() || o->second != t->second)
            fail("FIFO matching violated: op " + std::to_string(op.origin) + "->" + std::to_string(op.target) +
                 " of phase " + (o == origin.seq_phase.end() ? std::string("?") : std::to_string(o->second)) +
                 " performed in the exposure of phase " +
                 (t == target.seq_phase.end() ? std::string("?") : std::to_string(t->second)));
    }

    std::string check_epoch_ops_acked(int p, int tag) const
    {
        for (const auto &op : w_.ops())
            if (op->origin == p && op->tag == tag && !op->acked)
                return "P" + std::to_string(p) + ": epoch tag " + std::to_string(tag) +
                    " completed before its operation " + std::to_string(op->serial);
        return std::string();
    }

    std::string check_exposure_ops(int p, int phase) const
    {
        int performed = 0;
        for (const auto &op : w_.ops())
            if (op->target == p && op->performed && op->kind == nbrma::epoch_kind::access &&
                s_.tag_phase[static_cast<std::size_t>(op->origin)].count(op->tag) &&
                s_.tag_phase[static_cast<std::size_t>(op->origin)].at(op->tag) == phase)
                ++performed;
        const auto &expected_map = s_.pscw_ops_to[static_cast<std::size_t>(p)];
        const auto expected = expected_map.count(phase) ? expected_map.at(phase) : 0;
        if (performed != expected)
            return "P" + std::to_string(p) + ": exposure of phase " + std::to_string(phase) + " completed with " +
                std::to_string(performed) + " of " + std::to_string(expected) + " operations performed";
        return std::string();
    }

    // Fence call f completes when its barrier passed: every operation of
    // fence epoch f-1 toward me landed, and mine completed.
    std::string check_fence_barrier(int p, std::uint64_t call, int closed_tag) const
    {
        if (closed_tag >= 0) {
            std::string mine = check_epoch_ops_acked(p, closed_tag);
            if (!mine.empty())
                return mine;
        }
        int performed = 0;
        for (const auto &op : w_.ops())
            if (op->target == p && op->performed && op->kind == nbrma::epoch_kind::fence && op->fence_seq == call - 1)
                ++performed;
        const auto &expected_map = s_.fence_ops_to[static_cast<std::size_t>(p)];
        const int expected = expected_map.count(call - 1) ? expected_map.at(call - 1) : 0;
        if (performed != expected)
            return "P" + std::to_string(p) + ": fence " + std::to_string(call) + " passed with " +
                std::to_string(performed) + " of " + std::to_string(expected) + " operations of the epoch landed";
        return std::string();
    }

    std::string check_flush(int p, int target, std::uint64_t stamp, bool local) const
    {
        for (const auto &op : w_.ops())
            if (op->origin == p && op->serial <= stamp && !(local ? op->local_done : op->acked) &&
                (target == NBRMA_ALL_RANKS || op->target == target))
                return "P" + std::to_string(p) + ": flush completed before older operation " +
                    std::to_string(op->serial);
        return std::string();
    }

    void check_step_invariants()
    {
        for (int p = 0; p < s_.nprocs; ++p) {
            const nbrma::engine &engine = w_.impl(p);
            const nbrma::lock_manager &locks = engine.locks();
            if (locks.exclusive_holder() >= 0 && locks.shared_holder_count() != 0)
                fail("P" + std::to_string(p) + ": exclusive and shared lock held together");
            if (locks.is_locked() && engine.active_exposure_count() != 0)
                fail("P" + std::to_string(p) + ": window locked and exposed at once");
            if (!s_.lock_words)
                continue;
            // grants by message take the word too
            const long word = w_.lock_words()[static_cast<std::size_t>(p)];
            if ((locks.exclusive_holder() >= 0 && word != -1) || (locks.shared_holder_count() != 0 && word <= 0))
                fail("P" + std::to_string(p) + ": lock granted by message without the lock word");
            if (word != 0 && engine.active_exposure_count() != 0)
                fail("P" + std::to_string(p) + ": window locked through its word and exposed at once");
        }
    }

    void final_checks()
    {
        for (int p = 0; p < s_.nprocs; ++p) {
            for (request *r : procs_[static_cast<std::size_t>(p)].outstanding)
                if (r->completions != 1)
                    fail("P" + std::to_string(p) + ": request '" + r->what + "' completed " +
                         std::to_string(r->completions) + " times");
            if (nbrma_has_pending_epochs(w_.e(p)))
                fail("P" + std::to_string(p) + ": epochs still pending at the end");
        }
        for (const auto &op : w_.ops())
            if (!op->acked)
                fail("operation never completed");
        for (std::size_t p = 0; p < w_.lock_words().size(); ++p)
            if (w_.lock_words()[p] != 0)
                fail("P" + std::to_string(p) + "'s lock word still held at the end");
    }

    const scenario &s_;
    world w_;
    std::mt19937_64 rng_;
    std::vector<process_state> procs_;
    std::vector<int> barrier_arrivals_;
    std::uint64_t activity_ = 0;
    std::string error_;
};

std::size_t simulation::whole_lock_epochs_sent = 0;
std::size_t simulation::pulled_access_epochs_sent = 0;
std::size_t simulation::epochs_overtaking_fences = 0;

const char *code_name(code c)
{
    static const char *names[] = {"fence", "post", "start", "complete", "wait", "test", "lock",
                                  "unlock", "lock_all", "unlock_all", "op", "flush", "wait_all", "barrier"};
    return names[static_cast<int>(c)];
}

// NBRMA_SIM_TRACE=1 prints the programs of a replayed seed.
void print_programs(const scenario &s)
{
    for (int p = 0; p < s.nprocs; ++p) {
        std::printf("P%d flags=%x:", p, s.flags[static_cast<std::size_t>(p)]);
        int pc = 0;
        for (const instr &i : s.programs[static_cast<std::size_t>(p)]) {
            std::printf(" %d:%s%s", pc++, code_name(i.what), i.blocking ? "!" : "");
            if (i.target != -1)
                std::printf("(%d)", i.target);
            if (!i.group.empty() || i.what == code::post || i.what == code::start) {
                std::printf("{");
                for (int r : i.group)
                    std::printf("%d,", r);
                std::printf("}");
            }
            if (i.what == code::lock && i.lock_type == NBRMA_LOCK_EXCLUSIVE)
                std::printf("X");
        }
        std::printf("\n");
    }
}

std::string run_seed(std::uint64_t seed)
{
    if (std::getenv("NBRMA_SIM_TRACE"))
        print_programs(generator(seed).make());
    const scenario s = generator(seed).make();
    return simulation(s, seed).run();
}

std::uint64_t env_number(const char *name, std::uint64_t fallback)
{
    const char *value = std::getenv(name);
    return value && *value ? std::strtoull(value, nullptr, 10) : fallback;
}

}  // namespace

TEST(simulator, random_programs_run_to_completion)
{
    const char *single = std::getenv("NBRMA_SIM_SEED");
    const std::uint64_t first = single && *single ? env_number("NBRMA_SIM_SEED", 0)
                                                  : env_number("NBRMA_SIM_FIRST_SEED", 1);
    const std::uint64_t count = single && *single ? 1 : env_number("NBRMA_SIM_SEEDS", 20000);
    const std::size_t whole_before = simulation::whole_lock_epochs_sent;
    const std::size_t pulled_before = simulation::pulled_access_epochs_sent;
    const std::size_t overtaking_before = simulation::epochs_overtaking_fences;
    for (std::uint64_t seed = first; seed < first + count; ++seed) {
        const std::string error = run_seed(seed);
        ASSERT_TRUE(error.empty()) << "seed " << seed << ": " << error << "\nreplay: NBRMA_SIM_SEED=" << seed
                                   << " test/unit/nbrma_sim_tests --gtest_filter=simulator.random_programs_run_to_completion";
    }
    if (count >= 1000)
        EXPECT_GT(simulation::whole_lock_epochs_sent - whole_before, 0u) << "no seed sent a lock epoch whole";
    if (count >= 1000)
        EXPECT_GT(simulation::pulled_access_epochs_sent - pulled_before, 0u) << "no seed pulled an access epoch";
    std::printf("lock epochs sent whole: %zu\n", simulation::whole_lock_epochs_sent - whole_before);
    if (count >= 1000)
        EXPECT_GT(simulation::epochs_overtaking_fences - overtaking_before, 0u) << "no epoch overtook a fence";
    std::printf("access epochs pulled: %zu\n", simulation::pulled_access_epochs_sent - pulled_before);
    std::printf("epochs that overtook a fence (F1): %zu\n", simulation::epochs_overtaking_fences - overtaking_before);
}

TEST(simulator, same_seed_same_run)
{
    // Determinism is what makes a printed seed useful.
    const scenario a = generator(42).make(), b = generator(42).make();
    ASSERT_EQ(a.nprocs, b.nprocs);
    for (int p = 0; p < a.nprocs; ++p)
        ASSERT_EQ(a.programs[static_cast<std::size_t>(p)].size(), b.programs[static_cast<std::size_t>(p)].size());
    EXPECT_EQ(run_seed(42), run_seed(42));
}
