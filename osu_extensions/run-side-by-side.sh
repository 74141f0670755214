#!/bin/bash
# Side-by-side RMA benchmarks: vanilla MPICH 4.0.2, the patched MPICH and
# Debian's Open MPI 4.1.4 (osc/ucx + pml/ucx), all on this one node, 2 ranks.
#
# What it measures, per MPI:
#   (a) asleep_target (osu_extensions/asleep_target.c): passive-target RMA
#       while the target sleeps 1 s outside MPI -- us per operation, whether
#       the origin had to wait for the target to wake up, and whether the data
#       RMA left in the target's memory is right; 3 window kinds x 6 operations
#       (put, get, fetch_and_op, compare_and_swap, accumulate, each + flush;
#       lock_exclusive + put + unlock);
#   (b) OSU micro-benchmarks 7.4, one-sided, 1-8 bytes (-m 1:8):
#       osu_put_latency and osu_get_latency with -w allocate and -w create, each
#       with -s flush, flush_local, lock, fence, pscw; osu_fop_latency and
#       osu_cas_latency (-w allocate -s flush; OSU's default MPI_CHAR);
#       osu_acc_latency (-w allocate -s flush);
#   (c) optionally RMA-MT: rmamt_bw -o put -s flush, 8 B, 1 thread (only if
#       RMAMT_SRC is set), reported as us per put (1e6 / message rate).
#
# The MPIs are run alternately, run by run (vanilla, patched, openmpi,
# vanilla, ...), for ROUNDS rounds, and the summary holds the median over the
# rounds (for OSU rows: over the rounds and the 4 sizes 1, 2, 4, 8 B) with the
# ratios patched/vanilla and patched/openmpi. Every run is under `timeout`.
#
#   VANILLA_PREFIX=... PATCHED_PREFIX=... OSU_SRC=... [RMAMT_SRC=...] [ROUNDS=5] \
#       bash osu_extensions/run-side-by-side.sh
#
# Environment (defaults in brackets):
#   VANILLA_PREFIX  vanilla MPICH install         [BUILD/vanilla]
#   PATCHED_PREFIX  patched MPICH install         [BUILD/install]
#                   (BUILD: the checkout's _build, see side-by-side-common.sh)
#   OSU_SRC         OSU micro-benchmarks 7.4 tree [required unless SKIP_OSU=1]
#   RMAMT_SRC       hpc/rma-mt tree               [unset: RMA-MT not run]
#   ROUNDS          rounds                        [5]
#   BENCH_DIR       where the benchmarks are built, as osu-<mpi>/ and
#                   rmamt-<mpi>/                  [BUILD/bench-build]
#   OUTDIR          raw outputs and summary       [$BENCH_DIR/side-by-side-<date>]
#   MPIS            which MPIs                    ["vanilla patched openmpi"]
#   TIMEOUT         seconds per run               [120]
#   BIND            none or core: process binding, the same for every MPI [none]
#                   (Open MPI binds to cores by default, MPICH's hydra does not)
#   OMPI_MPICC, OMPI_MPICXX, OMPI_MPIRUN  [/usr/bin/{mpicc,mpicxx,mpirun}.openmpi]
#   REBUILD=1       rebuild OSU/RMA-MT even if built already (otherwise they are
#                   rebuilt when the MPI library is newer than the binaries)
#   SKIP_ASLEEP=1, SKIP_OSU=1  leave out parts
#   OSU_OPS, OSU_SYNCS, OSU_WINS  the latency rows' operations, -s modes and
#                   -w window kinds ["put get", "flush flush_local lock fence
#                   pscw", "allocate create"; "dynamic" too]
#   OSU_ATOMICS=0   leave out osu_fop/cas/acc_latency
#
# The MPIs, the launchers and Open MPI's flags: side-by-side-common.sh.
set -u

here=$(cd "$(dirname "$0")" && pwd)
SCRIPT_NAME=run-side-by-side
. "$here/side-by-side-common.sh"
OSU_SRC=${OSU_SRC:-}
RMAMT_SRC=${RMAMT_SRC:-}
ROUNDS=${ROUNDS:-5}
OSU_OPS=${OSU_OPS:-put get}
OSU_SYNCS=${OSU_SYNCS:-flush flush_local lock fence pscw}
OSU_WINS=${OSU_WINS:-allocate create}
OSU_ATOMICS=${OSU_ATOMICS:-1}
OUTDIR=${OUTDIR:-$BENCH_DIR/side-by-side-$(date +%Y%m%d-%H%M%S)}
SKIP_ASLEEP=${SKIP_ASLEEP:-0}
SKIP_OSU=${SKIP_OSU:-0}

# --- builds ----------------------------------------------------------------------

build_asleep() {
    local mpi=$1
    "$(mpicc_of "$mpi")" -std=c99 -O2 -Wall -o "$OUTDIR/bin/asleep_target.$mpi" \
        "$here/asleep_target.c" || die "asleep_target.c does not build with $mpi"
}

