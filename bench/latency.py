#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 REINFORCE-NFV authors
"""Per-packet latency through the node vs client_server_mp, at several loads (issue 13).

Every system measured runs with bench/lat_shim.so preloaded (build/bench/lat_shim.so,
see its opening comment): the same code paces and stamps packets where the system
polls its generator port (net_null0, port 0) and histograms their latency where it
transmits on its sink port (net_null1, port 1).  What is measured is the time from
the generator port's rx_burst return to the sink port's tx_burst call, inside the
node: no NIC queues, no wire.  A second histogram adds the time each packet would
have waited in a NIC RX ring (the shim's emulated ring of --ring descriptors) since
its scheduled arrival: the latency a generator behind a NIC would see, including the
effect of every pause of the poller.

Set-ups (two busy pollers: CPU 0 and CPU 1, as in chain_tput.py):

  chainK          onvm_mgr (units on CPU 0), K = 1, 2, 3 simple_forward NFs on CPU 1,
                  resiliency none: chain_tput.py's null_chain node.
  stateful_none   onvm_mgr + one `test_nf -S` (a libnf state region updated for every
  stateful_local  packet, local_resiliency.py's node) with "resiliency" none / local
                  (local: a parked standby on CPU 0).  Both are paced at rates derived
                  from stateful_none's maximum, so they see the same offered load.
  csmp            DPDK's examples/multi_process/client_server_mp (built by
                  onvm.tput.build_csmp): mp_server -l 0,1 polls net_null0 and
                  net_null1 on CPU 0, one mp_client on CPU 1 forwards port 0 -> 1
                  (and 1 -> 0) and transmits itself.  Port 1's own RX is emptied by the
                  shim (LAT_MUTE_PORT: what net_null generates there is freed), so the
                  peer carries one paced direction like the node; freeing costs the
                  server a burst alloc+free per loop, which the node does not pay.
                  Also measured at chain1's 50 % rate (rate_basis chain1_max): the same
                  offered rate as the 1-NF chain.
  testpmd         dpdk-testpmd io forwarding port 0 -> port 1 on one lcore (CPU 1),
                  port 1's RX muted: no rings, no second process, no second CPU -- the
                  floor of this machine (its tail is the host's and the kernel's), not a
                  peer.

The host's placement of our vCPUs.  This host moves our two vCPUs between near and
far physical CPUs every few seconds to a minute (bench/README.md, nf_suite.py): a
cache line goes from CPU 0 to CPU 1 and back in about 60 ns in the near placement and
about 330 ns in the far one, and every data path here that crosses CPUs follows (the
1-NF chain's maximum halves, its median latency triples).  So every window is framed
by two cross-CPU probes (nf_suite's XCoreProbe, 20000 round trips, taken with the
system's processes stopped by SIGSTOP for a few ms, well before the window), and
counts for the placement both probes agree on ("near": < 150 ns); a window whose
probes disagree is kept in the CSV but not summarised.  A set-up's maximum is kept per
placement, and a paced window's rate is its load times the maximum of the placement
the probe before it saw (measured first if that placement has none yet).

Per set-up and round one system is started: an unpaced window measures its maximum
(stamped packets reaching the sink per second), then the shim's rate is set to each
load (percent of that maximum) in turn, and after --settle seconds a window of
--window seconds is measured.  Rounds are interleaved (every set-up once per round).
The summary gives, per placement, the median over the windows of each set-up and load.

usage: bench/latency.py [--build DIR] [--rounds 3] [--window 5] [--max-window 3]
                        [--warmup 2] [--settle 1] [--loads 10,50,90] [--setups LIST]
                        [--ring 1024] [--out DIR] [--quiet-wait 60]
                        [--quiet-wait-each 30] [--no-probe] [--replot]

Writes OUT/latency.csv (one row per window), OUT/latency_summary.txt,
OUT/latency_hist.json (histograms pooled over the windows of a placement, re-binned:
for --replot) and OUT/latency.png (CDFs: one panel per load and placement).
"""
import argparse
import json
import math
import os
import re
import shutil
import signal
import statistics
import subprocess
import sys
import time
import types

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "python"))
from onvm import report, tput  # noqa: E402  (Procs, Manager, build_csmp, null_cfg, wait_quiet)
from onvm.latshim import LatFile, diff, max_us, percentile  # noqa: E402  (the shim's file)
from onvm.noise import XCoreProbe  # noqa: E402  (the host's placement of our two vCPUs)
from onvm.report import log  # noqa: E402

NEAR_NS = 150  # cross-CPU round trip below this: the near placement (50-85 ns here)
PROBE_ROUND_TRIPS = 20000  # 1-8 ms with the system stopped

REPO = os.path.dirname(HERE)
ALL_SETUPS = ["chain1", "split1", "chain2", "chain3", "stateful_none", "stateful_local", "csmp",
              "testpmd"]
# split1: chain1 with the manager's TX unit on an lcore of its own on the NF's CPU 1
# (chain_tput.py's null_chain_split: client_server_mp's placement, whose client transmits)
GEN_PORT, SINK_PORT = 0, 1


