// What an engine receives (core/include/nbrma_inbox.h) without MPI: rules
// I1-I4 one by one on real engines, then random programs of three engines
// whose transports deliver some messages at once, from inside the sender's
// engine call (so that they arrive while the receiver's own call is in
// progress, as MPICH's progress runs our handler), and queue the rest for
// delivery in any order. Each program runs twice, through the core's inbox
// and through a plain model of the glue's former inbox, message switch and
// list of pulled epochs (engine_calls.c and pulled_out.c before the move),
// and everything that happens is compared: every call's code, every message
// sent, every request completed, every epoch applied, every payload freed.

#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include "nbrma_core.h"
#include "nbrma_fence_barrier.h"
#include "nbrma_inbox.h"

namespace {

// A payload (whole lock epoch, pulled epoch, or the pulled epoch the origin
// keeps): an id that both runs of a program hand out alike.
struct payload {
    uint64_t id;
    uint64_t access_id;
};

class world;

struct proc {
    world *w = nullptr;
    int rank = 0;
    nbrma_engine *engine = nullptr;
    int depth = 0;
    nbrma_inbox *inbox = nullptr;               // the core's run
    std::vector<nbrma_event> old_inbox;         // the model's run
    std::vector<std::pair<int, payload *>> old_pulled_out;     // peer, epoch
    std::vector<nbrma_op_ticket> issued;        // to report completed
};

class world {
  public:
    world(int n, bool core, uint64_t seed) : core_(core), rng_(seed), procs_(static_cast<size_t>(n))
    {
        nbrma_transport t{};
        t.send_grant = [](void *c, int peer, uint64_t v) { return send(c, peer, NBRMA_EVENT_GRANT, v, 0); };
        t.send_done = [](void *c, int peer, uint64_t v) { return send(c, peer, NBRMA_EVENT_DONE, v, 0); };
        t.send_lock_request = [](void *c, int peer, uint64_t v, int type) {
            return send(c, peer, NBRMA_EVENT_LOCK_REQUEST, v, type);
        };
        t.send_lock_release = [](void *c, int peer, uint64_t v) {
            return send(c, peer, NBRMA_EVENT_LOCK_RELEASE, v, 0);
        };
        t.send_fence_arrival = [](void *c, int peer, uint64_t v) {
            return send(c, peer, NBRMA_EVENT_FENCE_ARRIVAL, v, 0);
        };
        t.issue_op = [](void *c, int target, void *, nbrma_op_ticket ticket) {
            proc &p = *static_cast<proc *>(c);
            p.w->inside(p, "issue");
            p.w->log("issue " + std::to_string(p.rank) + "->" + std::to_string(target) + " age " +
                     std::to_string(ticket.age));
            p.issued.push_back(ticket);
            return NBRMA_OK;
        };
        t.request_complete = [](void *c, void *cookie, int status) {
            proc &p = *static_cast<proc *>(c);
            p.w->log("complete " + std::to_string(reinterpret_cast<uintptr_t>(cookie)) + " " +
                     std::to_string(status));
        };
        t.pack_lock_epoch = [](void *c, int, int, void *const *, size_t n, void **out) {
            proc &p = *static_cast<proc *>(c);
            *out = n <= 2 ? p.w->new_payload(0) : nullptr;     // small ones travel whole
            return NBRMA_OK;
        };
        t.send_lock_epoch = [](void *c, int peer, uint64_t v, int type, void *pl) {
            return send(c, peer, NBRMA_EVENT_LOCK_EPOCH, v, type, pl);
        };
        t.apply_lock_epoch = [](void *c, int origin, void *pl) { return apply(c, origin, pl, "whole"); };
        t.pack_access_epoch = [](void *c, int, void *const *, size_t n, void **out) {
            proc &p = *static_cast<proc *>(c);
            *out = n <= 3 ? p.w->new_payload(0) : nullptr;
            return NBRMA_OK;
        };
        t.send_access_epoch = [](void *c, int peer, uint64_t v, void *pl) {
            // the origin keeps its epoch until applied (I4); the peer gets a copy
            proc &p = *static_cast<proc *>(c);
            auto *kept = static_cast<payload *>(pl);
            kept->access_id = v;
            if (p.w->core_) {
                EXPECT_EQ(nbrma_inbox_keep_pulled(p.inbox, peer, v, kept), NBRMA_OK);
            } else {
                p.old_pulled_out.emplace_back(peer, kept);
            }
            return send(c, peer, NBRMA_EVENT_ACCESS_EPOCH, v, 0, p.w->new_payload(v));
        };
        t.apply_access_epoch = [](void *c, int origin, void *pl) { return apply(c, origin, pl, "pulled"); };
        t.send_access_applied = [](void *c, int peer, uint64_t v) {
            return send(c, peer, NBRMA_EVENT_ACCESS_APPLIED, v, 0);
        };
        t.drop_payload = free_payload;
        for (int r = 0; r < n; r++) {
            proc &p = procs_[static_cast<size_t>(r)];
            p.w = this;
            p.rank = r;
            t.ctx = &p;
            EXPECT_EQ(nbrma_engine_create(r, n, &t, &p.engine), NBRMA_OK);
            if (core_)
                p.inbox = nbrma_inbox_create(free_payload, &p);
        }
    }

