/*
 * mpich-nbrma: which transports carry an endpoint's lanes, read from the text
 * of UCX 1.13's ucp_ep_print_info(), and the answers kept per endpoint.
 * UCX says so nowhere else; its lane table reads
 *
 *   #      lane[0]:  8:tcp/lo.0 md[4]       -> md[4]/tcp/sysdev[255] rma_bw#0 am am_bw#0 wireup
 *   #      lane[1]:  4:posix/memory.0 md[2] -> md[2]/posix/sysdev[255] rma_bw#0 amo#0
 *
 * one line per lane: its transport before the first '/' after "lane[i]:"
 * and the resource index, and its usages at the end ("amo#" atomics,
 * "rma_bw#" puts and gets). MPICH- and UCX-free so that the reading is
 * tested without MPI (test/unit/test_ucx_lane_table.cpp); the glue
 * (ch4/common/nbrma_ucx_lanes.c) prints the table and keeps one cache.
 */

#ifndef NBRMA_UCX_LANE_TABLE_H_INCLUDED
#define NBRMA_UCX_LANE_TABLE_H_INCLUDED

#include <stdbool.h>
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Of the lines of `text` (NUL-terminated, lines end at '\n'; NULL reads as
 * empty) that contain "lane[" and `usage` anywhere ("" for every lane line):
 * how many there are (*lanes) and how many name one of the `n` transports
 * exactly (*on; "posix" is not "posixx"). A lane line whose transport cannot
 * be read counts in *lanes and on none. `text` is only read. */
void nbrma_ucx_lane_table_count(const char *text, const char *usage,
                                const char *const *transports, size_t n, int *lanes, int *on);

/* One kept answer: its key is an endpoint (NULL: an empty slot) and the
 * addresses of a usage and a transport list, which the callers' constants
 * give, so that the same address means the same question. */
typedef struct {
    const void *endpoint;
    const char *usage;
    const char *const *transports;
    int lanes, on;
} nbrma_ucx_lane_answer_t;

/* Answers kept per (endpoint, usage, transports): open addressing, grown at
 * half load from 64 slots. All zero is an empty cache. */
typedef struct {
    nbrma_ucx_lane_answer_t *slot;
    size_t cap, used;
} nbrma_ucx_lane_answers_t;

/* The kept answer to (endpoint, usage, transports) into *lanes and *on, or
 * false (unknown: nothing written). */
bool nbrma_ucx_lane_answers_find(const nbrma_ucx_lane_answers_t * answers, const void *endpoint,
                                 const char *usage, const char *const *transports, int *lanes,
                                 int *on);

/* Keeps an answer (replacing one to the same question). An answer that finds
 * no memory for the cache to grow, or whose endpoint is NULL, is simply not
 * kept: it is read again next time. */
void nbrma_ucx_lane_answers_keep(nbrma_ucx_lane_answers_t * answers, const void *endpoint,
                                 const char *usage, const char *const *transports, int lanes,
                                 int on);

/* Gives the cache's memory back and leaves it empty. */
void nbrma_ucx_lane_answers_free(nbrma_ucx_lane_answers_t * answers);

#ifdef __cplusplus
}
#endif

#endif /* NBRMA_UCX_LANE_TABLE_H_INCLUDED */