# --- the list of runs ------------------------------------------------------------
# One line per run: row-name|program|arguments. The program is "asleep", an OSU
# one-sided program name, or "rmamt_bw".

runs_list() {
    if [ "$SKIP_ASLEEP" != 1 ]; then
        echo "asleep|asleep|--sleep=1 --ops=2000 --verbose"
    fi
    if [ "$SKIP_OSU" != 1 ]; then
        for op in $OSU_OPS; do
            for win in $OSU_WINS; do
                for sync in $OSU_SYNCS; do
                    echo "osu_${op}_latency -w $win -s $sync|osu_${op}_latency|-w $win -s $sync -m 1:8"
                done
            done
        done
        [ "$OSU_ATOMICS" = 1 ] || return 0
        echo "osu_fop_latency -w allocate -s flush|osu_fop_latency|-w allocate -s flush"
        echo "osu_cas_latency -w allocate -s flush|osu_cas_latency|-w allocate -s flush"
        echo "osu_acc_latency -w allocate -s flush|osu_acc_latency|-w allocate -s flush -m 1:8"
    fi
    if [ -n "$RMAMT_SRC" ]; then
        echo "rmamt_bw -o put -s flush 8 B 1 thread|rmamt_bw|-o put -s flush -l 8 -m 8 -t 1 -i 10000"
    fi
}

# run_one ROUND MPI ROW PROGRAM ARGS: runs it, appends its numbers to results.tsv
# as "mpi round row size value flags".
run_one() {
    local round=$1 mpi=$2 row=$3 prog=$4 args=$5 bin out rc
    case $prog in
    asleep) bin=$OUTDIR/bin/asleep_target.$mpi ;;
    rmamt_bw) bin=$BENCH_DIR/rmamt-$mpi/src/rmamt_bw ;;
    *) bin=$BENCH_DIR/osu-$mpi/c/mpi/one-sided/$prog ;;
    esac
    out=$OUTDIR/raw/$round/$mpi/$(echo "$row" | tr ' /' '_-').txt
    mkdir -p "$(dirname "$out")"
    # shellcheck disable=SC2086
    launch "$mpi" "$bin" $args < /dev/null > "$out" 2>&1
    rc=$?
    if [ "$rc" != 0 ]; then
        log "round $round, $mpi, $row: exit status $rc (124 = timeout), see $out"
        printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$mpi" "$round" "$row" "-" "nan" "failed:$rc" >> "$OUTDIR/results.tsv"
    fi
    case $prog in
    asleep)     # "kind op us_per_op waited|no-wait ok|WRONG"
        awk -v m="$mpi" -v r="$round" '
            NF == 5 && $1 !~ /^#/ && ($4 == "waited" || $4 == "no-wait") {
                printf "%s\t%s\tasleep_target %s %s\t-\t%s\t%s,%s\n", m, r, $1, $2, $3, $4, $5 }' "$out" ;;
    rmamt_bw)   # "  8   8   bandwidth   message rate (per second)"
        awk -v m="$mpi" -v r="$round" -v row="$row" '
            NF == 4 && $1 ~ /^[0-9]+$/ && $4 > 0 {
                printf "%s\t%s\t%s\t%s\t%.4f\t-\n", m, r, row, $1, 1e6 / $4 }' "$out" ;;
    *)          # OSU: "size  latency"
        awk -v m="$mpi" -v r="$round" -v row="$row" '
            NF == 2 && $1 ~ /^[0-9]+$/ {
                printf "%s\t%s\t%s\t%s\t%s\t-\n", m, r, row, $1, $2 }' "$out" ;;
    esac >> "$OUTDIR/results.tsv"
}

# --- main ------------------------------------------------------------------------

check_mpis
[ "$SKIP_OSU" = 1 ] || [ -n "$OSU_SRC" ] ||
    die "set OSU_SRC to an OSU micro-benchmarks 7.4 source tree (or SKIP_OSU=1)"
[ "$SKIP_OSU" = 1 ] || [ -d "$OSU_SRC/c/mpi/one-sided" ] || die "OSU_SRC=$OSU_SRC is not an OSU tree"
[ -z "$RMAMT_SRC" ] || [ -f "$RMAMT_SRC/src/rmamt_bw.c" ] || die "RMAMT_SRC=$RMAMT_SRC is not an RMA-MT tree"

mkdir -p "$OUTDIR/bin" || die "cannot make $OUTDIR"
: > "$OUTDIR/results.tsv"
write_info

for mpi in $MPIS; do
    build_asleep "$mpi"
    [ "$SKIP_OSU" = 1 ] || build_osu "$mpi"
    [ -z "$RMAMT_SRC" ] || build_rmamt "$mpi"
done

round=1
while [ "$round" -le "$ROUNDS" ]; do
    runs_list | while IFS='|' read -r row prog args; do
        for mpi in $MPIS; do
            run_one "$round" "$mpi" "$row" "$prog" "$args"
        done
    done
    log "round $round of $ROUNDS done"
    round=$((round + 1))
