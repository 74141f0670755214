#!/bin/bash
# RMA-MT (the LANL multithreaded RMA benchmarks, github.com/hpc/rma-mt) against
# vanilla MPICH 4.0.2, the patched MPICH and Open MPI 4.1.4 osc/ucx, side by
# side on this node, 2 ranks: builds RMA-MT from the source tree you point it
# at, once per MPI, then runs the matrix
#
#   program  rmamt_bw rmamt_bibw rmamt_lat           (PROGRAMS)
#   -o       put get                                 (OPS)
#   -s       lock_all fence lock flush pscw all_flush flush_all flush_local
#            flush_local_all                         (SYNCS)
#   -t       1 2 4                                   (THREADS)
#   windows  one shared window, and -w (one per thread)  (WINDOWS="shared per-thread")
#
# (rmamt_lat knows only lock_all, fence, lock, flush and pscw: its other
# modes are left out) with PER_THREAD_BYTES-byte operations per thread (-l and -m are RMA-MT's
# aggregate sizes: PER_THREAD_BYTES x threads) and ITERATIONS iterations, each
# run under `timeout`. The MPIs alternate run by run for ROUNDS rounds.
#
#   RMAMT_SRC=/path/to/rma-mt bash osu_extensions/run-rma-mt.sh
#   RMAMT_SRC=... ROUNDS=3 PROGRAMS=rmamt_bw OPS=put bash osu_extensions/run-rma-mt.sh
#
# Writes OUTDIR/results.tsv (mpi round program op sync threads windows status
# value), the raw outputs, and OUTDIR/summary.md: which runs did not complete
# (exit status, 124 = timeout) and, per row, the median message rate (bw,
# bibw: M/s) or latency (lat: us) with patched/vanilla and patched/openmpi.
#
# Known: "-s fence" with 2 or more threads and one shared window ends in a
# timeout with every MPI. RMA-MT has each origin thread call MPI_Win_fence on
# the shared window (all_sync) while the target calls it from one thread: per
# size the origin makes 2 x threads fences and the target 2, so the fences
# stop matching, and concurrent collective calls on one window from several
# threads are erroneous anyway (MPI-3.1 12.4.2). With -w each thread fences its
# own window on both sides and the runs complete.
#
# The same holds for -w with 2 or more threads where RMA-MT lets thread 0
# alone open and close the epochs (rmamt_bw: -s lock_all, lock, pscw;
# rmamt_bibw: those and fence): the other threads' windows get RMA outside any
# epoch, which MPICH (vanilla and patched) reports as MPI_ERR_RMA_SYNC (exit
# 50) and Open MPI too (exit 47), except rmamt_bibw's fence, which Open MPI
# does not check. SKIP_ERRONEOUS=1 leaves all of these out.
#
# Environment (defaults in brackets), besides those of side-by-side-common.sh:
#   RMAMT_SRC         the RMA-MT source tree (required); its configure is made
#                     with autoreconf -fi if it has none
#   ROUNDS            [1]        ITERATIONS [2000]     PER_THREAD_BYTES [8]
#   LAT_ITERATIONS    rmamt_lat's iterations [100]: it passes a spinning thread
#                     barrier at every iteration, which with more threads than
#                     cores waits for a scheduler time slice each time (2
#                     cores, 4 threads: about 40 ms per iteration with every
#                     MPI), so 2000 iterations outlast any sensible timeout
#   SKIP_ERRONEOUS=1  leave out the runs RMA-MT itself makes erroneous (above)
#   SUMMARY_ONLY=1    only write OUTDIR/summary.md again from OUTDIR/results.tsv
#   PROGRAMS, OPS, SYNCS, THREADS, WINDOWS  the matrix above
#   TIMEOUT           seconds per run [60]
#   OUTDIR            [$BENCH_DIR/rma-mt-<date>]
set -u