# ---- systems under test -------------------------------------------------------------------

class ShimProcs(tput.Procs):
    """tput.Procs, with an environment for the processes it starts (LD_PRELOAD of
    the shim; the manager's NFs inherit it), and a window whose noise accounting (a scan
    of /proc, milliseconds of CPU) happens outside the measured interval: on two CPUs
    shared with the pollers it would otherwise show up as latency."""
    env = None

    def popen(self, argv, **kw):
        if self.env is not None:
            kw.setdefault("env", self.env)
        return super().popen(argv, **kw)

    def window(self, seconds, snapshot, pids=()):
        """Sleep through a window; returns snapshot() at its start and end.  Sets
        last_steal and last_foreign_cpu as CpuNoise.window does, and how long the threads of
        `pids` (the pollers) waited runnable for a CPU, per second (last_runq_ms), and
        how often they were preempted (last_preempts)."""
        st0, t0, s0 = self.steal_ticks(), time.monotonic(), self.foreign_ticks()
        q0 = sched_wait(pids)
        a = snapshot()
        time.sleep(seconds)
        b = snapshot()
        q1 = sched_wait(pids)
        st1, t1, s1 = self.steal_ticks(), time.monotonic(), self.foreign_ticks()
        self.last_runq_ms = (q1[0] - q0[0]) / 1e6 / (t1 - t0)
        self.last_preempts = (q1[1] - q0[1]) / (t1 - t0)
        self.note_noise(st0, t0, s0, st1, t1, s1)
        return a, b


def sched_wait(pids):
    """(ns spent runnable but not running, involuntary context switches), summed over
    every thread of `pids` (/proc/PID/task/TID/schedstat and status)."""
    wait = invol = 0
    for pid in pids:
        try:
            tids = os.listdir(f"/proc/{pid}/task")
        except OSError:
            continue
        for tid in tids:
            try:
                with open(f"/proc/{pid}/task/{tid}/schedstat") as f:
                    wait += int(f.read().split()[1])
                with open(f"/proc/{pid}/task/{tid}/status") as f:
                    for line in f:
                        if line.startswith("nonvoluntary_ctxt_switches:"):
                            invol += int(line.split()[1])
            except (OSError, ValueError, IndexError):
                pass
    return wait, invol


def shim_env(a, hist, tx_in, mute=None):
    env = dict(os.environ)
    env["LD_PRELOAD"] = a.shim + (" " + env["LD_PRELOAD"] if env.get("LD_PRELOAD") else "")
    env.update(LAT_HIST=hist, LAT_GEN_PORT=str(GEN_PORT), LAT_SINK_PORT=str(SINK_PORT),
               LAT_RATE_PPS="0", LAT_TX_IN=tx_in, LAT_RING=str(a.ring))
    if mute is not None:
        env["LAT_MUTE_PORT"] = str(mute)
    return env


def stateful_cfg(a, prefix, mode):
    """local_resiliency.py's node (tput.stateful_cfg), with our prefix and quiet stats."""
    cfg = tput.stateful_cfg(os.path.join(a.build, "tests", "test_nf"), mode)
    cfg["node"].update(name="lat", file_prefix=prefix)
    cfg["stats"] = {"interval_ms": 0}
    return cfg


class NodeSystem:
    """onvm_mgr with the shim: the manager polls gen (port 0) and transmits on sink
    (port 1), both on lcore 0."""

    def __init__(self, lab, a, setup, hist):
        self.lab, self.prefix = lab, lab.prefix()
        self.local = setup == "stateful_local"
        cfg = (tput.null_cfg(self.prefix, int(setup[5:])) if setup.startswith("chain")
               else tput.null_cfg(self.prefix, 1, split=True) if setup == "split1"
               else stateful_cfg(a, self.prefix, setup.split("_")[1]))
        lab.env = shim_env(a, hist, "start")
        try:
            self.m = tput.Manager(lab, a.build, self.prefix, cfg)
        finally:
            lab.env = None

    def wait_ready(self):
        self.m.wait_ready(60)
        nfs = self.m.tel.query("/onvm/nfs")
        deadline = time.monotonic() + 60
        # local: the standby's start-up (an EAL init on CPU 0) must be over before
        # anything is measured
        while self.local and not all(n.get("standby_parked") for n in nfs.values()):
            self.alive()
            if time.monotonic() > deadline:
                raise tput.BenchError(f"{self.prefix}: standby not parked after 60 s: {nfs}")
            time.sleep(0.1)
            nfs = self.m.tel.query("/onvm/nfs")
        self.pids = [self.m.p.pid] + [n["pid"] for n in nfs.values() if n.get("pid")]

    def alive(self):
        if self.m.p.poll() is not None:
            raise tput.BenchError(f"onvm_mgr {self.prefix} exited (rc {self.m.p.returncode}):\n"
                                + open(self.m.out_path).read()[-2000:])

    def stop(self):
        self.m.close()
        self.lab.cleanup_one(self.m.p, self.prefix, manager=True)


