#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 REINFORCE-NFV authors
"""Remote failover timeline, measured over many failovers.

The four-node lab of python/onvm/remote_lab.py, test_remote_chain.py's (predecessor,
primary, standby, sink; each in its own network namespace, linked by veth
pairs driven by net_af_packet; a chain of simple_forward, no NF state).  Each
round starts fresh nodes, streams the tagged input, SIGKILLs the primary's
manager and NF at a seeded point, and asks the predecessor to fail over at
once (the operator command: detection is not part of this timeline -- BFD's
is measured by bench/bfd_detect.py).  Every node stamps its events with
CLOCK_MONOTONIC, one clock on this machine, so the intervals below are
exact:

  request -> REPLAY_START sent     (predecessor: failover_req_ns -> replay_start_ns)
  request -> takeover              (standby's replay_start_ns: the newest voted
                                    chain applied, TxTs final)
  request -> REPLAY_START echoed   (predecessor's start_echo_ns: the replay begins)
  request -> first packet in      (standby's first_in_ns: the first replayed
                                    packet its RX unit admitted into the chain)
  request -> first packet out      (standby's first_out_ns: the first output that
                                    passes its TxTs; none when the primary had
                                    released everything)
  request -> REPLAY_END sent        (predecessor's replay_end_ns)
  request -> NF's first packet      (the standby's first NF's first_pkt_ns in
                                    /onvm/nfs: it was parked until the takeover)

Each round is also checked like the test (exactly once, in order, loss only
the dead primary's tail) and its loss recorded.

Conditions, interleaved round by round (the same kill points, the same
machine load for each):
  --loads  paced: the predecessor's link to the primary paced at the lab's
           PACE (about 12 k frames/s); unpaced: the whole trace at once,
           the chain saturated, its queues full (a marker then trails the
           queue, and the standby re-runs more that was released).
  --checkpoint-ms  the primary's lazy cut periods.
  --nf-cpus  the standby's nf_defaults.cpus: 'all' (its NFs may run on the
           standby manager's CPU 0: they wait for the takeover at normal
           priority, and once woken wait for a CPU two busy managers share)
           or '1' (off CPU 0: they wait at real-time priority and run at
           once -- docs/design/remote.md; CPU 1 is the primary's and the
           predecessor's, so not a core of their own either).
Each round also fails if the standby admitted the replay with a gap: frames
the link into it lost (its RX lcore starved: af_packet has no flow control)
are sent again from the log (REPLAY_ACK; replay_rewinds, replay_timeouts and
the standby's replay_gap_drops count how often).

usage: bench/remote_failover.py [--rounds N] [--seed S] [--max-sleep-us US]
           [--loads paced,unpaced] [--checkpoint-ms MS,...] [--nf-cpus 'all;1']
           [--results DIR]
Writes bench/results/remote_failover.csv, remote_failover_summary.txt and
remote_failover.png.
"""
import argparse
import os
import random
import statistics
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "python"))
from onvm import lab, pcap, report, traces  # noqa: E402
from onvm import remote_lab as rc  # noqa: E402  (the lab's nodes and oracle)

RESULTS = os.path.join(HERE, "results")
FIELDS = ["round", "seed", "load", "checkpoint_ms", "nf_cpus", "max_sleep_us", "kill_share",
          "replayed", "replay_rewinds", "replay_timeouts", "replay_gap_drops", "covered",
          "dup", "passed", "lost",
          "req_to_start_us", "req_to_takeover_us", "req_to_echo_us", "req_to_first_in_us",
          "req_to_nf_first_us", "req_to_first_out_us", "req_to_end_us"]
TIMES = FIELDS[FIELDS.index("req_to_start_us"):]
COND = ("load", "checkpoint_ms", "nf_cpus")


