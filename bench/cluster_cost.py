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
etcd -- cluster / remote per round near 1.  --layout shared (the default)
spreads the managers over this machine's two CPUs, where the control
plane's processes compete for CPU with them, which the ratio also shows;
--layout dedicated puts every manager and NF on the last CPU and the
control plane (etcd, the agents, the managers' control threads) on the
others, as a server's housekeeping cores would.  Per pass, the agents' and
etcd's CPU while the input ran (/proc, as a share of one CPU).

usage: bench/cluster_cost.py [--rounds 5] [--copies 200] [--layout shared|dedicated]
                             [--results DIR]
Writes bench/results/cluster_cost[_dedicated].csv, _summary.txt and .png.
"""
import argparse
import json
import os
import statistics
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "python"))
sys.path.insert(0, HERE)
from onvm import cluster_lab, etcd_lab, lab, report, traces  # noqa: E402
from onvm import remote_lab as rc  # noqa: E402
from remote_tput import FWD, pcap_times, rate, wait_sink  # noqa: E402

RESULTS = os.path.join(HERE, "results")
MODES = ("none", "remote", "cluster")


def one(L, frames, tag, mode, data_cpu):
    """One pass; returns (frames/s at the sink, frames there, (agents',
    etcd's share of a CPU))."""
    n = len(frames)
    cluster = mode == "cluster"
    sink, standby, primary, pred = rc.build(L, frames, tag, remote=mode != "none", nfs=FWD,
                                            paced=False, data_cpu=data_cpu,
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
    members = [p for p in ec.procs if p is not None] if ec else []
    cpu0, t0 = (cpu_seconds(agents), cpu_seconds(members)), time.monotonic()
    pred.start()
    wait_sink(sink, n, tag)
    # the control plane's CPU while the input ran: what it took from the
    # managers on these two shared cores (a core of its own would hide it)
    span = time.monotonic() - t0
    cp_cpu = ((cpu_seconds(agents) - cpu0[0]) / span, (cpu_seconds(members) - cpu0[1]) / span)
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
    return rate(times), len(times), cp_cpu if ec else (0, 0)


def cpu_seconds(procs):
    """User + system CPU seconds the processes used so far (/proc)."""
    total = 0
    for p in procs:
        try:
            with open(f"/proc/{p.pid}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
            total += int(fields[11]) + int(fields[12])  # utime, stime
        except (OSError, IndexError, ValueError):
            pass  # (gone: its time is not counted)
    return total / os.sysconf("SC_CLK_TCK")


def main(L, args):
    etcd_lab.require()
    data_cpu = None
    if args.layout == "dedicated":
        # the data plane on the last CPU; this process and all it starts
        # (etcd, the agents, the managers' control threads) on the others
        cpus = sorted(os.sched_getaffinity(0))
        lab.check(len(cpus) >= 2, "--layout dedicated needs two CPUs")
        data_cpu = cpus[-1]
        os.sched_setaffinity(0, cpus[:-1])
    frames = rc.tagged_input(traces.trace("smtp.pcap"), args.copies, flows_per_copy=True)
    rows = []
    for r in range(args.rounds):
        got = {}
        for mode in MODES:
            fps, nframes, cp_cpu = one(L, frames, f"{mode[0]}{r}", mode, data_cpu)
            got[mode] = fps
            rows.append({"round": r, "mode": mode, "fps": round(fps), "frames": nframes,
                         "agents_cpu": round(cp_cpu[0], 4), "etcd_cpu": round(cp_cpu[1], 4)})
            report.log(f"round {r} {mode}: {fps:.0f} frames/s, {nframes} frames, "
                       f"agents {cp_cpu[0] * 100:.1f} %, etcd {cp_cpu[1] * 100:.1f} % "
                       "of a CPU")
        for row in rows[-len(MODES):]:
            row["ratio_to_remote"] = round(row["fps"] / got["remote"], 3) if got["remote"] else ""
            row["ratio_to_none"] = round(row["fps"] / got["none"], 3) if got["none"] else ""
    os.makedirs(args.results, exist_ok=True)
    suffix = "" if args.layout == "shared" else f"_{args.layout}"
    report.write_csv(os.path.join(args.results, f"cluster_cost{suffix}.csv"),
                     ["round", "mode", "fps", "frames", "agents_cpu", "etcd_cpu", "ratio_to_remote",
                      "ratio_to_none"], rows)
    lines = []
    for mode in MODES:
        fps = [x["fps"] for x in rows if x["mode"] == mode]
        ratios = [x["ratio_to_remote"] for x in rows if x["mode"] == mode]
        cpu = [statistics.median(x[k] for x in rows if x["mode"] == mode)
               for k in ("agents_cpu", "etcd_cpu")]
        lines.append(f"{mode:8s} median {statistics.median(fps):8.0f} frames/s; per round "
                     f"/ remote {ratios}, median {statistics.median(ratios):.3f}"
                     + (f"; agents {cpu[0] * 100:.1f} %, etcd {cpu[1] * 100:.1f} % of a CPU"
                        if any(cpu) else ""))
    text = "\n".join(lines)
    print(text)
    with open(os.path.join(args.results, f"cluster_cost{suffix}_summary.txt"), "w") as f:
        f.write(f"# bench/cluster_cost.py --rounds {args.rounds} --copies {args.copies} "
                f"--layout {args.layout} "
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
    ax.set_title(f"Control plane's cost on the data path, {args.rounds} rounds, "
                 f"{'data plane on a CPU of its own' if data_cpu is not None else 'shared CPUs'}",
                 fontsize=9)
    fig.tight_layout()
    fig.savefig(os.path.join(args.results, f"cluster_cost{suffix}.png"), dpi=120)


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--copies", type=int, default=200, help="copies of the trace per pass")
    ap.add_argument("--results", default=RESULTS)
    ap.add_argument("--layout", choices=("shared", "dedicated"), default="shared",
                    help="shared: managers spread over both CPUs, the control plane "
                    "among them; dedicated: the data plane on one CPU, the control "
                    "plane on the other")
    a = ap.parse_args()
    lab.run("cluster_cost", lambda L: main(L, a))
