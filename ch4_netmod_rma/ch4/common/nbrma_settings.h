/*
 * mpich-nbrma: the component's settings: process-wide defaults are MPICH CVARs
 * (../../cvars.txt; environment MPIR_CVAR_NBRMA_* or MPICH_NBRMA_*), per-window
 * choices info keys, read and reported with the helpers below.
 */

#ifndef NBRMA_SETTINGS_H_INCLUDED
#define NBRMA_SETTINGS_H_INCLUDED

#include "info_entries.h"

#define MPIDI_NBRMA_INFO_EPOCHS "mpich_nbrma_epochs"
#define MPIDI_NBRMA_INFO_WHOLE_LOCK_EPOCHS "mpich_nbrma_whole_lock_epochs"
#define MPIDI_NBRMA_INFO_WHOLE_LOCK_EPOCHS_SENT "mpich_nbrma_whole_lock_epochs_sent"
#define MPIDI_NBRMA_INFO_DYNAMIC_RDMA "mpich_nbrma_dynamic_rdma"
#define MPIDI_NBRMA_INFO_UCX_MEMORY "mpich_nbrma_ucx_memory"
#define MPIDI_NBRMA_INFO_NATIVE_ATOMICS "mpich_nbrma_native_atomics"
/* reported only: follows mpich_nbrma_native_atomics where UCX allows */
#define MPIDI_NBRMA_INFO_NARROW_ATOMICS "mpich_nbrma_narrow_atomics"
#define MPIDI_NBRMA_INFO_MAILBOXES "mpich_nbrma_mailboxes"
#define MPIDI_NBRMA_INFO_MAILBOX_PEERS "mpich_nbrma_mailbox_peers"
#define MPIDI_NBRMA_INFO_PULLED_EPOCHS "mpich_nbrma_pulled_epochs"
#define MPIDI_NBRMA_INFO_PULLED_EPOCHS_SENT "mpich_nbrma_pulled_epochs_sent"
#define MPIDI_NBRMA_INFO_CROSS_MEMORY_RMA "mpich_nbrma_cross_memory_rma"
#define MPIDI_NBRMA_INFO_CROSS_MEMORY_PEERS "mpich_nbrma_cross_memory_peers"
#define MPIDI_NBRMA_INFO_MAPPED_PEERS "mpich_nbrma_mapped_peers"
#define MPIDI_NBRMA_INFO_CROSS_MEMORY_MIN_BYTES "mpich_nbrma_cross_memory_min_bytes"
#define MPIDI_NBRMA_INFO_CROSS_MEMORY_CALL_MAX_NS "mpich_nbrma_cross_memory_call_max_ns"
/* reported only: the price of that call measured */
#define MPIDI_NBRMA_INFO_CROSS_MEMORY_CALL_NS "mpich_nbrma_cross_memory_call_ns"
#define MPIDI_NBRMA_INFO_MAPPED_ATOMICS_MIN_BYTES "mpich_nbrma_mapped_atomics_min_bytes"
#define MPIDI_NBRMA_INFO_MESSAGE_OPS_MAX "mpich_nbrma_message_ops_max"
#define MPIDI_NBRMA_INFO_READABLE_PEERS "mpich_nbrma_readable_peers"
#define MPIDI_NBRMA_INFO_DEFERRED_EPOCHS "mpich_nbrma_deferred_epochs"
#define MPIDI_NBRMA_INFO_ACTIVE_EPOCHS "mpich_nbrma_active_epochs"
/* Quo Vadis MPI RMA, section 2.1: "thread" or "process" (the default) */
#define MPIDI_NBRMA_INFO_WIN_SCOPE "mpi_win_scope"
#define MPIDI_NBRMA_INFO_ASSERT_INTRINSIC "mpi_assert_accumulate_intrinsic"
/* section 2.2: operations toward one target performed in issue order */
#define MPIDI_NBRMA_INFO_WIN_ORDER "mpi_win_order"

/* Reads `key` of `info` (may be NULL) as "true"/"1" or "false"/"0": whether
 * it was there and valid; only then sets *value. */
bool MPIDI_NBRMA_info_get_bool(MPIR_Info * info, const char *key, bool *value);
bool MPIDI_NBRMA_info_is(MPIR_Info * info, const char *key, const char *value);
/* A size (decimal digits only); false, and *value unchanged, if the key is
 * absent or its value is not one (a hint that is ignored). */
bool MPIDI_NBRMA_info_get_size(MPIR_Info * info, const char *key, size_t * value);
int MPIDI_NBRMA_info_set_bool(MPIR_Info * info, const char *key, bool value);

/* A key that MPI_Win_get_info reports (formats/info_entries.h), made by
 * INFO_BOOL, INFO_INT or INFO_STRING. */
typedef nbrma_info_entry MPIDI_NBRMA_info_entry_t;
#define INFO_BOOL(k, v) { .key = (k), .type = NBRMA_INFO_BOOL, .number = !!(v) }
#define INFO_INT(k, v) { .key = (k), .type = NBRMA_INFO_INT, .number = (long long) (v) }
#define INFO_STRING(k, v) { .key = (k), .type = NBRMA_INFO_STRING, .string = (v) }
#define INFO_ENTRIES(entries) (entries), sizeof(entries) / sizeof((entries)[0])
int MPIDI_NBRMA_info_set_all(MPIR_Info * info, const MPIDI_NBRMA_info_entry_t * entries, size_t n);

/* Collective: *all = whether `mine` holds on every process, for choices that
 * must agree although each process reads its own info and environment. */
int MPIDI_NBRMA_all_agree(MPIR_Comm * comm, bool mine, bool *all);

#endif /* NBRMA_SETTINGS_H_INCLUDED */
