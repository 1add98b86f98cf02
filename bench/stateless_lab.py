#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 REINFORCE-NFV authors
"""The stateless study's Figs 3a-3c with `remote` (REINFORCE) in them: every
system on the same four-node lab, in one run.

bench/stateless.py measures the store's modes on one node polling net_null
ports (millions of packets per second, next to `none` and `local`); remote
resiliency needs a predecessor, a primary and a standby, linked.  Here all
of them run on the lab of python/onvm/remote_lab.py (bench/remote_tput.py's:
predecessor, primary, standby and sink, each a manager in a network
namespace of its own, linked by veth pairs driven by net_af_packet), the
chain one `test_nf -S` (a forwarder counting packets and bytes in a 1 KB
chunk of a libnf state region) on the primary:

  none      the chain unprotected (the predecessor and primary just forward)
  local     the NF with a hot standby of its own on the primary (local
            resiliency: its state copied at every batch, in memory)
  remote    remote resiliency: the predecessor stamps and logs, the primary
            commits each stage with the standby (2PC) before its output
            leaves, consistent cuts every 5 ms
  sync, async, sync+cache, async+cache
            the primary's chain stateless (docs/design/stateless.md), its
            state in a redis-server on a Unix socket (no persistence); the
            standby idle

Parts (all by default; --parts a,b,...):
  batch    Fig 3a: throughput vs batch (`flush_packets`) for the four modes,
           next to none, local and remote (no batch: one value each).  The input
           is the tagged trace (smtp.pcap x --copies, new flows per copy),
           sent as fast as the predecessor reads it; throughput = frames
           at the sink over the span of their capture timestamps (frames
           lost on the way are in the CSV).
  latency  Fig 3b: per-frame latency p5/p25/p50/p75/p99 at batch 256, the
           input (smtp.pcap x copies/5) sent into the predecessor at
           --pace-fps by tests/integration/paced_source.py: the kernel's
           timestamp leaving the source (into the predecessor) to the
           kernel's timestamp reaching the sink (bench/sniff.py).
  bytes    Fig 3c: throughput vs bytes of state updated per 256 packets
           (`test_nf -W`), async+cache vs none, local and remote.
  failover the primary node SIGKILLed (its manager and NFs) while the input
           comes at --fo-fps (paced_source.py), --kills times per system:
           remote, and each mode behind the predecessor (the chain's
           "predecessor": a spare node takes over from the store and the
           predecessor's log).  BFD (10 ms x 3) on the predecessor's link
           detects it.  Per kill: detection (the kill to the predecessor's
           failover), the time until the spare forwards again (the kill to
           its first frame at the sink, polled every ms), and frames lost
           (the input less what reached the sink, each once: the dead
           primary's tail).

The rounds interleave the systems (--rounds); ratios to `none` are per
round.  This lab's links are kernel veths, so its packet rates are far
below bench/stateless.py's: the two runs' figures are not on one scale.

usage: bench/stateless_lab.py [--parts ...] [--rounds N] [--batches 1,...]
                              [--bytes 8,...] [--copies N] [--out DIR]
Writes OUT/stateless_lab.csv, OUT/stateless_lab_summary.txt and
OUT/stateless_lab.png (OUT: bench/results/stateless).
"""
import argparse
import os
import signal
import statistics
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "python"))
sys.path.insert(0, HERE)
from onvm import lab, pcap, report, traces  # noqa: E402
from onvm import remote_lab as rc  # noqa: E402
from onvm import store as st  # noqa: E402
import remote_tput as rt  # noqa: E402  (one pass through the lab, its figures)

MODES = ["sync", "async", "sync+cache", "async+cache"]
BASES = ["none", "local", "remote"]  # no epoch: one value each
FIELDS = ["part", "round", "system", "batch", "wide_bytes", "fps", "frames", "input", "ratio",
          "lat_p5_us", "lat_p25_us", "lat_p50_us", "lat_p75_us", "lat_p99_us",
          "updates_acked", "log_full", "pipeline_waits",
          "kill", "detect_ms", "forward_ms", "lost", "dup", "replayed", "covered"]


