##
## GoogleTest unit tests and the deterministic simulator of the engine core.
## Included from the top-level Makefile.am; paths are relative to the top.
##

nbrma_test_common_sources = \
	test/unit/sim_world.cpp \
	test/unit/sim_world.hpp
nbrma_test_cppflags = -I$(srcdir)/ch4_netmod_rma/core/include -I$(srcdir)/test/unit

check_PROGRAMS += test/unit/nbrma_unit_tests
test_unit_nbrma_unit_tests_SOURCES = $(nbrma_test_common_sources) \
	test/unit/test_rules.cpp \
	test/unit/test_route.cpp \
	test/unit/test_fence_barrier.cpp \
	test/unit/test_ledger.cpp \
	test/unit/test_ledger_flights.cpp \
	test/unit/test_ledger_waits.cpp \
	test/unit/test_thread_marks.cpp \
	test/unit/test_grant_cache.cpp \
	test/unit/test_held_queue.cpp \
	test/unit/test_fifo.cpp \
	test/unit/test_flat_map.cpp \
	test/unit/test_order_tracker.cpp \
	test/unit/test_issued_ops.cpp \
	test/unit/test_inbox.cpp \
	test/unit/test_notify_counters.cpp \
	test/unit/test_agent_pacing.cpp \
	test/unit/test_sync_calls.cpp \
	test/unit/test_scale.cpp
test_unit_nbrma_unit_tests_CPPFLAGS = $(nbrma_test_cppflags)
test_unit_nbrma_unit_tests_LDADD = libnbrma_core.la $(GTEST_LIBS)

TESTS += test/unit/nbrma_unit_tests

check_PROGRAMS += test/unit/nbrma_sim_tests
test_unit_nbrma_sim_tests_SOURCES = $(nbrma_test_common_sources) \
	test/unit/test_sim.cpp
test_unit_nbrma_sim_tests_CPPFLAGS = $(nbrma_test_cppflags)
test_unit_nbrma_sim_tests_LDADD = libnbrma_core.la $(GTEST_LIBS)

TESTS += test/unit/nbrma_sim_tests

# the decoders of bytes from other processes and from users, and of UCX's
# lane table, the sorted table of UCX allocations, the rkey cache's regions,
# the tables of duplicated windows and of dynamic windows' memory, where
# each process keeps its notification counters, and which accumulates go to
# which atomics; the glue's tables (lane questions, key records, held
# requests, pollers, info entries), without MPI
check_PROGRAMS += test/unit/nbrma_codec_tests
test_unit_nbrma_codec_tests_SOURCES = \
	test/unit/test_codecs.cpp \
	test/unit/test_user_strings.cpp \
	test/unit/test_ucx_lane_table.cpp \
	test/unit/test_address_table.cpp \
	test/unit/test_rkey_regions.cpp \
	test/unit/test_dynamic_tables.cpp \
	test/unit/test_counter_peers.cpp \
	test/unit/test_ucx_lane_questions.cpp \
	test/unit/test_ucx_tls_list.cpp \
	test/unit/test_key_records.cpp \
	test/unit/test_held_refs.cpp \
	test/unit/test_poller_table.cpp \
	test/unit/test_info_entries.cpp \
	ch4_netmod_rma/formats/whole_epoch_codec.c \
	ch4_netmod_rma/formats/pulled_epoch_codec.c \
	ch4_netmod_rma/formats/memhandle_codec.c \
	ch4_netmod_rma/formats/rkey_wire.c \
	ch4_netmod_rma/formats/user_strings.c \
	ch4_netmod_rma/formats/notify_wire.c \
	ch4_netmod_rma/formats/address_table.c \
	ch4_netmod_rma/formats/rkey_regions.c \
	ch4_netmod_rma/formats/dynamic_memory.c \
	ch4_netmod_rma/formats/dup_parents.c \
	ch4_netmod_rma/formats/counter_peers.c \
	ch4_netmod_rma/formats/ucx_lane_table.c \
	ch4_netmod_rma/formats/ucx_lane_questions.c \
	ch4_netmod_rma/formats/ucx_tls_list.c \
	ch4_netmod_rma/formats/key_records.c \
	ch4_netmod_rma/formats/held_refs.c \
	ch4_netmod_rma/formats/poller_table.c \
	ch4_netmod_rma/formats/info_entries.c
test_unit_nbrma_codec_tests_CPPFLAGS = -I$(srcdir)/ch4_netmod_rma/formats \
	-I$(srcdir)/ch4_netmod_rma/core/include
test_unit_nbrma_codec_tests_LDADD = $(GTEST_LIBS)

TESTS += test/unit/nbrma_codec_tests

# which accumulates go to which atomics, 1- and 2-byte accumulates on
# 8-byte words (the CPU's and the origin's compare-and-swap loops), a
# datatype's segments as elements, and how each peer's memory is reached,
# without MPI
check_PROGRAMS += test/unit/nbrma_narrow_tests
test_unit_nbrma_narrow_tests_SOURCES = \
	test/unit/test_narrow_ops.cpp \
	test/unit/test_atomic_rules.cpp \
	test/unit/test_segments.cpp \
	test/unit/test_peer_reach.cpp \
	test/unit/narrow_reference.hpp \
	ch4_netmod_rma/peer_memory/narrow_ops.c \
	ch4_netmod_rma/peer_memory/cpu_transactions.c \
	ch4_netmod_rma/peer_memory/peer_reach.c
