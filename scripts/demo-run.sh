#!/bin/sh
# The demonstration that ends the README's first command: what the installed
# MPICH says about itself, the new declaration in its mpi.h, and an mpicc-built
# program using MPIX_Win_iflush_all on 2 ranks.
#
#   demo-run.sh REPO_DIR     (MPICH_PREFIX names the installed patched MPICH)
set -eu
repo=${1:?usage: demo-run.sh REPO_DIR}
prefix=${MPICH_PREFIX:?MPICH_PREFIX must name the installed MPICH}
out=${NBRMA_TEST_BUILD:-$(mktemp -d)}
mkdir -p "$out"

echo "--- $prefix/bin/mpichversion"
"$prefix/bin/mpichversion" | grep -E 'Version:|Device:|Custom'
echo "--- the installed mpi.h declares (each with its PMPIX_ twin and a man page):"
grep -h '^int MPIX_Win_i[a-z_]*(' "$prefix"/include/mpi*.h | sed 's/ MPICH_API_PUBLIC//'
echo "--- mpicc -o iflush_overlap test/demo/iflush_overlap.c && mpiexec -n 2 ./iflush_overlap"
"$prefix/bin/mpicc" -O2 -o "$out/iflush_overlap" "$repo/test/demo/iflush_overlap.c"
timeout 60 "$prefix/bin/mpiexec" -n 2 "$out/iflush_overlap" < /dev/null
echo "--- demonstration passed"
