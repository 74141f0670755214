#!/bin/bash
# The whole benchmark set against vanilla MPICH 4.0.2, the patched MPICH and
# Open MPI 4.1.4 with osc/ucx, then the results page with its plots.
#
#   osu_extensions/run-bench-all.sh [OUTDIR]          (make bench runs it)
#
# OUTDIR (raw outputs) defaults to bench-results in the checkout's build
# directory (_build, as make bench), BENCH_DIR to its bench-build.
#
# 1. OSU-compatible latency (osu_nbrma_{put,get,acc,fop,cas}_latency) with
#    OSU's synchronization modes on every MPI and the nonblocking ones on the
#    patched MPICH; overlap (osu_nbrma_{put,acc}_overlap) with and without
#    MPI_Test calls during the computation;
# 2. the reorder scenarios of the nonblocking-epochs paper (patched only: the
#    comparison is the flag off and on);
# 3. run-epochs-bench.sh with OPENMPI=1 (inefficiency patterns, atomics
#    throughput, LU), run-memhandle-bench.sh (memory-handle windows);
# 4. run-osu-sweep.sh, the real OSU micro-benchmarks 7.4 one-sided (every
#    benchmark x window x mode x 8 B/8 KiB/1 MiB, over shared memory and over
#    tcp), only when OSU_SRC names an OSU 7.4 source tree (not shipped here):
#    OSU_SWEEP_ROUNDS rounds (default ROUNDS), about 75 minutes per round on 2
#    cores; its summary goes to RESULTS_DIR/osu-sweep.md, its numbers to
#    RESULTS_DIR/raw/osu-sweep-*.tsv;
# then make-results.py writes RESULTS_DIR/results.md (default docs/) and its
# PNG plots from the raw outputs in OUTDIR, which go to
# RESULTS_DIR/raw/bench-results.tar.gz.
#
# The MPIs alternate run by run, in an order that rotates every round, ROUNDS
# times (default 3); tables give medians over the rounds. Environment: ROUNDS,
# RESULTS_DIR, SKIP_RESULTS=1 (raw outputs only), PARTS (default "osu reorder
# epochs memhandle osu-sweep"), OSU_SRC, OSU_SWEEP_ROUNDS, and the variables of
# side-by-side-common.sh (where the MPIs are, MPIS, BENCH_DIR, TIMEOUT). The
# machine should be otherwise idle.
set -u
SCRIPT_NAME=run-bench-all
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=side-by-side-common.sh
. "$here/side-by-side-common.sh"
OUTDIR=${1:-${OUTDIR:-$NBRMA_BUILD/bench-results}}
OUTDIR=$(mkdir -p "$OUTDIR" && cd "$OUTDIR" && pwd) || die "cannot make $OUTDIR"
ROUNDS=${ROUNDS:-3}
RESULTS_DIR=${RESULTS_DIR:-$here/../docs}
PARTS=${PARTS:-osu reorder epochs memhandle osu-sweep}
OSU_SRC=${OSU_SRC:-}
OSU_SWEEP_ROUNDS=${OSU_SWEEP_ROUNDS:-$ROUNDS}
mkdir -p "$OUTDIR/raw" "$BENCH_DIR" || die "cannot make $OUTDIR/raw or $BENCH_DIR"
# Open MPI (the peer users would pick instead) and the plotting library, from Debian
need=
[[ " $MPIS " != *" openmpi "* ]] || [ -x "$OMPI_MPICC" ] || need="$need openmpi-bin libopenmpi-dev"
# Debian's python3-matplotlib is for Debian's python3 (a python3 earlier in PATH may not see it)
py=$([ -x /usr/bin/python3 ] && echo /usr/bin/python3 || command -v python3)
"$py" -c "import matplotlib" 2>/dev/null || need="$need python3-matplotlib"
if [ -n "$need" ]; then
    [ "$(id -u)" = 0 ] && command -v apt-get > /dev/null || die "missing Debian packages:$need"
    log "installing Debian packages:$need"
    apt-get update -q > /dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y -q $need > /dev/null ||
        die "apt-get install$need failed"
fi
check_mpis
write_info

has_part() { case " $PARTS " in *" $1 "*) return 0 ;; esac; return 1; }

# --- builds ----------------------------------------------------------------------

