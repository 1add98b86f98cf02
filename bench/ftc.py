#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 REINFORCE-NFV authors
"""FTC's figures (Ghaznavi et al., SIGCOMM 2020) on this data plane, next to
`none` and `remote` (REINFORCE) in one run.

`ftc` and `none` run on the FTC lab (python/onvm/ftc_lab.py): one NF a
node, each node a manager in a network namespace of its own, linked by veth
pairs on net_af_packet; `ftc` adds f replica-only nodes, `none` is the same
NF nodes with no FTC.  `remote` runs the same NFs as one chain on the
primary of remote resiliency's four-node lab (python/onvm/remote_lab.py:
predecessor, primary, standby, sink).  The NF is the paper's Monitor: a
`test_nf -S` counting packets and bytes in a libnf state region (each
packet dirties one chunk), `-W B:1` to dirty B more bytes a packet.

Parts (all by default; --parts a,b,...):
  length    Fig 9: throughput vs chain length (2..5 NFs), f = 1.  The input
            (smtp.pcap x --copies, tagged, new flows each copy) sent as fast
            as the first node reads it; throughput = frames at the sink
            over the span of their capture timestamps.
  latency   Fig 10: per-frame latency at a fixed load (--pace-fps, paced by
            tests/integration/paced_source.py), 3 NFs: the kernel's
            timestamp leaving the source to its timestamp reaching the sink
            (bench/sniff.py); per NF = (p50 - none's p50) / 3.
  bytes     Fig 5: throughput vs bytes of state updated per packet (8, 64,
            256, 1024), 3 NFs, f = 1.
  f         Fig 12: f = 1, 2, 3 on 3 NFs (the longest chain the lab holds
            with f = 3: seven managers on two cores).
  recovery  the timeline after a node kill, the input paced at --fo-fps:
            ftc (n1 of 3 SIGKILLed; BFD 3 x 10 ms; the orchestrator starts
            its replacement, which fetches the state), remote (the primary
            node SIGKILLed; BFD; the standby takes over), none (n1 killed:
            nothing takes over).  Frames at the sink per 10 ms, from the
            sink's capture, and the recovery split into detection, start,
            state fetch and reroute.

usage: bench/ftc.py [--parts ...] [--rounds N] [--copies N] [--out DIR]
Writes OUT/ftc.csv, OUT/ftc_timeline.csv, OUT/ftc_summary.txt and
OUT/ftc.png (OUT: bench/results/ftc).
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
from onvm import ftc_lab, lab, pcap, report, traces  # noqa: E402
from onvm import remote_lab as rc  # noqa: E402
import remote_tput as rt  # noqa: E402  (the remote lab's pass, timestamps, sniffers)

FIELDS = ["part", "round", "system", "length", "f", "bytes", "fps", "frames", "input", "ratio",
          "lat_p5_us", "lat_p50_us", "lat_p99_us", "per_nf_us", "updates", "propagating",
          "retransmits", "release_wait_us"]
TL_FIELDS = ["system", "t_ms", "frames", "detect_ms", "start_ms", "fetch_ms", "reroute_ms",
             "lost", "input"]


def monitors(n, wide=0):
    """n Monitors: test_nf -S, services 1..n."""
    args = ["-S"] + (["-W", f"{wide}:1"] if wide else [])
    return [({"name": f"m{i}", "binary": lab.TEST_NF, "service": i + 1, "args": list(args)},
             i + 1) for i in range(n)]


def ftc_pass(L, frames, tag, n, f, ftc, wide=0, source=None, sniff=False):
    """One pass through the FTC lab (`ftc` False: none); returns (sink
    timestamps, sniff files, the egress's /onvm/ftc, the nodes' sum of
    updates, propagating frames and retransmissions)."""
    c = ftc_lab.build(L, frames, f=f, tag=tag, ftc=ftc, nfs=monitors(n, wide), source=source)
    ftc_lab.start(c, source=False)
    files, sn = None, []
    if sniff:
        files = (L.path(f"{tag}-src.txt"), L.path(f"{tag}-sink.txt"), L.path(f"{tag}-none.txt"))
        sn = [rt.sniffer(L, c.ns["g"], "g_n0", files[0], "tags"),
              rt.sniffer(L, c.ns["k"], "k_e", files[1], "tags")]
    if source:
        ftc_lab.start_source(c)
        lab.wait_until(lambda: ftc_lab.source_progress(c)[1] is not None, 300, f"{tag}: sent")
    last = [-1, time.monotonic()]

    def done():
        rx = ftc_lab.delivered(c.sink)
        if rx != last[0]:
            last[:] = [rx, time.monotonic()]
        return rx >= len(frames) or (rx > 0 and time.monotonic() - last[1] > 1.0)
    lab.wait_until(done, 300, f"{tag}: frames at the sink", interval=0.1)
    st = [ftc_lab.ftc_state(x) for x in c.nodes] if ftc else []
    for p in sn:
        rt.stop_sniffer(p)
    for node in [c.sink] + c.nodes:
        node.stop()
    sums = {k: sum(s.get(k, 0) for s in st) for k in ("own_updates", "out_propagating",
                                                      "retransmits")}
    return rt.pcap_times(c.sink.capture), files, (st[-1] if st else {}), sums


def remote_pass(L, frames, tag, n, wide=0, source=None, sniff=False):
    """The same NFs as one chain on remote resiliency's primary."""
    nf = ([x for x, _ in monitors(n, wide)], list(range(1, n + 1)))
    if not sniff:
        times, _, _ = rt.run(L, frames, tag, True, nf, state_mb=32 * n)
        return times, None
    sink, standby, primary, pred = rc.build(L, frames, tag, remote=True, nfs=nf, source=source,
                                            state_mb=32 * n)
    rc.start_all(sink, standby, primary, pred)
    files = (L.path(f"{tag}-g_p.txt"), L.path(f"{tag}-k_m.txt"), L.path(f"{tag}-no-rtt.txt"))
    sn = [rt.sniffer(L, pred.source_ns, "g_p", files[0], "tags"),
          rt.sniffer(L, sink.ns, "k_m", files[1], "tags")]
    src = rc.start_source(L, pred, tag)
    lab.wait_until(lambda: rc.source_progress(pred)[1] is not None, 300, f"{tag}: sent")
    time.sleep(1.0)
    src.wait(10)
    for p in sn:
        rt.stop_sniffer(p)
    for node in (pred, standby, primary, sink):
        node.stop()
    return rt.pcap_times(L.path(f"sink-m{tag}.pcap")), files


