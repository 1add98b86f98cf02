#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 REINFORCE-NFV authors
"""Malformed and non-IPv4 frames are counted by reason, forwarded, and break nothing.

A capture built here with scapy (addresses from 198.18.0.0/15) mixes runt and
truncated frames, bad IPv4 headers (version, IHL, total length), cut or
inconsistent TCP/UDP headers, ARP/IPv6/LLC/PPPoE frames, and valid TCP, UDP,
ICMP, VLAN, QinQ, padded, IP-option and fragment packets interleaved with the
bad ones.  Every frame says what the parser must make of it (the reasons of
onvm_pkt_parse.h); the trace goes through bridge -n -> basic_monitor ->
simple_forward.  Asserted:
  - /onvm/ports: rx == tx == frames and each parse counter equals the number
    of frames built for that reason;
  - basic_monitor: packets, bytes, non_ip, malformed per reason and the flows
    of the valid frames (directional 5-tuple, packets, bytes) as built;
  - every frame comes out unchanged and in order (a monitor forwards);
  - no drops, all three NFs still running with their original pids before
    shutdown, manager exit 0, nothing left behind.
"""
import struct

from onvm import demo_chain, flowtable, lab, pcap

ETH = bytes.fromhex("020000000002" "020000000001")
A1, A2, A3, A4 = "198.18.0.1", "198.19.0.2", "198.18.7.3", "198.19.7.4"
REASONS = ["truncated_l2", "not_ipv4", "truncated_l3", "bad_ip_version", "bad_ihl",
           "bad_ip_total_length", "truncated_l4", "bad_l4_length"]


