/*
 * mpich-nbrma: the MPIR_*_impl of some Quo Vadis calls (api/quovadis_api.txt):
 * remote-completing operations (MPIX_Rrput, _Rraccumulate, _Rrget_accumulate),
 * MPIX_Win_op_intrinsic and notified RMA (notify/). Each operation becomes a
 * descriptor for the window kind's table (MPIDI_NBRMA_win_ops: MPICH's for
 * windows without component state).
 */

#include "mpidimpl.h"
#include "nbrma_win.h"
#include "nbrma_request.h"
#include "notify.h"
#include "user_strings.h"

/* --- MPIX_Rrput, MPIX_Rraccumulate, MPIX_Rrget_accumulate ----------------- */

static int remote_rma(const MPIDI_NBRMA_rma_op_t * op, MPIR_Win * win)
{
    /* the generated bindings return early for MPI_PROC_NULL only for MPI's own calls */
    if (op->target_rank == MPI_PROC_NULL)
        return MPIDI_NBRMA_request_create_complete(op->request);
    return MPIDI_NBRMA_win_ops(win)->rma(op, win);
}

int MPIR_Rrput_impl(const void *origin_addr, MPI_Count origin_count, MPI_Datatype origin_datatype,
                    int target_rank, MPI_Aint target_disp, MPI_Count target_count,
                    MPI_Datatype target_datatype, MPIR_Win * win, MPIR_Request ** request)
{
    MPIDI_NBRMA_rma_op_t op = { .kind = MPIDI_NBRMA_OP_PUT, NBRMA_ORIGIN_ARGS, NBRMA_NO_RESULT,
        NBRMA_TARGET_ARGS, NBRMA_OP_EXTRAS(NULL, 0, request, true)
    };
    return remote_rma(&op, win);
}

int MPIR_Rraccumulate_impl(const void *origin_addr, MPI_Count origin_count,
                           MPI_Datatype origin_datatype, int target_rank, MPI_Aint target_disp,
                           MPI_Count target_count, MPI_Datatype target_datatype, MPI_Op op_,
                           MPIR_Win * win, MPIR_Request ** request)
{
    MPIDI_NBRMA_rma_op_t op = { .kind = MPIDI_NBRMA_OP_ACCUMULATE, NBRMA_ORIGIN_ARGS,
        NBRMA_NO_RESULT, NBRMA_TARGET_ARGS, NBRMA_OP_EXTRAS(NULL, op_, request, true)
    };
    return remote_rma(&op, win);
}

int MPIR_Rrget_accumulate_impl(const void *origin_addr, MPI_Count origin_count,
                               MPI_Datatype origin_datatype, void *result_addr,
                               MPI_Count result_count, MPI_Datatype result_datatype,
                               int target_rank, MPI_Aint target_disp, MPI_Count target_count,
                               MPI_Datatype target_datatype, MPI_Op op_, MPIR_Win * win,
                               MPIR_Request ** request)
{
    MPIDI_NBRMA_rma_op_t op = { .kind = MPIDI_NBRMA_OP_GET_ACCUMULATE, NBRMA_ORIGIN_ARGS,
        NBRMA_RESULT_ARGS, NBRMA_TARGET_ARGS, NBRMA_OP_EXTRAS(NULL, op_, request, true)
    };
    return remote_rma(&op, win);
}

/* --- MPIX_Win_op_intrinsic -------------------------------------------------- */

/* What each name of the list (parsed by formats/user_strings.c) asks about. */
static const struct {
    MPIDI_NBRMA_op_kind_t kind;
    MPI_Op op;
} intrinsic_ops[NBRMA_INTRINSIC_N_NAMES] = {
    [NBRMA_INTRINSIC_SUM] = {MPIDI_NBRMA_OP_ACCUMULATE, MPI_SUM},
    [NBRMA_INTRINSIC_PROD] = {MPIDI_NBRMA_OP_ACCUMULATE, MPI_PROD},
    [NBRMA_INTRINSIC_MAX] = {MPIDI_NBRMA_OP_ACCUMULATE, MPI_MAX},
    [NBRMA_INTRINSIC_MIN] = {MPIDI_NBRMA_OP_ACCUMULATE, MPI_MIN},
    [NBRMA_INTRINSIC_LAND] = {MPIDI_NBRMA_OP_ACCUMULATE, MPI_LAND},
    [NBRMA_INTRINSIC_LOR] = {MPIDI_NBRMA_OP_ACCUMULATE, MPI_LOR},
    [NBRMA_INTRINSIC_LXOR] = {MPIDI_NBRMA_OP_ACCUMULATE, MPI_LXOR},
    [NBRMA_INTRINSIC_BAND] = {MPIDI_NBRMA_OP_ACCUMULATE, MPI_BAND},
    [NBRMA_INTRINSIC_BOR] = {MPIDI_NBRMA_OP_ACCUMULATE, MPI_BOR},
    [NBRMA_INTRINSIC_BXOR] = {MPIDI_NBRMA_OP_ACCUMULATE, MPI_BXOR},
    [NBRMA_INTRINSIC_MAXLOC] = {MPIDI_NBRMA_OP_ACCUMULATE, MPI_MAXLOC},
    [NBRMA_INTRINSIC_MINLOC] = {MPIDI_NBRMA_OP_ACCUMULATE, MPI_MINLOC},
    [NBRMA_INTRINSIC_REPLACE] = {MPIDI_NBRMA_OP_ACCUMULATE, MPI_REPLACE},
    /* only MPI_Get_accumulate and MPI_Fetch_and_op take it */
    [NBRMA_INTRINSIC_NO_OP] = {MPIDI_NBRMA_OP_GET_ACCUMULATE, MPI_NO_OP},
    [NBRMA_INTRINSIC_CAS] = {MPIDI_NBRMA_OP_COMPARE_AND_SWAP, 0},
};

