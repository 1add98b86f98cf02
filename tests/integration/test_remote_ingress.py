#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 REINFORCE-NFV authors
"""The protected ingress of a remote chain (rsync_unit.c).

One node, role standby, taken over by the predecessor's REPLAY_START (a
primary would hold every output until a standby votes; a standby that took
over lets out what its TxTs does not know -- here everything).  Its
predecessor link "from_p" and its sync link "sync" read, live, what the test
injects into a veth: the primary's first transaction and COMMIT on the sync
link, addressed to the node's run id, then REPLAY_START, then stamped frames
(the shim built here, per docs/wire-format.md) on the predecessor link.
The protected chain's exit "sink" writes a capture.

The replayed range (0, 30] must arrive whole and in order: frames 12..15
sent before 11 are dropped (replay_gap_drops) and a REPLAY_ACK names the gap;
then 11..30 come again and are admitted.  After the range, the input mixes
a trace's frames with what a link or a bad peer can add: a duplicate, a
frame overtaken (reordered: while it replays, the standby takes the one
ahead for a gap too, and it is sent again), a replayed frame, shims cut
short or with a bad
version, flag, nested type or timestamp 0, an unstamped frame and an RSync
frame.  Asserted: the sink receives exactly the trace's frames that were
admitted, shim removed, byte for byte, in timestamp order; every other frame
is counted under its reason in /onvm/remote and none is sent; the
REPLAY_ACKs on the predecessor link tell the gap, then the range whole.

Then the same input into a primary without a standby: the same admission,
the RSync frames on the predecessor link refused (a primary takes only the
predecessor's HEARTBEATs from there), nothing released.
"""
import os
import signal
import struct
import time

from onvm import lab, pcap, traces
from onvm.wire import (COMMIT, PREPARE, REPLAY_ACK, REPLAY_END, REPLAY_START, ROLE_STANDBY,
                       TEST_RUN, rsync_fields, rsync_frame, rsync_meta)

SHIM = 0x88B5
REPLAYED = 30  # the replayed range: timestamps (0, REPLAYED]
GAP_END = 15  # input frames up to the end of the gap (1..11, then 13..16)


def stamp(frame, ts, flags=0, version=1, inner=None):
    (etype,) = struct.unpack_from(">H", frame, 12)
    inner = etype if inner is None else inner
    return frame[:12] + struct.pack(">HBBHQ", SHIM, version, flags, inner, ts) + frame[14:]


def build_input(frames):
    """(stamped input after the takeover, frames the sink must get, bad ones)."""
    n = len(frames)
    inp, want = [], []
    # the replayed range: 1..11 in order, then 13..16 ahead of 12 (a gap:
    # dropped), then the range again from 12 (as the predecessor sends it)
    for i in range(11):
        inp.append(stamp(frames[i], i + 1, flags=1))
    for i in range(12, 16):
        inp.append(stamp(frames[i], i + 1, flags=1))
    for i in range(11, REPLAYED):
        inp.append(stamp(frames[i], i + 1, flags=1))
    want += frames[:REPLAYED]
    for i in range(REPLAYED, n):
        ts = i + 1
        want.append(frames[i])  # in timestamp order: the standby admits them all
        if i == 40:  # frame 41 overtaken by frame 42: it arrives late
            continue
        inp.append(stamp(frames[i], ts))
        if i == 41:
            inp.append(stamp(frames[40], 41))  # the late one
            # ... and 42 again: still replaying, the standby took 42 for a
            # gap and dropped it, and the predecessor sends again from 41
            inp.append(stamp(frames[41], 42))
        if i == 50:
            inp.append(stamp(frames[i], ts))  # a duplicate
    # a replayed frame (the REPLAY flag) after the range: admitted as any
    inp.append(stamp(frames[0], n + 1, flags=1))
    want.append(frames[0])
    bad = [
        stamp(frames[1], n + 2)[:20],                  # short
        stamp(frames[1], n + 3, version=2),            # bad version
        stamp(frames[1], n + 4, flags=0x40),           # bad flags
        stamp(frames[1], n + 5, inner=SHIM),           # nested
        stamp(frames[1], 0),                           # zero ts
        frames[2],                                     # unstamped
        frames[3][:12] + b"\x88\xb6" + bytes(56),      # an RSync frame (version 0)
    ]
    return inp + bad, want


