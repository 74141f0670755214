#!/usr/bin/env python3
"""The results page of run-bench-all.sh: tables and PNG plots from its raw outputs.

    make-results.py OUTDIR RESULTS_DIR

OUTDIR is run-bench-all.sh's output (raw/, epochs/, memhandle/, info.txt);
RESULTS_DIR gets results.md and plots/*.png. Every figure is a median over the
rounds (the OSU rows: of each size's value; the epochs and memory-handle
benchmarks: of each run's median). Nothing is tuned or filled in: a cell
without runs is "-", a plot without data is left out.
"""
import collections
import glob
import os
import re
import statistics
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

OUT, RESULTS = sys.argv[1], sys.argv[2]
PLOTS = os.path.join(RESULTS, "plots")
os.makedirs(PLOTS, exist_ok=True)
MPI_LABEL = {"vanilla": "vanilla MPICH 4.0.2", "patched": "patched MPICH",
             "openmpi": "Open MPI 4.1.4 osc/ucx"}
COLOR = {"vanilla": "tab:gray", "patched": "tab:blue", "patched-i": "tab:green",
         "openmpi": "tab:orange"}
page = []


def med(values):
    values = [v for v in values if v is not None]
    return statistics.median(values) if values else None


def cell(x, digits=2):
    return "-" if x is None else f"{x:,.{digits}f}"


def ratio(a, b):
    return "-" if a is None or not b else f"{a / b:.2f}"


def table(header, rows, text_columns=1):
    """A markdown table: the first text_columns columns left-aligned, the rest numbers."""
    page.append("| " + " | ".join(header) + " |")
    page.append("|" + "|".join(" --- " if i < text_columns else " ---: " for i in range(len(header))) + "|")
    for r in rows:
        page.append("| " + " | ".join(r) + " |")
    page.append("")


def figure(name, fig, caption):
    path = os.path.join(PLOTS, name)
    fig.tight_layout()
    fig.savefig(path, dpi=90)
    plt.close(fig)
    page.append(f"![{caption}](plots/{name})")
    page.append("")


# --- OSU-format outputs: raw/NAME.MPI.ROUND.txt ------------------------------------

def size_rows(subdir, name, mpi):
    """{size: median over rounds of each column} of one configuration's runs,
    OUT/subdir/NAME.MPI.ROUND.txt, whose rows are a size and numbers ("-" for
    a column without a value). A size whose data check failed ("# FAILED ...
    after N-byte operations") is left out: its time is that of operations
    that went wrong (failures_section lists them)."""
    per = {}
    for f in glob.glob(os.path.join(OUT, subdir, f"{name}.{mpi}.*.txt")):
        rows, failed = {}, set()
        for line in open(f, errors="replace"):
            m = re.match(r"# FAILED: \d+ bytes wrong after (\d+)-byte", line)
            if m:
                failed.add(int(m.group(1)))
            cells = line.split()
            if not cells or line.startswith("#") or not cells[0].isdigit():
                continue
            try:
                rows[int(cells[0])] = [None if c == "-" else float(c) for c in cells[1:]]
            except ValueError:
                continue    # ranks' output interleaved within the line
        for size, vals in rows.items():
            if size not in failed:
                per.setdefault(size, []).append(vals)
    return {s: [med([r[i] for r in rs if i < len(r)]) for i in range(max(map(len, rs)))]
            for s, rs in per.items()}


def osu_rows(name, mpi):
    """The OSU-format outputs of run-bench-all.sh (OUT/raw)."""
    return size_rows("raw", name, mpi)


def size_label(s):
    return f"{s // 1048576} MiB" if s >= 1048576 else f"{s // 1024} KiB" if s >= 1024 else f"{s} B"


MODES = ["flush", "lock", "lock_all", "fence", "pscw"]
FAMILIES = [("put", "MPI_Put"), ("get", "MPI_Get"), ("acc", "MPI_Accumulate"),
            ("fop", "MPI_Fetch_and_op"), ("cas", "MPI_Compare_and_swap")]


