/*
 * mpich-nbrma: the questions the component asks of an endpoint's lanes
 * (ch4/common/nbrma_ucx_lanes.h says what each answer is for): which
 * transports count as emulating RDMA, as this CPU's, as mapping the peer's
 * memory, and what the counts of ucx_lane_table.h then mean. The lane table
 * is printed by a function of the glue's (ucp_ep_print_info) into memory,
 * read by ucx_lane_table.c, and the answer kept per (endpoint, question).
 * MPICH- and UCX-free, unit-tested without MPI on captured lane tables
 * (test/unit/test_ucx_lane_questions.cpp).
 */

#ifndef NBRMA_UCX_LANE_QUESTIONS_H_INCLUDED
#define NBRMA_UCX_LANE_QUESTIONS_H_INCLUDED

#include <stdbool.h>
#include <stdio.h>

#include "ucx_lane_table.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Prints the lane table of `endpoint` into `stream` (ucp_ep_print_info). */
typedef void (*nbrma_ucx_lanes_print_fn) (void *endpoint, FILE * stream);

/* Of the lanes of `endpoint` that carry `usage`: how many there are (*lanes)
 * and how many run on one of the `n` transports (*on); the answer kept in
 * `answers`, printed and read only the first time (the usage and transports
 * are the callers' constants, so their addresses name them). Without memory
 * to print into, 0 and 0 (not kept). */
void nbrma_ucx_lanes_count(nbrma_ucx_lane_answers_t * answers, void *endpoint,
                           nbrma_ucx_lanes_print_fn print, const char *usage,
                           const char *const *transports, size_t n, int *lanes, int *on);

/* Of the lanes that carry puts and gets ("rma_bw#"): how many there are and
 * how many are where UCX emulates RDMA with messages the peer's CPU answers
 * (tcp). */
void nbrma_ucx_rma_lanes(nbrma_ucx_lane_answers_t * answers, void *endpoint,
                         nbrma_ucx_lanes_print_fn print, int *lanes, int *emulated);

/* Whether lanes carry `usage` and all of them run on a transport of this
 * CPU's (posix, sysv, xpmem, self, cma, knem). */
bool nbrma_ucx_lanes_on_cpu(nbrma_ucx_lane_answers_t * answers, void *endpoint,
                            nbrma_ucx_lanes_print_fn print, const char *usage);

/* Whether any lane runs on a shared-memory transport whose keys map the
 * peer's memory (posix, sysv, xpmem: ucp_rkey_ptr). Any lane: UCX names
 * their usage differently by size and version. */
bool nbrma_ucx_lanes_map_memory(nbrma_ucx_lane_answers_t * answers, void *endpoint,
                                nbrma_ucx_lanes_print_fn print);

#ifdef __cplusplus
}
#endif
#endif /* NBRMA_UCX_LANE_QUESTIONS_H_INCLUDED */
