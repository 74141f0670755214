/*
 * mpich-nbrma: which transports carry an endpoint's lanes (nbrma_ucx_lanes.h).
 * UCX 1.13 says so only in ucp_ep_print_info()'s lane table
 * ("lane[1]: 4:posix/memory.0 md[2] -> ... rma_bw#0 amo#1").
 */

#include "nbrma_ucx_lanes.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

void MPIDI_NBRMA_ucx_lanes_count(ucp_ep_h ep, const char *usage, const char *const *transports,
                                 size_t n, int *lanes, int *on)
{
    char *text = NULL;
    size_t text_len = 0;
    FILE *stream = open_memstream(&text, &text_len);

    *lanes = *on = 0;
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
}

bool MPIDI_NBRMA_ucx_lanes_on_cpu(ucp_ep_h ep, const char *usage)
{
    static const char *const cpu_transports[] = { "posix", "sysv", "xpmem", "self", "cma", "knem" };
    int lanes, on;

    MPIDI_NBRMA_ucx_lanes_count(ep, usage, cpu_transports,
                                sizeof(cpu_transports) / sizeof(cpu_transports[0]), &lanes, &on);
    return lanes > 0 && on == lanes;
}
