#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 REINFORCE-NFV authors
"""Failover -> protected again, with no operator, over many kills.

The four-node lab run by its control plane (python/onvm/cluster_lab.py):
a three-member etcd on loopback, an agent beside the predecessor and each
chain node, BFD (10 ms x 3) on both of the predecessor's links, both chain
nodes' standby configurations with "reprotect", a chain of
simple_forward fed at --rate frames/s by a paced source.  Each kill
SIGKILLs the manager of the chain's current primary (its agent lives on:
the machine is up); nothing else is done by hand: BFD's Down asks the
predecessor's agent, which promotes the synced standby in etcd and has
its manager fail over; it then places the dead node as the new standby,
whose agent runs its --on-standby hook (the harness, playing systemd,
starts that node's standby configuration at the epoch the hook names);
the new standby's agent reports it ready, the predecessor's agent has the
chain protected again, the new standby syncs by a full cut and its agent
reports it synced.  Then the next kill, of the other node.  Measured per
kill, on CLOCK_MONOTONIC (the nodes' and this harness', one clock here;
what the harness polls, every 10 ms, may be up to 10 ms late, and it
polls only once the killed manager is reaped):

  kill -> failover     the agent asked the predecessor's manager to fail
                       over (failover_req_ns: the same clock): BFD, the
                       promotion in etcd, the request; split into kill ->
                       asked (BFD's Down: failover_wanted_ns) and asked ->
                       failover (the agent: etcd's promotion, the request)
  kill -> restarted    the hook's request seen and the node's standby
                       manager seen ready by the harness (a service
                       manager starting onvm_mgr and its NFs; its
                       readiness polled every 50 ms, so late by up to that)
  kill -> protected    etcd names the new standby synced: the chain can
                       lose its new primary again

With --spare, a fifth node, a spare, is on the primary's side
(remote_lab.build(spare=True): the predecessor's primary link and the sync
link are switches that reach it; the agents say their segments): the
first re-protection places the spare, not the dead node, and later ones
whichever node on the other side than the new primary comes first (a
fenced one last, then by name).

Only the manager is killed: the machine and its agent stay up (the agent
takes its manager for gone after 0.5 s of silence), and the harness,
playing the service manager, restarts it at once -- about 0.5 s of the
time to protected is that start-up.  The chain is simple_forward
(no NF state: its full cut is small); that re-protection keeps stateful
NFs' state exact is the tests' (test_remote_chain.py reprotect,
reprotect_restarts).

At the end every frame the sink got is checked against the input: none
twice, none not sent; what a kill lost (the dead primary's tail) is
counted.

usage: bench/cluster_reprotect.py [--kills 20] [--rate 1500] [--spare] [--results DIR]
Writes bench/results/cluster_reprotect.csv, cluster_reprotect_summary.txt
and cluster_reprotect.png (cluster_reprotect_spare.* with --spare).
"""
import argparse
import os
import signal
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "python"))
from onvm import cluster_lab, etcd_lab, lab, pcap, report, traces  # noqa: E402
from onvm import remote_lab as rc  # noqa: E402

RESULTS = os.path.join(HERE, "results")
FIELDS = ["kill", "killed", "new_standby", "epoch", "failover_ms", "asked_ms", "asked_to_failover_ms",
          "restarted_ms", "protected_ms", "full_cuts"]
TIMES = ["failover_ms", "asked_ms", "asked_to_failover_ms", "restarted_ms", "protected_ms"]
POLL_S = 0.01


def until(what, cond, timeout=120):
    """The CLOCK_MONOTONIC time cond() first held (polled every POLL_S)."""
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if cond():
            return time.monotonic()
        time.sleep(POLL_S)
    raise lab.TestFailure(f"timed out after {timeout} s waiting for {what}")


