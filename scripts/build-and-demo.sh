#!/bin/sh
# The README's first command: from a fresh clone to an installed, patched MPICH
# 4.0.2 and a demonstration run of the nonblocking RMA calls on 2 ranks.
. "$(dirname "$0")/lib-setup.sh"
nbrma_setup
nbrma_say "demonstration"
make -C "$nbrma_build" demo
