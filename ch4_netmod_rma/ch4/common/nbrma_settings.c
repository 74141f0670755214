/*
 * mpich-nbrma: the component's CVARs and info-key helpers (nbrma_settings.h);
 * the values of info keys are parsed by formats/user_strings.c.
 */

#include "mpidimpl.h"
#include "nbrma_settings.h"
#include "user_strings.h"

/*
=== BEGIN_MPI_T_CVAR_INFO_BLOCK ===

categories:
    - name        : NBRMA
      description : nonblocking RMA patch-set (mpich-nbrma) of the CH4 UCX netmod

cvars:
    - name        : MPIR_CVAR_NBRMA_EPOCHS
      category    : NBRMA
      type        : boolean
      default     : true
      class       : none
      verbosity   : MPI_T_VERBOSITY_USER_BASIC
      scope       : MPI_T_SCOPE_ALL_EQ
      description : >-
        If true, the nonblocking-epoch engine drives the epochs of every window
        made by MPI_Win_create, MPI_Win_allocate or MPI_Win_allocate_shared
        (the MPIX_Win_i* epoch calls work on them), unless the window's info key
        mpich_nbrma_epochs says otherwise. If false, such windows keep MPICH's
        own synchronization unless their info key asks for the engine. Must be
        the same on every process.

    - name        : MPIR_CVAR_NBRMA_WHOLE_LOCK_EPOCHS
      category    : NBRMA
      type        : boolean
      default     : true
      class       : none
      verbosity   : MPI_T_VERBOSITY_USER_BASIC
      scope       : MPI_T_SCOPE_LOCAL
      description : >-
        If true, a lock epoch that the application closed while it waited in
        the deferred queue travels whole with its lock request when all its
        operations are small puts and accumulates (one round trip instead of
        lock, grant, operations and release). The info key
        mpich_nbrma_whole_lock_epochs overrides it per window.

    - name        : MPIR_CVAR_NBRMA_DYNAMIC_RDMA
      category    : NBRMA
      type        : boolean
      default     : true
      class       : none
      verbosity   : MPI_T_VERBOSITY_USER_BASIC
      scope       : MPI_T_SCOPE_LOCAL
      description : >-
        If true, dynamic windows reach attached memory with RDMA through an
        rkey cache (contiguous put and get) instead of an active message per
        operation. The info key mpich_nbrma_dynamic_rdma overrides it per
        window.

    - name        : MPIR_CVAR_NBRMA_UCX_MEMORY
      category    : NBRMA
      type        : boolean
      default     : true
      class       : none
      verbosity   : MPI_T_VERBOSITY_USER_BASIC
      scope       : MPI_T_SCOPE_LOCAL
      description : >-
        If true, MPI_Win_allocate and MPI_Alloc_mem return memory that UCX
        allocated, which UCX's shared-memory transports reach for put, get and
        atomics without the target's CPU (windows over other memory need the
        target to progress). The info key mpich_nbrma_ucx_memory of
        MPI_Win_allocate or MPI_Alloc_mem overrides it per call; a window uses
        UCX memory only where every process of MPI_Win_allocate agrees.

    - name        : MPIR_CVAR_NBRMA_NATIVE_ATOMICS
      category    : NBRMA
      type        : boolean
      default     : true
      class       : none
      verbosity   : MPI_T_VERBOSITY_USER_BASIC
      scope       : MPI_T_SCOPE_LOCAL
      description : >-
        If true, accumulates of 4- and 8-byte integers with MPI_SUM, MPI_BAND,
        MPI_BOR, MPI_BXOR, MPI_REPLACE or MPI_NO_OP, MPI_Fetch_and_op and
        MPI_Compare_and_swap on engine windows whose memory is UCX memory on
        every process go to UCX atomics instead of active messages. The info
        key mpich_nbrma_native_atomics overrides it per window at creation; a
        window has native atomics only where every process agrees. Where
        UCX's atomics toward every peer are the CPU's own (shared memory, or
        UCX's emulation), small accumulates of 1- and 2-byte integers (MPI_CHAR,
        MPI_SHORT, ...) with those operations go to UCX compare-and-swap loops
        too, and the target applies the others with the CPU's atomics
        (reported as mpich_nbrma_narrow_atomics).

    - name        : MPIR_CVAR_NBRMA_MAILBOXES
      category    : NBRMA
      type        : boolean
      default     : true
      class       : none
      verbosity   : MPI_T_VERBOSITY_USER_BASIC
      scope       : MPI_T_SCOPE_LOCAL
      description : >-
        If true, an engine window gives each process a mailbox in UCX memory,
        and the engine's protocol messages (post's grants, complete's dones,
        fence arrivals, lock requests, grants and releases) toward every peer
        that maps it directly (UCX shared-memory transports) are stores into
        that mailbox instead of active messages: the receiver reads them in
        its own progress, without the sender's help after the store. Peers
        that cannot map it (tcp, other hosts) keep active messages. The info
        key mpich_nbrma_mailboxes overrides it per window at creation;
        MPI_Win_get_info reports how many peers this process reaches so
        (mpich_nbrma_mailbox_peers).

    - name        : MPIR_CVAR_NBRMA_PULLED_EPOCHS
      category    : NBRMA
      type        : boolean
      default     : true
      class       : none
      verbosity   : MPI_T_VERBOSITY_USER_BASIC
      scope       : MPI_T_SCOPE_LOCAL
      description : >-
        If true, an access epoch (MPI_Win_start) that a nonblocking
        MPIX_Win_icomplete closes before a target's post reached the origin
        is performed by that target itself: it reads the puts' and
        accumulates' data from the origin's memory (cross-memory attach, same
        host) once its exposure is granted, so its MPI_Win_wait does not wait
        for the origin's next MPI call. Only toward peers whose mailbox is
        mapped (MPIR_CVAR_NBRMA_MAILBOXES) and whose memory the kernel lets
        this process read; epochs with other operations (gets, derived
        types, requests) keep the grant protocol. The info key
        mpich_nbrma_pulled_epochs overrides it per window; MPI_Win_get_info
        reports how many peers are readable (mpich_nbrma_readable_peers) and
        how many epochs went so (mpich_nbrma_pulled_epochs_sent).

    - name        : MPIR_CVAR_NBRMA_CROSS_MEMORY_RMA
      category    : NBRMA
      type        : boolean
      default     : true
      class       : none
      verbosity   : MPI_T_VERBOSITY_USER_BASIC
      scope       : MPI_T_SCOPE_LOCAL
      description : >-
        If true, an engine window's puts and gets toward a peer on this host
        whose window memory UCX's shared-memory transports do not map are
        copied by this process alone instead of going as active messages
        that wait for the target's progress: with loads and stores where
        MPICH's node-shared segment maps that memory here
        (MPI_Win_allocate_shared; any size and datatype), else, for
        contiguous data (MPI_Win_create over malloc'ed memory), with
        process_vm_writev/_readv, which needs the peer's mailbox
        (MPIR_CVAR_NBRMA_MAILBOXES) and a kernel that lets this process read
        the peer's memory. Accumulates, fetches and swaps toward a peer whose
        window memory is mapped here (that segment, or UCX memory of
        MPI_Win_allocate or MPI_Alloc_mem that ucp_rkey_ptr maps) are this
        process's CPU atomics on it, the arithmetic UCX has no atomics for
        (floating point, MIN, MAX, PROD) by compare-and-swap loops. The info
        key mpich_nbrma_cross_memory_rma overrides it per window at creation;
        MPI_Win_get_info reports toward how many peers the copies are in
        force (mpich_nbrma_cross_memory_peers) and the atomics
        (mpich_nbrma_mapped_peers).

    - name        : MPIR_CVAR_NBRMA_CROSS_MEMORY_MIN_BYTES
      category    : NBRMA
      type        : int
      default     : 16384
      class       : none
      verbosity   : MPI_T_VERBOSITY_USER_BASIC
      scope       : MPI_T_SCOPE_LOCAL
      description : >-
        The smallest put or get that goes by process_vm_writev/_readv
        (MPIR_CVAR_NBRMA_CROSS_MEMORY_RMA; copies through a mapped segment
        have no threshold). A process_vm_writev costs about
        1.8 us here plus 0.13 us per KiB, more than UCX's emulated put +
        flush while the target is inside MPI up to 8 KiB (OSU put latency,
        create window: 3.2 against 2.3 us at 8 KiB, 4.0 against 4.3 at
        16 KiB), but UCX's path waits for the target's CPU when it is not.
        0: every contiguous put and get goes so and none waits for the
        target's CPU. The info key mpich_nbrma_cross_memory_min_bytes
        overrides it per window at creation.

    - name        : MPIR_CVAR_NBRMA_MAPPED_ATOMICS_MIN_BYTES
      category    : NBRMA
      type        : int
      default     : 8
      class       : none
      verbosity   : MPI_T_VERBOSITY_USER_BASIC
      scope       : MPI_T_SCOPE_LOCAL
      description : >-
        The smallest accumulate (in the target's bytes) that the origin
        applies with its CPU's atomics on the target's memory, where that
        memory is mapped in the origin (a peer of the same host, window
        memory UCX can map), although UCX's atomics would take it: UCX
        issues one call per element. Both are the CPU's atomics there, so
        they stay atomic with respect to each other. OSU's
        osu_acc_latency -T mpi_int -s flush on an allocated window, shared
        memory: UCX's / the CPU's 0.27 / 0.19 us at 32 B, 30 / 4.7-6 at
        8 KiB, 3615 / 627-634 at 1 MiB; equal within noise at 4 and 8 B
        (one element). The info key
        mpich_nbrma_mapped_atomics_min_bytes overrides it per window at
        creation; a negative value: never (MPI_Win_get_info reports -1).

    - name        : MPIR_CVAR_NBRMA_ASYNC_PROGRESS
      category    : NBRMA
      type        : boolean
      default     : false
      class       : none
      verbosity   : MPI_T_VERBOSITY_USER_BASIC
      scope       : MPI_T_SCOPE_LOCAL
      description : >-
        If true, each process runs a progress agent: one thread that sleeps
        on the UCX worker's event descriptor and, when a message arrives
        while the application computes outside MPI, progresses MPI for it,
        so that RMA needing this process's CPU (UCX over tcp, memory UCX
        cannot reach, lock grants, active messages) completes without
        waiting for its next MPI call. It never spins, and it leaves the
        thread level as the application asked (below MPI_THREAD_MULTIPLE
        a guard keeps it out of MPI while the application is inside).
        MPICH's MPIR_CVAR_ASYNC_PROGRESS starts the same agent on this
        build, raising the thread level to MPI_THREAD_MULTIPLE as it does
        in vanilla MPICH.

    - name        : MPIR_CVAR_NBRMA_ASYNC_PROGRESS_SHARE
      category    : NBRMA
      type        : int
      default     : 9
      class       : none
      verbosity   : MPI_T_VERBOSITY_USER_BASIC
      scope       : MPI_T_SCOPE_LOCAL
      description : >-
        The most of the time (percent) that the progress agent takes from
        the application's computation to serve its peers (their operations
        into this process's memory, their lock requests): beyond it, the
        agent leaves UCX alone until it has earned the time back (at most
        10 ms at a time), so a computation sharing its core with the agent
        takes at most 1/(1 - share) as long however many operations its
        peers send (9: 1.10x), and those wait longer. Work the
        application started itself (its operations in flight, its
        nonblocking epochs) is served at once, and so is everything while
        the application does not compute (its thread asleep or waiting).
        100: no limit.

    - name        : MPIR_CVAR_NBRMA_ASYNC_PROGRESS_NICE
      category    : NBRMA
      type        : int
      default     : 0
      class       : none
      verbosity   : MPI_T_VERBOSITY_USER_BASIC
      scope       : MPI_T_SCOPE_LOCAL
      description : >-
        The nice value of the progress agent's thread (setpriority, -20 to
        19; below the process's own only with the privilege to raise
        priority). A higher value makes the agent slower for all of its
        work where it competes for a busy core, the application's own
        included (at 10 the kernel gives it about a tenth of the core and
        lets it run only every few milliseconds); what it takes from a
        computation to serve peers is bounded by
        MPIR_CVAR_NBRMA_ASYNC_PROGRESS_SHARE instead. For nodes shared with
        other work.

    - name        : MPIR_CVAR_NBRMA_ASYNC_PROGRESS_LINGER_US
      category    : NBRMA
      type        : int
      default     : 100
      class       : none
      verbosity   : MPI_T_VERBOSITY_USER_BASIC
      scope       : MPI_T_SCOPE_LOCAL
      description : >-
        How long the progress agent goes on progressing after the last
        operation it served before it arms the UCX workers and sleeps again
        (microseconds; 0: it sleeps as soon as the workers are drained). A
        wake-up costs more than serving an operation on shared memory (the
        kernel's wake-up, arming again), so a stream of operations toward a
        process outside MPI costs one wake-up instead of one per operation.
        Beside a computation it lingers only while it serves the
        application's own work (a peer's stream is then served a wake-up at
        a time, within MPIR_CVAR_NBRMA_ASYNC_PROGRESS_SHARE), and it lets
        the application in at once whenever it calls MPI.

    - name        : MPIR_CVAR_NBRMA_YIELD_AFTER_IDLE_US
      category    : NBRMA
      type        : int
      default     : 10
      class       : none
      verbosity   : MPI_T_VERBOSITY_USER_BASIC
      scope       : MPI_T_SCOPE_LOCAL
      description : >-
        MPICH's waiting loops (blocking calls, and the component's own) give
        the processor away with sched_yield once they have waited this many
        microseconds without progress, and again each as long after (CH3
        yielded every MPIR_CVAR_POLLS_BEFORE_YIELD idle polls; CH4 never
        does); with more processes than cores, a waiting rank then lets the
        rank it waits for run. Shorter waits never yield. Negative: never.

    - name        : MPIR_CVAR_NBRMA_TRACE
      category    : NBRMA
      type        : boolean
      default     : false
      class       : none
      verbosity   : MPI_T_VERBOSITY_USER_DETAIL
      scope       : MPI_T_SCOPE_LOCAL
      description : >-
        If true, engine windows print one line per protocol message, issued
        operation, completion report and synchronization call on stderr (for
        debugging hangs).

=== END_MPI_T_CVAR_INFO_BLOCK ===
*/

