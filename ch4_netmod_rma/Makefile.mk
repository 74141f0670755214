##
## mpich-nbrma: automake fragment for MPICH's non-recursive build.
## Patch 0002 includes it from src/mpid/ch4/netmod/ucx/Makefile.mk (inside
## "if BUILD_CH4_NETMOD_UCX"); paths are relative to the MPICH top directory.
##

nbrma_dir = src/mpid/ch4/netmod/ucx/ch4_netmod_rma
nbrma_ch4 = $(nbrma_dir)/ch4
nbrma_formats = $(nbrma_dir)/formats
nbrma_peer_memory = $(nbrma_dir)/peer_memory
nbrma_os = $(nbrma_dir)/os

# the glue's own headers, and the UCX netmod's (ucx_impl.h)
AM_CPPFLAGS += -I$(top_srcdir)/$(nbrma_ch4)/include -I$(top_srcdir)/$(nbrma_ch4)/common \
	-I$(top_srcdir)/$(nbrma_ch4)/memory -I$(top_srcdir)/$(nbrma_ch4)/atomics \
	-I$(top_srcdir)/$(nbrma_ch4)/mailbox -I$(top_srcdir)/$(nbrma_ch4)/notify \
	-I$(top_srcdir)/$(nbrma_formats) -I$(top_srcdir)/$(nbrma_peer_memory) \
	-I$(top_srcdir)/$(nbrma_os) \
	-I$(top_srcdir)/src/mpid/ch4/netmod/ucx

noinst_HEADERS += \
	$(nbrma_ch4)/include/mpidi_nbrma_hooks.h \
	$(nbrma_ch4)/include/mpidi_nbrma_agent_guard.h \
	$(nbrma_ch4)/include/nbrma_win.h \
	$(nbrma_ch4)/common/nbrma_agent_service.h \
	$(nbrma_ch4)/common/nbrma_am.h \
	$(nbrma_ch4)/common/nbrma_completion.h \
	$(nbrma_ch4)/common/nbrma_key_exchange.h \
	$(nbrma_ch4)/common/nbrma_ledger_adapter.h \
	$(nbrma_ch4)/common/nbrma_ledger_state.h \
	$(nbrma_ch4)/common/nbrma_mpich_path.h \
	$(nbrma_ch4)/common/nbrma_parked_wait.h \
	$(nbrma_ch4)/common/nbrma_progress.h \
	$(nbrma_ch4)/common/nbrma_request.h \
	$(nbrma_ch4)/common/nbrma_settings.h \
	$(nbrma_ch4)/common/nbrma_trace.h \
	$(nbrma_ch4)/common/nbrma_ucx_lanes.h \
	$(nbrma_ch4)/common/nbrma_window_object.h \
	$(nbrma_ch4)/common/nbrma_win_meeting.h \
	$(nbrma_ch4)/memory/ucx_memory.h \
	$(nbrma_ch4)/atomics/native_atomics.h \
	$(nbrma_ch4)/mailbox/mailbox.h \
	$(nbrma_ch4)/atomics/narrow_atomics.h \
	$(nbrma_ch4)/epochs/epoch_win.h \
	$(nbrma_ch4)/dynamic/dynamic_win.h \
	$(nbrma_ch4)/notify/notify.h \
	$(nbrma_ch4)/notify/counter_memory.h

