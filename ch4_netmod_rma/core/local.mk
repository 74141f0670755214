##
## The nonblocking-epoch engine core, built standalone for the unit tests.
## Included from the top-level Makefile.am; paths are relative to the top.
##

noinst_LTLIBRARIES += libnbrma_core.la
libnbrma_core_la_SOURCES = \
	ch4_netmod_rma/core/src/engine.cpp \
	ch4_netmod_rma/core/src/application.cpp \
	ch4_netmod_rma/core/src/activation.cpp \
	ch4_netmod_rma/core/src/origin_side.cpp \
	ch4_netmod_rma/core/src/flushes.cpp \
	ch4_netmod_rma/core/src/lock_words.cpp \
	ch4_netmod_rma/core/src/target_side.cpp \
	ch4_netmod_rma/core/src/engine_internal.hpp \
	ch4_netmod_rma/core/src/reserve_one.hpp \
	ch4_netmod_rma/core/src/lock_manager.cpp \
	ch4_netmod_rma/core/src/route.cpp \
	ch4_netmod_rma/core/src/ledger.cpp \
	ch4_netmod_rma/core/src/ledger_flights.cpp \
	ch4_netmod_rma/core/src/ledger_waits.cpp \
	ch4_netmod_rma/core/src/thread_marks.cpp \
	ch4_netmod_rma/core/src/grant_cache.cpp \
	ch4_netmod_rma/core/src/held_queue.cpp \
	ch4_netmod_rma/core/src/order_tracker.cpp \
	ch4_netmod_rma/core/src/issued_ops.cpp \
	ch4_netmod_rma/core/src/inbox.cpp \
	ch4_netmod_rma/core/src/notify_counters.cpp \
	ch4_netmod_rma/core/src/agent_pacing.cpp \
	ch4_netmod_rma/core/src/c_api.cpp \
	ch4_netmod_rma/core/include/nbrma_core.h \
	ch4_netmod_rma/core/include/nbrma_route.h \
	ch4_netmod_rma/core/include/nbrma_fence_barrier.h \
	ch4_netmod_rma/core/include/nbrma_ledger.h \
	ch4_netmod_rma/core/include/nbrma_ledger_flights.h \
	ch4_netmod_rma/core/include/nbrma_ledger_waits.h \
	ch4_netmod_rma/core/include/nbrma_thread_marks.h \
	ch4_netmod_rma/core/include/nbrma_grant_cache.h \
	ch4_netmod_rma/core/include/nbrma_held_queue.h \
	ch4_netmod_rma/core/include/nbrma_order_tracker.h \
	ch4_netmod_rma/core/include/nbrma_issued_ops.h \
	ch4_netmod_rma/core/include/nbrma_inbox.h \
	ch4_netmod_rma/core/include/nbrma_notify_counters.h \
	ch4_netmod_rma/core/include/nbrma_agent_pacing.h \
	ch4_netmod_rma/core/include/nbrma_sync_calls.h \
	ch4_netmod_rma/core/include/nbrma/deferred_epoch_queue.hpp \
	ch4_netmod_rma/core/include/nbrma/engine.hpp \
	ch4_netmod_rma/core/include/nbrma/fifo.hpp \
	ch4_netmod_rma/core/include/nbrma/flat_map.hpp \
	ch4_netmod_rma/core/include/nbrma/epoch.hpp \
	ch4_netmod_rma/core/include/nbrma/lock_manager.hpp \
	ch4_netmod_rma/core/include/nbrma/match_triple.hpp
libnbrma_core_la_CPPFLAGS = -I$(srcdir)/ch4_netmod_rma/core/include