def node_config(L, tag, role, from_p, sync):
    empty = L.path("empty.pcap")
    pcap.write_pcap(empty, [])
    other = {"standby": "primary_port", "primary": "standby_port"}[role]
    return {
        "ports": [
            {"name": "from_p", "dev": f"net_pcap0,rx_iface={from_p},"
                                      f"tx_pcap={L.path(tag + '-p-out.pcap')}"},
            {"name": "sink", "dev": f"net_pcap1,rx_pcap={empty},"
                                    f"tx_pcap={L.path(tag + '-sink.pcap')}"},
            {"name": "sync", "dev": f"net_pcap2,rx_iface={sync},"
                                    f"tx_pcap={L.path(tag + '-s-out.pcap')}"},
        ],
        "chains": [{"name": "web", "services": [], "ingress_port": "from_p",
                    "exit_port": "sink"}],
        "remote": {"chains": [{"name": "web", "id": 7, "role": role, "chain": "web",
                               "predecessor_port": "from_p", other: "sync"}]},
    }


def test(L):
    frames = pcap.read_pcap(traces.trace("smtp.pcap"))
    n = len(frames)
    inp, want = build_input(frames)
    ns = L.netns("ingress")
    L.veth(ns, "p0", ns, "p1", mtu=1600)  # stamped full-size frames
    L.veth(ns, "s0", ns, "s1")
    node = L.node("standby", node_config(L, "sb", "standby", "p0", "s0"), netns=ns).start()
    remote = lambda: node.query("/onvm/remote")["web"]
    run = remote()["run_id"]
    # The chain's first transaction (no packet, no cut), committed: the
    # standby is in sync from the chain's origin -- one that never applied
    # anything refuses a takeover (it cannot tell that it did not start
    # late).  Then the predecessor fails the chain over to it (epoch 2).
    meta = rsync_meta()
    lab.send_frames(ns, "s1", L.path("sync-in.pcap"),
                    [rsync_frame(PREPARE, 7, 1, meta, txid=1, region=0xFFFF, receiver_run=run),
                     rsync_frame(COMMIT, 7, 1, txid=1, receiver_run=run)])
    lab.wait_until(lambda: remote()["synced"] == 1, 10, "the first transaction applied")
    lab.send_frames(ns, "p1", L.path("start.pcap"),
                    [rsync_frame(REPLAY_START, 7, 2, struct.pack(">QQ", 0, REPLAYED),
                                 receiver_run=run)])
    lab.wait_until(lambda: remote()["state"] == "replaying", 10, "taken over")
    # The frames up to the gap, and the gap held for a while: the standby
    # tells it (at once, or in its next REPLAY_ACK a millisecond later).
    lab.send_frames(ns, "p1", L.path("stamped-1.pcap"), inp[:GAP_END])
    lab.wait_until(lambda: remote()["replay_gap_drops"] == 4, 10, "the frames past the gap")
    time.sleep(0.05)
    lab.send_frames(ns, "p1", L.path("stamped-2.pcap"), inp[GAP_END:])
    try:
        node.wait_port("sink", "tx", len(want))
    except lab.TestFailure as e:
        raise lab.TestFailure(f"{e}; /onvm/remote: {remote()}; "
                              f"port from_p: {node.port('from_p')}") from None
    lab.wait_until(lambda: remote()["ingress_unstamped"] == 1, 10, "every frame handled")
    st = remote()
    expect = {"ingress_admitted": len(want), "ingress_replayed": REPLAYED + 1,
              "ingress_stale": 1, "replay_gap_drops": 5,
              "ingress_last_ts": n + 1, "ingress_unstamped": 1, "ctl_ok": 3, "synced": 1,
              "ctl_bad_version": 1, "takeovers": 1, "epoch": 2, "out_passed": len(want),
              "out_dup": 0, "out_before_takeover": 0,
              "ingress_shim_short": 1, "ingress_shim_bad_version": 1,
              "ingress_shim_bad_flags": 1, "ingress_shim_nested": 1, "ingress_shim_zero_ts": 1}
    for k, v in expect.items():
        L.expect(st.get(k) == v, f"/onvm/remote web.{k} = {st.get(k)}, want {v}")
    L.expect(st["role"] == "standby" and st["state"] == "replaying", f"role {st}")
    rc = node.stop()
    L.expect(rc == 0, f"manager exit status {rc}")
    pcap.compare_frames(pcap.read_capture_out(L.path("sb-sink.pcap")), want, "sink capture")
    # To the predecessor: the echo of REPLAY_START, then REPLAY_ACKs: the
    # gap (next 12, a later one seen), and the range whole (next 31).
    acks = []
    for f in pcap.read_capture_out(L.path("sb-p-out.pcap")):
        if struct.unpack_from(">H", f, 12)[0] != 0x88B6:
            continue
        h = rsync_fields(f)
        L.expect(h["role"] == ROLE_STANDBY and h["sender_run"] == run, f"to the predecessor: {h}")
        # from the takeover on, addressed to the run that sent REPLAY_START
        L.expect(h["epoch"] == 1 or h["receiver_run"] == TEST_RUN, f"to the predecessor: {h}")
        if h["type"] == REPLAY_ACK:
            acks.append(struct.unpack(">QQ", h["payload"]))
    L.expect(any(nxt == 12 and 13 <= gap <= 16 for nxt, gap in acks),
             f"no REPLAY_ACK telling the gap after 11: {acks}")
    L.expect((REPLAYED + 1, 0) in acks, f"no REPLAY_ACK of the whole range: {acks}")
    # (and on as the input after the range comes: the replay takes it whole
    # too, until REPLAY_END) -- never past the newest frame admitted
    L.expect(all(a <= n + 2 for a, _ in acks), f"REPLAY_ACK past what came: {acks}")

    # The same input into a primary with no standby: the same admission,
    # the RSync frames on the predecessor link refused (a primary takes
    # only HEARTBEATs from there, and only the predecessor's), and every
    # output held in the latch or waiting for room -- none leaves unvoted.
    ns2 = L.netns("ingress2")
    L.veth(ns2, "p0", ns2, "p1", mtu=1600)
    L.veth(ns2, "s0", ns2, "s1")
    cfg = node_config(L, "pri", "primary", "p0", "s0")
    node = L.node("primary", cfg, netns=ns2).start()
    remote = lambda: node.query("/onvm/remote")["web"]
    run = remote()["run_id"]
    ctl = [rsync_frame(PREPARE, 7, 1, meta, txid=1, region=0xFFFF, receiver_run=run),
           rsync_frame(COMMIT, 7, 1, txid=1, receiver_run=run),
           rsync_frame(REPLAY_START, 7, 2, struct.pack(">QQ", 0, REPLAYED), receiver_run=run)]
    lab.send_frames(ns2, "p1", L.path("pri-in.pcap"), ctl + inp)
    lab.wait_until(lambda: remote()["ingress_unstamped"] == 1, 30, "input handled")
    st = remote()
    L.expect(st["ctl_wrong_role"] == 3 and st["ctl_bad_version"] == 1 and st["ctl_ok"] == 0 and
             st["votes"] == 0, f"primary: RSync on the predecessor link: {st}")
    # No replayed range at a primary: 13..16 are admitted, and 12..16 sent
    # again after them are stale, as are the overtaken, 42 sent again and
    # the duplicate.
    L.expect(st["ingress_admitted"] == n - 1 and st["ingress_stale"] == 8,
             f"primary: admitted {st['ingress_admitted']} stale {st['ingress_stale']}, "
             f"want {n - 1} and 8")
    L.expect(st["out_released"] == 0 and st["state"] == "primary", f"primary: {st}")
    rc = node.stop()
    L.expect(rc == 0, f"manager exit status {rc}")
    L.expect(not pcap.read_capture_out(L.path("pri-sink.pcap")),
             "the primary let packets out without a vote")
    empty = L.path("empty.pcap")
    cfg["ports"][0]["dev"] = f"net_pcap0,rx_pcap={empty},tx_pcap={L.path('p2-out.pcap')}"
    cfg["ports"][2]["dev"] = f"net_pcap2,rx_pcap={empty},tx_pcap={L.path('s2-out.pcap')}"
    placement(L, cfg, empty)
    replay_held(L, frames)


