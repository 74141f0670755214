// What the engine of one window receives (include/nbrma_inbox.h): the
// messages kept during engine calls, in a vector read from a head index
// (its room is reused once it is empty), the answer to each message kind,
// and my pulled epochs until their peers applied them.

#include "nbrma_inbox.h"

#include <new>
#include <vector>

namespace {

struct pulled_epoch {
    int peer;
    uint64_t access_id;
    void *epoch;
};

} // namespace

struct nbrma_inbox {
    void (*free_payload)(void *ctx, void *payload);
    void *ctx;
    std::vector<nbrma_event> kept;      // in arrival order from `head` (I2)
    size_t head = 0;
    std::vector<pulled_epoch> pulled;   // I4

    void release_pulled(int peer, uint64_t access_id)
    {
        for (size_t i = 0; i < pulled.size(); i++)
            if (pulled[i].peer == peer && pulled[i].access_id == access_id) {
                free_payload(ctx, pulled[i].epoch);
                pulled[i] = pulled.back();
                pulled.pop_back();
                return;
            }
    }
};

extern "C" {

nbrma_inbox *nbrma_inbox_create(void (*free_payload)(void *ctx, void *payload), void *ctx)
{
    if (!free_payload)
        return nullptr;
    auto *inbox = new(std::nothrow) nbrma_inbox;
    if (inbox) {
        inbox->free_payload = free_payload;
        inbox->ctx = ctx;
    }
    return inbox;
}

void nbrma_inbox_destroy(nbrma_inbox *inbox)
{
    if (!inbox)
        return;
    for (const pulled_epoch &p : inbox->pulled)
        inbox->free_payload(inbox->ctx, p.epoch);
    for (size_t i = inbox->head; i < inbox->kept.size(); i++)
        if (inbox->kept[i].payload)
            inbox->free_payload(inbox->ctx, inbox->kept[i].payload);
    delete inbox;
}

int nbrma_inbox_deliver(nbrma_inbox *inbox, nbrma_engine *engine, const nbrma_event *e)
{
    switch (e->kind) {
    case NBRMA_EVENT_LOCK_EPOCH:
        return nbrma_on_lock_epoch(engine, e->from, e->value, e->lock_type, e->payload);
    case NBRMA_EVENT_GRANT:
        return nbrma_on_grant(engine, e->from, e->value);
    case NBRMA_EVENT_DONE:
        return nbrma_on_done(engine, e->from, e->value);
    case NBRMA_EVENT_LOCK_REQUEST:
        return nbrma_on_lock_request(engine, e->from, e->value, e->lock_type);
    case NBRMA_EVENT_LOCK_RELEASE:
        return nbrma_on_lock_release(engine, e->from, e->value);
    case NBRMA_EVENT_FENCE_ARRIVAL:
        return nbrma_on_fence_arrival(engine, e->from, e->value);
    case NBRMA_EVENT_ACCESS_EPOCH:
        return nbrma_on_access_epoch(engine, e->from, e->value, e->payload);
    case NBRMA_EVENT_ACCESS_APPLIED:
        inbox->release_pulled(e->from, e->value);
        return nbrma_on_access_applied(engine, e->from, e->value);
    }
    return NBRMA_ERR_INTERN;
}

}  // extern "C"

// The delivery loop, out of line: nbrma_inbox_drain runs after every
// outermost engine call of the glue, almost always with nothing kept, and
// then costs a few instructions instead of this loop's saved registers
// (callgrind: about 100 instructions per MPI_Put + MPI_Win_fence round).
static __attribute__((noinline)) int drain_kept(nbrma_inbox *inbox, nbrma_engine *engine,
                                                 int *depth)
{
    int rc = NBRMA_OK;

    while (rc == NBRMA_OK && inbox->head < inbox->kept.size()) {
        const nbrma_event e = inbox->kept[inbox->head++];
        if (inbox->head == inbox->kept.size()) {
            inbox->kept.clear();        // keeps its room
            inbox->head = 0;
        }
        ++*depth;
        rc = nbrma_inbox_deliver(inbox, engine, &e);
        --*depth;
    }
    return rc;
}

extern "C" {

int nbrma_inbox_drain(nbrma_inbox *inbox, nbrma_engine *engine, int *depth)
{
    return inbox->head == inbox->kept.size() ? NBRMA_OK : drain_kept(inbox, engine, depth);
}

int nbrma_inbox_receive(nbrma_inbox *inbox, nbrma_engine *engine, int *depth,
                        const nbrma_event *event)
{
    int rc;

    if (*depth) {
        try {
            inbox->kept.push_back(*event);
        }
        catch(...) {
            if (event->payload)
                inbox->free_payload(inbox->ctx, event->payload);
            return NBRMA_ERR_NOMEM;
        }
        return NBRMA_OK;
    }
    ++*depth;
    rc = nbrma_inbox_deliver(inbox, engine, event);
    --*depth;
    if (rc == NBRMA_OK && !*depth)
        rc = nbrma_inbox_drain(inbox, engine, depth);
    return rc;
}

size_t nbrma_inbox_kept(const nbrma_inbox *inbox)
{
    return inbox->kept.size() - inbox->head;
}

int nbrma_inbox_keep_pulled(nbrma_inbox *inbox, int peer, uint64_t access_id, void *epoch)
{
    try {
        inbox->pulled.push_back(pulled_epoch{peer, access_id, epoch});
    }
    catch(...) {
        return NBRMA_ERR_NOMEM;
    }
    return NBRMA_OK;
}

void nbrma_inbox_forget_pulled(nbrma_inbox *inbox)
{
    if (!inbox->pulled.empty())
        inbox->pulled.pop_back();
}

size_t nbrma_inbox_pulled(const nbrma_inbox *inbox)
{
    return inbox->pulled.size();
}

}       // extern "C"