here=$(cd "$(dirname "$0")" && pwd)
SCRIPT_NAME=run-rma-mt
TIMEOUT=${TIMEOUT:-60}
. "$here/side-by-side-common.sh"
RMAMT_SRC=${RMAMT_SRC:-}
ROUNDS=${ROUNDS:-1}
ITERATIONS=${ITERATIONS:-2000}
LAT_ITERATIONS=${LAT_ITERATIONS:-100}
SUMMARY_ONLY=${SUMMARY_ONLY:-0}
SKIP_ERRONEOUS=${SKIP_ERRONEOUS:-0}
PER_THREAD_BYTES=${PER_THREAD_BYTES:-8}
PROGRAMS=${PROGRAMS:-rmamt_bw rmamt_bibw rmamt_lat}
OPS=${OPS:-put get}
SYNCS=${SYNCS:-lock_all fence lock flush pscw all_flush flush_all flush_local flush_local_all}
THREADS=${THREADS:-1 2 4}
WINDOWS=${WINDOWS:-shared per-thread}
OUTDIR=${OUTDIR:-$BENCH_DIR/rma-mt-$(date +%Y%m%d-%H%M%S)}

summarize() {
    python3 - "$OUTDIR" "$ROUNDS" "$MPIS" > "$OUTDIR/summary.md" <<'EOF'
"""results.tsv -> which runs failed, and medians per row with ratios."""
import sys, statistics, collections
out, rounds, mpis = sys.argv[1], int(sys.argv[2]), sys.argv[3].split()
vals = collections.defaultdict(list)    # (row, mpi) -> values
runs = collections.Counter()            # (row, mpi) -> runs
failed = collections.defaultdict(list)  # (row, mpi) -> exit statuses
rows = []
for line in open(f"{out}/results.tsv"):
    mpi, rnd, prog, op, sync, threads, windows, rc, value = line.rstrip("\n").split("\t")
    row = (prog, op, sync, int(threads), windows)
    if row not in rows:
        rows.append(row)
    runs[(row, mpi)] += 1
    if rc != "0":
        failed[(row, mpi)].append(rc)
    elif value != "nan":
        vals[(row, mpi)].append(float(value))

def med(row, mpi):
    v = vals[(row, mpi)]
    return statistics.median(v) if v else None

def ratio(a, b):
    return f"{a / b:.2f}" if a is not None and b not in (None, 0) else "-"

print("```\n" + open(f"{out}/info.txt").read().rstrip() + "\n```\n")
print(f"Medians over {rounds} alternating round(s). rmamt_bw, rmamt_bibw: message rate "
      "(M/s, higher is better); rmamt_lat: latency (us, lower is better).\n")
print("## Runs that did not complete\n")
incomplete = [(row, mpi) for row in rows for mpi in mpis if failed[(row, mpi)]]
if not incomplete:
    print("None.\n")
else:
    print("| run | " + " | ".join(mpis) + " |")
    print("| --- |" + " --- |" * len(mpis))
    for row in dict.fromkeys(r for r, _ in incomplete):
        cells = [f"{len(failed[(row, m)])}/{runs[(row, m)]} failed (exit {','.join(sorted(set(failed[(row, m)])))})"
                 if failed[(row, m)] else "ok" for m in mpis]
        print(f"| {row[0]} -o {row[1]} -s {row[2]} -t {row[3]} {'-w' if row[4] == 'per-thread' else ''} | "
              + " | ".join(cells) + " |")
    print()
cols = list(mpis)
if {"patched", "vanilla"} <= set(mpis):
    cols.append("patched/vanilla")
if {"patched", "openmpi"} <= set(mpis):
    cols.append("patched/openmpi")
for prog in dict.fromkeys(r[0] for r in rows):
    print(f"## {prog}\n")
    print("| -o | -s | -t | windows | " + " | ".join(cols) + " |")
    print("| --- | --- | ---: | --- |" + " ---: |" * len(cols))
    for row in (r for r in rows if r[0] == prog):
        m = {mpi: med(row, mpi) for mpi in mpis}
        cells = ["-" if m[x] is None else f"{m[x]:.3f}" for x in mpis]
        if "patched/vanilla" in cols:
            cells.append(ratio(m.get("patched"), m.get("vanilla")))
        if "patched/openmpi" in cols:
            cells.append(ratio(m.get("patched"), m.get("openmpi")))
        print(f"| {row[1]} | {row[2]} | {row[3]} | {row[4]} | " + " | ".join(cells) + " |")
    print()
EOF
    cat "$OUTDIR/summary.md"
    echo
    echo "raw outputs: $OUTDIR/raw; all numbers: $OUTDIR/results.tsv"
}

if [ "$SUMMARY_ONLY" = 1 ]; then
    [ -f "$OUTDIR/results.tsv" ] || die "no $OUTDIR/results.tsv"
    summarize
    exit 0
fi

