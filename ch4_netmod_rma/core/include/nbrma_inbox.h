/*
 * mpich-nbrma core: what the engine of one window receives. The engine must
 * not be entered from its own transport functions (nbrma_core.h), yet the
 * glue's transport may run MPICH's progress, and so a message handler,
 * while the engine is inside a call. The glue counts its engine calls in
 * progress (`depth`: ENGINE_CALL in ch4/epochs/epoch_win.h); this object
 * keeps what arrives meanwhile and says what each message is to the engine:
 *
 *   I1  a message that arrives while an engine call is in progress
 *       (depth > 0) is kept; otherwise it is delivered at once, with the
 *       depth raised during the delivery, and then the kept ones (I2);
 *   I2  kept messages are delivered in arrival order once the outermost
 *       engine call returned successfully (the depth back at 0), each with
 *       the depth raised, so that messages arriving then are kept behind
 *       them; the first failure stops the delivery, and the rest stay kept
 *       for the end of the next outermost call;
 *   I3  which engine event answers each message kind (nbrma_inbox_deliver):
 *       a grant, a done, a lock request, one that carries a whole epoch
 *       and a pulled access epoch (both with a payload, the engine's from
 *       then on), a lock release, a fence arrival, and a peer's report that
 *       it applied my pulled access epoch; an unknown kind is
 *       NBRMA_ERR_INTERN (the glue checks kinds at receipt);
 *   I4  my pulled access epochs that a peer reads in my memory stay there
 *       until that peer's report that it applied the one with that access id
 *       is delivered (access ids count per peer: the pair names one epoch),
 *       and are freed then, or when the inbox is destroyed.
 *
 * Payloads and pulled epochs are freed through the function given at
 * creation (the transport's drop_payload). Nothing here runs per RMA
 * operation. Plain C interface, no MPICH header: unit-tested with engines
 * wired back to back without MPI (test/unit/test_inbox.cpp). Not
 * thread-safe: the glue calls it under MPICH's global critical section.
 */

#ifndef NBRMA_INBOX_H_INCLUDED
#define NBRMA_INBOX_H_INCLUDED

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "nbrma_core.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The message kinds, numbered as the wire's (formats/wire.h, whose
 * nbrma_ctrl_kind_t the glue checks equal). */
typedef enum {
    NBRMA_EVENT_GRANT,
    NBRMA_EVENT_DONE,
    NBRMA_EVENT_LOCK_REQUEST,
    NBRMA_EVENT_LOCK_RELEASE,
    NBRMA_EVENT_FENCE_ARRIVAL,
    NBRMA_EVENT_LOCK_EPOCH,     /* a lock request with a whole epoch (payload) */
    NBRMA_EVENT_ACCESS_EPOCH,   /* a pulled access epoch (payload) */
    NBRMA_EVENT_ACCESS_APPLIED  /* the peer applied my pulled epoch `value` */
} nbrma_event_kind;

typedef struct nbrma_event {
    int32_t kind;               /* nbrma_event_kind */
    int32_t from;               /* the sender's rank in the window */
    int32_t lock_type;          /* lock requests: NBRMA_LOCK_* */
    uint64_t value;             /* the granted id, access id or fence number */
    void *payload;              /* whole or pulled epoch, else NULL */
} nbrma_event;

typedef struct nbrma_inbox nbrma_inbox;

/* An inbox that frees payloads and pulled epochs with free_payload(ctx, p);
 * NULL when out of memory. */
nbrma_inbox *nbrma_inbox_create(void (*free_payload) (void *ctx, void *payload), void *ctx);
/* Frees the pulled epochs still kept (I4) and the payloads of messages
 * still kept (there are some only after a failed delivery). */
void nbrma_inbox_destroy(nbrma_inbox * inbox);

/* I3: delivers `event` to `engine` now (an ACCESS_APPLIED frees my pulled
 * epoch first, I4); the engine's return code. */
int nbrma_inbox_deliver(nbrma_inbox * inbox, nbrma_engine * engine, const nbrma_event * event);

/* I1: a message arrived; *depth is the glue's count of engine calls in
 * progress. Kept if *depth > 0 (NBRMA_ERR_NOMEM without memory: its
 * payload is freed), else delivered now and then the kept ones (I2). The
 * engine's return code. */
int nbrma_inbox_receive(nbrma_inbox * inbox, nbrma_engine * engine, int *depth,
                        const nbrma_event * event);

/* I2: the outermost engine call returned successfully: delivers the kept
 * messages in arrival order, each with *depth raised, until one fails (its
 * code is returned, the rest stay kept). */
int nbrma_inbox_drain(nbrma_inbox * inbox, nbrma_engine * engine, int *depth);

/* Messages kept. */
size_t nbrma_inbox_kept(const nbrma_inbox * inbox);

/* I4: my pulled epoch `epoch` toward `peer` with `access_id` is announced:
 * kept until the peer reports it applied. NBRMA_ERR_NOMEM (nothing kept)
 * without memory. */
int nbrma_inbox_keep_pulled(nbrma_inbox * inbox, int peer, uint64_t access_id, void *epoch);
/* The last pulled epoch kept was not announced after all: forgotten, not
 * freed (the caller frees it). */
void nbrma_inbox_forget_pulled(nbrma_inbox * inbox);
/* Pulled epochs kept. */
size_t nbrma_inbox_pulled(const nbrma_inbox * inbox);

#ifdef __cplusplus
}
#endif
#endif /* NBRMA_INBOX_H_INCLUDED */