done

warn_changed_libraries

python3 - "$OUTDIR" "$ROUNDS" "$MPIS" > "$OUTDIR/summary.md" <<'EOF'
"""Medians per row (over rounds, and over sizes for OSU rows) -> markdown."""
import sys, statistics, collections
out, rounds, mpis = sys.argv[1], int(sys.argv[2]), sys.argv[3].split()
vals = collections.defaultdict(list)        # (row, mpi) -> values
by_size = collections.defaultdict(list)     # (row, size, mpi) -> values
flags = collections.defaultdict(list)       # (row, mpi) -> flags
rows, sizes = [], collections.defaultdict(list)
for line in open(f"{out}/results.tsv"):
    mpi, rnd, row, size, value, flag = line.rstrip("\n").split("\t")
    if value != "nan":
        if row not in rows:
            rows.append(row)
        if size not in sizes[row]:
            sizes[row].append(size)
        vals[(row, mpi)].append(float(value))
        by_size[(row, size, mpi)].append(float(value))
    flags[(row, mpi)].append(flag)

def med(v):
    return statistics.median(v) if v else None

def cell(row, mpi, values):
    m = med(values)
    text = "-" if m is None else f"{m:.3f}" if m < 10 else f"{m:.1f}"
    f = flags[(row, mpi)]
    if row.startswith("asleep_target"):
        waited = sum(x.startswith("waited") for x in f)
        text += f" (waited {waited}/{len(f)})" if waited else " (no-wait)"
        wrong = sum(x.endswith("WRONG") for x in f)
        if wrong:
            text += f" **WRONG {wrong}/{len(f)}**"
    return text, m

def ratio(a, b):
    return f"{a / b:.2f}" if a is not None and b not in (None, 0) else "-"

def table(title, keys, get_values):
    cols = mpis + (["patched/vanilla"] if {"patched", "vanilla"} <= set(mpis) else []) \
                + (["patched/openmpi"] if {"patched", "openmpi"} <= set(mpis) else [])
    print(f"\n### {title}\n")
    print("| row | " + " | ".join(cols) + " |")
    print("| --- |" + " ---: |" * len(cols))
    for key in keys:
        texts, meds = [], {}
        for mpi in mpis:
            t, meds[mpi] = cell(key[0], mpi, get_values(key, mpi))
            texts.append(t)
        if "patched/vanilla" in cols:
            texts.append(ratio(meds.get("patched"), meds.get("vanilla")))
        if "patched/openmpi" in cols:
            texts.append(ratio(meds.get("patched"), meds.get("openmpi")))
        label = key[0] if len(key) == 1 else f"{key[0]}, {key[1]} B"
        print(f"| {label} | " + " | ".join(texts) + " |")

print("```\n" + open(f"{out}/info.txt").read().rstrip() + "\n```\n")
print(f"Medians over {rounds} alternating rounds ({', '.join(mpis)}).")
asleep = [(r,) for r in rows if r.startswith("asleep_target")]
if asleep:
    table("asleep_target: us per operation while the target sleeps 1 s outside MPI "
          "(2000 ops; ~500 us/op = the origin waited the whole second)",
          asleep, lambda k, m: vals[(k[0], m)])
osu = [(r,) for r in rows if r.startswith("osu_")]
if osu:
    table("OSU 7.4 one-sided latency (us), median over rounds and sizes 1-8 B "
          "(fop/cas: 1 B MPI_CHAR)", osu, lambda k, m: vals[(k[0], m)])
rmamt = [(r,) for r in rows if r.startswith("rmamt")]
if rmamt:
    table("RMA-MT: us per put (1e6 / message rate; 10000 puts then one flush)",
          rmamt, lambda k, m: vals[(k[0], m)])
failed = [(mpi, rnd, row, flag[len("failed:"):])
          for line in open(f"{out}/results.tsv")
          for mpi, rnd, row, size, value, flag in [line.rstrip("\n").split("\t")]
          if flag.startswith("failed:")]
if failed:
    print("\nRuns that exited non-zero (124: timeout; asleep_target: 1 = a check failed):\n")
    for mpi, rnd, row, rc in failed:
        print(f"- round {rnd}, {mpi}, {row}: exit status {rc}")
# Per-size OSU table in a file of its own.
with open(f"{out}/osu-per-size.md", "w") as f:
    sys.stdout, saved = f, sys.stdout
    table("OSU 7.4 one-sided latency (us) per size, median over rounds",
          [(r, s) for r, in osu for s in sizes[r]], lambda k, m: by_size[(k[0], k[1], m)])
    sys.stdout = saved
EOF
cat "$OUTDIR/summary.md"
echo
echo "raw outputs: $OUTDIR/raw; all numbers: $OUTDIR/results.tsv; per size: $OUTDIR/osu-per-size.md"