def replay_held(L, frames):
    """A replay held for a hung NF: the standby stops reading its
    predecessor link while the first NF's ring has no room for a burst
    (what it admits is acknowledged, and must reach the NF) -- but it
    still reads the link's RSync frames now and then: REPLAY_END ends
    the replay, and no input is admitted in those reads (never
    acknowledged, so the predecessor sends it again)."""
    ns = L.netns("held")
    L.veth(ns, "p0", ns, "p1", mtu=1600)
    L.veth(ns, "s0", ns, "s1")
    cfg = node_config(L, "held", "standby", "p0", "s0")
    cfg["nfs"] = [{"name": "fwd", "binary": "simple_forward", "service": 1}]
    cfg["chains"] = [dict(cfg["chains"][0], services=[1])]
    cfg["rings"] = {"nf_size": 64}
    node = L.node("held", cfg, netns=ns).start()
    remote = lambda: node.query("/onvm/remote")["web"]
    run = remote()["run_id"]
    lab.send_frames(ns, "s1", L.path("held-sync.pcap"),
                    [rsync_frame(PREPARE, 7, 1, rsync_meta(), txid=1, region=0xFFFF,
                                 receiver_run=run),
                     rsync_frame(COMMIT, 7, 1, txid=1, receiver_run=run)])
    lab.wait_until(lambda: remote()["synced"] == 1, 10, "held: the first transaction applied")
    sent = 400
    lab.send_frames(ns, "p1", L.path("held-start.pcap"),
                    [rsync_frame(REPLAY_START, 7, 2, struct.pack(">QQ", 0, sent),
                                 receiver_run=run)])
    lab.wait_until(lambda: remote()["state"] == "replaying", 10, "held: taken over")
    nf = lab.wait_until(lambda: node.nf_by(name="fwd"), 10, "held: the NF")[0]
    os.kill(nf["pid"], signal.SIGSTOP)  # hung: its ring fills
    try:
        lab.send_frames(ns, "p1", L.path("held-in.pcap"),
                        [stamp(frames[i % len(frames)], i + 1, flags=1) for i in range(sent)])
        lab.wait_until(lambda: remote()["ingress_admitted"] >= 32, 10, "held: input admitted")
        time.sleep(0.2)
        admitted = remote()["ingress_admitted"]
        L.expect(admitted < sent, f"held: admitted {admitted} of {sent} with the NF hung")
        lab.send_frames(ns, "p1", L.path("held-end.pcap"),
                        [rsync_frame(REPLAY_END, 7, 2, struct.pack(">QQ", sent, sent),
                                     receiver_run=run)])
        lab.wait_until(lambda: remote()["state"] == "active", 10,
                       "held: REPLAY_END read while the NF hangs")
    finally:
        os.kill(nf["pid"], signal.SIGCONT)
    st = remote()
    L.expect(st["replay_held_drops"] > 0 and
             st["ingress_admitted"] + st["replay_held_drops"] <= sent,
             f"held: {st['replay_held_drops']} read while held and dropped, "
             f"{st['ingress_admitted']} admitted, of {sent}")
    print(f"held: {st['ingress_admitted']} admitted, {st['replay_held_drops']} read while held")
    lab.wait_until(lambda: node.port("sink")["tx"] >= st["ingress_admitted"], 10,
                   "held: everything admitted let out")
    drops = node.drops()
    L.expect(node.port("sink")["tx"] == st["ingress_admitted"],
             f"held: sink {node.port('sink')['tx']}, admitted {st['ingress_admitted']}; "
             f"drops {drops}")
    L.expect(node.stop() == 0, "held: exit status")


