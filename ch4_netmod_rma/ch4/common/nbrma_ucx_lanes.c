/*
 * mpich-nbrma: which transports carry an endpoint's lanes (nbrma_ucx_lanes.h).
 * UCX 1.13 says so only in ucp_ep_print_info()'s lane table
 * ("lane[1]: 4:posix/memory.0 md[2] -> ... rma_bw#0 amo#1"). This file only
 * prints it, on MPICH's endpoint under its VCI's lock:
 * formats/ucx_lane_questions.c asks the questions and keeps the answers,
 * formats/ucx_lane_table.c reads the table, MPICH- and UCX-free and tested
 * without MPI.
 */

#include "mpidimpl.h"
#include "ucx_impl.h"
#include "nbrma_ucx_lanes.h"
#include "ucx_lane_questions.h"

/* Answers already read, per (endpoint, question): UCX prints a lane table
 * of some 2 KB per call (about 7 us here), and narrow atomics ask it for
 * every peer at every window's creation. An endpoint's lanes do not change
 * while it exists, and MPICH's UCX endpoints live until MPI_Finalize, so
 * the answers are never dropped. */
static nbrma_ucx_lane_answers_t answers;

static void print_lanes(void *ep, FILE * stream)
{
    ucp_ep_print_info((ucp_ep_h) ep, stream);
}

/* MPICH's endpoint toward `target` of `win` on its VCI `vni` (under that
 * VCI's lock) */
#define WIN_EP(win, target, vni) ((void *) MPIDI_UCX_WIN_TO_EP(win, target, vni))

void MPIDI_NBRMA_win_rma_lanes(MPIR_Win * win, int target, int *lanes, int *emulated)
{
    int vni = MPIDI_UCX_get_win_vni(win);

    MPID_THREAD_CS_ENTER(VCI, MPIDI_VCI(vni).lock);
    nbrma_ucx_rma_lanes(&answers, WIN_EP(win, target, vni), print_lanes, lanes, emulated);
    MPID_THREAD_CS_EXIT(VCI, MPIDI_VCI(vni).lock);
}

bool MPIDI_NBRMA_win_lanes_on_cpu(MPIR_Win * win, int target, const char *usage)
{
    int vni = MPIDI_UCX_get_win_vni(win);
    bool on_cpu;

    MPID_THREAD_CS_ENTER(VCI, MPIDI_VCI(vni).lock);
    on_cpu = nbrma_ucx_lanes_on_cpu(&answers, WIN_EP(win, target, vni), print_lanes, usage);
    MPID_THREAD_CS_EXIT(VCI, MPIDI_VCI(vni).lock);
    return on_cpu;
}

bool MPIDI_NBRMA_win_lanes_map_memory(MPIR_Win * win, int target)
{
    int vni = MPIDI_UCX_get_win_vni(win);
    bool map;

    MPID_THREAD_CS_ENTER(VCI, MPIDI_VCI(vni).lock);
    map = nbrma_ucx_lanes_map_memory(&answers, WIN_EP(win, target, vni), print_lanes);
    MPID_THREAD_CS_EXIT(VCI, MPIDI_VCI(vni).lock);
    return map;
}
