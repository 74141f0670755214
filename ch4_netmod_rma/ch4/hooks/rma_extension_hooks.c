/*
 * mpich-nbrma: the implementations of the Quo Vadis calls (api/quovadis_api.txt)
 * that the bindings call: remote-completing request-based operations
 * (MPIX_Rrput, MPIX_Rraccumulate, MPIX_Rrget_accumulate) and the
 * intrinsic-accumulate query (MPIX_Win_op_intrinsic) and notified RMA
 * (MPIX_Win_create_notify and the calls on its counters: notify/);
 * MPIX_Win_dup_with_info is duplicate/dup_win.c's. Each becomes a
 * descriptor for the operations table of the window's kind
 * (MPIDI_NBRMA_win_ops: MPICH's for windows without component state).
 */

#include "mpidimpl.h"
#include "nbrma_win.h"
#include "nbrma_request.h"
#include "notify.h"
#include <strings.h>

/* --- MPIX_Rrput, MPIX_Rraccumulate, MPIX_Rrget_accumulate ----------------- */

static int remote_rma(const MPIDI_NBRMA_rma_op_t * op, MPIR_Win * win)
{
    /* the generated bindings return early for MPI_PROC_NULL only for MPI's own calls */
    if (op->target_rank == MPI_PROC_NULL)
        return MPIDI_NBRMA_request_create_complete(op->request);
    return MPIDI_NBRMA_win_ops(win)->rma(op, win);
}

/* The counts come as MPI_Count from bindings whose C arguments are int. */
int MPIR_Rrput_impl(const void *origin_addr, MPI_Count origin_count, MPI_Datatype origin_datatype,
                    int target_rank, MPI_Aint target_disp, MPI_Count target_count,
                    MPI_Datatype target_datatype, MPIR_Win * win, MPIR_Request ** request)
{
    MPIDI_NBRMA_rma_op_t op = {.kind = MPIDI_NBRMA_OP_PUT, .origin_addr = origin_addr,
        .origin_count = (int) origin_count, .origin_datatype = origin_datatype,
        .target_rank = target_rank, .target_disp = target_disp, .target_count = (int) target_count,
        .target_datatype = target_datatype, .request = request, .remote_completion = true
    };
    return remote_rma(&op, win);
}