    ~world()
    {
        for (proc &p : procs_) {
            nbrma_inbox_destroy(p.inbox);
            for (const auto &kept : p.old_pulled_out)
                std::free(kept.second);
            for (const nbrma_event &e : p.old_inbox)
                std::free(e.payload);
            nbrma_engine_free(p.engine);
        }
        for (const pending &m : network_)
            std::free(m.event.payload);
    }

    proc &at(int rank) { return procs_[static_cast<size_t>(rank)]; }
    int size() const { return static_cast<int>(procs_.size()); }
    const std::vector<std::string> &events() const { return log_; }
    size_t in_flight() const { return network_.size(); }
    std::mt19937_64 &rng() { return rng_; }
    void log(const std::string &line) { log_.push_back(line); }

    // ENGINE_CALL: the call with the depth raised, then the kept messages
    template <class Call> int call(proc &p, Call &&body)
    {
        p.depth++;
        int rc = body(p.engine);
        p.depth--;
        if (rc == NBRMA_OK && !p.depth)
            rc = core_ ? nbrma_inbox_drain(p.inbox, p.engine, &p.depth) : old_drain(p);
        return rc;
    }

    // A message arrives at `to` (MPIDI_NBRMA_epochs_receive).
    int receive(int to, const nbrma_event &e)
    {
        proc &p = at(to);
        return core_ ? nbrma_inbox_receive(p.inbox, p.engine, &p.depth, &e) : old_receive(p, e);
    }

    // Delivers the queued message at `index`.
    void deliver_queued(size_t index)
    {
        const pending m = network_[index];
        network_.erase(network_.begin() + static_cast<long>(index));
        log("deliver to " + std::to_string(m.to) + " rc " + std::to_string(receive(m.to, m.event)));
    }

    payload *new_payload(uint64_t access_id)
    {
        auto *pl = static_cast<payload *>(std::malloc(sizeof(payload)));
        pl->id = next_payload_++;
        pl->access_id = access_id;
        return pl;
    }

  private:
    struct pending {
        int to;
        nbrma_event event;
    };

    // Every transport function runs inside an engine call of its process:
    // its depth must say so, or a message would enter the engine (I1, I2).
    void inside(const proc &p, const char *what)
    {
        EXPECT_GT(p.depth, 0) << what << " of " << p.rank << " outside an engine call";
    }

    static int send(void *c, int peer, nbrma_event_kind kind, uint64_t value, int lock_type,
                    void *pl = nullptr)
    {
        proc &p = *static_cast<proc *>(c);
        world &w = *p.w;
        w.inside(p, "send");
        nbrma_event e{kind, p.rank, lock_type, value, pl};
        const bool now = w.rng_() % 2 == 0;
        w.log("send " + std::to_string(p.rank) + "->" + std::to_string(peer) + " kind " +
              std::to_string(kind) + " value " + std::to_string(value) + (now ? " now" : ""));
        if (now) {      // from inside this engine call: the peer may be in one too
            w.kept_during_calls_ += w.at(peer).depth > 0;
            w.log("receive rc " + std::to_string(w.receive(peer, e)));
        }
        else
            w.network_.push_back(pending{peer, e});
        return NBRMA_OK;
    }

    static int apply(void *c, int origin, void *pl, const char *what)
    {
        proc &p = *static_cast<proc *>(c);
        p.w->inside(p, what);
        p.w->log(std::string("apply ") + what + " of " + std::to_string(origin) + " at " +
                 std::to_string(p.rank) + " id " + std::to_string(static_cast<payload *>(pl)->id));
        std::free(pl);
        return NBRMA_OK;
    }

