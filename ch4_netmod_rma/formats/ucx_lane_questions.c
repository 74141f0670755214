/*
 * mpich-nbrma: the questions asked of an endpoint's lanes
 * (ucx_lane_questions.h).
 */

#define _GNU_SOURCE     /* open_memstream */
#include "ucx_lane_questions.h"

#include <stdlib.h>

#define N_OF(a) (sizeof(a) / sizeof((a)[0]))

void nbrma_ucx_lanes_count(nbrma_ucx_lane_answers_t * answers, void *endpoint,
                           nbrma_ucx_lanes_print_fn print, const char *usage,
                           const char *const *transports, size_t n, int *lanes, int *on)
{
    char *text = NULL;
    size_t text_len = 0;
    FILE *stream;

    if (nbrma_ucx_lane_answers_find(answers, endpoint, usage, transports, lanes, on))
        return;
    *lanes = *on = 0;
    stream = open_memstream(&text, &text_len);
    if (stream == NULL)
        return;
    print(endpoint, stream);
    fclose(stream);
    nbrma_ucx_lane_table_count(text, usage, transports, n, lanes, on);
    free(text);
    nbrma_ucx_lane_answers_keep(answers, endpoint, usage, transports, *lanes, *on);
}

void nbrma_ucx_rma_lanes(nbrma_ucx_lane_answers_t * answers, void *endpoint,
                         nbrma_ucx_lanes_print_fn print, int *lanes, int *emulated)
{
    static const char *const emulating[] = { "tcp" };

    nbrma_ucx_lanes_count(answers, endpoint, print, "rma_bw#", emulating, N_OF(emulating), lanes,
                          emulated);
}

bool nbrma_ucx_lanes_on_cpu(nbrma_ucx_lane_answers_t * answers, void *endpoint,
                            nbrma_ucx_lanes_print_fn print, const char *usage)
{
    static const char *const cpu_transports[] = { "posix", "sysv", "xpmem", "self", "cma", "knem" };
    int lanes, on;

    nbrma_ucx_lanes_count(answers, endpoint, print, usage, cpu_transports, N_OF(cpu_transports),
                          &lanes, &on);
    return lanes > 0 && on == lanes;
}

bool nbrma_ucx_lanes_map_memory(nbrma_ucx_lane_answers_t * answers, void *endpoint,
                                nbrma_ucx_lanes_print_fn print)
{
    static const char *const mapping[] = { "posix", "sysv", "xpmem" };
    int lanes, on;

    nbrma_ucx_lanes_count(answers, endpoint, print, "", mapping, N_OF(mapping), &lanes, &on);
    return on > 0;
}