def one(L, frames, rnd, k, seed, idle, cond):
    load, ckpt, nf_cpus = cond
    n = len(frames)
    tag = f"b{k}{load[0]}{ckpt}{nf_cpus}"
    sink, standby, primary, pred = rc.build(L, frames, tag, idle, checkpoint_ms=ckpt,
                                            paced=load == "paced",
                                            standby_nf_cpus=None if nf_cpus == "all" else nf_cpus)
    rc.start_all(sink, standby, primary, pred)
    share = rnd.uniform(0.05, 0.9)
    lab.wait_until(lambda: rc.remote(primary)["out_released"] >= n * share, 120,
                   "part of the input released")
    time.sleep(rnd.uniform(0, 0.02))
    primary.crash()  # the node dies whole, and the operator fails over at once
    pred.query("/onvm/remote/failover,web")
    lab.wait_until(lambda: rc.remote(pred)["state"] == "standby" and
                   rc.remote(pred)["stamped"] == n, 180, "replay and input done")
    lab.wait_until(lambda: rc.remote(standby)["state"] == "active", 60, "replay ended")
    lab.wait_until(lambda: rc.quiet(standby, sink), 30, "output drained")
    p, s = rc.remote(pred), rc.remote(standby)
    # frames of the replay lost on the link into the standby (its RX lcore
    # starved: the lab's af_packet rings have no flow control)
    gaps = s["ingress_gaps"]
    nfs = [v for v in standby.query("/onvm/nfs").values() if isinstance(v, dict)]
    nf_first = min((v["first_pkt_ns"] for v in nfs if v.get("first_pkt_ns")), default=0)
    for node in (pred, standby, sink, primary):
        node.stop()
    primary.remove_runtime()
    got_m = pcap.read_capture_out(L.path(f"sink-m{tag}.pcap"))
    got_s = pcap.read_capture_out(L.path(f"sink-s{tag}.pcap"))
    lost = rc.check_sink(L, frames, got_m, got_s,
                         allow_loss=rc.STAGES * rc.STAGE_PACKETS + 2 * 32)
    req = p["failover_req_ns"]
    us = lambda t: round((t - req) / 1000, 1) if t else ""
    L.expect(gaps == 0, f"round {k} ({cond}): {gaps} replayed frames lost on the link")
    return {"round": k, "seed": seed, "load": load, "checkpoint_ms": ckpt,
            "nf_cpus": nf_cpus, "max_sleep_us": idle["max_sleep_us"],
            "kill_share": round(share, 3), "replayed": p["replayed"],
            "replay_rewinds": p["replay_rewinds"], "replay_timeouts": p["replay_timeouts"],
            "replay_gap_drops": s["replay_gap_drops"],
            "covered": s["ingress_replay_covered"], "dup": s["out_dup"],
            "passed": s["out_passed"], "lost": lost,
            "req_to_start_us": us(p["replay_start_ns"]),
            "req_to_takeover_us": us(s["replay_start_ns"]),
            "req_to_echo_us": us(p["start_echo_ns"]),
            "req_to_first_in_us": us(s["first_in_ns"]),
            "req_to_nf_first_us": us(nf_first),
            "req_to_first_out_us": us(s["first_out_ns"]),
            "req_to_end_us": us(p["replay_end_ns"])}


def cond_of(r):
    return tuple(r[k] for k in COND)


def conditions(rows):
    return sorted({cond_of(r) for r in rows}, key=lambda c: (c[0], -c[1], c[2]))


def cond_name(c):
    return f"{c[0]} input, cut {c[1]} ms, standby NFs on CPUs {c[2]}"


def summarize(rows):
    lines = []
    for cond in conditions(rows):
        lines.append(cond_name(cond) + ":")
        lines += summarize_one([r for r in rows if cond_of(r) == cond])
    return "\n".join(lines)


def summarize_one(rows):
    lines = []
    for f in TIMES:
        xs = [r[f] for r in rows if r[f] != ""]
        if xs:
            lines.append(f"{f:22s} n={len(xs):3d}  p50 {report.pct(xs, 50):10.1f}  p90 "
                         f"{report.pct(xs, 90):10.1f}  max {max(xs):10.1f}  mean "
                         f"{statistics.mean(xs):10.1f}")
    lost = [r["lost"] for r in rows]
    lines.append(f"lost frames per failover: p50 {report.pct(lost, 50)}, max {max(lost)} "
                 f"(bound {rc.STAGES * rc.STAGE_PACKETS + 64}: stages x packets + 2 bursts)")
    return ["  " + x for x in lines]


