/*
 * mpich-nbrma: nonblocking RMA synchronization for MPICH's CH4 device.
 *
 * The entry points that the patch-set calls from MPICH's own code. Everything
 * declared here is internal to libmpi (hidden visibility).
 */

#ifndef MPIDI_NBRMA_HOOKS_H_INCLUDED
#define MPIDI_NBRMA_HOOKS_H_INCLUDED

/* Called at the end of MPIDIG's win_init() for every new window, before the
 * window's creation ends in a barrier: attaches the nonblocking-epoch engine
 * to the windows it drives (nbrma_epochs.c). */
int MPIDI_NBRMA_win_init_hook(MPIR_Win * win, MPIR_Info * info);

/* Called in MPIDIG_mpi_win_attach() after the netmod's hook, and first thing in
 * MPIDIG_mpi_win_detach(): a dynamic window registers attached memory for RDMA
 * and, at the detach, tells the origins that cached its key (nbrma_memhandle.c). */
int MPIDI_NBRMA_win_attach_hook(MPIR_Win * win, void *base, MPI_Aint size);
int MPIDI_NBRMA_win_detach_hook(MPIR_Win * win, const void *base);

/* Called first thing in MPID_Win_free(): drives every pending nonblocking
 * synchronization request of `win` to completion, so no request outlives its
 * window. */
int MPIDI_NBRMA_win_free_hook(MPIR_Win * win);

/* Called in MPID_Win_free() after MPIDI_NBRMA_win_free_hook() for a window with
 * MPIDIG_WIN(win, nbrma) set: frees the component's state of the window. A
 * window MPIDIG knows nothing about (a memory-handle window) is freed here
 * entirely: then *handled is set and MPID_Win_free() returns. */
int MPIDI_NBRMA_win_free_state(MPIR_Win ** win_ptr, int *handled);

/* MPID_Win_get_info()/MPID_Win_set_info() of a window with MPIDIG_WIN(win, nbrma) set. */
int MPIDI_NBRMA_win_get_info(MPIR_Win * win, MPIR_Info ** info_p_p);
int MPIDI_NBRMA_win_set_info(MPIR_Win * win, MPIR_Info * info);

/* The hooks of ch4_rma.h and ch4_win.h: each MPID_ RMA operation and
 * synchronization call of a window with MPIDIG_WIN(win, nbrma) set goes to the
 * function of the same name here, with the same arguments. */
int MPIDI_NBRMA_put(const void *origin_addr, int origin_count, MPI_Datatype origin_datatype,
                    int target_rank, MPI_Aint target_disp, int target_count,
                    MPI_Datatype target_datatype, MPIR_Win * win);
int MPIDI_NBRMA_get(void *origin_addr, int origin_count, MPI_Datatype origin_datatype,
                    int target_rank, MPI_Aint target_disp, int target_count,
                    MPI_Datatype target_datatype, MPIR_Win * win);
int MPIDI_NBRMA_accumulate(const void *origin_addr, int origin_count,
                           MPI_Datatype origin_datatype, int target_rank, MPI_Aint target_disp,
                           int target_count, MPI_Datatype target_datatype, MPI_Op op,
                           MPIR_Win * win);
int MPIDI_NBRMA_get_accumulate(const void *origin_addr, int origin_count,
                               MPI_Datatype origin_datatype, void *result_addr, int result_count,
                               MPI_Datatype result_datatype, int target_rank,
                               MPI_Aint target_disp, int target_count,
                               MPI_Datatype target_datatype, MPI_Op op, MPIR_Win * win);
int MPIDI_NBRMA_compare_and_swap(const void *origin_addr, const void *compare_addr,
                                 void *result_addr, MPI_Datatype datatype, int target_rank,
                                 MPI_Aint target_disp, MPIR_Win * win);
int MPIDI_NBRMA_fetch_and_op(const void *origin_addr, void *result_addr, MPI_Datatype datatype,
                             int target_rank, MPI_Aint target_disp, MPI_Op op, MPIR_Win * win);
int MPIDI_NBRMA_rput(const void *origin_addr, int origin_count, MPI_Datatype origin_datatype,
                     int target_rank, MPI_Aint target_disp, int target_count,
                     MPI_Datatype target_datatype, MPIR_Win * win, MPIR_Request ** request);
int MPIDI_NBRMA_rget(void *origin_addr, int origin_count, MPI_Datatype origin_datatype,
                     int target_rank, MPI_Aint target_disp, int target_count,
                     MPI_Datatype target_datatype, MPIR_Win * win, MPIR_Request ** request);
int MPIDI_NBRMA_raccumulate(const void *origin_addr, int origin_count,
                            MPI_Datatype origin_datatype, int target_rank, MPI_Aint target_disp,
                            int target_count, MPI_Datatype target_datatype, MPI_Op op,
                            MPIR_Win * win, MPIR_Request ** request);
int MPIDI_NBRMA_rget_accumulate(const void *origin_addr, int origin_count,
                                MPI_Datatype origin_datatype, void *result_addr,
                                int result_count, MPI_Datatype result_datatype, int target_rank,
                                MPI_Aint target_disp, int target_count,
                                MPI_Datatype target_datatype, MPI_Op op, MPIR_Win * win,
                                MPIR_Request ** request);

int MPIDI_NBRMA_win_fence(int assert, MPIR_Win * win);
int MPIDI_NBRMA_win_post(MPIR_Group * group, int assert, MPIR_Win * win);
int MPIDI_NBRMA_win_start(MPIR_Group * group, int assert, MPIR_Win * win);
int MPIDI_NBRMA_win_complete(MPIR_Win * win);
int MPIDI_NBRMA_win_wait(MPIR_Win * win);
int MPIDI_NBRMA_win_test(MPIR_Win * win, int *flag);
int MPIDI_NBRMA_win_lock(int lock_type, int rank, int assert, MPIR_Win * win);
int MPIDI_NBRMA_win_unlock(int rank, MPIR_Win * win);
int MPIDI_NBRMA_win_lock_all(int assert, MPIR_Win * win);
int MPIDI_NBRMA_win_unlock_all(MPIR_Win * win);
int MPIDI_NBRMA_win_flush(int rank, MPIR_Win * win);
int MPIDI_NBRMA_win_flush_all(MPIR_Win * win);
int MPIDI_NBRMA_win_flush_local(int rank, MPIR_Win * win);
int MPIDI_NBRMA_win_flush_local_all(MPIR_Win * win);
int MPIDI_NBRMA_win_sync(MPIR_Win * win);

#endif /* MPIDI_NBRMA_HOOKS_H_INCLUDED */
