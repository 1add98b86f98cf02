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
          nothing by the held vector; no frame refused anywhere; at f = 1
          the Prometheus exporter's FTC metrics say the same.
  kill    f = 1, the input paced from outside (24 copies of ssh.pcap, new
          flows each copy): each node in turn (the three NF nodes, the
          replica-only egress) SIGKILLed mid-trace.  BFD shows its
          neighbours it is gone; the orchestrator starts a replacement in
          its place, which fetches its NF's state from the live replica
          and has its replicas rebuilt by whole-state updates.  Asserted:
          every frame out at most once, in order, tagged, one backend per
          flow; each NF's per-flow packet count at least the frames
          delivered and at most those plus the frames lost (none of the
          delivered frames' updates lost, none counted twice); the loss
          bounded; every replica equal to its NF's state after.  Prints
          the recovery time split into detection, start, state fetch and
          reroute.  Then n1 killed before any input: its replacement goes
          on from no update at all.
  kill2   the same with f = 2 and two nodes killed at once (two NF nodes
          side by side; an NF node and the egress).
  mutation  the egress told to release before the held vector covers a
          packet (ONVM_FTC_UNSAFE_EARLY_RELEASE), FTC's frames on the link
          after a head dropped at 20 % (its updates late: held back by the
          egress until sent again), that head killed -- f = 1 and n0, f = 2
          and n1: each run must fail the oracle with an undercount (a
          delivered frame's update lost) -- it passes only if the oracle
          catches the early release.
  faults  the same faults without the mutation, f = 1, n0 killed: nothing
          released early (the oracle holds), the faults counted; then n1
          killed behind the lossy link (its replacement's replica of n0
          needs a whole update through it); then f = 2, only the
          replication's own (propagating) frames on n1 -> n2 faulted --
          10 % lost, 20 % duplicated, 20 % reordered --, n1 killed.

  The loss is bounded by the input sent while the chain was down (the
  kill to the last replacement forwarding), what the faulty wire dropped,
  and the packets that needed the dead NF's unreplicated updates, + 100;
  every frame sent 200 ms after the recovery must come out.
"""
import json
import os
import sys
import time

from onvm import exporter, ftc_lab, lab, remote_lab, traces


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
    c = ftc_lab.build(L, frames, f=f, tag=tag)
    nodes, sink = c.nodes, c.sink
    ftc_lab.start(c)
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
    if f == 1:  # the Prometheus exporter shows the same
        port = exporter.free_port()
        xp = exporter.start_exporter(L, [n.prefix for n in nodes], port, f"ftc{tag}")
        m = exporter.metrics(port)
        rel = exporter.metric(m, "onvm_ftc_released_packets_total", node=nodes[-1].prefix)
        L.expect(rel == len(frames), f"exporter: the egress released {rel}, want {len(frames)}")
        for i in range(ftc_lab.NF_NODES):
            upd = exporter.metric(m, "onvm_ftc_own_updates_total", node=nodes[i].prefix)
            L.expect(upd is not None and upd >= states[i]["own_updates"],
                     f"exporter: n{i}'s NF made {upd} updates, /onvm/ftc said "
                     f"{states[i]['own_updates']}")
            app = exporter.metric(m, "onvm_ftc_replica_applied_update",
                                  node=nodes[i + 1].prefix, nf=str(i))
            L.expect(app is not None and app > 0, f"exporter: n{i + 1}'s replica of NF {i}: {app}")
        xp.terminate()
        xp.wait(10)
    for node in [sink] + nodes:
        node.stop()
    got = ftc_lab.sink_frames(sink)
    _, backend = remote_lab.check_stateful(L, frames, got, [], allow_loss=0, tail=False)
    ex = ftc_lab.read_exports(L, tag)
    remote_lab.check_exports(L, frames, ex["mon"], ex["lb"], backend)


def check_counts(L, frames, got, ex):
    """After failures, per flow: each NF counted every frame delivered (its
    updates were held f + 1 times before it left), and at most the frames
    lost besides (counted by an NF whose output then died, never twice);
    vlan_tagger, which exports totals only, the same in total."""
    sent = {remote_lab.tag_of(f): f for f in frames}
    deliv, lost = {}, {}
    seen = {remote_lab.tag_of(f) for f in got}
    for t, f in sent.items():
        fl = remote_lab.flow_of(f)
        if fl is None:
            continue
        key = (remote_lab.ip4(fl[0]), remote_lab.ip4(fl[1]), fl[2], fl[3], fl[4])
        d = deliv if t in seen else lost
        d[key] = d.get(key, 0) + 1
    for nf in ("mon", "lb"):
        counts = {(e["src"], e["dst"], e["proto"], e["sport"], e["dport"]): e["packets"]
                  for e in ex[nf]["flows"]}
        under = [(k, counts.get(k, 0), n) for k, n in deliv.items() if counts.get(k, 0) < n]
        over = [(k, n, deliv.get(k, 0), lost.get(k, 0)) for k, n in counts.items()
                if n > deliv.get(k, 0) + lost.get(k, 0)]
        L.expect(not under, f"{nf}: {len(under)} flows counted fewer frames than were "
                 f"delivered (a delivered frame's update lost), e.g. {under[:3]}")
        L.expect(not over, f"{nf}: {len(over)} flows counted more than delivered + lost "
                 f"(counted twice), e.g. {over[:3]}")
    n_deliv, n_lost = sum(deliv.values()), sum(lost.values())
    L.expect(ex["vlan"]["packets"] >= n_deliv,
             f"vlan_tagger counted fewer packets ({ex['vlan']['packets']}) than were delivered "
             f"({n_deliv}): a delivered frame's update lost")
    L.expect(ex["vlan"]["packets"] <= n_deliv + n_lost,
             f"vlan_tagger counted {ex['vlan']['packets']} packets, more than the {n_deliv} "
             f"delivered and {n_lost} lost (counted twice)")


def check_after_recovery(L, c, frames, got, t_back_ns, wire):
    """Every frame the input sent once the chain was back (200 ms after the
    last replacement forwarded) reached the sink, but those the faulty wire
    dropped."""
    points, _ = ftc_lab.source_progress(c)
    after = next((n for ts, n in points if ts * 1e9 >= t_back_ns + 200e6), None)
    if not L.expect(after is not None and after < len(frames),
                    "no input came after the recovery: nothing to check it with"):
        return
    seen = {remote_lab.tag_of(x) for x in got}
    missing = [t for t in range(after + 1, len(frames) + 1) if t not in seen]
    L.expect(len(missing) <= wire, f"{len(missing)} frames sent after the recovery never came "
             f"out (the faulty wire dropped {wire}), e.g. {missing[:5]}")


def settle_after(L, c, frames, quiet_s=1.0, timeout=60):
    """Wait for the input to end and the sink to stop taking frames."""
    lab.wait_until(lambda: ftc_lab.source_progress(c)[1] is not None, timeout, "the input sent")
    last, since = -1, time.monotonic()
    t0 = time.monotonic()
    while time.monotonic() - t0 < timeout:
        n = ftc_lab.delivered(c.sink)
        if n != last:
            last, since = n, time.monotonic()
        elif time.monotonic() - since >= quiet_s:
            return n
        time.sleep(0.05)
    return last


def kill(L, f, positions, tag, rate=2000, faults=None, fault_link=0, at=0.4, copies=24):
    # 3.5 s of input (4.7 s for two nodes): what is left after the kill
    # (2.1 s) outlasts the replacements' start (0.5-1.2 s each in a CI
    # chroot, two at once slower) and the 200 ms after it, so the
    # recovered chain carries traffic to check it with
    frames = remote_lab.tagged_input(traces.trace("ssh.pcap"), copies, flows_per_copy=True)
    c = ftc_lab.build(L, frames, f=f, tag=tag, source=rate, recover=True, faults=faults,
                      fault_link=fault_link, retrans_us=50000 if faults else 5000)
    ftc_lab.start(c, source=False)
    ftc_lab.wait_bfd_up(c)
    orch = ftc_lab.Orchestrator(c)
    if at > 0:
        ftc_lab.start_source(c)
        lab.wait_until(lambda: (ftc_lab.source_progress(c)[0] or [(0, 0)])[-1][1] >=
                       int(len(frames) * at), 60, f"{at:.0%} of the input sent")
    t_kill = min(c.nodes[p].crash() for p in positions)
    if at == 0:  # killed before its NF made any update: recovered from none
        ftc_lab.start_source(c)
    dead, det = orch.watch()
    L.expect(dead == set(positions), f"the orchestrator saw {sorted(dead)} die, not "
             f"{sorted(positions)}")
    tl = orch.replace(dead, det)
    settle_after(L, c, frames)
    try:
        lab.wait_until(lambda: settled(c.nodes), 30, "the chain settled")
    except lab.TestFailure:
        ftc_lab.dump(c.nodes)
        raise
    check_replicas(L, c.nodes, f)
    states = [ftc_lab.ftc_state(n) for n in c.nodes]
    for t in tl:
        print(f"{tag}: n{t['position']} killed: detection "
              f"{(t['detected_ns'] - t_kill) / 1e6:.1f} ms, start "
              f"{(t['up_ns'] - t['launched_ns']) / 1e6:.1f} ms, state fetch "
              f"{(t['state_ns'] - t['up_ns']) / 1e6:.1f} ms, reroute "
              + (f"{(t['forwarding_ns'] - t['state_ns']) / 1e6:.1f} ms"
                 if t['forwarding_ns'] else "never") +
              f" (from update {t['loaded_seq']})")
    eg = states[-1]
    for t in tl:
        L.expect(t["forwarding_ns"], f"{tag}: n{t['position']}'s replacement forwarded nothing "
                 f"(the input left after the kill must pass through it)")
    for c_node in [c.sink] + c.nodes:
        c_node.stop()
    got = ftc_lab.sink_frames(c.sink)
    lost = len(frames) - len({remote_lab.tag_of(x) for x in got})
    wire = 0
    if c.relay is not None:
        c.relay.terminate()
        c.relay.wait(10)
        with open(L.path(f"faults{tag}.json")) as fh:
            st = json.load(fh)
        print(f"{tag}: the faulty link: {st}")
        wire = sum(d["dropped"] for k, d in st.items() if isinstance(d, dict))
    print(f"{tag}: {len(got)} of {len(frames)} frames out, {lost} lost: {wire} on the faulty "
          f"wire, {eg['void_dropped']} needing a dead incarnation's lost update (dropped "
          f"by the egress), the rest at the failure; released {eg['released']}")
    # lost: what the input sent while the chain was down (the kill to the
    # last replacement forwarding), what the faulty wire dropped, and the
    # packets that needed the dead NF's unreplicated updates; a margin of
    # 100 for what was in the rings at the kill
    back = max(t["forwarding_ns"] or t["state_ns"] for t in tl)
    outage = int(rate * (back - t_kill) / 1e9)
    print(f"{tag}: down {(back - t_kill) / 1e6:.0f} ms: {outage} frames of input; the loss "
          f"bound {outage + wire + eg['void_dropped'] + 100}")
    remote_lab.check_stateful(L, frames, got, [],
                              allow_loss=outage + wire + eg["void_dropped"] + 100, tail=False)
    check_after_recovery(L, c, frames, got, back, wire)
    check_counts(L, frames, got, ftc_lab.read_exports(L, tag))


def test(L, which):
    if which in (None, "steady"):
        for f in (1, 2):
            steady(L, f)
    if which in (None, "kill"):
        only = os.environ.get("ONVM_FTC_KILL")  # one position, to look at it
        for p in ([int(only)] if only else range(ftc_lab.NF_NODES + 1)):
            kill(L, 1, [p], f"_k{p}")
        if not only:  # before any input: the new NF goes on from no update
            kill(L, 1, [1], "_k1e", at=0)
    if which in (None, "kill2"):
        for ps in ((1, 2), (0, 4)):
            kill(L, 2, list(ps), f"_k{ps[0]}{ps[1]}", copies=32)
    if which in (None, "faults"):
        # FTC's frames lost (their packets with them), then only the
        # replication's own frames lost, duplicated and reordered; the
        # head after the faulty link killed, then the node after it (whose
        # replacement needs a whole update through the faulty link)
        drop = ["--drop", "0.2", "--only-ethertype", "0x88b5"]
        mess = ["--drop", "0.1", "--dup", "0.2", "--reorder", "0.2", "--only-ftc-propagating"]
        # (16 copies, killed at 30 %: a lossy link's retransmissions make
        # each copy's updates slow to settle, and 1.6 s is left after the
        # kill)
        short = {"copies": 16, "at": 0.3}
        kill(L, 1, [0], "_faults", faults=["--seed", "3"] + drop, **short)
        kill(L, 1, [1], "_faults3", faults=["--seed", "5"] + drop, **short)
        kill(L, 2, [1], "_faults4", faults=["--seed", "6"] + mess, fault_link=1, **short)
    if which in (None, "mutation"):
        # the run must fail the oracle: only the failures it found count
        os.environ["ONVM_FTC_UNSAFE_EARLY_RELEASE"] = "1"
        for tag, f, p, link in (("_mut", 1, 0, 0), ("_mut2", 2, 1, 1)):
            before = len(L.failures)
            try:
                kill(L, f, [p], tag, faults=["--seed", "3", "--drop", "0.2",
                                             "--only-ethertype", "0x88b5"], fault_link=link,
                     copies=16, at=0.3)
            except lab.TestFailure as e:  # (the run itself may fail as well)
                L.failures.append(str(e))
            caught = [x for x in L.failures[before:] if "counted fewer" in x]
            del L.failures[before:]
            print(f"mutation{tag}: the oracle found {len(caught)} undercount(s): {caught[:1]}")
            L.expect(caught, f"{tag}: the egress released before the held vector covered "
                     f"packets (f = {f}, n{p} killed), and the oracle did not notice")
        del os.environ["ONVM_FTC_UNSAFE_EARLY_RELEASE"]


if __name__ == "__main__":
    which = sys.argv[1] if len(sys.argv) > 1 else None
    lab.Lab("ftc" + (f"_{which}" if which else "")).run(lambda L: test(L, which))
