#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 REINFORCE-NFV authors
"""Throughput against packet size, no resiliency vs local resiliency (the
REINFORCE paper's Fig. 4), in Mpps and Gbps, with dpdk-testpmd as the bound.

Set-up: local_resiliency.py's throughput part (its node: onvm.tput's
stateful_cfg) with the packet size changed, so at most two busy pollers
(SPEC section 8).  The manager on
CPU 0 polls net_null0,size=S ("gen": its RX makes S-byte packets as fast as
it is polled) and transmits on net_null1,size=S ("sink", "rx": false: its TX
frees them); one stateful NF, test_nf -S on CPU 1, counts packets and bytes
in a libnf state region for every packet, so every batch commits a chunk;
chain gen -> NF -> sink.  Set-ups per size S:

  testpmd  dpdk-testpmd io forwarding between net_null0,size=S and
           net_null1,size=S on one lcore (CPU 1; chain_tput.py's
           run_null_testpmd, --no-pci): the bound of a PMD-to-PMD loop that
           does no work.  Tx-pps of both ports summed (both directions:
           packets one lcore forwards per second), as in chain_tput.py.
  none     the node with "resiliency": "none".
  local    the node with "resiliency": "local": a standby is launched and
           parked (on CPU 0, the default standby_cpus) before the warm-up
           starts; it sleeps while the active runs.

Chain throughput is the delta of the sink port's tx counter (/onvm/ports)
over the window (local_resiliency.py's mpps()).  Rounds are interleaved
(for each round, for each size: testpmd, none, local) and the median over
rounds is reported; local/none is the median of the per-round ratios.

Gbps: S is the frame length DPDK counts (pkt_len), named as RFC 2544 names
frames (64..1518 B including the FCS, which a NIC would append).
  gbps      = Mpps * S * 8 / 1000         (L2 bytes, no preamble/IFG)
  gbps_wire = Mpps * (S + 20) * 8 / 1000  (+ 8 B preamble/SFD + 12 B IFG)
net_null is no wire: nothing caps the bit rate, and nothing here touches the
payload (net_null without copy=1 only sets lengths; the manager parses the
headers, test_nf adds pkt_len to its byte counter), so Mpps is expected to
stay about flat over S and Gbps to grow in proportion to S.  The
plot draws 10 GbE line rate for scale.

usage: bench/pkt_sizes.py [--sizes 64,128,256,512,1024,1518] [--rounds 3]
                          [--window 3] [--warmup 2] [--build DIR] [--out DIR]
                          [--quiet-wait 60]
  e.g. flock /tmp/bench.lock bench/pkt_sizes.py --out bench/results
       (default sizes, 3 rounds: about 5 minutes on the 2-vCPU lab)
       flock /tmp/bench.lock bench/pkt_sizes.py --sizes 64,1518 --rounds 1 --window 2

Writes OUT/pkt_sizes.csv (setup,size,round,mpps,gbps,gbps_wire: one row per
measurement, one "median" row per set-up and size; then other_cpu_pct, the CPU
processes other than the measured ones used during the window, and
steal_pct, the hypervisor's steal time, in percent of one core, as in
chain_tput.csv; largest of the rounds in a median row),
OUT/pkt_sizes_summary.txt, OUT/pkt_sizes.png (Mpps and Gbps against size; skipped with a message if
matplotlib is missing) and OUT/pkt_sizes_machine.txt.
"""
import argparse
import os
import re
import shutil
import signal
import statistics
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(REPO, "python"))
from onvm import report, tput  # noqa: E402  (onvm.lab: in main(), it reads ONVM_BUILD)
from onvm.noise import CpuNoise  # noqa: E402

SETUPS = ("testpmd", "none", "local")
WIRE_OVERHEAD = 20  # preamble + SFD (8 B) and inter-frame gap (12 B)


def ten_gbe_mpps(size):
    """Line rate of 10 GbE in Mpps for frames of `size` bytes."""
    return 10e3 / ((size + WIRE_OVERHEAD) * 8)


