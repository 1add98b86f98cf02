#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 REINFORCE-NFV authors
"""The protected ingress of a remote chain (rsync_unit.c).

One node, role standby, taken over by the REPLAY_START that opens its input
(a primary would hold every output until a standby votes; a standby that
took over lets out what its TxTs does not know -- here everything): a
net_pcap port "from_p" replays stamped frames (the shim built here, per
docs/wire-format.md) into the protected chain, whose exit "sink" writes a
capture.  The input mixes a trace's frames stamped
1..N with what a link or a bad peer can add: a duplicate, a frame overtaken
(reordered), a replayed frame, shims cut short or with a bad version, flag,
nested type or timestamp 0, an unstamped frame and an RSync frame.
Asserted: the sink receives exactly the trace's frames that were admitted,
shim removed, byte for byte, in timestamp order; every other frame is
counted under its reason in /onvm/remote and none is sent.

Then the same input into a primary without a standby: the same admission,
RSync frames on the predecessor link refused (counted), nothing released.
"""
import struct

from onvm import lab, pcap, traces
from onvm.wire import rsync_frame

PREPARE, COMMIT, REPLAY_START = 1, 3, 8

SHIM = 0x88B5


def stamp(frame, ts, flags=0, version=1, inner=None):
    (etype,) = struct.unpack_from(">H", frame, 12)
    inner = etype if inner is None else inner
    return frame[:12] + struct.pack(">HBBHQ", SHIM, version, flags, inner, ts) + frame[14:]


def test(L):
    frames = pcap.read_pcap(traces.trace("smtp.pcap"))
    n = len(frames)
    # The chain's first transaction (no packet, no cut), committed: the
    # standby is in sync from the chain's origin -- one that never applied
    # anything refuses a takeover (it cannot tell that it did not start
    # late).  Then the predecessor fails the chain over to it (epoch 2).
    meta = struct.pack(">QQQQIIQ", 0, 0, 0, 0, 0, 0, 0)
    inp = [rsync_frame(PREPARE, 7, 1, meta, txid=1, region=0xFFFF),
           rsync_frame(COMMIT, 7, 1, txid=1),
           rsync_frame(REPLAY_START, 7, 2, struct.pack(">QQ", 0, n + 1))]
    want = []
    for i, f in enumerate(frames):
        ts = i + 1
        if i == 20:  # frame 21 overtaken by frame 22: it arrives late, stale
            continue
        inp.append(stamp(f, ts))
        want.append(f)
        if i == 21:
            inp.append(stamp(frames[20], 21))  # the late one
        if i == 10:
            inp.append(stamp(f, ts))  # a duplicate
    # a replayed frame (the REPLAY flag), after the rest
    inp.append(stamp(frames[0], n + 1, flags=1))
    want.append(frames[0])
    bad = [
        stamp(frames[1], n + 2)[:20],                  # short
        stamp(frames[1], n + 3, version=2),            # bad version
        stamp(frames[1], n + 4, flags=0x40),           # bad flags
        stamp(frames[1], n + 5, inner=SHIM),           # nested
        stamp(frames[1], 0),                           # zero ts
        frames[2],                                     # unstamped
        frames[3][:12] + b"\x88\xb6" + bytes(40),      # an RSync frame
    ]
    inp += bad
    src = L.path("stamped.pcap")
    pcap.write_pcap(src, inp)
    empty = L.path("empty.pcap")
    pcap.write_pcap(empty, [])
    out = L.path("sink.pcap")
    cfg = {
        "ports": [
            {"name": "from_p", "dev": f"net_pcap0,rx_pcap={src},tx_pcap={L.path('p-out.pcap')}"},
            {"name": "sink", "dev": f"net_pcap1,rx_pcap={empty},tx_pcap={out}"},
            {"name": "sync", "dev": f"net_pcap2,rx_pcap={empty},tx_pcap={L.path('s-out.pcap')}"},
        ],
        "chains": [{"name": "web", "services": [], "ingress_port": "from_p",
                    "exit_port": "sink"}],
        "remote": {"chains": [{"name": "web", "id": 7, "role": "standby", "chain": "web",
                               "predecessor_port": "from_p", "primary_port": "sync"}]},
    }
    node = L.node("primary", cfg).start()
    node.wait_port("from_p", "rx", len(inp))
    node.wait_port("sink", "tx", len(want))
    st = node.query("/onvm/remote")["web"]
    expect = {"ingress_admitted": len(want), "ingress_replayed": 1, "ingress_stale": 2,
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
    got = pcap.read_capture_out(out)
    pcap.compare_frames(got, want, "sink capture")

    # The same input into a primary with no standby: the same admission,
    # the four RSync frames refused on the predecessor link (a primary takes
    # nothing from there, and its session is not the RX unit's), and every
    # output held in the latch or waiting for room -- none leaves unvoted.
    cfg["ports"][1]["dev"] = f"net_pcap1,rx_pcap={empty},tx_pcap={L.path('sink-p.pcap')}"
    cfg["remote"]["chains"][0] = {"name": "web", "id": 7, "role": "primary", "chain": "web",
                                  "predecessor_port": "from_p", "standby_port": "sync"}
    node = L.node("primary2", cfg).start()
    node.wait_port("from_p", "rx", len(inp))
    lab.wait_until(lambda: node.query("/onvm/remote")["web"]["ingress_admitted"] == len(want),
                   30, "input admitted")
    st = node.query("/onvm/remote")["web"]
    L.expect(st["ingress_rsync_refused"] == 4 and st["ctl_ok"] == 0 and st["votes"] == 0,
             f"primary: RSync on the predecessor link: {st}")
    L.expect(st["out_released"] == 0 and st["state"] == "primary", f"primary: {st}")
    rc = node.stop()
    L.expect(rc == 0, f"manager exit status {rc}")
    L.expect(not pcap.read_capture_out(L.path("sink-p.pcap")),
             "the primary let packets out without a vote")
    placement(L, cfg, empty)


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
