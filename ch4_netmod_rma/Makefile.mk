##
## mpich-nbrma: automake fragment for MPICH's non-recursive build.
## Patch 0002 includes it from src/mpid/ch4/netmod/ucx/Makefile.mk (inside
## "if BUILD_CH4_NETMOD_UCX"); paths are relative to the MPICH top directory.
##

nbrma_dir = src/mpid/ch4/netmod/ucx/ch4_netmod_rma

# the glue uses the UCX netmod's own headers (ucx_impl.h)
AM_CPPFLAGS += -I$(top_srcdir)/$(nbrma_dir)/ch4 -I$(top_srcdir)/src/mpid/ch4/netmod/ucx

noinst_HEADERS += $(nbrma_dir)/ch4/mpidi_nbrma_hooks.h
# memory-handle windows and the RMA/synchronization dispatch (issue 6)
noinst_HEADERS += $(nbrma_dir)/ch4/nbrma_win_hooks.h $(nbrma_dir)/ch4/nbrma_memhandle.h

mpi_core_sources += $(nbrma_dir)/ch4/nbrma_flush.c
mpi_core_sources += $(nbrma_dir)/ch4/nbrma_rma_hooks.c $(nbrma_dir)/ch4/nbrma_memhandle.c
# the glue of the nonblocking-epoch engine (issues 4 and 5)
noinst_HEADERS += $(nbrma_dir)/ch4/nbrma_epochs.h
mpi_core_sources += $(nbrma_dir)/ch4/nbrma_epochs.c

# MPICH links libmpi with the C compiler (its Makefile.am forces --tag=CC), so
# the C++ runtime of the core is named explicitly.
external_libs += -lstdc++
# MPICH sets visibility and optimization (--enable-fast) in C flags only; the
# core's symbols must stay internal to libmpi as the C glue's do.
AM_CXXFLAGS = $(VISIBILITY_CFLAGS) -O2 -std=gnu++17

errnames_txt_files += $(nbrma_dir)/errnames.txt

# the C++17 nonblocking-epoch engine (its own source list, kept by the core)
include $(top_srcdir)/src/mpid/ch4/netmod/ucx/ch4_netmod_rma/core/mpich.mk