def build():
    """[(frame, reason, flow or None)]: what each frame is and must be counted as."""
    try:
        from scapy.all import (ARP, ICMP, IP, LLC, STP, TCP, UDP, Dot1AD, Dot1Q, Dot3, Ether,
                               IPOption_NOP, IPv6, Raw, raw)
    except ImportError as e:
        raise lab.TestSkip(f"scapy is not available to /usr/bin/python3: {e}")
    E = Ether(src="02:00:00:00:00:01", dst="02:00:00:00:00:02")
    eth = lambda etype: ETH + struct.pack(">H", etype)
    pay = lambda n: Raw(bytes(range(n)))

    def ok(pkt, src, dst, proto, sport=0, dport=0):
        return (raw(pkt), "ok", (src, dst, proto, sport, dport))

    valid = [
        ok(E / IP(src=A1, dst=A2) / TCP(sport=1000, dport=80, flags="S"), A1, A2, 6, 1000, 80),
        ok(E / IP(src=A2, dst=A1) / TCP(sport=80, dport=1000, flags="SA") / pay(30),
           A2, A1, 6, 80, 1000),
        ok(E / IP(src=A1, dst=A2) / UDP(sport=5000, dport=53) / pay(20), A1, A2, 17, 5000, 53),
        ok(E / IP(src=A1, dst=A2) / ICMP(type=8) / pay(16), A1, A2, 1),
        ok(E / Dot1Q(vlan=10) / IP(src=A3, dst=A4) / UDP(sport=4000, dport=4001) / pay(40),
           A3, A4, 17, 4000, 4001),
        ok(E / Dot1AD(vlan=20) / Dot1Q(vlan=30) / IP(src=A3, dst=A4) / TCP(sport=2000, dport=443),
           A3, A4, 6, 2000, 443),
        # padded to the 60-byte minimum: total length < frame is fine
        (raw(E / IP(src=A4, dst=A3) / UDP(sport=7000, dport=7001) / pay(1)).ljust(60, b"\0"),
         "ok", (A4, A3, 17, 7000, 7001)),
        ok(E / IP(src=A1, dst=A4, options=[IPOption_NOP()] * 4) /
           TCP(sport=3000, dport=22, options=[("NOP", None)] * 12) / pay(10), A1, A4, 6, 3000, 22),
        # a non-first fragment has no L4 header: ports 0
        ok(E / IP(src=A2, dst=A3, proto=17, frag=185) / pay(100), A2, A3, 17),
        # the first fragment of a TCP segment carries the full TCP header
        ok(E / IP(src=A3, dst=A1, flags="MF") / TCP(sport=8080, dport=9090) / pay(64),
           A3, A1, 6, 8080, 9090),
        # the first fragment of a UDP datagram: the UDP length covers the whole
        # datagram, more than this fragment carries -- still a valid packet
        ok(E / IP(src=A4, dst=A2, flags="MF") / UDP(sport=6000, dport=6001, len=1008) / pay(96),
           A4, A2, 17, 6000, 6001),
    ]
    bad = []
    add = lambda reason, *frames: bad.extend((f if isinstance(f, bytes) else raw(f), reason, None)
                                             for f in frames)
    add("truncated_l2", bytes(range(10)), ETH + b"\x08",              # runts
        eth(0x8100) + b"\x00\x0a")                                    # VLAN tag cut
    add("truncated_l3", eth(0x0800),                                  # no IPv4 header at all
        eth(0x8100) + b"\x00\x0a\x08\x00" + raw(IP(src=A1, dst=A2))[:10],
        E / IP(src=A1, dst=A2, ihl=15) / pay(10))                     # IHL 15, 30 bytes there
    add("bad_ip_version", *[E / IP(src=A1, dst=A2, version=v) / TCP() for v in (0, 5, 6, 15)])
    add("bad_ihl", *[E / IP(src=A1, dst=A2, ihl=i) / TCP() for i in (0, 1, 2, 3, 4)])
    add("bad_ip_total_length",
        E / IP(src=A1, dst=A2, len=1500) / UDP() / pay(10),          # longer than the frame
        E / IP(src=A1, dst=A2, len=200) / TCP(),
        E / IP(src=A1, dst=A2, len=41) / TCP(),                      # one byte more than the frame
        E / IP(src=A1, dst=A2, len=0) / TCP(),                       # shorter than the header
        E / IP(src=A1, dst=A2, len=19) / TCP(),
        E / IP(src=A1, dst=A2, len=23, options=[IPOption_NOP()] * 4) / TCP())
    add("truncated_l4",
        E / IP(src=A1, dst=A2, proto=6),                             # no TCP header
        E / IP(src=A1, dst=A2, proto=6) / pay(10),
        E / IP(src=A1, dst=A2, proto=6) / pay(19),
        E / IP(src=A1, dst=A2, len=30) / TCP(),                      # cut by the total length
        E / IP(src=A1, dst=A2, proto=17),                            # no UDP header
        E / IP(src=A1, dst=A2, proto=17) / pay(4),
        E / IP(src=A1, dst=A2, proto=17) / pay(7))
    add("bad_l4_length",
        *[E / IP(src=A1, dst=A2) / TCP(dataofs=d) for d in (0, 1, 4)],  # data offset < 5
        E / IP(src=A1, dst=A2) / TCP(dataofs=15),                    # options beyond the segment
        E / IP(src=A1, dst=A2) / TCP(dataofs=6),
        E / IP(src=A1, dst=A2) / UDP(len=0),                         # UDP length < 8
        E / IP(src=A1, dst=A2) / UDP(len=7) / pay(4),
        E / IP(src=A1, dst=A2) / UDP(len=500) / pay(10))             # longer than the datagram
    add("not_ipv4",
        E / ARP(psrc=A1, pdst=A2),
        E / ARP(op=2, psrc=A2, pdst=A1),
        E / IPv6(src="2001:2::1", dst="2001:2::2") / UDP(sport=1, dport=2) / pay(8),
        E / Dot1Q(vlan=5) / ARP(psrc=A3, pdst=A4),
        Dot3(src="02:00:00:00:00:01", dst="01:80:c2:00:00:00") / LLC() / STP(),
        E / Dot1Q(vlan=6) / IPv6(src="2001:2::3", dst="2001:2::4"),
        eth(0x8100) + b"\x00\x07\x88\x64" + b"\x11\x00\x00\x01\x00\x2a\x00\x21" +
        raw(IP(src=A1, dst=A2) / UDP() / pay(12)),                  # PPPoE session
        eth(0x88CC) + bytes(46),                                     # LLDP
        eth(0x8137) + bytes(46))                                     # IPX
    frames = list(valid)
    for i, b in enumerate(bad):  # interleave: every bad frame is followed by a good one
        frames += [b, valid[i % len(valid)]]
    return frames


