#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 REINFORCE-NFV authors
"""The predecessor role of remote resiliency on a real node (plog_unit.c).

One node: a net_pcap port replays a trace into a chain without NFs whose exit
is the link to the primary ("to_m"); the link to the standby is "to_s"; both
write captures.  Asserted:
  - every frame leaves on to_m with a 0x88B5 shim: timestamps 1..N in order,
    version 1, no flags, the inner EtherType the frame's own, and the frame
    byte for byte once the shim is removed;
  - /onvm/remote: N stamped, N in the log, nothing refused;
  - after an operator failover (/onvm/remote/failover): on to_s, REPLAY_START
    (epoch raised, replay after the trim, newest N) repeated every 5 ms and
    nothing else until the standby's echo (injected by the test into the
    veth the port reads live), then the logged frames with the REPLAY flag
    in order, then REPLAY_END (last N, count) repeated until echoed;
  - the primary's LOG_TRIM (watermark 50) is applied and the replay starts
    after it; LOG_TRIMs of another chain or epoch, another message type and a
    frame with a bad CRC are refused and counted by reason;
  - a second node with a log of 1024 packets and a longer trace refuses the
    packets past the bound (counted, never sent) and keeps the first 1024;
  - a third node with a log of 1024 packets, failed over with nothing in
    its log, then given 3000 frames live: all are stamped and sent to the
    standby, none refused (after a failover nobody trims, so the log only
    buffers what the port has not taken).
"""
import struct

from onvm import lab, pcap, traces
from onvm.wire import ETH_RSYNC, ETH_SHIM, RSYNC_VERSION, rsync_frame


def pop_shim(frame):
    """(ts, flags, inner type, frame without the shim).  A capture record
    net_pcap cut (pcap.TruncatedFrame) stays one, 12 bytes shorter."""
    lab.check(len(frame) >= 26, f"frame of {len(frame)} bytes has no shim")
    (etype,) = struct.unpack_from(">H", frame, 12)
    lab.check(etype == ETH_SHIM, f"EtherType 0x{etype:04x}, want 0x88b5")
    ver, flags, inner, ts = struct.unpack_from(">BBHQ", frame, 14)
    lab.check(ver == 1, f"shim version {ver}")
    plain = frame[:12] + struct.pack(">H", inner) + frame[26:]
    if isinstance(frame, pcap.TruncatedFrame):
        plain = pcap.TruncatedFrame(plain, frame.wire - 12)
    return ts, flags, inner, plain


def rsync_msg(frame):
    """(type, epoch, payload) of an RSync frame."""
    (etype,) = struct.unpack_from(">H", frame, 12)
    lab.check(etype == ETH_RSYNC, f"EtherType 0x{etype:04x}, want 0x88b6")
    ver, mtype, flags, key, chain, plen, epoch = struct.unpack_from(">BBBBHHI", frame, 14)
    lab.check(ver == RSYNC_VERSION, f"RSync version {ver}")
    return mtype, epoch, frame[54:54 + plen]


def inject(ns, ifname, frame):
    """Send one frame into `ifname` of namespace `ns` (the standby's echo)."""
    script = ("import socket, sys; s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW); "
              "s.bind((sys.argv[1], 0)); s.send(bytes.fromhex(sys.argv[2]))")
    lab.run_cmd(lab.in_netns(ns, ["/usr/bin/python3", "-c", script, ifname, frame.hex()]))


def inject_many(ns, ifname, path):
    """Send every frame of the capture `path` into `ifname` of namespace `ns`."""
    script = ("import socket, struct, sys\n"
              "d = open(sys.argv[2], 'rb').read(); off = 24\n"
              "s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW); s.bind((sys.argv[1], 0))\n"
              "while off + 16 <= len(d):\n"
              "    n = struct.unpack_from('<I', d, off + 8)[0]\n"
              "    s.send(d[off + 16:off + 16 + n]); off += 16 + n\n")
    lab.run_cmd(lab.in_netns(ns, ["/usr/bin/python3", "-c", script, ifname, path]))


def node_config(L, tag, trace, log_packets=65536, from_primary=(), echo_iface=None,
                src_iface=None):
    """echo_iface: the standby link writes its capture and reads, live, what
    the test injects into the veth `echo_iface` (the standby's echoes)."""
    empty = L.path(f"{tag}-empty.pcap")
    pcap.write_pcap(empty, [])
    to_s_rx = f"rx_iface={echo_iface}" if echo_iface else f"rx_pcap={empty}"
    ctl = L.path(f"{tag}-from-primary.pcap")
    pcap.write_pcap(ctl, list(from_primary))
    return {
        "ports": [
            {"name": "src", "dev": (f"net_pcap0,rx_iface={src_iface}" if src_iface else
                                    f"net_pcap0,rx_pcap={trace}") +
             f",tx_pcap={L.path(tag + '-src-out.pcap')}"},
            {"name": "to_m", "dev": f"net_pcap1,rx_pcap={ctl},tx_pcap={L.path(tag + '-to_m.pcap')}"},
            {"name": "to_s", "dev": f"net_pcap2,{to_s_rx},tx_pcap={L.path(tag + '-to_s.pcap')}"},
        ],
        "chains": [{"name": "in", "services": [], "ingress_port": "src", "exit_port": "to_m"}],
        "remote": {"chains": [{"name": "web", "id": 7, "role": "predecessor",
                               "primary_port": "to_m", "standby_port": "to_s",
                               "log_packets": log_packets, "log_mb": 8}]},
    }


