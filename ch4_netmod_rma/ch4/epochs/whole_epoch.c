/*
 * mpich-nbrma: lock epochs that travel whole (transport.pack_lock_epoch,
 * send_lock_epoch, apply_lock_epoch of nbrma_core.h).
 *
 * A lock epoch closed while deferred is known entirely when it activates. If
 * all its operations are puts or accumulates without a request, of one
 * predefined type at both ends and a valid predefined reduction, and fit
 * NBRMA_WHOLE_EPOCH_MAX_BYTES with their data, they go inside the lock request
 * (whole_epoch_codec.h). The target applies them as MPIDIG's handlers would
 * when it grants the lock, releases it and sends the grant: one round trip
 * instead of lock, grant, operations, completion and release.
 */

#include "mpidimpl.h"
#include "epoch_win.h"
#include "native_atomics.h"
#include "narrow_atomics.h"

/* Checks what a peer sends too: the op indexes MPICH's table of predefined ops. */
static bool valid_acc_op(MPI_Op op, MPI_Datatype datatype)
{
    int index = op & 0xf;

    if (!HANDLE_IS_BUILTIN(op) || (op & ~0xf) != (MPI_MAX & ~0xf) || index < 1 ||
        index >= MPIR_OP_N_BUILTIN)
        return false;
    if (op == MPI_REPLACE || op == MPI_NO_OP)
        return true;
    return (*MPIR_OP_HDL_TO_DTYPE_FN(op)) (datatype) == MPI_SUCCESS;
}

/* Gets, fetches, derived types, requests and marks keep the lock protocol. */
bool MPIDI_NBRMA_whole_epoch_takes(const MPIDI_NBRMA_epoch_win_t * ew,
                                   const MPIDI_NBRMA_recorded_op_t * rec, int lock_type)
{
    const MPIDI_NBRMA_rma_op_t *op = &rec->op;

    if (rec->granted_flag || rec->user_req || op->origin_count < 0)
        return false;
    /* The target applies it with plain loads and stores. Under a shared lock
     * other origins may update the same location with UCX atomics meanwhile
     * (narrow ones with the CPU's atomics at the target); under an exclusive
     * lock nobody else does. */
    if (lock_type != NBRMA_LOCK_EXCLUSIVE &&
        ((ew->native_atomics &&
          MPIDI_NBRMA_native_atomics_routed(op->kind, op->target_datatype, op->op)) ||
         (ew->narrow_atomics &&
          MPIDI_NBRMA_cpu_atomics_routed(op->kind, op->target_datatype, op->op, false))))
        return false;
    if (op->kind != MPIDI_NBRMA_OP_PUT && op->kind != MPIDI_NBRMA_OP_ACCUMULATE)
        return false;
    if (!HANDLE_IS_BUILTIN(op->origin_datatype) || op->origin_datatype != op->target_datatype ||
        op->origin_count != op->target_count)
        return false;
    return op->kind == MPIDI_NBRMA_OP_PUT || valid_acc_op(op->op, op->origin_datatype);
}

static size_t op_data_bytes(const MPIDI_NBRMA_rma_op_t * op)
{
    return (size_t) op->origin_count * MPIR_Datatype_get_basic_size(op->origin_datatype);
}

nbrma_whole_epoch_op_t MPIDI_NBRMA_whole_epoch_describe(const MPIDI_NBRMA_rma_op_t * op)
{
    nbrma_whole_epoch_op_t desc = {
        .kind = op->kind == MPIDI_NBRMA_OP_PUT ? NBRMA_WHOLE_OP_PUT : NBRMA_WHOLE_OP_ACCUMULATE,
        .datatype = op->origin_datatype,
        .op = op->kind == MPIDI_NBRMA_OP_ACCUMULATE ? op->op : MPI_OP_NULL,
        .count = op->origin_count,
        .target_disp = op->target_disp
    };
    return desc;
}

static bool whole_epoch_fits(MPIDI_NBRMA_epoch_win_t * ew, int lock_type, void *const *records,
                             size_t n, size_t *bytes)
{
    *bytes = nbrma_whole_epoch_data_offset(n);
    if (!ew->whole_lock_epochs)
        return false;
    for (size_t i = 0; i < n; i++)
        if (!MPIDI_NBRMA_whole_epoch_takes(ew, records[i], lock_type) ||
            !nbrma_whole_epoch_plan_add(bytes, op_data_bytes(&((MPIDI_NBRMA_recorded_op_t *)
                                                               records[i])->op)))
            return false;
    return true;
}

/* Rule L1 (nbrma_core.h): defer the lock while the epoch could travel whole
 * and the lock would go as messages the peer's CPU answers anyway (no lock
 * word toward the peer); a lock word costs the origin alone. Not on dynamic
 * windows: the target checks each operation against the attached memory, and
 * one it refuses would leave the origin without its grant (a hang). */
int MPIDI_NBRMA_defer_lock(void *ctx, int peer, int lock_type, void *const *records, size_t n,
                           int *defer)
{
    MPIDI_NBRMA_epoch_win_t *ew = ctx;
    size_t bytes;

    if (ew->own_rdma_for || nbrma_mailboxes_lock_word(ew->mailbox, peer) != NULL)
        *defer = -1;    /* never toward this peer: the engine stops asking */
    else
        *defer = whole_epoch_fits(ew, lock_type, records, n, &bytes);
    return NBRMA_OK;
}

