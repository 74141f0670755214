#!/bin/bash
# The real OSU micro-benchmarks 7.4, one-sided, against vanilla MPICH 4.0.2,
# the patched MPICH and Open MPI 4.1.4 osc/ucx, side by side on this node, 2
# ranks: builds OSU from the source tree you point it at, once per MPI (with
# that MPI's mpicc, into BENCH_DIR/osu-<mpi>), then runs the matrix
#
#   benchmark  osu_put_latency osu_get_latency osu_acc_latency osu_get_acc_latency
#              osu_fop_latency osu_cas_latency osu_put_bw osu_get_bw osu_put_bibw
#                                                        (BENCHMARKS)
#              an entry NAME:TYPE runs NAME with -T TYPE: the default list
#              adds osu_acc_latency, osu_fop_latency and osu_cas_latency
#              with MPI_INT (:mpi_int), a datatype with which accumulates may
#              take UCX's atomics (MPI_CHAR, OSU's default, never does: 1-byte
#              elements); OSU 7.4's osu_get_acc_latency takes no -T
#   -w         allocate create dynamic                   (WINDOWS)
#   -s         every mode the benchmark accepts: flush flush_local lock lock_all
#              fence pscw; osu_put_bibw only fence and pscw (OSU's
#              process_one_sided_options: ACTIVE_SYNC benchmarks take no
#              passive-target mode)                      (SYNCS filters them)
#   size       8 B, 8 KiB, 1 MiB: one run per size, -m S:S (SIZES);
#              osu_fop_latency and osu_cas_latency have one row (one element
#              of OSU's default datatype, MPI_CHAR: 1 byte) and take no -m
#   transport  shm: UCX's default transports (shared memory here);
#              tcp: UCX over tcp only                    (TRANSPORTS)
#
# with OSU's default iterations (OSU_ARGS, OSU_ARGS_TCP add options) and
# datatypes (MPI_CHAR for the accumulates), each run under `timeout` (TIMEOUT). The MPIs alternate run by run, in an
# order that rotates every round, for ROUNDS rounds.
#
# tcp only: UCX_TLS=tcp,self in the environment of the MPICH runs (hydra's
# mpiexec passes its environment on); Open MPI gets the same variable with
# "-x UCX_TLS=tcp,self" on its mpirun line: its pml/ucx and osc/ucx (the only
# pml and osc its flags allow, see openmpi-flags.sh) open their UCX contexts
# with it. opal_common_ucx_tls=any in those flags only decides whether the UCX
# components may run at all; it does not choose UCX's transports. Check with
# UCX_LOG_LEVEL=info: the endpoint configurations then name tcp only.
#
# Data checks: OSU 7.4 has -c (validation) in osu_acc_latency, osu_fop_latency
# and osu_cas_latency only (the others stop with "Benchmark does not support
# validation"). For those, one validation run per (transport, benchmark,
# window, mode, size, MPI), -c with one operation (-i 1 -x 0: see
# validate_one), says whether each MPI's data is right; for the other
# benchmarks the summary says that the data was not checked.
#
#   OSU_SRC=/path/to/osu-micro-benchmarks-7.4 bash osu_extensions/run-osu-sweep.sh
#   OSU_SRC=... ROUNDS=1 BENCHMARKS=osu_put_latency TRANSPORTS=tcp \
#       bash osu_extensions/run-osu-sweep.sh
#
# Writes OUTDIR/results.tsv (transport benchmark window sync size mpi round
# status value; value in us, or MB/s for osu_put_bw, osu_get_bw and
# osu_put_bibw; status ok, timeout, exit:N, hang-after-row (see GRACE) or
# norow: exit 0 without the size's row; a run that printed its row and then
# failed keeps its value, which the medians use), OUTDIR/validation.tsv
# (transport benchmark window sync size mpi
# passed|failed|skipped|run-failed:STATUS), the raw outputs under OUTDIR/raw
# and OUTDIR/summary.md: medians per row, then every row where the patched
# MPICH takes more than 1.05x vanilla's time, every row where it takes more
# than Open MPI's time while Open MPI's data is right (or unchecked, said so),
# the runs that failed or timed out per MPI, and the data checks that failed.
# For the bandwidth benchmarks "time" is the inverse of the bandwidth (the
# ratio is other MPI's MB/s over the patched MPICH's). Exits with 1 if a run
# or a data check of the patched MPICH failed (make bench then fails too).
#
# Environment (defaults in brackets), besides those of side-by-side-common.sh
# (VANILLA_PREFIX, PATCHED_PREFIX, MPIS, BENCH_DIR, BIND, ...):
#   OSU_SRC           the OSU 7.4 source tree (required; not shipped here); its
#                     configure is made with autoreconf -fi if it has none
#   ROUNDS [3]        TRANSPORTS ["shm tcp"]   SIZES ["8 8192 1048576"]
#   BENCHMARKS, WINDOWS, SYNCS  the matrix above [all]
#   TIMEOUT [180]     seconds per run
#   OSU_ARGS          more OSU options for every timed run, e.g. "-i 1000 -x 100"
#                     [none: OSU's default iterations]
#   OSU_ARGS_TCP      more OSU options for the timed runs over tcp [none]
#   GRACE [20]        seconds a run may take to end after printing its row;
#                     then it is stopped and its status is hang-after-row
#   RETRY_WITHIN [30] a run that fails within this many seconds without
#                     its row is run once more (OUTDIR/retries.txt lists them,
#                     their first output is raw/.../NAME.try1.txt; 0: never)
#   VALIDATE [1]      0: no validation runs
#   NOTE              a line for the top of summary.md (e.g. the machine's load)
#   SUMMARY_ONLY=1    only write OUTDIR/summary.md again from its tsv files
#   OUTDIR            [$BENCH_DIR/osu-sweep-<date>]
set -u