def one_kill(rl, k):
    name, node = rl.primary()
    other = rl.roles()["synced"][0]  # (the standby that takes over)
    released = rc.remote(node)["out_released"]
    # some traffic through the pair first (and, after a re-protection, a
    # second of it: the new standby past its first cuts)
    until("traffic through the pair",
          lambda: rc.remote(node)["out_released"] >= released + rl.rate // 2)
    fo = rc.remote(rl.pred)["failovers"]
    t0_ns = time.monotonic_ns()
    t0 = t0_ns / 1e9
    node.stop(sig=signal.SIGKILL)
    node.remove_runtime()
    until("the failover", lambda: rc.remote(rl.pred)["failovers"] > fo)
    started = []
    t_up = until("a node named the new standby and started",
                 lambda: started.append(rl.serve_hooks()) or started[-1] is not None)
    new = started[-1]
    t_prot = until("protected again", lambda: rl.roles()["synced"] == [new])
    roles, p = rl.roles(), rc.remote(rl.pred)
    lab.check(roles["primary"] == other and roles["standbys"] == [new] and
              (rl.spare or new == name), f"kill {k}: roles {roles}")
    ms = lambda t: round((t - t0) * 1000, 1)
    return {"kill": k, "killed": name, "new_standby": new, "epoch": roles["epoch"],
            "failover_ms": round((p["failover_req_ns"] - t0_ns) / 1e6, 1),
            "asked_ms": round((p["failover_wanted_ns"] - t0_ns) / 1e6, 1),
            "asked_to_failover_ms": round((p["failover_req_ns"] - p["failover_wanted_ns"]) / 1e6,
                                          1),
            "restarted_ms": ms(t_up), "protected_ms": ms(t_prot),
            "full_cuts": rc.remote(rl.nodes[other])["full_cuts"]}


def summarize(rows, lost, dup, n):
    lines = []
    for f in TIMES:
        xs = [r[f] for r in rows]
        lines.append(f"{f:26s} n={len(xs):3d}  p50 {report.pct(xs, 50):8.1f}  p99 "
                     f"{report.pct(xs, 99):8.1f}  max {max(xs):8.1f}")
    lines.append(f"frames: {n} sent, {dup} twice at the sink, {lost} lost over "
                 f"{len(rows)} kills (bound per kill: {rc.STAGES * rc.STAGE_PACKETS + 64})")
    return "\n".join(lines)


def plot(rows, path):
    try:
        plt = report.pyplot()
    except ImportError:
        print("matplotlib missing: no plot", file=sys.stderr)
        return
    fig, ax = plt.subplots(figsize=(6, 4))
    for f, label in (("failover_ms", "failed over"), ("restarted_ms", "standby restarted"),
                     ("protected_ms", "protected again")):
        xs = sorted(r[f] for r in rows)
        ax.plot(xs, [(i + 1) / len(xs) for i in range(len(xs))], marker=".", label=label)
    ax.set_xscale("log")
    ax.set_xlabel("ms after the primary's manager was killed")
    ax.set_ylabel("fraction of kills")
    ax.legend(fontsize=8)
    ax.set_title(f"Failover and re-protection with etcd and agents, {len(rows)} kills",
                 fontsize=9)
    fig.tight_layout()
    fig.savefig(path, dpi=120)


def main(L, args):
    etcd_lab.require()
    # long enough for every kill (about 3 s each) and the start
    copies = (args.kills * 3 + 15) * args.rate // 95 + 1
    frames = rc.tagged_input(traces.trace("smtp.pcap"), copies)
    n = len(frames)
    ec = etcd_lab.EtcdCluster(L, tag="brp").start()
    rl = cluster_lab.ReprotectLab(L, ec, frames, "_b", args.rate, spare=args.spare)
    rl.start()
    rows = []
    for k in range(args.kills):
        rows.append(one_kill(rl, k))
        report.log(str(rows[-1]))
        lab.check(rc.remote(rl.pred)["stamped"] < n, "the input ended before the last kill: "
                  "raise the input")
    until("the input done", lambda: rc.remote(rl.pred)["stamped"] >= n, 600)
    _, node = rl.primary()

    def drained():
        a = rc.remote(node)["out_released"]
        time.sleep(0.3)
        return rc.remote(node)["out_released"] == a
    until("the output drained", drained)
    rl.stop()
    ec.stop()
    sent = {rc.tag_of(f): bytes(f) for f in frames}
    seen, dup = set(), 0
    for cap in ("sink-m_b.pcap", "sink-s_b.pcap") + (("sink-x_b.pcap",) if args.spare else ()):
        for f in pcap.read_capture_out(L.path(cap)):
            t = rc.tag_of(f)
            lab.check(sent.get(t) == bytes(f), f"{cap}: frame {t} not of the input")
            dup += t in seen
            seen.add(t)
    lost = n - len(seen)
    lab.check(dup == 0, f"{dup} frames reached the sink twice")
    lab.check(lost <= args.kills * (rc.STAGES * rc.STAGE_PACKETS + 64),
              f"{lost} frames lost over {args.kills} kills")
    os.makedirs(args.results, exist_ok=True)
    out = os.path.join(args.results, "cluster_reprotect" + ("_spare" if args.spare else ""))
    report.write_csv(out + ".csv", FIELDS, rows)
    text = summarize(rows, lost, dup, n)
    print(text)
    with open(out + "_summary.txt", "w") as f:
        f.write(f"# bench/cluster_reprotect.py --kills {args.kills} --rate {args.rate}"
                f"{' --spare' if args.spare else ''} ({report.repo_state()}); ms after the "
                f"kill\n{text}\n")
    plot(rows, out + ".png")


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--kills", type=int, default=20)
    ap.add_argument("--rate", type=int, default=1500, help="the input's frames/s")
    ap.add_argument("--spare", action="store_true",
                    help="a fifth node, a spare, on the primary's side")
    ap.add_argument("--results", default=RESULTS)
    a = ap.parse_args()
    lab.run("cluster_reprotect", lambda L: main(L, a))
