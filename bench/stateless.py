#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 REINFORCE-NFV authors
"""Stateless resiliency (docs/design/stateless.md) against a real redis-server,
next to `none` and `local` on the same node, in one run: the REINFORCE authors'
study of the stateless design ("Managing State for Failure Resiliency in NFV",
Figs 3a-3c) on this platform, plus failover.

The node: local_resiliency.py's (tput.stateful_cfg): the manager (all units on
CPU 0) polls net_null0 "gen" (64-byte packets) and transmits on net_null1
"sink"; one `test_nf -S` (a forwarder counting packets and bytes: one
16-byte record in a 1 KB chunk of a libnf state region) on CPU 1.  Every
system runs with bench/lat_shim.so preloaded (bench/latency.py): unpaced, it
counts what reaches the sink (throughput); paced, it histograms each
packet's time from the generator's rx_burst to the sink's tx_burst.  The
store is Debian's redis-server on a Unix socket (no persistence), pinned to
CPU 0 with the manager: this host has two CPUs, so the store competes with
the node's poller -- the one place the figures below are this host's and not
the design's.

Parts (all by default; --parts a,b,...):
  ceiling  redis-benchmark against the same server, pipelined 64 deep: SET of
           a 1 KB value, and EVALSHA of the WRITE script (without its version
           check, so every call writes) with one 1 KB chunk: the store's own
           updates/s, the ceiling each mode's updates/s is a fraction of.
  batch    Fig 3a: throughput vs batch size (`flush_packets`: packets per
           epoch) 1 ... 2048 for sync, async, sync+cache, async+cache, and
           the node with "resiliency" none and local (no batch: one value).
  latency  Fig 3b: per-packet latency p5/p25/p50/p75/p99 at batch 256, every
           system offered the same rate (--lat-load of the slowest mode's
           maximum at that batch).
  bytes    Fig 3c: throughput vs bytes of state updated per epoch of 256
           packets, 8 B ... 64 KB (`test_nf -W`: 64-byte chunks), async+cache
           vs none and local.
  failover an NF SIGKILLed (--kills times per mode) while the node is offered
           --fo-load of the mode's maximum: the chain's recovery (NFs gone,
           state loaded, log replayed, from /onvm/store) and packets lost
           (offered - delivered).

`remote` (REINFORCE) runs on the four-node lab, whose links are veths:
bench/stateless_lab.py draws Figs 3a-3c again there, the four modes next to
`none` and `remote` in one run, and the loss of the whole primary node.

usage: bench/stateless.py [--build DIR] [--parts ...] [--window S] [--warmup S]
                          [--batches 1,4,...] [--bytes 8,...] [--kills N]
                          [--out DIR] [--no-plot]
Writes OUT/stateless.csv, OUT/stateless_summary.txt and OUT/stateless.png.
"""
import argparse
import csv
import json
import os
import shutil
import signal
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(REPO, "python"))

from onvm import store, tput  # noqa: E402
from onvm.latshim import LatFile, diff, percentile  # noqa: E402
from onvm.report import log  # noqa: E402

MODES = [("sync", False), ("async", False), ("sync", True), ("async", True)]
REDIS = shutil.which("redis-server") or "/usr/bin/redis-server"
REDIS_BENCH = shutil.which("redis-benchmark") or "/usr/bin/redis-benchmark"


class EnvProcs(tput.Procs):
    """tput.Procs whose processes get `env` when set (the manager: the
    latency shim's LD_PRELOAD, which its NFs inherit)."""
    env = None

    def popen(self, argv, **kw):
        if self.env is not None:
            kw.setdefault("env", self.env)
        return super().popen(argv, **kw)


def mode_name(mode, cache):
    return mode + ("+cache" if cache else "")