here=$(cd "$(dirname "$0")" && pwd)
# shellcheck disable=SC2034  # read by side-by-side-common.sh
SCRIPT_NAME=run-osu-sweep
TIMEOUT=${TIMEOUT:-180}
# shellcheck source=side-by-side-common.sh
. "$here/side-by-side-common.sh"
OSU_SRC=${OSU_SRC:-}
ROUNDS=${ROUNDS:-3}
TRANSPORTS=${TRANSPORTS:-shm tcp}
BENCHMARKS=${BENCHMARKS:-osu_put_latency osu_get_latency osu_acc_latency osu_get_acc_latency osu_fop_latency osu_cas_latency osu_acc_latency:mpi_int osu_fop_latency:mpi_int osu_cas_latency:mpi_int osu_put_bw osu_get_bw osu_put_bibw}
WINDOWS=${WINDOWS:-allocate create dynamic}
SYNCS=${SYNCS:-flush flush_local lock lock_all fence pscw}
SIZES=${SIZES:-8 8192 1048576}
OSU_ARGS=${OSU_ARGS:-}
OSU_ARGS_TCP=${OSU_ARGS_TCP:-}
GRACE=${GRACE:-20}
RETRY_WITHIN=${RETRY_WITHIN:-30}
VALIDATE=${VALIDATE:-1}
NOTE=${NOTE:-}
SUMMARY_ONLY=${SUMMARY_ONLY:-0}
OUTDIR=${OUTDIR:-$BENCH_DIR/osu-sweep-$(date +%Y%m%d-%H%M%S)}

# --- the matrix --------------------------------------------------------------------

# program_of BENCHMARK: OSU's program of an entry NAME or NAME:TYPE.
program_of() {
    echo "${1%%:*}"
}

# datatype_args BENCHMARK: "-T TYPE" for an entry NAME:TYPE, else nothing.
datatype_args() {
    case $1 in *:*) echo "-T ${1#*:}" ;; esac
}

# file_of BENCHMARK: the entry as a file name (NAME or NAME-TYPE).
file_of() {
    echo "$1" | tr : -
}

# syncs_of BENCHMARK: the -s modes of SYNCS it accepts.
syncs_of() {
    local sync
    for sync in $SYNCS; do
        case $(program_of "$1"):$sync in
        osu_put_bibw:fence|osu_put_bibw:pscw) echo "$sync" ;;
        osu_put_bibw:*) ;;
        *) echo "$sync" ;;
        esac
    done
}

# sizes_of BENCHMARK: "-" for the one-row atomics, SIZES for the others.
sizes_of() {
    case $(program_of "$1") in
    osu_fop_latency|osu_cas_latency) echo - ;;
    *) echo "$SIZES" ;;
    esac
}

