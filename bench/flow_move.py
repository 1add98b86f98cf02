#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 REINFORCE-NFV authors
"""Flow migration: move time and the moved flows' added latency,
reprocessing against OpenNF's buffering, in one run.

The lab: three network namespaces -- the source, the node and the sink --
linked by veth pairs; the node's two ports are net_af_packet on its ends.
tests/integration/paced_source.py sends a made-up capture into the node
at a fixed rate: N UDP flows (198.18.0.0/15 addresses), round robin, 64
bytes a frame, each frame's source MAC 02:00 + its number.  The chain is
load_balancer x2 (transparent mode: a backend drawn per flow through
libnf's ND helper, the flow's state in a libnf flow table).  bench/sniff.py
timestamps every frame in the kernel as it leaves the source and as it
reaches the sink (CLOCK_REALTIME in both namespaces): a frame's latency
is the difference, measured outside the system.

Once every flow has had a frame (and 0.5 s more), the flows of the
balancer of rank 0 -- about half -- move to the other (/onvm/move, "all"
of its buckets), by one method, split into K moves at once (disjoint
bucket ranges).  Per run:
  move_ms      /onvm/move to the last move's DONE (the manager's clock),
               and its parts: export (START reached the source and it
               wrote the state), import (the destination took it in),
               flip (the bucket table changed);
  p50/p99      of the moved flows' frames sent while the move ran (from
               the command to DONE + 5 ms), and of the same flows' frames
               in the 0.5 s before it (base): added = move - base;
  lost         frames sent that never reached the sink (all flows).

Parts (--parts, default all):
  flows   N = 100, 1 000, 10 000 (--flows) at --rate (20 kpps: the
          paper's) and at --rate-low, one move, both methods: the
          paper's Figs 2, 4 and 5a;
  conc    1, 5, 10, 20 moves at once (--conc), N = 1 000: Fig 5b;
  scale   the balancers scaled 2 -> 3 at 2 s and back at 4 s under a
          steady --rate of N = 1 000 flows, and the same input without
          scaling: the sink's throughput and latency per 50 ms, frames
          lost, each step's time (flow_move_scale*.csv, .png);
  xnode   across nodes: the same move (rank 0's flows, N = --flows at
          --rate, both methods) to the balancer of a second node linked
          by a veth pair (af_packet ports marked "peer"), and on one node
          in the same run (flow_move_xnode*.csv, .png).
Each configuration runs --reps times (default 3); the CSV has every run,
the plot the medians.  Writes flow_move.csv, flow_move_summary.txt and
flow_move.png into bench/results/ (or --out).
"""
import argparse
import csv
import os
import statistics
import struct
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "python"))

from onvm import flowhash, lab, pcap, report  # noqa: E402
from onvm import remote_lab as rc  # noqa: E402
from onvm.balancer import write_config  # noqa: E402

sys.path.insert(0, HERE)
import remote_tput as rt  # noqa: E402

PACED = os.path.join(HERE, "..", "tests", "integration", "paced_source.py")
FIELDS = ["part", "method", "flows", "rate", "moves", "failed", "rep", "moved_flows", "move_ms",
          "export_ms", "import_ms", "flip_ms", "copies", "base_p50_us", "base_p99_us",
          "move_p50_us", "move_p99_us", "added_p50_us", "added_p99_us", "frames_in_move",
          "sent", "lost"]
SRC_IP = bytes([198, 18, 0, 0])
DST_IP = bytes([198, 19, 0, 1])


def flow_key(i):
    src = bytes([198, 18, (i >> 8) & 0xFF, i & 0xFF])
    return src, DST_IP, 17, 1024 + (i >> 16), 5000


