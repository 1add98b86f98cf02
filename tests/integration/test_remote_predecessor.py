#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 REINFORCE-NFV authors
"""The predecessor role of remote resiliency on a real node (plog_unit.c).

One node: a net_pcap port replays a trace into a chain without NFs whose exit
is the link to the primary ("to_m"); the link to the standby is "to_s"; both
write captures and read, live, what the test injects into a veth (the
primary's and the standby's messages, addressed to the node's run id).
Asserted:
  - every frame leaves on to_m with a 0x88B5 shim: timestamps first_ts,
    first_ts + 1, ... in order (first_ts above the wall clock in ns at the
    start, so a restarted predecessor stamps above its run before),
    version 1, no flags, the inner EtherType the frame's own, and the frame
    byte for byte once the shim is removed;
  - /onvm/remote: N stamped, N in the log, nothing refused;
  - the primary's LOG_TRIM (the 50th timestamp) is applied and the replay
    starts after it; LOG_TRIMs of another chain or epoch, one addressed to
    another run of the node (recorded before a restart), one sent back on
    the wrong link (a reflected message), another message type and a frame
    with a bad CRC are refused and counted by reason;
  - after an operator failover (/onvm/remote/failover): on to_s, REPLAY_START
    (epoch raised, replay after the trim, newest the last) repeated every
    5 ms and nothing else until the standby's echo, then the logged frames
    with the REPLAY flag in order; REPLAY_END only once the standby has
    acknowledged the whole range (REPLAY_ACK), then repeated until echoed;
    HEARTBEATs to both peers all along;
  - a second node with a log of 1024 packets and a longer trace refuses the
    packets past the bound (counted, never sent) and keeps the first 1024;
  - a third node with a log of 1024 packets, failed over with nothing in
    its log: a gap the standby reports before it echoes REPLAY_END is sent
    again, from the gap on; then given 3000 frames live: all are stamped and sent to the
    standby, none refused (after a failover nobody trims, so the log only
    buffers what the port has not taken);
  - a failover the standby refuses (not in sync), and one it never answers
    (failover_timeout_ms), are given up: the chain goes back to the primary
    at its epoch with what came in meanwhile, REPLAY_CANCEL tells the
    standby the epoch offered, and the next failover offers a newer one.
"""
import struct
import time

from onvm import lab, pcap, traces
from onvm.wire import (ETH_RSYNC, ETH_SHIM, HEARTBEAT, LOG_TRIM, REPLAY_ACK, REPLAY_CANCEL,
                       REPLAY_END, REPLAY_START, ROLE_PREDECESSOR, ROLE_STANDBY,
                       RSYNC_HDR_LEN, RSYNC_VERSION, VOTE, rsync_fields, rsync_frame)

RESYNC = 0x08  # RSYNC_F_RESYNC: the standby refuses to take over


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
    """(type, epoch, payload) of an RSync frame the predecessor sent."""
    (etype,) = struct.unpack_from(">H", frame, 12)
    lab.check(etype == ETH_RSYNC, f"EtherType 0x{etype:04x}, want 0x88b6")
    h = rsync_fields(frame)
    lab.check(h["version"] == RSYNC_VERSION, f"RSync version {h['version']}")
    lab.check(h["role"] == ROLE_PREDECESSOR, f"RSync sender role {h['role']}")
    return h["type"], h["epoch"], h["payload"]


def is_heartbeat(frame):
    return (struct.unpack_from(">H", frame, 12)[0] == ETH_RSYNC and
            rsync_fields(frame)["type"] == HEARTBEAT)


def inject(L, ns, ifname, *frames):
    """Send frames into `ifname` of namespace `ns` (a peer's messages)."""
    lab.send_frames(ns, ifname, L.path("inject.pcap"), list(frames))


