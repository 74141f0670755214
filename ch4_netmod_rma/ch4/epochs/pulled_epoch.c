/*
 * mpich-nbrma: access epochs that the target pulls (transport.pack_access_epoch,
 * apply_access_epoch of nbrma_core.h; layout in pulled_epoch_codec.h).
 *
 * An access epoch closed before a target's grant arrived would issue its
 * operations only in the origin's next MPI call: a target in MPI_Win_wait
 * would wait for the origin's computation (the paper's Late Complete). Where
 * the target can read the origin's memory (cross-memory attach), it reads the
 * descriptors and data itself once its exposure is granted. The origin's
 * buffers stay untouched until its close request completes, after the target
 * reported the epoch applied. Nonblocking closes only: a blocking one waits
 * for the grant anyway.
 */

#include "mpidimpl.h"
#include "epoch_win.h"
#include "pulled_epoch_codec.h"
#include "cross_memory.h"
#include <inttypes.h>

int MPIDI_NBRMA_pack_access_epoch(void *ctx, int peer, void *const *records, size_t n,
                                  void **payload)
{
    MPIDI_NBRMA_epoch_win_t *ew = ctx;
    nbrma_pulled_op_t *ops;
    void *pulled;

    *payload = NULL;
    if (!ew->pulled_epochs || ew->in_blocking_call || n > NBRMA_PULLED_EPOCH_MAX_OPS ||
        nbrma_mailboxes_readable_pid(ew->mailbox, peer) == 0)
        return NBRMA_OK;
    /* PSCW lets other origins update the same memory: a shared lock's rules */
    for (size_t i = 0; i < n; i++)
        if (!MPIDI_NBRMA_whole_epoch_takes(ew, records[i], NBRMA_LOCK_SHARED))
            return NBRMA_OK;
    pulled = MPL_malloc(nbrma_pulled_epoch_bytes(n), MPL_MEM_RMA);
    if (pulled == NULL)
        return NBRMA_OK;        /* the grant protocol needs no memory */
    ops = nbrma_pulled_epoch_init(pulled, (uint32_t) n);
    for (size_t i = 0; i < n; i++) {
        MPIDI_NBRMA_recorded_op_t *rec = records[i];
        nbrma_whole_epoch_op_t desc = MPIDI_NBRMA_whole_epoch_describe(&rec->op);
        ops[i] = nbrma_pulled_op_of(&desc, (uint64_t) (uintptr_t) rec->op.origin_addr);
        MPIDI_NBRMA_recorded_op_free(rec);
    }
    ew->pulled_epochs_sent++;
    EPOCH_TRACE(ew, "pulled access epoch to %d: %zu ops", peer, n);
    *payload = pulled;
    return NBRMA_OK;
}

/* Only the descriptors' address goes into the peer's mailbox: UCX 1.13 delivers
 * an active message larger than its shared-memory FIFO element only once the
 * sender progresses again. A full ring falls back to one all the same. */
int MPIDI_NBRMA_send_access_epoch(void *ctx, int peer, uint64_t access_id, void *payload)
{
    MPIDI_NBRMA_epoch_win_t *ew = ctx;
    nbrma_pulled_epoch_t *pulled = payload;
    nbrma_ring_msg_t mail = {.kind = NBRMA_CTRL_ACCESS_EPOCH,
        .value = (uint64_t) (uintptr_t) pulled
    };
    int mpi_errno = MPI_SUCCESS;

    pulled->ctrl = nbrma_ctrl_msg_make(MPIDIG_WIN(ew->win, win_id), ew->win->comm_ptr->rank,
                                       NBRMA_CTRL_ACCESS_EPOCH, access_id, 0);
    /* kept until the peer reports it applied */
    if (nbrma_inbox_keep_pulled(ew->inbox, peer, access_id, pulled) != NBRMA_OK) {
        MPL_free(pulled);
        MPIR_ERR_SET(mpi_errno, MPI_ERR_NO_MEM, "**nomem");
        return MPIDI_NBRMA_transport_rc(ew, mpi_errno);
    }
    if (MPIDI_NBRMA_mailbox_send(ew->mailbox, peer, &mail)) {
        EPOCH_TRACE(ew, "mail pulled access epoch %" PRIu64 " to %d", access_id, peer);
        return NBRMA_OK;
    }
    nbrma_inbox_forget_pulled(ew->inbox);
    int rc = MPIDI_NBRMA_send_ctrl(ew, peer, &pulled->ctrl, pulled->bytes,
                                   NBRMA_CTRL_ACCESS_EPOCH, access_id, 0);
    MPL_free(pulled);
    return rc;
}