/* The value of `key` into buf (MPI_MAX_INFO_VAL + 1 bytes): whether there is one. */
static bool info_value(MPIR_Info * info, const char *key, char *buf)
{
    int flag = 0;

    return info != NULL && MPIR_Info_get_impl(info, key, MPI_MAX_INFO_VAL, buf, &flag) ==
        MPI_SUCCESS && flag;
}

bool MPIDI_NBRMA_info_get_bool(MPIR_Info * info, const char *key, bool *value)
{
    char buf[MPI_MAX_INFO_VAL + 1];

    return info_value(info, key, buf) && nbrma_parse_bool(buf, value);
}

bool MPIDI_NBRMA_info_is(MPIR_Info * info, const char *key, const char *value)
{
    char buf[MPI_MAX_INFO_VAL + 1];

    return info_value(info, key, buf) && !strcmp(buf, value);
}

bool MPIDI_NBRMA_info_get_size(MPIR_Info * info, const char *key, size_t * value)
{
    char buf[MPI_MAX_INFO_VAL + 1];

    return info_value(info, key, buf) && nbrma_parse_size(buf, value);
}

int MPIDI_NBRMA_info_set_bool(MPIR_Info * info, const char *key, bool value)
{
    return MPIR_Info_set_impl(info, key, value ? "true" : "false");
}

