// The C face of the engine: argument checks that need no engine, and the
// guarantee that no exception crosses into C.
#include <atomic>
#include <cstddef>
#include <new>

#include "nbrma_core.h"
#include "nbrma/engine.hpp"

struct nbrma_engine {
    nbrma::engine impl;
    nbrma_engine(int my_rank, int nprocs, const nbrma_transport &transport)
        : impl(my_rank, nprocs, transport)
    {
    }

    // The block of the last engine freed is kept for the next: an engine is
    // larger than glibc's per-thread cache takes (1,032 bytes), and malloc
    // sorted its bins for it, about 1,000 instructions of every window's
    // creation. One block at most, taken and given with one exchange, so
    // that windows made in several threads at once stay safe.
    static void *operator new(std::size_t bytes)
    {
        void *block = spare_block.exchange(nullptr);
        return block ? block : ::operator new(bytes);
    }
    static void operator delete(void *block)
    {
        if (block)
            ::operator delete(spare_block.exchange(block));
    }

  private:
    static std::atomic<void *> spare_block;
};

std::atomic<void *> nbrma_engine::spare_block{nullptr};

nbrma::engine &nbrma::engine_of(nbrma_engine *handle)
{
    return handle->impl;
}

namespace {

template <class Call> int guarded(nbrma_engine *engine, Call &&call) noexcept
{
    if (!engine)
        return NBRMA_ERR_ARG;
    try {
        return call(engine->impl);
    } catch (const std::bad_alloc &) {
        return NBRMA_ERR_NOMEM;
    } catch (...) {
        return NBRMA_ERR_INTERN;
    }
}

bool transport_complete(const nbrma_transport *t)
{
    return t && t->send_grant && t->send_done && t->send_lock_request && t->send_lock_release &&
        t->send_fence_arrival && t->issue_op && t->request_complete;
}

}  // namespace

