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

/* Of the lanes of `ep` that carry `usage`: how many there are (*lanes) and
 * how many run on one of the `n` transports (*on). */
static void lanes_count(ucp_ep_h ep, const char *usage, const char *const *transports, size_t n,
                        int *lanes, int *on)
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

/* lanes_count on the endpoint toward `target`, under its VCI's lock */
static void win_lanes_count(MPIR_Win * win, int target, const char *usage,
                            const char *const *transports, size_t n, int *lanes, int *on)
{
    int vni = MPIDI_UCX_get_win_vni(win);

    MPID_THREAD_CS_ENTER(VCI, MPIDI_VCI(vni).lock);
    lanes_count(MPIDI_UCX_WIN_TO_EP(win, target, vni), usage, transports, n, lanes, on);
    MPID_THREAD_CS_EXIT(VCI, MPIDI_VCI(vni).lock);
}

#define N_OF(a) (sizeof(a) / sizeof((a)[0]))

void MPIDI_NBRMA_win_rma_lanes(MPIR_Win * win, int target, int *lanes, int *emulated)
{
    static const char *const emulating[] = { "tcp" };

    win_lanes_count(win, target, "rma_bw#", emulating, N_OF(emulating), lanes, emulated);
}

bool MPIDI_NBRMA_win_lanes_on_cpu(MPIR_Win * win, int target, const char *usage)
{
    static const char *const cpu_transports[] = { "posix", "sysv", "xpmem", "self", "cma", "knem" };
    int lanes, on;

    win_lanes_count(win, target, usage, cpu_transports, N_OF(cpu_transports), &lanes, &on);
    return lanes > 0 && on == lanes;
}

bool MPIDI_NBRMA_win_lanes_map_memory(MPIR_Win * win, int target)
{
    static const char *const mapping[] = { "posix", "sysv", "xpmem" };
    int lanes, on;

    /* any lane: UCX names their usage differently by size and version */
    win_lanes_count(win, target, "", mapping, N_OF(mapping), &lanes, &on);
    return on > 0;
}
