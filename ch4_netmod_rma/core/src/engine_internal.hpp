// Shared by the engine's source files only (the .cpp files of src/; neither the glue nor
// the tests include it): the exceptions that unwind an engine call, run(),
// the template through which every public entry point goes, and small checks
// that more than one file needs.
#ifndef NBRMA_ENGINE_INTERNAL_HPP
#define NBRMA_ENGINE_INTERNAL_HPP

#include <new>

#include "nbrma/engine.hpp"

namespace nbrma {

// Internal unwinding only: run() turns these into return codes. Not in an
// anonymous namespace: they are thrown in one source file and caught by run()
// instantiated in another, so every file must see the same types.
struct transport_failure {
    int code;
};
struct protocol_failure {};

inline bool valid_lock_type(int lock_type)
{
    return lock_type == NBRMA_LOCK_EXCLUSIVE || lock_type == NBRMA_LOCK_SHARED;
}

// A payload from a peer's message (whole lock epoch, pulled access epoch)
// is the engine's from the call that brought it: a refused message, or a call
// that unwinds before the payload was stored or applied, drops it. take()
// hands it on to whatever keeps or applies it.
class engine::payload_guard {
  public:
    payload_guard(const engine &owner, void *payload) : owner_(owner), payload_(payload) {}
    ~payload_guard() { owner_.drop_payload(payload_); }
    payload_guard(const payload_guard &) = delete;
    payload_guard &operator=(const payload_guard &) = delete;
    void *get() const { return payload_; }
    void *take()
    {
        void *payload = payload_;
        payload_ = nullptr;
        return payload;
    }

  private:
    const engine &owner_;
    void *payload_;
};

// Every public entry point goes through here: do the call, let everything
// that became possible happen, then report finished requests once the state
// is consistent (callbacks may call back in).
template <class Body> int engine::run(Body &&body)
{
    int rc;
    ++depth_;
    try {
        rc = body();
        if (rc == NBRMA_OK)
            settle();
    } catch (const transport_failure &failure) {
        rc = failure.code;
    } catch (const protocol_failure &) {
        rc = NBRMA_ERR_INTERN;
    } catch (const std::bad_alloc &) {
        rc = NBRMA_ERR_NOMEM;
    } catch (...) {
        rc = NBRMA_ERR_INTERN;
    }
    if (--depth_ == 0) {
        if (!retired_.empty())
            recycle_retired();
        fire_finished_requests();
    }
    return rc;
}

}  // namespace nbrma

#endif
