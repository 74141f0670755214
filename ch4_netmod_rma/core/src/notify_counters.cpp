// The counters of notified RMA and the requests waiting on them
// (include/nbrma_notify_counters.h): a list of windows, as the glue's was
// (a process has few windows with counters, and an arriving increment names
// its window), each with its waits in a vector in the order they were made.
// Checking the waits allocates nothing: only a new wait may grow the vector.

#include "nbrma_notify_counters.h"

#include <climits>
#include <cstddef>
#include <new>
#include <vector>

namespace {

struct notify_wait {
    int idx;
    int64_t value;
    void *waiter;
};

} // namespace

struct nbrma_notify_counters {
    const void *window;
    int n;
    int64_t *values;            // the glue's; peers' UCX atomics add to them
    void *user;
    nbrma_notify_release_fn release;
    std::vector<notify_wait> waits;     // in the order they were made (N3)
    nbrma_notify_counters *next = nullptr;

    nbrma_notify_counters(const void *w, int count, int64_t *v, void *u,
                          nbrma_notify_release_fn r)
        : window(w), n(count), values(v), user(u), release(r)
    {
    }

    bool has(int idx) const noexcept
    {
        return idx >= 0 && idx < n;
    }

    // acquire: what the increment notifies of (data placed by a peer's
    // put) is visible once the counter shows it
    int64_t value(int idx) const noexcept
    {
        return __atomic_load_n(&values[idx], __ATOMIC_ACQUIRE);
    }

    // N3: every wait is checked, since peers' atomics may have moved any
    // counter; the rest keep their order
    void release_reached() noexcept
    {
        size_t kept = 0;

        for (size_t i = 0; i < waits.size(); i++) {
            const notify_wait w = waits[i];
            if (value(w.idx) >= w.value)
                release(w.waiter, false);
            else
                waits[kept++] = w;
        }
        waits.erase(waits.begin() + static_cast<std::ptrdiff_t>(kept), waits.end());
    }
};

extern "C" {

void nbrma_notify_vote(int n, bool have, int vote[3]) noexcept
{
    vote[0] = n;
    // the maximum of -n is minus the smallest n; INT_MIN has no negation
    // (a count is never negative: the bindings refuse it), so it votes so
    // that the numbers differ
    vote[1] = n == INT_MIN ? INT_MAX : -n;
    vote[2] = have;
}

int nbrma_notify_verdict(const int max_vote[3]) noexcept
{
    if (max_vote[2])
        return NBRMA_ERR_SYNC;
    // largest == smallest, in 64 bits: no overflow for any votes
    if (static_cast<long long>(max_vote[0]) + max_vote[1] != 0)
        return NBRMA_ERR_ARG;
    return NBRMA_OK;
}

int nbrma_notify_table_add(nbrma_notify_table *table, const void *window, int n,
                           int64_t *values, void *user, nbrma_notify_release_fn release,
                           nbrma_notify_counters **counters) noexcept
{
    if (counters)
        *counters = nullptr;
    if (!table || !window || !release || n < 0 || (n > 0 && !values))
        return NBRMA_ERR_ARG;
    if (nbrma_notify_table_find(table, window))
        return NBRMA_ERR_SYNC;
    auto *c = new(std::nothrow) nbrma_notify_counters(window, n, values, user, release);
    if (!c)
        return NBRMA_ERR_NOMEM;
    c->next = table->first;
    table->first = c;
    if (counters)
        *counters = c;
    return NBRMA_OK;
}

nbrma_notify_counters *nbrma_notify_table_find(const nbrma_notify_table *table,
                                               const void *window) noexcept
{
    nbrma_notify_counters *c = window ? table->first : nullptr;

    while (c && c->window != window)
        c = c->next;
    return c;
}

void nbrma_notify_table_remove(nbrma_notify_table *table, nbrma_notify_counters *counters) noexcept
{
    for (nbrma_notify_counters **link = &table->first; *link; link = &(*link)->next) {
        if (*link != counters)
            continue;
        *link = counters->next;
        // N4: unlinked first, so that no release finds it
        for (const notify_wait &w : counters->waits)
            counters->release(w.waiter, true);
        delete counters;
        return;
    }
}

bool nbrma_notify_table_arrived(nbrma_notify_table *table, const void *window, int idx) noexcept
{
    nbrma_notify_counters *c = nbrma_notify_table_find(table, window);

    if (!c || !c->has(idx))
        return false;   // N2: the counters went before it came, or another size
    // acq_rel: applied after the data it notifies of, which a reader that
    // sees the increment sees too
    __atomic_fetch_add(&c->values[idx], 1, __ATOMIC_ACQ_REL);
    c->release_reached();
    return true;
}

bool nbrma_notify_table_poll(nbrma_notify_table *table) noexcept
{
    bool again = false;

    for (nbrma_notify_counters *c = table->first; c; c = c->next) {
        c->release_reached();
        again = again || !c->waits.empty();
    }
    return again;
}

void *nbrma_notify_counters_user(const nbrma_notify_counters *counters) noexcept
{
    return counters->user;
}

int nbrma_notify_counters_count(const nbrma_notify_counters *counters) noexcept
{
    return counters->n;
}

bool nbrma_notify_counters_has(const nbrma_notify_counters *counters, int idx) noexcept
{
    return counters->has(idx);
}

int64_t nbrma_notify_counters_get(const nbrma_notify_counters *counters, int idx) noexcept
{
    return counters->has(idx) ? counters->value(idx) : 0;
}

void nbrma_notify_counters_set(nbrma_notify_counters *counters, int idx, int64_t value) noexcept
{
    if (!counters->has(idx))
        return;
    __atomic_store_n(&counters->values[idx], value, __ATOMIC_RELEASE);
    counters->release_reached();
}

int nbrma_notify_counters_wait(nbrma_notify_counters *counters, int idx, int64_t value,
                               void *waiter) noexcept
{
    if (!counters->has(idx))
        return NBRMA_ERR_ARG;
    try {
        counters->waits.push_back(notify_wait{idx, value, waiter});
    }
    catch(...) {
        return NBRMA_ERR_NOMEM;
    }
    counters->release_reached();
    return NBRMA_OK;
}

size_t nbrma_notify_counters_waiting(const nbrma_notify_counters *counters) noexcept
{
    return counters->waits.size();
}

}       // extern "C"
