#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 REINFORCE-NFV authors
"""Remote resiliency's cost: throughput, added latency against the sync
link's RTT, and throughput against the rate of ND events.

The four-node lab of python/onvm/remote_lab.py, test_remote_chain.py's (predecessor,
primary, standby, sink; each in its own network namespace, linked by veth
pairs driven by net_af_packet), every measurement against the same lab
without remote resiliency ("none": the same nodes, links and chain, the
predecessor and primary just forward) in the same run.

  tput     the tagged trace (smtp.pcap x 200, 19000 frames) as fast as the
           predecessor reads it, through simple_forward ("remote", no state)
           and basic_monitor ("remote-state", consistent cuts every 5 ms);
           rate = frames at the sink / the span of its capture's
           timestamps (frames lost to overload are in the CSV); rounds interleave
           the modes, the ratio to "none" is taken per round.
  latency  the same input paced at 20 Mbit/s (token bucket on the
           predecessor's link): per frame, the kernel's timestamp leaving
           the predecessor (sniffer on p_m) to the kernel's timestamp
           reaching the sink (sniffer on k_m); the sync link direct, or
           through faulty_link.py with a fixed one-way delay; its RTT is
           measured in the same run where the relay runs (sniffer on the
           relay's interface to the primary: PREPARE in -> VOTE out, per
           transaction; a DPDK af_packet port's own frames, qdisc bypassed,
           reach no other packet socket).
  nd       the nondet NF (state, one ND event per interval, each marking
           its packet) under remote resiliency: throughput against the ND
           interval, as a ratio to the same chain with no ND event.

Writes bench/results/remote_tput.csv, remote_latency.csv, remote_nd.csv,
remote_tput_summary.txt and remote_tput.png.

usage: bench/remote_tput.py [--rounds N] [--only tput,latency,nd]
"""
import argparse
import csv
import os
import signal
import statistics
import struct
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "python"))
from onvm import lab, report, traces  # noqa: E402
from onvm import remote_lab as rc  # noqa: E402  (the lab's nodes)

RESULTS = os.path.join(HERE, "results")
SNIFF = os.path.join(HERE, "sniff.py")
FWD = ([{"name": "fwd", "binary": "simple_forward", "service": 1}], [1])


def mon(L, tag):
    return ([{"name": "mon", "binary": "basic_monitor", "service": 1,
              "args": ["-f", "4096", "-e", L.path(f"{tag}-mon.json"), "-p", "0"]}], [1])


def nondet(mode):
    return ([{"name": "nd", "binary": "nondet", "service": 1,
              "args": ["-m", mode, "-f", "4096"]}], [1])


def pcap_times(path):
    """Capture timestamps (s) of a pcap file, in order."""
    with open(path, "rb") as f:
        data = f.read()
    if len(data) < 24:
        return []
    magic = struct.unpack_from("<I", data)[0]
    nano = magic == 0xA1B23C4D
    off, out = 24, []
    while off + 16 <= len(data):
        sec, frac, incl, _ = struct.unpack_from("<IIII", data, off)
        out.append(sec + frac / (1e9 if nano else 1e6))
        off += 16 + incl
    return out


def sniffer(L, ns, ifn, out, mode):
    p = L.spawn(f"sniff-{os.path.basename(out)}", lab.in_netns(ns, [
        "/usr/bin/python3", "-u", SNIFF, ifn, out, mode]))
    lab.wait_until(lambda: "sniffing" in L.proc_log(p) or p.poll() is not None, 10, "sniffer")
    return p


def stop_sniffer(p):
    p.send_signal(signal.SIGTERM)
    p.wait(30)


def run(L, frames, tag, remote, nfs, pace=False, faults=None, sniff=False, store=None,
        state_mb=None):
    """One pass of `frames` through the lab; returns (sink capture
    timestamps, sniff files or None, the primary's /onvm/remote or, for a
    stateless primary (`store`: its chain's store object),
    /onvm/store,c, else {})."""
    n = len(frames)
    sink, standby, primary, pred = rc.build(L, frames, tag, remote=remote, nfs=nfs, paced=pace,
                                            faults=faults, store=store, state_mb=state_mb)
    rc.NODES[:] = [pred, primary, standby, sink]
    for node in (sink, standby, primary):
        node.start(wait=False)
    for node in (sink, standby, primary):
        node.wait_ready(120)
    sn = []
    if sniff:
        files = (L.path(f"{tag}-p_m.txt"), L.path(f"{tag}-k_m.txt"), L.path(f"{tag}-m_s.txt"))
        sn = [sniffer(L, pred.ns, "p_m", files[0], "tags"),
              sniffer(L, sink.ns, "k_m", files[1], "tags")]
        # The RSync frames as the relay sees them: frames a DPDK af_packet
        # port sends with the qdisc bypassed reach no other packet socket,
        # so the primary's own interface shows no PREPARE (no RTT without
        # the relay).
        if remote and faults:
            sn.append(sniffer(L, pred.relay_ns, "f_m", files[2], "rsync"))
    pred.start()
    wait_sink(sink, n, tag)
    st = (primary.query("/onvm/remote").get("web", {}) if remote else
          primary.query("/onvm/store,c") if store else {})
    for p in sn:
        stop_sniffer(p)
    if pred.relay is not None:
        pred.relay.send_signal(signal.SIGTERM)
        pred.relay.wait(10)
    for node in (pred, standby, primary, sink):
        node.stop()
    return pcap_times(L.path(f"sink-m{tag}.pcap")), (files if sniff else None), st