def nfs(wide=0, batch=256, local=False):
    """The chain: one test_nf -S (with a hot standby of its own on the
    same node if `local`)."""
    args = ["-S"] + (["-W", f"{wide}:{batch}"] if wide else [])
    nf = {"name": "fwd", "binary": lab.TEST_NF, "service": 1, "args": args}
    if local:
        nf["resiliency"] = "local"
    return ([nf], [1])


def drained(L, pred, sink, port, tag, n=None):
    """The paced input all sent, and the sink's `port` has `n` frames or
    took none for a second."""
    lab.wait_until(lambda: rc.source_progress(pred)[1] is not None, 300, f"{tag}: input sent")
    last = [-1, 0.0]

    def quiet():
        rx = sink.port(port)["rx"]
        if rx != last[0]:
            last[:] = [rx, time.monotonic()]
        return (n is not None and rx >= n) or time.monotonic() - last[1] > 1.0
    lab.wait_until(quiet, 120, f"{tag}: frames at the sink ({port})", interval=0.1)


def run_paced(L, frames, tag, remote, nf, store, rate):
    """One pass of `frames` fed into the predecessor at `rate` frames/s
    (paced_source.py: a steady input, none of it left in a port's ring
    when it ends); returns (the sniff files, the primary's telemetry)."""
    sink, standby, primary, pred = rc.build(L, frames, tag, remote=remote, nfs=nf, store=store,
                                            source=rate)
    rc.start_all(sink, standby, primary, pred)
    files = (L.path(f"{tag}-g_p.txt"), L.path(f"{tag}-k_m.txt"), L.path(f"{tag}-no-rtt.txt"))
    # (from the source's wire: the predecessor's ports bypass the qdisc,
    # and what they send reaches no other packet socket)
    sn = [rt.sniffer(L, pred.source_ns, "g_p", files[0], "tags"),
          rt.sniffer(L, sink.ns, "k_m", files[1], "tags")]
    src = rc.start_source(L, pred, tag)
    drained(L, pred, sink, "in_m", tag, len(frames))
    tel = (primary.query("/onvm/remote").get("web", {}) if remote else
           primary.query("/onvm/store,c") if store else {})
    src.wait(10)
    for p in sn:
        rt.stop_sniffer(p)
    for node in (pred, standby, primary, sink):
        node.stop()
    return files, tel, sink


def failover(L, a, k, frames, rnd, system):
    """The primary node killed mid-stream; the spare (or remote's standby)
    takes over.  Returns the row."""
    tag = f"f{k}"
    redis, store = None, None
    if system != "remote":
        redis = st.Redis(L, f"redis{tag}").start()
        store = st.store_cfg(redis.addr, system.split("+")[0], system.endswith("+cache"),
                             flush_packets=32, pipeline=256, log_packets=8192)
    try:
        sink, spare, primary, pred = rc.build(L, frames, tag, remote=True, nfs=nfs(), store=store,
                                              bfd=True, source=a.fo_fps)
        rc.start_all(sink, spare, primary, pred)
        pred.wait_bfd("to_m", "Up", timeout=60)
        src = rc.start_source(L, pred, tag)
        # killed a third of the way in
        lab.wait_until(lambda: sink.port("in_m")["rx"] >= len(frames) // 3, 120,
                       f"{tag}: a third of the input out")
        t_kill, t_kill_wall = time.monotonic(), time.time()
        primary.stop(sig=signal.SIGKILL)  # the node: its NFs die with its manager
        lab.wait_until(lambda: sink.port("in_s")["rx"] > 0, 60, f"{tag}: the spare forwarding")
        drained(L, pred, sink, "in_s", tag)
        p = pred.query("/onvm/remote")["web"]
        d = (spare.query("/onvm/store,c") if store else spare.query("/onvm/remote")["web"])
        src.wait(10)
        for node in (pred, spare, sink):
            node.stop()
    finally:
        if redis:
            redis.kill()
    sent = rc.source_progress(pred)[1]
    # (only the input's frames: tags 1..n)
    tags = [t for side in "ms" for t in map(rc.tag_of, pcap.read_capture_out(
        L.path(f"sink-{side}{tag}.pcap"))) if 1 <= t <= len(frames)]
    # the spare's first frame at the sink: its capture's timestamp (the
    # wall clock, as the kill's)
    t_fwd = rt.pcap_times(L.path(f"sink-s{tag}.pcap"))[0] - t_kill_wall + t_kill
    # (the kill's time on the predecessor's clock: both CLOCK_MONOTONIC)
    row = {"part": "failover", "round": rnd, "system": system, "kill": k,
           "input": sent, "frames": len(set(tags)), "dup": len(tags) - len(set(tags)),
           "lost": sent - len(set(tags)),
           "detect_ms": round((p["failover_req_ns"] / 1e9 - t_kill) * 1e3, 2),
           "forward_ms": round((t_fwd - t_kill) * 1e3, 2),
           "replayed": p["replayed"],
           "covered": d.get("peer_covered", d.get("ingress_replay_covered", ""))}
    print(f"failover {system:12}: detected {row['detect_ms']} ms, forwarding {row['forward_ms']} "
          f"ms after the kill; lost {row['lost']} of {sent}, dup {row['dup']}, replayed "
          f"{row['replayed']}", flush=True)
    return row


