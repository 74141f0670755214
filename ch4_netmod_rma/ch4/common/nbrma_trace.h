/*
 * mpich-nbrma: MPIR_CVAR_NBRMA_TRACE=1 prints one line on stderr per protocol
 * message, issued operation, completion report and synchronization call of an
 * engine window, for debugging hangs. Off, a trace costs one test.
 */

#ifndef NBRMA_TRACE_H_INCLUDED
#define NBRMA_TRACE_H_INCLUDED

#define MPIDI_NBRMA_TRACE(win, ...) \
    do { if (MPIR_CVAR_NBRMA_TRACE) MPIDI_NBRMA_trace_line(win, __VA_ARGS__); } while (0)

/* win may be NULL for a line about the process */
void MPIDI_NBRMA_trace_line(MPIR_Win * win, const char *fmt, ...) ATTRIBUTE((format(printf, 2, 3)));

#endif /* NBRMA_TRACE_H_INCLUDED */
