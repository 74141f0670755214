// The progress agent's pacing (nbrma_agent_pacing.h): rules P1-P9.

#include "nbrma_agent_pacing.h"

#include <algorithm>

void nbrma_agent_pacing_init(nbrma_agent_pacing *p, bool app_rings)
{
    *p = nbrma_agent_pacing{};
    p->app_rings = app_rings;
    p->taken_cpu = p->yield_cpu = -1;
}

uint64_t nbrma_agent_pacing_pause_ns(nbrma_agent_pacing *p, uint64_t wall_ns, uint64_t agent_cpu_ns,
                                     bool app_computes, bool own_work, unsigned share_percent)
{
    const bool started = p->started;
    const uint64_t wall = wall_ns - p->wall_ns;
    const uint64_t agent = agent_cpu_ns - p->agent_cpu_ns;

    p->wall_ns = wall_ns;
    p->agent_cpu_ns = agent_cpu_ns;
    p->started = true;
    if (!started || share_percent >= 100)
        return 0;
    if (!app_computes) {  // P2
        p->budget_ns = std::max<int64_t>(p->budget_ns, 0);
        return 0;
    }
    // P3, in ns of the agent's CPU time; P1: the time earns, the service is
    // not charged
    const uint64_t window = NBRMA_PACING_WINDOW_NS;
    const int64_t cap = static_cast<int64_t>(window / 100u * share_percent);
    const int64_t earned = static_cast<int64_t>(std::min(wall, window) / 100u * share_percent);
    const int64_t spent = own_work ? 0 : static_cast<int64_t>(agent);
    p->budget_ns = std::min(p->budget_ns + earned - spent, cap);
    if (own_work)
        return 0;
    if (p->budget_ns >= 0)
        return 0;
    if (share_percent == 0)  // earns nothing: serve only while P1 or P2 holds
        return window;
    return std::min(static_cast<uint64_t>(-p->budget_ns) / share_percent * 100u, window);
}

nbrma_linger nbrma_agent_pacing_linger(nbrma_agent_pacing *p, bool app_computes, bool own_work)
{
    const bool by_timer = p->woke_by_timer;

    p->woke_by_timer = false;
    if (by_timer)
        return NBRMA_LINGER_NONE;
    if (!app_computes)
        return NBRMA_LINGER_UNTIL_IDLE;
    return own_work ? NBRMA_LINGER_WHILE_OWN_WORK : NBRMA_LINGER_NONE;
}

void nbrma_agent_pacing_slept(nbrma_agent_pacing *p, bool by_timer)
{
    p->woke_by_timer = by_timer;
}

nbrma_agent_placement nbrma_agent_pacing_placement(const nbrma_agent_pacing *p, bool app_computes,
                                                   int app_cpu)
{
    // beside a computation the kernel places the agent, which serves only
    // in short turns there (P4), as it places every other thread
    if (app_computes || app_cpu < 0)
        return {-1, false};
    return {app_cpu, app_cpu == p->taken_cpu};
}

bool nbrma_agent_pacing_yielded(nbrma_agent_pacing *p, int cpu, uint64_t took_ns)
{
    if (cpu != p->yield_cpu || took_ns < NBRMA_PACING_YIELD_TAKEN_NS) {
        p->yield_cpu = cpu;
        p->long_yields = 0;
        if (took_ns < NBRMA_PACING_YIELD_TAKEN_NS)
            return false;
    }
    if (cpu < 0 || cpu == p->taken_cpu || ++p->long_yields < NBRMA_PACING_LONG_YIELDS_TAKEN)
        return false;
    p->taken_cpu = cpu;
    p->long_yields = 0;
    return true;
}

nbrma_pacing_exit_ring nbrma_agent_pacing_exit_ring(const nbrma_agent_pacing *p)
{
    if (p->in_one_call)  // P8 (never after a futile ring on return)
        return NBRMA_PACING_RING_ON_RETURN;
    // P6: not while the application polls (P7), which serves its own work
    return p->exit_ring_futile || p->app_polled ? NBRMA_PACING_RING_NONE
                                                : NBRMA_PACING_RING_IF_OWN_WORK;
}

void nbrma_agent_pacing_slept_away(nbrma_agent_pacing *p, bool rung)
{
    p->rung = rung;
}

bool nbrma_agent_pacing_away_mark(const nbrma_agent_pacing *p)
{
    return p->app_rings && !p->mark_futile && !p->app_polled;
}

void nbrma_agent_pacing_peer_rang(nbrma_agent_pacing *p)
{
    p->peer_rang = true;
}