def latency_section():
    page.append("## Latency per synchronization mode (OSU-compatible, 2 ranks)")
    page.append("")
    page.append("`osu_nbrma_<op>_latency -s MODE` (OSU 7.4's loops and format, "
                "`MPI_Win_allocate`); the patched MPICH also runs the nonblocking "
                "variant of each mode (`-s iMODE`: the `MPIX_Win_i*` call, then "
                "`MPI_Wait`). Microseconds per operation; fence and PSCW are "
                "ping-pongs divided by 2, as OSU does.")
    page.append("")
    for fam, call in FAMILIES:
        data = {}
        for mode in MODES:
            for mpi in ("vanilla", "patched", "openmpi"):
                data[(mode, mpi)] = osu_rows(f"lat-{fam}-{mode}", mpi)
            data[(mode, "patched-i")] = osu_rows(f"lat-{fam}-i{mode}", "patched")
        if not any(data.values()):
            continue
        page.append(f"### {call}")
        page.append("")
        sizes = sorted({s for d in data.values() for s in d})
        shown = [s for s in sizes if s in (1, 8, 64, 1024, 8192, 65536, 1048576)] or sizes
        rows = []
        for mode in MODES:
            for s in shown:
                v, p, i, o = (data[(mode, k)].get(s, [None])[0]
                              for k in ("vanilla", "patched", "patched-i", "openmpi"))
                rows.append([f"{mode}, {size_label(s)}", cell(v), cell(p), cell(i), cell(o),
                             ratio(p, v), ratio(i, v), ratio(p, o)])
        table(["mode, size", "vanilla", "patched", f"patched i-mode", "Open MPI",
               "patched/vanilla", "i-mode/vanilla", "patched/Open MPI"], rows)
        if len(sizes) > 1:
            fig, axes = plt.subplots(1, len(MODES), figsize=(16, 3.6), sharey=True)
            for ax, mode in zip(axes, MODES):
                for k, label in (("vanilla", MPI_LABEL["vanilla"]), ("patched", MPI_LABEL["patched"]),
                                 ("patched-i", "patched, nonblocking (-s i<mode>)"),
                                 ("openmpi", MPI_LABEL["openmpi"])):
                    d = data[(mode, k)]
                    if d:
                        xs = sorted(d)
                        ax.plot(xs, [d[x][0] for x in xs], marker=".", label=label, color=COLOR[k])
                ax.set_xscale("log", base=2)
                ax.set_xlim(left=0.7)
                ax.set_yscale("log")
                ax.set_title(f"{call}, -s {mode}")
                ax.set_xlabel("message size (bytes)")
                ax.grid(True, which="major", alpha=0.3)
            axes[0].set_ylabel("latency (us)")
            axes[0].legend(fontsize=7)
            figure(f"latency-{fam}.png", fig, f"{call} latency per size and synchronization mode")
        else:
            fig, ax = plt.subplots(figsize=(8, 3.6))
            keys = ["vanilla", "patched", "patched-i", "openmpi"]
            width = 0.2
            for j, k in enumerate(keys):
                ys = [data[(m, k)].get(sizes[0], [None])[0] if sizes else None for m in MODES]
                ax.bar([x + (j - 1.5) * width for x in range(len(MODES))],
                       [y or 0 for y in ys], width,
                       label=MPI_LABEL.get(k, "patched, nonblocking (-s i<mode>)"),
                       color=COLOR[k])
            ax.set_xticks(range(len(MODES)))
            ax.set_xticklabels([f"-s {m}" for m in MODES])
            ax.set_ylabel("latency (us)")
            ax.set_title(f"{call}, 1 byte (MPI_CHAR)")
            ax.legend(fontsize=7)
            figure(f"latency-{fam}.png", fig, f"{call} latency per synchronization mode")