#define QUERY_CAPACITY(query) (sizeof((query)->ops) / sizeof((query)->ops[0]))

/* "sum, replace,cas" -> query->ops, else MPI_ERR_ARG. The MPIR_ERR_* calls
 * stay here with literal strings: maint/extracterrmsgs reads them from this
 * file and ends an argument at any comma outside parentheses and double
 * quotes, so their conditions hold none (not even ','). */
static int parse_ops(const char *ops, MPIDI_NBRMA_intrinsic_query_t * query)
{
    int mpi_errno = MPI_SUCCESS;
    nbrma_intrinsic_name_t names[QUERY_CAPACITY(query)];
    char bad_name[NBRMA_INTRINSIC_NAME_SIZE];
    nbrma_intrinsic_list_status_t status;

    status = nbrma_intrinsic_list_parse(ops, names, QUERY_CAPACITY(query), &query->n, bad_name);
    MPIR_ERR_CHKANDJUMP1(status == NBRMA_INTRINSIC_LIST_MALFORMED, mpi_errno, MPI_ERR_ARG,
                         "**nbrmaintrinsicop", "**nbrmaintrinsicop %s", ops);
    MPIR_ERR_CHKANDJUMP1(status == NBRMA_INTRINSIC_LIST_UNKNOWN_NAME, mpi_errno, MPI_ERR_ARG,
                         "**nbrmaintrinsicop", "**nbrmaintrinsicop %s", bad_name);
    MPIR_ERR_CHKANDJUMP(status == NBRMA_INTRINSIC_LIST_TOO_MANY, mpi_errno, MPI_ERR_ARG,
                        "**nbrmaintrinsicmany");
    for (size_t i = 0; i < query->n; i++) {
        query->ops[i].kind = intrinsic_ops[names[i]].kind;
        query->ops[i].op = intrinsic_ops[names[i]].op;
    }

  fn_exit:
    return mpi_errno;
  fn_fail:
    goto fn_exit;
}

int MPIR_Win_op_intrinsic_impl(const char *ops, MPI_Aint max_count, MPI_Datatype datatype,
                               MPIR_Win * win, int *flag)
{
    int mpi_errno = MPI_SUCCESS;
    MPIDI_NBRMA_intrinsic_query_t query = {.max_count = max_count,.datatype = datatype };
    const MPIDI_NBRMA_win_ops_t *kind = MPIDI_NBRMA_win_ops(win);

    mpi_errno = parse_ops(ops, &query);
    MPIR_ERR_CHECK(mpi_errno);
    /* kinds without the entry send every accumulate as an active message */
    *flag = kind->op_intrinsic && kind->op_intrinsic(win, &query);

  fn_exit:
    return mpi_errno;
  fn_fail:
    goto fn_exit;
}

/* --- notified RMA: MPIX_Win_create_notify and the calls on its counters ---- */

int MPIR_Put_notify_impl(const void *origin_addr, int origin_count, MPI_Datatype origin_datatype,
                         int target_rank, MPI_Aint target_disp, int target_count,
                         MPI_Datatype target_datatype, MPIR_Win * win, int notification_idx)
{
    MPIDI_NBRMA_rma_op_t op = { .kind = MPIDI_NBRMA_OP_PUT, NBRMA_ORIGIN_ARGS, NBRMA_NO_RESULT,
        NBRMA_TARGET_ARGS, NBRMA_OP_EXTRAS(NULL, 0, NULL, false)
    };
    return MPIDI_NBRMA_notify_rma(&op, notification_idx, win);
}

int MPIR_Get_notify_impl(void *origin_addr, int origin_count, MPI_Datatype origin_datatype,
                         int target_rank, MPI_Aint target_disp, int target_count,
                         MPI_Datatype target_datatype, MPIR_Win * win, int notification_idx)
{
    MPIDI_NBRMA_rma_op_t op = { .kind = MPIDI_NBRMA_OP_GET, NBRMA_NO_ORIGIN, NBRMA_GET_RESULT_ARGS,
        NBRMA_TARGET_ARGS, NBRMA_OP_EXTRAS(NULL, 0, NULL, false)
    };
    return MPIDI_NBRMA_notify_rma(&op, notification_idx, win);
}

int MPIR_Accumulate_notify_impl(const void *origin_addr, int origin_count,
                                MPI_Datatype origin_datatype, int target_rank,
                                MPI_Aint target_disp, int target_count,
                                MPI_Datatype target_datatype, MPI_Op op_, MPIR_Win * win,
                                int notification_idx)
{
    MPIDI_NBRMA_rma_op_t op = { .kind = MPIDI_NBRMA_OP_ACCUMULATE, NBRMA_ORIGIN_ARGS,
        NBRMA_NO_RESULT, NBRMA_TARGET_ARGS, NBRMA_OP_EXTRAS(NULL, op_, NULL, false)
    };
    return MPIDI_NBRMA_notify_rma(&op, notification_idx, win);
}
