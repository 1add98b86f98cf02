# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 REINFORCE-NFV authors
"""onvm.report -- what the benchmarks write besides their numbers: the
console log line, CSV files, matplotlib figures, percentiles of a sample,
and the description of the machine and of the tree a run was made on
(bench/results/ keeps it next to the figures it explains).

Figures are drawn with matplotlib's Agg backend (files, no display);
Debian's python3-matplotlib is for /usr/bin/python3 only, so pyplot()
raises ImportError where it is missing and each benchmark says so or
goes without its figure.
"""
import csv
import os
import subprocess
import sys
import time

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def log(msg):
    """A progress line on stderr, with the time of day."""
    print(f"[{time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


def fmt(v, nd=3):
    """A CSV or log field: "" for None, nd decimals for a float."""
    if v is None:
        return ""
    if isinstance(v, float):
        return f"{v:.{nd}f}"
    return str(v)


def pct(values, p):
    """The p-th percentile (0..100) of `values`, nearest rank."""
    s = sorted(values)
    return s[min(len(s) - 1, int(round(p / 100 * (len(s) - 1))))]


def write_csv(path, fields, rows):
    """A CSV file with the header `fields`; rows are dicts keyed by field
    (a missing one is empty) or sequences in the order of `fields`."""
    with open(path, "w", newline="") as f:
        if rows and isinstance(rows[0], dict):
            w = csv.DictWriter(f, fieldnames=fields)
            w.writeheader()
        else:
            w = csv.writer(f)
            w.writerow(fields)
        w.writerows(rows)


def pyplot():
    """matplotlib.pyplot on the Agg backend; ImportError without matplotlib."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    return plt


def sh(cmd):
    """A shell command's output, stripped; "? (why)" if it cannot run."""
    try:
        return subprocess.run(cmd, shell=True, capture_output=True, text=True,
                              timeout=10).stdout.strip()
    except Exception as e:
        return f"? ({e})"


def repo_state():
    """The tree's commit, short, and whether it has uncommitted changes."""
    return (f"{sh(f'git -C {REPO} rev-parse --short HEAD')}"
            f"{' (+ uncommitted changes)' if sh(f'git -C {REPO} status --porcelain') else ''}")


def machine_txt(build, testpmd, busy, others, params):
    """The machine, the tree and the build a run was made on, and how busy
    the machine was before it (`busy`: CPU fraction, `others`: other DPDK
    runtime directories); `params`: the run's parameters line."""
    model = sh("lscpu | sed -n 's/^Model name: *//p'")
    hyp = sh("lscpu | sed -n 's/^Hypervisor vendor: *//p'")
    lines = [f"date: {time.strftime('%Y-%m-%d %H:%M:%S %z')}",
             f"cpu model: {model}",
             f"cpus online: {os.cpu_count()}, hypervisor: {hyp or 'none'}",
             f"kernel: {sh('uname -sr')}",
             f"dpdk (pkg-config libdpdk): {sh('pkg-config --modversion libdpdk')}",
             f"testpmd: {testpmd}",
             f"hugepages: {sh('grep -E HugePages_Total /proc/meminfo')}, "
             f"{sh('grep -E Hugepagesize /proc/meminfo')}",
             f"repo commit: {repo_state()}",
             f"build dir: {build}",
             params,
             f"CPU busy before the run: {100 * busy:.0f}%, other DPDK runtime dirs: "
             f"{' '.join(others) or 'none'}"]
    return "\n".join(lines) + "\n"