def wait_sink(sink, n, tag):
    """Until all `n` frames reached the sink's in_m, or none did for a
    second (the unprotected lab drops what a full af_packet ring cannot
    take: counted by the caller)."""
    last = [-1, time.monotonic()]

    def done():
        rx = sink.port("in_m")["rx"]
        if rx != last[0]:
            last[:] = [rx, time.monotonic()]
        return rx >= n or (rx > 0 and time.monotonic() - last[1] > 1.0)
    lab.wait_until(done, 300, f"{tag}: frames at the sink", interval=0.1)


def rate(times):
    """Frames over the whole span at the sink: released stages arrive in
    bursts, so a window between percentiles can land inside one."""
    if len(times) < 100 or times[-1] <= times[0]:
        return 0.0
    return (len(times) - 1) / (times[-1] - times[0])


def pct(xs, q):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(q * len(xs)))] if xs else float("nan")


def latencies(files):
    def load(path):
        d = {}
        with open(path) as f:
            for line in f:
                ns, tag = line.split()
                d.setdefault(int(tag), int(ns))
        return d
    sent, got = load(files[0]), load(files[1])
    lat = [(got[t] - sent[t]) / 1000.0 for t in got if t in sent and got[t] >= sent[t]]
    rtt = []
    if os.path.exists(files[2]):
        prep, vote = {}, {}
        with open(files[2]) as f:
            for line in f:
                ns, d, typ, txid = line.split()
                if typ == "1":
                    prep.setdefault(txid, int(ns))  # the first PREPARE fragment
                elif typ == "2":
                    vote.setdefault(txid, int(ns))
        rtt = [(vote[t] - prep[t]) / 1000.0 for t in vote if t in prep and vote[t] > prep[t]]
    return lat, rtt


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--only", default="tput,latency,nd")
    args = ap.parse_args()
    only = set(args.only.split(","))
    os.makedirs(RESULTS, exist_ok=True)
    trace = traces.trace("smtp.pcap")
    frames = rc.tagged_input(trace, 200, flows_per_copy=True)
    slow = rc.tagged_input(trace, 40, flows_per_copy=True)
    summary = []

    def body(L):
        k = 0
        if "tput" in only:
            rows = []
            for r in range(args.rounds):
                got = {}
                for mode, remote, nfs in (("none", False, FWD), ("remote", True, FWD),
                                          ("none-state", False, None),
                                          ("remote-state", True, None)):
                    k += 1
                    times, _, st = run(L, frames, f"t{k}", remote, nfs or mon(L, f"t{k}"))
                    got[mode] = rate(times)
                    rows.append({"round": r, "mode": mode, "fps": round(got[mode]),
                                 "frames": len(times),
                                 "cuts": st.get("cuts", ""),
                                 "cuts_with_state": st.get("cuts_with_state", "")})
                    print(f"tput round {r} {mode}: {got[mode]:.0f} frames/s", flush=True)
                rows[-3]["ratio"] = round(got["remote"] / got["none"], 3) if got["none"] else ""
                rows[-1]["ratio"] = (round(got["remote-state"] / got["none-state"], 3)
                                     if got["none-state"] else "")
            report.write_csv(os.path.join(RESULTS, "remote_tput.csv"),
                             ["round", "mode", "fps", "frames", "ratio", "cuts",
                              "cuts_with_state"], rows)
            for mode, base in (("remote", "none"), ("remote-state", "none-state")):
                ratios = [x["ratio"] for x in rows if x["mode"] == mode and x["ratio"] != ""]
                fps = [x["fps"] for x in rows if x["mode"] == mode]
                bfps = [x["fps"] for x in rows if x["mode"] == base]
                summary.append(f"tput {mode}: median {statistics.median(fps):.0f} frames/s vs "
                               f"{base} {statistics.median(bfps):.0f}; ratio per round {ratios}, "
                               f"median {statistics.median(ratios):.3f}")
        if "latency" in only:
            rows = []
            for mode, remote, faults in (("none", False, None), ("remote direct", True, None),
                                         ("remote relay +0us", True, ["--seed", "1"]),
                                         ("remote relay +250us", True,
                                          ["--seed", "1", "--fixed-delay-us", "250"]),
                                         ("remote relay +1000us", True,
                                          ["--seed", "1", "--fixed-delay-us", "1000"])):
                k += 1
                _, files, _ = run(L, slow, f"l{k}", remote, FWD, pace=True, faults=faults,
                                  sniff=True)
                lat, rtt = latencies(files)
                row = {"mode": mode, "frames": len(lat),
                       "lat_p50_us": round(pct(lat, 0.5), 1), "lat_p99_us": round(pct(lat, 0.99), 1),
                       "rtt_p50_us": round(pct(rtt, 0.5), 1) if rtt else "",
                       "rtt_p99_us": round(pct(rtt, 0.99), 1) if rtt else ""}
                rows.append(row)
                print(f"latency {row}", flush=True)
            base = rows[0]
            for row in rows[1:]:
                row["added_p50_us"] = round(row["lat_p50_us"] - base["lat_p50_us"], 1)
                row["added_p99_us"] = round(row["lat_p99_us"] - base["lat_p99_us"], 1)
                summary.append(f"latency {row['mode']}: p50 {row['lat_p50_us']} us (+"
                               f"{row['added_p50_us']}), p99 {row['lat_p99_us']} us (+"
                               f"{row['added_p99_us']}); sync RTT p50 {row['rtt_p50_us']} us")
            summary.insert(len(summary) - len(rows) + 1,
                           f"latency none: p50 {base['lat_p50_us']} us, p99 {base['lat_p99_us']} us")
            report.write_csv(os.path.join(RESULTS, "remote_latency.csv"),
                             ["mode", "frames", "lat_p50_us", "lat_p99_us", "added_p50_us",
                              "added_p99_us", "rtt_p50_us", "rtt_p99_us"], rows)
        if "nd" in only:
            rows = []
            for mode in ("none", "interval:1000000", "interval:10000", "interval:1000",
                         "interval:100", "interval:10", "count:1"):
                k += 1
                times, _, st = run(L, frames, f"n{k}", True, nondet(mode))
                rows.append({"mode": mode, "fps": round(rate(times)),
                             "nd_waits": st.get("nd_waits", ""),
                             "cuts_with_state": st.get("cuts_with_state", ""),
                             "markers": st.get("markers_injected", "")})
                print(f"nd {rows[-1]}", flush=True)
            for row in rows:
                row["ratio"] = round(row["fps"] / rows[0]["fps"], 3) if rows[0]["fps"] else ""
                summary.append(f"nd {row['mode']}: {row['fps']} frames/s, ratio {row['ratio']}, "
                               f"cuts {row['cuts_with_state']}")
            report.write_csv(os.path.join(RESULTS, "remote_nd.csv"),
                             ["mode", "fps", "ratio", "nd_waits", "cuts_with_state", "markers"],
                             rows)
        with open(os.path.join(RESULTS, "remote_tput_summary.txt"), "w") as f:
            f.write("\n".join(summary) + "\n")
        print("\n".join(summary))
        plot()

    lab.run("bench_remote_tput", body)


