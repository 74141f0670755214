#!/bin/sh
# The soak of test/mpi/stress_random_epochs: random mixes of every epoch kind,
# blocking and nonblocking, on 4 ranks for SECONDS, every accumulate checked
# at its target; a new seed per run (printed, to replay a failure with
# `mpiexec -n 4 stress_random_epochs 0 SECONDS SEED`).
#
#   soak.sh PREFIX TESTDIR BUILDDIR [SECONDS]
set -eu
prefix=$1
src=$2
out=$3
seconds=${4:-600}
mkdir -p "$out"
"$prefix/bin/mpicc" -O2 -Wall -Werror -I"$src" -o "$out/stress_random_epochs" \
    "$src/stress_random_epochs.c"
seed=$(od -An -N4 -tu4 /dev/urandom | tr -d ' ')
echo "soak: 4 ranks, $seconds s, seed $seed"
# the program stops itself after SECONDS; the limit only catches a hang
timeout -k 5 $((seconds + 120)) "$prefix/bin/mpiexec" -n 4 "$out/stress_random_epochs" 0 \
    "$seconds" "$seed" < /dev/null > "$out/soak.log" 2>&1 || status=$?
cat "$out/soak.log"
if [ "${status:-0}" = 0 ] && grep -q " No Errors" "$out/soak.log"; then
    echo "soak: passed"
else
    echo "soak: FAILED (exit status ${status:-0}; seed $seed)"
    exit 1
fi
