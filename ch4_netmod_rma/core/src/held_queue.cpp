// Held ordered records (include/nbrma_held_queue.h): a vector in replay
// order, each entry marked when it is its target's head, and per target how
// many are held, so that H3's question is one lookup.

#include "nbrma_held_queue.h"

#include <new>
#include <unordered_map>
#include <vector>

namespace {

struct held {
    int target;
    bool head;                  // the first one held toward its target (H2)
    void *record;
    nbrma_op_ticket ticket;
};

} // namespace

struct nbrma_held_queue {
    std::vector<held> records;                  // in replay order (H1)
    std::unordered_map<int, size_t> toward;     // target -> records held toward it

    // A record toward `target` left the queue; whether others remain.
    bool unhold(int target)
    {
        auto it = toward.find(target);
        if (--it->second > 0)
            return true;
        toward.erase(it);
        return false;
    }
};

extern "C" {

nbrma_held_queue *nbrma_held_queue_create(void)
{
    return new(std::nothrow) nbrma_held_queue;
}

void nbrma_held_queue_destroy(nbrma_held_queue *queue)
{
    delete queue;
}

bool nbrma_held_queue_hold(nbrma_held_queue *queue, int target, void *record,
                           nbrma_op_ticket ticket)
{
    // a target's count exists only while records toward it are held: H3
    // asks whether it exists, so a failed push must not leave it at 0
    bool head = queue->toward.count(target) == 0;
    try {
        queue->records.push_back(held{target, head, record, ticket});
    }
    catch(...) {
        return false;
    }
    try {
        queue->toward[target]++;
    }
    catch(...) {
        queue->records.pop_back();
        return false;
    }
    return true;
}

bool nbrma_held_queue_toward(const nbrma_held_queue *queue, int target)
{
    return queue->toward.count(target) != 0;
}

size_t nbrma_held_queue_size(const nbrma_held_queue *queue)
{
    return queue->records.size();
}

bool nbrma_held_queue_next_head(const nbrma_held_queue *queue, size_t *cursor, void **record)
{
    for (; *cursor < queue->records.size(); ++*cursor)
        if (queue->records[*cursor].head) {
            *record = queue->records[(*cursor)++].record;
            return true;
        }
    return false;
}

void nbrma_held_queue_take(nbrma_held_queue *queue, size_t *cursor, void **record,
                           nbrma_op_ticket *ticket)
{
    size_t at = --*cursor;      // the head last returned; the next call looks here again
    held taken = queue->records[at];
    queue->records.erase(queue->records.begin() + at);
    *record = taken.record;
    *ticket = taken.ticket;
    if (!queue->unhold(taken.target))
        return;
    for (size_t i = at; i < queue->records.size(); i++)
        if (queue->records[i].target == taken.target) {
            queue->records[i].head = true;      // H2: the next in line
            break;
        }
}

bool nbrma_held_queue_drop(nbrma_held_queue *queue, void **record)
{
    if (queue->records.empty())
        return false;
    *record = queue->records.back().record;
    int target = queue->records.back().target;
    queue->records.pop_back();
    queue->unhold(target);
    return true;
}

}       // extern "C"