def plot():
    try:
        plt = report.pyplot()
    except ImportError:
        return
    fig, axes = plt.subplots(1, 3, figsize=(15, 4))
    p = os.path.join(RESULTS, "remote_tput.csv")
    if os.path.exists(p):
        with open(p) as f:
            rows = list(csv.DictReader(f))
        modes = ["none", "remote", "none-state", "remote-state"]
        med = [statistics.median([float(r["fps"]) for r in rows if r["mode"] == m] or [0])
               for m in modes]
        axes[0].bar(modes, med, color=["grey", "tab:blue", "grey", "tab:orange"])
        axes[0].set_ylabel("frames/s (median of rounds)")
        axes[0].set_title("throughput, same lab")
    p = os.path.join(RESULTS, "remote_latency.csv")
    if os.path.exists(p):
        with open(p) as f:
            rows = list(csv.DictReader(f))
        xs = [float(r["rtt_p50_us"]) if r["rtt_p50_us"] else 0 for r in rows]
        axes[1].plot(xs, [float(r["lat_p50_us"]) for r in rows], "o-", label="p50")
        axes[1].plot(xs, [float(r["lat_p99_us"]) for r in rows], "s--", label="p99")
        axes[1].set_xlabel("sync link RTT p50 (us; 0 = no remote resiliency)")
        axes[1].set_ylabel("latency predecessor -> sink (us)")
        axes[1].legend()
        axes[1].set_title("latency vs sync RTT")
    p = os.path.join(RESULTS, "remote_nd.csv")
    if os.path.exists(p):
        with open(p) as f:
            rows = list(csv.DictReader(f))
        axes[2].bar([r["mode"].replace("interval:", "") for r in rows],
                    [float(r["ratio"] or 0) for r in rows])
        axes[2].set_ylabel("throughput / no ND")
        axes[2].set_xlabel("ND interval (us) / count:1 = every packet")
        axes[2].tick_params(axis="x", rotation=30)
        axes[2].set_title("ND events, remote")
    fig.tight_layout()
    fig.savefig(os.path.join(RESULTS, "remote_tput.png"), dpi=100)


if __name__ == "__main__":
    main()