# formats/ (MPICH-free, unit-tested, most also fuzzed): the bytes other
# processes send or store, with their checks: protocol messages, packed
# epochs, rkey and memory-handle records, notifications, mailbox rings and
# lock words; and the strings users pass (MPIX_Win_op_intrinsic's list of
# operation names, info values); UCX 1.13's lane table (ucp_ep_print_info)
# and the answers read from it, kept per endpoint; and bookkeeping of UCX
# resources with opaque handles: the sorted table of UCX allocations
# (address_table), the mailbox segments and peers' mappings kept across
# windows (mapping_cache), a window's mailboxes as one process sees them
# (mailboxes), the rkey cache's attached and cached regions
# (rkey_regions), a dynamic window's memory-handle registrations,
# per-target RDMA state and memory-handle windows (dynamic_memory), the
# windows with duplicates (dup_parents) and where each process keeps its
# notification counters (counter_peers); and the glue's own tables: the
# questions asked of UCX's lane table (ucx_lane_questions), what a UCX_TLS
# value lets UCX open (ucx_tls_list), the entries of
# the key exchange (key_records), the requests held for the progress agent
# (held_refs), the pollers behind the progress hook (poller_table) and the
# info keys reported (info_entries)
noinst_HEADERS += \
	$(nbrma_formats)/nbrma_static_assert.h \
	$(nbrma_formats)/grow_one.h \
	$(nbrma_formats)/wire.h \
	$(nbrma_formats)/whole_epoch_codec.h \
	$(nbrma_formats)/pulled_epoch_codec.h \
	$(nbrma_formats)/rkey_wire.h \
	$(nbrma_formats)/memhandle_codec.h \
	$(nbrma_formats)/notify_wire.h \
	$(nbrma_formats)/user_strings.h \
	$(nbrma_formats)/mailbox_ring.h \
	$(nbrma_formats)/lock_word.h \
	$(nbrma_formats)/address_table.h \
	$(nbrma_formats)/mapping_cache.h \
	$(nbrma_formats)/mailboxes.h \
	$(nbrma_formats)/rkey_regions.h \
	$(nbrma_formats)/dynamic_memory.h \
	$(nbrma_formats)/dup_parents.h \
	$(nbrma_formats)/counter_peers.h \
	$(nbrma_formats)/ucx_lane_table.h \
	$(nbrma_formats)/ucx_lane_questions.h \
	$(nbrma_formats)/ucx_tls_list.h \
	$(nbrma_formats)/key_records.h \
	$(nbrma_formats)/held_refs.h \
	$(nbrma_formats)/poller_table.h \
	$(nbrma_formats)/info_entries.h
mpi_core_sources += \
	$(nbrma_formats)/wire.c \
	$(nbrma_formats)/whole_epoch_codec.c \
	$(nbrma_formats)/pulled_epoch_codec.c \
	$(nbrma_formats)/rkey_wire.c \
	$(nbrma_formats)/memhandle_codec.c \
	$(nbrma_formats)/notify_wire.c \
	$(nbrma_formats)/user_strings.c \
	$(nbrma_formats)/mailbox_ring.c \
	$(nbrma_formats)/lock_word.c \
	$(nbrma_formats)/address_table.c \
	$(nbrma_formats)/mapping_cache.c \
	$(nbrma_formats)/mailboxes.c \
	$(nbrma_formats)/rkey_regions.c \
	$(nbrma_formats)/dynamic_memory.c \
	$(nbrma_formats)/dup_parents.c \
	$(nbrma_formats)/counter_peers.c \
	$(nbrma_formats)/ucx_lane_table.c \
	$(nbrma_formats)/ucx_lane_questions.c \
	$(nbrma_formats)/ucx_tls_list.c \
	$(nbrma_formats)/key_records.c \
	$(nbrma_formats)/held_refs.c \
	$(nbrma_formats)/poller_table.c \
	$(nbrma_formats)/info_entries.c

# peer_memory/ (MPICH- and UCX-free, unit-tested): what this process does
# to memory other processes own or share: which accumulates go to which
# atomics (atomic_rules), the element arithmetic of the CPU's atomics and the
# origin's compare-and-swap loops on words (narrow_ops), long runs of them
# in hardware transactions (cpu_transactions), a datatype's
# segments as elements (segments), how each peer's memory is reached
# (peer_reach) and cross-memory-attach reads and writes (cross_memory)
noinst_HEADERS += \
	$(nbrma_peer_memory)/atomic_rules.h \
	$(nbrma_peer_memory)/narrow_ops.h \
	$(nbrma_peer_memory)/element_combine.h \
	$(nbrma_peer_memory)/cpu_features.h \
	$(nbrma_peer_memory)/cpu_transactions.h \
	$(nbrma_peer_memory)/segments.h \
	$(nbrma_peer_memory)/peer_reach.h \
	$(nbrma_peer_memory)/cross_memory.h
