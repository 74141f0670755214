#include "sim_world.hpp"

#include <cstring>
#include <sstream>

namespace nbrma_sim {

const char *msg_kind_name(msg_kind kind)
{
    switch (kind) {
    case msg_kind::grant:
        return "grant";
    case msg_kind::done:
        return "done";
    case msg_kind::lock_request:
        return "lock_request";
    case msg_kind::lock_release:
        return "lock_release";
    case msg_kind::fence_arrival:
        return "fence_arrival";
    case msg_kind::op:
        return "op";
    case msg_kind::op_local:
        return "op_local";
    case msg_kind::op_ack:
        return "op_ack";
    case msg_kind::lock_epoch:
        return "lock_epoch";
    case msg_kind::access_epoch:
        return "access_epoch";
    case msg_kind::access_applied:
        break;
    }
    return "access_applied";
}

world::world(int nprocs, bool grants_as_writes, bool ordered_notifications, bool whole_lock_epochs,
             bool lock_words, bool pulled_access_epochs)
    : nprocs_(nprocs), grants_as_writes_(grants_as_writes), ordered_notifications_(ordered_notifications),
      whole_lock_epochs_(whole_lock_epochs), lock_words_(lock_words), pulled_access_epochs_(pulled_access_epochs),
      words_(static_cast<std::size_t>(nprocs), 0),
      ctx_(static_cast<std::size_t>(nprocs)),
      engines_(static_cast<std::size_t>(nprocs), nullptr), op_serials_(static_cast<std::size_t>(nprocs), 0)
{
    for (int r = 0; r < nprocs; ++r) {
        ctx_[static_cast<std::size_t>(r)] = process_ctx{this, r};
        nbrma_transport t{};
        t.ctx = &ctx_[static_cast<std::size_t>(r)];
        t.send_grant = t_send_grant;
        t.send_done = t_send_done;
        t.send_lock_request = t_send_lock_request;
        t.send_lock_release = t_send_lock_release;
        t.send_fence_arrival = t_send_fence_arrival;
        t.issue_op = t_issue_op;
        t.request_complete = t_request_complete;
        t.pack_lock_epoch = t_pack_lock_epoch;
        t.send_lock_epoch = t_send_lock_epoch;
        t.apply_lock_epoch = t_apply_lock_epoch;
        t.defer_lock = t_defer_lock;
        t.pack_access_epoch = t_pack_access_epoch;
        t.send_access_epoch = t_send_access_epoch;
        t.apply_access_epoch = t_apply_access_epoch;
        t.send_access_applied = t_send_access_applied;
        t.try_lock = t_try_lock;
        t.unlock = t_unlock;
        if (nbrma_engine_create(r, nprocs, &t, &engines_[static_cast<std::size_t>(r)]) != NBRMA_OK)
            fail("nbrma_engine_create failed");
        else if (nbrma_set_ordered_notifications(e(r), ordered_notifications) != NBRMA_OK)
            fail("nbrma_set_ordered_notifications failed");
    }
}

world::~world()
{
    for (nbrma_engine *engine : engines_)
        nbrma_engine_free(engine);
}

request *world::new_request(int owner, std::string what)
{
    requests_.emplace_back();
    request &r = requests_.back();
    r.owner = owner;
    r.what = std::move(what);
    return &r;
}

int world::record_op(int origin, int target, int tag, sim_op **op_out)
{
    std::unique_ptr<sim_op> op(new sim_op);
    op->origin = origin;
    op->target = target;
    op->tag = tag;
    op->serial = ++op_serials_[static_cast<std::size_t>(origin)];
    sim_op *raw = op.get();
    ops_.push_back(std::move(op));
    if (op_out)
        *op_out = raw;
    return nbrma_op_record(e(origin), target, raw);
}

void world::post(msg_kind kind, int from, int to, std::uint64_t value, int lock_type, sim_op *op, void *payload)
{
    in_flight_.push_back(message{kind, from, to, value, lock_type, op, ++posted_, payload});
}

int world::t_send_grant(void *ctx, int peer, std::uint64_t granted)
{
    process_ctx *p = static_cast<process_ctx *>(ctx);
    if (peer == p->rank)
        p->w->fail("engine sent a grant to itself through the transport");
    p->w->post(msg_kind::grant, p->rank, peer, granted);
    return NBRMA_OK;
}

int world::t_send_done(void *ctx, int peer, std::uint64_t id)
{
    process_ctx *p = static_cast<process_ctx *>(ctx);
    if (peer == p->rank)
        p->w->fail("engine sent a done to itself through the transport");
    p->w->post(msg_kind::done, p->rank, peer, id);
    return NBRMA_OK;
}

int world::t_send_lock_request(void *ctx, int peer, std::uint64_t id, int lock_type)
{
    process_ctx *p = static_cast<process_ctx *>(ctx);
    p->w->post(msg_kind::lock_request, p->rank, peer, id, lock_type);
    return NBRMA_OK;
}

int world::t_send_lock_release(void *ctx, int peer, std::uint64_t id)
{
    process_ctx *p = static_cast<process_ctx *>(ctx);
    p->w->post(msg_kind::lock_release, p->rank, peer, id);
    return NBRMA_OK;
}

int world::t_send_fence_arrival(void *ctx, int peer, std::uint64_t seq)
{
    process_ctx *p = static_cast<process_ctx *>(ctx);
    ++p->w->fence_arrivals_sent_;
    p->w->post(msg_kind::fence_arrival, p->rank, peer, seq);
    return NBRMA_OK;
}

int world::t_issue_op(void *ctx, int target, void *record, nbrma_op_ticket ticket)
{
    process_ctx *p = static_cast<process_ctx *>(ctx);
    sim_op *op = static_cast<sim_op *>(record);
    if (op->issued || op->target != target || op->origin != p->rank)
        p->w->fail("operation issued twice or toward the wrong target");
    const nbrma::epoch *ep = static_cast<const nbrma::epoch *>(ticket.epoch);
    if (ep->phase != nbrma::epoch_phase::active)
        p->w->fail("operation issued from an epoch that is not active");
    const nbrma::target_slot &slot = ep->slots[ticket.slot];
    if (!slot.granted)
        p->w->fail("operation issued toward a target that did not grant access");
    op->issued = true;
    op->ticket = ticket;
    op->kind = ep->kind;
    op->match_id = slot.match_id;
    op->fence_seq = ep->fence_seq;
    op->epoch_seq = ep->seq;
    op->exclusive = ep->exclusive;
    op->nocheck = ep->nocheck;
    p->w->post(msg_kind::op, p->rank, target, 0, 0, op);
    if (p->w->local_reports_)
        p->w->post(msg_kind::op_local, p->rank, p->rank, 0, 0, op);
    return NBRMA_OK;
}

int world::t_defer_lock(void *ctx, int peer, int lock_type, void *const *records, std::size_t n,
                        int *defer)
{
    process_ctx *p = static_cast<process_ctx *>(ctx);
    const world &w = *p->w;
    (void) lock_type;
    for (std::size_t i = 0; i < n; ++i)
        if (static_cast<sim_op *>(records[i])->issued)
            p->w->fail("a lazy lock epoch's operation was issued before its lock");
    if (w.lock_words_ && word_reaches(p->rank, peer))
        *defer = -1;  // never toward a lock word
    else
        *defer = w.lazy_locks_ && w.whole_lock_epochs_ && peer != p->rank && n < w.lazy_refuse_at_;
    return NBRMA_OK;
}

int world::t_pack_lock_epoch(void *ctx, int peer, int lock_type, void *const *records, std::size_t n,
                             void **payload)
{
    process_ctx *p = static_cast<process_ctx *>(ctx);
    *payload = nullptr;
    if (!p->w->whole_lock_epochs_)
        return NBRMA_OK;
    whole_epoch *whole = new whole_epoch;
    for (std::size_t i = 0; i < n; ++i) {
        sim_op *op = static_cast<sim_op *>(records[i]);
        if (op->issued || op->target != peer || op->origin != p->rank)
            p->w->fail("operation packed twice or toward the wrong target");
        op->issued = true;
        op->local_done = true;  // the payload holds a copy of the data
        op->kind = nbrma::epoch_kind::lock;
        op->exclusive = lock_type == NBRMA_LOCK_EXCLUSIVE;
        op->nocheck = false;
        whole->ops.push_back(op);
    }
    *payload = whole;
    ++p->w->whole_epochs_sent_;
    return NBRMA_OK;
}

int world::t_send_lock_epoch(void *ctx, int peer, std::uint64_t id, int lock_type, void *payload)
{
    process_ctx *p = static_cast<process_ctx *>(ctx);
    if (peer == p->rank)
        p->w->fail("engine sent a whole lock epoch to itself through the transport");
    p->w->post(msg_kind::lock_epoch, p->rank, peer, id, lock_type, nullptr, payload);
    return NBRMA_OK;
}

// Performed at the grant, under the lock (perform() checks that the origin
// holds it); complete as soon as the grant, sent next, reaches the origin.
int world::t_apply_lock_epoch(void *ctx, int origin, void *payload)
{
    process_ctx *p = static_cast<process_ctx *>(ctx);
    std::unique_ptr<whole_epoch> whole(static_cast<whole_epoch *>(payload));
    if (p->w->refuse_whole_epochs_)
        return NBRMA_ERR_TRANSPORT_BASE;
    for (sim_op *op : whole->ops) {
        if (op->origin != origin || op->target != p->rank)
            p->w->fail("whole lock epoch applied at the wrong process");
        p->w->perform(*op);
        op->acked = true;
    }
    return NBRMA_OK;
}

// The target performs them, so they are issued now but neither locally nor
// remotely complete until the target reports them applied.
int world::t_pack_access_epoch(void *ctx, int peer, void *const *records, std::size_t n, void **payload)
{
    process_ctx *p = static_cast<process_ctx *>(ctx);
    *payload = nullptr;
    if (!p->w->pulled_access_epochs_ || !word_reaches(p->rank, peer))
        return NBRMA_OK;
    whole_epoch *whole = new whole_epoch;
    for (std::size_t i = 0; i < n; ++i) {
        sim_op *op = static_cast<sim_op *>(records[i]);
        if (op->issued || op->target != peer || op->origin != p->rank)
            p->w->fail("operation pulled twice or toward the wrong target");
        op->issued = true;
        op->kind = nbrma::epoch_kind::access;
        whole->ops.push_back(op);
    }
    *payload = whole;
    ++p->w->pulled_epochs_sent_;
    return NBRMA_OK;
}

int world::t_send_access_epoch(void *ctx, int peer, std::uint64_t id, void *payload)
{
    process_ctx *p = static_cast<process_ctx *>(ctx);
    if (peer == p->rank)
        p->w->fail("engine sent a pulled access epoch to itself");
    // what t_issue_op would have noted: the epoch the operations belong to
    std::uint64_t epoch_seq = 0;
    for (const nbrma::epoch *e : p->w->impl(p->rank).active_epochs())
        for (const nbrma::target_slot &slot : e->slots)
            if (e->kind == nbrma::epoch_kind::access && slot.rank == peer && slot.match_id == id)
                epoch_seq = e->seq;
    if (epoch_seq == 0)
        p->w->fail("pulled access epoch sent for no active access epoch");
    for (sim_op *op : static_cast<whole_epoch *>(payload)->ops) {
        op->match_id = id;
        op->epoch_seq = epoch_seq;
    }
    p->w->post(msg_kind::access_epoch, p->rank, peer, id, 0, nullptr, payload);
    return NBRMA_OK;
}

// perform() checks that the exposure expecting this access id is active.
int world::t_apply_access_epoch(void *ctx, int origin, void *payload)
{
    process_ctx *p = static_cast<process_ctx *>(ctx);
    std::unique_ptr<whole_epoch> whole(static_cast<whole_epoch *>(payload));
    for (sim_op *op : whole->ops) {
        if (op->origin != origin || op->target != p->rank)
            p->w->fail("pulled access epoch applied at the wrong process");
        p->w->perform(*op);
        op->local_done = true;
        op->acked = true;
    }
    return NBRMA_OK;
}

int world::t_send_access_applied(void *ctx, int origin, std::uint64_t id)
{
    process_ctx *p = static_cast<process_ctx *>(ctx);
    p->w->post(msg_kind::access_applied, p->rank, origin, id);
    return NBRMA_OK;
}

void world::t_request_complete(void *ctx, void *cookie, int status)
{
    process_ctx *p = static_cast<process_ctx *>(ctx);
    request *r = static_cast<request *>(cookie);
    if (status != NBRMA_OK)
        p->w->fail("request completed with an error");
    if (r->owner != p->rank)
        p->w->fail("request completed by the wrong process");
    if (++r->completions != 1) {
        p->w->fail("request completed twice: " + r->what);
        return;
    }
    if (r->check_on_completion) {
        std::string violation = r->check_on_completion();
        if (!violation.empty())
            p->w->fail(violation);
    }
    if (p->w->on_request_complete)
        p->w->on_request_complete(*r);
}

// The invariant "no operation is performed outside an active, matched epoch",
// checked at the target at the moment the operation lands.
void world::perform(sim_op &op)
{
    std::ostringstream why;
    nbrma::engine &target = impl(op.target);
    switch (op.kind) {
    case nbrma::epoch_kind::access: {
        const nbrma::epoch *exposure = target.exposure_expecting(op.origin, op.match_id);
        if (!exposure) {
            why << "PSCW op " << op.origin << "->" << op.target << " (access id " << op.match_id
                << ") performed outside a matching active exposure";
            break;
        }
        if (on_pscw_performed)
            on_pscw_performed(op, *exposure);
        break;
    }
    case nbrma::epoch_kind::lock:
    case nbrma::epoch_kind::lock_all:
        if (op.nocheck)
            break;
        // through the word: it is held (by whom, the word does not say)
        if (lock_words_ && word_reaches(op.origin, op.target)) {
            if (words_[static_cast<std::size_t>(op.target)] == 0)
                why << "passive op " << op.origin << "->" << op.target << " performed with the lock word free";
            break;
        }
        if (!target.locks().holds(op.origin))
            why << "passive op " << op.origin << "->" << op.target << " performed without holding the lock";
        else if (op.exclusive && target.locks().exclusive_holder() != op.origin)
            why << "exclusive op " << op.origin << "->" << op.target << " performed under a shared lock";
        break;
    case nbrma::epoch_kind::fence:
        // The target must have called the fence that opened the epoch (and
        // completed what came before), and not have passed the next barrier.
        if (target.fences_reached() < op.fence_seq || target.fence_barriers_passed() > op.fence_seq)
            why << "fence op " << op.origin << "->" << op.target << " of fence epoch " << op.fence_seq
                << " performed while the target reached fence " << target.fences_reached()
                << " and passed barrier " << target.fence_barriers_passed();
        break;
    case nbrma::epoch_kind::exposure:
        why << "operation issued from an exposure epoch";
        break;
    }
    if (!why.str().empty())
        fail(why.str());
    if (op.performed)
        fail("operation performed twice");
    op.performed = true;
}

void world::write_grant(int from, int to, std::uint64_t value)
{
    void *base = nullptr;
    std::size_t bytes = 0;
    if (nbrma_counter_memory(e(to), &base, &bytes) != NBRMA_OK) {
        fail("nbrma_counter_memory failed");
        return;
    }
    const std::size_t offset = nbrma_granted_counter_offset(from);
    if (offset + sizeof(std::uint64_t) > bytes) {
        fail("granted counter offset outside the counter memory");
        return;
    }
    std::uint64_t *slot = reinterpret_cast<std::uint64_t *>(static_cast<char *>(base) + offset);
    if (__atomic_load_n(slot, __ATOMIC_ACQUIRE) < value)
        __atomic_store_n(slot, value, __ATOMIC_RELEASE);
}

void world::check(int rc, const message &m)
{
    if (rc != NBRMA_OK) {
        std::ostringstream why;
        why << "engine " << m.to << " rejected " << msg_kind_name(m.kind) << " from " << m.from
            << " (value " << m.value << "): " << nbrma_strerror(rc);
        fail(why.str());
    }
}

bool world::deliverable(std::size_t index) const
{
    const message &m = in_flight_[index];
    if (!ordered_notifications_ || (m.kind != msg_kind::done && m.kind != msg_kind::lock_release))
        return true;
    for (const message &other : in_flight_)
        if (other.kind == msg_kind::op && other.from == m.from && other.to == m.to && other.seq < m.seq)
            return false;
    return true;
}

void world::deliver(std::size_t index)
{
    if (!deliverable(index))
        fail("the test broke the transport's ordering promise");
    const message m = in_flight_[index];
    in_flight_[index] = in_flight_.back();
    in_flight_.pop_back();
    nbrma_engine *to = e(m.to);
    switch (m.kind) {
    case msg_kind::grant:
        if (grants_as_writes_)
            write_grant(m.from, m.to, m.value);
        else
            check(nbrma_on_grant(to, m.from, m.value), m);
        break;
    case msg_kind::done:
        check(nbrma_on_done(to, m.from, m.value), m);
        break;
    case msg_kind::lock_request:
        check(nbrma_on_lock_request(to, m.from, m.value, m.lock_type), m);
        break;
    case msg_kind::lock_release:
        check(nbrma_on_lock_release(to, m.from, m.value), m);
        break;
    case msg_kind::lock_epoch:
        check(nbrma_on_lock_epoch(to, m.from, m.value, m.lock_type, m.payload), m);
        break;
    case msg_kind::access_epoch:
        check(nbrma_on_access_epoch(to, m.from, m.value, m.payload), m);
        break;
    case msg_kind::access_applied:
        check(nbrma_on_access_applied(to, m.from, m.value), m);
        break;
    case msg_kind::fence_arrival:
        check(nbrma_on_fence_arrival(to, m.from, m.value), m);
        break;
    case msg_kind::op:
        perform(*m.op);
        post(msg_kind::op_ack, m.to, m.from, 0, 0, m.op);
        break;
    case msg_kind::op_local:
        if (!m.op->local_done)
            report_local(*m.op);
        break;
    case msg_kind::op_ack:
        // A transport sees local completion no later than remote completion:
        // a local report still due goes with it, in one call, as the glue's
        // sweep reports it.
        const bool local_due = local_reports_ && !m.op->local_done;
        m.op->acked = true;
        m.op->local_done = true;
        check(local_due ? nbrma_op_completed_with_local(to, m.op->ticket)
                        : nbrma_op_completed(to, m.op->ticket),
              m);
        break;
    }
}

std::size_t world::deliver_all()
{
    std::size_t delivered = 0;
    for (;;) {
        while (!in_flight_.empty()) {
            // FIFO: the oldest message first keeps unit tests easy to follow.
            message m = in_flight_.front();
            in_flight_.erase(in_flight_.begin());
            in_flight_.push_back(m);
            deliver(in_flight_.size() - 1);
            ++delivered;
        }
        // Grants written into counter memory are only seen by a sweep.
        for (int r = 0; r < nprocs_; ++r)
            progress(r);
        if (in_flight_.empty())
            return delivered;
    }
}

void world::enable_local_reports()
{
    local_reports_ = true;
    for (int r = 0; r < nprocs_; ++r)
        if (nbrma_set_local_completion_reports(e(r), 1) != NBRMA_OK)
            fail("nbrma_set_local_completion_reports failed");
}

void world::report_local(sim_op &op)
{
    op.local_done = true;
    if (nbrma_op_local_completed(e(op.origin), op.ticket) != NBRMA_OK)
        fail("nbrma_op_local_completed rejected a valid report");
}

std::size_t world::drain()
{
    std::size_t delivered = 0;
    while (!in_flight_.empty()) {
        deliver(in_flight_.size() - 1);
        ++delivered;
    }
    return delivered;
}

bool world::deliver_first(const std::function<bool(const message &)> &pred)
{
    for (std::size_t i = 0; i < in_flight_.size(); ++i) {
        if (pred(in_flight_[i])) {
            message m = in_flight_[i];
            in_flight_.erase(in_flight_.begin() + static_cast<std::ptrdiff_t>(i));
            in_flight_.push_back(m);
            deliver(in_flight_.size() - 1);
            return true;
        }
    }
    return false;
}

std::size_t world::count_in_flight(const std::function<bool(const message &)> &pred) const
{
    std::size_t n = 0;
    for (const message &m : in_flight_)
        n += pred(m) ? 1 : 0;
    return n;
}

int world::t_try_lock(void *ctx, int peer, int lock_type, int *state)
{
    auto *c = static_cast<process_ctx *>(ctx);
    world &w = *c->w;
    if (!w.lock_words_ || !word_reaches(c->rank, peer)) {
        *state = NBRMA_LOCK_BY_MESSAGE;
        return NBRMA_OK;
    }
    long &word = w.words_[static_cast<std::size_t>(peer)];
    const bool exclusive = lock_type == NBRMA_LOCK_EXCLUSIVE;
    if (exclusive ? word != 0 : word < 0) {
        *state = NBRMA_LOCK_BUSY;
        return NBRMA_OK;
    }
    word = exclusive ? -1 : word + 1;
    *state = NBRMA_LOCK_TAKEN;
    return NBRMA_OK;
}

int world::t_unlock(void *ctx, int peer, int lock_type)
{
    auto *c = static_cast<process_ctx *>(ctx);
    world &w = *c->w;
    long &word = w.words_[static_cast<std::size_t>(peer)];
    if (!w.lock_words_ || !word_reaches(c->rank, peer))
        w.fail("unlock of a lock word that the origin does not reach");
    else if (lock_type == NBRMA_LOCK_EXCLUSIVE ? word != -1 : word <= 0)
        w.fail("P" + std::to_string(c->rank) + " unlocks P" + std::to_string(peer) + "'s word, which it does not hold");
    else
        word = lock_type == NBRMA_LOCK_EXCLUSIVE ? 0 : word - 1;
    return NBRMA_OK;
}

int world::progress(int rank)
{
    int made = 0;
    if (nbrma_progress(e(rank), &made) != NBRMA_OK)
        fail("nbrma_progress failed");
    return made;
}

}  // namespace nbrma_sim