# validates BENCHMARK: whether OSU's source gives it -c (show_validation).
validates() {
    grep -q "show_validation *= *1" "$OSU_SRC/c/mpi/one-sided/$(program_of "$1").c" 2>/dev/null
}

# The runs of a round, one line each: benchmark window sync size.
matrix() {
    local b w s z
    for b in $BENCHMARKS; do
        for w in $WINDOWS; do
            for s in $(syncs_of "$b"); do
                for z in $(sizes_of "$b"); do echo "$b $w $s $z"; done
            done
        done
    done
}


# in_transport TRANSPORT MPI ARGS...: launch under that transport.
in_transport() {
    local transport=$1 mpi=$2
    shift 2
    case $transport in
    shm) launch "$mpi" "$@" ;;
    tcp) UCX_TLS=tcp,self OMPI_FLAGS="$OMPI_FLAGS -x UCX_TLS=tcp,self" launch "$mpi" "$@" ;;
    *) die "unknown transport '$transport' (shm, tcp)" ;;
    esac
}

# has_row FILE SIZE: FILE holds OSU's row of SIZE ("-": any row).
has_row() {
    [ -n "$(row_of "$1" "$2")" ]
}

# row_of FILE SIZE: "SIZE<TAB>VALUE" of OSU's last row of SIZE in FILE ("-":
# any size), or nothing. The row is "SIZE VALUE [verdict]"; another rank's
# output may share its line.
row_of() {
    awk -v z="$2" 'match($0, /[0-9]+ +[0-9]+\.[0-9]+/) {
        split(substr($0, RSTART, RLENGTH), a, " ")
        if (z == "-" || a[1] == z) r = a[1] "\t" a[2] }
        END { if (r != "") print r }' "$1" 2>/dev/null
}

# descendants PID: the processes under PID, deepest last.
descendants() {
    local c
    for c in $(pgrep -P "$1"); do echo "$c"; descendants "$c"; done
}

# watched OUT SIZE TRANSPORT MPI ARGS...: in_transport TRANSPORT MPI ARGS with
# its output in OUT; returns its exit status, or 200 if it printed the row of
# SIZE and then did not end within GRACE seconds (it is stopped then: vanilla
# MPICH over tcp sometimes hangs in MPI_Win_free or MPI_Finalize after its
# measurement, and waiting for TIMEOUT every time would double the sweep).
watched() {
    local out=$1 size=$2 pid t0='' p
    shift 2
    in_transport "$@" < /dev/null > "$out" 2>&1 &
    pid=$!
    while kill -0 "$pid" 2>/dev/null; do
        if [ -z "$t0" ] && has_row "$out" "$size"; then
            t0=$SECONDS
        elif [ -n "$t0" ] && [ $((SECONDS - t0)) -ge "$GRACE" ]; then
            for p in $(descendants "$pid"); do kill -TERM "$p" 2>/dev/null; done
            sleep 3
            for p in $(descendants "$pid"); do kill -KILL "$p" 2>/dev/null; done
            wait "$pid"
            echo "# run-osu-sweep: stopped $GRACE s after its row" >> "$out"
            return 200
        fi
        sleep 0.25
    done
    wait "$pid"
}

# tried OUT SIZE KEY TRANSPORT MPI ARGS...: watched, and once more if it failed
# within RETRY_WITHIN seconds without its row (MPI_Init failing while the
# machine is short of shared memory, a library being reinstalled): KEY and the
# first status go to retries.txt, the first output to NAME.try1.txt.
tried() {
    local out=$1 size=$2 key=$3 t0=$SECONDS rc
    shift 3
    watched "$out" "$size" "$@"
    rc=$?
    if [ "$rc" != 0 ] && [ $((SECONDS - t0)) -lt "$RETRY_WITHIN" ] && ! has_row "$out" "$size"; then
        mv "$out" "${out%.txt}.try1.txt"
        printf '%s\t%s\n' "$key" "$(status_of "$rc")" >> "$OUTDIR/retries.txt"
        log "$(echo "$key" | tr '\t' ' '): $(status_of "$rc") after $((SECONDS - t0)) s without its row; second try"
        sleep 5
        watched "$out" "$size" "$@"
        rc=$?
    fi
    return "$rc"
}

status_of() {
    case $1 in 0) echo ok ;; 124|137) echo timeout ;; 200) echo hang-after-row ;; *) echo "exit:$1" ;; esac
}