class TestpmdSystem:
    """dpdk-testpmd io forwarding net_null0 -> net_null1 on one lcore (CPU 1; its main
    lcore sleeps on CPU 0), port 1's own RX muted: one core, no rings, no second
    process -- the floor of this machine, not a peer."""

    def __init__(self, lab, a, hist):
        self.lab, self.prefix = lab, lab.prefix()
        self.log_path = os.path.join(lab.workdir, f"{self.prefix}.log")
        self.out = open(self.log_path, "w")
        # non-interactive: forwards until a line arrives on stdin
        self.p = lab.popen([tput.TESTPMD, "-l", "0,1", "--no-pci", "--file-prefix", self.prefix,
                            "--vdev", "net_null0,size=64", "--vdev", "net_null1,size=64",
                            "--", "--forward-mode=io"],
                           stdin=subprocess.PIPE, stdout=self.out, stderr=subprocess.STDOUT,
                           env=shim_env(a, hist, "start", mute=SINK_PORT))
        self.pids = [self.p.pid]

    def wait_ready(self):
        pass  # the caller waits for stamped packets at the sink

    def alive(self):
        if self.p.poll() is not None:
            raise tput.BenchError(f"testpmd {self.prefix} exited (rc {self.p.returncode}):\n"
                                + open(self.log_path).read()[-2000:])

    def stop(self):
        try:
            self.p.stdin.write(b"\n")
            self.p.stdin.close()
            self.p.wait(timeout=20)
        except (OSError, subprocess.TimeoutExpired, ValueError):
            pass
        self.lab.cleanup_one(self.p, self.prefix)
        self.out.close()


class CsmpSystem:
    """client_server_mp with the shim: mp_server polls port 0 (generator) and port 1
    (muted), mp_client (secondary, CPU 1) transmits on port 1 (sink)."""

    def __init__(self, lab, a, hist):
        self.lab, self.prefix = lab, lab.prefix()
        self.log_path = os.path.join(lab.workdir, f"{self.prefix}.log")
        self.out = open(self.log_path, "w")
        self.env = shim_env(a, hist, "secondary", mute=SINK_PORT)
        self.cli = None
        self.a = a
        self.srv = lab.popen([a.csmp["mp_server"], "-l", "0,1", f"--file-prefix={self.prefix}",
                              "--no-pci", "--vdev", "net_null0,size=64",
                              "--vdev", "net_null1,size=64", "--", "-p", "0x3", "-n", "1"],
                             stdout=self.out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                             env=self.env)

    def wait_ready(self):
        deadline = time.monotonic() + 30
        while "Finished Process Init" not in open(self.log_path).read():
            self.alive()
            if time.monotonic() > deadline:
                raise tput.BenchError(f"mp_server {self.prefix} not ready after 30 s")
            time.sleep(0.05)
        # on CPU 1 like chain_tput's taskset, without preloading the shim into taskset
        self.cli = self.lab.popen([self.a.csmp["mp_client"], "-l", "1", "--proc-type=secondary",
                                   f"--file-prefix={self.prefix}", "--no-pci", "--", "-n", "0"],
                                  stdout=self.out, stderr=subprocess.STDOUT,
                                  stdin=subprocess.DEVNULL, env=self.env,
                                  preexec_fn=lambda: os.sched_setaffinity(0, {1}))
        self.pids = [self.srv.pid, self.cli.pid]

    def alive(self):
        for name, p in (("mp_server", self.srv), ("mp_client", self.cli)):
            if p is not None and p.poll() is not None:
                raise tput.BenchError(f"{name} {self.prefix} exited (rc {p.returncode}):\n"
                                    + open(self.log_path).read()[-2000:])

    def stop(self):
        if self.cli is not None:
            self.lab.stop(self.cli)
        self.lab.cleanup_one(self.srv, self.prefix, sig=signal.SIGTERM)  # as chain_tput's
        self.out.close()


# ---- one set-up, one round ----------------------------------------------------------------

def placement(ns):
    """near / far, or "any" without a probe (--no-probe, or no compiler)."""
    return "any" if ns is None else "near" if ns < NEAR_NS else "far"


def probe_paused(exe, pids):
    """Cross-CPU round trip in ns (None: no probe), with the processes `pids` stopped
    (SIGSTOP, by pid) so that the probe has both CPUs to itself; they are continued
    whatever happens.  A few milliseconds: 20000 round trips and a fork/exec."""
    if exe is None:
        return None
    stopped = []
    try:
        for pid in pids:
            try:
                os.kill(pid, signal.SIGSTOP)
                stopped.append(pid)
            except ProcessLookupError:
                pass
        r = subprocess.run([exe, str(PROBE_ROUND_TRIPS)], capture_output=True, text=True,
                           timeout=10)
        return float(r.stdout) if r.returncode == 0 else None
    except (OSError, ValueError, subprocess.TimeoutExpired):
        return None
    finally:
        for pid in stopped:
            try:
                os.kill(pid, signal.SIGCONT)
            except ProcessLookupError:
                pass