def placement(L, cfg, empty):
    """A full cut (a standby resynchronising) carries the whole chain's state
    in one transaction: an NF that would make the chain's state exceed
    stage_state_kb is refused its state, with the reason, although it would
    fit alone.  Two basic_monitors of equal state; first their size."""
    mons = [{"name": f"mon{k}", "binary": "basic_monitor", "service": k, "args": ["-p", "0"]}
            for k in (1, 2)]
    cfg = dict(cfg, nfs=mons)
    cfg["ports"][0]["dev"] = f"net_pcap0,rx_pcap={empty},tx_pcap={L.path('p2-out.pcap')}"
    cfg["chains"] = [dict(cfg["chains"][0], services=[1, 2])]
    node = L.node("sizes", cfg).start()
    size = lab.wait_until(lambda: (lambda n: n[0]["state_bytes"] if n and n[0]["state_bytes"]
                                   else None)(node.nf_by(name="mon1")), 30, "mon1's state")
    L.expect(node.stop() == 0, "sizes: exit status")
    # Each block holds the canonical regions and their replica: a limit of
    # three quarters of a block takes one NF's state, not two.
    limit_kb = size * 3 // 4 // 1024
    cfg["remote"] = {"chains": [dict(cfg["remote"]["chains"][0], stage_state_kb=limit_kb)]}
    node = L.node("small", cfg).start()
    line = lab.wait_until(lambda: next((ln for ln in node.log().splitlines()
                                        if "state for instance" in ln and "refused" in ln),
                                       None), 30, "a refused state")
    L.expect("a full cut" in line and f"stage_state_kb {limit_kb}" in line,
             f"the reason: {line}")
    got = [n for n in node.query("/onvm/nfs").values() if isinstance(n, dict) and n["state_bytes"]]
    L.expect(len(got) == 1, f"exactly one NF got its state: {got}")
    node.stop()
    print(f"placement: blocks of {size} B, stage_state_kb {limit_kb}: {line.strip()}")


if __name__ == "__main__":
    lab.run("remote_ingress", test)