osu_sources="osu_rma_common.c osu_rma_sync.c osu_rma_latency.c osu_rma_overlap.c osu_rma_ops.c"
osu_programs="put_latency get_latency acc_latency fop_latency cas_latency put_overlap acc_overlap"

build_osu_nbrma() {
    local mpi=$1 dir=$BENCH_DIR/osu-nbrma-$1 cc p src
    cc=$(mpicc_of "$mpi")
    mkdir -p "$dir"
    # always rebuilt (a second each): they depend on the MPI and on six sources
    for p in $osu_programs; do
        src=
        for s in $osu_sources; do src="$src $here/$s"; done
        # shellcheck disable=SC2086
        "$cc" -O2 -std=c99 -o "$dir/osu_nbrma_$p" "$here/osu_nbrma_$p.c" $src ||
            die "building osu_nbrma_$p for $mpi failed"
    done
    if [ "$mpi" = patched ]; then
        "$cc" -O2 -o "$dir/osu_reorder_scenarios" "$here/osu_reorder_scenarios.c" ||
            die "building osu_reorder_scenarios failed"
    fi
}

for mpi in $MPIS; do build_osu_nbrma "$mpi"; done

# --- runs ------------------------------------------------------------------------

# name | program | arguments | which MPIs ("all" or "patched")
osu_configs() {
    local fam mode sizes
    for fam in put get acc fop cas; do
        # accumulates of 1 MB take milliseconds each (the target's CPU adds them)
        case $fam in fop|cas) sizes= ;; acc) sizes="-m 1:65536" ;; *) sizes="-m 1:1048576" ;; esac
        for mode in flush lock lock_all fence pscw; do
            echo "lat-$fam-$mode|${fam}_latency|-s $mode $sizes|all"
        done
        for mode in iflush ilock ilock_all ifence ipscw; do
            echo "lat-$fam-$mode|${fam}_latency|-s $mode $sizes|patched"
        done
    done
    for fam in put acc; do
        case $fam in acc) sizes="-m 1024:262144" ;; *) sizes="-m 1024:1048576" ;; esac
        for t in 0 10; do
            for mode in flush lock pscw fence; do
                echo "ovl-$fam-$mode-t$t|${fam}_overlap|-s $mode $sizes -i 200 -x 10 -t $t|all"
                echo "ovl-$fam-i$mode-t$t|${fam}_overlap|-s i$mode $sizes -i 200 -x 10 -t $t|patched"
            done
        done
    done
}


# A run that failed on the patched MPICH fails `make bench`; one that failed
# on vanilla MPICH or Open MPI (a data check that caught one of their bugs, a
# crash) is listed in the results page and does not.
failed=0
note_failure() {
    echo "FAILED on $1: $2" | tee -a "$OUTDIR/failures.txt" >&2
    [ "$1" != patched ] || failed=$((failed + 1))
}
: > "$OUTDIR/failures.txt"

run_round_osu() {
    local r=$1 name prog args which mpi f
    while IFS='|' read -r name prog args which; do
        for mpi in $(mpis_of_round "$r"); do
            [ "$which" = all ] || [ "$which" = "$mpi" ] || continue
            f=$OUTDIR/raw/$name.$mpi.$r.txt
            # shellcheck disable=SC2086
            launch "$mpi" "$BENCH_DIR/osu-nbrma-$mpi/osu_nbrma_$prog" $args < /dev/null > "$f" 2>&1 ||
                note_failure "$mpi" "$name, round $r (see $f)"
        done
    done < <(osu_configs)
}

if has_part osu; then
    for ((r = 1; r <= ROUNDS; r++)); do
        log "OSU-compatible latency and overlap, round $r of $ROUNDS"
        run_round_osu "$r"
    done
fi

if has_part reorder && [[ " $MPIS " == *" patched "* ]]; then
    for ((r = 1; r <= ROUNDS; r++)); do
        log "reorder scenarios, round $r of $ROUNDS"
        f=$OUTDIR/raw/reorder.patched.$r.txt
        NP=4 launch patched "$BENCH_DIR/osu-nbrma-patched/osu_reorder_scenarios" -i 21 -x 2 \
            < /dev/null > "$f" 2>&1 || note_failure patched "reorder scenarios, round $r (see $f)"
    done
fi