def window_row(lab, lf, seconds, setup, rnd, load, basis, offered_pps, max_pps, pids=()):
    s0, s1 = lab.window(seconds, lf.snapshot, pids)
    d = diff(lf.parse(s0), lf.parse(s1))
    e = lf.edges
    node, off = d["node"], d["offered"]
    count = sum(node)
    rx, tx = d["rx"], d["tx"]
    mode = setup.split("_")[1] if setup.startswith("stateful") else "none" if \
        setup.startswith("chain") or setup == "split1" else "-"
    k = int(setup[5:]) if setup.startswith("chain") else 1 if setup.startswith("stateful") \
        or setup == "split1" else 0
    row = {"setup": setup, "k": k, "mode": mode, "load_pct": load, "rate_basis": basis,
           "round": rnd, "rate_mpps": offered_pps / 1e6 if offered_pps else None,
           "max_mpps": max_pps / 1e6 if max_pps else None,
           "achieved_mpps": tx["measured"] / d["dt"] / 1e6, "window_s": d["dt"],
           "count": count, "mean_us": tx["sum_ns"] / count / 1000 if count else None,
           "p50_us": percentile(node, e, 50), "p99_us": percentile(node, e, 99),
           "p999_us": percentile(node, e, 99.9), "max_us": max_us(node, e),
           "offered_p50_us": percentile(off, e, 50), "offered_p99_us": percentile(off, e, 99),
           "offered_p999_us": percentile(off, e, 99.9),
           "kept": rx["kept"], "lost_in_node": rx["kept"] - tx["measured"],
           "ring_overflow": rx["ring_overflow"], "unstamped": tx["unstamped"],
           "negative": tx["negative"], "polls_per_s": rx["polls"] / d["dt"],
           "pollers_runq_ms_per_s": lab.last_runq_ms, "pollers_preempts_per_s": lab.last_preempts,
           "other_cpu_pct": lab.last_foreign_cpu, "steal_pct": lab.last_steal}
    sched = rx["kept"] + rx["ring_overflow"]
    row["loss_pct"] = (100.0 * (rx["ring_overflow"] + max(0, row["lost_in_node"])) / sched
                       if sched else None)
    row["overloaded"] = int(bool(offered_pps) and row["achieved_mpps"] * 1e6 < 0.97 * offered_pps)
    return row, node, off


def run_setup(lab, a, setup, rnd, maxes, probe_exe):
    """One system, started once: an unpaced window, then every load, each window framed
    by cross-CPU probes.  maxes: {(setup, placement): max pps}, across rounds; a paced
    window's rate is its load times the maximum of the placement seen just before it
    (of stateful_none for stateful_local, of chain1 for csmp's extra window).
    Returns [(row, node histogram, offered histogram)] and the bucket edges."""
    hist = os.path.join(lab.workdir, f"{setup}-{rnd}.hist")
    if os.path.exists(hist):
        os.unlink(hist)
    lf = LatFile(hist)
    system = None
    out = []
    try:
        system = (CsmpSystem(lab, a, hist) if setup == "csmp" else
                  TestpmdSystem(lab, a, hist) if setup == "testpmd" else
                  NodeSystem(lab, a, setup, hist))
        system.wait_ready()
        deadline = time.monotonic() + 30
        while True:  # flowing: stamped packets reach the sink
            system.alive()
            if lf.try_open() and lf.measured() > 0:
                break
            if time.monotonic() > deadline:
                raise tput.BenchError(f"{setup}: no stamped packet reached the sink in 30 s "
                                    f"(shim file {'present' if lf.mm else 'missing'})")
            time.sleep(0.05)
        time.sleep(a.warmup)

        def window(load, basis, base_setup=None):
            """One window: load None = unpaced.  Returns its row (None: not measured)."""
            x0 = probe_paused(probe_exe, system.pids)
            p0 = placement(x0)
            rate = base = None
            basis_place = p0
            if load is not None:
                base = maxes.get((base_setup, p0))
                if base is None and base_setup == "chain1":
                    return None  # csmp at chain1's rate: chain1 not measured in p0 yet
                if base is None:  # no maximum in this placement: this run's own
                    base, basis_place = run_max
                    basis = "own_max"
                rate = load / 100.0 * base
            lf.set_rate(rate or 0)
            time.sleep(a.settle)
            system.alive()
            row, node, off = window_row(lab, lf, a.max_window if load is None else a.window,
                                        setup, rnd, load, basis, rate, base, system.pids)
            x1 = probe_paused(probe_exe, system.pids)
            row["xcore_before_ns"], row["xcore_after_ns"] = x0, x1
            row["placement"] = p0 if p0 == placement(x1) else "moved"
            row["basis_placement"] = basis_place if load is not None else None
            row["valid"] = int(row["placement"] != "moved" and
                               (load is None or basis_place == row["placement"]))
            out.append((row, node, off))
            log(f"round {rnd} {setup} " + ("unpaced" if load is None else
                                          f"{load}% of {basis} ({rate / 1e6:.2f} Mpps)")
                + f": {row['achieved_mpps']:.2f} Mpps at the sink, p50 {fmt(row['p50_us'])} "
                f"p99 {fmt(row['p99_us'])} p99.9 {fmt(row['p999_us'])} us (offered: p99 "
                f"{fmt(row['offered_p99_us'])}), loss {fmt(row['loss_pct'], 3)}%, "
                f"cross-CPU {fmt(x0, 0)}/{fmt(x1, 0)} ns ({row['placement']}), pollers "
                f"waited {lab.last_runq_ms:.1f} ms/s for a CPU, steal {lab.last_steal:.0f}%, "
                f"others {lab.last_foreign_cpu:.0f}%"
                + (" OVERLOADED" if row["overloaded"] else "")
                + ("" if row["valid"] else " (not summarised: the host moved our vCPUs)"))
            return row

        def unpaced():
            row = window(None, "unpaced")
            row["max_mpps"] = row["achieved_mpps"]
            if row["valid"]:
                maxes[(setup, row["placement"])] = row["achieved_mpps"] * 1e6
            return row

        first = unpaced()
        run_max = (first["achieved_mpps"] * 1e6, first["placement"])
        base_setup = "stateful_none" if setup == "stateful_local" else setup
        plan = [(load, f"{base_setup}_max" if base_setup != setup else "own_max", base_setup)
                for load in a.loads]
        if setup == "csmp" and "chain1" in a.setups:
            plan.append((50, "chain1_max", "chain1"))
        for load, basis, bsetup in plan:
            if bsetup == setup:
                # a placement without a maximum yet: measure it first
                p = placement(probe_paused(probe_exe, system.pids))
                if (setup, p) not in maxes:
                    unpaced()
            window(load, basis, bsetup)
        system.alive()
        return out, lf.edges
    finally:
        lf.close()
        if system is not None:
            system.stop()
        if os.path.exists(hist):
            os.unlink(hist)


