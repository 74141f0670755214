#!/usr/bin/env python3
"""Run MPICH's own test/mpi/rma suite against an installed MPICH and compare
each run with the vanilla MPICH 4.0.2 baseline.

    run-rma-suite.py --tree MPICH_TREE --baseline FILE [--ci | --full] [--only NAME ...]

The tests are built from MPICH_TREE/test/mpi, which MPICH's configure set up
for the installed mpicc/mpiexec. A run passes when it exits with status 0 and
prints MPICH's " No Errors" line within its time limit.

--ci (default) runs only the runs that pass on vanilla, each with a time limit
scaled from its vanilla time, inside an overall budget, and fails when any of
them fails: a regression against vanilla. A run that fails is run once more
(ranks busy-poll on oversubscribed cores, and vanilla too fails now and then:
see flaky-on-vanilla.txt); one that passes then is reported as "pass-2nd" with
the output of its first try in the log, and counted apart in the summary. Runs
that take much longer on vanilla than the baseline says get their limit from
slow-on-vanilla.txt (--slow). The runs that fail on vanilla but pass with the
patch set (fixed-here.txt, --fixed) run in --ci too, with a 60 s limit, and a
failure of one of them counts as a regression. --full runs all of them with the
testlist's limits (180 s by default) and reports the status of each next to
vanilla's; it fails only on regressions too.
"""

import argparse
import os
import signal
import subprocess
import sys
import time


def parse_testlist(path):
    """Yields (name, np, args, time_limit, env) per run, in testlist order."""
    for raw in open(path):
        line = raw.split("#", 1)[0].strip()
        if not line or line.startswith("@"):
            continue
        fields = line.split()
        name, np, args, limit, env = fields[0], int(fields[1]), [], None, {}
        for opt in fields[2:]:
            key, _, value = opt.partition("=")
            if key == "arg":
                args.append(value)
            elif key == "timeLimit":
                limit = float(value)
            elif key == "env":
                k, _, v = value.partition("=")
                env[k] = v
        yield name, np, args, limit, env


def parse_baseline(path):
    """Maps (name, np, occurrence) to (status, seconds)."""
    seen, result = {}, {}
    for raw in open(path):
        if raw.startswith("#") or not raw.strip():
            continue
        name, np, status, secs = raw.split()
        key = (name, int(np))
        seen[key] = seen.get(key, 0) + 1
        result[key + (seen[key],)] = (status, float(secs))
    return result


def parse_runs(path):
    """Set of (name, np) that a list file names (flaky-on-vanilla.txt,
    fixed-here.txt); none without a file."""
    runs = set()
    for raw in open(path) if path else []:
        fields = raw.split("#", 1)[0].split()
        if len(fields) >= 2:
            runs.add((fields[0], int(fields[1])))
    return runs


def parse_slow(path):
    """{(name, np): seconds} of runs that take longer on vanilla than the baseline says."""
    slow = {}
    for raw in open(path) if path else []:
        fields = raw.split("#", 1)[0].split()
        if len(fields) >= 3:
            slow[(fields[0], int(fields[1]))] = float(fields[2])
    return slow


