#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 REINFORCE-NFV authors
"""The cluster control plane's cost on the data path: throughput of a
protected chain with and without etcd and its agents, in one run.

The four-node lab of python/onvm/remote_lab.py (predecessor, primary,
standby, sink; veth pairs driven by net_af_packet), the chain
simple_forward under remote resiliency, the tagged trace (smtp.pcap x
--copies: 200, 19 000 frames, about 0.1 s; 4000, 380 000 frames, about
2 s -- several of the agents' etcd reads and a lease renewal's share)
as fast as the predecessor reads it.  Modes,
interleaved round by round on the same machine:

  none      the same lab with no remote resiliency (the predecessor and
            the primary just forward): the baseline
  remote    remote resiliency, roles from each node's configuration only
  cluster   the same, with "failover_by": "agent", a three-member etcd on
            loopback, an agent beside the predecessor and each chain node
            (polling its manager's telemetry every 10 ms, renewing its
            lease), the chain declared with onvmctl before the input starts

Rate = frames at the sink over the span of its capture's timestamps (as
bench/remote_tput.py).  The claim is "none": the data plane never waits on
etcd -- cluster / remote per round near 1.  On this machine's two cores the
control plane's processes compete for CPU with the managers, which is what
the ratio also shows.

usage: bench/cluster_cost.py [--rounds 5] [--copies 200] [--results DIR]
Writes bench/results/cluster_cost.csv, cluster_cost_summary.txt and
cluster_cost.png.
"""
import argparse
import json
import os
import statistics
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "python"))
sys.path.insert(0, HERE)
from onvm import cluster_lab, etcd_lab, lab, report, traces  # noqa: E402
from onvm import remote_lab as rc  # noqa: E402
from remote_tput import FWD, pcap_times, rate, wait_sink  # noqa: E402

RESULTS = os.path.join(HERE, "results")
MODES = ("none", "remote", "cluster")


def one(L, frames, tag, mode):
    """One pass; returns (frames/s at the sink, frames there)."""
    n = len(frames)
    cluster = mode == "cluster"
    sink, standby, primary, pred = rc.build(L, frames, tag, remote=mode != "none", nfs=FWD,
                                            paced=False,
                                            failover_by="agent" if cluster else None)
    rc.NODES[:] = [pred, primary, standby, sink]
    for node in (sink, standby, primary):
        node.start(wait=False)
    for node in (sink, standby, primary):
        node.wait_ready(120)
    ec, agents = None, []
    if cluster:
        ec = etcd_lab.EtcdCluster(L, tag=f"c{tag}").start()
        c = ec.client()
        # (the predecessor's agent before its manager: it retries until the
        # manager answers, and the input starts with the manager)
        agents = [cluster_lab.agent(L, ec, name, node, tag)
                  for name, node in (("primary", primary), ("standby", standby),
                                     ("pred", pred))]
        lab.wait_until(lambda: set(c.nodes()) == {"pred", "primary", "standby"}, 30,
                       "the agents registered")
        code, out = cluster_lab.onvmctl(ec, "declare", "web", json.dumps(cluster_lab.SPEC))
        lab.check(code == 0, f"declared: {out}")
        c.close()
    pred.start()
    wait_sink(sink, n, tag)
    if cluster:
        st = cluster_lab.agent_status(agents[2])
        lab.check(st.get("registered") and st.get("etcd_waits", 0) == 0,
                  f"the predecessor's agent: {st}")
    for p in agents:
        p.terminate()
        p.wait(10)
    for node in (pred, standby, primary, sink):
        node.stop()
    if ec is not None:
        ec.stop()
    times = pcap_times(L.path(f"sink-m{tag}.pcap"))
    return rate(times), len(times)


def main(L, args):
    etcd_lab.require()
    frames = rc.tagged_input(traces.trace("smtp.pcap"), args.copies, flows_per_copy=True)
    rows = []
    for r in range(args.rounds):
        got = {}
        for mode in MODES:
            fps, nframes = one(L, frames, f"{mode[0]}{r}", mode)
            got[mode] = fps
            rows.append({"round": r, "mode": mode, "fps": round(fps), "frames": nframes})
            report.log(f"round {r} {mode}: {fps:.0f} frames/s, {nframes} frames")
        for row in rows[-len(MODES):]:
            row["ratio_to_remote"] = round(row["fps"] / got["remote"], 3) if got["remote"] else ""
            row["ratio_to_none"] = round(row["fps"] / got["none"], 3) if got["none"] else ""
    os.makedirs(args.results, exist_ok=True)
    report.write_csv(os.path.join(args.results, "cluster_cost.csv"),
                     ["round", "mode", "fps", "frames", "ratio_to_remote", "ratio_to_none"], rows)
    lines = []
    for mode in MODES:
        fps = [x["fps"] for x in rows if x["mode"] == mode]
        ratios = [x["ratio_to_remote"] for x in rows if x["mode"] == mode]
        lines.append(f"{mode:8s} median {statistics.median(fps):8.0f} frames/s; per round "
                     f"/ remote {ratios}, median {statistics.median(ratios):.3f}")
    text = "\n".join(lines)
    print(text)
    with open(os.path.join(args.results, "cluster_cost_summary.txt"), "w") as f:
        f.write(f"# bench/cluster_cost.py --rounds {args.rounds} --copies {args.copies} "
                f"({report.repo_state()}); "
                f"simple_forward, {len(frames)} frames as fast as read\n{text}\n")
    try:
        plt = report.pyplot()
    except ImportError:
        print("matplotlib missing: no plot", file=sys.stderr)
        return
    fig, ax = plt.subplots(figsize=(5, 3.5))
    for i, mode in enumerate(MODES):
        ys = [x["fps"] / 1000 for x in rows if x["mode"] == mode]
        ax.scatter([i] * len(ys), ys, s=14)
        ax.plot([i - 0.2, i + 0.2], [statistics.median(ys)] * 2, color="black")
    ax.set_xticks(range(len(MODES)))
    ax.set_xticklabels(["no resiliency", "remote", "remote + etcd,\nagents"])
    ax.set_ylabel("k frames/s at the sink")
    ax.set_ylim(bottom=0)
    ax.set_title(f"Control plane's cost on the data path, {args.rounds} rounds", fontsize=9)
    fig.tight_layout()
    fig.savefig(os.path.join(args.results, "cluster_cost.png"), dpi=120)


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--copies", type=int, default=200, help="copies of the trace per pass")
    ap.add_argument("--results", default=RESULTS)
    a = ap.parse_args()
    lab.run("cluster_cost", lambda L: main(L, a))
