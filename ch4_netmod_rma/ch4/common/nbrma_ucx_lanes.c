/*
 * mpich-nbrma: which transports carry an endpoint's lanes (nbrma_ucx_lanes.h).
 * UCX 1.13 says so only in ucp_ep_print_info()'s lane table
 * ("lane[1]: 4:posix/memory.0 md[2] -> ... rma_bw#0 amo#1"). This file only
 * prints it into memory: formats/ucx_lane_table.c reads it and keeps the
 * answers, MPICH- and UCX-free and tested without MPI.
 */

#include "mpidimpl.h"
#include "ucx_impl.h"
#include "nbrma_ucx_lanes.h"
#include "ucx_lane_table.h"
#include <stdio.h>
#include <stdlib.h>

/* Answers already read, per (endpoint, usage, transports): UCX prints a
 * lane table of some 2 KB per call (about 7 us here), and narrow atomics ask
 * it for every peer at every window's creation. An endpoint's lanes do not
 * change while it exists, and MPICH's UCX endpoints live until
 * MPI_Finalize, so the answers are never dropped. The usage and transports
 * are the callers' constants, so their addresses name them. */
static nbrma_ucx_lane_answers_t answers;

void MPIDI_NBRMA_ucx_lanes_count(ucp_ep_h ep, const char *usage, const char *const *transports,
                                 size_t n, int *lanes, int *on)
{
    char *text = NULL;
    size_t text_len = 0;
    FILE *stream;

    if (nbrma_ucx_lane_answers_find(&answers, ep, usage, transports, lanes, on))
        return;
    *lanes = *on = 0;
    stream = open_memstream(&text, &text_len);
    if (stream == NULL)
        return;
    ucp_ep_print_info(ep, stream);
    fclose(stream);
    nbrma_ucx_lane_table_count(text, usage, transports, n, lanes, on);
    free(text);
    nbrma_ucx_lane_answers_keep(&answers, ep, usage, transports, *lanes, *on);
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

void MPIDI_NBRMA_win_rma_lanes(MPIR_Win * win, int target, int *lanes, int *emulated)
{
    int vni = MPIDI_UCX_get_win_vni(win);

    MPID_THREAD_CS_ENTER(VCI, MPIDI_VCI(vni).lock);
    MPIDI_NBRMA_ucx_rma_lanes_emulated(MPIDI_UCX_WIN_TO_EP(win, target, vni), lanes, emulated);
    MPID_THREAD_CS_EXIT(VCI, MPIDI_VCI(vni).lock);
}

bool MPIDI_NBRMA_win_lanes_on_cpu(MPIR_Win * win, int target)
{
    int vni = MPIDI_UCX_get_win_vni(win);
    bool on_cpu;

    MPID_THREAD_CS_ENTER(VCI, MPIDI_VCI(vni).lock);
    on_cpu = MPIDI_NBRMA_ucx_lanes_on_cpu(MPIDI_UCX_WIN_TO_EP(win, target, vni), "");
    MPID_THREAD_CS_EXIT(VCI, MPIDI_VCI(vni).lock);
    return on_cpu;
}