if has_part epochs; then
    log "inefficiency patterns, atomics, LU (run-epochs-bench.sh)"
    OPENMPI=$([[ " $MPIS " == *" openmpi "* ]] && echo 1 || echo 0) \
        sh "$here/run-epochs-bench.sh" "$VANILLA_PREFIX" "$PATCHED_PREFIX" "$ROUNDS" \
        "$OUTDIR/epochs" < /dev/null > "$OUTDIR/epochs-summary.txt" 2> "$OUTDIR/epochs.log" ||
        note_failure patched "run-epochs-bench.sh (see $OUTDIR/epochs.log)"
fi

if has_part memhandle; then
    log "memory-handle windows (run-memhandle-bench.sh)"
    sh "$here/run-memhandle-bench.sh" "$VANILLA_PREFIX" "$PATCHED_PREFIX" "$ROUNDS" \
        "$OUTDIR/memhandle" < /dev/null > "$OUTDIR/memhandle-summary.txt" 2> "$OUTDIR/memhandle.log" ||
        note_failure patched "run-memhandle-bench.sh (see $OUTDIR/memhandle.log)"
fi

sweep_ran=0
if has_part osu-sweep; then
    if [ -z "$OSU_SRC" ]; then
        log "OSU_SRC is not set: skipping the sweep of OSU 7.4's one-sided benchmarks" \
            "(run-osu-sweep.sh; make bench OSU_SRC=/path/to/osu-micro-benchmarks-7.4 runs it)"
    else
        log "OSU 7.4 one-sided sweep, $OSU_SWEEP_ROUNDS round(s) (run-osu-sweep.sh; log: $OUTDIR/osu-sweep.log)"
        sweep_ran=1
        # exits 1 when a run or a data check of the patched MPICH failed
        OSU_SRC=$OSU_SRC ROUNDS=$OSU_SWEEP_ROUNDS OUTDIR=$OUTDIR/osu-sweep MPIS=$MPIS \
            VANILLA_PREFIX=$VANILLA_PREFIX PATCHED_PREFIX=$PATCHED_PREFIX BENCH_DIR=$BENCH_DIR \
            bash "$here/run-osu-sweep.sh" < /dev/null > "$OUTDIR/osu-sweep-summary.txt" 2> "$OUTDIR/osu-sweep.log" ||
            note_failure patched "run-osu-sweep.sh (see $OUTDIR/osu-sweep/summary.md, $OUTDIR/osu-sweep.log)"
    fi
fi

warn_changed_libraries
# the sub-scripts report runs that failed and lost updates on their own
grep -h "failed: see\|LOST UPDATES\|WITHOUT A PASSED CHECK" "$OUTDIR"/epochs.log "$OUTDIR"/memhandle.log \
    "$OUTDIR"/*-summary.txt 2>/dev/null | while read -r line; do
    echo "FAILED in a sub-script: $line" | tee -a "$OUTDIR/failures.txt" >&2
done
grep -q "\.patched\.\|p-blocking\|p-nonblocking" "$OUTDIR/failures.txt" && failed=$((failed + 1))

if [ "${SKIP_RESULTS:-0}" != 1 ]; then
    log "writing $RESULTS_DIR/results.md and its plots"
    "$py" "$here/make-results.py" "$OUTDIR" "$RESULTS_DIR" || failed=$((failed + 1))
    # the raw outputs beside the page that was made from them
    mkdir -p "$RESULTS_DIR/raw" &&
        tar czf "$RESULTS_DIR/raw/bench-results.tar.gz" -C "$OUTDIR" raw epochs memhandle \
            info.txt failures.txt epochs-summary.txt memhandle-summary.txt 2>/dev/null ||
        log "could not pack the raw outputs into $RESULTS_DIR/raw"
    if [ "$sweep_ran" = 1 ] && [ -f "$OUTDIR/osu-sweep/summary.md" ]; then
        cp "$OUTDIR/osu-sweep/summary.md" "$RESULTS_DIR/osu-sweep.md" &&
            cp "$OUTDIR/osu-sweep/results.tsv" "$RESULTS_DIR/raw/osu-sweep-results.tsv" &&
            cp "$OUTDIR/osu-sweep/validation.tsv" "$RESULTS_DIR/raw/osu-sweep-validation.tsv" ||
            log "could not copy the OSU sweep's summary into $RESULTS_DIR"
    fi
fi
log "done: $failed failure(s); raw outputs in $OUTDIR"
[ "$failed" = 0 ]
