#!/bin/sh
# The Quo Vadis extension benchmarks (osu_quovadis_latency.c), vanilla and
# patched MPICH side by side on this machine.
#
#   osu_extensions/run-quovadis-bench.sh VANILLA_PREFIX PATCHED_PREFIX [RUNS] [OUTDIR]
#
# (or VANILLA_PREFIX/PATCHED_PREFIX/RUNS/OUTDIR in the environment). Builds the
# benchmark with each installation's mpicc and runs every case RUNS times
# (default 5), alternating vanilla and patched run by run so that both see the
# same machine; prints the median of every cell: vanilla's column (it has no
# extension: its second column is "-") and patched's two, and patched's
# extension over vanilla's plain variant. Raw outputs stay in OUTDIR
# (default ./quovadis-bench).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
vanilla=${1:-${VANILLA_PREFIX:?give the vanilla MPICH prefix}}
patched=${2:-${PATCHED_PREFIX:?give the patched MPICH prefix}}
runs=${3:-${RUNS:-5}}
out=${4:-${OUTDIR:-$(pwd)/quovadis-bench}}
mkdir -p "$out"

for impl in vanilla patched; do
    eval prefix=\$$impl
    "$prefix/bin/mpicc" -O2 -Wall -o "$out/osu_quovadis_latency.$impl" \
        "$here/osu_quovadis_latency.c"
done

# name | arguments
configs="order|order
rrput-allocate-1|rrput --kind=allocate --others=1 --iterations=200 --warmup=20
rrput-allocate-4|rrput --kind=allocate --others=4 --iterations=200 --warmup=20
rrput-dynamic-1|rrput --kind=dynamic --others=1 --iterations=200 --warmup=20
rrput-dynamic-4|rrput --kind=dynamic --others=4 --iterations=200 --warmup=20
notify|notify
signal|signal"

run=1
while [ "$run" -le "$runs" ]; do
    echo "$configs" | while IFS='|' read -r name args; do
        for impl in vanilla patched; do
            eval prefix=\$$impl
            # shellcheck disable=SC2086
            timeout 600 "$prefix/bin/mpiexec" -n 2 "$out/osu_quovadis_latency.$impl" $args \
                < /dev/null > "$out/$name.$impl.$run.txt" 2>&1 ||
                echo "run $run of $name on $impl failed: see $out/$name.$impl.$run.txt" >&2
        done
    done
    echo "run $run of $runs done" >&2
    run=$((run + 1))
done

python3 - "$out" "$runs" <<'PY'
import sys, glob, statistics, re
out, runs = sys.argv[1], int(sys.argv[2])
names = ["order", "rrput-allocate-1", "rrput-allocate-4", "rrput-dynamic-1",
         "rrput-dynamic-4", "notify", "signal"]

def table(name, impl):
    rows, header = {}, []
    for f in sorted(glob.glob(f"{out}/{name}.{impl}.*.txt")):
        for line in open(f):
            if line.startswith("#"):
                if len(header) < 2:
                    header.append(line.rstrip())
                continue
            cells = line.split()
            if cells and re.match(r"^\d+$", cells[0]):
                rows.setdefault(int(cells[0]), []).append(
                    [None if c == "-" else float(c) for c in cells[1:3]])
    med = {k: [statistics.median([r[i] for r in v if r[i] is not None])
               if any(r[i] is not None for r in v) else None for i in range(2)]
           for k, v in rows.items()}
    return med, header

def fmt(x):
    return f"{x:12.2f}" if x is not None else f"{'-':>12}"

for name in names:
    v, _ = table(name, "vanilla")
    p, header = table(name, "patched")
    if not header:
        continue
    cols = header[1].split()[2:]
    print(f"\n{header[0]} [{name}; medians of {runs} runs]")
    print(f"# {'Size':<8}{'v:' + cols[0][:9]:>12}{'p:' + cols[0][:9]:>12}"
          f"{'p:' + cols[-2][:9]:>12}{'p.ext/v':>12}")
    for size in sorted(set(v) | set(p)):
        vr, pr = v.get(size, [None, None]), p.get(size, [None, None])
        ratio = pr[1] / vr[0] if pr[1] and vr[0] else None
        print(f"{size:<10}" + fmt(vr[0]) + fmt(pr[0]) + fmt(pr[1]) + fmt(ratio))
PY