# run_one TRANSPORT ROUND MPI BENCHMARK WINDOW SYNC SIZE: one run, one line of
# results.tsv. A run that printed its row and then failed keeps its value (the
# measurement was complete) and its status.
run_one() {
    local transport=$1 round=$2 mpi=$3 bench=$4 win=$5 sync=$6 size=$7 out rc status row extra
    out=$OUTDIR/raw/$transport/$round/$mpi/$(file_of "$bench")-$win-$sync-$size.txt
    mkdir -p "$(dirname "$out")"
    # shellcheck disable=SC2046  # -T TYPE: two words
    set -- -w "$win" -s "$sync" $(datatype_args "$bench")
    [ "$size" = - ] || set -- "$@" -m "$size:$size"
    extra=$OSU_ARGS
    [ "$transport" != tcp ] || extra="$extra $OSU_ARGS_TCP"
    # shellcheck disable=SC2086
    set -- "$@" $extra
    tried "$out" "$size" "$transport	$bench	$win	$sync	$size	$mpi	$round" \
        "$transport" "$mpi" "$BENCH_DIR/osu-$mpi/c/mpi/one-sided/$(program_of "$bench")" "$@"
    rc=$?
    status=$(status_of "$rc")
    # one row (fop/cas: whatever its size)
    row=$(row_of "$out" "$size")
    if [ -z "$row" ]; then
        [ "$status" = ok ] && status=norow
        row="$size	nan"
    fi
    printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$transport" "$bench" "$win" "$sync" \
        "${row%%	*}" "$mpi" "$round" "$status" "${row#*	}" >> "$OUTDIR/results.tsv"
    [ "$status" = ok ] || log "$transport, round $round, $mpi: $bench -w $win -s $sync -m $size: $status (see $out)"
}

# validate_one TRANSPORT MPI BENCHMARK WINDOW SYNC SIZE: one run with -c -i 1
# -x 0 at SIZE, one line of validation.tsv: failed if the row says so or a rank
# reports a failure (in fop/cas the target's check is only in its own
# summary), passed or skipped as the row says, else run-failed:STATUS. One
# operation only: OSU checks the target's memory after the first operation
# while the origin goes on with the next ones, so with more iterations an MPI
# whose atomics need no target CPU fails the check although its data is right.
validate_one() {
    local transport=$1 mpi=$2 bench=$3 win=$4 sync=$5 size=$6 out rc status v
    out=$OUTDIR/raw/$transport/validation/$mpi/$(file_of "$bench")-$win-$sync-$size.txt
    mkdir -p "$(dirname "$out")"
    # shellcheck disable=SC2046  # -T TYPE: two words
    set -- -c -w "$win" -s "$sync" -i 1 -x 0 $(datatype_args "$bench")
    [ "$size" = - ] || set -- "$@" -m "$size:$size"
    tried "$out" "$size" "$transport	$bench	$win	$sync	$size	$mpi	validation" \
        "$transport" "$mpi" "$BENCH_DIR/osu-$mpi/c/mpi/one-sided/$(program_of "$bench")" "$@"
    rc=$?
    status=$(status_of "$rc")
    # the row "SIZE LATENCY passed|failed|skipped" (another rank's output may
    # share its line); v = "size<TAB>verdict"
    v=$(awk -v z="$size" '
        match($0, /[0-9]+ +[0-9.]+ +(passed|failed|skipped)/) {
            split(substr($0, RSTART, RLENGTH), a, " ")
            if (z == "-" || a[1] == z) { r = a[1] "\t" a[3] } }
        /FAILED/ { bad = 1 }
        END { if (r == "") r = (z == "-" ? "-" : z) "\t" (bad ? "failed" : "")
              else if (bad) { sub(/\t.*/, "\tfailed", r) }
              print r }' "$out")
    [ -n "${v#*	}" ] || v="${v%%	*}	run-failed:$status"
    [ "$status" = ok ] || log "$transport, validation, $mpi: $bench -w $win -s $sync -m $size: $status (see $out)"
    printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$transport" "$bench" "$win" "$sync" "${v%%	*}" "$mpi" "${v#*	}" \
        >> "$OUTDIR/validation.tsv"
    case ${v#*	} in
    passed) ;;
    *) log "$transport, validation, $mpi: $bench -w $win -s $sync -m $size: ${v#*	} (see $out)" ;;
    esac
}

summarize() {
    python3 - "$OUTDIR" "$ROUNDS" "$MPIS" "$NOTE" > "$OUTDIR/summary.md" <<'EOF'
"""results.tsv + validation.tsv -> summary.md: medians per row, the rows where
the patched MPICH is slower than vanilla (> 1.05x) or than Open MPI (with Open
MPI's data right or unchecked), failed runs, failed data checks."""
import sys, os, statistics, collections
out, rounds, mpis, note = sys.argv[1], int(sys.argv[2]), sys.argv[3].split(), sys.argv[4]
order = ["osu_put_latency", "osu_get_latency", "osu_acc_latency", "osu_get_acc_latency",
         "osu_fop_latency", "osu_cas_latency", "osu_put_bw", "osu_get_bw", "osu_put_bibw"]
VALIDATED = {"osu_acc_latency", "osu_fop_latency", "osu_cas_latency"}

def program(bench):
    """OSU's program of an entry NAME or NAME:TYPE (run with -T TYPE)."""
    return bench.split(":")[0]

def order_of(bench):
    return order.index(program(bench)) if program(bench) in order else 99

def is_bw(bench):
    return bench.endswith("_bw") or bench.endswith("_bibw")

vals = collections.defaultdict(list)      # (row, mpi) -> values of ok runs
runs = collections.Counter()              # (row, mpi) -> runs
bad = collections.defaultdict(list)       # (row, mpi) -> [(round, status)]
rows = []
for line in open(f"{out}/results.tsv"):
    transport, bench, win, sync, size, mpi, rnd, status, value = line.rstrip("\n").split("\t")
    row = (transport, bench, win, sync, size)
    if row not in rows:
        rows.append(row)
    runs[(row, mpi)] += 1
    if value != "nan":   # the row was printed: the measurement is complete
        vals[(row, mpi)].append(float(value))
    if status != "ok":
        bad[(row, mpi)].append((rnd, status))
valid = {}                                # (row, mpi) -> verdict
if os.path.exists(f"{out}/validation.tsv"):
    for line in open(f"{out}/validation.tsv"):
        transport, bench, win, sync, size, mpi, verdict = line.rstrip("\n").split("\t")
        valid[((transport, bench, win, sync, size), mpi)] = verdict

def med(row, mpi):
    v = vals[(row, mpi)]
    return statistics.median(v) if v else None

def tratio(row, a, b):
    """time of MPI a over time of MPI b (bandwidth: b's MB/s over a's)."""
    x, y = med(row, a), med(row, b)
    if x is None or y is None or x == 0 or y == 0:
        return None
    return y / x if is_bw(row[1]) else x / y

def fmt(v):
    if v is None:
        return "-"
    # 8 B bandwidths are 1-2 MB/s: one decimal would hide 5-10%
    return f"{v:.1f}" if v >= 100 else f"{v:.2f}"

def size_text(s):
    if not s.isdigit():
        return s
    s = int(s)
    return f"{s >> 20} MiB" if s >= 1 << 20 and s % (1 << 20) == 0 else \
           f"{s >> 10} KiB" if s >= 1024 and s % 1024 == 0 else f"{s} B"

def data(row, mpi):
    """'right', 'WRONG', 'unchecked' (no -c in OSU), or 'unknown (...)'."""
    if program(row[1]) not in VALIDATED:
        return "unchecked"
    v = valid.get((row, mpi))
    if v is None:
        return "unknown (no validation run)"
    if v == "passed":
        return "right"
    if v == "failed":
        return "WRONG"
    return f"unknown (validation {v})"

def data_cell(row):
    if program(row[1]) not in VALIDATED:
        return "not checked"
    short = {"right": "ok", "WRONG": "**WRONG**", "unchecked": "-"}
    return " / ".join(short.get(data(row, m), "?") for m in mpis)

def sort_key(row):
    t, b, w, s, z = row
    return (["shm", "tcp"].index(t) if t in ("shm", "tcp") else 9,
            order_of(b), b,
            ["allocate", "create", "dynamic"].index(w) if w in ("allocate", "create", "dynamic") else 9,
            ["flush", "flush_local", "lock", "lock_all", "fence", "pscw"].index(s)
            if s in ("flush", "flush_local", "lock", "lock_all", "fence", "pscw") else 9,
            int(z) if z.isdigit() else 0)

rows.sort(key=sort_key)
transports = list(dict.fromkeys(r[0] for r in rows))
has_pv = {"patched", "vanilla"} <= set(mpis)
has_po = {"patched", "openmpi"} <= set(mpis)
slow_v = [r for r in rows if has_pv and (tratio(r, "patched", "vanilla") or 0) > 1.05]
slow_o = [r for r in rows if has_po and (tratio(r, "patched", "openmpi") or 0) > 1.0]
slow_o_counted = [r for r in slow_o if data(r, "openmpi") != "WRONG"]
slow_o_wrong = [r for r in slow_o if data(r, "openmpi") == "WRONG"]

print("# OSU micro-benchmarks 7.4, one-sided: vanilla MPICH, patched MPICH, Open MPI\n")
if note:
    print(note + "\n")
print("```\n" + open(f"{out}/info.txt").read().rstrip() + "\n```\n")
nrounds = collections.defaultdict(set)     # benchmark -> rounds run
for line in open(f"{out}/results.tsv"):
    f = line.rstrip("\n").split("\t")
    nrounds[f[1]].add(f[6])
per_bench = sorted({len(v) for v in nrounds.values()})
rounds_text = (f"{per_bench[0]} alternating round(s)" if len(per_bench) == 1 else
               "alternating rounds (" + ", ".join(f"{b}: {len(nrounds[b])}" for b in
                                                  sorted(nrounds, key=lambda b: (order_of(b), b))) + ")")
print(f"Medians over {rounds_text}, 2 ranks on one node. Latency "
      "benchmarks: us (lower is better); osu_put_bw, osu_get_bw, osu_put_bibw: MB/s "
      "(higher is better). Ratios compare times: patched/vanilla = the patched "
      "MPICH's latency over vanilla's, or vanilla's bandwidth over the patched "
      "MPICH's; above 1 means the patched MPICH is slower. shm: UCX's default "
      "transports; tcp: UCX_TLS=tcp,self (Open MPI: -x UCX_TLS=tcp,self). 'data' "
      "is the verdict of OSU's -c validation run per MPI (" + " / ".join(mpis) +
      "); OSU 7.4 has -c only in osu_acc_latency, osu_fop_latency and osu_cas_latency. "
      "A run that printed its row and then failed (hang-after-row: still running "
      "some seconds after its row, in MPI_Win_free or MPI_Finalize; timeout; exit "
      "status) counts with its value and is listed under the failed runs; "
      "'(n/m failed)' in a cell counts them.\n")
print(f"- rows: {len(rows)}; patched above 1.05x vanilla: {len(slow_v)}; patched above "
      f"Open MPI with Open MPI's data right or unchecked: {len(slow_o_counted)} "
      f"(and {len(slow_o_wrong)} more where Open MPI's data is wrong)")
nfail = {m: sum(len(bad[(r, m)]) for r in rows) for m in mpis}
print("- runs that failed or timed out: " + ", ".join(f"{m} {nfail[m]}" for m in mpis))
nwrong = {m: sum(1 for (r, mm), v in valid.items() if mm == m and v != "passed") for m in mpis}
print("- data checks not passed (failed, skipped or run failed): "
      + ", ".join(f"{m} {nwrong[m]}" for m in mpis) + "\n")

# --- medians ---
cols = list(mpis) + (["patched/vanilla"] if has_pv else []) + (["patched/openmpi"] if has_po else [])
print("## Medians per row\n")
for t in transports:
    for b in dict.fromkeys(r[1] for r in rows if r[0] == t):
        unit = "MB/s" if is_bw(b) else "us"
        print(f"### {t}: {b} ({unit}, {len(nrounds[b])} round(s))\n")
        print("| -w | -s | size | " + " | ".join(cols) + " | data |")
        print("| --- | --- | ---: |" + " ---: |" * len(cols) + " --- |")
        for r in (r for r in rows if r[0] == t and r[1] == b):
            cells = []
            for m in mpis:
                c = fmt(med(r, m))
                if bad[(r, m)]:
                    c += f" ({len(bad[(r, m)])}/{runs[(r, m)]} failed)"
                cells.append(c)
            if has_pv:
                x = tratio(r, "patched", "vanilla")
                cells.append("-" if x is None else (f"**{x:.2f}**" if x > 1.05 else f"{x:.2f}"))
            if has_po:
                x = tratio(r, "patched", "openmpi")
                cells.append("-" if x is None else f"{x:.2f}")
            print(f"| {r[2]} | {r[3]} | {size_text(r[4])} | " + " | ".join(cells) + f" | {data_cell(r)} |")
        print()

def listing(title, selected, other, extra=None):
    print(f"## {title}\n")
    if not selected:
        print("None.\n")
        return
    for t in transports:
        sel = [r for r in selected if r[0] == t]
        print(f"### {t} ({len(sel)})\n")
        if not sel:
            print("None.\n")
            continue
        head = f"| benchmark | -w | -s | size | {other} | patched | patched/{other} |"
        if extra:
            head += f" {extra[0]} |"
        print(head)
        print("| --- | --- | --- | ---: | ---: | ---: | ---: |" + (" --- |" if extra else ""))
        for r in sel:
            line = (f"| {r[1]} | {r[2]} | {r[3]} | {size_text(r[4])} | {fmt(med(r, other))} | "
                    f"{fmt(med(r, 'patched'))} | {tratio(r, 'patched', other):.2f} |")
            if extra:
                line += f" {extra[1](r)} |"
            print(line)
        print()

if has_pv:
    listing("Rows where the patched MPICH takes more than 1.05x vanilla's time", slow_v, "vanilla",
            ("data (" + " / ".join(mpis) + ")", data_cell))
if has_po:
    def odata(r):
        d = data(r, "openmpi")
        return "unchecked (OSU 7.4 has no -c for this benchmark)" if d == "unchecked" else d
    listing("Rows where the patched MPICH takes more time than Open MPI, Open MPI's data "
            "right or unchecked", slow_o_counted, "openmpi", ("Open MPI's data", odata))
    listing("Rows where the patched MPICH takes more time than Open MPI but Open MPI's data "
            "is wrong (not counted above)", slow_o_wrong, "openmpi")

print("## Runs that failed or timed out\n")
failed = [(r, m) for r in rows for m in mpis if bad[(r, m)]]
if not failed:
    print("None.\n")
else:
    print("| MPI | transport | benchmark | -w | -s | size | rounds: status |")
    print("| --- | --- | --- | --- | --- | ---: | --- |")
    for m in mpis:
        for r in (r for r, mm in failed if mm == m):
            st = ", ".join(f"{rnd}: {s}" for rnd, s in bad[(r, m)])
            print(f"| {m} | {r[0]} | {r[1]} | {r[2]} | {r[3]} | {size_text(r[4])} | {st} |")
    print()

print("## Runs tried twice\n")
retries = [l.rstrip("\n").split("\t") for l in open(f"{out}/retries.txt")] \
    if os.path.exists(f"{out}/retries.txt") else []
if not retries:
    print("None.\n")
else:
    print("Failed within seconds without their row, then run once more (the table above has the "
          "second try):\n")
    print("| MPI | transport | benchmark | -w | -s | size | round | first try |")
    print("| --- | --- | --- | --- | --- | ---: | ---: | --- |")
    for t, b, w, sy, z, m, rnd, st in sorted(retries, key=lambda x: (mpis.index(x[5]) if x[5] in mpis else 9,
                                                                    sort_key((x[0], x[1], x[2], x[3], x[4])))):
        print(f"| {m} | {t} | {b} | {w} | {sy} | {size_text(z)} | {rnd} | {st} |")
    print()

print("## Data checks (OSU -c) not passed\n")
nok = sorted(((k, v) for k, v in valid.items() if v != "passed"),
             key=lambda kv: (mpis.index(kv[0][1]) if kv[0][1] in mpis else 9, sort_key(kv[0][0])))
if not valid:
    print("No validation runs.\n")
elif not nok:
    print(f"None: all {len(valid)} passed.\n")
else:
    print(f"{len(nok)} of {len(valid)}:\n")
    print("| MPI | transport | benchmark | -w | -s | size | verdict |")
    print("| --- | --- | --- | --- | --- | ---: | --- |")
    for (r, m), v in nok:
        print(f"| {m} | {r[0]} | {r[1]} | {r[2]} | {r[3]} | {size_text(r[4])} | {v} |")
    print()
EOF
}

# The lists of summary.md, for the terminal (the medians stay in the file).
print_lists() {
    sed -n '/^- rows:/,/^$/p; /^## Rows where/,$p' "$OUTDIR/summary.md"
    echo
    echo "medians: $OUTDIR/summary.md; raw outputs: $OUTDIR/raw; numbers: $OUTDIR/results.tsv, $OUTDIR/validation.tsv"
}

# exit status: 1 if a run or a data check of the patched MPICH failed
patched_failed() {
    awk -F'\t' '$6 == "patched" && $8 != "ok" { f = 1 } END { exit !f }' "$OUTDIR/results.tsv" ||
        { [ -f "$OUTDIR/validation.tsv" ] &&
          awk -F'\t' '$6 == "patched" && $7 != "passed" { f = 1 } END { exit !f }' "$OUTDIR/validation.tsv"; }
}

if [ "$SUMMARY_ONLY" = 1 ]; then
    [ -f "$OUTDIR/results.tsv" ] || die "no $OUTDIR/results.tsv"
    summarize && print_lists
    patched_failed && exit 1
    exit 0
fi

# --- main ------------------------------------------------------------------------

[ -n "$OSU_SRC" ] || die "set OSU_SRC to an OSU micro-benchmarks 7.4 source tree (not shipped here)"
[ -d "$OSU_SRC/c/mpi/one-sided" ] || die "OSU_SRC=$OSU_SRC is not an OSU tree (no c/mpi/one-sided)"
OSU_SRC=$(cd "$OSU_SRC" && pwd)
for b in $BENCHMARKS; do
    [ -f "$OSU_SRC/c/mpi/one-sided/$(program_of "$b").c" ] || die "no $(program_of "$b") in $OSU_SRC/c/mpi/one-sided"
done
for t in $TRANSPORTS; do
    case $t in shm|tcp) ;; *) die "unknown transport '$t' in TRANSPORTS (shm, tcp)" ;; esac