def fmt(x, nd=2):
    return "-" if x is None else f"{x:.{nd}f}"


# ---- output -------------------------------------------------------------------------------

CSV_COLS = ["setup", "k", "mode", "load_pct", "rate_basis", "rate_mpps", "round", "placement",
            "valid", "count", "p50_us", "p99_us", "p999_us", "max_us", "mean_us",
            "offered_p50_us", "offered_p99_us", "offered_p999_us", "achieved_mpps", "max_mpps",
            "window_s", "overloaded", "loss_pct", "kept", "lost_in_node", "ring_overflow",
            "unstamped", "negative", "polls_per_s", "pollers_runq_ms_per_s",
            "pollers_preempts_per_s", "other_cpu_pct", "steal_pct", "xcore_before_ns",
            "xcore_after_ns", "basis_placement"]
PLACEMENTS = ("near", "far", "any")


def csv_val(v):
    if v is None:
        return ""
    if isinstance(v, float):
        return f"{v:.4f}" if abs(v) < 1000 else f"{v:.0f}"
    return str(v)


def load_key(r):
    if r["rate_basis"] == "unpaced":
        return "max"
    return f"{r['load_pct']}" + ("" if r["rate_basis"] in ("own_max", "stateful_none_max")
                                 else f"@{r['rate_basis']}")


def rebin(counts, edges, per_decade=50, lo_exp=1, hi_exp=8):
    """Counts re-binned on a log grid (10^lo_exp .. 10^hi_exp ns) by each bucket's
    midpoint: small enough to keep, fine enough for a CDF."""
    n = (hi_exp - lo_exp) * per_decade
    out = [0] * (n + 1)
    for i, c in enumerate(counts):
        if not c:
            continue
        mid = (edges[i] + edges[i + 1]) / 2 if i + 1 < len(edges) else edges[i] * 1.01
        j = int((math.log10(max(mid, 10 ** lo_exp)) - lo_exp) * per_decade)
        out[min(max(j, 0), n)] += c
    return out


