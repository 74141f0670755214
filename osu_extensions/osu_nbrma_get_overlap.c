/* How much of an epoch with one get a computation hides, per synchronization
 * mode, blocking and nonblocking: see osu_rma_overlap.c. */
#include "osu_rma_common.h"

int main(int argc, char **argv)
{
    return osu_main(argc, argv, "osu_nbrma_get_overlap", &osu_op_get, 1);
}