def parse_args():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sizes", default="64,128,256,512,1024,1518",
                    help="packet sizes in bytes (net_null size=)")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--window", type=float, default=3.0, help="measured seconds")
    ap.add_argument("--warmup", type=float, default=2.0, help="seconds before the window")
    ap.add_argument("--build", default=os.path.join(REPO, "build"))
    ap.add_argument("--out", default=os.path.join(HERE, "results"))
    ap.add_argument("--quiet-wait", type=float, default=60,
                    help="seconds to wait for an idle machine before starting")
    a = ap.parse_args()
    a.build = os.path.abspath(a.build)
    a.sizes = [int(x) for x in a.sizes.split(",") if x]
    if not a.sizes or min(a.sizes) < 60 or max(a.sizes) > 2048:
        ap.error("sizes must be 60..2048 bytes (one default-sized mbuf)")
    return a


def gbps(mpps, size, wire=False):
    return mpps * (size + (WIRE_OVERHEAD if wire else 0)) * 8 / 1000


# ---- the measurements --------------------------------------------------------------------

def measure_testpmd(ctlab, a, size):
    mpps, _ = tput.run_null_testpmd(ctlab, a, copy=False, size=size)
    return mpps, (ctlab.last_foreign_cpu, ctlab.last_steal, ctlab.last_foreign_top)


def node_cfg(test_nf, mode, size):
    """local_resiliency.py's node with S-byte packets on both ports."""
    cfg = tput.stateful_cfg(test_nf, mode)
    for p in cfg["ports"]:
        p["dev"], n = re.subn(r"\bsize=\d+", f"size={size}", p["dev"])
        assert n == 1, p["dev"]
    return cfg


def measure_node(lab, L, a, mode, size, rnd):
    node = L.node(f"{mode}-{size}-r{rnd}", node_cfg(lab.TEST_NF, mode, size))
    try:
        node.start()  # (stopped below also when it never gets ready)
        if mode == "local":  # the standby's start-up must not fall into the window
            lab.wait_until(lambda: node.nf_by(service=1)[0]["standby_parked"], 60,
                           "the standby to park", alive=node.assert_running)
        time.sleep(a.warmup)
        # local_resiliency.py's mpps(): sink tx over the window, the window
        # slept through CpuNoise.window, which notes the CPU that processes
        # other than this node's used meanwhile, and the steal time
        probe = CpuNoise(node.prefix, [node.proc])  # the NFs' argv names the prefix
        tx0, t0 = node.port("sink")["tx"], time.monotonic()
        probe.window(a.window)
        mpps = (node.port("sink")["tx"] - tx0) / (time.monotonic() - t0) / 1e6
        nf = node.nf_by(service=1)[0]
        if nf["failovers"] or (mode == "none") != (nf["standby_pid"] <= 0):
            raise lab.TestFailure(f"{mode}: unexpected NF state: failovers {nf['failovers']}, "
                                  f"standby pid {nf['standby_pid']}")
        if mpps <= 0:
            raise lab.TestFailure(f"{mode}: the sink transmitted nothing")
        return mpps, (probe.last_foreign_cpu, probe.last_steal, probe.last_foreign_top)
    finally:
        node.stop()


# ---- output ----------------------------------------------------------------------------------

def medians(results, sizes):
    """{(setup, size): (median mpps, min, max)}, {size: median of the per-round local/none}
    and {size: [the per-round local/none]}."""
    med = {}
    for (setup, size), reps in results.items():
        if reps:
            v = list(reps.values())
            med[(setup, size)] = (statistics.median(v), min(v), max(v))
    ratio, per_round = {}, {}
    for size in sizes:
        n, l = results[("none", size)], results[("local", size)]
        per_round[size] = [l[r] / n[r] for r in sorted(n) if r in l and n[r] > 0]
        ratio[size] = statistics.median(per_round[size]) if per_round[size] else None
    return med, ratio, per_round