def node_config(L, tag, trace, log_packets=65536, pri_iface=None, echo_iface=None,
                src_iface=None, failover_timeout_ms=60000):
    """pri_iface / echo_iface: the primary / standby link reads, live, what
    the test injects into that veth (the primary's / standby's messages)."""
    empty = L.path(f"{tag}-empty.pcap")
    pcap.write_pcap(empty, [])
    live = lambda iface: f"rx_iface={iface}" if iface else f"rx_pcap={empty}"
    return {
        "ports": [
            {"name": "src", "dev": (f"net_pcap0,rx_iface={src_iface}" if src_iface else
                                    f"net_pcap0,rx_pcap={trace}") +
             f",tx_pcap={L.path(tag + '-src-out.pcap')}"},
            {"name": "to_m", "dev": f"net_pcap1,{live(pri_iface)},"
                                    f"tx_pcap={L.path(tag + '-to_m.pcap')}"},
            {"name": "to_s", "dev": f"net_pcap2,{live(echo_iface)},"
                                    f"tx_pcap={L.path(tag + '-to_s.pcap')}"},
        ],
        "chains": [{"name": "in", "services": [], "ingress_port": "src", "exit_port": "to_m"}],
        "remote": {"chains": [{"name": "web", "id": 7, "role": "predecessor",
                               "primary_port": "to_m", "standby_port": "to_s",
                               "log_packets": log_packets, "log_mb": 8,
                               "failover_timeout_ms": failover_timeout_ms}]},
    }


def standby_says(mtype, epoch, run, payload=b"", flags=0):
    """A message of the standby's to the predecessor of run `run`."""
    return rsync_frame(mtype, 7, epoch, payload, role=ROLE_STANDBY, receiver_run=run,
                       flags=flags)


def check_control_counts(L, st, want):
    got = {k: st[k] for k in want}
    L.expect(got == want, f"control frames: {got}, want {want}")