    static void free_payload(void *c, void *pl)
    {
        proc &p = *static_cast<proc *>(c);
        p.w->log("free at " + std::to_string(p.rank) + " id " +
                 std::to_string(static_cast<payload *>(pl)->id));
        std::free(pl);
    }

    // --- the glue before the move: engine_calls.c and pulled_out.c --------
    int old_deliver(proc &p, const nbrma_event &e)
    {
        switch (e.kind) {
        case NBRMA_EVENT_LOCK_EPOCH:
            return nbrma_on_lock_epoch(p.engine, e.from, e.value, e.lock_type, e.payload);
        case NBRMA_EVENT_GRANT:
            return nbrma_on_grant(p.engine, e.from, e.value);
        case NBRMA_EVENT_DONE:
            return nbrma_on_done(p.engine, e.from, e.value);
        case NBRMA_EVENT_LOCK_REQUEST:
            return nbrma_on_lock_request(p.engine, e.from, e.value, e.lock_type);
        case NBRMA_EVENT_LOCK_RELEASE:
            return nbrma_on_lock_release(p.engine, e.from, e.value);
        case NBRMA_EVENT_FENCE_ARRIVAL:
            return nbrma_on_fence_arrival(p.engine, e.from, e.value);
        case NBRMA_EVENT_ACCESS_EPOCH:
            return nbrma_on_access_epoch(p.engine, e.from, e.value, e.payload);
        case NBRMA_EVENT_ACCESS_APPLIED:
            for (size_t i = 0; i < p.old_pulled_out.size(); i++)
                if (p.old_pulled_out[i].first == e.from && p.old_pulled_out[i].second->access_id == e.value) {
                    free_payload(&p, p.old_pulled_out[i].second);
                    p.old_pulled_out[i] = p.old_pulled_out.back();
                    p.old_pulled_out.pop_back();
                    break;
                }
            return nbrma_on_access_applied(p.engine, e.from, e.value);
        }
        return NBRMA_ERR_INTERN;
    }
    int old_drain(proc &p)
    {
        int rc = NBRMA_OK;
        while (rc == NBRMA_OK && !p.old_inbox.empty()) {
            const nbrma_event e = p.old_inbox.front();
            p.old_inbox.erase(p.old_inbox.begin());
            p.depth++;
            rc = old_deliver(p, e);
            p.depth--;
        }
        return rc;
    }
    int old_receive(proc &p, const nbrma_event &e)
    {
        if (p.depth) {
            p.old_inbox.push_back(e);
            return NBRMA_OK;
        }
        return call(p, [&](nbrma_engine *) { return old_deliver(p, e); });
    }

    bool core_;
    std::mt19937_64 rng_;
    std::vector<proc> procs_;
    std::vector<pending> network_;
    std::vector<std::string> log_;
    uint64_t next_payload_ = 1;