def write_outputs(a, results, noise, elapsed):
    os.makedirs(a.out, exist_ok=True)
    med, ratio, per_round = medians(results, a.sizes)
    with open(os.path.join(a.out, "pkt_sizes.csv"), "w") as f:
        f.write("setup,size,round,mpps,gbps,gbps_wire,other_cpu_pct,steal_pct\n")
        for size in a.sizes:
            for setup in SETUPS:
                reps = results[(setup, size)]
                rows = [(str(r), v, noise[(setup, size, r)][:2]) for r, v in sorted(reps.items())]
                if (setup, size) in med:  # noise: the largest of the rounds
                    rows.append(("median", med[(setup, size)][0],
                                 [max(x[2][i] for x in rows) for i in (0, 1)]))
                for rnd, v, (other, steal) in rows:
                    f.write(f"{setup},{size},{rnd},{v:.4f},{gbps(v, size):.3f},"
                            f"{gbps(v, size, True):.3f},{other:.1f},{steal:.1f}\n")

    def cell(setup, size):
        if (setup, size) not in med:
            return f"{'-':>30}"
        m, lo, hi = med[(setup, size)]
        return f"{m:.2f} ({lo:.2f}..{hi:.2f}) {gbps(m, size):7.1f}".rjust(30)

    lines = [f"Mpps (min..max of {a.rounds} rounds) and Gbps (L2, no preamble/IFG), median of "
             f"rounds; testpmd = both directions of one lcore; local/none = median of the "
             f"per-round ratios",
             f"{'size':>5}  {'testpmd Mpps (min..max) Gbps':>30}  "
             f"{'none Mpps (min..max) Gbps':>30}  {'local Mpps (min..max) Gbps':>30}  "
             f"local/none (per round)"]
    for size in a.sizes:
        r = ratio[size]
        lines.append(f"{size:>5}  {cell('testpmd', size)}  {cell('none', size)}  "
                     f"{cell('local', size)}  {'-' if r is None else f'{r:.3f}':>10} ("
                     + " ".join(f"{x:.2f}" for x in per_round[size]) + ")")
    lost = [f"{s} {z} B round {r}" for (s, z), reps in results.items()
            for r in range(1, a.rounds + 1) if r not in reps]
    lines.append(f"{a.rounds} rounds, {a.window:g} s window after {a.warmup:g} s warm-up; "
                 f"in a window, other processes used up to "
                 f"{max((n[0] for n in noise.values()), default=0):.0f}% of a core, steal up to "
                 f"{max((n[1] for n in noise.values()), default=0):.0f}%; "
                 f"total run time {elapsed:.0f} s"
                 + (f"; FAILED (no value): {', '.join(lost)}" if lost else ""))
    with open(os.path.join(a.out, "pkt_sizes_summary.txt"), "w") as f:
        f.write("\n".join(lines) + "\n")
    print("\n".join(lines))
    plot(a, med, ratio)


def plot(a, med, ratio):
    try:
        plt = report.pyplot()
        import matplotlib.ticker
    except ImportError:
        print("matplotlib missing (/usr/bin/python3 cannot import it): no plot", file=sys.stderr)
        return
    style = {"testpmd": ("dpdk-testpmd io (both directions)", "#7f7f7f", "s"),
             "none": ('chain, "resiliency": "none"', "#1f77b4", "o"),
             "local": ('chain, "resiliency": "local"', "#d62728", "^")}
    fig, axes = plt.subplots(1, 2, figsize=(12, 4.8))
    for ax, unit in zip(axes, ("Mpps", "Gbps")):
        conv = (lambda v, s: v) if unit == "Mpps" else gbps
        for setup in SETUPS:
            xs = [s for s in a.sizes if (setup, s) in med]
            if not xs:
                continue
            m = [conv(med[(setup, s)][0], s) for s in xs]
            lo = [mv - conv(med[(setup, s)][1], s) for s, mv in zip(xs, m)]
            hi = [conv(med[(setup, s)][2], s) - mv for s, mv in zip(xs, m)]
            label, color, marker = style[setup]
            ax.errorbar(xs, m, yerr=[lo, hi], label=label, color=color, marker=marker,
                        capsize=3)
        line = [ten_gbe_mpps(s) if unit == "Mpps" else 10.0 for s in a.sizes]
        ax.plot(a.sizes, line, ":", color="black", label="10 GbE line rate (for scale)")
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_xticks(a.sizes)
        ax.xaxis.set_major_formatter(matplotlib.ticker.FuncFormatter(lambda v, _: f"{v:g}"))
        ax.xaxis.set_minor_formatter(matplotlib.ticker.NullFormatter())
        ax.yaxis.set_major_formatter(matplotlib.ticker.FuncFormatter(lambda v, _: f"{v:g}"))
        ax.set_xlabel("packet size (bytes)")
        ax.set_ylabel(f"{unit}, log scale" + (" (L2 bytes, no preamble/IFG)" if unit == "Gbps"
                                             else ""))
        ax.grid(which="both", alpha=0.3)
    axes[0].legend(fontsize=8)
    rs = ", ".join(f"{s}: {ratio[s]:.2f}" for s in a.sizes if ratio[s] is not None)
    axes[0].set_title(f"local/none by size: {rs}", fontsize=8)
    axes[1].set_title("Gbps = Mpps x size x 8 / 1000", fontsize=8)
    fig.suptitle(f"REINFORCE-NFV throughput vs packet size, stateful test_nf -S, net_null "
                 f"ports, 2 shared vCPUs (median of {a.rounds}, bars: min..max; "
                 f"{time.strftime('%Y-%m-%d')})", fontsize=10)
    fig.tight_layout()
    fig.savefig(os.path.join(a.out, "pkt_sizes.png"), dpi=110)
    plt.close(fig)


