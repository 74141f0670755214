// N virtual processes in one test process, each with its own engine behind
// the C interface, connected by a message pool the test delivers from in any
// order. Used by the unit tests (delivery under test control) and by the
// randomized simulator (seeded random delivery).
#ifndef NBRMA_SIM_WORLD_HPP
#define NBRMA_SIM_WORLD_HPP

#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "nbrma_core.h"
#include "nbrma/engine.hpp"

namespace nbrma_sim {

enum class msg_kind {
    grant, done, lock_request, lock_release, fence_arrival, op, op_local, op_ack, lock_epoch, access_epoch,
    access_applied
};

const char *msg_kind_name(msg_kind kind);

// The opaque record the glue would hand to nbrma_op_record.
struct sim_op {
    int origin = -1;
    int target = -1;
    std::uint64_t serial = 0;  // per origin, recording order
    int tag = -1;              // the test's own epoch label
    nbrma_op_ticket ticket{};
    bool issued = false;
    bool performed = false;
    bool local_done = false;  // origin buffer reusable
    bool acked = false;
    // what the origin's epoch looked like when the operation was issued
    nbrma::epoch_kind kind = nbrma::epoch_kind::fence;
    std::uint64_t match_id = 0;
    std::uint64_t fence_seq = 0;
    std::uint64_t epoch_seq = 0;
    bool exclusive = false;
    bool nocheck = false;
};

struct message {
    msg_kind kind;
    int from;
    int to;
    std::uint64_t value;
    int lock_type;
    sim_op *op;
    std::uint64_t seq;  // posting order
    void *payload;      // lock_epoch, access_epoch: a whole_epoch
};

// The payload of a lock epoch sent whole (transport.pack_lock_epoch) or of a
// pulled access epoch (transport.pack_access_epoch).
struct whole_epoch {
    std::vector<sim_op *> ops;
};

// A cookie: the request of one application call.
struct request {
    int owner = -1;
    int completions = 0;
    std::string what;
    std::function<std::string()> check_on_completion;  // non-empty result = violation
};

class world {
  public:
    // ordered_notifications: the transport (this world) delivers a done or a
    // lock release only after every operation posted before it on the same
    // origin->target path, and the engines are told so.
    // whole_lock_epochs: the transport packs lock epochs that are closed when
    // they are activated (nbrma_transport.pack_lock_epoch).
    // lock_words: every process has a lock word (transport.try_lock/unlock);
    // an origin reaches its own and those of the targets for which
    // word_reaches says so, and locks the others by message.
    // pulled_access_epochs: access epochs closed before a grant go to the
    // target for it to perform (transport.pack_access_epoch), toward the
    // targets for which word_reaches says so.
    world(int nprocs, bool grants_as_writes = false, bool ordered_notifications = false,
          bool whole_lock_epochs = false, bool lock_words = false, bool pulled_access_epochs = false);
    static bool word_reaches(int origin, int target) { return origin == target || (origin + target) % 3 != 1; }
    // The lock words: 0 free, -1 held exclusively, n > 0 held shared n times.
    const std::vector<long> &lock_words() const { return words_; }
    ~world();
    world(const world &) = delete;
    world &operator=(const world &) = delete;

    int size() const { return nprocs_; }
    // From now on operations are reported locally complete (a message of its
    // own, delivered in any order) before they are reported complete.
    void enable_local_reports();
    nbrma_engine *e(int rank) { return engines_[static_cast<std::size_t>(rank)]; }
    nbrma::engine &impl(int rank) { return nbrma::engine_of(e(rank)); }

    request *new_request(int owner, std::string what = std::string());
    // Records an operation from `origin` toward `target`; returns the engine's code.
    int record_op(int origin, int target, int tag, sim_op **op_out = nullptr);

    std::vector<message> &in_flight() { return in_flight_; }
    // Whether the transport may deliver in_flight()[index] now.
    bool deliverable(std::size_t index) const;
    void deliver(std::size_t index);
    // Delivers in FIFO order until nothing is in flight; returns how many.
    std::size_t deliver_all();
    // Delivers newest first until nothing is in flight: O(1) per message.
    std::size_t drain();
    // Delivers the first in-flight message matching `pred`; false if none.
    bool deliver_first(const std::function<bool(const message &)> &pred);
    std::size_t count_in_flight(const std::function<bool(const message &)> &pred) const;
    int progress(int rank);

