/*
 * mpich-nbrma: trace lines (trace.h): rank, window id, time, then the message.
 * A line about no window (win NULL) gives the rank in MPI_COMM_WORLD and "w-".
 */

#include "mpidimpl.h"
#include "nbrma_trace.h"
#include <inttypes.h>
#include <stdarg.h>

void MPIDI_NBRMA_trace_line(MPIR_Win * win, const char *fmt, ...)
{
    va_list args;

    if (win)
        fprintf(stderr, "[nbrma %d w%" PRIx64 " %.6f] ", win->comm_ptr->rank,
                (uint64_t) MPIDIG_WIN(win, win_id), MPI_Wtime());
    else
        fprintf(stderr, "[nbrma %d w- %.6f] ", MPIR_Process.rank, MPI_Wtime());
    va_start(args, fmt);
    vfprintf(stderr, fmt, args);
    va_end(args);
    fputc('\n', stderr);
}