test_unit_nbrma_narrow_tests_CPPFLAGS = -I$(srcdir)/ch4_netmod_rma/peer_memory
test_unit_nbrma_narrow_tests_LDADD = $(GTEST_LIBS)

TESTS += test/unit/nbrma_narrow_tests

# the progress agent's sleep and doorbell, the wake socket other processes
# ring, the state and CPU time of
# threads, a thread's nice value and slice, memory kept private at
# MPI_Finalize, and waiting loops' yields and spins, without MPI
check_PROGRAMS += test/unit/nbrma_os_tests
test_unit_nbrma_os_tests_SOURCES = \
	test/unit/test_doorbell.cpp \
	test/unit/test_thread_state.cpp \
	test/unit/test_thread_sched.cpp \
	test/unit/test_private_memory.cpp \
	test/unit/test_wait_pacing.cpp \
	test/unit/test_wake_socket.cpp \
	test/unit/test_shared_segment.cpp \
	test/unit/test_kept_segments.cpp \
	test/unit/test_two_party_guard.cpp \
	test/unit/test_parking_spot.cpp \
	ch4_netmod_rma/os/doorbell.c \
	ch4_netmod_rma/os/thread_state.c \
	ch4_netmod_rma/os/thread_sched.c \
	ch4_netmod_rma/os/private_memory.c \
	ch4_netmod_rma/os/wait_pacing.c \
	ch4_netmod_rma/os/wake_socket.c \
	ch4_netmod_rma/os/shared_segment.c \
	ch4_netmod_rma/os/kept_segments.c \
	ch4_netmod_rma/os/two_party_guard.c \
	ch4_netmod_rma/os/parking_spot.c \
	ch4_netmod_rma/formats/mapping_cache.c
test_unit_nbrma_os_tests_CPPFLAGS = -I$(srcdir)/ch4_netmod_rma/os -I$(srcdir)/ch4_netmod_rma/formats
test_unit_nbrma_os_tests_LDADD = $(GTEST_LIBS) -lpthread

TESTS += test/unit/nbrma_os_tests

# the table of memory that UCX allocated, with a UCX context, and cross-memory
# attach, without MPI
check_PROGRAMS += test/unit/nbrma_memory_tests
test_unit_nbrma_memory_tests_SOURCES = \
	test/unit/test_ucx_memory.cpp \
	test/unit/test_cross_memory.cpp \
	ch4_netmod_rma/ch4/memory/ucx_memory.c \
	ch4_netmod_rma/formats/address_table.c \
	ch4_netmod_rma/os/private_memory.c \
	ch4_netmod_rma/peer_memory/cross_memory.c
test_unit_nbrma_memory_tests_CPPFLAGS = -I$(srcdir)/ch4_netmod_rma/ch4/memory \
	-I$(srcdir)/ch4_netmod_rma/peer_memory -I$(srcdir)/ch4_netmod_rma/formats \
	-I$(srcdir)/ch4_netmod_rma/os
test_unit_nbrma_memory_tests_LDADD = $(GTEST_LIBS) -lucp -lucs -lpthread

TESTS += test/unit/nbrma_memory_tests

# the mailbox rings and lock words other processes write into, the
# mailbox segments and mappings kept across windows, and a window's
# mailboxes as one process sees them, without MPI
check_PROGRAMS += test/unit/nbrma_mailbox_tests
test_unit_nbrma_mailbox_tests_SOURCES = \
	test/unit/test_mailbox_ring.cpp \
	test/unit/test_lock_word.cpp \
	test/unit/test_mapping_cache.cpp \
	test/unit/test_mailboxes.cpp \
	ch4_netmod_rma/formats/mailbox_ring.c \
	ch4_netmod_rma/formats/lock_word.c \
	ch4_netmod_rma/formats/mapping_cache.c \
	ch4_netmod_rma/formats/mailboxes.c
test_unit_nbrma_mailbox_tests_CPPFLAGS = -I$(srcdir)/ch4_netmod_rma/formats
test_unit_nbrma_mailbox_tests_LDADD = $(GTEST_LIBS) -lpthread

TESTS += test/unit/nbrma_mailbox_tests

# every decoder of bytes from other processes and users, and the engine's
# inbound events, fuzzed without MPI (test_fuzz.cpp); a short run here,
# scripts/run-fuzz.sh for 10^7 inputs under the sanitizers
check_PROGRAMS += test/unit/nbrma_fuzz_tests
test_unit_nbrma_fuzz_tests_SOURCES = \
	test/unit/test_fuzz.cpp \
	ch4_netmod_rma/formats/wire.c \
	ch4_netmod_rma/formats/whole_epoch_codec.c \
	ch4_netmod_rma/formats/pulled_epoch_codec.c \
	ch4_netmod_rma/formats/memhandle_codec.c \
	ch4_netmod_rma/formats/rkey_wire.c \
	ch4_netmod_rma/formats/mailbox_ring.c
test_unit_nbrma_fuzz_tests_CPPFLAGS = $(nbrma_test_cppflags) \
	-I$(srcdir)/ch4_netmod_rma/formats
test_unit_nbrma_fuzz_tests_LDADD = libnbrma_core.la $(GTEST_LIBS)

TESTS += test/unit/nbrma_fuzz_tests
