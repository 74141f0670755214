##
## The nonblocking-epoch engine core inside MPICH's non-recursive build; the
## component is copied to src/mpid/ch4/netmod/ucx/ch4_netmod_rma/. Paths are
## relative to the MPICH top directory.
##

mpi_core_sources += \
	src/mpid/ch4/netmod/ucx/ch4_netmod_rma/core/src/engine.cpp \
	src/mpid/ch4/netmod/ucx/ch4_netmod_rma/core/src/application.cpp \
	src/mpid/ch4/netmod/ucx/ch4_netmod_rma/core/src/activation.cpp \
	src/mpid/ch4/netmod/ucx/ch4_netmod_rma/core/src/origin_side.cpp \
	src/mpid/ch4/netmod/ucx/ch4_netmod_rma/core/src/flushes.cpp \
	src/mpid/ch4/netmod/ucx/ch4_netmod_rma/core/src/lock_words.cpp \
	src/mpid/ch4/netmod/ucx/ch4_netmod_rma/core/src/target_side.cpp \
	src/mpid/ch4/netmod/ucx/ch4_netmod_rma/core/src/lock_manager.cpp \
	src/mpid/ch4/netmod/ucx/ch4_netmod_rma/core/src/route.cpp \
	src/mpid/ch4/netmod/ucx/ch4_netmod_rma/core/src/ledger.cpp \
	src/mpid/ch4/netmod/ucx/ch4_netmod_rma/core/src/ledger_flights.cpp \
	src/mpid/ch4/netmod/ucx/ch4_netmod_rma/core/src/ledger_waits.cpp \
	src/mpid/ch4/netmod/ucx/ch4_netmod_rma/core/src/thread_marks.cpp \
	src/mpid/ch4/netmod/ucx/ch4_netmod_rma/core/src/grant_cache.cpp \
	src/mpid/ch4/netmod/ucx/ch4_netmod_rma/core/src/held_queue.cpp \
	src/mpid/ch4/netmod/ucx/ch4_netmod_rma/core/src/order_tracker.cpp \
	src/mpid/ch4/netmod/ucx/ch4_netmod_rma/core/src/issued_ops.cpp \
	src/mpid/ch4/netmod/ucx/ch4_netmod_rma/core/src/inbox.cpp \
	src/mpid/ch4/netmod/ucx/ch4_netmod_rma/core/src/notify_counters.cpp \
	src/mpid/ch4/netmod/ucx/ch4_netmod_rma/core/src/agent_pacing.cpp \
	src/mpid/ch4/netmod/ucx/ch4_netmod_rma/core/src/c_api.cpp

noinst_HEADERS += \
	src/mpid/ch4/netmod/ucx/ch4_netmod_rma/core/src/engine_internal.hpp \
	src/mpid/ch4/netmod/ucx/ch4_netmod_rma/core/src/reserve_one.hpp \
	src/mpid/ch4/netmod/ucx/ch4_netmod_rma/core/include/nbrma_core.h \
	src/mpid/ch4/netmod/ucx/ch4_netmod_rma/core/include/nbrma_route.h \
	src/mpid/ch4/netmod/ucx/ch4_netmod_rma/core/include/nbrma_fence_barrier.h \
	src/mpid/ch4/netmod/ucx/ch4_netmod_rma/core/include/nbrma_ledger.h \
	src/mpid/ch4/netmod/ucx/ch4_netmod_rma/core/include/nbrma_ledger_flights.h \
	src/mpid/ch4/netmod/ucx/ch4_netmod_rma/core/include/nbrma_ledger_waits.h \
	src/mpid/ch4/netmod/ucx/ch4_netmod_rma/core/include/nbrma_thread_marks.h \
	src/mpid/ch4/netmod/ucx/ch4_netmod_rma/core/include/nbrma_grant_cache.h \
	src/mpid/ch4/netmod/ucx/ch4_netmod_rma/core/include/nbrma_held_queue.h \
	src/mpid/ch4/netmod/ucx/ch4_netmod_rma/core/include/nbrma_order_tracker.h \
	src/mpid/ch4/netmod/ucx/ch4_netmod_rma/core/include/nbrma_issued_ops.h \
	src/mpid/ch4/netmod/ucx/ch4_netmod_rma/core/include/nbrma_inbox.h \
	src/mpid/ch4/netmod/ucx/ch4_netmod_rma/core/include/nbrma_notify_counters.h \
	src/mpid/ch4/netmod/ucx/ch4_netmod_rma/core/include/nbrma_agent_pacing.h \
	src/mpid/ch4/netmod/ucx/ch4_netmod_rma/core/include/nbrma_sync_calls.h \
	src/mpid/ch4/netmod/ucx/ch4_netmod_rma/core/include/nbrma/deferred_epoch_queue.hpp \
	src/mpid/ch4/netmod/ucx/ch4_netmod_rma/core/include/nbrma/engine.hpp \
	src/mpid/ch4/netmod/ucx/ch4_netmod_rma/core/include/nbrma/fifo.hpp \
	src/mpid/ch4/netmod/ucx/ch4_netmod_rma/core/include/nbrma/flat_map.hpp \
	src/mpid/ch4/netmod/ucx/ch4_netmod_rma/core/include/nbrma/epoch.hpp \
	src/mpid/ch4/netmod/ucx/ch4_netmod_rma/core/include/nbrma/lock_manager.hpp \
	src/mpid/ch4/netmod/ucx/ch4_netmod_rma/core/include/nbrma/match_triple.hpp

AM_CPPFLAGS += -I$(top_srcdir)/src/mpid/ch4/netmod/ucx/ch4_netmod_rma/core/include