    const std::vector<std::unique_ptr<sim_op>> &ops() const { return ops_; }
    std::size_t whole_epochs_sent() const { return whole_epochs_sent_; }
    std::size_t fence_arrivals_sent() const { return fence_arrivals_sent_; }
    std::size_t pulled_epochs_sent() const { return pulled_epochs_sent_; }
    // Rule L1: the transport lets lock epochs wait for their close
    // (transport.defer_lock) where they would travel whole and lock by
    // message, while they hold fewer than refuse_at operations (a wrong guess
    // from refuse_at on). Off until set.
    // The transport refuses to apply whole lock epochs (an operation outside
    // the target's window), after performing nothing.
    void refuse_whole_epochs(bool refuse) { refuse_whole_epochs_ = refuse; }
    void set_lazy_locks(bool lazy, std::size_t refuse_at = SIZE_MAX)
    {
        lazy_locks_ = lazy;
        lazy_refuse_at_ = refuse_at;
    }
    std::vector<std::string> &failures() { return failures_; }
    void fail(const std::string &what) { failures_.push_back(what); }

    // Called when a PSCW operation is performed at its target, with the
    // target's exposure epoch that accepted it (FIFO-matching checks).
    std::function<void(const sim_op &, const nbrma::epoch &exposure)> on_pscw_performed;
    // Called for every completed request, after its own check.
    std::function<void(request &)> on_request_complete;

  private:
    struct process_ctx {
        world *w;
        int rank;
    };
    static int t_send_grant(void *ctx, int peer, std::uint64_t granted);
    static int t_send_done(void *ctx, int peer, std::uint64_t id);
    static int t_send_lock_request(void *ctx, int peer, std::uint64_t id, int lock_type);
    static int t_send_lock_release(void *ctx, int peer, std::uint64_t id);
    static int t_send_fence_arrival(void *ctx, int peer, std::uint64_t seq);
    static int t_issue_op(void *ctx, int target, void *record, nbrma_op_ticket ticket);
    static void t_request_complete(void *ctx, void *cookie, int status);
    static int t_defer_lock(void *ctx, int peer, int lock_type, void *const *records, std::size_t n,
                            int *defer);
    static int t_pack_lock_epoch(void *ctx, int peer, int lock_type, void *const *records, std::size_t n,
                                 void **payload);
    static int t_send_lock_epoch(void *ctx, int peer, std::uint64_t id, int lock_type, void *payload);
    static int t_apply_lock_epoch(void *ctx, int origin, void *payload);
    static int t_pack_access_epoch(void *ctx, int peer, void *const *records, std::size_t n, void **payload);
    static int t_send_access_epoch(void *ctx, int peer, std::uint64_t id, void *payload);
    static int t_apply_access_epoch(void *ctx, int origin, void *payload);
    static int t_send_access_applied(void *ctx, int origin, std::uint64_t id);
    static int t_try_lock(void *ctx, int peer, int lock_type, int *state);
    static int t_unlock(void *ctx, int peer, int lock_type);

    void post(msg_kind kind, int from, int to, std::uint64_t value, int lock_type = 0, sim_op *op = nullptr,
              void *payload = nullptr);
    void perform(sim_op &op);
    void check(int rc, const message &m);
    void report_local(sim_op &op);
    void write_grant(int from, int to, std::uint64_t value);

    int nprocs_;
    bool grants_as_writes_;
    bool ordered_notifications_;
    bool whole_lock_epochs_;
    bool lock_words_;
    bool pulled_access_epochs_;
    std::vector<long> words_;
    bool local_reports_ = false;
    std::uint64_t posted_ = 0;
    std::size_t whole_epochs_sent_ = 0;
    std::size_t fence_arrivals_sent_ = 0;
    std::size_t pulled_epochs_sent_ = 0;
    bool lazy_locks_ = false;
    bool refuse_whole_epochs_ = false;
    std::size_t lazy_refuse_at_ = SIZE_MAX;
    std::vector<process_ctx> ctx_;
    std::vector<nbrma_engine *> engines_;
    std::vector<message> in_flight_;
    std::deque<request> requests_;
    std::vector<std::unique_ptr<sim_op>> ops_;
    std::vector<std::uint64_t> op_serials_;
    std::vector<std::string> failures_;
};

}  // namespace nbrma_sim

#endif
