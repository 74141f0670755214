#!/bin/sh
# Memory-handle window benchmarks, vanilla and patched MPICH side by side.
#
#   osu_extensions/run-memhandle-bench.sh VANILLA_PREFIX PATCHED_PREFIX [RUNS] [OUTDIR]
#
# (or VANILLA_PREFIX/PATCHED_PREFIX/RUNS/OUTDIR in the environment). Builds
# osu_memhandle_latency.c with each installation's mpicc and runs, RUNS times
# (default 5), alternating vanilla and patched run by run so that both see the
# same machine: put and get latency, the same with window creation and
# destruction in the loop, and the progress test. Prints the median over the
# runs of every table cell, OSU style, plus the ratios the issue asks about.
# Raw outputs stay in OUTDIR (default ./memhandle-bench).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
vanilla=${1:-${VANILLA_PREFIX:?give the vanilla MPICH prefix}}
patched=${2:-${PATCHED_PREFIX:?give the patched MPICH prefix}}
runs=${3:-${RUNS:-5}}
out=${4:-${OUTDIR:-$(pwd)/memhandle-bench}}
mkdir -p "$out"

for impl in vanilla patched; do
    eval prefix=\$$impl
    "$prefix/bin/mpicc" -O2 -Wall -o "$out/osu_memhandle_latency.$impl" \
        "$here/osu_memhandle_latency.c"
done

# name | arguments
configs="put|put --max-size=65536
get|get --max-size=65536
put-create|put --create-in-loop --max-size=4096
get-create|get --create-in-loop --max-size=4096
progress|progress --busy-seconds=1 --ops=10000"

run=1
while [ "$run" -le "$runs" ]; do
    echo "$configs" | while IFS='|' read -r name args; do
        for impl in vanilla patched; do
            eval prefix=\$$impl
            # shellcheck disable=SC2086
            timeout 600 "$prefix/bin/mpiexec" -n 2 "$out/osu_memhandle_latency.$impl" $args \
                < /dev/null > "$out/$name.$impl.$run.txt" 2>&1 ||
                echo "run $run of $name on $impl failed: see $out/$name.$impl.$run.txt" >&2
        done
    done
    echo "run $run of $runs done" >&2
    run=$((run + 1))
done

python3 - "$out" "$runs" <<'EOF'
import sys, glob, statistics, re
out, runs = sys.argv[1], int(sys.argv[2])
kinds = ["create", "allocate", "dynamic", "memhandle"]

def table(name, impl):
    """{row label: [list of values per kind, per run]}"""
    rows = {}
    for f in sorted(glob.glob(f"{out}/{name}.{impl}.*.txt")):
        for line in open(f):
            if line.startswith("#") or not line.strip():
                continue
            cells = line.split()
            if not re.match(r"^\d+$", cells[0]):
                continue
            vals = [None if c == "-" else float(c) for c in cells[1:]]
            rows.setdefault(int(cells[0]), []).append(vals)
    return {k: [statistics.median([r[i] for r in v if r[i] is not None])
                if any(r[i] is not None for r in v) else None for i in range(len(kinds))]
            for k, v in rows.items()}

def fmt(x):
    return f"{x:12.2f}" if x is not None else f"{'-':>12}"

for name, title in [("put", "put latency (us), put+flush per iteration"),
                    ("get", "get latency (us), get+flush per iteration"),
                    ("put-create", "put latency (us) with window creation and destruction in the loop"),
                    ("get-create", "get latency (us) with window creation and destruction in the loop"),
                    ("progress", "progress test: us per put+flush while the target computes 1 s outside MPI (10000 ops; >= 100 us: no progress)")]:
    v, p = table(name, "vanilla"), table(name, "patched")
    print(f"\n# {title}; medians of {runs} runs")
    print(f"# {'Size' if name != 'progress' else 'Ops':<8}" +
          "".join(f"{'v:' + k:>12}" for k in kinds[:3]) +
          "".join(f"{'p:' + k:>12}" for k in kinds) +
          f"{'mh/alloc':>12}{'mh/v:dyn':>12}")
    for size in sorted(set(v) | set(p)):
        vr, pr = v.get(size, [None] * 4), p.get(size, [None] * 4)
        ratio1 = pr[3] / pr[1] if pr[3] and pr[1] else None
        ratio2 = pr[3] / vr[2] if pr[3] and vr[2] else None
        print(f"{size:<10}" + "".join(fmt(x) for x in vr[:3]) + "".join(fmt(x) for x in pr) +
              fmt(ratio1) + fmt(ratio2))
EOF
