#!/bin/sh
# The progress agent side by side (README, "Asynchronous progress"): vanilla
# MPICH 4.0.2 without and with its async progress thread
# (MPIR_CVAR_ASYNC_PROGRESS=1), the patched MPICH without the agent, with it
# (MPIR_CVAR_NBRMA_ASYNC_PROGRESS=1 at its defaults: paced at a 10% share,
# nice 0; and as it was before the pacing: nice 10, no pacing) and with
# MPICH's CVAR (which starts the same agent there), ROUNDS alternating
# rounds, over shared memory and over
# tcp (UCX_TLS=tcp,self):
#   asleep   asleep_target: us per operation while the target sleeps 1 s
#            outside MPI (put+flush, fetch_and_op+flush, lock/put/unlock; on
#            MPI_Win_allocate and MPI_Win_create over malloc)
#   wake-up  asleep_target --first-after=200: the first operation's time
#            toward a target asleep outside MPI for 200 ms already (put +
#            flush, fetch_and_op + flush), the wake-up latency of whatever
#            serves it
#   idle     agent_cost idle: CPU seconds two ranks use asleep 2 s
#   waiting  agent_cost waiting: CPU seconds a rank uses waiting 1 s in
#            MPI_Win_wait for a peer asleep outside MPI (parked waits:
#            MPIR_CVAR_NBRMA_PARK_AFTER_US)
#   compute  agent_cost compute: a computation's slowdown while its peer puts
#            + flushes into it over tcp, and its CPU time
#   latency  OSU-style put+flush latency at 8 B (our osu_nbrma_put_latency,
#            -w allocate -s flush) with and without the thread
# Raw outputs go to OUTDIR; the medians to OUTDIR/summary.txt.
#
#   run-agent-bench.sh [OUTDIR]     (VANILLA_PREFIX, PATCHED_PREFIX, ROUNDS)
set -eu
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/.." && pwd)
VANILLA_PREFIX=${VANILLA_PREFIX:-$top/_build/vanilla}
PATCHED_PREFIX=${PATCHED_PREFIX:-$top/_build/install}
ROUNDS=${ROUNDS:-2}
OUTDIR=${1:-$top/_build/agent-bench}
mkdir -p "$OUTDIR/bin"

for p in vanilla patched; do
    prefix=$VANILLA_PREFIX
    [ $p = patched ] && prefix=$PATCHED_PREFIX
    "$prefix/bin/mpicc" -std=c99 -O2 -o "$OUTDIR/bin/asleep_target.$p" "$here/asleep_target.c"
    "$prefix/bin/mpicc" -std=c99 -O2 -o "$OUTDIR/bin/agent_cost.$p" "$here/agent_cost.c"
    objects=
    for s in common sync latency overlap ops; do objects="$objects $here/osu_rma_$s.c"; done
    "$prefix/bin/mpicc" -std=c99 -O2 -o "$OUTDIR/bin/put_latency.$p" \
        "$here/osu_nbrma_put_latency.c" $objects
done

# config name, MPI, environment (variables separated by commas); the agent
# at its defaults and as it was before the pacing (nice 10, no share limit)
configs="vanilla:vanilla: vanilla+async:vanilla:MPIR_CVAR_ASYNC_PROGRESS=1 patched:patched:
patched+agent:patched:MPIR_CVAR_NBRMA_ASYNC_PROGRESS=1
patched+agent-nice10:patched:MPIR_CVAR_NBRMA_ASYNC_PROGRESS=1,MPIR_CVAR_NBRMA_ASYNC_PROGRESS_NICE=10,MPIR_CVAR_NBRMA_ASYNC_PROGRESS_SHARE=100
patched+mpich-cvar:patched:MPIR_CVAR_ASYNC_PROGRESS=1"

run() {     # label mpi env transport command...  (sh has no locals: own names)
    run_label=$1 run_mpi=$2 run_envs=$3 run_tr=$4
    shift 4
    prefix=$VANILLA_PREFIX
    [ "$run_mpi" = patched ] && prefix=$PATCHED_PREFIX
    tls=
    [ "$run_tr" = tcp ] && tls=UCX_TLS=tcp,self
    # the run's own status, not a pipe's: a crash or a timeout makes a FAILED row
    status=0
    # shellcheck disable=SC2086
    env $(printf '%s' "$run_envs" | tr , ' ') $tls timeout -k 5 120 "$prefix/bin/mpiexec" -n 2 \
        "$@" > "$OUTDIR/run.out" 2>&1 || status=$?
    sed "s|^|$run_label $run_tr |" "$OUTDIR/run.out" >> "$OUTDIR/raw.txt"
    [ "$status" = 0 ] || echo "$run_label $run_tr FAILED (exit $status) $*" >> "$OUTDIR/raw.txt"
}