def main(L):
    frames = build()
    trace = L.path("malformed.pcap")
    pcap.write_pcap(trace, [f for f, _, _ in frames])
    want = {r: sum(1 for _, reason, _ in frames if reason == r) for r in REASONS}
    want_flows = {}
    for f, _, flow in frames:
        if flow is not None:
            e = want_flows.setdefault(flow, [0, 0])
            e[0] += 1
            e[1] += len(f)
    total, total_bytes = len(frames), sum(len(f) for f, _, _ in frames)
    print(f"{total} frames: {sum(1 for *_, fl in frames if fl)} valid, {want}")

    out, mon = L.path("out.pcap"), L.path("monitor.json")
    node = L.node("malformed", demo_chain.three_nf_chain(trace, out, mon)).start()
    pids = {v["name"]: v["pid"] for v in node.nfs().values()}
    port = node.wait_port("in", "tx", total)
    L.expect(port["rx"] == total and port["tx"] == total,
             f"port rx {port['rx']} tx {port['tx']}, want {total}")
    for r in REASONS:
        L.expect(port[r] == want[r], f"/onvm/ports {r} = {port[r]}, want {want[r]}")
    drops = {k: v for k, v in node.drops().items() if v}
    L.expect(not drops, f"drops {drops}")
    nfs = node.nfs()
    L.expect(len(nfs) == 3, f"{len(nfs)} NFs in /onvm/nfs, want 3")
    for nf in nfs.values():
        L.expect(nf["status"] == "running" and nf["pid"] == pids.get(nf["name"]) and
                 lab.pid_alive(nf["pid"]),
                 f"NF {nf['name']} is {nf['status']} pid {nf['pid']} (was {pids.get(nf['name'])})")
        L.expect(nf["rx"] == total and nf["tx"] == total,
                 f"NF {nf['name']} rx {nf['rx']} tx {nf['tx']}, want {total}")
    L.expect(node.info()["nf_deaths"] == 0, "an NF died")

    rc = node.stop()
    L.expect(rc == 0, f"manager exit status {rc}")
    L.expect(not node.leftover_nfs, f"NFs still alive after the manager: {node.leftover_nfs}")
    L.expect(not node.runtime_leftovers(), f"runtime files left: {node.runtime_leftovers()}")
    pcap.compare_frames(pcap.read_capture_out(out), [f for f, _, _ in frames], "output capture")

    doc = lab.read_json(mon)
    L.expect(doc["packets"] == total, f"monitor packets {doc['packets']}, want {total}")
    L.expect(doc["bytes"] == total_bytes, f"monitor bytes {doc['bytes']}, want {total_bytes}")
    L.expect(doc["non_ip"] == want["not_ipv4"],
             f"monitor non_ip {doc['non_ip']}, want {want['not_ipv4']}")
    L.expect(doc["untracked"] == 0, f"monitor untracked {doc['untracked']}")
    for r in REASONS:
        if r != "not_ipv4":
            L.expect(doc["malformed"].get(r) == want[r],
                     f"monitor malformed.{r} = {doc['malformed'].get(r)}, want {want[r]}")
    diff = flowtable.diff_flows(flowtable.monitor_flows(doc), want_flows)
    L.expect(not diff, "monitor flows differ:\n    " + "\n    ".join(diff))


if __name__ == "__main__":
    lab.run("malformed", main)
