/*
 * mpich-nbrma: the entry points that the patch-set calls from MPICH's own code
 * (the patches include this header, and patch 0036 the inline turn-taking of
 * mpidi_nbrma_agent_guard.h). Everything declared here is internal to
 * libmpi (hidden visibility).
 *
 * Each entry point first looks at MPIDIG_WIN(win, nbrma), the component's
 * state of the window (nbrma_win.h), and hands the call to the operations
 * table of the window's kind (ch4/hooks/).
 */

#ifndef MPIDI_NBRMA_HOOKS_H_INCLUDED
#define MPIDI_NBRMA_HOOKS_H_INCLUDED

/* Called once per process at the end of MPIDIG_am_init(): registers the
 * component's active-message handlers, in the same order everywhere, so that
 * their dynamic ids agree on every process. */
int MPIDI_NBRMA_init_hook(void);

/* MPIDI_UCX_mpi_finalize_hook (patch 0026): its PMI barrier after the
 * endpoints' closes, with the UCX workers progressed meanwhile
 * (finalize_hooks.c). */
int MPIDI_NBRMA_finalize_barrier_hook(void);

/* MPIDI_UCX_mpi_finalize_hook (patch 0033): just before ucp_cleanup, the
 * memory UCX allocated for MPI_Alloc_mem and MPI_Win_allocate that the
 * program still holds becomes the program's own (memory_hooks.c). */
void MPIDI_NBRMA_finalize_memory_hook(void);

/* MPIDI_UCX_init_local (patch 0031): adjusts the UCX configuration before
 * ucp_init, so that endpoints learn their peers' ids when they are created
 * instead of at a later send, whose wireup would hold every RMA operation
 * toward that peer until the peer progresses (ucx_config_hooks.c). */
struct ucp_config;
void MPIDI_NBRMA_ucx_config_hook(struct ucp_config *config);

/* MPIDI_UCX_init_local (patch 0035): UCP features the component needs beyond
 * MPICH's: UCP_FEATURE_WAKEUP when the progress agent runs
 * (common/nbrma_progress_agent.c). */
unsigned long long MPIDI_NBRMA_ucx_features_hook(void);

/* MPID_Init_async_thread and MPID_Finalize_async_thread (patch 0035), called
 * when MPIR_CVAR_ASYNC_PROGRESS or MPIR_CVAR_NBRMA_ASYNC_PROGRESS is set: the
 * progress agent, a thread asleep until UCX has an event for this process,
 * instead of MPICH's thread that spins on the progress engine. */
int MPIDI_NBRMA_async_start_hook(void);
int MPIDI_NBRMA_async_stop_hook(void);

/* Called by MPICH's waiting loops (MPID_Progress_wait, MPIDIU_PROGRESS_WHILE:
 * patch 0030) once per round without progress, right after they yielded
 * MPICH's global critical section: yields the processor once the wait
 * lasted MPIR_CVAR_NBRMA_YIELD_AFTER_IDLE_US, and parks (sleeps outside MPI
 * while the progress agent serves) once it lasted
 * MPIR_CVAR_NBRMA_PARK_AFTER_US (common/nbrma_progress.c). */
void MPIDI_NBRMA_progress_idle(void);
/* Called where such a loop begins (MPID_Progress_start, the two macros): the
 * wait's idle time starts from zero. */
void MPIDI_NBRMA_progress_wait_begins(void);
/* Called by MPI_Test and its kin (MPID_Progress_polled, patch 0044) after
 * the device's test: `done`, some request was done; else the test is an idle
 * round of the application's own waiting loop, which yields as the loops
 * above do (never parks: the caller holds no safe point). */
void MPIDI_NBRMA_progress_polled(int done);
/* Called by MPIDI_NM_progress (patch 0042), and by the component's own
 * loops that call ucp_worker_progress, when it handled `events`: they count
 * as progress for those waits, as MPICH's completions do (a peer's RMA that
 * UCX emulates completes no request of MPICH's). */
void MPIDI_NBRMA_ucx_events_handled(unsigned events);

/* Called at the end of MPIDIG's win_init() for every new window, before the
 * window's creation ends in a barrier: gives the window the component state of
 * its kind (engine windows, dynamic windows), so that no peer's protocol
 * message can arrive before it exists. */
int MPIDI_NBRMA_win_init_hook(MPIR_Win * win, MPIR_Info * info);

/* Called in MPIDIG_mpi_win_attach() after the netmod's hook, and first thing in
 * MPIDIG_mpi_win_detach(): the rkey cache of dynamic windows learns of the
 * region and, at the detach, tells the origins that hold its key. */
int MPIDI_NBRMA_win_attach_hook(MPIR_Win * win, void *base, MPI_Aint size);
int MPIDI_NBRMA_win_detach_hook(MPIR_Win * win, const void *base);