def one(L, a, k, frames, part, rnd, system, batch=None, wide=0, pace=False):
    """One pass of `system`; returns its row."""
    tag = f"{part[0]}{k}"
    store, redis = None, None
    if system not in BASES:
        redis = st.Redis(L, f"redis{tag}").start()
        # a log of four epochs at least: the input comes in faster than a
        # small batch commits, and a full log drops at the entry (counted)
        store = st.store_cfg(redis.addr, system.split("+")[0], system.endswith("+cache"),
                             flush_packets=batch, pipeline=256, log_packets=max(8192, 4 * batch))
    try:
        if pace:
            files, tel, sink = run_paced(L, frames, tag, system == "remote",
                                         nfs(wide, batch or 256, system == "local"), store,
                                         a.pace_fps)
            times = rt.pcap_times(L.path(f"sink-m{tag}.pcap"))
        else:
            times, files, tel = rt.run(L, frames, tag, system == "remote",
                                       nfs(wide, batch or 256, system == "local"), store=store)
    finally:
        if redis:
            redis.kill()
    row = {"part": part, "round": rnd, "system": system, "batch": batch,
           "wide_bytes": wide or None, "fps": round(rt.rate(times)), "frames": len(times),
           "input": len(frames)}
    if pace:
        lat, _ = rt.latencies(files)
        for p in (5, 25, 50, 75, 99):
            row[f"lat_p{p}_us"] = round(rt.pct(lat, p / 100), 1)
    if store:
        nf = [v for key, v in tel.items() if key.startswith("nf")]
        row.update(updates_acked=sum(v.get("updates_acked", 0) for v in nf),
                   pipeline_waits=sum(v.get("pipeline_waits", 0) for v in nf),
                   log_full=tel.get("log_full", ""))
    print(f"{part} round {rnd} {system:12} batch {batch} bytes {wide or '-'}: {row['fps']} "
          f"frames/s, {row['frames']}/{row['input']} delivered"
          + (f", p50 {row['lat_p50_us']} us, p99 {row['lat_p99_us']} us" if pace else ""),
          flush=True)
    return row


def ratios(rows):
    """Each row's fps over its round's and part's `none` (same wide_bytes)."""
    for r in rows:
        base = next((b for b in rows if b["part"] == r["part"] and b["round"] == r["round"] and
                     b["system"] == "none" and b["wide_bytes"] == r["wide_bytes"]), None)
        if base and base["fps"] and r["part"] != "latency":
            r["ratio"] = round(r["fps"] / base["fps"], 3)