def test(L):
    trace = traces.trace("smtp.pcap")
    frames = pcap.read_pcap(trace)
    n = len(frames)
    ns = L.netns("pred")
    L.veth(ns, "pri0", ns, "pri1")
    L.veth(ns, "echo0", ns, "echo1")
    node = L.node("pred", node_config(L, "pred", trace, pri_iface="pri0",
                                      echo_iface="echo0"), netns=ns).start()
    node.wait_port("to_m", "tx", n)
    remote = lambda: node.query("/onvm/remote")["web"]
    st = remote()
    run, first = st["run_id"], st["first_ts"]
    L.expect(run != 0, f"run id {run}")
    L.expect(st["stamped"] == n and st["log_pkts"] == n and st["last_ts"] == first + n - 1,
             f"stamped {st['stamped']}, log {st['log_pkts']}, last ts {st['last_ts']}; want "
             f"{n} from {first}")
    trim = 50
    watermark = first + trim - 1
    trim_pl = struct.pack(">Q", watermark)
    inject(L, ns, "pri1",
           rsync_frame(LOG_TRIM, 7, 1, trim_pl, receiver_run=run),                   # applied
           rsync_frame(LOG_TRIM, 8, 1, trim_pl, receiver_run=run),                   # another chain
           rsync_frame(LOG_TRIM, 7, 2, trim_pl, receiver_run=run),                   # another epoch
           rsync_frame(LOG_TRIM, 7, 1, trim_pl, receiver_run=run ^ 1),               # another run
           rsync_frame(LOG_TRIM, 7, 1, trim_pl, receiver_run=run, bad_crc=True),     # corrupted
           rsync_frame(VOTE, 7, 1, txid=1, receiver_run=run))                        # a VOTE
    # Reflected: a REPLAY_END the predecessor itself would send, back on to_s;
    # and a primary's LOG_TRIM arriving on the standby's link.
    inject(L, ns, "echo1",
           rsync_frame(REPLAY_END, 7, 1, struct.pack(">QQ", first + n - 1, n), receiver_run=run),
           rsync_frame(LOG_TRIM, 7, 1, trim_pl, receiver_run=run))
    lab.wait_until(lambda: remote()["ctl_wrong_role"] == 3, 10, "every injected frame handled")
    st = remote()
    check_control_counts(L, st, {"trims": 1, "log_trimmed_to": watermark,
                                 "ctl_unknown_chain": 1, "ctl_stale_epoch": 1,
                                 "ctl_stale_run": 1, "ctl_wrong_role": 3, "ctl_bad_crc": 1,
                                 "ctl_ring_full": 0, "log_pkts": n - trim})
    L.expect(st["refused_full"] == 0 and st["refused_frame"] == 0, f"refused: {st}")
    L.expect(st["state"] == "primary" and st["epoch"] == 1, f"state {st}")

    rep = node.query("/onvm/remote/failover,web")
    L.expect(rep.get("status") == "ok", f"failover: {rep}")
    # No echo yet: REPLAY_START again every 5 ms, and nothing replayed.
    lab.wait_until(lambda: remote()["ctl_retrans"] >= 2, 10, "REPLAY_START repeated")
    st = remote()
    L.expect(st["state"] == "starting" and st["replayed"] == 0 and st["epoch"] == 1 and
             st["epoch_offered"] == 2, f"before the echo: {st}")
    last = first + n - 1
    # The primary it leaves trims nothing of the range offered (a trim now
    # would leave a hole the standby waits for).
    inject(L, ns, "pri1", rsync_frame(LOG_TRIM, 7, 1, struct.pack(">Q", watermark + 10),
                                   receiver_run=run))
    lab.wait_until(lambda: remote()["trims_held"] == 1, 10, "LOG_TRIM during the failover")
    L.expect(remote()["log_trimmed_to"] == watermark, f"trimmed during a failover: {remote()}")
    inject(L, ns, "echo1", standby_says(REPLAY_START, 2, run, struct.pack(">QQ", watermark, last)))
    lab.wait_until(lambda: remote()["replayed"] >= n - trim, 10, "the log replayed")
    # The whole range sent, none acknowledged: sent again after the RTO, and
    # no REPLAY_END before the standby has it all.
    lab.wait_until(lambda: remote()["replay_timeouts"] >= 1, 10, "the replay sent again")
    st = remote()
    L.expect(st["state"] == "replaying" and st["replay_end_ns"] == 0,
             f"REPLAY_END before the replay was acknowledged: {st}")
    inject(L, ns, "echo1", standby_says(REPLAY_ACK, 2, run, struct.pack(">QQ", last + 1, 0)))
    lab.wait_until(lambda: remote()["state"] == "standby", 10, "replay finished")
    before_end = remote()["ctl_retrans"]
    lab.wait_until(lambda: remote()["ctl_retrans"] >= before_end + 2, 10, "REPLAY_END repeated")
    replayed = remote()["replayed"]
    inject(L, ns, "echo1", standby_says(REPLAY_END, 2, run, struct.pack(">QQ", last, replayed)))
    lab.wait_until(lambda: remote()["end_echoed"] == 1, 10, "REPLAY_END echoed")
    st = remote()
    L.expect(st["epoch"] == 2 and st["failovers"] == 1 and st["replay_from_ts"] == watermark and
             st["replay_acks"] == 1 and st["failovers_given_up"] == 0,
             f"after failover: {st}")
    L.expect(st["replay_end_ns"] >= st["replay_start_ns"] >= st["failover_req_ns"] > 0,
             f"failover timeline: {st}")
    rc = node.stop()
    L.expect(rc == 0, f"manager exit status {rc}")

    out_m = pcap.read_capture_out(L.path("pred-to_m.pcap"))
    hb_m = [f for f in out_m if is_heartbeat(f)]
    out_m = [f for f in out_m if not is_heartbeat(f)]
    L.expect(len(hb_m) >= 1, "no HEARTBEAT to the primary")
    for f in hb_m:
        h = rsync_fields(f)
        L.expect(h["role"] == ROLE_PREDECESSOR and h["sender_run"] == run and h["chain"] == 7,
                 f"HEARTBEAT to the primary: {h}")
    L.expect(len(out_m) == n, f"to_m: {len(out_m)} frames, want {n}")
    for i, (got, want) in enumerate(zip(out_m, frames)):
        ts, flags, inner, plain = pop_shim(got)
        L.expect(ts == first + i, f"to_m frame {i}: ts {ts}, want {first + i}")
        L.expect(flags == 0, f"to_m frame {i}: flags {flags}")
        L.expect(inner == struct.unpack_from(">H", want, 12)[0], f"to_m frame {i}: inner type")
        L.expect(plain == want, f"to_m frame {i}: differs from the trace once unshimmed")

    out_s = [f for f in pcap.read_capture_out(L.path("pred-to_s.pcap")) if not is_heartbeat(f)]
    starts = 0
    while starts < len(out_s) and struct.unpack_from(">H", out_s[starts], 12)[0] == ETH_RSYNC:
        mtype, epoch, pl = rsync_msg(out_s[starts])
        after, newest = struct.unpack(">QQ", pl)
        L.expect((mtype, epoch, after, newest) == (REPLAY_START, 2, watermark, last),
                 f"REPLAY_START: type {mtype} epoch {epoch} after {after} newest {newest}")
        starts += 1
    # nothing replayed before the echo: the standby would not have taken it
    L.expect(starts >= 3, f"{starts} REPLAY_STARTs before the replay, want >= 3")
    # The replay, then (after the RTO) the same again from the first entry
    # not acknowledged, before any REPLAY_END.
    data = []
    k = starts
    while k < len(out_s) and struct.unpack_from(">H", out_s[k], 12)[0] == ETH_SHIM:
        data.append(out_s[k])
        k += 1
    L.expect(len(data) >= 2 * (n - trim) and len(data) % (n - trim) == 0,
             f"{len(data)} replayed frames, want the range whole, twice or more "
             f"({n - trim} each)")
    for j, f in enumerate(data):
        i = trim + j % (n - trim)
        ts, flags, _, plain = pop_shim(f)
        L.expect(ts == first + i and flags == 1, f"replayed frame {j}: ts {ts} flags {flags}, "
                 f"want ts {first + i}")
        L.expect(plain == frames[i], f"replayed frame {j}: differs from the trace")
    ends = out_s[k:]
    L.expect(len(ends) >= 3, f"{len(ends)} REPLAY_ENDs, want >= 3 (repeated until echoed)")
    for f in ends:
        mtype, epoch, pl = rsync_msg(f)
        lastr, count = struct.unpack(">QQ", pl)
        L.expect((mtype, epoch, lastr) == (REPLAY_END, 2, last) and count == len(data),
                 f"REPLAY_END: type {mtype} epoch {epoch} last {lastr} count {count}")

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
    out = [f for f in pcap.read_capture_out(L.path("full-to_m.pcap")) if not is_heartbeat(f)]
    L.expect(len(out) == 1024, f"full log: {len(out)} frames sent, want 1024")
    for i in range(1024):
        ts, _, _, plain = pop_shim(out[i])
        L.expect(ts == st["first_ts"] + i and plain == bframes[i],
                 f"full log: frame {i} (ts {ts})")

    # After a failover the log is only a buffer: more input than it holds
    # goes through.
    L.veth(ns, "in0", ns, "in1")
    L.veth(ns, "echo2", ns, "echo3")
    node = L.node("after", node_config(L, "after", None, log_packets=1024, echo_iface="echo2",
                                       src_iface="in0"), netns=ns).start()
    remote = lambda: node.query("/onvm/remote")["web"]
    run = remote()["run_id"]
    L.expect(node.query("/onvm/remote/failover,web").get("status") == "ok", "failover")
    lab.wait_until(lambda: remote()["ctl_retrans"] >= 1, 10, "REPLAY_START sent")
    last = remote()["last_ts"]
    inject(L, ns, "echo3", standby_says(REPLAY_START, 2, run, struct.pack(">QQ", last, last)))
    lab.wait_until(lambda: remote()["state"] == "standby", 10, "replay (of nothing) done")
    small = [f for f in bframes if len(f) <= 1514]  # what the veth's MTU takes
    # Until REPLAY_END is echoed, the standby (still replaying until it
    # gets it) may report a gap in the input that follows: sent again,
    # from the log, from the gap on.
    pre = small[:20]
    lab.send_frames(ns, "in1", L.path("pre.pcap"), pre)
    lab.wait_until(lambda: remote()["stamped"] >= len(pre), 10, "input before the echo")
    inject(L, ns, "echo3", standby_says(REPLAY_ACK, 2, run, struct.pack(">QQ", last + 6,
                                                                         last + 8)))
    lab.wait_until(lambda: remote()["resent"] >= len(pre) - 5, 10,
                   f"the input from the gap on sent again: {remote()}")
    inject(L, ns, "echo3", standby_says(REPLAY_END, 2, run, struct.pack(">QQ", 0, 0)))
    lab.wait_until(lambda: remote()["end_echoed"] == 1, 10, "REPLAY_END echoed")
    resent = remote()["resent"]
    live = L.path("live.pcap")
    many = (small * (3000 // len(small) + 1))[:3000]
    pcap.write_pcap(live, many)
    lab.send_frames(ns, "in1", live)
    lab.wait_until(lambda: (lambda s: s["stamped"] + s["refused_full"] + s["refused_frame"] >=
                            len(many))(remote()), 60, "every live frame stamped or refused")
    st = remote()
    L.expect(st["stamped"] == len(pre) + len(many) - st["refused_frame"] and
             st["refused_full"] == 0,
             f"after the failover: stamped {st['stamped']}, refused {st['refused_full']} "
             f"of {len(pre)} + {len(many)} (log of 1024)")
    L.expect(st["log_pkts"] <= 64, f"after the failover the log still holds {st['log_pkts']}")
    rc = node.stop()
    L.expect(rc == 0, f"manager exit status {rc}")
    data = [f for f in pcap.read_capture_out(L.path("after-to_s.pcap"))
            if struct.unpack_from(">H", f, 12)[0] == ETH_SHIM]
    L.expect(len(data) == st["stamped"] + resent, f"to_s: {len(data)} stamped frames, want "
             f"{st['stamped']} and {resent} sent again")
    L.expect([pop_shim(f)[0] for f in data[len(pre):len(pre) + resent]] ==
             list(range(last + 6, last + 6 + resent)),
             f"sent again: not the input from the gap on, in order")

    given_up(L, ns, bframes)


def given_up(L, ns, bframes):
    """Failovers that do not happen: refused by the standby, then never
    answered.  Each goes back to the primary with what came in meanwhile,
    tells the standby REPLAY_CANCEL at the epoch offered, and the next
    failover offers a newer one."""
    L.veth(ns, "in2", ns, "in3")
    L.veth(ns, "echo4", ns, "echo5")
    node = L.node("giveup", node_config(L, "giveup", None, echo_iface="echo4", src_iface="in2",
                                        failover_timeout_ms=300), netns=ns).start()
    remote = lambda: node.query("/onvm/remote")["web"]
    run = remote()["run_id"]
    small = [f for f in bframes if len(f) <= 1514][:200]
    batch = L.path("giveup-batch.pcap")
    pcap.write_pcap(batch, small[:100])
    lab.send_frames(ns, "in3", batch)
    lab.wait_until(lambda: remote()["stamped"] == 100, 30, "first batch stamped")

    L.expect(node.query("/onvm/remote/failover,web").get("status") == "ok", "failover")
    lab.wait_until(lambda: remote()["state"] == "starting", 10, "REPLAY_START sent")
    # Input while the failover is pending is logged, and goes to the primary
    # once the failover is given up.
    pcap.write_pcap(batch, small[100:150])
    lab.send_frames(ns, "in3", batch)
    lab.wait_until(lambda: remote()["stamped"] == 150, 30, "second batch stamped")
    st = remote()
    L.expect(st["state"] == "starting" and st["epoch"] == 1 and st["epoch_offered"] == 2,
             f"pending failover: {st}")
    inject(L, ns, "echo5", standby_says(REPLAY_START, 2, run, flags=RESYNC,
                                     payload=struct.pack(">QQ", 0, 0)))
    lab.wait_until(lambda: remote()["state"] == "primary", 10, "refused failover given up")
    st = remote()
    L.expect(st["failovers_refused"] == 1 and st["failovers_given_up"] == 1 and
             st["epoch"] == 1, f"after the refusal: {st}")
    lab.wait_until(lambda: remote()["behind"] == 0, 10, "the pending input sent to the primary")

    # The next one is never answered: given up after failover_timeout_ms.
    L.expect(node.query("/onvm/remote/failover,web").get("status") == "ok", "second failover")
    lab.wait_until(lambda: remote()["failovers"] == 2, 10, "second REPLAY_START sent")
    L.expect(remote()["epoch_offered"] == 3, f"second failover offers {remote()}")
    lab.wait_until(lambda: remote()["failovers_given_up"] == 2, 10 * lab.SLOWDOWN,
                   "unanswered failover given up")
    st = remote()
    L.expect(st["state"] == "primary" and st["epoch"] == 1 and st["failovers_refused"] == 1,
             f"after the time-out: {st}")
    # Its echo arriving late now is an answer to nothing the predecessor
    # still offers... unless the standby took over: then it follows it.
    pcap.write_pcap(batch, small[150:200])
    lab.send_frames(ns, "in3", batch)
    lab.wait_until(lambda: remote()["stamped"] == 200 and remote()["behind"] == 0, 30,
                   "third batch stamped and sent")
    # REPLAY_CANCEL goes out 20 times, one every 5 ms: let them all go.
    time.sleep(0.5 * lab.SLOWDOWN)
    rc = node.stop()
    L.expect(rc == 0, f"manager exit status {rc}")
    out_m = [f for f in pcap.read_capture_out(L.path("giveup-to_m.pcap")) if not is_heartbeat(f)]
    L.expect(len(out_m) == 200, f"to_m: {len(out_m)} frames, want all 200")
    for i, f in enumerate(out_m):
        ts, flags, _, plain = pop_shim(f)
        L.expect(plain == small[i] and flags == 0, f"to_m frame {i} after give-ups")
    ctl = [rsync_fields(f) for f in pcap.read_capture_out(L.path("giveup-to_s.pcap"))
           if struct.unpack_from(">H", f, 12)[0] == ETH_RSYNC and not is_heartbeat(f)]
    shims = [f for f in pcap.read_capture_out(L.path("giveup-to_s.pcap"))
             if struct.unpack_from(">H", f, 12)[0] == ETH_SHIM]
    L.expect(not shims, f"{len(shims)} data frames sent to a standby that never took over")
    cancels = {}
    for h in ctl:
        if h["type"] == REPLAY_CANCEL:
            cancels[h["epoch"]] = cancels.get(h["epoch"], 0) + 1
        L.expect(h["role"] == ROLE_PREDECESSOR and h["type"] in (REPLAY_START, REPLAY_CANCEL),
                 f"to the standby: {h}")
    # Epoch 2's cancels stop when epoch 3 is offered; epoch 3's all go out.
    L.expect(set(cancels) == {2, 3} and 1 <= cancels[2] <= 20 and cancels[3] == 20,
             f"REPLAY_CANCELs by epoch: {cancels}")


if __name__ == "__main__":
    lab.run("remote_predecessor", test)