def overlap_section():
    page.append("## Overlap of communication and computation (OSU-compatible, 2 ranks)")
    page.append("")
    page.append("`osu_nbrma_<op>_overlap` (OSU's formula for nonblocking collectives): a "
                "computation as long as the pure communication between the nonblocking "
                "closing call and its `MPI_Wait` (i-modes), or between the operation and "
                "the blocking closing call. `t0`: no MPI call during the computation; "
                "`t10`: 10 `MPI_Test` calls spread over it. Overlap in percent.")
    page.append("")
    for fam, call in (("put", "MPI_Put"), ("acc", "MPI_Accumulate")):
        fig, axes = plt.subplots(1, 2, figsize=(12, 3.8), sharey=True)
        rows, any_data = [], False
        for ax, t in zip(axes, ("t0", "t10")):
            for mode in ("flush", "lock", "pscw", "fence"):
                series = [("vanilla", f"ovl-{fam}-{mode}-{t}", f"vanilla -s {mode}"),
                          ("patched", f"ovl-{fam}-{mode}-{t}", f"patched -s {mode}"),
                          ("patched-i", f"ovl-{fam}-i{mode}-{t}", f"patched -s i{mode}"),
                          ("openmpi", f"ovl-{fam}-{mode}-{t}", f"Open MPI -s {mode}")]
                got = {}
                for k, name, label in series:
                    d = osu_rows(name, "patched" if k == "patched-i" else k)
                    got[k] = d
                    if d and mode in ("flush", "pscw"):
                        xs = sorted(d)
                        ax.plot(xs, [d[x][3] for x in xs], marker=".", label=label,
                                color=COLOR[k], linestyle="-" if mode == "flush" else "--")
                        any_data = True
                for s in (65536, 1048576):
                    vals = [got[k].get(s, [None] * 4)[3] for k in ("vanilla", "patched", "patched-i", "openmpi")]
                    if any(v is not None for v in vals):
                        rows.append([f"{mode}, {size_label(s)}, {t}"] + [cell(v, 1) for v in vals])
            ax.set_xscale("log", base=2)
            ax.set_xlim(left=700)
            ax.set_ylim(-5, 105)
            ax.set_title(f"{call}: {'no MPI call' if t == 't0' else '10 MPI_Test calls'} during the computation")
            ax.set_xlabel("message size (bytes)")
            ax.grid(True, alpha=0.3)
        axes[0].set_ylabel("overlap (%)")
        axes[0].legend(fontsize=7)
        if not any_data:
            plt.close(fig)
            continue
        page.append(f"### {call}")
        page.append("")
        table(["mode, size, MPI_Test calls", "vanilla", "patched", "patched i-mode", "Open MPI"], rows)
        figure(f"overlap-{fam}.png", fig, f"{call} overlap (flush solid, PSCW dashed)")


def reorder_section():
    per = {}
    for f in glob.glob(os.path.join(OUT, "raw", "reorder.patched.*.txt")):
        for line in open(f, errors="replace"):
            cells = line.split()
            if len(cells) == 6 and not line.startswith("#"):
                per.setdefault((cells[0], cells[1]), []).append([float(c) for c in cells[2:]])
    if not per:
        return
    page.append("## The reorder scenarios of the nonblocking-epochs paper (patched MPICH)")
    page.append("")
    page.append("`osu_reorder_scenarios -n 4` (SC14 VIII-A-2, Figs. 7-11, and `aaar_fence`: "
                "a lock epoch overtaking a fence, rule F1 of the core README, the paper's future "
                "work): one rank 1000 us "
                "late (asleep), 1 MB puts; the victim's epoch and the chaining rank's two "
                "epochs (cumulative), from the start of the round, flag off and on, in us. "
                "Vanilla MPICH and Open MPI have neither nonblocking epochs nor the flags.")
    page.append("")
    names = sorted(per, key=lambda k: ["aaar_pscw", "aaar_lock", "aaer", "eaer", "eaar", "aaar_fence"].index(k[0]))
    meds = {k: [med([r[i] for r in per[k]]) for i in range(4)] for k in names}
    table(["scenario", "flag", "victim off", "victim on", "cumulative off", "cumulative on"],
          [[k[0], k[1], *(cell(x, 0) for x in meds[k])] for k in names], text_columns=2)
    fig, ax = plt.subplots(figsize=(10, 4))
    labels = ["victim, flag off", "victim, flag on", "cumulative, flag off", "cumulative, flag on"]
    colors = ["tab:gray", "tab:blue", "silver", "lightsteelblue"]
    width = 0.2
    for j in range(4):
        ax.bar([x + (j - 1.5) * width for x in range(len(names))], [meds[k][j] or 0 for k in names],
               width, label=labels[j], color=colors[j])
    ax.set_xticks(range(len(names)))
    ax.set_xticklabels([k[0].upper() for k in names])
    ax.set_ylabel("time from the round's start (us)")
    ax.set_title("Reorder scenarios: a rank 1000 us late, 1 MB puts, 4 ranks on 2 cores")
    ax.legend(fontsize=8)
    figure("reorder-scenarios.png", fig, "reorder scenarios, flag off and on")


