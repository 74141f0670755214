// The completion ledger (include/nbrma_ledger.h): per-peer flush sequence
// numbers and the waiters keyed by (peer, sequence number).
//
// Cost: the glue calls start_flush and flush_finished for every blocking
// flush (the MPI_Win_flush of a put+flush loop), so both are a hash lookup
// at most (one peer remembered), and waiters live in a slab reused through
// a free list: no allocation per wait once the slab has grown.

#include "nbrma_ledger.h"

#include <cstdint>
#include <new>
#include <unordered_map>
#include <utility>
#include <vector>

namespace {

struct peer_state {
    uint64_t started = 0;       // flushes the glue started
    uint64_t finished = 0;      // highest flush reported finished
    // (flush number, waiter), in registration order. A vector emptied when
    // all is released, keeping at most kept_waiting entries of capacity: a
    // peer that never waited holds no allocation (a deque would hold 576
    // bytes from its construction), and one whose blocking flushes wait one
    // after another (UCX's emulated RDMA) does not allocate per flush.
    // Numbers may come out of order (a waiter may ask for an older flush
    // still in flight), so a finished flush releases the entries at or below
    // it wherever they are.
    std::vector<std::pair<uint64_t, nbrma_waiter_id>> waiting;
};

struct waiter_state {
    void *cookie = nullptr;
    unsigned parts = 0;         // flushes and outside parts not done yet
    uint32_t generation = 0;    // of the id that names this slot now
    bool in_use = false;
    bool armed = false;
    int error = 0;
};

struct released_waiter {
    void *cookie;
    int error;
};

constexpr uint64_t slot_bits = 32;
constexpr size_t kept_waiting = 4;

} // namespace

struct nbrma_ledger {
    std::unordered_map<nbrma_peer_key, peer_state> peers;
    // the last peer looked up: a loop of flushes toward one target hashes
    // nothing (unordered_map's elements stay where they are)
    nbrma_peer_key last_key = 0;
    peer_state *last_peer = nullptr;
    std::vector<waiter_state> slab;
    std::vector<uint32_t> free_slots;
    size_t live = 0;
    std::vector<released_waiter> released;
    size_t released_head = 0;
    // Endpoints whose flush failed, with the first error: rare, so kept
    // apart from peer_state, which every peer pays for. unrecorded_error: a
    // failure there was no memory to record, reported for every endpoint.
    std::unordered_map<nbrma_peer_key, int> failed_peers;
    int unrecorded_error = 0;

    void note_failure(nbrma_peer_key key, int error)
    {
        try {
            failed_peers.emplace(key, error);   // keeps the first
        } catch (...) {
            if (unrecorded_error == 0)
                unrecorded_error = error;
        }
    }

    int failure_of(nbrma_peer_key key) const
    {
        if (failed_peers.empty())
            return unrecorded_error;
        auto it = failed_peers.find(key);
        return it != failed_peers.end() ? it->second : unrecorded_error;
    }

    peer_state *find_peer(nbrma_peer_key key)
    {
        if (key == last_key && last_peer)
            return last_peer;
        auto it = peers.find(key);
        if (it == peers.end())
            return nullptr;
        last_key = key;
        last_peer = &it->second;
        return last_peer;
    }

    peer_state &make_peer(nbrma_peer_key key)      // may throw std::bad_alloc
    {
        if (peer_state *p = find_peer(key))
            return *p;
        peer_state &p = peers[key];
        last_key = key;
        last_peer = &p;
        return p;
    }

    void release_waiting(peer_state &p, int error);

    waiter_state *find_waiter(nbrma_waiter_id id)
    {
        uint64_t slot = (id & ((uint64_t(1) << slot_bits) - 1)) - 1;
        if (id == 0 || slot >= slab.size())
            return nullptr;
        waiter_state &w = slab[slot];
        if (!w.in_use || w.generation != static_cast<uint32_t>(id >> slot_bits))
            return nullptr;
        return &w;
    }

    void part_done(waiter_state *w, int error)
    {
        if (error != 0 && w->error == 0)
            w->error = error;
        if (w->parts > 0)
            w->parts--;
        release_if_done(w);
    }

    // The released list is reserved ahead (waiter_new), so that this never
    // allocates: a release cannot fail.
    void release_if_done(waiter_state *w)
    {
        if (!w->armed || w->parts != 0)
            return;
        released.push_back({w->cookie, w->error});
        w->in_use = false;
        live--;
        free_slots.push_back(static_cast<uint32_t>(w - slab.data()));
    }
};

extern "C" {

nbrma_ledger *nbrma_ledger_create(void)
{
    return new(std::nothrow) nbrma_ledger;
}

void nbrma_ledger_destroy(nbrma_ledger *ledger)
{
    delete ledger;
}

bool nbrma_ledger_start_flush(nbrma_ledger *ledger, nbrma_peer_key peer, uint64_t *seq)
{
    if (peer == ledger->last_key && ledger->last_peer) {
        *seq = ++ledger->last_peer->started;
        return true;
    }
    try {
        peer_state &p = ledger->make_peer(peer);        // first contact makes the object
        *seq = ++p.started;
        return true;
    } catch (...) {
        return false;
    }
}

void nbrma_ledger_flush_finished(nbrma_ledger *ledger, nbrma_peer_key peer, uint64_t seq,
                                 int error)
{
    peer_state *p = ledger->find_peer(peer);
    if (p == nullptr)
        return;
    if (seq > p->finished)
        p->finished = seq;
    if (error != 0)
        ledger->note_failure(peer, error);
    if (!p->waiting.empty())
        ledger->release_waiting(*p, error);
}

} // extern "C"

