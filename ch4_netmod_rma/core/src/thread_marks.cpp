// Thread-scope flushes (include/nbrma_thread_marks.h): per thread and
// target, the marks of what the thread issued since its last flush there.

#include "nbrma_thread_marks.h"
#include "nbrma_core.h"         // NBRMA_ALL_RANKS

#include <atomic>
#include <new>
#include <unordered_map>
#include <vector>

namespace {

struct thread_state {
    std::vector<unsigned char> pending;     // per rank: NBRMA_MARK_* since the last flush
    std::vector<int> ranks;                 // where pending != 0, so that a flush costs
                                            // the targets used, not the window's size
};

std::atomic<unsigned> next_thread_number{0};
thread_local unsigned self_number;
thread_local bool self_numbered;

// `thread` itself, or the calling thread's number for NBRMA_THREAD_SELF:
// false when it has none and `give` is false.
bool resolve(unsigned &thread, bool give)
{
    if (thread != NBRMA_THREAD_SELF)
        return true;
    if (!self_numbered) {
        if (!give)
            return false;
        self_number = next_thread_number.fetch_add(1, std::memory_order_relaxed);
        self_numbered = true;
    }
    thread = self_number;
    return true;
}

bool covers(int rank, int r)
{
    return rank == NBRMA_ALL_RANKS || rank == r;
}

} // namespace

struct nbrma_thread_marks {
    int n_ranks;
    std::unordered_map<unsigned, thread_state> threads;

    const thread_state *find(unsigned thread) const
    {
        auto it = threads.find(thread);
        return it == threads.end() ? nullptr : &it->second;
    }
};

extern "C" {

nbrma_thread_marks *nbrma_thread_marks_create(int n_ranks)
{
    nbrma_thread_marks *marks = new(std::nothrow) nbrma_thread_marks;
    if (marks)
        marks->n_ranks = n_ranks;
    return marks;
}

void nbrma_thread_marks_destroy(nbrma_thread_marks *marks)
{
    delete marks;
}

bool nbrma_thread_marks_note(nbrma_thread_marks *marks, unsigned thread, int rank, unsigned bits)
{
    if (rank < 0 || rank >= marks->n_ranks)
        return true;            // not an operation the window performs: nothing to note
    resolve(thread, true);
    try {
        thread_state &t = marks->threads[thread];
        if (t.pending.empty()) {
            t.pending.assign(marks->n_ranks, 0);
            t.ranks.reserve(4);
        }
        if (t.pending[rank] == 0)
            t.ranks.push_back(rank);
        t.pending[rank] |= static_cast<unsigned char>(bits);
        return true;
    } catch (...) {
        return false;
    }
}

bool nbrma_thread_marks_may_flush(const nbrma_thread_marks *marks, unsigned thread, int rank)
{
    const thread_state *t = resolve(thread, false) ? marks->find(thread) : nullptr;
    if (t == nullptr)
        return true;            // nothing issued: nothing to complete
    for (int r : t->ranks)
        if (covers(rank, r) && (t->pending[r] & NBRMA_MARK_ENGINE))
            return false;
    return true;
}

bool nbrma_thread_marks_next(const nbrma_thread_marks *marks, unsigned thread, int rank,
                             size_t *cursor, int *target, bool *needs_am)
{
    const thread_state *t = resolve(thread, false) ? marks->find(thread) : nullptr;
    if (t == nullptr)
        return false;
    while (*cursor < t->ranks.size()) {
        int r = t->ranks[(*cursor)++];
        if (!covers(rank, r))
            continue;
        *target = r;
        *needs_am = (t->pending[r] & NBRMA_MARK_AM) != 0;
        return true;
    }
    return false;
}

void nbrma_thread_marks_flushed(nbrma_thread_marks *marks, unsigned thread, int rank)
{
    if (!resolve(thread, false))
        return;
    auto it = marks->threads.find(thread);
    if (it == marks->threads.end())
        return;
    thread_state &t = it->second;
    for (size_t i = t.ranks.size(); i-- > 0;) {
        int r = t.ranks[i];
        if (!covers(rank, r))
            continue;
        t.pending[r] = 0;
        t.ranks[i] = t.ranks.back();
        t.ranks.pop_back();
    }
}

} // extern "C"
