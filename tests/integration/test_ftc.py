#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 REINFORCE-NFV authors
"""FTC: the stateful chain spread over nodes, its NFs' updates piggybacked
to the next f nodes (docs/design/ftc.md), on the lab of onvm.ftc_lab.

Scenarios (argument; none: all of them):

  steady  basic_monitor -> vlan_tagger -> load_balancer on three nodes
          with f = 1 and f = 2 (one and two replica-only nodes), 4 copies
          of ssh.pcap, each copy new flows, tagged.  Asserted: every frame
          out exactly once, in order, tagged and on one backend per flow;
          the NFs' exports exact; every packet held at the egress and
          released (none left, none dropped); each replica's copy of each
          NF's state equal to the NF's own once the input is done (a
          digest of every page on both sides); the heads' logs pruned to
          nothing by the held vector; no frame refused anywhere.
"""
import os
import sys

from onvm import ftc_lab, lab, remote_lab, traces


def wait_delivered(L, nodes, sink, n, timeout=120):
    def done():
        return ftc_lab.delivered(sink) >= n
    try:
        lab.wait_until(done, timeout, f"{n} frames at the sink")
    except lab.TestFailure:
        ftc_lab.dump(nodes)
        raise


def settled(nodes):
    """Every head's log empty and every replica caught up: the chain is
    quiet and every update is held f + 1 times."""
    for node in nodes:
        st = ftc_lab.ftc_state(node)
        if st.get("own_log_updates", 0) != 0:
            return False
        if st.get("held_packets", 0) != 0:
            return False
    return True


def replicas_equal(nodes, f):
    """[] when each replica's pages equal its NF's state (digests over the
    pages that are not all zero, on both sides), else what differs."""
    dig = [ftc_lab.digests(node) for node in nodes]
    bad = []
    for i in range(ftc_lab.NF_NODES):
        own = dig[i].get("own")
        if own is None or own.get("pages", 0) == 0:
            bad.append(f"n{i}: no digest of its NF's state: {dig[i]}")
        for r in range(i + 1, i + f + 1):
            rep = dig[r].get(f"replica{i}")
            if rep != own:
                bad.append(f"n{r}'s replica of NF {i} {rep} differs from n{i}'s state {own}")
    return bad


def check_replicas(L, nodes, f):
    """The NFs change their state on ticks too (load_balancer's idle
    scan), each change an update on its way: equal once one has arrived."""
    bad = []

    def equal():
        bad[:] = replicas_equal(nodes, f)
        return not bad
    try:
        lab.wait_until(equal, 10, "every replica equal to its NF's state")
    except lab.TestFailure:
        for b in bad:
            L.expect(False, b)


def steady(L, f):
    tag = f"_f{f}"
    frames = remote_lab.tagged_input(traces.trace("ssh.pcap"), 4, flows_per_copy=True)
    nodes, sink = ftc_lab.build(L, frames, f=f, tag=tag)
    ftc_lab.start(nodes, sink)
    wait_delivered(L, nodes, sink, len(frames))
    lab.wait_until(lambda: settled(nodes), 30, "the chain settled")
    states = [ftc_lab.ftc_state(n) for n in nodes]
    if os.environ.get("ONVM_FTC_VERBOSE"):
        ftc_lab.dump(nodes)
        for node in nodes:
            print(node.name, ftc_lab.digests(node))
    check_replicas(L, nodes, f)
    eg = states[-1]
    L.expect(eg["released"] == len(frames) and eg["held_packets_in"] == len(frames),
             f"egress: {eg['held_packets_in']} held, {eg['released']} released, "
             f"{len(frames)} sent")
    for node, st in zip(nodes, states):
        bad = {k: v for k, v in st["in_bad"].items() if v}
        L.expect(not bad and st["in_plain"] == 0 and st["in_foreign_logs"] == 0 and
                 st["out_too_big"] == 0 and st["hold_full"] == 0 and st["carry_full"] == 0,
                 f"{node.name}: refused or dropped something: {st}")
    for node in nodes[:ftc_lab.NF_NODES]:
        st = ftc_lab.ftc_state(node)
        L.expect(st["own_updates"] > 0, f"{node.name}: its NF made no update")
    print(f"f={f}: " + ", ".join(
        f"{n.name}: {s['own_updates']} updates, {s['out_propagating']} propagating, "
        f"{s['retransmits']} retrans" for n, s in zip(nodes, states)) +
        f"; egress waited {eg['release_wait_us'] / max(eg['released'], 1):.0f} us a packet "
        f"(max {eg['release_wait_max_us']} us)")
    for node in [sink] + nodes:
        node.stop()
    got = ftc_lab.sink_frames(sink)
    _, backend = remote_lab.check_stateful(L, frames, got, [], allow_loss=0, tail=False)
    ex = ftc_lab.read_exports(L, tag)
    remote_lab.check_exports(L, frames, ex["mon"], ex["lb"], backend)


def test(L, which):
    if which in (None, "steady"):
        for f in (1, 2):
            steady(L, f)


if __name__ == "__main__":
    which = sys.argv[1] if len(sys.argv) > 1 else None
    lab.Lab("ftc" + (f"_{which}" if which else "")).run(lambda L: test(L, which))
