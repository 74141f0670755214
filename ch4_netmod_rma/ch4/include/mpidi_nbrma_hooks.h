/*
 * mpich-nbrma: the entry points the patch-set calls from MPICH's own code, all
 * hidden inside libmpi (patch 0036's inline ones: mpidi_nbrma_agent_guard.h).
 * Window hooks go to the table of the window's kind (nbrma_win.h, ch4/hooks/).
 */

#ifndef MPIDI_NBRMA_HOOKS_H_INCLUDED
#define MPIDI_NBRMA_HOOKS_H_INCLUDED

/* End of MPIDIG_am_init(): registers the active-message handlers in the same
 * order everywhere, so that their dynamic ids agree on every process. */
int MPIDI_NBRMA_init_hook(void);

/* MPIDI_UCX_mpi_finalize_hook (patch 0026): the PMI barrier after the
 * endpoints' closes, progressing the UCX workers meanwhile (finalize_hooks.c). */
int MPIDI_NBRMA_finalize_barrier_hook(void);

/* MPIDI_UCX_mpi_finalize_hook (patch 0033), before ucp_cleanup: UCX memory the
 * program still holds becomes its own (memory_hooks.c). */
void MPIDI_NBRMA_finalize_memory_hook(void);

/* MPIDI_UCX_init_local (patch 0031), before ucp_init: endpoints learn their
 * peers' ids at creation, not at a later send whose wireup would hold every
 * RMA operation toward that peer until it progresses (ucx_config_hooks.c). */
struct ucp_config;
void MPIDI_NBRMA_ucx_config_hook(struct ucp_config *config);

/* MPIDI_UCX_init_local (patch 0035): UCP features the progress agent needs
 * (UCP_FEATURE_WAKEUP). */
unsigned long long MPIDI_NBRMA_ucx_features_hook(void);

/* MPID_Init/Finalize_async_thread (patch 0035): the progress agent, asleep
 * until UCX has an event for this process, instead of MPICH's spinning thread. */
int MPIDI_NBRMA_async_start_hook(void);
int MPIDI_NBRMA_async_stop_hook(void);

/* MPICH's waiting loops (patch 0030), per idle round, outside MPICH's global
 * section: yield after MPIR_CVAR_NBRMA_YIELD_AFTER_IDLE_US, park (sleep while the
 * agent serves) after MPIR_CVAR_NBRMA_PARK_AFTER_US (common/nbrma_progress.c). */
void MPIDI_NBRMA_progress_idle(void);
/* Where such a loop begins: its idle time restarts from zero. */
void MPIDI_NBRMA_progress_wait_begins(void);
/* MPI_Test and kin (MPID_Progress_polled, patch 0044): unless `done`, an idle
 * round of the application's own waiting loop, which yields as above but never
 * parks (the caller holds no safe point). */
void MPIDI_NBRMA_progress_polled(int done);
/* MPIDI_NM_progress (patch 0042), the component's worker loops: UCX events count
 * as progress (a peer's RMA that UCX emulates completes no MPICH request). */
void MPIDI_NBRMA_ucx_events_handled(unsigned events);

/* End of MPIDIG's win_init(), before creation's closing barrier: the kind's
 * state exists before any peer's protocol message can arrive. */
int MPIDI_NBRMA_win_init_hook(MPIR_Win * win, MPIR_Info * info);

/* MPIDIG_mpi_win_attach() after the netmod's hook, first in _detach(): the
 * dynamic windows' rkey cache learns of the region, or tells the key holders. */
int MPIDI_NBRMA_win_attach_hook(MPIR_Win * win, void *base, MPI_Aint size);
int MPIDI_NBRMA_win_detach_hook(MPIR_Win * win, const void *base);

/* UCX-allocated memory, which its shared-memory transports reach without the
 * target's CPU (../memory/ucx_memory.h). MPID_Alloc_mem() tries the alloc hook
 * first for memory without a mpich_buf_type (NULL: MPICH allocates);
 * MPID_Free_mem() tries the free hook first (false: not ours). */
