// The waits registered with the completion ledger
// (include/nbrma_ledger_waits.h): registration, out of line (a wait still
// open when armed; a blocking flush on shared memory never gets here).

#include "nbrma_ledger_waits.h"

#include <cstdlib>

extern "C" {

__attribute__((noinline, cold)) nbrma_registered_wait *
nbrma_waits_register(nbrma_waits *waits, nbrma_ledger *ledger, void *owner,
                     nbrma_wait_action action, int error, const nbrma_open_flushes *open,
                     nbrma_outside_parts *parts, int nomem_error)
{
    nbrma_registered_wait *r = waits->spare;

    if (r)
        waits->spare = r->next;
    else
        r = static_cast<nbrma_registered_wait *>(std::malloc(sizeof(*r)));
    if (r == nullptr)
        return nullptr;
    *r = nbrma_registered_wait{};
    r->owner = owner;
    r->action = action;
    r->id = nbrma_ledger_waiter_new(ledger, r);
    if (r->id == 0) {
        nbrma_waits_free(waits, r);
        return nullptr;
    }
    // from here on nothing fails: a flush the ledger had no memory for only
    // releases the waiter early, with that error
    if (error)
        nbrma_ledger_waiter_error(ledger, r->id, error);
    for (size_t i = 0; i < open->n; i++)
        if (!nbrma_ledger_waiter_needs_flush(ledger, r->id, open->v[i].peer, open->v[i].seq))
            nbrma_ledger_waiter_error(ledger, r->id, nomem_error);
    r->parts = *parts;
    *parts = nbrma_outside_parts{};
    for (size_t i = 0; i < r->parts.n; i++)
        nbrma_ledger_waiter_needs_outside(ledger, r->id);
    r->prev = nullptr;
    r->next = waits->head;
    if (waits->head)
        waits->head->prev = r;
    waits->head = r;
    nbrma_ledger_waiter_armed(ledger, r->id);
    return r;
}

} // extern "C"
