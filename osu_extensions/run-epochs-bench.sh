#!/bin/sh
# Nonblocking-epoch benchmarks, vanilla and patched MPICH side by side.
#
#   osu_extensions/run-epochs-bench.sh VANILLA_PREFIX PATCHED_PREFIX [RUNS] [OUTDIR]
#
# Builds osu_nbrma_epochs.c and lu_gats.c with each installation's mpicc and
# runs every configuration RUNS times (default 5), alternating vanilla-blocking,
# patched-blocking and patched-nonblocking run by run so that all series see the
# same machine; the atomics add the nonblocking series with the reorder flag
# A_A_A_R and without whole lock epochs (MPIR_CVAR_NBRMA_WHOLE_LOCK_EPOCHS=0),
# Late Unlock a reference run without the first origin's work, and the LU kernel
# the blocking series with the owner's epoch completed before its work
# (--complete-first). Prints, per measured quantity, the median over the runs of
# each run's median, and the ratios to vanilla. Raw outputs stay in OUTDIR
# (default ./epochs-bench). SECONDS_ATOMICS (default 3) is the length of each
# atomics run; PATTERN_ITERS (default 100) and LATENCY_ITERS (default 2000) the
# iterations of the other runs. CONFIGS (default: all) picks configurations by
# name, e.g. CONFIGS="latency8 latency64k". BASELINE_PREFIX, if set, names an
# earlier build of the patch-set whose blocking and nonblocking series
# (b-blocking, b-nonblocking; with AGENT=1 also b-nonblocking+agent) alternate
# with the others, to check that a change keeps the figures. OPENMPI=1 adds Open
# MPI 4.1.4 with osc/ucx (Debian's openmpi-bin) as the series o-blocking: the
# blocking calls, the same programs built with mpicc.openmpi (OMPI_MPICC,
# OMPI_MPIRUN as in side-by-side-common.sh, its flags from openmpi-flags.sh).
# DELAY_US (default 1000) is the work of the patterns. AGENT=1 adds the
# nonblocking series with the progress agent (MPIR_CVAR_NBRMA_ASYNC_PROGRESS=1)
# at its defaults and as it was before its pacing (nice 10, no share limit):
# p-nonblocking+agent, p-nonblocking+agent-nice10. TWO_HOSTS=1 runs every rank
# across the two hosts of scripts/two-hosts.sh (root; tcp only, ranks
# round-robin on the hosts; not with OPENMPI=1), e.g. the paper's patterns
# between nodes: TWO_HOSTS=1 AGENT=1 CONFIGS="late_complete_nopoll
# wait_at_fence_nopoll" DELAY_US=5000.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
vanilla=${1:-${VANILLA_PREFIX:?give the vanilla MPICH prefix}}
patched=${2:-${PATCHED_PREFIX:?give the patched MPICH prefix}}
runs=${3:-${RUNS:-5}}
out=${4:-${OUTDIR:-$(pwd)/epochs-bench}}
secs=${SECONDS_ATOMICS:-3}
piters=${PATTERN_ITERS:-100}
liters=${LATENCY_ITERS:-2000}
baseline=${BASELINE_PREFIX:-}
delay=${DELAY_US:-1000}
with_agent=${AGENT:-0}
two_hosts=${TWO_HOSTS:-0}
top=$(cd "$here/.." && pwd)
mkdir -p "$out"

with_openmpi=${OPENMPI:-0}
ompi_cc=${OMPI_MPICC:-/usr/bin/mpicc.openmpi}
ompi_run=${OMPI_MPIRUN:-/usr/bin/mpirun.openmpi}
if [ "$two_hosts" = 1 ]; then
    [ "$with_openmpi" != 1 ] || { echo "TWO_HOSTS=1 runs MPICH only (not OPENMPI=1)" >&2; exit 2; }
    sh "$top/scripts/two-hosts.sh" up
    trap 'sh "$top/scripts/two-hosts.sh" down' EXIT
fi
BIND=none   # for openmpi-flags.sh: the MPICH runs here are not bound either
. "$here/openmpi-flags.sh"
impls="vanilla patched${baseline:+ baseline}"
for impl in $impls; do
    eval prefix=\$$impl
    for prog in osu_nbrma_epochs lu_gats; do
        "$prefix/bin/mpicc" -O2 -Wall -o "$out/$prog.$impl" "$here/$prog.c" -lm
    done
done
if [ "$with_openmpi" = 1 ]; then
    for prog in osu_nbrma_epochs lu_gats; do
        "$ompi_cc" -O2 -Wall -o "$out/$prog.openmpi" "$here/$prog.c" -lm
    done
fi
openmpi=openmpi     # run_one launches this "prefix" with mpirun.openmpi