mpi_core_sources += \
	$(nbrma_peer_memory)/narrow_ops.c \
	$(nbrma_peer_memory)/cpu_transactions.c \
	$(nbrma_peer_memory)/peer_reach.c \
	$(nbrma_peer_memory)/cross_memory.c

# os/ (MPICH- and UCX-free, unit-tested): the progress agent's dealings with
# the kernel: its sleep on the workers' descriptors and a doorbell
# (doorbell), the socket that same-host peers ring (wake_socket), the
# application thread's state and its own CPU time (thread_state), its nice
# value and time slice (thread_sched); UCX allocations kept as private
# memory at MPI_Finalize (private_memory); the mailboxes' shared memory,
# which peers attach by a key (shared_segment), kept across windows with
# peers' mappings of it (kept_segments, with ../formats/mapping_cache's
# bookkeeping); the two-party guard that keeps the agent and a
# single-threaded application apart (two_party_guard) and the spot where a
# long wait sleeps while the agent serves (parking_spot); and the clock of waiting
# loops: when they yield, when a spin gives up (wait_pacing)
noinst_HEADERS += \
	$(nbrma_os)/doorbell.h \
	$(nbrma_os)/thread_state.h \
	$(nbrma_os)/thread_sched.h \
	$(nbrma_os)/private_memory.h \
	$(nbrma_os)/wait_pacing.h \
	$(nbrma_os)/wake_socket.h \
	$(nbrma_os)/shared_segment.h \
	$(nbrma_os)/kept_segments.h \
	$(nbrma_os)/two_party_guard.h \
	$(nbrma_os)/parking_spot.h
mpi_core_sources += \
	$(nbrma_os)/doorbell.c \
	$(nbrma_os)/thread_state.c \
	$(nbrma_os)/thread_sched.c \
	$(nbrma_os)/private_memory.c \
	$(nbrma_os)/wait_pacing.c \
	$(nbrma_os)/wake_socket.c \
	$(nbrma_os)/shared_segment.c \
	$(nbrma_os)/kept_segments.c \
	$(nbrma_os)/two_party_guard.c \
	$(nbrma_os)/parking_spot.c

# hooks/: MPID_ entry points -> the window's operations table
mpi_core_sources += \
	$(nbrma_ch4)/hooks/apply_hooks.c \
	$(nbrma_ch4)/hooks/finalize_hooks.c \
	$(nbrma_ch4)/hooks/memory_hooks.c \
	$(nbrma_ch4)/hooks/op_hooks.c \
	$(nbrma_ch4)/hooks/rma_extension_hooks.c \
	$(nbrma_ch4)/hooks/sync_hooks.c \
	$(nbrma_ch4)/hooks/ucx_config_hooks.c \
	$(nbrma_ch4)/hooks/win_hooks.c

# notify/: notifying operations and the requests that wait for them
mpi_core_sources += \
	$(nbrma_ch4)/notify/notify.c \
	$(nbrma_ch4)/notify/counter_memory.c

# duplicate/: MPIX_Win_dup_with_info handles of any window kind
mpi_core_sources += \
	$(nbrma_ch4)/duplicate/dup_win.c