extern "C" {

int nbrma_engine_create(int my_rank, int nprocs, const nbrma_transport *transport,
                        nbrma_engine **engine_out)
{
    if (!engine_out || !transport_complete(transport) || nprocs <= 0)
        return NBRMA_ERR_ARG;
    if (my_rank < 0 || my_rank >= nprocs)
        return NBRMA_ERR_RANK;
    *engine_out = nullptr;
    try {
        *engine_out = new nbrma_engine(my_rank, nprocs, *transport);
        return NBRMA_OK;
    } catch (const std::bad_alloc &) {
        return NBRMA_ERR_NOMEM;
    } catch (...) {
        return NBRMA_ERR_INTERN;
    }
}

void nbrma_engine_free(nbrma_engine *engine)
{
    delete engine;
}

int nbrma_set_reorder_flags(nbrma_engine *engine, unsigned flags)
{
    return guarded(engine, [&](nbrma::engine &e) { return e.set_reorder_flags(flags); });
}

int nbrma_set_ordered_notifications(nbrma_engine *engine, int enabled)
{
    return guarded(engine, [&](nbrma::engine &e) { return e.set_ordered_notifications(enabled != 0); });
}

int nbrma_ifence(nbrma_engine *engine, int assert_bits, void *cookie)
{
    return guarded(engine, [&](nbrma::engine &e) { return e.ifence(assert_bits, cookie); });
}

int nbrma_ipost(nbrma_engine *engine, const int *ranks, int nranks, int assert_bits, void *cookie)
{
    return guarded(engine, [&](nbrma::engine &e) { return e.ipost(ranks, nranks, assert_bits, cookie); });
}

int nbrma_istart(nbrma_engine *engine, const int *ranks, int nranks, int assert_bits, void *cookie)
{
    return guarded(engine, [&](nbrma::engine &e) { return e.istart(ranks, nranks, assert_bits, cookie); });
}

int nbrma_icomplete(nbrma_engine *engine, void *cookie)
{
    return guarded(engine, [&](nbrma::engine &e) { return e.icomplete(cookie); });
}

int nbrma_iwait(nbrma_engine *engine, void *cookie)
{
    return guarded(engine, [&](nbrma::engine &e) { return e.iwait(cookie); });
}

int nbrma_test(nbrma_engine *engine, int *flag)
{
    return guarded(engine, [&](nbrma::engine &e) { return e.test(flag); });
}

int nbrma_ilock(nbrma_engine *engine, int lock_type, int rank, int assert_bits, void *cookie)
{
    return guarded(engine, [&](nbrma::engine &e) { return e.ilock(lock_type, rank, assert_bits, cookie); });
}

int nbrma_iunlock(nbrma_engine *engine, int rank, void *cookie)
{
    return guarded(engine, [&](nbrma::engine &e) { return e.iunlock(rank, cookie); });
}

int nbrma_ilock_all(nbrma_engine *engine, int assert_bits, void *cookie)
{
    return guarded(engine, [&](nbrma::engine &e) { return e.ilock_all(assert_bits, cookie); });
}

int nbrma_iunlock_all(nbrma_engine *engine, void *cookie)
{
    return guarded(engine, [&](nbrma::engine &e) { return e.iunlock_all(cookie); });
}

int nbrma_op_record(nbrma_engine *engine, int target, void *record)
{
    return guarded(engine, [&](nbrma::engine &e) { return e.op_record(target, record); });
}

int nbrma_op_issue_direct(nbrma_engine *engine, int target, uint64_t count, nbrma_op_ticket *ticket,
                          int *issued)
{
    if (!ticket || !issued || count == 0)
        return NBRMA_ERR_ARG;
    return guarded(engine, [&](nbrma::engine &e) {
        bool now = false;
        const int rc = e.op_issue_direct(target, count, *ticket, now);
        *issued = now;
        return rc;
    });
}

int nbrma_op_issue_first(nbrma_engine *engine, int target, nbrma_op_ticket *ticket, int *issued)
{
    if (!ticket || !issued)
        return NBRMA_ERR_ARG;
    return guarded(engine, [&](nbrma::engine &e) {
        bool now = false;
        const int rc = e.op_issue_first(target, *ticket, now);
        *issued = now;
        return rc;
    });
}

int nbrma_op_completed(nbrma_engine *engine, nbrma_op_ticket ticket)
{
    return guarded(engine, [&](nbrma::engine &e) { return e.op_completed(ticket); });
}

int nbrma_op_performed(nbrma_engine *engine, nbrma_op_ticket ticket)
{
    return guarded(engine, [&](nbrma::engine &e) { return e.op_performed(ticket); });
}

int nbrma_op_epoch_ends_by_notice(const nbrma_engine *engine, nbrma_op_ticket ticket)
{
    return engine != nullptr && engine->impl.ends_by_notice(ticket) ? 1 : 0;
}

int nbrma_op_local_completed(nbrma_engine *engine, nbrma_op_ticket ticket)
{
    return guarded(engine, [&](nbrma::engine &e) { return e.op_local_completed(ticket); });
}

int nbrma_op_completed_with_local(nbrma_engine *engine, nbrma_op_ticket ticket)
{
    return guarded(engine, [&](nbrma::engine &e) { return e.op_completed(ticket, true); });
}

int nbrma_local_flush_waiting(const nbrma_engine *engine)
{
    return engine != nullptr && engine->impl.local_flush_waiting() ? 1 : 0;
}

int nbrma_set_local_completion_reports(nbrma_engine *engine, int enabled)
{
    return guarded(engine, [&](nbrma::engine &e) { return e.set_local_completion_reports(enabled != 0); });
}

int nbrma_iflush(nbrma_engine *engine, int rank, int local_only, void *cookie)
{
    return guarded(engine, [&](nbrma::engine &e) { return e.iflush(rank, local_only, cookie); });
}

int nbrma_flush_ready(const nbrma_engine *engine, int rank, int local_only, int *ready)
{
    if (engine == nullptr || ready == nullptr)
        return NBRMA_ERR_ARG;
    bool is_ready = false;
    const int rc = engine->impl.flush_ready(rank, local_only, is_ready);
    *ready = is_ready ? 1 : 0;
    return rc;
}

int nbrma_op_in_stream(const nbrma_engine *engine, int target, uint64_t max)
{
    return engine != nullptr && engine->impl.in_stream(target, max) ? 1 : 0;
}

int nbrma_on_grant(nbrma_engine *engine, int from, uint64_t granted)
{
    return guarded(engine, [&](nbrma::engine &e) { return e.on_grant(from, granted); });
}

int nbrma_on_done(nbrma_engine *engine, int from, uint64_t access_id)
{
    return guarded(engine, [&](nbrma::engine &e) { return e.on_done(from, access_id); });
}

int nbrma_on_lock_request(nbrma_engine *engine, int from, uint64_t access_id, int lock_type)
{
    return guarded(engine, [&](nbrma::engine &e) { return e.on_lock_request(from, access_id, lock_type); });
}

int nbrma_on_lock_epoch(nbrma_engine *engine, int from, uint64_t access_id, int lock_type,
                        void *payload)
{
    if (!payload)
        return NBRMA_ERR_ARG;
    return guarded(engine,
                   [&](nbrma::engine &e) { return e.on_lock_request(from, access_id, lock_type, payload); });
}

int nbrma_on_lock_release(nbrma_engine *engine, int from, uint64_t access_id)
{
    return guarded(engine, [&](nbrma::engine &e) { return e.on_lock_release(from, access_id); });
}

int nbrma_on_access_epoch(nbrma_engine *engine, int from, uint64_t access_id, void *payload)
{
    if (!payload)
        return NBRMA_ERR_ARG;
    return guarded(engine, [&](nbrma::engine &e) { return e.on_access_epoch(from, access_id, payload); });
}

int nbrma_on_access_applied(nbrma_engine *engine, int from, uint64_t access_id)
{
    return guarded(engine, [&](nbrma::engine &e) { return e.on_access_applied(from, access_id); });
}

int nbrma_on_fence_arrival(nbrma_engine *engine, int from, uint64_t token)
{
    return guarded(engine, [&](nbrma::engine &e) { return e.on_fence_arrival(from, token); });
}

int nbrma_progress(nbrma_engine *engine, int *made_progress)
{
    return guarded(engine, [&](nbrma::engine &e) { return e.progress(made_progress); });
}

int nbrma_has_pending_epochs(const nbrma_engine *engine)
{
    return engine && engine->impl.has_pending_epochs() ? 1 : 0;
}

int nbrma_has_open_epochs(const nbrma_engine *engine)
{
    return engine && engine->impl.has_open_epochs() ? 1 : 0;
}

int nbrma_fence_grants_every_rank(const nbrma_engine *engine)
{
    return engine && engine->impl.fence_grants_every_rank() ? 1 : 0;
}

int nbrma_epoch_counts(const nbrma_engine *engine, size_t *deferred, size_t *active)
{
    if (!engine || !deferred || !active)
        return NBRMA_ERR_ARG;
    *deferred = engine->impl.deferred_count();
    *active = engine->impl.active_count();
    return NBRMA_OK;
}

int nbrma_lock_attempts_pending(const nbrma_engine *engine)
{
    return engine && engine->impl.lock_attempts_pending() ? 1 : 0;
}

int nbrma_counter_memory(nbrma_engine *engine, void **base, size_t *bytes)
{
    if (!base || !bytes)
        return NBRMA_ERR_ARG;
    return guarded(engine, [&](nbrma::engine &e) {
        *base = e.counter_memory();
        *bytes = e.counter_memory_bytes();
        return NBRMA_OK;
    });
}

size_t nbrma_granted_counter_offset(int writer_rank)
{
    return nbrma::granted_counter_offset(writer_rank);
}

const char *nbrma_strerror(int code)
{
    switch (code) {
    case NBRMA_OK:
        return "success";
    case NBRMA_ERR_SYNC:
        return "wrong synchronization of RMA calls";
    case NBRMA_ERR_ARG:
        return "invalid argument";
    case NBRMA_ERR_RANK:
        return "invalid rank";
    case NBRMA_ERR_NOMEM:
        return "out of memory";
    case NBRMA_ERR_INTERN:
        return "internal error in the nonblocking RMA engine";
    default:
        return code >= NBRMA_ERR_TRANSPORT_BASE ? "transport error" : "unknown error";
    }
}

}  // extern "C"
