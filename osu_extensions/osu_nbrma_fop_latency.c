/* OSU 7.4's osu_fop_latency with the patch-set's nonblocking synchronization
 * modes: see osu_rma_common.h for the options, osu_rma_ops.c for the checks. */
#include "osu_rma_common.h"

int main(int argc, char **argv)
{
    return osu_main(argc, argv, "osu_nbrma_fop_latency", &osu_op_fop, 0);
}