int MPIR_Rraccumulate_impl(const void *origin_addr, MPI_Count origin_count,
                           MPI_Datatype origin_datatype, int target_rank, MPI_Aint target_disp,
                           MPI_Count target_count, MPI_Datatype target_datatype, MPI_Op op_,
                           MPIR_Win * win, MPIR_Request ** request)
{
    MPIDI_NBRMA_rma_op_t op = {.kind = MPIDI_NBRMA_OP_ACCUMULATE, .origin_addr = origin_addr,
        .origin_count = (int) origin_count, .origin_datatype = origin_datatype,
        .target_rank = target_rank, .target_disp = target_disp, .target_count = (int) target_count,
        .target_datatype = target_datatype, .op = op_, .request = request,
        .remote_completion = true
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
    MPIDI_NBRMA_rma_op_t op = {.kind = MPIDI_NBRMA_OP_GET_ACCUMULATE,
        .origin_addr = origin_addr, .origin_count = (int) origin_count,
        .origin_datatype = origin_datatype, .result_addr = result_addr,
        .result_count = (int) result_count, .result_datatype = result_datatype,
        .target_rank = target_rank, .target_disp = target_disp, .target_count = (int) target_count,
        .target_datatype = target_datatype, .op = op_, .request = request,
        .remote_completion = true
    };
    return remote_rma(&op, win);
}

/* --- MPIX_Win_op_intrinsic -------------------------------------------------- */

/* The paper's names: the predefined MPI_Op without "MPI_", and "cas". */
static const struct {
    const char *name;
    MPIDI_NBRMA_op_kind_t kind;
    MPI_Op op;
} op_names[] = {
    {"sum", MPIDI_NBRMA_OP_ACCUMULATE, MPI_SUM},
    {"prod", MPIDI_NBRMA_OP_ACCUMULATE, MPI_PROD},
    {"max", MPIDI_NBRMA_OP_ACCUMULATE, MPI_MAX},
    {"min", MPIDI_NBRMA_OP_ACCUMULATE, MPI_MIN},
    {"land", MPIDI_NBRMA_OP_ACCUMULATE, MPI_LAND},
    {"lor", MPIDI_NBRMA_OP_ACCUMULATE, MPI_LOR},
    {"lxor", MPIDI_NBRMA_OP_ACCUMULATE, MPI_LXOR},
    {"band", MPIDI_NBRMA_OP_ACCUMULATE, MPI_BAND},
    {"bor", MPIDI_NBRMA_OP_ACCUMULATE, MPI_BOR},
    {"bxor", MPIDI_NBRMA_OP_ACCUMULATE, MPI_BXOR},
    {"maxloc", MPIDI_NBRMA_OP_ACCUMULATE, MPI_MAXLOC},
    {"minloc", MPIDI_NBRMA_OP_ACCUMULATE, MPI_MINLOC},
    {"replace", MPIDI_NBRMA_OP_ACCUMULATE, MPI_REPLACE},
    /* only MPI_Get_accumulate and MPI_Fetch_and_op take it */
    {"no_op", MPIDI_NBRMA_OP_GET_ACCUMULATE, MPI_NO_OP},
    {"cas", MPIDI_NBRMA_OP_COMPARE_AND_SWAP, 0},
};

#define N_OP_NAMES (sizeof(op_names) / sizeof(op_names[0]))

#define SEPARATOR ','

/* "sum, replace,cas" -> query->ops; an unknown or empty name is MPI_ERR_ARG. */
static int parse_ops(const char *ops, MPIDI_NBRMA_intrinsic_query_t * query)
{
    int mpi_errno = MPI_SUCCESS;
    const char *p = ops;

    query->n = 0;
    for (;;) {
        char name[16];
        size_t len = 0, i;

        while (*p == ' ' || *p == '\t')
            p++;
        while (p[len] && p[len] != SEPARATOR && p[len] != ' ' && p[len] != '\t')
            len++;
        MPIR_ERR_CHKANDJUMP1(len == 0 || len >= sizeof(name), mpi_errno, MPI_ERR_ARG,
                             "**nbrmaintrinsicop", "**nbrmaintrinsicop %s", ops);
        memcpy(name, p, len);
        name[len] = '\0';
        for (i = 0; i < N_OP_NAMES; i++)
            if (strcasecmp(name, op_names[i].name) == 0)
                break;
        MPIR_ERR_CHKANDJUMP1(i == N_OP_NAMES, mpi_errno, MPI_ERR_ARG, "**nbrmaintrinsicop",
                             "**nbrmaintrinsicop %s", name);
        MPIR_ERR_CHKANDJUMP(query->n == sizeof(query->ops) / sizeof(query->ops[0]), mpi_errno,
                            MPI_ERR_ARG, "**nbrmaintrinsicmany");
        query->ops[query->n].kind = op_names[i].kind;
        query->ops[query->n].op = op_names[i].op;
        query->n++;
        p += len;
        while (*p == ' ' || *p == '\t')
            p++;
        if (*p == '\0')
            break;
        /* (the comma in a variable: MPICH's error-message extractor splits on it) */
        bool separated = *p == SEPARATOR;
        MPIR_ERR_CHKANDJUMP1(!separated, mpi_errno, MPI_ERR_ARG, "**nbrmaintrinsicop",
                             "**nbrmaintrinsicop %s", ops);
        p++;
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
    MPIDI_NBRMA_rma_op_t op = {.kind = MPIDI_NBRMA_OP_PUT, .origin_addr = origin_addr,
        .origin_count = origin_count, .origin_datatype = origin_datatype,
        .target_rank = target_rank, .target_disp = target_disp, .target_count = target_count,
        .target_datatype = target_datatype
    };
    return MPIDI_NBRMA_notify_rma(&op, notification_idx, win);
}

int MPIR_Get_notify_impl(void *origin_addr, int origin_count, MPI_Datatype origin_datatype,
                         int target_rank, MPI_Aint target_disp, int target_count,
                         MPI_Datatype target_datatype, MPIR_Win * win, int notification_idx)
{
    /* a get's buffer is in the result fields (op_hooks.c) */
    MPIDI_NBRMA_rma_op_t op = {.kind = MPIDI_NBRMA_OP_GET, .result_addr = origin_addr,
        .result_count = origin_count, .result_datatype = origin_datatype,
        .target_rank = target_rank, .target_disp = target_disp, .target_count = target_count,
        .target_datatype = target_datatype
    };
    return MPIDI_NBRMA_notify_rma(&op, notification_idx, win);
}

int MPIR_Accumulate_notify_impl(const void *origin_addr, int origin_count,
                                MPI_Datatype origin_datatype, int target_rank,
                                MPI_Aint target_disp, int target_count,
                                MPI_Datatype target_datatype, MPI_Op op_, MPIR_Win * win,
                                int notification_idx)
{
    MPIDI_NBRMA_rma_op_t op = {.kind = MPIDI_NBRMA_OP_ACCUMULATE, .origin_addr = origin_addr,
        .origin_count = origin_count, .origin_datatype = origin_datatype,
        .target_rank = target_rank, .target_disp = target_disp, .target_count = target_count,
        .target_datatype = target_datatype, .op = op_
    };
    return MPIDI_NBRMA_notify_rma(&op, notification_idx, win);
}
