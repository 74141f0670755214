/*
 * mpich-nbrma: which transports carry an endpoint's lanes (nbrma_ucx_lanes.h).
 * UCX 1.13 says so only in ucp_ep_print_info()'s lane table
 * ("lane[1]: 4:posix/memory.0 md[2] -> ... rma_bw#0 amo#1").
 */

#include "nbrma_ucx_lanes.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stdint.h>

/* The transport of a lane line from its "lane[" on, "posix" of
 * "lane[1]: 4:posix/memory.0": *name and *len, false if it does not read so. */
static bool transport_of(const char *lane, const char **name, size_t *len)
{
    const char *colon = strchr(lane, ':'), *slash;

    slash = colon ? strchr(colon, '/') : NULL;
    if (!slash)
        return false;
    colon++;
    while (*colon == ' ' || (*colon >= '0' && *colon <= '9') || *colon == ':')
        colon++;
    *name = colon;
    *len = (size_t) (slash - colon);
    return slash > colon;
}

/* Answers already read, per (endpoint, usage, transports): UCX prints a
 * lane table of some 2 KB per call (about 7 us here), and narrow atomics ask
 * it for every peer at every window's creation. An endpoint's lanes do not
 * change while it exists, and MPICH's UCX endpoints live until
 * MPI_Finalize. The usage and transports are the callers' constants, so
 * their addresses name them. Open addressing, grown at half load; an answer
 * that finds no memory is simply not kept. */
typedef struct {
    ucp_ep_h ep;
    const char *usage;
    const char *const *transports;
    int lanes, on;
} lanes_answer_t;

static lanes_answer_t *answers;
static size_t answers_cap, answers_used;

static size_t slot_of(ucp_ep_h ep, const char *usage, const char *const *transports, size_t cap)
{
    uintptr_t h = (uintptr_t) ep * 0x9E3779B97F4A7C15u ^ (uintptr_t) usage * 31u ^
        (uintptr_t) transports;
    size_t i = (size_t) (h ^ (h >> 29)) & (cap - 1);

    while (answers[i].ep &&
           !(answers[i].ep == ep && answers[i].usage == usage &&
             answers[i].transports == transports))
        i = (i + 1) & (cap - 1);
    return i;
}

static const lanes_answer_t *known(ucp_ep_h ep, const char *usage,
                                   const char *const *transports)
{
    if (answers == NULL)
        return NULL;
    const lanes_answer_t *a = &answers[slot_of(ep, usage, transports, answers_cap)];
    return a->ep ? a : NULL;
}

static void remember(lanes_answer_t answer)
{
    if (2 * (answers_used + 1) > answers_cap) {
        size_t cap = answers_cap ? 2 * answers_cap : 64;
        lanes_answer_t *old = answers, *grown = calloc(cap, sizeof(*grown));
        size_t old_cap = answers_cap;

        if (grown == NULL)
            return;
        answers = grown;
        answers_cap = cap;
        for (size_t i = 0; i < old_cap; i++)
            if (old[i].ep)
                answers[slot_of(old[i].ep, old[i].usage, old[i].transports, cap)] = old[i];
        free(old);
    }
    answers[slot_of(answer.ep, answer.usage, answer.transports, answers_cap)] = answer;
    answers_used++;
}

void MPIDI_NBRMA_ucx_lanes_count(ucp_ep_h ep, const char *usage, const char *const *transports,
                                 size_t n, int *lanes, int *on)
{
    char *text = NULL;
    size_t text_len = 0;
    const lanes_answer_t *a = known(ep, usage, transports);
    FILE *stream;

    if (a) {
        *lanes = a->lanes;
        *on = a->on;
        return;
    }
    *lanes = *on = 0;
    stream = open_memstream(&text, &text_len);
    if (stream == NULL)
        return;
    ucp_ep_print_info(ep, stream);
    fclose(stream);
    for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n")) {
        const char *lane = strstr(line, "lane["), *name;
        size_t len;

        if (!lane || !strstr(line, usage))
            continue;
        ++*lanes;
        if (!transport_of(lane, &name, &len))
            continue;
        for (size_t i = 0; i < n; i++)
            if (len == strlen(transports[i]) && strncmp(name, transports[i], len) == 0) {
                ++*on;
                break;
            }
    }
    free(text);
    remember((lanes_answer_t) {
             .ep = ep,.usage = usage,.transports = transports,.lanes = *lanes,.on = *on});
}

void MPIDI_NBRMA_ucx_rma_lanes_emulated(ucp_ep_h ep, int *lanes, int *emulated)
{
    static const char *const emulating[] = { "tcp" };

    MPIDI_NBRMA_ucx_lanes_count(ep, "rma_bw#", emulating, 1, lanes, emulated);
}

bool MPIDI_NBRMA_ucx_lanes_map_memory(ucp_ep_h ep)
{
    static const char *const mapping[] = { "posix", "sysv", "xpmem" };
    int lanes, on;

    /* any lane: UCX names their usage differently by size and version */
    MPIDI_NBRMA_ucx_lanes_count(ep, "", mapping, sizeof(mapping) / sizeof(mapping[0]), &lanes,
                                &on);
    return on > 0;
}

bool MPIDI_NBRMA_ucx_lanes_on_cpu(ucp_ep_h ep, const char *usage)
{
    static const char *const cpu_transports[] = { "posix", "sysv", "xpmem", "self", "cma", "knem" };
    int lanes, on;

    MPIDI_NBRMA_ucx_lanes_count(ep, usage, cpu_transports,
                                sizeof(cpu_transports) / sizeof(cpu_transports[0]), &lanes, &on);
    return lanes > 0 && on == lanes;
}