def frame(k, i):
    """Frame number k (1-based) of flow i: Ethernet, IPv4, UDP, 64 bytes."""
    src, dst, _, sport, dport = flow_key(i)
    udp = struct.pack("!HHHH", sport, dport, 8 + 14, 0) + b"\0" * 14
    ip = bytearray(struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + len(udp), k & 0xFFFF, 0, 64, 17,
                               0, src, dst))
    ip[10:12] = struct.pack("!H", rc.ip_checksum(bytes(ip)))
    eth = b"\x02\x00\x00\x00\x00\x01" + b"\x02\x00" + struct.pack(">I", k) + b"\x08\x00"
    return eth + bytes(ip) + udp


def make_input(path, flows, rate, seconds):
    n = int(rate * seconds)
    pcap.write_pcap(path, [frame(k + 1, k % flows) for k in range(n)])
    return n


def read_sniff(path):
    out = {}
    with open(path) as f:
        for line in f:
            w = line.split()
            if len(w) == 2:
                out.setdefault(int(w[1]), int(w[0]))
    return out


def lab_topology(L, tag, peer=False):
    ns = {k: L.netns(k + tag) for k in ("g", "n", "k") + (("b",) if peer else ())}
    rc.link(L, ns["g"], "g_n", ns["n"], "n_g")
    rc.link(L, ns["n"], "n_k", ns["k"], "k_n")
    if peer:  # (a second node, for moves across nodes)
        rc.link(L, ns["n"], "n_b", ns["b"], "b_n")
    return ns


def start_node(L, ns, tag, peer=False):
    """The node: in and out on af_packet, load_balancer x2 between (and,
    `peer`, port 2 to the second node)."""
    conf = L.path(f"{tag}-lb.json")
    write_config(conf)
    ports = [{"name": "in", "dev": rc.af(0, "n_g", rc.BIG)},
             {"name": "out", "dev": rc.af(1, "n_k", rc.BIG)}]
    if peer:
        ports.append({"name": "peer", "dev": rc.af(2, "n_b", rc.BIG), "peer": True})
    return L.node(f"mv{len(L.nodes)}", {
        "ports": ports,
        "nfs": [{"binary": "load_balancer", "service": 1, "instances": 2,
                 "args": ["-c", conf, "-p", "0"]}],
        "chains": [{"name": "c", "services": [1], "ingress_port": "in", "exit_port": "out"}],
    }, netns=ns["n"]).start()


def start_peer(L, ns, tag):
    """The second node: one balancer, its port to the first marked peer."""
    conf = L.path(f"{tag}-lb-b.json")
    write_config(conf)
    return L.node(f"mvb{len(L.nodes)}", {
        "ports": [{"name": "link", "dev": rc.af(0, "b_n", rc.BIG), "peer": True}],
        "nfs": [{"binary": "load_balancer", "service": 1, "args": ["-c", conf, "-p", "0"],
                 "peer_only": True}],
    }, netns=ns["b"]).start()


