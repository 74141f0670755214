#!/bin/sh
# The soak of test/mpi/stress_random_epochs: random mixes of every epoch kind,
# blocking and nonblocking, on 4 ranks for SECONDS, every accumulate checked
# at its target; a new seed per run (printed, to replay a failure with
# `mpiexec -n 4 stress_random_epochs 0 SECONDS SEED`). The first half runs
# with the protocol messages in mailboxes and locks in lock words (shared
# memory), the second half with every protocol message an active message
# (MPIR_CVAR_NBRMA_MAILBOXES=0), the path that peers on other hosts take.
#
#   soak.sh PREFIX TESTDIR BUILDDIR [SECONDS]
set -eu
prefix=$1
src=$2
out=$3
seconds=${4:-600}
half=$(( (seconds + 1) / 2 ))
mkdir -p "$out"
"$prefix/bin/mpicc" -O2 -Wall -Werror -I"$src" -o "$out/stress_random_epochs" \
    "$src/stress_random_epochs.c"
failed=0
for mailboxes in 1 0; do
    seed=$(od -An -N4 -tu4 /dev/urandom | tr -d ' ')
    echo "soak: 4 ranks, $half s, seed $seed, MPIR_CVAR_NBRMA_MAILBOXES=$mailboxes"
    status=0
    # the program stops itself after its seconds; the limit only catches a hang
    MPIR_CVAR_NBRMA_MAILBOXES=$mailboxes timeout -k 5 $((half + 120)) \
        "$prefix/bin/mpiexec" -n 4 "$out/stress_random_epochs" 0 "$half" "$seed" \
        < /dev/null > "$out/soak.log" 2>&1 || status=$?
    cat "$out/soak.log"
    if [ "$status" = 0 ] && grep -q " No Errors" "$out/soak.log"; then
        echo "soak: passed"
    else
        echo "soak: FAILED (exit status $status; seed $seed, MPIR_CVAR_NBRMA_MAILBOXES=$mailboxes)"
        failed=1
    fi
done
exit $failed