# --- run-epochs-bench.sh outputs: epochs/NAME.SERIES.RUN.txt -----------------------

SERIES = ["v-blocking", "p-blocking", "p-nonblocking", "o-blocking", "p-nonblocking+AAAR"]
SERIES_LABEL = {"v-blocking": "vanilla, blocking", "p-blocking": "patched, blocking",
                "p-nonblocking": "patched, nonblocking", "o-blocking": "Open MPI, blocking",
                "p-nonblocking+AAAR": "patched, nonblocking + A_A_A_R"}
SERIES_COLOR = {"v-blocking": "tab:gray", "p-blocking": "tab:blue", "p-nonblocking": "tab:green",
                "o-blocking": "tab:orange", "p-nonblocking+AAAR": "tab:olive"}


def epochs_values(name, series):
    rows = {}
    for f in glob.glob(os.path.join(OUT, "epochs", f"{name}.{series}.*.txt")):
        for line in open(f, errors="replace"):
            if line.startswith("#") or line.startswith("check"):
                continue
            m = re.match(r"^(.*?)\s+(-?[0-9.]+)(\s+-?[0-9.]+)?\s*$", line.rstrip())
            if m:
                rows.setdefault(m.group(1).strip(), []).append(float(m.group(2)))
    return {q: med(v) for q, v in rows.items()}


def bars(title, fname, ylabel, groups, series):
    """groups: [(label, {series: value})]"""
    fig, ax = plt.subplots(figsize=(max(6, 1.8 * len(groups) + 2), 4))
    width = 0.8 / len(series)
    for j, s in enumerate(series):
        ax.bar([x + (j - (len(series) - 1) / 2) * width for x in range(len(groups))],
               [g[1].get(s) or 0 for g in groups], width, label=SERIES_LABEL[s], color=SERIES_COLOR[s])
    ax.set_xticks(range(len(groups)))
    ax.set_xticklabels([g[0] for g in groups], fontsize=8)
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    ax.legend(fontsize=7)
    figure(fname, fig, title)