/* Declines with *payload NULL. */
int MPIDI_NBRMA_pack_lock_epoch(void *ctx, int peer, int lock_type, void *const *records,
                                size_t n, void **payload)
{
    MPIDI_NBRMA_epoch_win_t *ew = ctx;
    size_t bytes;
    nbrma_whole_epoch_writer_t writer;
    void *buf;

    *payload = NULL;
    if (!whole_epoch_fits(ew, lock_type, records, n, &bytes))
        return NBRMA_OK;
    buf = MPL_malloc(bytes, MPL_MEM_RMA);
    if (buf == NULL)
        return NBRMA_OK;        /* the lock protocol needs no memory of this size */
    nbrma_whole_epoch_writer_init(&writer, buf, (uint32_t) n, bytes);
    for (size_t i = 0; i < n; i++) {
        MPIDI_NBRMA_recorded_op_t *rec = records[i];
        nbrma_whole_epoch_op_t desc = MPIDI_NBRMA_whole_epoch_describe(&rec->op);
        nbrma_whole_epoch_write(&writer, &desc, rec->op.origin_addr, op_data_bytes(&rec->op));
        MPIDI_NBRMA_recorded_op_free(rec);
    }
    ew->whole_lock_epochs_sent++;
    EPOCH_TRACE(ew, "pack whole lock epoch to %d: %zu ops, %zu bytes", peer, n, bytes);
    *payload = buf;
    return NBRMA_OK;
}

size_t MPIDI_NBRMA_whole_epoch_type_size(int32_t datatype, void *arg)
{
    (void) arg;
    if (!HANDLE_IS_BUILTIN((MPI_Datatype) datatype) || (MPI_Datatype) datatype == MPI_DATATYPE_NULL)
        return 0;
    return MPIR_Datatype_get_basic_size((MPI_Datatype) datatype);
}

int MPIDI_NBRMA_check_lock_epoch(const void *buf, size_t bytes)
{
    int mpi_errno = MPI_SUCCESS;
    nbrma_whole_epoch_reader_t reader;

    MPIR_ERR_CHKANDJUMP1(nbrma_whole_epoch_read_init(&reader, buf, bytes,
                                                     MPIDI_NBRMA_whole_epoch_type_size,
                                                     NULL) != 0, mpi_errno, MPI_ERR_INTERN,
                         "**nbrmaengine", "**nbrmaengine %s", "malformed whole lock epoch");
  fn_exit:
    return mpi_errno;
  fn_fail:
    goto fn_exit;
}

int MPIDI_NBRMA_accumulate_here(MPIDI_NBRMA_epoch_win_t * ew, const void *data, int count,
                                MPI_Datatype datatype, MPI_Op op, char *target)
{
    int mpi_errno = MPI_SUCCESS;
    bool applied = false;

    if (!valid_acc_op(op, datatype))
        MPIR_ERR_SETANDJUMP(mpi_errno, MPI_ERR_OP, "**op");
    if (ew->narrow_atomics || ew->mapped_here) {
        mpi_errno = MPIDI_NBRMA_cpu_atomics_apply(data, count, datatype, target, count, datatype,
                                                  op, NULL, ew->mapped_here, &applied);
        MPIR_ERR_CHECK(mpi_errno);
    }
    if (!applied)
        mpi_errno = MPIDIG_compute_acc_op((void *) data, count, datatype, target, count, datatype,
                                          op, MPIDIG_ACC_SRCBUF_DEFAULT);
  fn_exit:
    return mpi_errno;
  fn_fail:
    goto fn_exit;
}

/* At the grant, under the lock. An operation outside the window's memory or
 * with an invalid reduction is not performed: MPI_ERR_RMA_RANGE, MPI_ERR_OP. */
int MPIDI_NBRMA_apply_lock_epoch(void *ctx, int origin, void *payload)
{
    MPIDI_NBRMA_epoch_win_t *ew = ctx;
    nbrma_whole_epoch_reader_t reader;
    const nbrma_whole_epoch_op_t *desc;
    const void *data;
    size_t len;
    int mpi_errno = MPI_SUCCESS;

    /* checked at receipt (messages.c) or packed here: cannot fail */
    if (nbrma_whole_epoch_read_init(&reader, payload, ((nbrma_whole_epoch_t *) payload)->bytes,
                                    MPIDI_NBRMA_whole_epoch_type_size, NULL) != 0) {
        MPL_free(payload);
        MPIR_ERR_SET1(mpi_errno, MPI_ERR_INTERN, "**nbrmaengine", "**nbrmaengine %s",
                      "malformed whole lock epoch");
        return MPIDI_NBRMA_transport_rc(ew, mpi_errno);
    }
    EPOCH_TRACE(ew, "apply whole lock epoch of %d: %u ops", origin, reader.n_ops);
    while (mpi_errno == MPI_SUCCESS && (desc = nbrma_whole_epoch_read(&reader, &data, &len))) {
        char *target;

        if (!ew->target_bytes(ew->win, desc->target_disp, len, &target)) {
            MPIR_ERR_SET(mpi_errno, MPI_ERR_RMA_RANGE, "**rmarange");
            break;
        }
        if (desc->kind == NBRMA_WHOLE_OP_PUT)
            memcpy(target, data, len);
        else
            mpi_errno = MPIDI_NBRMA_accumulate_here(ew, data, desc->count,
                                                    (MPI_Datatype) desc->datatype,
                                                    (MPI_Op) desc->op, target);
    }
    MPL_free(payload);
    return MPIDI_NBRMA_transport_rc(ew, mpi_errno);
}
