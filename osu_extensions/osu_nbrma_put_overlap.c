/* How much of an epoch with one put a computation hides, per synchronization
 * mode, blocking and nonblocking: see osu_rma_overlap.c. */
#include "osu_rma_common.h"

int main(int argc, char **argv)
{
    return osu_main(argc, argv, "osu_nbrma_put_overlap", &osu_op_put, 1);
}