# name | ranks | program | arguments (without --series)
configs="late_post|3|osu_nbrma_epochs|late_post --iters=$piters --delay-us=$delay
late_complete|2|osu_nbrma_epochs|late_complete --iters=$piters --delay-us=$delay
early_fence|2|osu_nbrma_epochs|early_fence --iters=$piters --delay-us=$delay
wait_at_fence|2|osu_nbrma_epochs|wait_at_fence --iters=$piters --delay-us=$delay
late_unlock|3|osu_nbrma_epochs|late_unlock --iters=$piters --delay-us=$delay
late_unlock_nowork|3|osu_nbrma_epochs|late_unlock --iters=$piters --delay-us=0
late_complete_nopoll|2|osu_nbrma_epochs|late_complete --iters=$piters --delay-us=$delay --no-poll
early_fence_nopoll|2|osu_nbrma_epochs|early_fence --iters=$piters --delay-us=$delay --no-poll
wait_at_fence_nopoll|2|osu_nbrma_epochs|wait_at_fence --iters=$piters --delay-us=$delay --no-poll
late_unlock_nopoll|3|osu_nbrma_epochs|late_unlock --iters=$piters --delay-us=$delay --no-poll
atomics2|2|osu_nbrma_epochs|atomics --seconds=$secs
atomics4|4|osu_nbrma_epochs|atomics --seconds=$secs
latency8|2|osu_nbrma_epochs|latency --size=8 --iters=$liters
latency64k|2|osu_nbrma_epochs|latency --size=65536 --iters=$liters
lu384|2|lu_gats|--size=384 --iters=9
lu768|2|lu_gats|--size=768 --iters=5"

# series name | implementation | series arguments [| environment]
series="v-blocking|vanilla|--series=blocking
p-blocking|patched|--series=blocking
p-nonblocking|patched|--series=nonblocking"
[ "$with_agent" != 1 ] || series="$series
p-nonblocking+agent|patched|--series=nonblocking|MPIR_CVAR_NBRMA_ASYNC_PROGRESS=1
p-nonblocking+agent-nice10|patched|--series=nonblocking|MPIR_CVAR_NBRMA_ASYNC_PROGRESS=1 MPIR_CVAR_NBRMA_ASYNC_PROGRESS_NICE=10 MPIR_CVAR_NBRMA_ASYNC_PROGRESS_SHARE=100"
[ -z "$baseline" ] || series="$series
b-blocking|baseline|--series=blocking
b-nonblocking|baseline|--series=nonblocking"
[ -z "$baseline" ] || [ "$with_agent" != 1 ] || series="$series
b-nonblocking+agent|baseline|--series=nonblocking|MPIR_CVAR_NBRMA_ASYNC_PROGRESS=1"
[ "$with_openmpi" != 1 ] || series="$series
o-blocking|openmpi|--series=blocking"

# One run of configuration $name ($np ranks, arguments $args) as series $1:
# with MPICH at prefix $2, program $3, extra arguments after that.
run_one() {
    sname=$1 prefix=$2 binary=$3
    shift 3
    if [ "$prefix" = openmpi ]; then
        launcher="env -u LD_LIBRARY_PATH $ompi_run $OMPI_FLAGS -np $np"
    elif [ "$two_hosts" = 1 ]; then
        launcher="sh $top/scripts/two-hosts.sh mpiexec $prefix -n $np"
    else
        launcher="$prefix/bin/mpiexec -n $np"
    fi
    # shellcheck disable=SC2086
    timeout 600 env $senv $launcher "$binary" $args "$@" < /dev/null > "$out/$name.$sname.$run.txt" 2>&1 ||
        echo "run $run of $name, $sname failed: see $out/$name.$sname.$run.txt" >&2
}

