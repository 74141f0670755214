/*
 * mpich-nbrma: whether a thread is runnable and the CPU it last ran on, read
 * from its /proc stat line, and the CPU time the calling thread has used.
 * The progress agent (ch4/common/nbrma_progress_agent.c) paces and places
 * itself by them (core/include/nbrma_agent_pacing.h): whether the
 * application's thread computes, where it ran, and what the agent took. MPICH- and UCX-free, with the
 * parser a function of the text, so that both are unit-tested without MPI
 * and without /proc (test/unit/test_thread_state.cpp).
 */

#ifndef NBRMA_THREAD_STATE_H_INCLUDED
#define NBRMA_THREAD_STATE_H_INCLUDED

#include <stdbool.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The state field of a stat line "tid (name) S ...", where the name may hold
 * spaces and parentheses: the character two past the last ')' ('R' running
 * or runnable, 'S' asleep, ...; 0 if the text ends after that ')' and one
 * more character), or -1 if the text has no ')' or ends at it. */
int nbrma_thread_state_parse(const char *stat_line);

/* The processor field (the 39th) of a stat line: the CPU the thread last ran
 * on, or -1 if the line is cut short or has no ')'. */
int nbrma_thread_state_parse_cpu(const char *stat_line);

/* Opens the calling thread's /proc/self/task/<tid>/stat (closed on exec):
 * a descriptor that other threads may read its state from, or -1 (no /proc). */
int nbrma_thread_state_open_self(void);

/* One reading of the thread whose stat descriptor `stat_fd` is (from
 * nbrma_thread_state_open_self): whether it is runnable, and the CPU it last
 * ran on (-1 if unknown). What cannot be read (-1, an error, a line without
 * state) counts as runnable: the pacing then takes the cautious side, that
 * of an application that computes. */
typedef struct {
    bool runnable;
    int cpu;
} nbrma_thread_view;

nbrma_thread_view nbrma_thread_state_read(int stat_fd);

/* The calling thread's CPU time (CLOCK_THREAD_CPUTIME_ID), 0 if unknown. */
uint64_t nbrma_thread_cpu_ns(void);

#ifdef __cplusplus
}
#endif
#endif /* NBRMA_THREAD_STATE_H_INCLUDED */