  public:
    size_t kept_during_calls_ = 0;     // messages that arrived while the receiver was in a call
};

nbrma_event event(nbrma_event_kind kind, int from, uint64_t value, int lock_type = 0)
{
    return nbrma_event{kind, from, lock_type, value, nullptr};
}

size_t count_of(const std::vector<std::string> &log, const std::string &line)
{
    size_t n = 0;
    for (const std::string &l : log)
        n += l == line;
    return n;
}

TEST(inbox, unknown_kinds_are_an_internal_error_and_leave_the_payload_alone)
{
    world w(2, true, 1);
    payload *pl = w.new_payload(0);
    for (int32_t kind : {-1, 8, 1000}) {
        nbrma_event e{kind, 1, 0, 1, pl};
        EXPECT_EQ(nbrma_inbox_deliver(w.at(0).inbox, w.at(0).engine, &e), NBRMA_ERR_INTERN);
    }
    EXPECT_TRUE(w.events().empty());
    std::free(pl);
}

TEST(inbox, each_kind_reaches_its_engine_event)
{
    auto deliver = [](world &w, nbrma_event e) {
        return nbrma_inbox_deliver(w.at(0).inbox, w.at(0).engine, &e);
    };
    {
        // a lock request is granted (a grant goes back to 1), its release
        // frees the lock, a second release is a protocol error
        world w(2, true, 7);
        w.at(0).depth = 1;      // as inside the glue's call
        EXPECT_EQ(deliver(w, event(NBRMA_EVENT_LOCK_REQUEST, 1, 1, NBRMA_LOCK_EXCLUSIVE)), NBRMA_OK);
        ASSERT_FALSE(w.events().empty());
        EXPECT_EQ(w.events().front().rfind("send 0->1 kind 0 value 1", 0), 0u) << w.events().front();
        EXPECT_EQ(deliver(w, event(NBRMA_EVENT_LOCK_RELEASE, 1, 1)), NBRMA_OK);
        EXPECT_EQ(deliver(w, event(NBRMA_EVENT_LOCK_RELEASE, 1, 1)), NBRMA_ERR_INTERN);
        w.at(0).depth = 0;
    }
    {
        world w(2, true, 7);
        EXPECT_EQ(deliver(w, event(NBRMA_EVENT_DONE, 1, 9)), NBRMA_ERR_INTERN);       // expected by nobody
    }
    {
        world w(2, true, 7);
        EXPECT_EQ(deliver(w, event(NBRMA_EVENT_GRANT, 1, 3)), NBRMA_OK);
        EXPECT_EQ(deliver(w, event(NBRMA_EVENT_FENCE_ARRIVAL, 1, nbrma_fence_token(1, 0, 1))), NBRMA_OK);
        EXPECT_EQ(deliver(w, event(NBRMA_EVENT_GRANT, 5, 3)), NBRMA_ERR_RANK);
        EXPECT_EQ(deliver(w, event(NBRMA_EVENT_LOCK_REQUEST, 1, 2, 7)), NBRMA_ERR_ARG);
        EXPECT_TRUE(w.events().empty());
    }
    {
        // a whole epoch is applied when its lock is granted
        world w(2, true, 7);
        w.at(0).depth = 1;
        nbrma_event whole{NBRMA_EVENT_LOCK_EPOCH, 1, NBRMA_LOCK_SHARED, 1, w.new_payload(0)};
        const uint64_t id = static_cast<payload *>(whole.payload)->id;
        EXPECT_EQ(deliver(w, whole), NBRMA_OK);
        EXPECT_EQ(count_of(w.events(), "apply whole of 1 at 0 id " + std::to_string(id)), 1u);
        w.at(0).depth = 0;
    }
    {
        // a pulled epoch that came early is applied under the exposure it
        // matches, and answered
        world w(2, true, 8);
        nbrma_event pulled{NBRMA_EVENT_ACCESS_EPOCH, 1, 0, 1, w.new_payload(1)};
        const uint64_t id = static_cast<payload *>(pulled.payload)->id;
        EXPECT_EQ(w.receive(0, pulled), NBRMA_OK);
        EXPECT_TRUE(w.events().empty());
        const int one = 1;
        EXPECT_EQ(w.call(w.at(0), [&](nbrma_engine *e) { return nbrma_ipost(e, &one, 1, 0, nullptr); }),
                  NBRMA_OK);
        EXPECT_EQ(count_of(w.events(), "apply pulled of 1 at 0 id " + std::to_string(id)), 1u);
        bool answered = false;
        for (const std::string &l : w.events())
            answered |= l.rfind("send 0->1 kind 7 value 1", 0) == 0;
        EXPECT_TRUE(answered);
    }
}

TEST(inbox, messages_kept_during_a_call_go_after_it_in_arrival_order)
{
    for (bool reversed : {false, true}) {
        world w(2, true, 3);
        proc &t = w.at(0);
        nbrma_event request = event(NBRMA_EVENT_LOCK_REQUEST, 1, 1, NBRMA_LOCK_EXCLUSIVE);
        nbrma_event release = event(NBRMA_EVENT_LOCK_RELEASE, 1, 1);
        t.depth = 1;    // an engine call of the glue's is in progress (I1)
        EXPECT_EQ(w.receive(0, reversed ? release : request), NBRMA_OK);
        EXPECT_EQ(w.receive(0, reversed ? request : release), NBRMA_OK);
        EXPECT_EQ(t.depth, 1);
        EXPECT_EQ(nbrma_inbox_kept(t.inbox), 2u);
        EXPECT_TRUE(w.events().empty()) << "nothing reached the engine";
        t.depth = 0;    // the outermost call returned (I2)
        if (!reversed) {
            EXPECT_EQ(nbrma_inbox_drain(t.inbox, t.engine, &t.depth), NBRMA_OK);
            EXPECT_EQ(nbrma_inbox_kept(t.inbox), 0u);
        } else {
            // a release before its request is a protocol error: it stops the
            // delivery, the request stays kept for the next drain
            EXPECT_EQ(nbrma_inbox_drain(t.inbox, t.engine, &t.depth), NBRMA_ERR_INTERN);
            EXPECT_EQ(nbrma_inbox_kept(t.inbox), 1u);
            EXPECT_EQ(nbrma_inbox_drain(t.inbox, t.engine, &t.depth), NBRMA_OK);
            EXPECT_EQ(nbrma_inbox_kept(t.inbox), 0u);
        }
        EXPECT_EQ(t.depth, 0);
    }
}

TEST(inbox, a_message_at_depth_zero_goes_at_once_and_then_the_kept_ones)
{
    world w(2, true, 5);
    proc &t = w.at(0);
    t.depth = 1;
    EXPECT_EQ(w.receive(0, event(NBRMA_EVENT_LOCK_RELEASE, 1, 1)), NBRMA_OK);
    t.depth = 0;
    // the request goes first, then the release kept before it: both succeed
    EXPECT_EQ(w.receive(0, event(NBRMA_EVENT_LOCK_REQUEST, 1, 1, NBRMA_LOCK_SHARED)), NBRMA_OK);
    EXPECT_EQ(nbrma_inbox_kept(t.inbox), 0u);
    EXPECT_EQ(t.depth, 0);
    // a failed delivery does not deliver the kept ones
    t.depth = 1;
    EXPECT_EQ(w.receive(0, event(NBRMA_EVENT_GRANT, 1, 1)), NBRMA_OK);
    t.depth = 0;
    EXPECT_EQ(w.receive(0, event(NBRMA_EVENT_DONE, 1, 4)), NBRMA_ERR_INTERN);
    EXPECT_EQ(nbrma_inbox_kept(t.inbox), 1u);
}

TEST(inbox, pulled_epochs_stay_until_their_peer_reports_them_applied)
{
    world w(3, true, 9);
    proc &o = w.at(0);
    payload *a = w.new_payload(1), *b = w.new_payload(1), *c = w.new_payload(2), *d = w.new_payload(2);
    const uint64_t a_id = a->id, b_id = b->id, c_id = c->id;
    ASSERT_EQ(nbrma_inbox_keep_pulled(o.inbox, 1, 1, a), NBRMA_OK);
    ASSERT_EQ(nbrma_inbox_keep_pulled(o.inbox, 2, 1, b), NBRMA_OK);
    ASSERT_EQ(nbrma_inbox_keep_pulled(o.inbox, 1, 2, c), NBRMA_OK);
    ASSERT_EQ(nbrma_inbox_keep_pulled(o.inbox, 2, 2, d), NBRMA_OK);
    nbrma_inbox_forget_pulled(o.inbox);         // d was not announced: the caller's
    std::free(d);
    EXPECT_EQ(nbrma_inbox_pulled(o.inbox), 3u);
    auto applied = [&](int from, uint64_t id, int rc = NBRMA_ERR_INTERN) {
        nbrma_event e = event(NBRMA_EVENT_ACCESS_APPLIED, from, id);
        // no epoch of mine waits for it: the engine refuses the report, after
        // the epoch was freed
        EXPECT_EQ(nbrma_inbox_deliver(o.inbox, o.engine, &e), rc);
    };
    applied(2, 1);      // b: the pair (peer, id) names it
    EXPECT_EQ(w.events(), (std::vector<std::string>{"free at 0 id " + std::to_string(b_id)}));
    applied(2, 2);      // forgotten: nothing
    applied(0, 1, NBRMA_ERR_RANK);      // another peer's id 1: nothing
    EXPECT_EQ(w.events().size(), 1u);
    EXPECT_EQ(nbrma_inbox_pulled(o.inbox), 2u);
    applied(1, 2);
    EXPECT_EQ(w.events().back(), "free at 0 id " + std::to_string(c_id));
    EXPECT_EQ(nbrma_inbox_pulled(o.inbox), 1u);
    nbrma_inbox_destroy(o.inbox);       // a with it
    o.inbox = nullptr;
    EXPECT_EQ(w.events().back(), "free at 0 id " + std::to_string(a_id));
    EXPECT_EQ(w.events().size(), 3u);
    nbrma_inbox *empty = nbrma_inbox_create([](void *, void *) {}, nullptr);
    nbrma_inbox_forget_pulled(empty);   // with none kept: nothing
    EXPECT_EQ(nbrma_inbox_pulled(empty), 0u);
    nbrma_inbox_destroy(empty);
}

TEST(inbox, create_needs_a_free_function_and_destroy_frees_what_is_kept)
{
    EXPECT_EQ(nbrma_inbox_create(nullptr, nullptr), nullptr);
    nbrma_inbox_destroy(nullptr);
    world w(2, true, 11);
    proc &t = w.at(0);
    t.depth = 1;
    nbrma_event whole{NBRMA_EVENT_LOCK_EPOCH, 1, NBRMA_LOCK_SHARED, 1, w.new_payload(0)};
    const uint64_t id = static_cast<payload *>(whole.payload)->id;
    EXPECT_EQ(w.receive(0, whole), NBRMA_OK);
    EXPECT_EQ(w.receive(0, event(NBRMA_EVENT_GRANT, 1, 1)), NBRMA_OK);
    nbrma_inbox_destroy(t.inbox);
    t.inbox = nullptr;
    EXPECT_EQ(w.events(), (std::vector<std::string>{"free at 0 id " + std::to_string(id)}));
    t.depth = 0;
}

// One random program, through the core's inbox or the model's.
std::vector<std::string> run_program(bool core, uint64_t seed, size_t *kept_during_calls)
{
    constexpr int n = 3;
    world w(n, core, seed);
    std::mt19937_64 &rng = w.rng();
    uintptr_t next_cookie = 1, next_record = 1;
    auto cookie = [&] { return reinterpret_cast<void *>(next_cookie++); };
    auto group = [&](int self, std::vector<int> &ranks) {
        ranks.clear();
        for (int r = 0; r < n; r++)
            if (r != self && rng() % 3 != 0)
                ranks.push_back(r);
        if (ranks.empty())
            ranks.push_back((self + 1) % n);
    };
    auto complete_one = [&](proc &p) {
        const size_t i = static_cast<size_t>(rng() % p.issued.size());
        const nbrma_op_ticket t = p.issued[i];
        p.issued.erase(p.issued.begin() + static_cast<long>(i));
        return w.call(p, [&](nbrma_engine *e) { return nbrma_op_completed(e, t); });
    };
    std::vector<int> ranks;
    for (int step = 0; step < 300; step++) {
        proc &p = w.at(static_cast<int>(rng() % n));
        const int action = static_cast<int>(rng() % 24);
        const int target = static_cast<int>(rng() % n);
        int rc = NBRMA_OK;
        switch (action) {
        case 0:
            rc = w.call(p, [&](nbrma_engine *e) {
                return nbrma_ilock(e, rng() % 2 ? NBRMA_LOCK_EXCLUSIVE : NBRMA_LOCK_SHARED, target, 0, cookie());
            });
            break;
        case 1:
            rc = w.call(p, [&](nbrma_engine *e) { return nbrma_iunlock(e, target, cookie()); });
            break;
        case 2:
            rc = w.call(p, [&](nbrma_engine *e) { return nbrma_ilock_all(e, 0, cookie()); });
            break;
        case 3:
            rc = w.call(p, [&](nbrma_engine *e) { return nbrma_iunlock_all(e, cookie()); });
            break;
        case 4:
            group(p.rank, ranks);
            rc = w.call(p, [&](nbrma_engine *e) {
                return nbrma_ipost(e, ranks.data(), static_cast<int>(ranks.size()), 0, cookie());
            });
            break;
        case 5:
            group(p.rank, ranks);
            rc = w.call(p, [&](nbrma_engine *e) {
                return nbrma_istart(e, ranks.data(), static_cast<int>(ranks.size()), 0, cookie());
            });
            break;
        case 6:
            rc = w.call(p, [&](nbrma_engine *e) { return nbrma_icomplete(e, cookie()); });
            break;
        case 7:
            rc = w.call(p, [&](nbrma_engine *e) { return nbrma_iwait(e, cookie()); });
            break;
        case 8:
            rc = w.call(p, [&](nbrma_engine *e) {
                return nbrma_ifence(e, rng() % 3 ? 0 : NBRMA_MODE_NOSUCCEED, cookie());
            });
            break;
        case 9:
        case 10:
            rc = w.call(p, [&](nbrma_engine *e) {
                return nbrma_op_record(e, target, reinterpret_cast<void *>(next_record++));
            });
            break;
        case 11:
            rc = w.call(p, [&](nbrma_engine *e) {
                return nbrma_iflush(e, rng() % 2 ? target : NBRMA_ALL_RANKS, 0, cookie());
            });
            break;
        case 12:
        case 13:
            if (!p.issued.empty())
                rc = complete_one(p);
            break;
        case 14:
        case 15:
            // an epoch opened, used and closed in a row: a lock epoch, or an
            // access epoch, which wait behind earlier ones closed (whole and
            // pulled epochs)
            if (target == p.rank)
                break;
            rc = w.call(p, [&](nbrma_engine *e) {
                return action == 14 ? nbrma_ilock(e, rng() % 2 ? NBRMA_LOCK_EXCLUSIVE : NBRMA_LOCK_SHARED,
                                                  target, 0, cookie())
                    : nbrma_istart(e, &target, 1, 0, cookie());
            });
            for (uint64_t k = rng() % 3; rc == NBRMA_OK && k < 3; k++)
                rc = w.call(p, [&](nbrma_engine *e) {
                    return nbrma_op_record(e, target, reinterpret_cast<void *>(next_record++));
                });
            if (rc == NBRMA_OK)
                rc = w.call(p, [&](nbrma_engine *e) {
                    return action == 14 ? nbrma_iunlock(e, target, cookie()) : nbrma_icomplete(e, cookie());
                });
            break;
        default:
            if (w.in_flight() > 0)
                w.deliver_queued(static_cast<size_t>(rng() % w.in_flight()));
            break;
        }
        w.log("step " + std::to_string(step) + " rank " + std::to_string(p.rank) + " action " +
              std::to_string(action) + " rc " + std::to_string(rc));
    }
    // the rest: every message delivered, every operation completed
    for (int round = 0; round < 100000; round++) {
        if (w.in_flight() > 0) {
            w.deliver_queued(static_cast<size_t>(rng() % w.in_flight()));
            continue;
        }
        bool any = false;
        for (int r = 0; r < n && !any; r++)
            if (!w.at(r).issued.empty()) {
                w.log("end complete rc " + std::to_string(complete_one(w.at(r))));
                any = true;
            }
        if (!any)
            break;
    }
    for (int r = 0; r < n; r++) {
        proc &p = w.at(r);
        w.log("end " + std::to_string(r) + " pending " + std::to_string(nbrma_has_pending_epochs(p.engine)) +
              " pulled " + std::to_string(core ? nbrma_inbox_pulled(p.inbox) : p.old_pulled_out.size()) +
              " kept " + std::to_string(core ? nbrma_inbox_kept(p.inbox) : p.old_inbox.size()));
    }
    *kept_during_calls += w.kept_during_calls_;
    return w.events();
}

TEST(inbox, random_programs_match_the_glue_s_former_inbox)
{
    size_t kept = 0, kept_model = 0, lines = 0, applied = 0, freed = 0, whole = 0, pulled = 0;
    for (uint64_t seed = 1; seed <= 500; seed++) {
        const std::vector<std::string> core = run_program(true, seed, &kept);
        const std::vector<std::string> model = run_program(false, seed, &kept_model);
        ASSERT_EQ(core.size(), model.size()) << "seed " << seed;
        for (size_t i = 0; i < core.size(); i++) {
            ASSERT_EQ(core[i], model[i]) << "seed " << seed << " line " << i;
            applied += core[i].rfind("apply", 0) == 0;
            whole += core[i].rfind("apply whole", 0) == 0;
            pulled += core[i].rfind("apply pulled", 0) == 0;
            freed += core[i].rfind("free", 0) == 0;
        }
        lines += core.size();
    }
    EXPECT_EQ(kept, kept_model);
    EXPECT_GT(kept, 200u) << "messages must arrive during engine calls";
    EXPECT_GT(whole, 50u) << "whole lock epochs must be applied";
    EXPECT_GT(pulled, 50u) << "pulled epochs must be applied";
    EXPECT_GT(freed, 50u) << "pulled epochs must be freed";
    EXPECT_GT(lines, 50000u);
}

} // namespace