def epochs_section():
    if not glob.glob(os.path.join(OUT, "epochs", "*.txt")):
        return
    page.append("## Inefficiency patterns, atomics, LU (`run-epochs-bench.sh`)")
    page.append("")
    page.append("The experiments of SC14 section VIII on this machine (1 MB puts, 1000 us of "
                "delay or work; the nonblocking series calls `MPI_Test` between 50 us work "
                "slices, the `nopoll` rows make no MPI call during the work). "
                "`osu_extensions/README.md` says who does what and how to read each row.")
    page.append("")
    patterns = [("late_post", "origin: subsequent send done at", "Late Post: origin's next send done"),
                ("late_complete", "target: exposure epoch length", "Late Complete: target's epoch"),
                ("late_complete_nopoll", "target: exposure epoch length", "Late Complete, no MPI call"),
                ("wait_at_fence", "target: fence epoch length", "Wait at Fence: target's epoch"),
                ("wait_at_fence_nopoll", "target: fence epoch length", "Wait at Fence, no MPI call"),
                ("early_fence", "origin: fence epoch length", "Early Fence: origin's epoch"),
                ("late_unlock", "second origin: lock epoch length", "Late Unlock: second origin"),
                ("late_unlock_nopoll", "second origin: lock epoch length", "Late Unlock, no MPI call")]
    series = SERIES[:4]
    groups, rows = [], []
    for name, quantity, label in patterns:
        vals = {s: epochs_values(name, s).get(quantity) for s in series}
        if not any(vals.values()):
            # the quantity names of a pattern: take the first line it printed
            continue
        groups.append((label.replace(": ", ":\n"), vals))
        rows.append([label] + [cell(vals[s], 1) for s in series] + [ratio(vals["p-nonblocking"], vals["v-blocking"])])
    if rows:
        page.append("### Inefficiency patterns (us, lower is better)")
        page.append("")
        table(["pattern, quantity"] + [SERIES_LABEL[s] for s in series] + ["p-nonblocking / vanilla"], rows)
        bars("Inefficiency patterns (1 MB put, 1000 us delay or work)", "patterns.png",
             "time (us)", groups, series)
    aseries = SERIES
    groups, rows = [], []
    for name, label in (("atomics2", "2 ranks"), ("atomics4", "4 ranks (oversubscribed)")):
        vals = {s: epochs_values(name, s).get("transactions per second") for s in aseries}
        if any(vals.values()):
            groups.append((label, vals))
            rows.append([label] + [cell(vals[s], 0) for s in aseries])
    if rows:
        page.append("### Massive unstructured atomic transactions (per second, higher is better)")
        page.append("")
        table(["ranks"] + [SERIES_LABEL[s] for s in aseries], rows)
        fig_groups = groups
        # 2 and 4 ranks differ by three orders of magnitude: one plot each
        for (label, vals), suffix in zip(fig_groups, ("2", "4")):
            bars(f"Atomic transactions per second, {label}", f"atomics-{suffix}.png",
                 "transactions per second", [(label, vals)], aseries)
    groups, rows = [], []
    for name, label in (("lu384", "384 x 384"), ("lu768", "768 x 768")):
        vals = {s: epochs_values(name, s).get("factorization time (ms)") for s in series}
        if any(vals.values()):
            groups.append((label, vals))
            rows.append([label] + [cell(vals[s], 1) for s in series] + [ratio(vals["p-nonblocking"], vals["p-blocking"])])
    if rows:
        page.append("### LU decomposition with PSCW, 2 ranks (ms, lower is better)")
        page.append("")
        table(["matrix"] + [SERIES_LABEL[s] for s in series] + ["p-nonblocking / p-blocking"], rows)
        bars("LU decomposition with PSCW, 2 ranks", "lu.png", "factorization time (ms)", groups, series)


def memhandle_section():
    files = glob.glob(os.path.join(OUT, "memhandle", "*.txt"))
    if not files:
        return
    kinds = ["create", "allocate", "dynamic", "memhandle"]

    page.append("## Memory-handle windows (`run-memhandle-bench.sh`, 2 ranks)")
    page.append("")
    page.append("Put and get + flush per kind of window, with the window created and freed "
                "in every iteration (the paper's Figure 12), medians over all sizes from 1 "
                "to 256 bytes, in us. Vanilla MPICH has no memory-handle windows.")
    page.append("")
    rows, groups = [], []
    for name, label in (("put", "put+flush"), ("get", "get+flush"),
                        ("put-create", "put, window created/freed per iteration"),
                        ("get-create", "get, window created/freed per iteration")):
        v, p = size_rows("memhandle", name, "vanilla"), size_rows("memhandle", name, "patched")
        vm = [med([r[i] for r in v.values()]) for i in range(len(kinds))]
        pm = [med([r[i] for r in p.values()]) for i in range(len(kinds))]
        if not any(vm + pm):
            continue
        rows.append([label] + [cell(x) for x in vm[:3]] + [cell(x) for x in pm])
        groups.append((label, vm, pm))
    table(["us", "v:create", "v:allocate", "v:dynamic", "p:create", "p:allocate", "p:dynamic",
           "p:memhandle"], rows)
    fig, axes = plt.subplots(1, len(groups), figsize=(4 * len(groups), 3.6))
    for ax, (label, vm, pm) in zip(axes, groups):
        names = [f"v:{k}" for k in kinds[:3]] + [f"p:{k}" for k in kinds]
        vals = vm[:3] + pm
        ax.bar(range(len(names)), [x or 0 for x in vals],
               color=["tab:gray"] * 3 + ["tab:blue"] * 3 + ["tab:green"])
        ax.set_xticks(range(len(names)))
        ax.set_xticklabels(names, rotation=45, ha="right", fontsize=8)
        ax.set_title(label, fontsize=9)
        ax.set_ylabel("us per iteration")
    figure("memhandle.png", fig, "memory-handle windows against the other kinds (v: vanilla, p: patched)")


