// The completion ledger (include/nbrma_ledger.h): per-peer flush sequence
// numbers and the waiters keyed by (peer, sequence number).

#include "nbrma_ledger.h"

#include <cstdint>
#include <deque>
#include <new>
#include <unordered_map>
#include <utility>
#include <vector>

namespace {

struct peer_state {
    uint64_t started = 0;       // flushes handed to the glue to start
    uint64_t finished = 0;      // highest flush reported finished
    uint64_t wanted = 0;        // highest flush a waiter needs
    // (flush number, waiter), in registration order: numbers never decrease,
    // since `started` never does. A vector read from `head` on, emptied when
    // all is read: an idle peer holds no allocation (a deque would hold 576
    // bytes from its construction).
    std::vector<std::pair<uint64_t, nbrma_waiter_id>> waiting;
    size_t head = 0;
};

struct waiter_state {
    void *cookie = nullptr;
    unsigned parts = 0;         // flushes and outside parts not done yet
    bool armed = false;
    int error = 0;
};

struct released_waiter {
    void *cookie;
    int error;
};

} // namespace

struct nbrma_ledger {
    std::unordered_map<nbrma_peer_key, peer_state> peers;
    std::unordered_map<nbrma_waiter_id, waiter_state> waiters;
    std::vector<nbrma_peer_key> flushes_wanted;      // peers with wanted > started
    std::deque<released_waiter> released;
    nbrma_waiter_id last_id = 0;

    void part_done(nbrma_waiter_id id, int error)
    {
        auto it = waiters.find(id);
        if (it == waiters.end())
            return;
        waiter_state &w = it->second;
        if (error != 0 && w.error == 0)
            w.error = error;
        if (w.parts > 0)
            w.parts--;
        release_if_done(it);
    }

    void release_if_done(std::unordered_map<nbrma_waiter_id, waiter_state>::iterator it)
    {
        if (!it->second.armed || it->second.parts != 0)
            return;
        released.push_back({it->second.cookie, it->second.error});
        waiters.erase(it);
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

nbrma_waiter_id nbrma_ledger_waiter_new(nbrma_ledger *ledger, void *cookie)
{
    try {
        nbrma_waiter_id id = ++ledger->last_id;
        ledger->waiters[id].cookie = cookie;
        return id;
    } catch (...) {
        return 0;
    }
}

bool nbrma_ledger_waiter_needs_flush(nbrma_ledger *ledger, nbrma_waiter_id waiter,
                                     nbrma_peer_key peer)
{
    auto w = ledger->waiters.find(waiter);
    if (w == ledger->waiters.end())
        return false;
    try {
        peer_state &p = ledger->peers[peer];     // first contact makes the object
        uint64_t needed = p.started + 1;
        p.waiting.emplace_back(needed, waiter);
        if (p.wanted < needed) {
            try {
                ledger->flushes_wanted.push_back(peer);
            } catch (...) {
                p.waiting.pop_back();
                throw;
            }
            p.wanted = needed;
        }
        w->second.parts++;
        return true;
    } catch (...) {
        return false;
    }
}

void nbrma_ledger_waiter_needs_outside(nbrma_ledger *ledger, nbrma_waiter_id waiter)
{
    auto w = ledger->waiters.find(waiter);
    if (w != ledger->waiters.end())
        w->second.parts++;
}

void nbrma_ledger_waiter_armed(nbrma_ledger *ledger, nbrma_waiter_id waiter)
{
    auto w = ledger->waiters.find(waiter);
    if (w == ledger->waiters.end())
        return;
    w->second.armed = true;
    ledger->release_if_done(w);
}

void nbrma_ledger_outside_done(nbrma_ledger *ledger, nbrma_waiter_id waiter, int error)
{
    ledger->part_done(waiter, error);
}

bool nbrma_ledger_flush_to_start(nbrma_ledger *ledger, nbrma_peer_key *peer, uint64_t *seq)
{
    while (!ledger->flushes_wanted.empty()) {
        nbrma_peer_key key = ledger->flushes_wanted.back();
        ledger->flushes_wanted.pop_back();
        peer_state &p = ledger->peers[key];
        if (p.wanted <= p.started)
            continue;
        // one flush covers every waiter that asked before it starts
        p.started = p.wanted;
        *peer = key;
        *seq = p.started;
        return true;
    }
    return false;
}

void nbrma_ledger_flush_finished(nbrma_ledger *ledger, nbrma_peer_key peer, uint64_t seq,
                                 int error)
{
    auto it = ledger->peers.find(peer);
    if (it == ledger->peers.end())
        return;
    peer_state &p = it->second;
    if (seq > p.finished)
        p.finished = seq;
    while (p.head < p.waiting.size() && p.waiting[p.head].first <= p.finished)
        ledger->part_done(p.waiting[p.head++].second, error);
    if (p.head == p.waiting.size()) {
        p.waiting.clear();
        p.head = 0;
    }
}

bool nbrma_ledger_next_released(nbrma_ledger *ledger, void **cookie, int *error)
{
    if (ledger->released.empty())
        return false;
    *cookie = ledger->released.front().cookie;
    *error = ledger->released.front().error;
    ledger->released.pop_front();
    return true;
}

size_t nbrma_ledger_waiters(const nbrma_ledger *ledger)
{
    return ledger->waiters.size() + ledger->released.size();
}

size_t nbrma_ledger_peers(const nbrma_ledger *ledger)
{
    return ledger->peers.size();
}

size_t nbrma_ledger_peer_bytes(void)
{
    // the object and its hash node (key, next pointer, cached hash)
    return sizeof(peer_state) + sizeof(nbrma_peer_key) + 2 * sizeof(void *);
}

} // extern "C"