# ---- main -----------------------------------------------------------------------------------

def main():
    a = parse_args()
    if not os.access(os.path.join(a.build, "onvm_mgr", "onvm_mgr"), os.X_OK):
        raise SystemExit(f"no onvm_mgr in {a.build}; build with ninja -C {a.build}")
    # onvm.lab reads ONVM_BUILD when it is imported (its MGR, TEST_NF paths)
    os.environ["ONVM_BUILD"] = a.build
    from onvm import lab  # the integration harness: nodes, telemetry, clean-up

    def on_signal(signum, frame):
        raise KeyboardInterrupt(f"signal {signum}")
    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGHUP, on_signal)

    workdir = os.path.join("/tmp", f"pkt_sizes.{os.getpid()}")
    os.makedirs(workdir, exist_ok=True)
    ctlab = tput.Procs(workdir)  # testpmd processes
    L = lab.Lab("pkt_sizes")  # the managers and their NFs
    results = {(s, z): {} for z in a.sizes for s in SETUPS}
    noise = {}  # (setup, size, round): (others' CPU %, steal %, top others)
    t_start = time.monotonic()
    try:
        busy, others = tput.wait_quiet(ctlab, a.quiet_wait)
        os.makedirs(a.out, exist_ok=True)
        with open(os.path.join(a.out, "pkt_sizes_machine.txt"), "w") as f:
            f.write(report.machine_txt(a.build, tput.TESTPMD, busy, others, (
                f"bench/pkt_sizes.py: sizes {','.join(map(str, a.sizes))}, rounds {a.rounds}, "
                f"window {a.window}s, warm-up {a.warmup}s")))
        for rnd in range(1, a.rounds + 1):
            for size in a.sizes:
                for setup in SETUPS:
                    t0 = time.monotonic()
                    try:
                        if setup == "testpmd":
                            mpps, n = measure_testpmd(ctlab, a, size)
                        else:
                            mpps, n = measure_node(lab, L, a, setup, size, rnd)
                    except (tput.BenchError, lab.TestFailure) as e:
                        report.log(f"round {rnd} {size} B {setup} FAILED: {e}")
                        continue
                    results[(setup, size)][rnd] = mpps
                    noise[(setup, size, rnd)] = n
                    report.log(f"round {rnd} {size:>4} B {setup:<7}: {mpps:7.3f} Mpps "
                           f"{gbps(mpps, size):7.2f} Gbps ({time.monotonic() - t0:.1f}s, "
                           f"others {n[0]:.0f}%{': ' + n[2] if n[2] else ''}, "
                           f"steal {n[1]:.0f}%)")
    finally:
        ctlab.cleanup_all()
        L.cleanup()
        shutil.rmtree(workdir, ignore_errors=True)
    write_outputs(a, results, noise, time.monotonic() - t_start)


if __name__ == "__main__":
    try:
        main()
    except KeyboardInterrupt as e:
        print(f"interrupted ({e or 'SIGINT'}); everything started was stopped and cleaned up",
              file=sys.stderr)
        sys.exit(130)