def run_one(rma_dir, mpiexec, name, np, args, limit, env):
    cmd = [mpiexec, "-n", str(np), "./" + name] + args
    start = time.monotonic()
    # A session of its own, so that a hung run is killed with all its ranks.
    proc = subprocess.Popen(cmd, cwd=rma_dir, env=dict(os.environ, **env),
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            start_new_session=True)
    try:
        out, _ = proc.communicate(timeout=limit)
        out = out.decode(errors="replace")
        status = "pass" if proc.returncode == 0 and "No Errors" in out else "fail"
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        out = proc.communicate()[0].decode(errors="replace")
        status = "timeout"
    return status, time.monotonic() - start, out


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--tree", required=True, help="configured MPICH source tree")
    ap.add_argument("--baseline", required=True, help="vanilla results (name np status seconds)")
    ap.add_argument("--flaky", help="runs that fail intermittently on vanilla too (name np ...)")
    ap.add_argument("--slow", help="runs slower on vanilla than the baseline says "
                    "(name np seconds ...): their time limit uses these seconds")
    ap.add_argument("--fixed", help="runs that fail on vanilla and pass with the patch set "
                    "(name np ...): --ci runs them too, and their failure is a regression")
    ap.add_argument("--mpiexec", help="default: the one test/mpi was configured with")
    mode = ap.add_mutually_exclusive_group()
    mode.add_argument("--ci", action="store_true", help="runs that pass on vanilla (default)")
    mode.add_argument("--full", action="store_true", help="every run of the testlist")
    ap.add_argument("--budget", type=float, default=2100.0,
                    help="--ci: seconds for the whole suite before the rest counts as failed")
    ap.add_argument("--only", nargs="*", default=None, help="run only these test names")
    ap.add_argument("--quick", type=float, default=None, metavar="SECONDS",
                    help="--ci: only the runs that take under SECONDS on vanilla (the slice "
                    "that `make check-asan` runs under the sanitizers)")
    ap.add_argument("--log", help="file for the output of failed runs")
    ap.add_argument("--summary", help="file to append the counts to, one line")
    opts = ap.parse_args()

    testdir = os.path.join(opts.tree, "test", "mpi")
    rma_dir = os.path.join(testdir, "rma")
    mpiexec = opts.mpiexec
    if not mpiexec:
        for line in open(os.path.join(rma_dir, "Makefile")):
            if line.startswith("MPIEXEC ="):
                mpiexec = line.split("=", 1)[1].strip()
    print("rma-suite: building the tests in %s" % rma_dir, flush=True)
    for sub in ("util", "dtpools", "rma"):
        build = subprocess.run(["make", "-C", os.path.join(testdir, sub), "-j2"],
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        if build.returncode != 0:
            sys.stdout.write(build.stdout.decode(errors="replace")[-4000:])
            print("rma-suite: building test/mpi/%s failed" % sub)
            return 1

    baseline = parse_baseline(opts.baseline)
    flaky = parse_runs(opts.flaky)
    slow = parse_slow(opts.slow)
    fixed = parse_runs(opts.fixed)
    seen = {}
    counts = {"pass": 0, "fail": 0, "regressions": 0, "skipped": 0, "flaky": 0, "second": 0}
    suite_start = time.monotonic()
    log = open(opts.log, "w", buffering=1) if opts.log else None
    runs = []
    regressions = []
    for name, np, args, limit, env in parse_testlist(os.path.join(rma_dir, "testlist")):
        key = (name, np)
        seen[key] = seen.get(key, 0) + 1
        base_status, base_secs = baseline.get(key + (seen[key],), ("unknown", 0.0))
        if opts.quick is not None and not opts.full and base_secs >= opts.quick:
            continue
        if opts.only is None or name in opts.only:
            runs.append((name, np, args, limit, env, key, base_status, base_secs))
    if not opts.full:
        # Shortest first: if the machine is slower than expected and the budget
        # runs out, as many runs as possible have been checked.
        runs.sort(key=lambda run: run[7])
    for name, np, args, limit, env, key, base_status, base_secs in runs:
        if not opts.full and base_status != "pass" and key not in fixed:
            counts["skipped"] += 1
            continue
        if opts.full:
            limit = limit or 180.0
        elif key in fixed:
            limit = min(60.0, opts.budget - (time.monotonic() - suite_start))
        else:
            # Ranks busy-poll and oversubscribe 2 cores: times vary, so allow
            # a wide margin over vanilla, but a hang must not eat the budget.
            secs_on_vanilla = max(base_secs, slow.get(key, 0.0))
            limit = min(max(60.0, 3.0 * secs_on_vanilla + 30.0),
                        opts.budget - (time.monotonic() - suite_start))
        if limit < 5:
            status, secs, out = "not-run", 0.0, "the suite's time budget is used up\n"
        else:
            status, secs, out = run_one(rma_dir, mpiexec, name, np, args, limit, env)
        label = "%s %d %s" % (name, np, " ".join(args))
        if status in ("fail", "timeout") and not opts.full:
            first_status, first_out = status, out
            status, secs, out = run_one(rma_dir, mpiexec, name, np, args, limit, env)
            if status == "pass":
                counts["second"] += 1
                status = "pass-2nd"
                if log:
                    log.write("==== %s (%s on the first try, passed on the second)\n%s\n" %
                              (label, first_status, first_out))
        passed = status in ("pass", "pass-2nd")
        regression = not passed and (key in fixed or base_status == "pass" and key not in flaky)
        counts["pass" if passed else "fail"] += 1
        counts["regressions"] += regression
        counts["flaky"] += not passed and key in flaky
        print("%-7s %-58s %6.1fs  (vanilla: %s %.1fs)%s" %
              (status, label, secs, base_status, base_secs,
               "  REGRESSION (fixed here)" if regression and key in fixed else
               "  REGRESSION" if regression else
               "  (fixed here: fails on vanilla)" if passed and key in fixed else
               "  (flaky on vanilla too)" if not passed and key in flaky else ""),
              flush=True)
        if status != "pass" and log:
            log.write("==== %s (%s)\n%s\n" % (label, status, out))
        if regression:
            regressions.append((label, status, out))
    total = time.monotonic() - suite_start
    # Repeated at the end, where a CI log that keeps only its tail still shows it.
    for label, status, out in regressions:
        print("rma-suite: REGRESSION %s (%s), the last lines it printed:" % (label, status))
        for line in out.splitlines()[-15:]:
            print("    " + line)
    print("rma-suite: %d passed (%d of them on a second try), %d failed (%d of them flaky on "
          "vanilla too), %d regressions against vanilla, %d not run (fail on vanilla), %.0f s" %
          (counts["pass"], counts["second"], counts["fail"], counts["flaky"],
           counts["regressions"], counts["skipped"], total))
    if opts.summary:
        with open(opts.summary, "a") as f:
            f.write("MPICH test/mpi/rma (%s; failures that vanilla has too are not "
                    "counted): %d passed, %d failed\n" %
                    ("all runs" if opts.full else "runs passing on vanilla",
                     counts["pass"], counts["regressions"]))
    return 1 if counts["regressions"] else 0


if __name__ == "__main__":
    sys.exit(main())