void *MPIDI_NBRMA_alloc_mem_hook(MPI_Aint size, MPIR_Info * info);
bool MPIDI_NBRMA_free_mem_hook(void *base);
/* MPIDIG_mpi_win_allocate(), collective. *handled: *base_ptr is UCX memory
 * (NULL for size 0) on every process, and MPICH allocates nothing. */
int MPIDI_NBRMA_win_allocate_memory_hook(MPIR_Win * win, MPIR_Info * info, MPI_Aint size,
                                         void **base_ptr, int *handled);
/* Where MPIDIG frees an allocated window's memory: true if UCX's, freed here. */
bool MPIDI_NBRMA_win_release_memory_hook(MPIR_Win * win);
/* ucx_win.c, before it maps window memory: true if UCX memory, whose mapping
 * *mem_h serves (the netmod must neither map nor unmap it). */
struct ucp_mem;
bool MPIDI_NBRMA_win_memory_mapping(void *base, MPI_Aint length, struct ucp_mem **mem_h);
/* The netmod's ucp_mem_map/unmap and rkey unpack/destroy (ucx_win.c, patch
 * 0034), remembered so that MPI_Finalize releases what a window never freed
 * left (ucp_cleanup aborts the process while a mapping is left; the keys go
 * before the workers: MPIDI_NBRMA_finalize_rkeys_hook, ucx_init.c). */
struct ucp_mem_map_params;
int MPIDI_NBRMA_win_map_hook(const struct ucp_mem_map_params *params, struct ucp_mem **mem_h);
void MPIDI_NBRMA_win_unmap_hook(struct ucp_mem *mem_h);
struct ucp_ep;
struct ucp_rkey;
int MPIDI_NBRMA_win_rkey_unpack_hook(struct ucp_ep *ep, const void *packed,
                                     struct ucp_rkey **rkey);
void MPIDI_NBRMA_win_rkey_destroy_hook(struct ucp_rkey *rkey);
void MPIDI_NBRMA_finalize_rkeys_hook(void);
/* End of MPIDIG's window creation, before its barrier: memory and keys known. */
int MPIDI_NBRMA_win_memory_ready_hook(MPIR_Win * win);

/* MPIDIG's target, before it applies an accumulate (origin packed; `fetched`:
 * get_accumulate's old values, packed, else NULL) or compare-and-swap
 * (`compare_result`: compare value in, old value out): *applied = 1 if applied
 * here, atomically with respect to origins' UCX atomics (patch 0025). */
int MPIDI_NBRMA_acc_apply_hook(MPIR_Win * win, const void *origin, MPI_Aint origin_count,
                               MPI_Datatype origin_datatype, void *target_addr,
                               MPI_Aint target_count, MPI_Datatype target_datatype, MPI_Op op,
                               void *fetched, int *applied);
int MPIDI_NBRMA_cswap_apply_hook(MPIR_Win * win, void *target_addr, const void *origin,
                                 void *compare_result, MPI_Datatype datatype, int *applied);

/* Rule R7 (patches 0037, 0038): MPIDIG_do_put/_get take the offered counter
 * increment (0: none) into their header; the target applies it once a put's
 * data is in place (before its ack) or a get's reply was sent. */
int MPIDI_NBRMA_notice_take(void);
void MPIDI_NBRMA_notice_apply(MPIR_Win * win, int notice);

/* First in MPID_Win_free(): completes pending nonblocking requests, frees the
 * state; a memory-handle window, unknown to MPIDIG, goes entirely (*handled). */
int MPIDI_NBRMA_win_free_hook(MPIR_Win ** win_ptr, int *handled);
/* Whether the component's last collective on `win` already met every process
 * MPIDIG's barrier of this free would (common/nbrma_win_meeting.h, patch 0039). */
bool MPIDI_NBRMA_win_met(MPIR_Win * win);

int MPIDI_NBRMA_win_get_info(MPIR_Win * win, MPIR_Info ** info_p_p);
int MPIDI_NBRMA_win_set_info(MPIR_Win * win, MPIR_Info * info);

/* The hooks of ch4_rma.h and ch4_win.h for windows with MPIDIG_WIN(win, nbrma). */
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