run=1
while [ "$run" -le "$runs" ]; do
    echo "$configs" | while IFS='|' read -r name np prog args; do
        case " ${CONFIGS:-$name} " in *" $name "*) ;; *) continue ;; esac
        echo "$series" | while IFS='|' read -r sname impl sargs senv; do
            case $name/$sname in latency*/*-nonblocking*) continue ;; esac
            eval prefix=\$$impl
            # shellcheck disable=SC2086
            run_one "$sname" "$prefix" "$out/$prog.$impl" $sargs
        done
        senv=
        case $name in lu*)
            # the owner completes its epoch before its own elimination
            run_one v-blocking-complete-first "$vanilla" "$out/$prog.vanilla" --series=blocking --complete-first
            run_one p-blocking-complete-first "$patched" "$out/$prog.patched" --series=blocking --complete-first ;;
        esac
        case $name in atomics*)
            # the reorder flag A_A_A_R on top of the nonblocking series
            run_one p-nonblocking+AAAR "$patched" "$out/$prog.patched" --series=nonblocking --reorder
            # and without whole lock epochs: what they contribute
            (export MPIR_CVAR_NBRMA_WHOLE_LOCK_EPOCHS=0
             run_one p-nonblocking-unpacked "$patched" "$out/$prog.patched" --series=nonblocking) ;;
        esac
    done
    echo "run $run of $runs done" >&2
    run=$((run + 1))
done

python3 - "$out" "$runs" "$delay" <<'EOF'
import sys, glob, statistics, re, os
out, runs, delay = sys.argv[1], int(sys.argv[2]), sys.argv[3]
series = ["v-blocking", "p-blocking", "p-nonblocking", "p-nonblocking+agent",
          "p-nonblocking+agent-nice10", "o-blocking", "b-blocking", "b-nonblocking",
          "b-nonblocking+agent",
          "p-nonblocking+AAAR", "p-nonblocking-unpacked",
          "v-blocking-complete-first", "p-blocking-complete-first"]

def values(name, s):
    """{quantity: [first number of its line, per run]}"""
    rows = {}
    for f in sorted(glob.glob(f"{out}/{name}.{s}.*.txt")):
        for line in open(f):
            if line.startswith("#") or line.startswith("check"):
                continue
            m = re.match(r"^(.*?)\s+(-?[0-9.]+)(\s+-?[0-9.]+)?\s*$", line.rstrip())
            if m:
                rows.setdefault(m.group(1).strip(), []).append(float(m.group(2)))
    return rows

tables = [("late_post", f"Late Post (3 ranks, 1 MB put, target {delay} us late), us from the origin's start"),
          ("late_complete", f"Late Complete (1 MB put, origin works {delay} us in its epoch), us"),
          ("early_fence", f"Early Fence (1 MB put, target works {delay} us after its closing fence), us"),
          ("wait_at_fence", f"Wait at Fence (1 MB put, origin works {delay} us before its closing fence), us"),
          ("late_unlock", f"Late Unlock (3 ranks, 1 MB puts, first origin works {delay} us in its epoch), us"),
          ("late_unlock_nowork", "Late Unlock reference: the same without the first origin's work, us"),
          ("late_complete_nopoll", "Late Complete, the origin makes no MPI call during its work, us"),
          ("early_fence_nopoll", "Early Fence, the target makes no MPI call during its work, us"),
          ("wait_at_fence_nopoll", "Wait at Fence, the origin makes no MPI call during its work, us"),
          ("late_unlock_nopoll", "Late Unlock, the first origin makes no MPI call during its work, us"),
          ("atomics2", "massive unstructured atomic transactions, 2 ranks (higher is better)"),
          ("atomics4", "massive unstructured atomic transactions, 4 ranks (higher is better)"),
          ("latency8", "put latency, 8 bytes, us per epoch (flush: per put+flush)"),
          ("latency64k", "put latency, 64 KiB, us per epoch (flush: per put+flush)"),
          ("lu384", "LU decomposition with PSCW, 384 x 384, 2 ranks, ms (lower is better)"),
          ("lu768", "LU decomposition with PSCW, 768 x 768, 2 ranks, ms (lower is better)")]
for name, title in tables:
    per = {s: values(name, s) for s in series}
    present = [s for s in series if per[s]]
    if not present:
        continue
    print(f"\n# {title}; medians of {runs} runs")
    w = 2 + max(22, *(len(s) for s in present))  # a column per series, ratios 2 wider
    print(f"# {'quantity':<34}" + "".join(f"{s:>{w}}" for s in present) +
          "".join(f"{s + '/v':>{w + 2}}" for s in present[1:]))
    for q in per[present[0]]:
        med = {s: statistics.median(per[s][q]) if per[s].get(q) else None for s in present}
        digits = 2 if name.startswith("latency") else 1
        cells = "".join(f"{med[s]:{w}.{digits}f}" if med[s] is not None else f"{'-':>{w}}"
                        for s in present)
        base = med[present[0]]
        ratios = "".join(f"{med[s] / base:{w + 2}.2f}" if med[s] is not None and base else f"{'-':>{w + 2}}"
                         for s in present[1:])
        print(f"{q:<36}" + cells + ratios)
# What the second origin pays for the first one's work: its epoch with the
# work minus its epoch without (the data transfers of both epochs remain).
q = "second origin: lock epoch length"
with_work, without = ({s: values(n, s).get(q) for s in series} for n in ("late_unlock", f"late_unlock_nowork"))
paid = {s: statistics.median(with_work[s]) - statistics.median(without[s])
        for s in series if with_work.get(s) and without.get(s)}
if paid:
    print(f"\n# Late Unlock: what the second origin pays for the first origin's {delay} us of work, us")
    print(f"# {'':<34}" + "".join(f"{s:>24}" for s in paid))
    print(f"{'second origin: with minus without':<36}" + "".join(f"{v:24.1f}" for v in paid.values()))

failed = [f for f in glob.glob(f"{out}/*.txt") if "lost updates" in open(f).read()]
if failed:
    print("\nLOST UPDATES in: " + ", ".join(sorted(os.path.basename(f) for f in failed)))
wrong = [f for f in glob.glob(f"{out}/lu*.txt") if "check: equal" not in open(f).read()]
if wrong:
    print("\nLU RUNS WITHOUT A PASSED CHECK: " + ", ".join(sorted(os.path.basename(f) for f in wrong)))
EOF