int MPIDI_NBRMA_info_set_int(MPIR_Info * info, const char *key, long long value)
{
    const nbrma_info_entry e = {.key = key,.type = NBRMA_INFO_INT,.number = value };
    char buf[NBRMA_INFO_VALUE_BYTES];

    return MPIR_Info_set_impl(info, key, nbrma_info_entry_value(&e, buf));
}

int MPIDI_NBRMA_info_set_all(MPIR_Info * info, const MPIDI_NBRMA_info_entry_t * entries, size_t n)
{
    int mpi_errno = MPI_SUCCESS;
    char buf[NBRMA_INFO_VALUE_BYTES];

    for (size_t i = 0; i < n && mpi_errno == MPI_SUCCESS; i++)
        mpi_errno = MPIR_Info_set_impl(info, entries[i].key,
                                       nbrma_info_entry_value(&entries[i], buf));
    return mpi_errno;
}

int MPIDI_NBRMA_all_agree(MPIR_Comm * comm, bool mine, bool *all)
{
    int mpi_errno = MPI_SUCCESS;
    MPIR_Errflag_t errflag = MPIR_ERR_NONE;
    unsigned mine_bit = mine ? 1u : 0u, all_bits = 0;

    mpi_errno = MPIR_Allreduce(&mine_bit, &all_bits, 1, MPI_UNSIGNED, MPI_BAND, comm, &errflag);
    MPIR_ERR_CHECK(mpi_errno);
    MPIR_ERR_CHKANDJUMP(errflag, mpi_errno, MPI_ERR_OTHER, "**coll_fail");
  fn_exit:
    *all = all_bits & 1u;
    return mpi_errno;
  fn_fail:
    all_bits = 0;
    goto fn_exit;
}