: > "$OUTDIR/raw.txt"
for round in $(seq "$ROUNDS"); do
    for c in $configs; do
        label=${c%%:*} rest=${c#*:}
        mpi=${rest%%:*} envs=${rest#*:}
        for tr in shm tcp; do
            run "$label" "$mpi" "$envs" $tr "$OUTDIR/bin/asleep_target.$mpi" --sleep=1 \
                --ops=2000 --kinds=allocate,create_malloc --tests=put,fop,lockput
            run "wake:$label" "$mpi" "$envs" $tr "$OUTDIR/bin/asleep_target.$mpi" --sleep=1 \
                --ops=20 --first-after=200 --kinds=allocate,create_malloc --tests=put,fop
            run "$label" "$mpi" "$envs" $tr "$OUTDIR/bin/put_latency.$mpi" -w allocate -s flush \
                -m 8:8
        done
        run "$label" "$mpi" "$envs" shm "$OUTDIR/bin/agent_cost.$mpi" idle 2
        for tr in shm tcp; do
            run "$label" "$mpi" "$envs" $tr "$OUTDIR/bin/agent_cost.$mpi" waiting 1
        done
        run "$label" "$mpi" "$envs" tcp "$OUTDIR/bin/agent_cost.$mpi" compute 300000000
    done
done

python3 - "$OUTDIR/raw.txt" > "$OUTDIR/summary.txt" <<'EOF'
import re, statistics, sys
rows = {}
for line in open(sys.argv[1]):
    f = line.split()
    if len(f) < 3:
        continue
    label, tr = f[0], f[1]
    rest = " ".join(f[2:])
    if label.startswith("wake:"):
        m = re.match(r"#\s+first operation: (allocate|create_malloc) (\w+) ([\d.]+) us", rest)
        if m:
            rows.setdefault(("wake-up us %s %s %s" % (tr, m.group(1), m.group(2)), label[5:]),
                            []).append(m.group(3))
        elif "FAILED" in rest:
            rows.setdefault(("failed runs " + tr, label[5:]), []).append(rest)
        continue
    m = re.match(r"(allocate|create_malloc) (\w+) ([\d.]+) (waited|no-wait) (ok|WRONG)", rest)
    if m:
        rows.setdefault(("asleep %s %s %s" % (tr, m.group(1), m.group(2)), label), []).append(
            "%s %s" % (m.group(3), "" if m.group(4) == "no-wait" else "(waited)"))
        continue
    m = re.match(r"8\s+([\d.]+)$", rest)
    if m:
        rows.setdefault(("put+flush 8 B latency us %s" % tr, label), []).append(m.group(1))
        continue
    m = re.match(r"idle \d+ s: .* total ([\d.]+) s", rest)
    if m:
        rows.setdefault(("idle 2 s: CPU s of both ranks", label), []).append(m.group(1))
        continue
    m = re.match(r"waiting [\d.]+ s: cpu rank1 ([\d.]+) s", rest)
    if m:
        rows.setdefault(("waiting 1 s in MPI_Win_wait %s: CPU s" % tr, label), []).append(m.group(1))
        continue
    m = re.match(r"compute \d+: alone ([\d.]+) s, under RMA ([\d.]+) s \(([\d.]+)x\), cpu ([\d.]+) s, (\d+)", rest)
    if m:
        rows.setdefault(("compute under put+flush (tcp): slowdown", label), []).append(m.group(3))
        rows.setdefault(("compute under put+flush (tcp): put+flush done", label), []).append(m.group(5))
        continue
    if "FAILED" in rest:
        rows.setdefault(("failed runs " + tr, label), []).append(rest)
labels = ["vanilla", "vanilla+async", "patched", "patched+agent", "patched+agent-nice10",
          "patched+mpich-cvar"]
def med(vals):
    nums = []
    for v in vals:
        try:
            nums.append(float(v.split()[0]))
        except ValueError:
            return ";".join(vals)
    s = "%.3g" % statistics.median(nums)
    if any("waited" in v for v in vals):
        s += " (waited)"
    return s
print("| row | " + " | ".join(labels) + " |")
print("| --- |" + " ---: |" * len(labels))
for row in sorted({r for r, _ in rows}):
    print("| %s | %s |" % (row, " | ".join(med(rows.get((row, l), ["-"])) for l in labels)))
EOF
cat "$OUTDIR/summary.txt"