def summarize(a, rows):
    med = lambda xs: statistics.median(xs) if xs else 0
    pick = lambda part, system, **kw: [r for r in rows if r["part"] == part and
                                       r["system"] == system and
                                       all(r.get(k) == v for k, v in kw.items())]
    # "system fps (ratio to none)", medians of its rounds
    cell = lambda system, rs: (f"{system} {med([r['fps'] for r in rs]):.0f} "
                               f"({med([r.get('ratio', 0) for r in rs]):.3f})")
    out = [f"Stateless vs remote on the four-node lab (bench/stateless_lab.py), one run, "
           f"{a.rounds} round(s); medians; ratio = fps / none's in the same round."]
    if any(r["part"] == "batch" for r in rows):
        out.append("Fig 3a, frames/s vs batch:")
        for system in BASES:
            rs = pick("batch", system)
            out.append(f"  {system:12} {med([r['fps'] for r in rs]):9.0f} "
                       f"(ratio {med([r.get('ratio', 0) for r in rs]):.3f})")
        for b in a.batches:
            cells = []
            for m in MODES:
                cells.append(cell(m, pick("batch", m, batch=b)))
            out.append(f"  batch {b:5}: " + ", ".join(cells))
    lat = [r for r in rows if r["part"] == "latency"]
    if lat:
        out.append(f"Fig 3b, latency (us) at batch 256, input paced at {a.pace_fps} frames/s:")
        for system in BASES + MODES:
            rs = pick("latency", system)
            if rs:
                out.append(f"  {system:12} " + " ".join(
                    f"p{p} {med([r[f'lat_p{p}_us'] for r in rs]):8.1f}"
                    for p in (5, 25, 50, 75, 99)))
    if any(r["part"] == "bytes" for r in rows):
        out.append("Fig 3c, frames/s vs bytes updated per 256 packets:")
        for wb in a.bytes:
            cells = []
            for system in BASES + ["async+cache"]:
                cells.append(cell(system, pick("bytes", system, wide_bytes=wb)))
            out.append(f"  {wb:6} B: " + ", ".join(cells))
    fo = [r for r in rows if r["part"] == "failover"]
    if fo:
        out.append(f"Failover, the primary node SIGKILLed (BFD 10 ms x 3), input at "
                   f"{a.fo_fps} frames/s, {a.kills} kill(s) each: medians [max]")
        for system in ["remote"] + MODES:
            rs = [r for r in fo if r["system"] == system]
            if rs:
                out.append(f"  {system:12} detected {med([r['detect_ms'] for r in rs]):6.1f} ms, "
                           f"forwarding again {med([r['forward_ms'] for r in rs]):6.1f} ms "
                           f"[{max(r['forward_ms'] for r in rs):.1f}], lost "
                           f"{med([r['lost'] for r in rs]):.0f} [{max(r['lost'] for r in rs)}] "
                           f"frames, duplicates {sum(r['dup'] for r in rs)}")
    lost = [r for r in rows if r["part"] not in ("latency", "failover") and
            r["frames"] < r["input"]]
    if lost:
        out.append("passes that lost frames (overload: a full ring or log), frames lost: " +
                   ", ".join(f"{r['part']} {r['system']} batch {r['batch'] or '-'}"
                             f"{' bytes ' + str(r['wide_bytes']) if r['wide_bytes'] else ''}: "
                             f"{r['input'] - r['frames']}" for r in lost))
    return "\n".join(out) + "\n"


