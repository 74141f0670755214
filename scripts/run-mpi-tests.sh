#!/bin/sh
# Build and run the MPI integration tests of test/mpi against the installed
# patched MPICH.
#
#   run-mpi-tests.sh TEST_SRC_DIR [NAME ...]
#
# test/mpi/testlist names each run: "program ranks [timeout-seconds] [args...]".
# A run passes when it exits with 0 within its time limit and rank 0 printed
# " No Errors". Environment: MPICH_PREFIX (the installed MPICH), NBRMA_TEST_BUILD
# (where binaries go), NBRMA_SUMMARY (a file to append the counts line to).
set -u
src=${1:?usage: run-mpi-tests.sh TEST_SRC_DIR [NAME ...]}
shift
only="$*"
prefix=${MPICH_PREFIX:?MPICH_PREFIX must name the installed MPICH}
out=${NBRMA_TEST_BUILD:-$(pwd)/test-mpi}
mkdir -p "$out"

pass=0
fail=0
failed_names=
while read -r name np limit args; do
    case "$name" in ''|\#*) continue ;; esac
    if [ -n "$only" ]; then
        case " $only " in *" $name "*) ;; *) continue ;; esac
    fi
    label="$name -n $np${args:+ $args}"
    if [ ! -x "$out/$name" ] || [ "$src/$name.c" -nt "$out/$name" ] || [ "$src/nbrma_test.h" -nt "$out/$name" ]; then
        if ! "$prefix/bin/mpicc" -O2 -Wall -Werror -I"$src" -o "$out/$name" "$src/$name.c" > "$out/$name.build.log" 2>&1; then
            cat "$out/$name.build.log"
            echo "FAIL    $label (does not compile)"
            fail=$((fail + 1)); failed_names="$failed_names $name"
            continue
        fi
    fi
    start=$(date +%s.%N)
    # shellcheck disable=SC2086
    timeout -k 5 "${limit:-60}" "$prefix/bin/mpiexec" -n "$np" "$out/$name" $args < /dev/null > "$out/$name.log" 2>&1
    rc=$?
    secs=$(awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN { print b - a }')
    # ranks' output may interleave within a line, so the marker is matched anywhere
    if [ $rc = 0 ] && grep -q " No Errors" "$out/$name.log"; then
        printf 'PASS    %-40s %6.2fs\n' "$label" "$secs"
        pass=$((pass + 1))
    else
        case $rc in
            124) why="timed out after ${limit:-60} s" ;;
            0) why="exit status 0 but no ' No Errors' line" ;;
            *) why="exit status $rc" ;;
        esac
        printf 'FAIL    %-40s (%s)\n' "$label" "$why"
        sed 's/^/    | /' "$out/$name.log" | tail -n 30
        fail=$((fail + 1)); failed_names="$failed_names $name"
    fi
done < "$src/testlist"

echo "mpi-tests: $pass passed, $fail failed${failed_names:+ (failed:$failed_names)}"
[ -z "${NBRMA_SUMMARY:-}" ] || echo "MPI integration tests: $pass passed, $fail failed" >> "$NBRMA_SUMMARY"
[ "$fail" = 0 ]
