/* OSU 7.4's osu_acc_latency with the patch-set's nonblocking synchronization
 * modes: see osu_rma_common.h for the options, osu_rma_ops.c for the checks. */
#include "osu_rma_common.h"

int main(int argc, char **argv)
{
    return osu_main(argc, argv, "osu_nbrma_acc_latency", &osu_op_acc, 0);
}
