#!/bin/sh
# The benchmark programs of osu_extensions/ still build and still find the data
# right: every OSU-compatible family in every synchronization mode (OSU's and
# the nonblocking ones) and the overlap programs, on the patched MPICH, with
# a few small sizes and iterations; then the reorder scenarios with short
# rounds. A run passes when it exits with 0 within its time limit, which it
# does only if every data check after every size passed (the programs exit
# with 1 after a wrong byte). Timings are not looked at: they belong to
# `make bench`.
#
#   check-bench-programs.sh SRC_DIR BUILD_DIR
#
# Environment: MPICH_PREFIX (the installed MPICH), NBRMA_SUMMARY (a file to
# append the counts line to).
set -u
src=${1:?usage: check-bench-programs.sh SRC_DIR BUILD_DIR}/osu_extensions
out=${2:?usage: check-bench-programs.sh SRC_DIR BUILD_DIR}
prefix=${MPICH_PREFIX:?MPICH_PREFIX must name the installed MPICH}
mkdir -p "$out"
pass=0
fail=0

objects=
for s in common sync latency overlap ops; do objects="$objects $src/osu_rma_$s.c"; done
for p in put_latency get_latency acc_latency fop_latency cas_latency put_overlap acc_overlap; do
    # shellcheck disable=SC2086
    "$prefix/bin/mpicc" -O2 -std=c99 -Wall -Werror -o "$out/osu_nbrma_$p" "$src/osu_nbrma_$p.c" $objects ||
        { echo "FAIL    osu_nbrma_$p (does not compile)"; fail=$((fail + 1)); }
done
"$prefix/bin/mpicc" -O2 -Wall -Werror -o "$out/osu_reorder_scenarios" "$src/osu_reorder_scenarios.c" ||
    { echo "FAIL    osu_reorder_scenarios (does not compile)"; fail=$((fail + 1)); }
"$prefix/bin/mpicc" -O2 -std=c99 -Wall -Werror -o "$out/agent_cost" "$src/agent_cost.c" ||
    { echo "FAIL    agent_cost (does not compile)"; fail=$((fail + 1)); }
"$prefix/bin/mpicc" -O2 -std=c99 -Wall -Werror -o "$out/stencil_p2p" "$src/stencil_p2p.c" ||
    { echo "FAIL    stencil_p2p (does not compile)"; fail=$((fail + 1)); }
"$prefix/bin/mpicc" -O2 -Wall -Werror -o "$out/osu_quovadis_latency" "$src/osu_quovadis_latency.c" ||
    { echo "FAIL    osu_quovadis_latency (does not compile)"; fail=$((fail + 1)); }
"$prefix/bin/mpicc" -O2 -Wall -Werror -o "$out/osu_nbrma_epochs" "$src/osu_nbrma_epochs.c" ||
    { echo "FAIL    osu_nbrma_epochs (does not compile)"; fail=$((fail + 1)); }

run() {
    label=$1 np=$2
    shift 2
    if timeout -k 5 60 "$prefix/bin/mpiexec" -n "$np" "$@" < /dev/null > "$out/last.log" 2>&1; then
        pass=$((pass + 1))
    else
        echo "FAIL    $label (exit status $?)"
        sed 's/^/    | /' "$out/last.log" | tail -n 15
        fail=$((fail + 1))
    fi
}

modes="lock pscw fence flush flush_local lock_all ilock ipscw ifence iflush iflush_local iflush_all iflush_local_all ilock_all"
for fam in put get acc fop cas; do
    for mode in $modes; do
        for win in allocate create dynamic; do
            run "osu_nbrma_${fam}_latency -s $mode -w $win" 2 "$out/osu_nbrma_${fam}_latency" \
                -s "$mode" -w "$win" -m 1:4096 -i 20 -x 2
        done
    done
    # memory-handle windows: passive target, flushes of every kind
    for mode in lock lock_all flush flush_local iflush iflush_local iflush_all iflush_local_all; do
        run "osu_nbrma_${fam}_latency -s $mode -w memhandle" 2 "$out/osu_nbrma_${fam}_latency" \
            -s "$mode" -w memhandle -m 1:4096 -i 20 -x 2
    done
done
for fam in put acc; do
    for mode in flush iflush lock ilock pscw ipscw fence ifence; do
        run "osu_nbrma_${fam}_overlap -s $mode -t 3" 2 "$out/osu_nbrma_${fam}_overlap" \
            -s "$mode" -m 1024:16384 -i 20 -x 2 -t 3
    done
    run "osu_nbrma_${fam}_overlap -s iflush -w memhandle" 2 "$out/osu_nbrma_${fam}_overlap" \
        -s iflush -w memhandle -m 1024:16384 -i 20 -x 2 -t 3
done
# a mode a memory-handle window cannot carry is refused with exit status 1
if timeout -k 5 60 "$prefix/bin/mpiexec" -n 2 "$out/osu_nbrma_put_latency" -w memhandle -s fence \
    < /dev/null > "$out/last.log" 2>&1 || ! grep -q "passive target only" "$out/last.log"; then
    echo "FAIL    osu_nbrma_put_latency -w memhandle -s fence (not refused)"
    fail=$((fail + 1))
else
    pass=$((pass + 1))
fi
run "osu_reorder_scenarios -n 4" 4 "$out/osu_reorder_scenarios" -m 65536 -i 2 -x 0
# the Quo Vadis extensions' ping-pongs and their plain twins, data checked per size
for mode in order notify getnotify signal; do
    run "osu_quovadis_latency $mode" 2 "$out/osu_quovadis_latency" $mode --max-size=4096 \
        --iterations=50 --warmup=5
done
# the pipelined stencil in every mode: every halo value and the last grid checked
for np in 2 3; do
    run "stencil_p2p -n $np" "$np" "$out/stencil_p2p" --rows=100 --cols=20 --iterations=5 --warmup=1
done
# massive atomic transactions: no update lost, on allocated and dynamic windows
# (whole lock epochs carry the targets' addresses there), and a pattern
for win in "" --dynamic; do
    for np in 2 3; do
        run "osu_nbrma_epochs atomics $win -n $np" "$np" "$out/osu_nbrma_epochs" atomics \
            --series=nonblocking --seconds=0.5 $win
    done
    run "osu_nbrma_epochs late_complete $win" 2 "$out/osu_nbrma_epochs" late_complete \
        --series=nonblocking --delay-us=100 --iters=20 --size=65536 $win
done
# the last value put while the target computes arrives, with the progress agent
run "agent_cost compute (agent)" 2 -genv MPIR_CVAR_NBRMA_ASYNC_PROGRESS 1 "$out/agent_cost" \
    compute 20000000
run "agent_cost compute (agent, tcp)" 2 -genv MPIR_CVAR_NBRMA_ASYNC_PROGRESS 1 -genv UCX_TLS tcp,self \
    "$out/agent_cost" compute 20000000

echo "bench-programs: $pass passed, $fail failed"
[ -z "${NBRMA_SUMMARY:-}" ] ||
    echo "benchmark programs (data checks, no timings): $pass passed, $fail failed" >> "$NBRMA_SUMMARY"
[ "$fail" = 0 ]