def one(L, ns, part, method, flows, rate, moves, rep, peer=False):
    tag = f"{part}-{method}-{flows}-{rate}-{moves}-{rep}{'-peer' if peer else ''}"
    warm = max(1.0, 1.3 * flows / rate) + 0.5
    seconds = warm + 2.5
    path = L.path(f"{tag}.pcap")
    sent = make_input(path, flows, rate, seconds)
    node = start_node(L, ns, tag, peer)
    inst = sorted(node.nf_by(service=1), key=lambda nf: nf["rank"])
    src, dst = inst[0]["instance"], inst[1]["instance"]
    other = None
    if peer:  # (rank 0's flows to the second node's balancer instead)
        other = start_peer(L, ns, tag)
        dst = f"2:{other.nf_by(service=1)[0]['instance']}"
        lab.wait_until(lambda: node.link_up(2), 30, f"{tag}: the link to the second node")
    files = (L.path(f"{tag}-src.txt"), L.path(f"{tag}-sink.txt"))
    sn = [rt.sniffer(L, ns["g"], "g_n", files[0], "tags"),
          rt.sniffer(L, ns["k"], "k_n", files[1], "tags")]
    log = L.path(f"{tag}-paced.txt")
    source = L.spawn(f"paced-{tag}", lab.in_netns(ns["g"], [
        "/usr/bin/python3", PACED, "g_n", path, "--rate", str(rate), "--log", log]))
    time.sleep(warm)
    t0 = time.time()
    slots = []
    for k in range(moves):
        lo, hi = k * 1024 // moves, (k + 1) * 1024 // moves - 1
        r = node.query(f"/onvm/move,1,{src},{dst},b:{lo}-{hi},{method}")
        lab.check("slot" in r, f"{tag}: /onvm/move refused: {r}")
        slots.append(r["slot"])
    figs = []
    for s in slots:
        lab.wait_until(lambda: node.query(f"/onvm/moves,{s}")["state"] in ("done", "failed"),
                       30, f"{tag}: move {s} over", interval=0.01)
        figs.append(node.query(f"/onvm/moves,{s}"))
    bad = [f for f in figs if f["state"] != "done"]
    if bad:  # (a result too: counted, the timing from those done)
        report.log(f"{tag}: {len(bad)} of {len(figs)} moves failed: "
                   f"{sorted({f['fail'] for f in bad})}")
    figs = [f for f in figs if f["state"] == "done"] or [dict(figs[0], done_us=0)]
    source.wait(seconds + 30)
    time.sleep(0.5)
    for p in sn:
        rt.stop_sniffer(p)
    node.stop()
    if other is not None:
        other.stop()
    # Times from the manager's clock: with several moves, from the first
    # one's start to the last one's end.
    first = min(f["t_start_ns"] for f in figs)
    done = max(f["t_start_ns"] - first + f["done_us"] * 1000 for f in figs) / 1e6
    t_src, t_sink = read_sniff(files[0]), read_sniff(files[1])
    moved = {i for i in range(flows) if flowhash.rank(*flow_key(i), 2) == 0}
    base, during = [], []
    w0, w1 = t0 * 1e9, (t0 + done / 1e3 + 0.005) * 1e9
    for k, ts in t_src.items():
        if (k - 1) % flows not in moved or k not in t_sink:
            continue
        if w0 - 0.5e9 <= ts < w0:
            base.append((t_sink[k] - ts) / 1e3)
        elif w0 <= ts < w1:
            during.append((t_sink[k] - ts) / 1e3)
    lost = sum(1 for k in t_src if k not in t_sink)
    pct = lambda v, p: report.pct(v, p) if v else float("nan")
    row = {
        "part": part, "method": method, "flows": flows, "rate": rate, "moves": moves,
        "failed": len(bad), "rep": rep, "moved_flows": sum(f["exported_flows"] for f in figs),
        "move_ms": round(done, 3),
        "export_ms": round(max(f["export_us"] for f in figs) / 1e3, 3),
        "import_ms": round(max(f["import_us"] for f in figs) / 1e3, 3),
        "flip_ms": round(max(f["flip_us"] for f in figs) / 1e3, 3),
        "copies": sum(f["copies"] for f in figs),
        "base_p50_us": round(pct(base, 50), 1), "base_p99_us": round(pct(base, 99), 1),
        "move_p50_us": round(pct(during, 50), 1), "move_p99_us": round(pct(during, 99), 1),
        "frames_in_move": len(during), "sent": len(t_src), "lost": lost,
        "where": "peer" if peer else "local",
    }
    row["added_p50_us"] = round(row["move_p50_us"] - row["base_p50_us"], 1)
    row["added_p99_us"] = round(row["move_p99_us"] - row["base_p99_us"], 1)
    report.log(f"{tag}: moved {row['moved_flows']} flows in {row['move_ms']} ms (export "
               f"{row['export_ms']}, import {row['import_ms']}, flip {row['flip_ms']}), "
               f"p50 {row['base_p50_us']} -> {row['move_p50_us']} us, p99 "
               f"{row['base_p99_us']} -> {row['move_p99_us']} us over "
               f"{row['frames_in_move']} frames, lost {lost} of {len(t_src)} sent "
               f"({sent} in the input)")
    return row


