/*
 * mpich-nbrma: what memory-handle windows (memhandle_win.c) need of the
 * memory handles (memhandle.c). Internal to ch4/dynamic/.
 */

#ifndef NBRMA_MEMHANDLE_H_INCLUDED
#define NBRMA_MEMHANDLE_H_INCLUDED

#include "dynamic_win.h"
#include "memhandle_codec.h"

/* *dw_out = the state of `win` if it can be the parent of memory handles (a
 * dynamic window); MPI_ERR_WIN otherwise. */
int MPIDI_NBRMA_memhandle_parent(MPIR_Win * win, MPIDI_NBRMA_dynamic_win_t ** dw_out);
/* Reads and checks a handle for use with the dynamic window `parent`. */
int MPIDI_NBRMA_memhandle_decode(const void *memhandle, MPIR_Win * parent,
                                 nbrma_memhandle_header_t * hdr);

#endif /* NBRMA_MEMHANDLE_H_INCLUDED */