def row_of(part, rnd, system, times, frames, **kw):
    r = {"part": part, "round": rnd, "system": system, "fps": round(rt.rate(times)),
         "frames": len(times), "input": len(frames)}
    r.update(kw)
    return r


def tput(L, a, k, frames, part, rnd, system, n, f=1, wide=0):
    tag = f"{part[0]}{k}"
    if system == "remote":
        times, _ = remote_pass(L, frames, tag, n, wide)
        r = row_of(part, rnd, system, times, frames, length=n, bytes=wide or None)
    else:
        times, _, eg, sums = ftc_pass(L, frames, tag, n, f, system == "ftc", wide)
        r = row_of(part, rnd, system, times, frames, length=n, bytes=wide or None,
                   f=f if system == "ftc" else None, updates=sums.get("own_updates"),
                   propagating=sums.get("out_propagating"),
                   retransmits=sums.get("retransmits"),
                   release_wait_us=round(eg.get("release_wait_us", 0) /
                                         max(eg.get("released", 0), 1), 1) if eg else None)
    report.log(f"{part} round {rnd} {system:6} length {n} f {r.get('f')} bytes {wide or '-'}: "
               f"{r['fps']} frames/s, {r['frames']}/{r['input']} delivered")
    return r


def latency(L, a, k, frames, rnd, system):
    tag = f"l{k}"
    if system == "remote":
        times, files = remote_pass(L, frames, tag, 3, source=a.pace_fps, sniff=True)
    else:
        times, files, _, _ = ftc_pass(L, frames, tag, 3, 1, system == "ftc",
                                      source=a.pace_fps, sniff=True)
    lat, _ = rt.latencies(files)
    r = row_of("latency", rnd, system, times, frames, length=3)
    for p in (5, 50, 99):
        r[f"lat_p{p}_us"] = round(rt.pct(lat, p / 100), 1)
    report.log(f"latency round {rnd} {system:6}: p50 {r['lat_p50_us']} us, p99 "
               f"{r['lat_p99_us']} us ({len(lat)} frames)")
    return r