SCALE_FIELDS = ["run", "t_ms", "rx_pps", "p50_us", "p99_us", "instances"]
SCALE_SUM_FIELDS = ["run", "rate", "flows", "sent", "lost", "out_ms", "in_ms", "out_flows",
                    "out_held", "in_flows", "p50_us", "p99_us"]
BIN_MS = 50


def scale_run(L, ns, rate, flows, scaled, rep):
    """The balancers 2 -> 3 at 2 s and 3 -> 2 at 4 s under a steady input
    (`scaled`), or left at 2 (the baseline, same input): the sink's
    throughput and latency per BIN_MS, and what the steps took."""
    tag = f"scale-{'on' if scaled else 'off'}-{rep}"
    seconds = 6.0
    path = L.path(f"{tag}.pcap")
    make_input(path, flows, rate, seconds)
    node = start_node(L, ns, tag)
    files = (L.path(f"{tag}-src.txt"), L.path(f"{tag}-sink.txt"))
    sn = [rt.sniffer(L, ns["g"], "g_n", files[0], "tags"),
          rt.sniffer(L, ns["k"], "k_n", files[1], "tags")]
    source = L.spawn(f"paced-{tag}", lab.in_netns(ns["g"], [
        "/usr/bin/python3", PACED, "g_n", path, "--rate", str(rate), "--log",
        L.path(f"{tag}-paced.txt")]))
    t_start = time.time()
    steps, marks = [], []
    for at, n in ((2.0, 3), (4.0, 2)):
        time.sleep(max(0.0, t_start + at - time.time()))
        if not scaled:
            continue
        marks.append((time.time(), n))
        r = node.query(f"/onvm/scale,1,{n}")
        lab.check(not r.get("error"), f"{tag}: /onvm/scale,1,{n}: {r}")
        lab.wait_until(lambda: node.query("/onvm/scale,1")["phase"] == "idle", 30,
                       f"{tag}: scaled to {n}", interval=0.01)
        steps.append(node.query("/onvm/scale,1"))
        lab.check(steps[-1]["instances"] == n and not steps[-1]["last_error"],
                  f"{tag}: {steps[-1]}")
    source.wait(seconds + 30)
    time.sleep(0.5)
    for p in sn:
        rt.stop_sniffer(p)
    node.stop()
    t_src, t_sink = read_sniff(files[0]), read_sniff(files[1])
    t0 = min(t_src.values())
    bins = {}
    for k, ts in t_src.items():
        if k in t_sink:
            b = int((t_sink[k] - t0) / 1e6 // BIN_MS)
            bins.setdefault(b, []).append((t_sink[k] - ts) / 1e3)
    inst = lambda t: next((n for tm, n in reversed(marks) if t >= tm), 2)
    timeline = [{"run": tag, "t_ms": b * BIN_MS, "rx_pps": round(len(v) * 1000 / BIN_MS),
                 "p50_us": round(report.pct(v, 50), 1), "p99_us": round(report.pct(v, 99), 1),
                 "instances": inst(t0 / 1e9 + b * BIN_MS / 1e3)}
                for b, v in sorted(bins.items())]
    lat = [(t_sink[k] - ts) / 1e3 for k, ts in t_src.items() if k in t_sink]
    row = {"run": tag, "rate": rate, "flows": flows, "sent": len(t_src),
           "lost": sum(1 for k in t_src if k not in t_sink),
           "out_ms": steps[0]["last_ms"] if steps else "", "in_ms": steps[1]["last_ms"]
           if steps else "", "out_flows": steps[0]["last_flows"] if steps else "",
           "out_held": steps[0]["last_held"] if steps else "",
           "in_flows": steps[1]["last_flows"] if steps else "",
           "p50_us": round(report.pct(lat, 50), 1), "p99_us": round(report.pct(lat, 99), 1)}
    report.log(f"{tag}: lost {row['lost']} of {row['sent']}, out {row['out_ms']} ms "
               f"({row['out_flows']} of {row['out_held']} flows), in {row['in_ms']} ms "
               f"({row['in_flows']} flows), latency p50 {row['p50_us']} p99 {row['p99_us']} us")
    return timeline, row


def plot_scale(timeline, rows, path):
    plt = report.pyplot()
    fig, ax = plt.subplots(2, 1, figsize=(10, 6), sharex=True)
    for i, run in enumerate(sorted({t["run"] for t in timeline})):
        if not run.endswith("-0"):
            continue  # (the first rep of each: a timeline is one run)
        ts = [t for t in timeline if t["run"] == run]
        xs = [t["t_ms"] / 1000 for t in ts]
        ax[0].plot(xs, [t["rx_pps"] for t in ts], label=run, color=f"C{i}")
        ax[1].plot(xs, [t["p99_us"] for t in ts], label=f"{run} p99", color=f"C{i}")
        ax[1].plot(xs, [t["p50_us"] for t in ts], ":", label=f"{run} p50", color=f"C{i}")
    for x, lbl in ((2.0, "2 -> 3"), (4.0, "3 -> 2")):
        for a in ax:
            a.axvline(x, color="grey", lw=0.6, ls="--")
        ax[0].text(x, ax[0].get_ylim()[1] * 0.95, lbl, fontsize=7)
    ax[0].set_ylabel(f"frames/s at the sink ({BIN_MS} ms bins)")
    ax[1].set_ylabel("latency (us)")
    ax[1].set_yscale("log")
    ax[1].set_xlabel("s since the input started")
    for a in ax:
        a.legend(fontsize=7)
    lost = ", ".join(f"{r['run']}: {r['lost']}" for r in rows)
    fig.suptitle(f"load_balancer scaled 2 -> 3 -> 2 under load (lost: {lost})", fontsize=9)
    fig.tight_layout()
    fig.savefig(path, dpi=120)


def medians(rows, keys):
    groups = {}
    for r in rows:
        groups.setdefault(tuple(r[k] for k in keys), []).append(r)
    out = []
    for k, rs in sorted(groups.items()):
        m = dict(zip(keys, k))
        for f in ("move_ms", "added_p50_us", "added_p99_us", "move_p99_us", "lost",
                  "moved_flows", "failed"):
            vals = [float(r[f]) for r in rs if r[f] not in ("", "nan")]
            m[f] = statistics.median(vals) if vals else float("nan")
        out.append(m)
    return out


def plot(rows, path):
    plt = report.pyplot()
    fig, ax = plt.subplots(1, 3, figsize=(15, 4.2))
    fl = medians([r for r in rows if r["part"] == "flows"], ["method", "rate", "flows"])
    for i, (method, rate) in enumerate(sorted({(m["method"], m["rate"]) for m in fl})):
        ms = [m for m in fl if m["method"] == method and m["rate"] == rate]
        xs = [m["flows"] for m in ms]
        style = "-" if method == "reprocess" else "--"
        ax[0].plot(xs, [m["move_ms"] for m in ms], style, marker="o", color=f"C{i}",
                   label=f"{method}, {rate / 1000:g} kpps")
        ax[1].plot(xs, [m["added_p50_us"] for m in ms], style, marker="o", color=f"C{i}",
                   label=f"{method} p50, {rate / 1000:g} kpps")
        ax[1].plot(xs, [m["added_p99_us"] for m in ms], style, marker="^", color=f"C{i}",
                   alpha=0.6, label=f"{method} p99, {rate / 1000:g} kpps")
    for a in ax[:2]:
        a.set_xscale("log")
        a.set_xlabel("flows in the input (about half move)")
        a.legend(fontsize=7)
    ax[0].set_ylabel("move time (ms)")
    ax[0].set_title("command to DONE", fontsize=9)
    ax[1].set_ylabel("added latency of moved flows (us)")
    ax[1].set_yscale("symlog")
    ax[1].set_title("during the move minus the 0.5 s before", fontsize=9)
    cc = medians([r for r in rows if r["part"] == "conc"], ["method", "moves"])
    for i, method in enumerate(sorted({m["method"] for m in cc})):
        ms = [m for m in cc if m["method"] == method]
        ax[2].plot([m["moves"] for m in ms], [m["move_ms"] for m in ms], marker="o",
                   label=f"{method}: all moves' time")
    ax[2].set_xlabel("moves at once (disjoint buckets, same two instances)")
    ax[2].set_ylabel("ms")
    ax[2].legend(fontsize=7)
    ax[2].set_title("concurrent moves", fontsize=9)
    fig.suptitle("Flow migration: reprocessing (peer-to-peer) vs buffering (OpenNF)",
                 fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=120)


def plot_xnode(rows, path):
    plt = report.pyplot()
    fig, ax = plt.subplots(1, 2, figsize=(10, 4.2))
    ms = medians(rows, ["where", "method", "flows"])
    for i, (where, method) in enumerate(sorted({(m["where"], m["method"]) for m in ms})):
        mm = [m for m in ms if m["where"] == where and m["method"] == method]
        xs = [m["flows"] for m in mm]
        style = "-" if where == "local" else "--"
        ax[0].plot(xs, [m["move_ms"] for m in mm], style, marker="o", color=f"C{i}",
                   label=f"{method}, {'one node' if where == 'local' else 'to another node'}")
        ax[1].plot(xs, [m["added_p50_us"] for m in mm], style, marker="o", color=f"C{i}",
                   label=f"{method} p50, {'one node' if where == 'local' else 'other node'}")
    for a in ax:
        a.set_xscale("log")
        a.set_xlabel("flows in the input (about half move)")
        a.legend(fontsize=7)
    ax[0].set_ylabel("move time (ms), command to DONE")
    ax[1].set_ylabel("added latency of moved flows (us)")
    ax[1].set_yscale("symlog")
    fig.suptitle("Flow migration on one node and across two (veth, af_packet)", fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=120)


def summarize(rows, made):
    lines = [made, "medians over reps; added = during the move minus the 0.5 s before",
             f"{'part':5} {'method':9} {'flows':>6} {'kpps':>5} {'moves':>5} {'moved':>6} "
             f"{'move_ms':>8} {'+p50_us':>8} {'+p99_us':>8} {'lost':>5} {'failed':>6}"]
    for m in medians(rows, ["part", "method", "flows", "rate", "moves"]):
        lines.append(f"{m['part']:5} {m['method']:9} {m['flows']:>6} {m['rate'] / 1000:>5g} "
                     f"{m['moves']:>5} {m['moved_flows']:>6.0f} {m['move_ms']:>8.2f} "
                     f"{m['added_p50_us']:>8.1f} {m['added_p99_us']:>8.1f} "
                     f"{m['lost']:>5.0f} {m['failed']:>6.0f}")
    return "\n".join(lines)


def load(path):
    with open(path) as f:
        rows = list(csv.DictReader(f))
    for r in rows:
        for k in ("flows", "rate", "moves", "rep"):
            r[k] = int(r[k])
    return rows


def write_out(rows, out, made):
    text = summarize(rows, made)
    print(text)
    with open(os.path.join(out, "flow_move_summary.txt"), "w") as f:
        f.write(text + "\n")
    plot(rows, os.path.join(out, "flow_move.png"))


def main(L, a):
    os.makedirs(a.out, exist_ok=True)
    made = f"# made {time.strftime('%Y-%m-%d %H:%M')}, tree {report.repo_state()}"
    ns = lab_topology(L, "", peer="xnode" in a.parts)
    rows = []
    for rep in range(a.reps):
        if "flows" in a.parts:
            for rate in (a.rate, a.rate_low):
                for flows in a.flows:
                    for method in ("reprocess", "buffer"):
                        rows.append(one(L, ns, "flows", method, flows, rate, 1, rep))
        if "conc" in a.parts:
            for moves in a.conc:
                for method in ("reprocess", "buffer"):
                    rows.append(one(L, ns, "conc", method, 1000, a.rate, moves, rep))
    if rows:
        report.write_csv(os.path.join(a.out, "flow_move.csv"), FIELDS, rows)
        write_out(rows, a.out, made)
    if "xnode" in a.parts:
        xrows = []
        for rep in range(a.reps):
            for flows in a.flows:
                for method in ("reprocess", "buffer"):
                    for peer in (False, True):
                        xrows.append(one(L, ns, "xnode", method, flows, a.rate, 1, rep, peer))
        report.write_csv(os.path.join(a.out, "flow_move_xnode.csv"), FIELDS + ["where"], xrows)
        plot_xnode(xrows, os.path.join(a.out, "flow_move_xnode.png"))
        lines = [made, "medians over reps", f"{'where':6} {'method':9} {'flows':>6} "
                 f"{'moved':>6} {'move_ms':>8} {'+p50_us':>8} {'+p99_us':>8} {'lost':>5} "
                 f"{'failed':>6}"]
        for m in medians(xrows, ["where", "method", "flows"]):
            lines.append(f"{m['where']:6} {m['method']:9} {m['flows']:>6} "
                         f"{m['moved_flows']:>6.0f} {m['move_ms']:>8.2f} "
                         f"{m['added_p50_us']:>8.1f} {m['added_p99_us']:>8.1f} "
                         f"{m['lost']:>5.0f} {m['failed']:>6.0f}")
        print("\n".join(lines))
        with open(os.path.join(a.out, "flow_move_xnode_summary.txt"), "w") as f:
            f.write("\n".join(lines) + "\n")
    if "scale" in a.parts:
        timeline, srows = [], []
        for rep in range(a.reps):
            for scaled in (True, False):
                t, r = scale_run(L, ns, a.rate, 1000, scaled, rep)
                timeline += t
                srows.append(r)
        report.write_csv(os.path.join(a.out, "flow_move_scale.csv"), SCALE_SUM_FIELDS, srows)
        report.write_csv(os.path.join(a.out, "flow_move_scale_timeline.csv"), SCALE_FIELDS,
                         timeline)
        plot_scale(timeline, srows, os.path.join(a.out, "flow_move_scale.png"))
        with open(os.path.join(a.out, "flow_move_scale_summary.txt"), "w") as f:
            f.write(made + "\n")
            for r in srows:
                f.write(" ".join(f"{k}={r[k]}" for k in SCALE_SUM_FIELDS) + "\n")


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--parts", type=lambda v: v.split(","), default=["flows", "conc", "scale"])
    ap.add_argument("--flows", type=lambda v: [int(x) for x in v.split(",")],
                    default=[100, 1000, 10000])
    ap.add_argument("--rate", type=int, default=20000, help="frames/s (default 20 000)")
    ap.add_argument("--rate-low", type=int, default=5000)
    ap.add_argument("--conc", type=lambda v: [int(x) for x in v.split(",")],
                    default=[1, 5, 10, 20])
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--out", default=os.path.join(HERE, "results"))
    ap.add_argument("--replot", action="store_true", help="summary and plot from the CSV")
    a = ap.parse_args()
    if a.replot:
        write_out(load(os.path.join(a.out, "flow_move.csv")), a.out, "# replotted")
        sys.exit(0)
    lab.run("flow_move", lambda L: main(L, a))