def test(L):
    trace = traces.trace("smtp.pcap")
    frames = pcap.read_pcap(trace)
    n = len(frames)
    trim = 50
    from_primary = [
        rsync_frame(7, 7, 1, struct.pack(">Q", trim)),              # applied
        rsync_frame(7, 8, 1, struct.pack(">Q", 90)),                # another chain
        rsync_frame(7, 7, 2, struct.pack(">Q", 90)),                # another epoch
        rsync_frame(2, 7, 1, txid=1),                               # a VOTE
        rsync_frame(7, 7, 1, struct.pack(">Q", 90), bad_crc=True),  # corrupted
    ]
    ns = L.netns("pred")
    L.veth(ns, "echo0", ns, "echo1")
    node = L.node("pred", node_config(L, "pred", trace, from_primary=from_primary,
                                      echo_iface="echo0"), netns=ns).start()
    node.wait_port("to_m", "tx", n)
    lab.wait_until(lambda: node.query("/onvm/remote")["web"]["ctl_bad_crc"] == 1, 10,
                   "every frame from the primary handled")
    st = node.query("/onvm/remote")["web"]
    # The trim may come before or after the stamping: either the log never
    # held 1..50 past it, or it dropped them; the replay starts after 50 both ways.
    L.expect(st["stamped"] == n and st["log_pkts"] in (n, n - trim) and st["last_ts"] == n,
             f"stamped {st['stamped']}, log {st['log_pkts']}, last ts {st['last_ts']}; want {n}")
    got = {k: st[k] for k in ("trims", "log_trimmed_to", "ctl_unknown_chain", "ctl_stale_epoch",
                              "ctl_wrong_role", "ctl_bad_crc", "ctl_ring_full")}
    L.expect(got == {"trims": 1, "log_trimmed_to": trim, "ctl_unknown_chain": 1,
                     "ctl_stale_epoch": 1, "ctl_wrong_role": 1, "ctl_bad_crc": 1,
                     "ctl_ring_full": 0}, f"control frames: {got}")
    L.expect(st["refused_full"] == 0 and st["refused_frame"] == 0, f"refused: {st}")
    L.expect(st["state"] == "primary" and st["epoch"] == 1, f"state {st}")

    rep = node.query("/onvm/remote/failover,web")
    L.expect(rep.get("status") == "ok", f"failover: {rep}")
    remote = lambda: node.query("/onvm/remote")["web"]
    # No echo yet: REPLAY_START again every 5 ms, and nothing replayed.
    lab.wait_until(lambda: remote()["ctl_retrans"] >= 2, 10, "REPLAY_START repeated")
    st = remote()
    L.expect(st["state"] == "starting" and st["replayed"] == 0, f"before the echo: {st}")
    inject(ns, "echo1", rsync_frame(8, 7, 2, struct.pack(">QQ", trim, n)))
    lab.wait_until(lambda: remote()["state"] == "standby", 10, "replay finished")
    lab.wait_until(lambda: remote()["ctl_retrans"] >= st["ctl_retrans"] + 2, 10,
                   "REPLAY_END repeated")
    inject(ns, "echo1", rsync_frame(9, 7, 2, struct.pack(">QQ", n, n - trim)))
    lab.wait_until(lambda: remote()["end_echoed"] == 1, 10, "REPLAY_END echoed")
    st = remote()
    L.expect(st["epoch"] == 2 and st["failovers"] == 1 and st["replayed"] == n - trim and
             st["replay_from_ts"] == trim, f"after failover: {st}")
    L.expect(st["replay_end_ns"] >= st["replay_start_ns"] >= st["failover_req_ns"] > 0,
             f"failover timeline: {st}")
    rc = node.stop()
    L.expect(rc == 0, f"manager exit status {rc}")

    out_m = pcap.read_capture_out(L.path("pred-to_m.pcap"))
    L.expect(len(out_m) == n, f"to_m: {len(out_m)} frames, want {n}")
    for i, (got, want) in enumerate(zip(out_m, frames)):
        ts, flags, inner, plain = pop_shim(got)
        L.expect(ts == i + 1, f"to_m frame {i}: ts {ts}, want {i + 1}")
        L.expect(flags == 0, f"to_m frame {i}: flags {flags}")
        L.expect(inner == struct.unpack_from(">H", want, 12)[0], f"to_m frame {i}: inner type")
        L.expect(plain == want, f"to_m frame {i}: differs from the trace once unshimmed")

    out_s = pcap.read_capture_out(L.path("pred-to_s.pcap"))
    ctl = 2 + st["ctl_retrans"]  # REPLAY_START and REPLAY_END frames, repeats included
    L.expect(len(out_s) == n - trim + ctl, f"to_s: {len(out_s)} frames, want {n - trim + ctl}")
    starts = 0
    while starts < len(out_s) and struct.unpack_from(">H", out_s[starts], 12)[0] == ETH_RSYNC:
        mtype, epoch, pl = rsync_msg(out_s[starts])
        after, newest = struct.unpack(">QQ", pl)
        L.expect((mtype, epoch, after, newest) == (8, 2, trim, n),
                 f"REPLAY_START: type {mtype} epoch {epoch} after {after} newest {newest}")
        starts += 1
    # nothing replayed before the echo: the standby would not have taken it
    L.expect(starts >= 3, f"{starts} REPLAY_STARTs before the replay, want >= 3")
    for k, i in enumerate(range(trim, n)):
        ts, flags, _, plain = pop_shim(out_s[starts + k])
        L.expect(ts == i + 1 and flags == 1, f"replayed frame {k}: ts {ts} flags {flags}")
        L.expect(plain == frames[i], f"replayed frame {k}: differs from the trace")
    ends = out_s[starts + n - trim:]
    L.expect(len(ends) >= 3, f"{len(ends)} REPLAY_ENDs, want >= 3 (repeated until echoed)")
    for f in ends:
        mtype, epoch, pl = rsync_msg(f)
        last, count = struct.unpack(">QQ", pl)
        L.expect((mtype, epoch, last, count) == (9, 2, n, n - trim),
                 f"REPLAY_END: type {mtype} epoch {epoch} last {last} count {count}")

    # A full log refuses new packets; it never drops what it holds.
    big = traces.trace("webex.pcap")
    bframes = pcap.read_pcap(big)
    L.expect(len(bframes) > 1024, f"webex.pcap has {len(bframes)} frames")
    node = L.node("full", node_config(L, "full", big, log_packets=1024)).start()
    lab.wait_until(lambda: node.port("src")["rx"] >= len(bframes), 60, "trace read")
    lab.wait_until(lambda: (lambda s: s["stamped"] + s["refused_full"] + s["refused_frame"]
                            >= len(bframes))(node.query("/onvm/remote")["web"]), 30,
                   "every packet stamped or refused")
    st = node.query("/onvm/remote")["web"]
    L.expect(st["stamped"] == 1024 and st["log_pkts"] == 1024,
             f"full log: stamped {st['stamped']} log {st['log_pkts']}, want 1024")
    L.expect(st["refused_full"] == len(bframes) - 1024 - st["refused_frame"],
             f"full log: refused {st['refused_full']} of {len(bframes)}")
    rc = node.stop()
    L.expect(rc == 0, f"manager exit status {rc}")
    out = pcap.read_capture_out(L.path("full-to_m.pcap"))
    L.expect(len(out) == 1024, f"full log: {len(out)} frames sent, want 1024")
    for i in range(1024):
        ts, _, _, plain = pop_shim(out[i])
        L.expect(ts == i + 1 and plain == bframes[i], f"full log: frame {i} (ts {ts})")

    # After a failover the log is only a buffer: more input than it holds
    # goes through.
    L.veth(ns, "in0", ns, "in1")
    L.veth(ns, "echo2", ns, "echo3")
    node = L.node("after", node_config(L, "after", None, log_packets=1024, echo_iface="echo2",
                                       src_iface="in0"), netns=ns).start()
    remote = lambda: node.query("/onvm/remote")["web"]
    L.expect(node.query("/onvm/remote/failover,web").get("status") == "ok", "failover")
    lab.wait_until(lambda: remote()["ctl_retrans"] >= 1, 10, "REPLAY_START sent")
    inject(ns, "echo3", rsync_frame(8, 7, 2, struct.pack(">QQ", 0, 0)))
    lab.wait_until(lambda: remote()["state"] == "standby", 10, "replay (of nothing) done")
    inject(ns, "echo3", rsync_frame(9, 7, 2, struct.pack(">QQ", 0, 0)))
    live = L.path("live.pcap")
    small = [f for f in bframes if len(f) <= 1514]  # what the veth's MTU takes
    many = (small * (3000 // len(small) + 1))[:3000]
    pcap.write_pcap(live, many)
    inject_many(ns, "in1", live)
    lab.wait_until(lambda: (lambda s: s["stamped"] + s["refused_full"] + s["refused_frame"] >=
                            len(many))(remote()), 60, "every live frame stamped or refused")
    st = remote()
    L.expect(st["stamped"] == len(many) - st["refused_frame"] and st["refused_full"] == 0,
             f"after the failover: stamped {st['stamped']}, refused {st['refused_full']} "
             f"of {len(many)} (log of 1024)")
    L.expect(st["log_pkts"] <= 64, f"after the failover the log still holds {st['log_pkts']}")
    rc = node.stop()
    L.expect(rc == 0, f"manager exit status {rc}")
    data = [f for f in pcap.read_capture_out(L.path("after-to_s.pcap"))
            if struct.unpack_from(">H", f, 12)[0] == ETH_SHIM]
    L.expect(len(data) == st["stamped"], f"to_s: {len(data)} stamped frames, want "
             f"{st['stamped']}")


if __name__ == "__main__":
    lab.run("remote_predecessor", test)