done
for z in $SIZES; do
    case $z in *[!0-9]*|'') die "SIZES: '$z' is not a number of bytes" ;; esac
done
check_mpis
mkdir -p "$OUTDIR/raw" || die "cannot make $OUTDIR"
OUTDIR=$(cd "$OUTDIR" && pwd)
: > "$OUTDIR/results.tsv"
: > "$OUTDIR/validation.tsv"
: > "$OUTDIR/retries.txt"
write_info
nruns=$(matrix | wc -l)
nmpis=$(echo "$MPIS" | wc -w)
ntrans=$(echo "$TRANSPORTS" | wc -w)
{
    echo "OSU: $OSU_SRC ($(sed -n '1s/ *(.*//p' "$OSU_SRC/CHANGES" 2>/dev/null))"
    echo "matrix: $BENCHMARKS | -w $WINDOWS | -s $SYNCS (as each benchmark takes them) | sizes $SIZES | transports $TRANSPORTS${OSU_ARGS:+ | OSU options $OSU_ARGS}"
    echo "runs: $nruns rows x $nmpis MPIs x $ntrans transports x $ROUNDS rounds = $((nruns * nmpis * ntrans * ROUNDS))," \
        "plus the validation runs"
} | tee -a "$OUTDIR/info.txt" >&2