def summarize(a, rows, elapsed, header):
    by = {}
    for r in rows:
        if r["valid"]:
            by.setdefault((r["setup"], load_key(r), r["placement"]), []).append(r)

    def med(key, col):
        vals = [r[col] for r in by.get(key, []) if r[col] is not None]
        return statistics.median(vals) if vals else None

    def rng(key, col):
        vals = [r[col] for r in by.get(key, []) if r[col] is not None]
        return f"{min(vals):.1f}..{max(vals):.1f}" if vals else "-"

    loads = ["max"] + [str(x) for x in a.loads]
    out = list(header)
    out += [
        "Latency (us) from the generator port's rx_burst to the sink port's tx_burst, 64 B "
        "packets: median over the windows (n) of a placement; p99 range in brackets.",
        "placement: the host's placement of our two vCPUs during the window, from a cross-CPU "
        f"cache-line round trip before and after it (near: < {NEAR_NS} ns).",
        "load: % of the set-up's unpaced maximum in that placement (max = unpaced); "
        "stateful_local is paced at stateful_none's rates; 50@chain1_max: chain1's 50 % rate.",
        "off.: 'offered' latency, with the wait in an emulated NIC RX ring since the packet's "
        "scheduled arrival.  loss %: arrivals lost in that ring or dropped inside the system",
        "(not in the percentiles: a system that drops instead of queueing looks better there).  "
        "runq: ms per s the pollers waited for a CPU (NFs sharing CPU 1 included);",
        "ovl: windows that did not carry the offered rate (sink < 97 % of it).", ""]
    for pl in PLACEMENTS:
        keys = [(s, ld, pl) for s in a.setups
                for ld in loads + sorted({k[1] for k in by if k[0] == s and "@" in k[1]})
                if (s, ld, pl) in by]
        if not keys:
            continue
        out.append(f"-- {pl} placement --")
        out.append(f"{'setup':<15} {'load':<14} {'n':>2} {'Mpps off.':>9} {'at sink':>8} "
                   f"{'p50':>7} {'p99':>8} {'[p99 range]':>16} {'p99.9':>8} {'off.p50':>8} "
                   f"{'off.p99':>8} {'off.p99.9':>9} {'loss %':>7} {'runq':>6} {'ovl':>3}")
        for key in keys:
            out.append(f"{key[0]:<15} {key[1]:<14} {len(by[key]):>2} "
                       f"{fmt(med(key, 'rate_mpps')):>9} {fmt(med(key, 'achieved_mpps')):>8} "
                       f"{fmt(med(key, 'p50_us')):>7} {fmt(med(key, 'p99_us')):>8} "
                       f"{'[' + rng(key, 'p99_us') + ']':>16} {fmt(med(key, 'p999_us')):>8} "
                       f"{fmt(med(key, 'offered_p50_us')):>8} "
                       f"{fmt(med(key, 'offered_p99_us')):>8} "
                       f"{fmt(med(key, 'offered_p999_us')):>9} {fmt(med(key, 'loss_pct'), 3):>7} "
                       f"{fmt(med(key, 'pollers_runq_ms_per_s'), 1):>6} "
                       f"{sum(r['overloaded'] for r in by[key]):>3}")
        out.append("")

    for pl in PLACEMENTS:
        def ratio(k1, k2, col):
            a1, a2 = med(k1 + (pl,), col), med(k2 + (pl,), col)
            return (a1 / a2, a1, a2) if a1 is not None and a2 else None

        r = ratio(("chain1", "50"), ("csmp", "50"), "p99_us")
        if r:
            out.append(f"{pl}: chain1 p99 / csmp p99 at 50 % of each one's maximum: "
                       f"{r[1]:.2f} / {r[2]:.2f} us = {r[0]:.2f}; acceptance <= 2: "
                       f"{'met' if r[0] <= 2 else 'NOT met'}")
        r = ratio(("split1", "50"), ("csmp", "50"), "p99_us")
        if r:
            out.append(f"{pl}: split1 (TX unit on the NF's CPU) p99 / csmp p99 at 50 % of each "
                       f"one's maximum: {r[1]:.2f} / {r[2]:.2f} us = {r[0]:.2f}; acceptance <= 2: "
                       f"{'met' if r[0] <= 2 else 'NOT met'}")
        r = ratio(("chain1", "50"), ("csmp", "50@chain1_max"), "p99_us")
        if r:
            out.append(f"{pl}: chain1 p99 / csmp p99 at the same offered rate (chain1's 50 %): "
                       f"{r[1]:.2f} / {r[2]:.2f} us = {r[0]:.2f}")
        for ld in [str(x) for x in a.loads]:
            n, loc = med(("stateful_none", ld, pl), "p50_us"), med(("stateful_local", ld, pl),
                                                                   "p50_us")
            n99, l99 = med(("stateful_none", ld, pl), "p99_us"), med(("stateful_local", ld, pl),
                                                                     "p99_us")
            if n is not None and loc is not None:
                out.append(f"{pl}: local - none at {ld} % (same offered rate): p50 {loc:.2f} - "
                           f"{n:.2f} = {loc - n:+.2f} us (acceptance <= +1 us: "
                           f"{'met' if loc - n <= 1 else 'NOT met'}), p99 {l99 - n99:+.2f} us")
    moved = [r for r in rows if not r["valid"]]
    xs = [x for r in rows for x in (r["xcore_before_ns"], r["xcore_after_ns"]) if x]
    if xs:
        near = sorted(x for x in xs if x < NEAR_NS)
        far = sorted(x for x in xs if x >= NEAR_NS)
        out.append(f"cross-CPU probes: near {fmt(near[0] if near else None, 0)}.."
                   f"{fmt(near[-1] if near else None, 0)} ns ({len(near)}), far "
                   f"{fmt(far[0] if far else None, 0)}..{fmt(far[-1] if far else None, 0)} ns "
                   f"({len(far)}); {len(moved)} of {len(rows)} windows not summarised (the host "
                   f"moved our vCPUs during the window, or its rate came from the other "
                   f"placement's maximum)")
    worst_other = max((r["other_cpu_pct"] or 0 for r in rows), default=0)
    worst_steal = max((r["steal_pct"] or 0 for r in rows), default=0)
    neg = sum(r["negative"] for r in rows)
    uns = sum(r["unstamped"] for r in rows)
    out.append(f"noise: others' CPU up to {worst_other:.0f}% of a core, steal up to "
               f"{worst_steal:.0f}% in a window; stamps from the future {neg}, unstamped "
               f"packets at the sinks {uns}; total run time {elapsed:.0f} s")
    return out