[ -n "$RMAMT_SRC" ] || die "set RMAMT_SRC to an RMA-MT source tree (github.com/hpc/rma-mt)"
[ -f "$RMAMT_SRC/src/rmamt_bw.c" ] || die "RMAMT_SRC=$RMAMT_SRC is not an RMA-MT tree"
check_mpis
mkdir -p "$OUTDIR/raw" || die "cannot make $OUTDIR"
: > "$OUTDIR/results.tsv"
write_info
echo "matrix: $PROGRAMS | $OPS | $SYNCS | threads $THREADS | $WINDOWS;" \
    "$PER_THREAD_BYTES B per thread, $ITERATIONS iterations ($LAT_ITERATIONS for rmamt_lat)" | tee -a "$OUTDIR/info.txt" >&2

for mpi in $MPIS; do
    build_rmamt "$mpi"
done

# run_one ROUND MPI PROGRAM OP SYNC THREADS WINDOWS: one run, one line of results.tsv.
run_one() {
    local round=$1 mpi=$2 prog=$3 op=$4 sync=$5 threads=$6 windows=$7 bytes out rc value iters
    bytes=$((PER_THREAD_BYTES * threads))
    iters=$ITERATIONS
    [ "$prog" = rmamt_lat ] && iters=$LAT_ITERATIONS
    set -- -o "$op" -s "$sync" -t "$threads" -l "$bytes" -m "$bytes" -i "$iters"
    [ "$windows" = per-thread ] && set -- "$@" -w
    out=$OUTDIR/raw/$round/$mpi/$prog-$op-$sync-t$threads-$windows.txt
    mkdir -p "$(dirname "$out")"
    launch "$mpi" "$BENCH_DIR/rmamt-$mpi/src/$prog" "$@" < /dev/null > "$out" 2>&1
    rc=$?
    # the last size's line: bw/bibw "BpT BxT MiB/s rate", lat "BpT BxT us";
    # the rate column says M/s but holds operations per second
    value=$(awk -v lat="$([ "$prog" = rmamt_lat ] && echo 1)" '
        $1 ~ /^[0-9]+$/ && $2 ~ /^[0-9]+$/ && NF >= 3 { v = lat ? $3 : $4 / 1e6 }
        END { print (v == "" ? "nan" : v) }' "$out")
    printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$mpi" "$round" "$prog" "$op" "$sync" \
        "$threads" "$windows" "$rc" "$value" >> "$OUTDIR/results.tsv"
    [ "$rc" = 0 ] || log "round $round, $mpi: $prog -o $op -s $sync -t $threads ($windows): exit status $rc"
}

# syncs_of PROGRAM: the modes of SYNCS that PROGRAM has (rmamt_lat's table
# stops at pscw; it would call a null function for the others).
syncs_of() {
    local sync
    for sync in $SYNCS; do
        case $1:$sync in
        rmamt_lat:lock_all|rmamt_lat:fence|rmamt_lat:lock|rmamt_lat:flush|rmamt_lat:pscw) echo "$sync" ;;
        rmamt_lat:*) ;;
        *) echo "$sync" ;;
        esac
    done
}

# erroneous PROGRAM SYNC THREADS WINDOWS: whether RMA-MT's own use of MPI is
# wrong in that run (see the header).
erroneous() {
    [ "$3" -gt 1 ] || return 1
    case $1:$2:$4 in
    rmamt_bw:fence:shared) return 0 ;;
    rmamt_bw:lock_all:per-thread|rmamt_bw:lock:per-thread|rmamt_bw:pscw:per-thread) return 0 ;;
    rmamt_bibw:lock_all:per-thread|rmamt_bibw:lock:per-thread|rmamt_bibw:pscw:per-thread) return 0 ;;
    rmamt_bibw:fence:per-thread) return 0 ;;
    esac
    return 1
}

round=1
while [ "$round" -le "$ROUNDS" ]; do
    for prog in $PROGRAMS; do
        for op in $OPS; do
            for sync in $(syncs_of "$prog"); do
                for threads in $THREADS; do
                    for windows in $WINDOWS; do
                        [ "$SKIP_ERRONEOUS" = 1 ] && erroneous "$prog" "$sync" "$threads" "$windows" && continue
                        for mpi in $MPIS; do
                            run_one "$round" "$mpi" "$prog" "$op" "$sync" "$threads" "$windows"
                        done
                    done
                done
            done
        done
    done
    log "round $round of $ROUNDS done"
    round=$((round + 1))
done

warn_changed_libraries

summarize