def plot(a, rows, path):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    med = lambda xs: statistics.median(xs) if xs else 0
    fig, ax = plt.subplots(1, 4, figsize=(21, 4.5))
    for m in MODES:
        pts = [(b, med([r["fps"] for r in rows if r["part"] == "batch" and r["system"] == m and
                        r["batch"] == b])) for b in a.batches]
        ax[0].plot(*zip(*pts), marker="o", label=m)
    for system, color in (("none", "grey"), ("local", "tab:brown"), ("remote", "black")):
        v = med([r["fps"] for r in rows if r["part"] == "batch" and r["system"] == system])
        if v:
            ax[0].axhline(v, linestyle="--", color=color, label=system)
    ax[0].set(xscale="log", xlabel="batch (packets per epoch)", ylabel="frames/s",
              title="Fig 3a on the lab: throughput vs batch")
    ax[0].legend(fontsize=7)
    lat = [s for s in BASES + MODES
           if any(r["part"] == "latency" and r["system"] == s for r in rows)]
    if lat:
        ax[1].boxplot([[med([r[f"lat_p{p}_us"] for r in rows if r["part"] == "latency" and
                             r["system"] == s]) for p in (5, 25, 50, 75, 99)] for s in lat],
                      whis=(0, 100))
        ax[1].set_xticks(range(1, len(lat) + 1), lat, rotation=30, fontsize=7)
        ax[1].set(yscale="log", ylabel="us", title="Fig 3b on the lab: latency p5..p99")
    for system in BASES + ["async+cache"]:
        pts = [(wb, med([r["fps"] for r in rows if r["part"] == "bytes" and
                         r["system"] == system and r["wide_bytes"] == wb])) for wb in a.bytes]
        if any(v for _, v in pts):
            ax[2].plot(*zip(*pts), marker="o", label=system)
    ax[2].set(xscale="log", xlabel="bytes updated per 256 packets", ylabel="frames/s",
              title="Fig 3c on the lab: throughput vs state updated")
    if ax[2].get_legend_handles_labels()[0]:
        ax[2].legend(fontsize=7)
    fo = [s for s in ["remote"] + MODES
          if any(r["part"] == "failover" and r["system"] == s for r in rows)]
    if fo:
        ax[3].boxplot([[r["forward_ms"] for r in rows if r["part"] == "failover" and
                        r["system"] == s] for s in fo], whis=(0, 100))
        ax[3].set_xticks(range(1, len(fo) + 1), fo, rotation=30, fontsize=7)
        ax[3].set(ylabel="ms", title="Node lost: kill to forwarding again")
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--parts", default="batch,latency,bytes,failover")
    ap.add_argument("--kills", type=int, default=3, help="failover: kills per system")
    ap.add_argument("--fo-fps", type=int, default=5000, help="failover: the input's rate")
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--batches", default="1,16,256,2048")
    ap.add_argument("--bytes", default="8,1024,16384,65536")
    ap.add_argument("--copies", type=int, default=200)
    ap.add_argument("--pace-fps", type=int, default=5000, help="the latency part's input rate")
    ap.add_argument("--out", default=os.path.join(HERE, "results", "stateless"))
    ap.add_argument("--no-plot", action="store_true")
    a = ap.parse_args()
    a.batches = [int(x) for x in a.batches.split(",")]
    a.bytes = [int(x) for x in a.bytes.split(",")]
    parts = a.parts.split(",")
    os.makedirs(a.out, exist_ok=True)
    trace = traces.trace("smtp.pcap")
    frames = rc.tagged_input(trace, a.copies, flows_per_copy=True)
    slow = rc.tagged_input(trace, max(1, a.copies // 5), flows_per_copy=True)
    fo_frames = rc.tagged_input(trace, max(1, a.copies // 10), flows_per_copy=True)

    def body(L):
        rows, k = [], 0
        for rnd in range(a.rounds):
            plan = []
            if "batch" in parts:
                plan += [("batch", s, None, 0, False) for s in BASES]
                plan += [("batch", m, b, 0, False) for b in a.batches for m in MODES]
            if "latency" in parts:
                plan += [("latency", s, None if s in BASES else 256, 0, True)
                         for s in BASES + MODES]
            if "bytes" in parts:
                plan += [("bytes", s, None if s != "async+cache" else 256, wb, False)
                         for wb in a.bytes for s in BASES + ["async+cache"]]
            for part, system, batch, wide, pace in plan:
                k += 1
                rows.append(one(L, a, k, slow if pace else frames, part, rnd, system, batch,
                                wide, pace))
        if "failover" in parts:
            for kill in range(a.kills):
                for system in ["remote"] + MODES:
                    k += 1
                    rows.append(failover(L, a, k, fo_frames, kill, system))
        ratios(rows)
        report.write_csv(os.path.join(a.out, "stateless_lab.csv"), FIELDS, rows)
        text = summarize(a, rows)
        with open(os.path.join(a.out, "stateless_lab_summary.txt"), "w") as f:
            f.write(text)
        print(text)
        if not a.no_plot:
            plot(a, rows, os.path.join(a.out, "stateless_lab.png"))

    lab.run("bench_stateless_lab", body)


if __name__ == "__main__":
    main()