int MPIDI_NBRMA_read_access_epoch(MPIDI_NBRMA_epoch_win_t * ew, int from, uint64_t addr,
                                  void **payload, uint64_t * access_id)
{
    int mpi_errno = MPI_SUCCESS;
    uint64_t pid = nbrma_mailboxes_readable_pid(ew->mailbox, from);
    nbrma_pulled_epoch_t header;
    void *copy = NULL;

    *payload = NULL;
    MPIR_ERR_CHKANDJUMP1(pid == 0 ||
                         nbrma_cross_memory_read(pid, &header, addr, sizeof(header)) != 0,
                         mpi_errno, MPI_ERR_INTERN, "**nbrmaengine", "**nbrmaengine %s",
                         "cannot read a pulled access epoch");
    MPIR_ERR_CHKANDJUMP1(!nbrma_pulled_epoch_claim_fits(header.bytes), mpi_errno, MPI_ERR_INTERN,
                         "**nbrmaengine", "**nbrmaengine %s",
                         "malformed pulled access epoch");
    copy = MPL_malloc(header.bytes, MPL_MEM_RMA);
    MPIR_ERR_CHKANDJUMP(copy == NULL, mpi_errno, MPI_ERR_NO_MEM, "**nomem");
    /* the copy is what is checked and applied, whatever the peer does later */
    MPIR_ERR_CHKANDJUMP1(nbrma_cross_memory_read(pid, copy, addr, header.bytes) != 0, mpi_errno,
                         MPI_ERR_INTERN, "**nbrmaengine", "**nbrmaengine %s",
                         "cannot read a pulled access epoch");
    mpi_errno = MPIDI_NBRMA_check_access_epoch(copy, header.bytes);
    MPIR_ERR_CHECK(mpi_errno);
    *access_id = ((nbrma_pulled_epoch_t *) copy)->ctrl.value;
    *payload = copy;
  fn_exit:
    return mpi_errno;
  fn_fail:
    MPL_free(copy);
    goto fn_exit;
}

int MPIDI_NBRMA_check_access_epoch(const void *buf, size_t bytes)
{
    int mpi_errno = MPI_SUCCESS;
    uint32_t n_ops;

    MPIR_ERR_CHKANDJUMP1(nbrma_pulled_epoch_check(buf, bytes, MPIDI_NBRMA_whole_epoch_type_size,
                                                  NULL, &n_ops) == NULL, mpi_errno,
                         MPI_ERR_INTERN, "**nbrmaengine", "**nbrmaengine %s",
                         "malformed pulled access epoch");
  fn_exit:
    return mpi_errno;
  fn_fail:
    goto fn_exit;
}

/* A put is read into the window, an accumulate into a buffer then reduced. */
static int pull_op(MPIDI_NBRMA_epoch_win_t * ew, uint64_t pid, const nbrma_pulled_op_t * desc)
{
    int mpi_errno = MPI_SUCCESS;
    size_t len = (size_t) desc->count * MPIR_Datatype_get_basic_size((MPI_Datatype) desc->datatype);
    char *target;
    void *data = NULL;

    if (!ew->target_bytes(ew->win, desc->target_disp, len, &target))
        MPIR_ERR_SETANDJUMP(mpi_errno, MPI_ERR_RMA_RANGE, "**rmarange");
    if (desc->kind == NBRMA_WHOLE_OP_PUT) {
        MPIR_ERR_CHKANDJUMP1(nbrma_cross_memory_read(pid, target, desc->origin_addr, len) != 0,
                             mpi_errno, MPI_ERR_OTHER, "**nbrmaengine", "**nbrmaengine %s",
                             "cannot read the origin's memory");
        goto fn_exit;
    }
    data = MPL_malloc(MPL_MAX(len, 1), MPL_MEM_RMA);
    MPIR_ERR_CHKANDJUMP(data == NULL, mpi_errno, MPI_ERR_NO_MEM, "**nomem");
    MPIR_ERR_CHKANDJUMP1(nbrma_cross_memory_read(pid, data, desc->origin_addr, len) != 0, mpi_errno,
                         MPI_ERR_OTHER, "**nbrmaengine", "**nbrmaengine %s",
                         "cannot read the origin's memory");
    mpi_errno = MPIDI_NBRMA_accumulate_here(ew, data, desc->count, (MPI_Datatype) desc->datatype,
                                            (MPI_Op) desc->op, target);
  fn_exit:
    MPL_free(data);
    return mpi_errno;
  fn_fail:
    goto fn_exit;
}

/* Under the matched exposure. A failed operation stops the rest; the error is
 * the target's (the engine still reports the epoch applied, so that the
 * origin does not wait forever). */
int MPIDI_NBRMA_apply_access_epoch(void *ctx, int origin, void *payload)
{
    MPIDI_NBRMA_epoch_win_t *ew = ctx;
    uint64_t pid = nbrma_mailboxes_readable_pid(ew->mailbox, origin);
    const nbrma_pulled_op_t *ops;
    uint32_t n_ops = 0;
    int mpi_errno = MPI_SUCCESS;

    /* checked at receipt (messages.c): cannot fail */
    ops = nbrma_pulled_epoch_check(payload, ((nbrma_pulled_epoch_t *) payload)->bytes,
                                   MPIDI_NBRMA_whole_epoch_type_size, NULL, &n_ops);
    if (ops == NULL || pid == 0)
        MPIR_ERR_SET1(mpi_errno, MPI_ERR_INTERN, "**nbrmaengine", "**nbrmaengine %s",
                      "pulled access epoch from a process whose memory is not readable");
    EPOCH_TRACE(ew, "apply pulled access epoch of %d: %u ops", origin, n_ops);
    for (uint32_t i = 0; mpi_errno == MPI_SUCCESS && ops && i < n_ops; i++)
        mpi_errno = pull_op(ew, pid, &ops[i]);
    MPL_free(payload);
    return MPIDI_NBRMA_transport_rc(ew, mpi_errno);
}
