#!/bin/sh
# Build and run the MPI integration tests of test/mpi against the installed
# patched MPICH.
#
#   run-mpi-tests.sh TEST_SRC_DIR [NAME ...]
#
# test/mpi/testlist names each run: "program ranks [timeout-seconds] [args...]";
# an argument NAME=VALUE is not passed to the program but set in every rank's
# environment (mpiexec -genv), e.g. MPIR_CVAR_ODD_EVEN_CLIQUES=1.
# A run passes when it exits with 0 within its time limit, rank 0 printed
# " No Errors" and UCX printed no warning or error (UCX's own lines, "UCX
# WARN" or "UCX  ERROR": a user sees them too). Environment: MPICH_PREFIX
# (the installed MPICH), NBRMA_TEST_BUILD (where binaries go), NBRMA_SUMMARY
# (a file to append the counts line to,
# labelled NBRMA_SUMMARY_LABEL, default "MPI integration tests"),
# NBRMA_MPIEXEC (the command that launches a run instead of MPICH_PREFIX's
# mpiexec: scripts/two-hosts.sh), NBRMA_TIME_SCALE (a factor on the time
# limits, for slower transports), NBRMA_SKIP_LIST (a file of "program reason"
# lines: runs of those programs are reported SKIP with the reason, not run).
set -u
src=${1:?usage: run-mpi-tests.sh TEST_SRC_DIR [NAME ...]}
shift
only="$*"
prefix=${MPICH_PREFIX:?MPICH_PREFIX must name the installed MPICH}
out=${NBRMA_TEST_BUILD:-$(pwd)/test-mpi}
mpiexec=${NBRMA_MPIEXEC:-$prefix/bin/mpiexec}
scale=${NBRMA_TIME_SCALE:-1}
mkdir -p "$out"

pass=0
fail=0
skip=0
failed_names=
while read -r name np limit args; do
    case "$name" in ''|\#*) continue ;; esac
    if [ -n "$only" ]; then
        case " $only " in *" $name "*) ;; *) continue ;; esac
    fi
    label="$name -n $np${args:+ $args}"
    if [ -n "${NBRMA_SKIP_LIST:-}" ]; then
        reason=$(awk -v n="$name" '$1 == n { $1 = ""; sub(/^ /, ""); print; exit }' "$NBRMA_SKIP_LIST")
        if [ -n "$reason" ]; then
            printf 'SKIP    %-40s (%s)\n' "$label" "$reason"
            skip=$((skip + 1))
            continue
        fi
    fi
    limit=$(awk -v l="${limit:-60}" -v s="$scale" 'BEGIN { print int(l * s) }')
    # a C++ test (NAME.cpp) is built with mpicxx as C++17
    if [ -f "$src/$name.cpp" ]; then
        source=$src/$name.cpp compile="$prefix/bin/mpicxx -std=c++17"
    else
        source=$src/$name.c compile="$prefix/bin/mpicc"
    fi
    stale=0
    # a test may include a header from elsewhere in the tree (reorder_scenarios.c)
    for dep in "$source" "$src"/nbrma_test*.h \
        $(sed -n 's|^#include "\(\.\./[^"]*\)"|'"$src"'/\1|p' "$source"); do
        [ "$dep" -nt "$out/$name" ] && stale=1
    done
    if [ ! -x "$out/$name" ] || [ "$stale" = 1 ]; then
        # shellcheck disable=SC2086
        if ! $compile -O2 -Wall -Werror -pthread -I"$src" -o "$out/$name" "$source" > "$out/$name.build.log" 2>&1; then
            cat "$out/$name.build.log"
            echo "FAIL    $label (does not compile)"
            fail=$((fail + 1)); failed_names="$failed_names $name"
            continue
        fi
    fi
    genv= prog_args=
    for arg in $args; do
        case $arg in
            *=*) genv="$genv -genv ${arg%%=*} ${arg#*=}" ;;
            *) prog_args="$prog_args $arg" ;;
        esac
    done
    start=$(date +%s.%N)
    # shellcheck disable=SC2086
    timeout -k 5 "$limit" $mpiexec $genv -n "$np" "$out/$name" $prog_args < /dev/null > "$out/$name.log" 2>&1
    rc=$?
    secs=$(awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN { print b - a }')
    # ranks' output may interleave within a line, so the marker is matched anywhere
    ucx_said=$(grep -m 1 -E "UCX  (WARN|ERROR)" "$out/$name.log")
    if [ $rc = 0 ] && grep -q " No Errors" "$out/$name.log" && [ -z "$ucx_said" ]; then
        printf 'PASS    %-40s %6.2fs\n' "$label" "$secs"
        pass=$((pass + 1))
    else
        case $rc in
            124) why="timed out after $limit s" ;;
            0) if grep -q " No Errors" "$out/$name.log"; then
                   why="UCX warned: ${ucx_said#*UCX  }"
               else
                   why="exit status 0 but no ' No Errors' line"
               fi ;;
            *) why="exit status $rc" ;;
        esac
        printf 'FAIL    %-40s (%s)\n' "$label" "$why"
        sed 's/^/    | /' "$out/$name.log" | tail -n 30
        fail=$((fail + 1)); failed_names="$failed_names $name"
    fi
done < "$src/testlist"

skipped=
[ "$skip" = 0 ] || skipped=", $skip skipped"
echo "mpi-tests: $pass passed, $fail failed$skipped${failed_names:+ (failed:$failed_names)}"
[ -z "${NBRMA_SUMMARY:-}" ] ||
    echo "${NBRMA_SUMMARY_LABEL:-MPI integration tests}: $pass passed, $fail failed$skipped" >> "$NBRMA_SUMMARY"
[ "$fail" = 0 ]