def write_outputs(a, rows, pooled, elapsed, header):
    os.makedirs(a.out, exist_ok=True)
    with open(os.path.join(a.out, "latency.csv"), "w") as f:
        f.write(",".join(CSV_COLS) + "\n")
        for r in rows:
            f.write(",".join(csv_val(r[c]) for c in CSV_COLS) + "\n")
    summary = summarize(a, rows, elapsed, header)
    with open(os.path.join(a.out, "latency_summary.txt"), "w") as f:
        f.write("\n".join(summary) + "\n")
    print("\n".join(summary))
    hj = {"grid": {"per_decade": 50, "lo_exp": 1, "hi_exp": 8, "unit": "ns"},
          "loads": [str(x) for x in a.loads], "setups": a.setups,
          "series": {f"{s}|{ld}|{pl}": v for (s, ld, pl), v in pooled.items()}}
    with open(os.path.join(a.out, "latency_hist.json"), "w") as f:
        json.dump(hj, f, separators=(",", ":"))
    plot(a.out, hj)


def plot(out, hj):
    plt = report.pyplot()

    g = hj["grid"]
    n = (g["hi_exp"] - g["lo_exp"]) * g["per_decade"]
    upper_us = [10 ** (g["lo_exp"] + (j + 1) / g["per_decade"]) / 1000 for j in range(n + 1)]
    loads = hj["loads"]
    places = [pl for pl in PLACEMENTS if any(k.endswith("|" + pl) for k in hj["series"])]
    fig, axes = plt.subplots(2 * len(places), len(loads),
                             figsize=(5.2 * len(loads), 3.6 * 2 * len(places)), squeeze=False)
    styles = {"chain1": ("tab:blue", "-"), "split1": ("tab:red", "-"), "chain2": ("tab:cyan", "-"),
              "chain3": ("tab:purple", "-"), "stateful_none": ("tab:green", "-"),
              "stateful_local": ("tab:olive", "--"), "csmp": ("tab:orange", "-"),
              "testpmd": ("grey", ":")}
    for prow, pl in enumerate(places):
        for col, ld in enumerate(loads):
            top, tail = axes[2 * prow][col], axes[2 * prow + 1][col]
            for s in hj["setups"]:
                v = hj["series"].get(f"{s}|{ld}|{pl}")
                if not v or not sum(v["node"]):
                    continue
                tot, cum, ys = float(sum(v["node"])), 0, []
                for x in v["node"]:
                    cum += x
                    ys.append(cum / tot)
                color, ls = styles.get(s, ("black", "-"))
                label = {"csmp": "client_server_mp (peer)",
                         "testpmd": "testpmd, 1 core (floor)"}.get(s, s) + f" ({v['windows']})"
                top.plot(upper_us, ys, color=color, ls=ls, label=label)
                tail.plot(upper_us, [max(1 - y, 1e-7) for y in ys], color=color, ls=ls)
            top.set_title(f"{ld} % of each set-up's maximum, {pl} placement", fontsize=10)
            tail.set_yscale("log")
            tail.set_ylim(1e-5, 1.1)
            for ax in (top, tail):
                ax.set_xscale("log")
                ax.set_xlim(0.05, 20000)
                ax.grid(which="both", alpha=0.3)
            tail.set_xlabel("latency, rx_burst -> tx_burst (µs, log)")
            top.legend(fontsize=7, loc="lower right")
        axes[2 * prow][0].set_ylabel("CDF (windows pooled)")
        axes[2 * prow + 1][0].set_ylabel("1 - CDF (tail)")
    fig.suptitle("REINFORCE-NFV per-packet latency vs client_server_mp, 64 B, net_null, "
                 f"2 shared vCPUs; (n) = windows ({time.strftime('%Y-%m-%d')})", fontsize=10)
    fig.tight_layout()
    fig.savefig(os.path.join(out, "latency.png"), dpi=100)
    plt.close(fig)


def replot(a):
    """The summary and the PNG again, from OUT/latency.csv and OUT/latency_hist.json
    (the summary's first line, the run's description, is kept)."""
    a.loads = [int(x) for x in a.loads.split(",") if x]
    rows = []
    with open(os.path.join(a.out, "latency.csv")) as f:
        cols = f.readline().strip().split(",")
        for line in f:
            r = {}
            for c, v in zip(cols, line.rstrip("\n").split(",")):
                if v == "" or c in ("setup", "mode", "rate_basis", "placement",
                                    "basis_placement"):
                    r[c] = v if v != "" else None
                else:
                    r[c] = float(v) if "." in v else int(v)
            rows.append(r)
    present = {r["setup"] for r in rows}
    a.setups = [s for s in ALL_SETUPS if s in present]
    path = os.path.join(a.out, "latency_summary.txt")
    with open(path) as f:
        old = f.read()
    m = re.search(r"total run time (\d+) s", old)
    summary = summarize(a, rows, int(m.group(1)) if m else 0, old.splitlines()[:1])
    with open(path, "w") as f:
        f.write("\n".join(summary) + "\n")
    print("\n".join(summary))
    with open(os.path.join(a.out, "latency_hist.json")) as f:
        plot(a.out, json.load(f))


