/*
 * mpich-nbrma: the hooks of ch4_rma.h (patch 0013): each MPID_ RMA operation of
 * a window with component state becomes a descriptor (nbrma_win.h) for the
 * operations table of the window's kind.
 */

#include "mpidimpl.h"
#include "mpidi_nbrma_hooks.h"
#include "nbrma_win.h"

static int rma(const MPIDI_NBRMA_rma_op_t * op, MPIR_Win * win)
{
    return MPIDI_NBRMA_WIN_STATE(win)->ops->rma(op, win);
}

int MPIDI_NBRMA_put(const void *origin_addr, int origin_count, MPI_Datatype origin_datatype,
                    int target_rank, MPI_Aint target_disp, int target_count,
                    MPI_Datatype target_datatype, MPIR_Win * win)
{
    MPIDI_NBRMA_rma_op_t op = { .kind = MPIDI_NBRMA_OP_PUT, NBRMA_ORIGIN_ARGS, NBRMA_NO_RESULT,
        NBRMA_TARGET_ARGS, NBRMA_OP_EXTRAS(NULL, 0, NULL, false)
    };
    return rma(&op, win);
}

int MPIDI_NBRMA_rput(const void *origin_addr, int origin_count, MPI_Datatype origin_datatype,
                     int target_rank, MPI_Aint target_disp, int target_count,
                     MPI_Datatype target_datatype, MPIR_Win * win, MPIR_Request ** request)
{
    MPIDI_NBRMA_rma_op_t op = { .kind = MPIDI_NBRMA_OP_PUT, NBRMA_ORIGIN_ARGS, NBRMA_NO_RESULT,
        NBRMA_TARGET_ARGS, NBRMA_OP_EXTRAS(NULL, 0, request, false)
    };
    return rma(&op, win);
}

int MPIDI_NBRMA_get(void *origin_addr, int origin_count, MPI_Datatype origin_datatype,
                    int target_rank, MPI_Aint target_disp, int target_count,
                    MPI_Datatype target_datatype, MPIR_Win * win)
{
    MPIDI_NBRMA_rma_op_t op = { .kind = MPIDI_NBRMA_OP_GET, NBRMA_NO_ORIGIN, NBRMA_GET_RESULT_ARGS,
        NBRMA_TARGET_ARGS, NBRMA_OP_EXTRAS(NULL, 0, NULL, false)
    };
    return rma(&op, win);
}

int MPIDI_NBRMA_rget(void *origin_addr, int origin_count, MPI_Datatype origin_datatype,
                     int target_rank, MPI_Aint target_disp, int target_count,
                     MPI_Datatype target_datatype, MPIR_Win * win, MPIR_Request ** request)
{
    MPIDI_NBRMA_rma_op_t op = { .kind = MPIDI_NBRMA_OP_GET, NBRMA_NO_ORIGIN, NBRMA_GET_RESULT_ARGS,
        NBRMA_TARGET_ARGS, NBRMA_OP_EXTRAS(NULL, 0, request, false)
    };
    return rma(&op, win);
}

int MPIDI_NBRMA_accumulate(const void *origin_addr, int origin_count,
                           MPI_Datatype origin_datatype, int target_rank, MPI_Aint target_disp,
                           int target_count, MPI_Datatype target_datatype, MPI_Op op_,
                           MPIR_Win * win)
{
    MPIDI_NBRMA_rma_op_t op = { .kind = MPIDI_NBRMA_OP_ACCUMULATE, NBRMA_ORIGIN_ARGS,
        NBRMA_NO_RESULT, NBRMA_TARGET_ARGS, NBRMA_OP_EXTRAS(NULL, op_, NULL, false)
    };
    return rma(&op, win);
}

int MPIDI_NBRMA_raccumulate(const void *origin_addr, int origin_count,
                            MPI_Datatype origin_datatype, int target_rank, MPI_Aint target_disp,
                            int target_count, MPI_Datatype target_datatype, MPI_Op op_,
                            MPIR_Win * win, MPIR_Request ** request)
{
    MPIDI_NBRMA_rma_op_t op = { .kind = MPIDI_NBRMA_OP_ACCUMULATE, NBRMA_ORIGIN_ARGS,
        NBRMA_NO_RESULT, NBRMA_TARGET_ARGS, NBRMA_OP_EXTRAS(NULL, op_, request, false)
    };
    return rma(&op, win);
}

int MPIDI_NBRMA_get_accumulate(const void *origin_addr, int origin_count,
                               MPI_Datatype origin_datatype, void *result_addr, int result_count,
                               MPI_Datatype result_datatype, int target_rank,
                               MPI_Aint target_disp, int target_count,
                               MPI_Datatype target_datatype, MPI_Op op_, MPIR_Win * win)
{
    MPIDI_NBRMA_rma_op_t op = { .kind = MPIDI_NBRMA_OP_GET_ACCUMULATE, NBRMA_ORIGIN_ARGS,
        NBRMA_RESULT_ARGS, NBRMA_TARGET_ARGS, NBRMA_OP_EXTRAS(NULL, op_, NULL, false)
    };
    return rma(&op, win);
}

int MPIDI_NBRMA_rget_accumulate(const void *origin_addr, int origin_count,
                                MPI_Datatype origin_datatype, void *result_addr,
                                int result_count, MPI_Datatype result_datatype, int target_rank,
                                MPI_Aint target_disp, int target_count,
                                MPI_Datatype target_datatype, MPI_Op op_, MPIR_Win * win,
                                MPIR_Request ** request)
{
    MPIDI_NBRMA_rma_op_t op = { .kind = MPIDI_NBRMA_OP_GET_ACCUMULATE, NBRMA_ORIGIN_ARGS,
        NBRMA_RESULT_ARGS, NBRMA_TARGET_ARGS, NBRMA_OP_EXTRAS(NULL, op_, request, false)
    };
    return rma(&op, win);
}

/* The single-element atomics carry their datatype as the target datatype. */
int MPIDI_NBRMA_fetch_and_op(const void *origin_addr, void *result_addr, MPI_Datatype datatype,
                             int target_rank, MPI_Aint target_disp, MPI_Op op_, MPIR_Win * win)
{
    MPIDI_NBRMA_rma_op_t op = { .kind = MPIDI_NBRMA_OP_FETCH_AND_OP, .origin_addr = origin_addr,
        .origin_count = 0, .origin_datatype = 0, .result_addr = result_addr, .result_count = 0,
        .result_datatype = 0, .target_rank = target_rank, .target_disp = target_disp,
        .target_count = 1, .target_datatype = datatype, NBRMA_OP_EXTRAS(NULL, op_, NULL, false)
    };
    return rma(&op, win);
}

int MPIDI_NBRMA_compare_and_swap(const void *origin_addr, const void *compare_addr,
                                 void *result_addr, MPI_Datatype datatype, int target_rank,
                                 MPI_Aint target_disp, MPIR_Win * win)
{
    MPIDI_NBRMA_rma_op_t op = { .kind = MPIDI_NBRMA_OP_COMPARE_AND_SWAP,
        .origin_addr = origin_addr, .origin_count = 0, .origin_datatype = 0,
        .result_addr = result_addr, .result_count = 0, .result_datatype = 0,
        .target_rank = target_rank, .target_disp = target_disp, .target_count = 1,
        .target_datatype = datatype, NBRMA_OP_EXTRAS(compare_addr, 0, NULL, false)
    };
    return rma(&op, win);
}