def timeline(times, t_kill_wall, input_n, system, split):
    """Frames at the sink per 10 ms from 200 ms before the kill to 3 s after."""
    rows = []
    for b in range(-20, 300):
        lo, hi = t_kill_wall + b / 100, t_kill_wall + (b + 1) / 100
        rows.append(dict({"system": system, "t_ms": b * 10,
                          "frames": sum(1 for t in times if lo <= t < hi), "input": input_n},
                         **split))
    return rows


def recovery(L, a, k, frames, system):
    tag = f"r{k}"
    split = {}
    if system == "remote":
        sink, standby, primary, pred = rc.build(L, frames, tag, remote=True,
                                                nfs=([x for x, _ in monitors(3)], [1, 2, 3]),
                                                bfd=True, source=a.fo_fps, state_mb=96)
        rc.start_all(sink, standby, primary, pred)
        pred.wait_bfd("to_m", "Up", timeout=60)
        src = rc.start_source(L, pred, tag)
        lab.wait_until(lambda: sink.port("in_m")["rx"] >= len(frames) // 3, 120, "a third out")
        t_kill, t_wall = time.monotonic(), time.time()
        primary.stop(sig=signal.SIGKILL)
        lab.wait_until(lambda: sink.port("in_s")["rx"] > 0, 60, "the standby forwarding")
        lab.wait_until(lambda: rc.source_progress(pred)[1] is not None, 300, "sent")
        time.sleep(1.0)
        p = pred.query("/onvm/remote")["web"]
        src.wait(10)
        for node in (pred, standby, sink):
            node.stop()
        times = sorted(rt.pcap_times(L.path(f"sink-m{tag}.pcap")) +
                       rt.pcap_times(L.path(f"sink-s{tag}.pcap")))
        outs = [L.path(f"sink-{side}{tag}.pcap") for side in "ms"]
        split = {"detect_ms": round((p["failover_req_ns"] / 1e9 - t_kill) * 1e3, 1)}
        first_s = rt.pcap_times(L.path(f"sink-s{tag}.pcap"))[0]
        split["reroute_ms"] = round((first_s - t_wall) * 1e3, 1)
        sent = rc.source_progress(pred)[1]
    else:
        c = ftc_lab.build(L, frames, f=1, tag=tag, ftc=system == "ftc", nfs=monitors(3),
                          source=a.fo_fps, recover=system == "ftc", bfd=True)
        ftc_lab.start(c, source=False)
        ftc_lab.wait_bfd_up(c)
        orch = ftc_lab.Orchestrator(c)
        ftc_lab.start_source(c)
        lab.wait_until(lambda: ftc_lab.delivered(c.sink) >= len(frames) // 3, 120, "a third out")
        t_wall = time.time()
        t_kill = c.nodes[1].crash()
        if system == "ftc":
            dead, det = orch.watch()
            tl = orch.replace(dead, det)[0]
            split = {"detect_ms": round((tl["detected_ns"] - t_kill) / 1e6, 1),
                     "start_ms": round((tl["up_ns"] - tl["launched_ns"]) / 1e6, 1),
                     "fetch_ms": round(tl["fetch_us"] / 1e3, 2),
                     "reroute_ms": round(((tl["forwarding_ns"] or tl["state_ns"]) -
                                          tl["state_ns"]) / 1e6, 2)}
        lab.wait_until(lambda: ftc_lab.source_progress(c)[1] is not None, 300, "sent")
        time.sleep(1.0)
        for node in [c.sink] + c.nodes:
            node.stop()
        times = rt.pcap_times(c.sink.capture)
        outs = [c.sink.capture]
        sent = ftc_lab.source_progress(c)[1]
    # lost: the input's frames (tags 1..n) that never came out, each once
    tags = {rc.tag_of(f) for p in outs for f in pcap.read_pcap(p)}
    split["lost"] = sent - len({t for t in tags if 1 <= t <= len(frames)})
    report.log(f"recovery {system:6}: {split}")
    return timeline(times, t_wall, sent, system, split)


def summarize(a, rows, tl):
    med = lambda xs: statistics.median(xs) if xs else 0
    pick = lambda part, system, **kw: [r for r in rows if r["part"] == part and
                                       r["system"] == system and
                                       all(r.get(x) == v for x, v in kw.items())]
    cell = lambda rs: (f"{med([r['fps'] for r in rs]):7.0f} "
                       f"({med([r.get('ratio') or 0 for r in rs]):.3f})")
    out = [f"FTC vs none and remote (bench/ftc.py), one run, {a.rounds} round(s); medians; "
           f"frames/s (ratio to none in the same round)."]
    if any(r["part"] == "length" for r in rows):
        out.append("Fig 9, throughput vs chain length (f = 1):")
        for n in a.lengths:
            out.append(f"  {n} NFs: " + ", ".join(f"{s} {cell(pick('length', s, length=n))}"
                                                for s in ("none", "ftc", "remote")))
    if any(r["part"] == "latency" for r in rows):
        out.append(f"Fig 10, latency at {a.pace_fps} frames/s, 3 NFs (us):")
        base = med([r["lat_p50_us"] for r in pick("latency", "none")])
        for s in ("none", "ftc", "remote"):
            rs = pick("latency", s)
            if rs:
                p50 = med([r["lat_p50_us"] for r in rs])
                out.append(f"  {s:6} p5 {med([r['lat_p5_us'] for r in rs]):7.1f} p50 {p50:7.1f} "
                           f"p99 {med([r['lat_p99_us'] for r in rs]):8.1f}; per NF over none "
                           f"{(p50 - base) / 3:6.1f}")
    if any(r["part"] == "bytes" for r in rows):
        out.append("Fig 5, throughput vs bytes of state updated per packet (3 NFs, f = 1):")
        for b in a.bytes:
            out.append(f"  {b:5} B: " + ", ".join(f"{s} {cell(pick('bytes', s, bytes=b))}"
                                                 for s in ("none", "ftc", "remote")))
    if any(r["part"] == "f" for r in rows):
        out.append("Fig 12, throughput vs f (3 NFs):")
        out.append(f"  none {cell(pick('f', 'none'))}; " + ", ".join(
            f"f = {f} {cell(pick('f', 'ftc', f=f))}" for f in (1, 2, 3)))
    if tl:
        out.append(f"Recovery after a node kill, input at {a.fo_fps} frames/s:")
        for s in ("ftc", "remote", "none"):
            r = next((x for x in tl if x["system"] == s), None)
            if r:
                out.append(f"  {s:6} " + ", ".join(f"{x} {r[x]}" for x in TL_FIELDS[3:]
                                                   if r.get(x) is not None))
    return "\n".join(out)


def plot(a, rows, tl):
    try:
        plt = report.pyplot()
    except ImportError:
        return
    fig, ax = plt.subplots(1, 5, figsize=(25, 4))
    med = lambda xs: statistics.median(xs) if xs else 0
    colors = {"none": "grey", "ftc": "tab:green", "remote": "tab:blue"}
    for s in ("none", "ftc", "remote"):
        ys = [med([r["fps"] for r in rows if r["part"] == "length" and r["system"] == s and
                   r["length"] == n]) for n in a.lengths]
        ax[0].plot(a.lengths, ys, "o-", label=s, color=colors[s])
        ys = [med([r["fps"] for r in rows if r["part"] == "bytes" and r["system"] == s and
                   r["bytes"] == b]) for b in a.bytes]
        ax[2].plot(a.bytes, ys, "o-", label=s, color=colors[s])
    ax[0].set(xlabel="NFs in the chain", ylabel="frames/s", title="Fig 9: length (f = 1)")
    ax[2].set(xlabel="bytes of state updated per packet", ylabel="frames/s",
              title="Fig 5: state updated", xscale="log")
    lat = [r for r in rows if r["part"] == "latency"]
    if lat:
        ss = [s for s in ("none", "ftc", "remote") if any(r["system"] == s for r in lat)]
        ax[1].bar(ss, [med([r["lat_p50_us"] for r in lat if r["system"] == s]) for s in ss],
                  color=[colors[s] for s in ss])
        ax[1].set(ylabel="p50 latency (us)", title=f"Fig 10: latency, 3 NFs, {a.pace_fps} fps")
    fr = [r for r in rows if r["part"] == "f"]
    if fr:
        labels = ["none"] + [f"f={f}" for f in (1, 2, 3)]
        ys = [med([r["fps"] for r in fr if r["system"] == "none"])] + [
            med([r["fps"] for r in fr if r["system"] == "ftc" and r["f"] == f]) for f in (1, 2, 3)]
        ax[3].bar(labels, ys, color=["grey"] + ["tab:green"] * 3)
        ax[3].set(ylabel="frames/s", title="Fig 12: f, 3 NFs")
    for s in ("ftc", "remote", "none"):
        pts = [r for r in tl if r["system"] == s]
        if pts:
            ax[4].plot([r["t_ms"] for r in pts], [r["frames"] * 100 for r in pts], label=s,
                       color=colors[s])
    ax[4].axvline(0, color="red", lw=0.8)
    ax[4].set(xlabel="ms after the kill", ylabel="frames/s at the sink (10 ms bins)",
              title="recovery after a node kill")
    for x in (ax[0], ax[2], ax[4]):
        x.legend()
    fig.tight_layout()
    fig.savefig(os.path.join(a.out, "ftc.png"), dpi=100)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--parts", default="length,latency,bytes,f,recovery")
    ap.add_argument("--rounds", type=int, default=1)
    ap.add_argument("--copies", type=int, default=200)
    ap.add_argument("--lengths", default="2,3,4,5")
    ap.add_argument("--bytes", default="8,64,256,1024")
    ap.add_argument("--pace-fps", type=int, default=2000)
    ap.add_argument("--fo-fps", type=int, default=2000)
    ap.add_argument("--out", default=os.path.join(HERE, "results", "ftc"))
    a = ap.parse_args()
    a.parts = a.parts.split(",")
    a.lengths = [int(x) for x in a.lengths.split(",")]
    a.bytes = [int(x) for x in a.bytes.split(",")]
    os.makedirs(a.out, exist_ok=True)
    frames = rc.tagged_input(traces.trace("smtp.pcap"), a.copies, flows_per_copy=True)
    slow = rc.tagged_input(traces.trace("smtp.pcap"), max(2, a.copies // 5), flows_per_copy=True)
    rows, tl = [], []
    L = lab.Lab("bench_ftc")
    k = 0
    try:
        for rnd in range(a.rounds):
            for s in ("none", "ftc", "remote"):
                if "length" in a.parts:
                    for n in a.lengths:
                        k += 1
                        rows.append(tput(L, a, k, frames, "length", rnd, s, n))
                if "latency" in a.parts:
                    k += 1
                    rows.append(latency(L, a, k, slow, rnd, s))
                if "bytes" in a.parts:
                    for b in a.bytes:
                        k += 1
                        rows.append(tput(L, a, k, frames, "bytes", rnd, s, 3, wide=b))
            if "f" in a.parts:
                k += 1
                rows.append(tput(L, a, k, frames, "f", rnd, "none", 3))
                for f in (1, 2, 3):
                    k += 1
                    rows.append(tput(L, a, k, frames, "f", rnd, "ftc", 3, f=f))
        if "recovery" in a.parts:
            for s in ("ftc", "remote", "none"):
                k += 1
                tl += recovery(L, a, k, slow, s)
    finally:
        L.cleanup()
    for r in rows:
        base = next((b for b in rows if b["part"] == r["part"] and b["round"] == r["round"] and
                     b["system"] == "none" and b.get("length") == r.get("length") and
                     b.get("bytes") == r.get("bytes")), None)
        if base and base["fps"] and r["part"] != "latency":
            r["ratio"] = round(r["fps"] / base["fps"], 3)
    report.write_csv(os.path.join(a.out, "ftc.csv"), FIELDS, rows)
    if tl:
        report.write_csv(os.path.join(a.out, "ftc_timeline.csv"), TL_FIELDS, tl)
    text = summarize(a, rows, tl)
    with open(os.path.join(a.out, "ftc_summary.txt"), "w") as f:
        f.write(text + "\n")
    print(text)
    plot(a, rows, tl)


if __name__ == "__main__":
    main()