class Redis:
    """redis-server on a Unix socket in the work dir (--redis-cpu: pinned)."""

    pin = []  # taskset prefix (--redis-cpu)

    def __init__(self, lab, name):
        self.dir = os.path.join(lab.workdir, name)
        os.makedirs(self.dir, exist_ok=True)
        self.sock = os.path.join(self.dir, "redis.sock")
        self.p = lab.popen([*self.pin, REDIS, "--port", "0", "--unixsocket", self.sock,
                            "--unixsocketperm", "700", "--dir", self.dir, "--save", "",
                            "--appendonly", "no", "--daemonize", "no", "--loglevel", "warning"],
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 10
        while self.cli("PING") != "PONG":
            if time.monotonic() > deadline or self.p.poll() is not None:
                raise tput.BenchError("redis-server did not start")
            time.sleep(0.05)

    def cli(self, *args):
        r = subprocess.run(["redis-cli", "-s", self.sock, *args], capture_output=True, text=True)
        return r.stdout.strip()

    def close(self):
        tput.Procs.stop(self.p, sig=signal.SIGTERM)


def ceiling(a, lab, rows):
    r = Redis(lab, "redis-ceiling")
    try:
        out = {}
        val = "x" * 1024
        sha = r.cli("SCRIPT", "LOAD", store.scripts(a.build)["write_unchecked"])
        r.cli("HSET", "onvm:{b}:s1:m", "gen", "1", "epoch", "0", "seq", "0")
        for name, cmd in (("set_1k", ["-t", "set", "-d", "1024"]),
                          ("evalsha_write_1k", ["EVALSHA", sha, "4", "onvm:{b}:s1:m",
                                                "onvm:{b}:s1:i", "onvm:{b}:s1:k",
                                                "onvm:{b}:s1:c:0.__rand_int__",
                                                "1", "5", "1", "1", "0", "0", val])):
            res = subprocess.run(["taskset", "-c", "1", REDIS_BENCH, "-s", r.sock, "-P", "64",
                                  "-n", str(a.ceiling_n), "-r", "1024", "-q", "--csv", *cmd],
                                 capture_output=True, text=True, check=True).stdout
            last = [ln for ln in res.splitlines() if ln.strip()][-1]
            ops = float(next(csv.reader([last]))[1])
            out[name] = ops
            rows.append({"part": "ceiling", "system": name, "updates_per_s": ops})
            log(f"ceiling: {name} {ops / 1e3:.0f} k/s")
        return out
    finally:
        r.close()


class Node:
    """The node of one system: `mode` none, local, or a store mode."""

    def __init__(self, a, lab, system, batch=256, wide=0):
        self.a, self.lab = a, lab
        self.prefix = lab.prefix()
        self.redis = None
        extra = ["-W", f"{wide}:{batch}"] if wide else []
        nfmode = "local" if system == "local" else "none"
        cfg = tput.stateful_cfg(os.path.join(a.build, "tests", "test_nf"), nfmode, extra)
        cfg["node"].update(name="sl", file_prefix=self.prefix)
        cfg["stats"] = {"interval_ms": 0}
        cfg["pool"] = {"mbufs": 65535}
        self.stateless = system not in ("none", "local")
        if self.stateless:
            mode, cache = system.split("+")[0], system.endswith("+cache")
            self.redis = Redis(lab, f"redis-{self.prefix}")
            cfg["chains"][0].update(resiliency="stateless", store={
                "address": f"unix:{self.redis.sock}", "mode": mode, "cache": cache,
                "flush_packets": batch, "pipeline": 256,
                "log_packets": max(4096, 4 * batch)})
        self.hist = os.path.join(lab.workdir, f"{self.prefix}.lat")
        env = dict(os.environ)
        env["LD_PRELOAD"] = a.shim
        env.update(LAT_HIST=self.hist, LAT_GEN_PORT="0", LAT_SINK_PORT="1", LAT_RATE_PPS="0",
                   LAT_TX_IN="start", LAT_RING="1024")
        lab.env = env
        try:
            self.m = tput.Manager(lab, a.build, self.prefix, cfg)
        finally:
            lab.env = None
        self.m.wait_ready(60)
        deadline = time.monotonic() + 60
        while system == "local" and not all(n.get("standby_parked") for n in
                                             self.m.tel.query("/onvm/nfs").values()):
            if time.monotonic() > deadline:
                raise tput.BenchError("standby not parked")
            time.sleep(0.1)
        self.lf = LatFile(self.hist)
        while not self.lf.try_open():
            if time.monotonic() > deadline:
                raise tput.BenchError(f"{self.hist} not there")
            time.sleep(0.05)

    def store(self):
        return self.m.tel.query("/onvm/store,c") if self.stateless else None

    def nf_pid(self):
        return next(n["pid"] for n in self.m.tel.query("/onvm/nfs").values() if n.get("pid"))

    def window(self, seconds, rate_pps=0):
        self.lf.set_rate(rate_pps)
        time.sleep(self.a.warmup)
        st0 = self.store()
        s0 = self.lf.snapshot()
        self.lab.window(seconds)
        s1 = self.lf.snapshot()
        st1 = self.store()
        d = diff(self.lf.parse(s0), self.lf.parse(s1))
        row = {"mpps": d["tx"]["measured"] / d["dt"] / 1e6, "offered_mpps": rate_pps / 1e6,
               "other_cpu_pct": self.lab.last_foreign_cpu, "steal_pct": self.lab.last_steal}
        for p in (5, 25, 50, 75, 99):
            row[f"p{p}_us"] = percentile(d["node"], self.lf.edges, p)
        if st0 and st1:
            acked = sum(st1[k]["updates_acked"] - st0[k]["updates_acked"]
                        for k in st1 if k.startswith("nf"))
            row["updates_per_s"] = acked / d["dt"]
            row["bytes_per_s"] = sum(st1[k]["bytes_sent"] - st0[k]["bytes_sent"]
                                     for k in st1 if k.startswith("nf")) / d["dt"]
            row["pipeline_waits"] = sum(st1[k]["pipeline_waits"] - st0[k]["pipeline_waits"]
                                        for k in st1 if k.startswith("nf"))
        self.lf.set_rate(0)
        return row

    def close(self):
        self.lf.close()
        self.m.close()
        self.lab.cleanup_one(self.m.p, self.prefix, manager=True)
        if self.redis:
            self.redis.close()


def measure(a, lab, rows, part, system, batch=None, wide=0, rate=0, extra=None):
    n = Node(a, lab, system, batch or 256, wide)
    try:
        r = n.window(a.window, rate)
    finally:
        n.close()
    r.update(part=part, system=system, batch=batch, wide_bytes=wide or None, **(extra or {}))
    rows.append(r)
    log(f"{part}: {system:12} batch {batch} bytes {wide or '-'}: {r['mpps']:.3f} Mpps, "
        f"p50 {r['p50_us'] or 0:.0f} us, p99 {r['p99_us'] or 0:.0f} us"
        + (f", {r['updates_per_s'] / 1e3:.1f} k updates/s" if "updates_per_s" in r else ""))
    return r


def part_batch(a, lab, rows):
    for system in ("none", "local"):
        measure(a, lab, rows, "batch", system)
    for b in a.batches:
        for mode, cache in MODES:
            measure(a, lab, rows, "batch", mode_name(mode, cache), b)


def part_latency(a, lab, rows):
    maxes = [r["mpps"] for r in rows if r["part"] == "batch" and r["batch"] == 256]
    if not maxes:
        maxes = [measure(a, lab, rows, "batch", mode_name(m, c), 256)["mpps"] for m, c in MODES]
    rate = a.lat_load * min(maxes) * 1e6
    log(f"latency: every system offered {rate / 1e6:.3f} Mpps")
    for system in ["none", "local"] + [mode_name(m, c) for m, c in MODES]:
        measure(a, lab, rows, "latency", system, 256 if system not in ("none", "local") else None,
                rate=rate)


def part_bytes(a, lab, rows):
    for wb in a.bytes:
        for system in ("none", "local", "async+cache"):
            measure(a, lab, rows, "bytes", system, 256 if system == "async+cache" else 256, wb)


def part_failover(a, lab, rows):
    for mode, cache in MODES:
        system = mode_name(mode, cache)
        n = Node(a, lab, system, 32)
        try:
            top = n.window(a.window)["mpps"]
            rate = a.fo_load * top * 1e6
            n.lf.set_rate(rate)
            time.sleep(a.warmup)
            for k in range(a.kills):
                s0 = n.lf.parse(n.lf.snapshot())
                os.kill(n.nf_pid(), signal.SIGKILL)  # the NF of our own manager
                deadline = time.monotonic() + 30
                while True:
                    d = n.store()
                    # (the timeline is there once the control thread saw the
                    # replay done: after the phase went back to running)
                    if d["recoveries"] == k + 1 and "last_replay_us" in d:
                        break
                    if time.monotonic() > deadline:
                        raise tput.BenchError(f"{system}: no recovery {k + 1}: {d}")
                    time.sleep(0.01)
                time.sleep(0.5)  # the replay and the backlog through
                s1 = n.lf.parse(n.lf.snapshot())
                kept = s1["rx"]["kept"] - s0["rx"]["kept"] + s1["rx"]["ring_overflow"] - \
                    s0["rx"]["ring_overflow"]
                got = s1["tx"]["measured"] - s0["tx"]["measured"]
                r = {"part": "failover", "system": system, "batch": 32, "kill": k + 1,
                     "offered_mpps": rate / 1e6, "down_ms": d["last_down_us"] / 1e3,
                     "load_ms": d["last_load_us"] / 1e3, "replay_ms": d["last_replay_us"] / 1e3,
                     "total_ms": (d["last_down_us"] + d["last_load_us"] + d["last_replay_us"]) / 1e3,
                     "replayed": d["replayed"], "dup_suppressed": d["dup_suppressed"],
                     "lost": max(0, kept - got), "log_full": d["log_full"]}
                rows.append(r)
                log(f"failover: {system:12} kill {k + 1}: {r['total_ms']:.1f} ms (gone "
                    f"{r['down_ms']:.1f}, loaded {r['load_ms']:.1f}, replayed {r['replay_ms']:.1f}), "
                    f"lost {r['lost']} of {kept}")
                time.sleep(0.5)
        finally:
            n.close()


def summarize(a, rows, out):
    lines = ["Stateless resiliency: one run (bench/stateless.py); 64-byte packets, "
             "test_nf -S on CPU 1, the manager and redis-server on CPU 0."]
    ceil = {r["system"]: r["updates_per_s"] for r in rows if r["part"] == "ceiling"}
    for k, v in ceil.items():
        lines.append(f"store ceiling {k}: {v / 1e3:.0f} k/s")
    base = {r["system"]: r["mpps"] for r in rows if r["part"] == "batch" and r["batch"] is None}
    if base:
        lines.append("Fig 3a, throughput (Mpps) vs batch: none %.3f, local %.3f" %
                     (base.get("none", 0), base.get("local", 0)))
        lines.append("batch  " + "  ".join(f"{mode_name(m, c):>12}" for m, c in MODES))
        for b in a.batches:
            vals = []
            for m, c in MODES:
                r = next((r for r in rows if r["part"] == "batch" and r["batch"] == b and
                          r["system"] == mode_name(m, c)), None)
                frac = (r.get("updates_per_s", 0) / ceil["evalsha_write_1k"]
                        if r and ceil.get("evalsha_write_1k") else None)
                vals.append(f"{r['mpps']:7.3f}" + (f" ({100 * frac:3.0f}%)" if frac is not None
                                                   else "") if r else "-")
            lines.append(f"{b:5}  " + "  ".join(f"{v:>12}" for v in vals))
        lines.append("(in parentheses: the mode's updates/s as a share of the store's EVALSHA "
                     "ceiling)")
    lat = [r for r in rows if r["part"] == "latency"]
    if lat:
        lines.append(f"Fig 3b, latency (us) at batch 256, offered {lat[0]['offered_mpps']:.3f} Mpps:")
        for r in lat:
            lines.append(f"  {r['system']:12} " + " ".join(
                f"p{p} {r[f'p{p}_us'] or 0:8.1f}" for p in (5, 25, 50, 75, 99)))
    by = [r for r in rows if r["part"] == "bytes"]
    if by:
        lines.append("Fig 3c, throughput (Mpps) vs bytes updated per epoch of 256 packets:")
        for wb in a.bytes:
            vals = {r["system"]: r["mpps"] for r in by if r["wide_bytes"] == wb}
            lines.append(f"  {wb:6} B: " + ", ".join(f"{k} {v:.3f}" for k, v in vals.items()))
    fo = [r for r in rows if r["part"] == "failover"]
    if fo:
        lines.append("Failover (an NF SIGKILLed, the chain recovered from the store):")
        for m, c in MODES:
            rs = [r for r in fo if r["system"] == mode_name(m, c)]
            if rs:
                tot = sorted(r["total_ms"] for r in rs)
                lines.append(f"  {mode_name(m, c):12} median {tot[len(tot) // 2]:.1f} ms, max "
                             f"{tot[-1]:.1f} ms; lost {sum(r['lost'] for r in rs)} packets in "
                             f"{len(rs)} kills, duplicates suppressed "
                             f"{sum(r['dup_suppressed'] for r in rs)}")
    text = "\n".join(lines) + "\n"
    with open(os.path.join(out, "stateless_summary.txt"), "w") as f:
        f.write(text)
    print(text)


def write_csv(rows, out):
    keys = []
    for r in rows:
        keys += [k for k in r if k not in keys]
    with open(os.path.join(out, "stateless.csv"), "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=keys)
        w.writeheader()
        for r in rows:
            w.writerow(r)


def plot(a, rows, out):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, ax = plt.subplots(1, 3, figsize=(16, 4.5))
    base = {r["system"]: r["mpps"] for r in rows if r["part"] == "batch" and r["batch"] is None}
    for m, c in MODES:
        pts = sorted((r["batch"], r["mpps"]) for r in rows if r["part"] == "batch" and
                     r["system"] == mode_name(m, c))
        if pts:
            ax[0].plot(*zip(*pts), marker="o", label=mode_name(m, c))
    for k, v in base.items():
        ax[0].axhline(v, linestyle="--", color="grey" if k == "none" else "black", label=k)
    ax[0].set(xscale="log", xlabel="batch (packets per epoch)", ylabel="Mpps",
              title="Fig 3a: throughput vs batch")
    ax[0].legend(fontsize=7)
    lat = [r for r in rows if r["part"] == "latency"]
    if lat:
        ax[1].boxplot([[r[f"p{p}_us"] or 0 for p in (5, 25, 50, 75, 99)] for r in lat],
                      whis=(0, 100))
        ax[1].set_xticks(range(1, len(lat) + 1), [r["system"] for r in lat], rotation=30,
                         fontsize=7)
        ax[1].set(yscale="log", ylabel="us", title="Fig 3b: latency p5..p99, batch 256")
    for system in ("none", "local", "async+cache"):
        pts = sorted((r["wide_bytes"], r["mpps"]) for r in rows if r["part"] == "bytes" and
                     r["system"] == system)
        if pts:
            ax[2].plot(*zip(*pts), marker="o", label=system)
    ax[2].set(xscale="log", xlabel="bytes updated per epoch", ylabel="Mpps",
              title="Fig 3c: throughput vs state updated")
    ax[2].legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(os.path.join(out, "stateless.png"), dpi=110)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--build", default=os.path.join(REPO, "build"))
    p.add_argument("--parts", default="ceiling,batch,latency,bytes,failover")
    p.add_argument("--window", type=float, default=3.0)
    p.add_argument("--warmup", type=float, default=1.0)
    p.add_argument("--batches", default="1,4,16,64,256,1024,2048")
    p.add_argument("--bytes", default="8,64,512,4096,16384,65536")
    p.add_argument("--lat-load", type=float, default=0.5)
    p.add_argument("--fo-load", type=float, default=0.3)
    p.add_argument("--kills", type=int, default=5)
    p.add_argument("--ceiling-n", type=int, default=200000)
    p.add_argument("--redis-cpu", default="", help="pin redis-server to this CPU list")
    p.add_argument("--out", default=os.path.join(HERE, "results", "stateless"))
    p.add_argument("--no-plot", action="store_true")
    a = p.parse_args()
    a.batches = [int(x) for x in a.batches.split(",")]
    a.bytes = [int(x) for x in a.bytes.split(",")]
    a.shim = os.path.join(a.build, "bench", "lat_shim.so")
    if a.redis_cpu:
        Redis.pin = ["taskset", "-c", a.redis_cpu]
    parts = a.parts.split(",")
    os.makedirs(a.out, exist_ok=True)
    workdir, lab = tput.start("stateless", EnvProcs)
    lab.workdir = workdir
    lab.env = None
    rows = []
    t0 = time.monotonic()
    try:
        tput.wait_quiet(lab, 60)
        if "ceiling" in parts:
            ceiling(a, lab, rows)
        if "batch" in parts:
            part_batch(a, lab, rows)
        if "latency" in parts:
            part_latency(a, lab, rows)
        if "bytes" in parts:
            part_bytes(a, lab, rows)
        if "failover" in parts:
            part_failover(a, lab, rows)
    finally:
        lab.cleanup_all()
        shutil.rmtree(workdir, ignore_errors=True)
        write_csv(rows, a.out)
        with open(os.path.join(a.out, "stateless_args.json"), "w") as f:
            json.dump({k: v for k, v in vars(a).items()}, f, indent=1)
    summarize(a, rows, a.out)
    if not a.no_plot:
        plot(a, rows, a.out)
    log(f"done in {time.monotonic() - t0:.0f} s: {a.out}")


if __name__ == "__main__":
    tput.run_main(main)