for mpi in $MPIS; do
    build_osu "$mpi"
done

if [ "$VALIDATE" = 1 ]; then
    for transport in $TRANSPORTS; do
        log "$transport: validation runs (-c)"
        for bench in $BENCHMARKS; do
            validates "$bench" || continue
            for win in $WINDOWS; do
                for sync in $(syncs_of "$bench"); do
                    for size in $(sizes_of "$bench"); do
                        for mpi in $(mpis_of_round 0); do
                            validate_one "$transport" "$mpi" "$bench" "$win" "$sync" "$size"
                        done
                    done
                done
            done
        done
    done
fi

for ((round = 1; round <= ROUNDS; round++)); do
    for transport in $TRANSPORTS; do
        log "$transport: round $round of $ROUNDS ($nruns rows x $nmpis MPIs)"
        while read -r bench win sync size; do
            for mpi in $(mpis_of_round "$round"); do
                run_one "$transport" "$round" "$mpi" "$bench" "$win" "$sync" "$size"
            done
        done < <(matrix)
    done
done

warn_changed_libraries
summarize || die "writing $OUTDIR/summary.md failed"
print_lists
if patched_failed; then
    log "a run or a data check of the patched MPICH failed (see $OUTDIR/summary.md)"
    exit 1
fi
exit 0