# common/: shared by every window kind
mpi_core_sources += \
	$(nbrma_ch4)/common/nbrma_am.c \
	$(nbrma_ch4)/common/nbrma_completion.c \
	$(nbrma_ch4)/common/nbrma_key_exchange.c \
	$(nbrma_ch4)/common/nbrma_ledger_adapter.c \
	$(nbrma_ch4)/common/nbrma_ledger_gather.c \
	$(nbrma_ch4)/common/nbrma_ledger_wait.c \
	$(nbrma_ch4)/common/nbrma_mpich_path.c \
	$(nbrma_ch4)/common/nbrma_progress.c \
	$(nbrma_ch4)/common/nbrma_progress_agent.c \
	$(nbrma_ch4)/common/nbrma_agent_service.c \
	$(nbrma_ch4)/common/nbrma_agent_guard.c \
	$(nbrma_ch4)/common/nbrma_parked_wait.c \
	$(nbrma_ch4)/common/nbrma_request.c \
	$(nbrma_ch4)/common/nbrma_settings.c \
	$(nbrma_ch4)/common/nbrma_trace.c \
	$(nbrma_ch4)/common/nbrma_ucx_lanes.c \
	$(nbrma_ch4)/common/nbrma_window_object.c \
	$(nbrma_ch4)/common/nbrma_win_meeting.c

# memory/: memory that UCX allocated; atomics/:
# accumulates as UCX atomics
mpi_core_sources += \
	$(nbrma_ch4)/memory/ucx_memory.c \
	$(nbrma_ch4)/atomics/native_atomics.c \
	$(nbrma_ch4)/atomics/narrow_atomics.c

# mailbox/: small messages as stores into the receiver's memory
mpi_core_sources += \
	$(nbrma_ch4)/mailbox/mailbox.c

# epochs/: windows whose epochs the nonblocking-epoch engine drives
mpi_core_sources += \
	$(nbrma_ch4)/epochs/completion_sweep.c \
	$(nbrma_ch4)/epochs/cross_memory_rma.c \
	$(nbrma_ch4)/epochs/direct_ops.c \
	$(nbrma_ch4)/epochs/engine_calls.c \
	$(nbrma_ch4)/epochs/held_records.c \
	$(nbrma_ch4)/epochs/lock_words.c \
	$(nbrma_ch4)/epochs/message_send.c \
	$(nbrma_ch4)/epochs/messages.c \
	$(nbrma_ch4)/epochs/op_route.c \
	$(nbrma_ch4)/epochs/operations.c \
	$(nbrma_ch4)/epochs/ordered_ops.c \
	$(nbrma_ch4)/epochs/pulled_epoch.c \
	$(nbrma_ch4)/epochs/sync_calls.c \
	$(nbrma_ch4)/epochs/thread_scope.c \
	$(nbrma_ch4)/epochs/transport.c \
	$(nbrma_ch4)/epochs/whole_epoch.c \
	$(nbrma_ch4)/epochs/window.c

# dynamic/: dynamic windows, the rkey cache, memory handles and their windows
mpi_core_sources += \
	$(nbrma_ch4)/dynamic/dynamic_epochs.c \
	$(nbrma_ch4)/dynamic/dynamic_win.c \
	$(nbrma_ch4)/dynamic/memhandle.c \
	$(nbrma_ch4)/dynamic/memhandle_win.c \
	$(nbrma_ch4)/dynamic/rdma.c \
	$(nbrma_ch4)/dynamic/rkey_cache.c

# MPICH links libmpi with the C compiler (its Makefile.am forces --tag=CC), so
# the C++ runtime of the core is named explicitly.
external_libs += -lstdc++
# MPICH sets visibility and optimization (--enable-fast) in C flags only; the
# core's symbols must stay internal to libmpi as the C glue's do.
AM_CXXFLAGS = $(VISIBILITY_CFLAGS) -O2 -std=gnu++17

errnames_txt_files += $(nbrma_dir)/errnames.txt

# the C++17 nonblocking-epoch engine (its own source list, kept by the core)
include $(top_srcdir)/src/mpid/ch4/netmod/ucx/ch4_netmod_rma/core/mpich.mk