def failures_section():
    """The runs whose data checks failed or that did not end well, per MPI."""
    path = os.path.join(OUT, "failures.txt")
    lines = [l.strip() for l in open(path)] if os.path.exists(path) else []
    page.append("## Runs that failed")
    page.append("")
    if not lines:
        page.append("None: every run ended well and every data check passed.")
        page.append("")
        return
    page.append("Every benchmark checks at the target (or, for what an operation fetched, "
                "at the origin) what its operations left. These runs found wrong data or "
                "did not end well; the sizes whose check failed are left out of the tables "
                "and plots above (`-`), as their times are those of operations that went "
                "wrong. `make bench` fails only for runs of the patched MPICH. What is "
                "known about them: vanilla MPICH 4.0.2 misroutes RMA to windows of 8 "
                "bytes or less per process (their memory shares a page of the node-shared "
                "segment and the window takes the page's address as its base; patch 0024 "
                "fixes it, `test/mpi/allocate_small.c`). Open MPI 4.1.4's osc/ucx hands "
                "1-byte atomics to UCX, which rejects them (`invalid atomic operation "
                "datatype`), and leaves `MPI_CHAR` accumulates of 16 bytes and more wrong; "
                "`MPI_CHAR` is OSU's default datatype, although MPI-3.1 (section 5.9.2) "
                "does not list it for `MPI_SUM`.")
    page.append("")
    rows = []
    for mpi in ("patched", "vanilla", "openmpi"):
        names = {}
        for l in lines:
            m = re.match(r"FAILED on (\w+): (\S+), round (\d+)", l)
            if m and m.group(1) == mpi:
                names.setdefault(m.group(2), set()).add(m.group(3))
        for name in sorted(names):
            sizes, notes = set(), []
            for f in glob.glob(os.path.join(OUT, "raw", f"{name}.{mpi}.*.txt")):
                for line in open(f, errors="replace"):
                    m = re.match(r"# FAILED: \d+ bytes wrong after (\d+)-byte", line)
                    if m:
                        sizes.add(int(m.group(1)))
                    # ranks' messages interleave within a line: the words only
                    for m in re.finditer(r"UCX\s+ERROR\s+([A-Za-z][A-Za-z ]{15,})", line):
                        notes.append(m.group(1).strip())
            what = ("wrong data at " + ", ".join(size_label(x) for x in sorted(sizes))) if sizes else "the run failed"
            # the message most lines carry whole (interleaving garbles some);
            # ties by text, so that the page does not change from run to run
            counts = collections.Counter(notes)
            said = min(counts, key=lambda n: (-counts[n], n)) if counts else ""
            rows.append([MPI_LABEL[mpi], name, f"{len(names[name])} of the rounds", what, said])
    others = [l for l in lines if l.startswith("FAILED in a sub-script")]
    table(["MPI", "configuration", "rounds", "what", "UCX said"], rows, text_columns=5)
    for l in others:
        page.append(f"- {l}")
    page.append("")


info = open(os.path.join(OUT, "info.txt")).read() if os.path.exists(os.path.join(OUT, "info.txt")) else ""
page.append("# Benchmark results")
page.append("")
page.append("Written by `osu_extensions/make-results.py` from the raw outputs of "
            "`make bench` (`osu_extensions/run-bench-all.sh`); the MPIs alternate run by "
            "run, and every figure is a median over the rounds. Every benchmark checks the "
            "data its operations left; the run failed if one did not match. Single-digit "
            "percentages move from run to run on this machine (2 cores shared by all ranks).")
page.append("")
page.append("```")
page.append(info.strip())
page.append("```")
page.append("")
latency_section()
overlap_section()
reorder_section()
epochs_section()
memhandle_section()
failures_section()
with open(os.path.join(RESULTS, "results.md"), "w") as f:
    f.write("\n".join(page) + "\n")
print(f"wrote {os.path.join(RESULTS, 'results.md')} and {len(glob.glob(os.path.join(PLOTS, '*.png')))} plots")