// P6, P8: the ring the agent asked for did not help: it asks no more for
// its kind until it gets in again
static void ring_was_futile(nbrma_agent_pacing *p, nbrma_pacing_exit_ring ring)
{
    if (ring == NBRMA_PACING_RING_ON_RETURN)
        p->return_ring_futile = true;
    else
        p->exit_ring_futile = true;
}

void nbrma_agent_pacing_tried_entry(nbrma_agent_pacing *p, bool entered, uint32_t app_entries,
                                    uint64_t now_ns)
{
    const uint32_t calls = app_entries - p->app_entries;
    const bool app_polls = calls >= NBRMA_PACING_POLLING_ENTRIES;
    const nbrma_pacing_exit_ring served_ring = static_cast<nbrma_pacing_exit_ring>(p->served_ring);

    // P6, P8: found inside again soon after a rung service, having come in
    // since: that ring bought the application less than it cost
    p->served_ring = NBRMA_PACING_RING_NONE;
    if (!entered && served_ring != NBRMA_PACING_RING_NONE && app_entries != p->served_entries &&
        now_ns - p->served_ns < NBRMA_PACING_RING_WORTH_NS)
        ring_was_futile(p, served_ring);

    // a futile ring stops the asking for its kind only: the application that
    // was back inside after the call it stayed in returned (P8) may still
    // leave MPI with work of its own in flight later (P6)
    const nbrma_pacing_exit_ring ring = p->rung ? nbrma_agent_pacing_exit_ring(p)
                                                : NBRMA_PACING_RING_NONE;

    if (entered) {
        p->exit_ring_futile = false;
        p->return_ring_futile = false;
    } else if (ring != NBRMA_PACING_RING_NONE) {
        ring_was_futile(p, ring);
    }
    p->entry_ring = entered ? ring : NBRMA_PACING_RING_NONE;
    p->rung = false;
    // P10: one sleep away without the mark after a futile peer's ring
    p->mark_futile = !entered && p->peer_rang;
    p->peer_rang = false;
    // P8: backs off only while the return's ring may end it
    p->in_one_call = !entered && p->found_inside && calls == 0 && p->app_rings &&
        !p->return_ring_futile;
    p->found_inside = !entered;
    p->app_polled = !entered && app_polls;
    if (entered || !(app_polls || p->in_one_call))
        p->refused_in_a_row = 0;
    else if (p->refused_in_a_row < 32)
        p->refused_in_a_row++;
    p->app_entries = app_entries;
}

void nbrma_agent_pacing_served(nbrma_agent_pacing *p, bool app_came_in, uint64_t now_ns,
                               uint32_t app_entries)
{
    const nbrma_pacing_exit_ring ring = static_cast<nbrma_pacing_exit_ring>(p->entry_ring);

    p->entry_ring = NBRMA_PACING_RING_NONE;
    p->served_ring = NBRMA_PACING_RING_NONE;
    if (ring == NBRMA_PACING_RING_NONE)
        return;
    if (app_came_in) {
        ring_was_futile(p, ring);
        return;
    }
    // the next look judges it
    p->served_ring = static_cast<uint8_t>(ring);
    p->served_ns = now_ns;
    p->served_entries = app_entries;
}

uint64_t nbrma_agent_pacing_away_ns(const nbrma_agent_pacing *p)
{
    const unsigned doublings = p->refused_in_a_row > 0 ? p->refused_in_a_row - 1 : 0;
    const uint64_t away = static_cast<uint64_t>(NBRMA_PACING_AWAY_MIN_NS) << std::min(doublings, 8u);

    return std::min<uint64_t>(away, NBRMA_PACING_AWAY_MAX_NS);
}

nbrma_pacing_mark nbrma_agent_pacing_sleep_mark(nbrma_agent_pacing *p, bool own_work,
                                                uint32_t app_entries, uint64_t now_ns)
{
    const bool polls = p->app_rings && p->marked && now_ns - p->marked_ns < NBRMA_PACING_AWAY_MAX_NS &&
        app_entries - p->marked_entries >= NBRMA_PACING_POLLING_ENTRIES;

    p->marked = true;
    p->marked_entries = app_entries;
    p->marked_ns = now_ns;
    if (!own_work)
        return NBRMA_PACING_MARK_PEERS_UNTIL_OWN_WORK;
    return polls ? NBRMA_PACING_MARK_PEERS_WHILE_POLLING : NBRMA_PACING_MARK_ALL;
}

bool nbrma_agent_pacing_rings_parked(bool parked, bool served)
{
    // P9: not after a service that served nothing (the parked thread's own
    // ring began it: the two would ring each other for ever)
    return parked && served;
}
