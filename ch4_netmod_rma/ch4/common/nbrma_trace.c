/*
 * mpich-nbrma: trace lines (trace.h): rank, window id, time, then the message.
 */

#include "mpidimpl.h"
#include "nbrma_trace.h"
#include <inttypes.h>
#include <stdarg.h>

void MPIDI_NBRMA_trace_line(MPIR_Win * win, const char *fmt, ...)
{
    va_list args;

    fprintf(stderr, "[nbrma %d w%" PRIx64 " %.6f] ", win->comm_ptr->rank,
            (uint64_t) MPIDIG_WIN(win, win_id), MPI_Wtime());
    va_start(args, fmt);
    vfprintf(stderr, fmt, args);
    va_end(args);
    fputc('\n', stderr);
}