# ---- main ---------------------------------------------------------------------------------

def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--build", default=os.path.join(REPO, "build"))
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--window", type=float, default=5.0, help="seconds per paced window")
    ap.add_argument("--max-window", type=float, default=3.0,
                    help="seconds of an unpaced window (the maximum)")
    ap.add_argument("--warmup", type=float, default=2.0, help="seconds before the first window")
    ap.add_argument("--settle", type=float, default=1.0,
                    help="seconds after each rate change before its window")
    ap.add_argument("--loads", default="10,50,90", help="percent of the measured maximum")
    ap.add_argument("--setups", default=",".join(ALL_SETUPS))
    ap.add_argument("--ring", type=int, default=1024, help="emulated NIC RX ring (packets)")
    ap.add_argument("--out", default=os.path.join(HERE, "results"))
    ap.add_argument("--quiet-wait", type=float, default=60,
                    help="seconds to wait for an idle machine before starting")
    ap.add_argument("--quiet-wait-each", type=float, default=30,
                    help="seconds to wait for an idle machine before each set-up (0: no check)")
    ap.add_argument("--no-probe", action="store_true",
                    help="no cross-CPU probes (every window counts, placement 'any')")
    ap.add_argument("--replot", action="store_true",
                    help="only rewrite OUT/latency_summary.txt and OUT/latency.png from "
                         "OUT/latency.csv and OUT/latency_hist.json")
    a = ap.parse_args()
    if a.replot:
        replot(a)
        return
    a.build = os.path.abspath(a.build)
    a.loads = [int(x) for x in a.loads.split(",") if x]
    a.setups = [s for s in a.setups.split(",") if s]
    bad = [s for s in a.setups if s not in ALL_SETUPS]
    if bad:
        raise SystemExit(f"unknown set-ups {bad}; known: {ALL_SETUPS}")
    a.shim = os.path.join(a.build, "bench", "lat_shim.so")
    for f in (a.shim, os.path.join(a.build, "onvm_mgr", "onvm_mgr")):
        if not os.access(f, os.R_OK):
            raise SystemExit(f"no {f}; build with ninja -C {a.build}")
    if "csmp" in a.setups:
        tput.build_csmp(a)

    workdir, lab = tput.start("latency", ShimProcs)

    rows, pooled, edges, maxes = [], {}, None, {}
    probe_exe = None if a.no_probe else XCoreProbe(types.SimpleNamespace(
        path=lambda n: os.path.join(workdir, n))).exe
    t_start = time.monotonic()
    ok = False
    try:
        busy, others = tput.wait_quiet(lab, a.quiet_wait)
        header = [f"bench/latency.py {time.strftime('%Y-%m-%d %H:%M:%S %z')}, repo "
                  f"{report.repo_state()}"
                  f", {a.rounds} rounds, {a.window:g} s windows ({a.max_window:g} s unpaced), "
                  f"ring {a.ring}; CPU busy before the run {100 * busy:.0f}%, other DPDK "
                  f"runtime dirs: {' '.join(others) or 'none'}"]
        for rnd in range(1, a.rounds + 1):
            for setup in a.setups:
                if a.quiet_wait_each > 0:
                    tput.wait_quiet(lab, a.quiet_wait_each, sample=0.5, say=False)
                t0 = time.monotonic()
                try:
                    got, edges = run_setup(lab, a, setup, rnd, maxes, probe_exe)
                except tput.BenchError as e:
                    log(f"round {rnd} {setup} FAILED: {e}")
                    continue
                for row, node, off in got:
                    rows.append(row)
                    if not row["valid"]:
                        continue
                    key = (setup, load_key(row), row["placement"])
                    p = pooled.setdefault(key, {"node": [0] * len(node),
                                                "offered": [0] * len(off), "windows": 0})
                    p["node"] = [x + y for x, y in zip(p["node"], node)]
                    p["offered"] = [x + y for x, y in zip(p["offered"], off)]
                    p["windows"] += 1
                log(f"round {rnd} {setup} done ({time.monotonic() - t0:.0f} s)")
        ok = True
    finally:
        lab.cleanup_all()
        shutil.rmtree(workdir, ignore_errors=True) if ok else log(f"logs kept in {workdir}")
    if not rows:
        raise SystemExit("no set-up produced a measurement")
    pooled = {k: {"node": rebin(v["node"], edges), "offered": rebin(v["offered"], edges),
                  "windows": v["windows"]} for k, v in pooled.items()}
    write_outputs(a, rows, pooled, time.monotonic() - t_start, header)


if __name__ == "__main__":
    tput.run_main(main)
