/*
 * mpich-nbrma: which transports carry an endpoint's lanes (nbrma_ucx_lanes.h).
 * UCX 1.13 says so only in ucp_ep_print_info()'s lane table, which this file
 * prints on MPICH's endpoint under its VCI's lock; formats/ucx_lane_questions.c
 * asks and keeps the answers, formats/ucx_lane_table.c reads the table.
 */

#include "mpidimpl.h"
#include "ucx_impl.h"
#include "nbrma_ucx_lanes.h"
#include "ucx_lane_questions.h"

/* Answers per (endpoint, question): printing a lane table is slow, and narrow
 * atomics ask for every peer at every window's creation. Never dropped: lanes
 * do not change, and MPICH's UCX endpoints live until MPI_Finalize. */
static nbrma_ucx_lane_answers_t answers;

static void print_lanes(void *ep, FILE * stream)
{
    ucp_ep_print_info((ucp_ep_h) ep, stream);
}

/* MPICH's endpoint toward `target` on VCI `vni` (under that VCI's lock) */
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