// Out of line: a blocking flush on shared memory finds nobody waiting, and
// its call then costs no more than the lookup.
__attribute__((noinline)) void nbrma_ledger::release_waiting(peer_state &p, int error)
{
    // entries released here leave; the others keep their order
    size_t kept = 0;
    for (size_t i = 0; i < p.waiting.size(); i++) {
        auto entry = p.waiting[i];
        if (entry.first > p.finished) {
            p.waiting[kept++] = entry;
            continue;
        }
        if (waiter_state *w = find_waiter(entry.second))
            part_done(w, error);
    }
    p.waiting.resize(kept);
    if (kept == 0 && p.waiting.capacity() > kept_waiting)
        std::vector<std::pair<uint64_t, nbrma_waiter_id>>().swap(p.waiting);
}

extern "C" {

bool nbrma_ledger_flush_done(nbrma_ledger *ledger, nbrma_peer_key peer, uint64_t seq,
                             int *error)
{
    const peer_state *p = ledger->find_peer(peer);
    if (p == nullptr || p->finished < seq)
        return false;
    *error = ledger->failure_of(peer);
    return true;
}

nbrma_waiter_id nbrma_ledger_waiter_new(nbrma_ledger *ledger, void *cookie)
{
    try {
        // room for every live waiter's release ahead, so that releasing
        // never allocates
        size_t needed = ledger->released.size() + ledger->live + 1;
        if (ledger->released.capacity() < needed)
            ledger->released.reserve(needed * 2 + 16);
        if (ledger->free_slots.capacity() < ledger->slab.size() + 1)
            ledger->free_slots.reserve(ledger->slab.size() * 2 + 16);
        uint32_t slot;
        if (!ledger->free_slots.empty()) {
            slot = ledger->free_slots.back();
            ledger->free_slots.pop_back();
        } else {
            if (ledger->slab.size() >= (uint64_t(1) << slot_bits) - 1)
                return 0;
            ledger->slab.emplace_back();
            slot = static_cast<uint32_t>(ledger->slab.size() - 1);
        }
        waiter_state &w = ledger->slab[slot];
        uint32_t generation = w.generation + 1;
        w = waiter_state{};
        w.cookie = cookie;
        w.generation = generation;
        w.in_use = true;
        ledger->live++;
        return (static_cast<uint64_t>(generation) << slot_bits) | (uint64_t(slot) + 1);
    } catch (...) {
        return 0;
    }
}

bool nbrma_ledger_waiter_needs_flush(nbrma_ledger *ledger, nbrma_waiter_id waiter,
                                     nbrma_peer_key peer, uint64_t seq)
{
    waiter_state *w = ledger->find_waiter(waiter);
    if (w == nullptr)
        return false;
    try {
        peer_state &p = ledger->make_peer(peer);
        if (seq <= p.finished)
            return true;        // done already: nothing to wait for
        p.waiting.emplace_back(seq, waiter);
        w->parts++;
        return true;
    } catch (...) {
        return false;
    }
}

void nbrma_ledger_waiter_needs_outside(nbrma_ledger *ledger, nbrma_waiter_id waiter)
{
    if (waiter_state *w = ledger->find_waiter(waiter))
        w->parts++;
}

void nbrma_ledger_waiter_armed(nbrma_ledger *ledger, nbrma_waiter_id waiter)
{
    waiter_state *w = ledger->find_waiter(waiter);
    if (w == nullptr)
        return;
    w->armed = true;
    ledger->release_if_done(w);
}

void nbrma_ledger_waiter_error(nbrma_ledger *ledger, nbrma_waiter_id waiter, int error)
{
    waiter_state *w = ledger->find_waiter(waiter);
    if (w != nullptr && error != 0 && w->error == 0)
        w->error = error;
}

void nbrma_ledger_outside_done(nbrma_ledger *ledger, nbrma_waiter_id waiter, int error)
{
    if (waiter_state *w = ledger->find_waiter(waiter))
        ledger->part_done(w, error);
}

bool nbrma_ledger_next_released(nbrma_ledger *ledger, void **cookie, int *error)
{
    if (ledger->released_head == ledger->released.size())
        return false;
    *cookie = ledger->released[ledger->released_head].cookie;
    *error = ledger->released[ledger->released_head].error;
    if (++ledger->released_head == ledger->released.size()) {
        ledger->released.clear();
        ledger->released_head = 0;
    }
    return true;
}

size_t nbrma_ledger_waiters(const nbrma_ledger *ledger)
{
    return ledger->live + (ledger->released.size() - ledger->released_head);
}

size_t nbrma_ledger_peers(const nbrma_ledger *ledger)
{
    return ledger->peers.size();
}

size_t nbrma_ledger_peer_bytes(void)
{
    // the object and its hash node (key, next pointer, cached hash), and the
    // entry of capacity a peer that waited keeps, with malloc's header (a
    // peer whose waits overlapped keeps up to kept_waiting entries)
    return sizeof(peer_state) + sizeof(nbrma_peer_key) + 2 * sizeof(void *) +
        sizeof(std::pair<uint64_t, nbrma_waiter_id>) + 2 * sizeof(void *);
}

} // extern "C"