/* Window memory that UCX allocated, which its shared-memory transports reach
 * for put, get and atomics without the target's CPU (../memory/ucx_memory.h).
 *
 * MPID_Alloc_mem() asks the alloc hook first for memory without a
 * mpich_buf_type (NULL: MPICH allocates it); MPID_Free_mem() gives the memory
 * to the free hook first (false: not the component's). */
void *MPIDI_NBRMA_alloc_mem_hook(MPI_Aint size, MPIR_Info * info);
bool MPIDI_NBRMA_free_mem_hook(void *base);
/* Called in MPIDIG_mpi_win_allocate() before MPICH allocates the memory;
 * collective. *handled: *base_ptr is UCX memory (or NULL for size 0) on every
 * process, and MPICH allocates nothing. */
int MPIDI_NBRMA_win_allocate_memory_hook(MPIR_Win * win, MPIR_Info * info, MPI_Aint size,
                                         void **base_ptr, int *handled);
/* Called where MPIDIG frees an allocated window's memory: true if it was UCX
 * memory and is freed now. */
bool MPIDI_NBRMA_win_release_memory_hook(MPIR_Win * win);
/* Called by the UCX netmod's window creation (ucx_win.c) before it maps the
 * window's memory: true if the range is UCX memory, whose own mapping
 * *mem_h then serves (the netmod must neither map nor unmap it). */
struct ucp_mem;
bool MPIDI_NBRMA_win_memory_mapping(void *base, MPI_Aint length, struct ucp_mem **mem_h);
/* The UCX netmod's own mapping of a window's memory and its release
 * (ucx_win.c, patch 0034): ucp_mem_map/ucp_mem_unmap with the mapping
 * remembered, so that MPI_Finalize releases it for a window the program
 * never freed (ucp_cleanup aborts the process while one is left). */
struct ucp_mem_map_params;
int MPIDI_NBRMA_win_map_hook(const struct ucp_mem_map_params *params, struct ucp_mem **mem_h);
void MPIDI_NBRMA_win_unmap_hook(struct ucp_mem *mem_h);
/* The same for the peers' keys of the netmod's windows (ucx_win.c, patch
 * 0034): ucp_ep_rkey_unpack/ucp_rkey_destroy with the key remembered, so
 * that MPI_Finalize destroys those of a window never freed before the
 * workers go (MPIDI_NBRMA_finalize_rkeys_hook, ucx_init.c). */
struct ucp_ep;
struct ucp_rkey;
int MPIDI_NBRMA_win_rkey_unpack_hook(struct ucp_ep *ep, const void *packed,
                                     struct ucp_rkey **rkey);
void MPIDI_NBRMA_win_rkey_destroy_hook(struct ucp_rkey *rkey);
void MPIDI_NBRMA_finalize_rkeys_hook(void);
/* Called at the end of MPIDIG's window creation, after the netmod's hook and
 * before the closing barrier (collective): memory and keys are known. */
int MPIDI_NBRMA_win_memory_ready_hook(MPIR_Win * win);

/* Called by MPIDIG's target side before it applies an accumulate it received
 * (origin packed; get_accumulate: `fetched` receives the old values, packed,
 * else NULL) or a compare-and-swap (`compare_result` holds the compare value
 * and receives the old one): *applied = 1 if the component did, atomically
 * with respect to UCX atomics of origins on the same memory (patch 0025). */
int MPIDI_NBRMA_acc_apply_hook(MPIR_Win * win, const void *origin, MPI_Aint origin_count,
                               MPI_Datatype origin_datatype, void *target_addr,
                               MPI_Aint target_count, MPI_Datatype target_datatype, MPI_Op op,
                               void *fetched, int *applied);
int MPIDI_NBRMA_cswap_apply_hook(MPIR_Win * win, void *target_addr, const void *origin,
                                 void *compare_result, MPI_Datatype datatype, int *applied);

/* A notified put's or get's counter increment inside MPIDIG's message
 * (patches 0037 and 0038, rule R7): MPIDIG_do_put and MPIDIG_do_get take the
 * increment the component offered for this operation (0: none) into the
 * message's header; the target applies it to `win`'s counters once a put's
 * data is in place (before it acknowledges the put) or a get's reply was
 * sent (its data read). */
int MPIDI_NBRMA_notice_take(void);
void MPIDI_NBRMA_notice_apply(MPIR_Win * win, int notice);

/* Called first thing in MPID_Win_free() for every window: drives the window's
 * pending nonblocking requests to completion and frees the component's state.
 * A window MPIDIG knows nothing about (a memory-handle window) is freed here
 * entirely: then *handled is set and MPID_Win_free() returns. */
int MPIDI_NBRMA_win_free_hook(MPIR_Win ** win_ptr, int *handled);
/* Whether the component's last collective on `win` already met every
 * process where MPIDIG's barrier of this free would (common/
 * nbrma_win_meeting.h; patch 0039); asked once per free. */
bool MPIDI_NBRMA_win_met(MPIR_Win * win);

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