def plot(rows, path):
    try:
        plt = report.pyplot()
    except ImportError:
        print("matplotlib missing: no plot", file=sys.stderr)
        return
    keys = [("req_to_takeover_us", "takeover"), ("req_to_first_in_us", "first in"),
            ("req_to_nf_first_us", "NF's first"), ("req_to_first_out_us", "first out")]
    conds = conditions(rows)
    fig, axes = plt.subplots(1, len(conds), figsize=(3.2 * len(conds), 4), sharey=True,
                             squeeze=False)
    for ax, cond in zip(axes[0], conds):
        data = [[r[key] / 1000 for r in rows if r[key] != "" and cond_of(r) == cond]
                for key, _ in keys]
        ax.boxplot(data, labels=[name for _, name in keys])
        for i, d in enumerate(data):
            ax.scatter([i + 1] * len(d), d, s=8, alpha=0.5)
        ax.tick_params(axis="x", labelsize=7)
        ax.set_yscale("log")
        ax.set_title(cond_name(cond), fontsize=8)
    axes[0][0].set_ylabel("ms after the failover request")
    fig.suptitle(f"Remote failover timeline, {len(rows)} SIGKILLed primaries", fontsize=9)
    fig.tight_layout()
    fig.savefig(path, dpi=120)


def main(L, args):
    frames = rc.tagged_input(traces.trace("smtp.pcap"), 400)
    idle = {"max_sleep_us": args.max_sleep_us}
    rows = []
    conds = [(ld, ck, nc) for ld in args.loads for ck in args.checkpoint_ms
             for nc in args.nf_cpus]
    for k in range(args.rounds):  # the conditions interleaved: same kill points
        for cond in conds:
            rows.append(one(L, frames, random.Random(args.seed * 1000 + k), k, args.seed,
                            idle, cond))
            print(rows[-1], flush=True)
    results = args.results
    os.makedirs(results, exist_ok=True)
    report.write_csv(os.path.join(results, "remote_failover.csv"), FIELDS, rows)
    text = summarize(rows)
    print(text)
    with open(os.path.join(results, "remote_failover_summary.txt"), "w") as f:
        f.write(f"# bench/remote_failover.py --rounds {args.rounds} --seed {args.seed} "
                f"--max-sleep-us {args.max_sleep_us} --checkpoint-ms "
                f"{','.join(map(str, args.checkpoint_ms))} --loads {','.join(args.loads)} "
                f"--nf-cpus {';'.join(args.nf_cpus)} "
                "; "
                f"times in us after the failover request (operator command)\n{text}\n")
    plot(rows, os.path.join(results, "remote_failover.png"))


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=20)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--max-sleep-us", type=int, default=1000,
                    help="every node's idle.max_sleep_us (the default 1000: each "
                         "idle hop of the failover may sleep that long)")
    ap.add_argument("--checkpoint-ms", type=lambda v: [int(x) for x in v.split(",")],
                    default=[5],
                    help="the primary's lazy cut periods to compare, comma-separated: "
                         "the standby re-runs what was released since the newest "
                         "committed cut before its first new packet")
    ap.add_argument("--nf-cpus", type=lambda v: v.split(";"), default=["all", "1"],
                    help="the standby's nf_defaults.cpus to compare, ';'-separated "
                         "('all': every CPU, the manager's lcore's included -- its NFs "
                         "then park at normal priority; '1': off the standby manager's "
                         "CPU 0 -- they park at real-time priority)")
    ap.add_argument("--loads", type=lambda v: v.split(","), default=["paced", "unpaced"],
                    help=f"paced (the lab's {rc.PACE}) and/or unpaced (see above)")
    ap.add_argument("--results", default=RESULTS,
                    help="where the CSV, summary and plot go (default bench/results)")
    a = ap.parse_args()
    lab.run("remote_failover", lambda L: main(L, a))
