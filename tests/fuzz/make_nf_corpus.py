#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 REINFORCE-NFV authors
"""Write the seeds of fuzz_nf_config (corpus_nf_config/) and fuzz_nf_packets
(corpus_nf_packets/).

corpus_nf_config: byte 0 selects the parser (0 firewall, 1 load_balancer,
2 nat, 3 vlan_tagger, 4 nondet schedule, 5 nondet -m argument), the rest is
the text: for each, the example of the NF's README, small valid variants and
invalid ones (one per kind of rejection).

corpus_nf_packets: byte 0 selects the NF and its fixed config (the order of
`configs` in fuzz_nf_packets.c: 0 firewall, 1 lb, 2 lb_vip, 3 nat,
4 vlan_tagger, 5 vlan_tagger_keep, 6 nondet_count, 7 nondet_schedule, 8 dpi,
9 nat_wide),
byte 1 the split point of run B, byte 2 the clock step (bits 0-5, x 50 ms),
no headroom (bit 6), no derived replies (bit 7); then frames separated by
FE ED FA CE.  The frames come from the tree's traces/ (nDPI's captures,
$ONVM_TRACES overrides the directory), some rewritten to hit a config (to the
load balancer's VIP, from a NAT's inside), plus a few made by hand (ICMP,
fragments, QinQ, truncated).

Usage: tests/fuzz/make_nf_corpus.py [OUTDIR]   (default: next to this
script; with OUTDIR the two corpora go to OUTDIR/corpus_nf_config and
OUTDIR/corpus_nf_packets).  Run it with /usr/bin/python3 (scapy reads the
pcapng traces).  The output is deterministic; the files are committed, so
rerun this only when changing the seeds or fuzz_nf_packets.c's configs.
"""
import glob
import os
import struct
import sys

from scapy.all import rdpcap  # pylint: disable=import-error

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from make_pkt_corpus import write_corpus  # noqa: E402  pylint: disable=wrong-import-position

TRACES = os.environ.get("ONVM_TRACES") or os.path.join(
    os.path.dirname(os.path.abspath(__file__)), "..", "..", "traces")
SEP = b"\xfe\xed\xfa\xce"

# fuzz_nf_packets.c's configs
FW, LB, LB_VIP, NAT, VT, VT_KEEP, ND_COUNT, ND_SCHED, DPI, NAT_WIDE = range(10)
VIP = bytes([198, 18, 0, 100])
BACKEND1 = bytes([198, 18, 1, 1])
EXTERNAL = bytes([198, 18, 0, 1])

# fuzz_nf_config.c's parsers
P_FW, P_LB, P_NAT, P_VT, P_ND_SCHED, P_ND_ARG = range(6)


# ---- configs ---------------------------------------------------------------------------

FW_EXAMPLE = """{
  "default": "deny",
  "non_ip": "allow",
  "malformed": "deny",
  "rules": [
    {"name": "no_telnet", "action": "deny", "proto": "tcp", "dport": 23},
    {"name": "web_in", "action": "allow", "dst": "198.18.10.0/24", "proto": "tcp",
     "dport": [80, 443]},
    {"name": "dns", "action": "allow", "proto": "udp", "dport": 53},
    {"name": "ping", "action": "allow", "proto": "icmp", "src": "198.18.0.0/15"},
    {"name": "gre_lab", "action": "allow", "proto": 47, "src": "198.19.0.0/16",
     "dst": "198.19.0.0/16"}
  ]
}
"""

LB_EXAMPLE = """{
  "vip": "198.18.0.100",
  "backends": [
    {"ip": "198.18.1.1", "mac": "02:00:00:00:01:01"},
    {"ip": "198.18.1.2", "mac": "02:00:00:00:01:02"}
  ],
  "idle_timeout_ms": 30000,
  "flows": 65536
}
"""

NAT_EXAMPLE = """{
  "internal": ["10.0.0.0/8", "192.168.0.0/16"],
  "external_ip": "198.18.0.1",
  "port_min": 1024,
  "port_max": 65535,
  "idle_timeout_ms": 30000,
  "flows": 65536
}
"""

VT_EXAMPLE = """{
  "default": {"vlan": 42, "pcp": 3},
  "rules": [
    {"src": "198.18.1.0/24", "proto": "tcp", "dport": 443, "vlan": 100, "pcp": 4},
    {"dst": "198.19.0.0/16", "proto": "udp", "sport": [1000, 1999], "vlan": 200},
    {"proto": "icmp", "vlan": 300, "pcp": 7},
    {"proto": 47, "vlan": 4094}
  ],
  "idle_timeout_ms": 30000,
  "flows": 65536
}
"""

ND_EXAMPLE = """[
  {"seconds": 10, "mode": "interval", "value": 1000},
  {"seconds": 10, "mode": "count", "value": 100},
  {"seconds": 5, "mode": "none"},
  {"seconds": 10, "mode": "interval", "value": 250}
]
"""


def config_seeds():
    """(name, bytes) for corpus_nf_config."""
    s = []

    def add(sel, name, text):
        s.append((f"{sel}_{name}", bytes([sel]) + text.encode()))

    add(P_FW, "example", FW_EXAMPLE)
    add(P_FW, "minimal", '{"default": "allow"}')
    add(P_FW, "empty_rules_crlf", '{\r\n"default": "deny", "rules": []\r\n}\r\n')
    add(P_FW, "bad_host_bits", '{"default": "deny", "rules": [\n {"name": "a", "action": '
        '"allow", "src": "198.18.0.1/15"}]}')
    add(P_FW, "bad_ports_without_proto", '{"default": "deny", "rules": [{"name": "a", '
        '"action": "deny", "dport": 80}]}')
    add(P_FW, "bad_duplicate_name", '{"default": "deny", "rules": [{"name": "a", "action": '
        '"deny"}, {"name": "a", "action": "allow"}]}')
    add(P_FW, "bad_empty_range", '{"default": "deny", "rules": [{"name": "r", "action": '
        '"deny", "proto": "udp", "sport": [9, 8]}]}')
    add(P_FW, "bad_unknown_field", '{"default": "deny", "rule": []}')
    add(P_FW, "bad_action", '{"default": "drop"}')
    add(P_FW, "bad_syntax", '{"default": "deny",, }')

    add(P_LB, "example", LB_EXAMPLE)
    add(P_LB, "transparent", '{"backends": [{"ip": "198.18.1.1", "mac": "02:00:00:00:01:01"}],'
        ' "flows": 16, "idle_timeout_ms": 1}')
    add(P_LB, "bad_vip_is_backend", '{"vip": "198.18.1.1", "backends": [{"ip": "198.18.1.1", '
        '"mac": "02:00:00:00:01:01"}]}')
    add(P_LB, "bad_no_backends", '{"vip": "198.18.0.100", "backends": []}')
    add(P_LB, "bad_duplicate_backend", '{"backends": [{"ip": "198.18.1.1", "mac": '
        '"02:00:00:00:01:01"}, {"ip": "198.18.1.1", "mac": "02:00:00:00:01:02"}]}')
    add(P_LB, "bad_multicast_mac", '{"backends": [{"ip": "198.18.1.1", "mac": '
        '"01:00:5e:00:00:01"}]}')
    add(P_LB, "bad_flows", '{"backends": [{"ip": "198.18.1.1", "mac": "02:00:00:00:01:01"}],'
        ' "flows": 100}')
    add(P_LB, "bad_flows_too_many", '{"backends": [{"ip": "198.18.1.1", "mac": '
        '"02:00:00:00:01:01"}], "flows": 8388608}')

    add(P_NAT, "example", NAT_EXAMPLE)
    add(P_NAT, "small", '{"internal": ["10.0.0.0/8"], "external_ip": "198.18.0.1", '
        '"port_min": 40000, "port_max": 40000, "flows": 16}')
    add(P_NAT, "bad_external_inside", '{"internal": ["198.18.0.0/15"], '
        '"external_ip": "198.18.0.1"}')
    add(P_NAT, "bad_port_range", '{"internal": ["10.0.0.0/8"], "external_ip": "198.18.0.1",'
        '\n "port_min": 5000, "port_max": 4999}')
    add(P_NAT, "bad_prefix", '{"internal": ["10.0.0.1/8"], "external_ip": "198.18.0.1"}')
    add(P_NAT, "bad_external_multicast", '{"internal": ["10.0.0.0/8"], '
        '"external_ip": "224.0.0.1"}')
    add(P_NAT, "bad_missing_internal", '{"external_ip": "198.18.0.1"}')

    add(P_VT, "example", VT_EXAMPLE)
    add(P_VT, "keep", '{"rules": [{"dst": "192.168.0.0/16", "vlan": 10}], '
        '"idle_timeout_ms": 0, "flows": 16}')
    add(P_VT, "empty", '{}')
    add(P_VT, "bad_pcp_without_vlan", '{"default": {"vlan": 0, "pcp": 5}}')
    add(P_VT, "bad_ports_without_proto", '{"rules": [{"sport": 53, "vlan": 5}]}')
    add(P_VT, "bad_vlan_4095", '{"rules": [{"proto": "udp", "vlan": 4095}]}')
    add(P_VT, "bad_flows", '{"flows": 1000}')
    add(P_VT, "bad_range", '{"rules": [{"proto": 6, "dport": [443, 80], "vlan": 5}]}')
    # Known finding (README.md): accepted, but the table does not fit a region.
    add(P_VT, "finding_flows_2_24", '{"default": {"vlan": 7}, "flows": 16777216}')

    add(P_ND_SCHED, "example", ND_EXAMPLE)
    add(P_ND_SCHED, "one", '[{"seconds": 0.001, "mode": "count", "value": 4294967295}]')
    add(P_ND_SCHED, "bad_empty", '[]')
    add(P_ND_SCHED, "bad_none_with_value", '[{"seconds": 1, "mode": "none", "value": 3}]')
    add(P_ND_SCHED, "bad_mode", '[{"seconds": 1, "mode": "sometimes", "value": 3}]')
    add(P_ND_SCHED, "bad_seconds", '[\n  {"seconds": 0, "mode": "count", "value": 3}\n]')
    add(P_ND_SCHED, "bad_interval", '[{"seconds": 1, "mode": "interval", "value": '
        '3600000001}]')
    add(P_ND_SCHED, "bad_not_list", '{"seconds": 1}')

    for name, arg in (("count", "count:7"), ("interval", "interval:1000"), ("none", "none"),
                      ("bad_count_empty", "count:"), ("bad_interval_zero", "interval:0"),
                      ("bad_leading_zero", "count:01"), ("bad_mode", "sometimes:3"),
                      ("bad_schedule_empty", "schedule:")):
        add(P_ND_ARG, name, arg)
    return s


# ---- frames ------------------------------------------------------------------------------

def trace(name):
    return [bytes(p) for p in rdpcap(os.path.join(TRACES, name + ".pcap"))]


def csum(b):
    if len(b) % 2:
        b += b"\x00"
    s = sum(struct.unpack(f"!{len(b) // 2}H", b))
    while s >> 16:
        s = (s & 0xFFFF) + (s >> 16)
    return (~s) & 0xFFFF


def l2_len(f):
    off = 14
    et = struct.unpack("!H", f[12:14])[0]
    while et in (0x8100, 0x88A8) and off + 4 <= len(f):
        et = struct.unpack("!H", f[off + 2:off + 4])[0]
        off += 4
    return off, et


def set_ip(f, src=None, dst=None):
    """The frame with its IPv4 source/destination replaced, IP checksum redone."""
    off, et = l2_len(f)
    assert et == 0x0800
    b = bytearray(f)
    if src is not None:
        b[off + 12:off + 16] = src
    if dst is not None:
        b[off + 16:off + 20] = dst
    ihl = (b[off] & 15) * 4
    b[off + 10:off + 12] = b"\x00\x00"
    b[off + 10:off + 12] = struct.pack("!H", csum(bytes(b[off:off + ihl])))
    return bytes(b)


def set_sport(f, port):
    off, _ = l2_len(f)
    b = bytearray(f)
    l4 = off + (b[off] & 15) * 4
    b[l4:l4 + 2] = struct.pack("!H", port)
    return bytes(b)


def eth(et, src_mac=b"\x02\x00\x00\x00\x00\x01", tags=()):
    h = b"\x02\x00\x00\x00\x00\x02" + src_mac
    if not tags:
        return h + struct.pack("!H", et)
    h += struct.pack("!H", tags[0])
    for i, _ in enumerate(tags):
        nxt = tags[i + 1] if i + 1 < len(tags) else et
        h += struct.pack("!HH", 0x1000 * (i & 1) + 100 + i, nxt)  # DEI on the 2nd
    return h


def ipv4(proto, payload, src=bytes([10, 1, 2, 3]), dst=bytes([192, 168, 7, 9]), frag=0,
         opt_words=0):
    hlen = 20 + 4 * opt_words
    hdr = struct.pack("!BBHHHBBH4s4s", 0x40 | (hlen // 4), 0, hlen + len(payload), 0x1234,
                      frag, 64, proto, 0, src, dst) + b"\x01" * (4 * opt_words)
    hdr = hdr[:10] + struct.pack("!H", csum(hdr)) + hdr[12:]
    return hdr + payload


def udp(sport, dport, payload=b"", ck=0x1234):
    return struct.pack("!HHHH", sport, dport, 8 + len(payload), ck) + payload


def tcp(sport, dport, payload=b""):
    return struct.pack("!HHIIBBHHH", sport, dport, 1, 0, 5 << 4, 0x18, 65535, 0, 0) + payload


def seed(cfg, split, flags, frames):
    for f in frames:
        assert SEP not in f, "a frame holds the separator"
        assert len(f) <= 20000
    return bytes([cfg, split, flags]) + SEP.join(frames)


def first(frames, n, pred=lambda f: True):
    return [f for f in frames if pred(f)][:n]


def is_ipv4(f):
    return len(f) >= 34 and l2_len(f)[1] == 0x0800


def packet_seeds():
    """(name, bytes) for corpus_nf_packets."""
    tr = {t: trace(t) for t in ("dns", "http-manipulated", "tor", "quic", "wireguard",
                                 "skype-conference-call", "ssh", "webex", "ftp", "smtp",
                                 "mpeg", "bittorrent")}
    http, quic, wg = tr["http-manipulated"], tr["quic"], tr["wireguard"]
    ssh, tor, dns = tr["ssh"], tr["tor"], tr["dns"]
    small = [f for f in tr["webex"] if len(f) < 1600]
    icmp = eth(0x0800) + ipv4(1, b"\x08\x00\xf7\xfe\x00\x01\x00\x00", src=bytes([198, 18, 0, 9]))
    gre = eth(0x0800) + ipv4(47, b"\x00\x00\x08\x00", dst=bytes([198, 19, 0, 5]))
    frag_first = eth(0x0800) + ipv4(17, udp(1111, 53, b"x" * 16), frag=0x2000)
    frag_later = eth(0x0800) + ipv4(17, b"y" * 16, frag=3)
    qinq = eth(0x0800, tags=(0x88A8, 0x8100)) + ipv4(6, tcp(40000, 443, b"hello"))
    opts = eth(0x0800) + ipv4(17, udp(1500, 2000, b"opts"), dst=bytes([192, 168, 1, 1]),
                              opt_words=2)
    runt = http[0][:13]
    trunc_l4 = http[0][:14 + 20 + 10]
    udp_zero_ck = eth(0x0800) + ipv4(17, udp(5000, 53, b"q", ck=0))
    s = []

    def add(name, *a):
        s.append((name, seed(*a)))

    # firewall: each rule, each policy
    add("0_fw_http_syn", FW, 0, 0, [http[0]])
    add("0_fw_dns", FW, 30, 0, [dns[0]])
    add("0_fw_tor_llc", FW, 5, 0, [tor[0]])
    add("0_fw_icmp_gre", FW, 0, 1, [icmp, gre])
    add("0_fw_frags", FW, 40, 1, [frag_first, frag_later])
    add("0_fw_ssh_quic", FW, 33, 2, first(ssh, 3) + first(quic, 2))
    add("0_fw_malformed", FW, 1, 0, [runt, trunc_l4, qinq])
    # load balancer, transparent: a TCP flow both ways, UDP, then enough flows to fill it
    add("1_lb_http", LB, 60, 1, first(http, 6))
    add("1_lb_split_in_headers", LB, 20, 1, first(http, 3))
    add("1_lb_quic_wg", LB, 45, 3, first(quic, 3) + first(wg, 3))
    add("1_lb_table_full", LB, 50, 0, [set_sport(udp_zero_ck, 6000 + i) for i in range(14)])
    add("1_lb_expiry", LB, 50, 25, first(wg, 4))
    add("1_lb_misc", LB, 7, 0, [dns[0], tor[1], frag_first, icmp, opts, runt])
    # load balancer, VIP mode: to the VIP (a reply from the backend is derived), from a
    # backend without a flow, not for the VIP
    add("2_vip_tcp", LB_VIP, 60, 0, [set_ip(f, dst=VIP) for f in first(http, 4, is_ipv4)])
    add("2_vip_udp", LB_VIP, 50, 1, [set_ip(f, dst=VIP) for f in first(quic, 3)])
    add("2_vip_opts", LB_VIP, 51, 0, [set_ip(opts, dst=VIP), set_ip(udp_zero_ck, dst=VIP)])
    add("2_vip_from_backend", LB_VIP, 40, 0, [set_ip(wg[0], src=BACKEND1), http[0]])
    add("2_vip_frag", LB_VIP, 30, 0, [set_ip(frag_first, dst=VIP), set_ip(frag_later, dst=VIP)])
    add("2_vip_from_vip", LB_VIP, 30, 0, [set_ip(wg[1], src=VIP, dst=VIP)])
    # nat: inside -> out (the answer is derived), exhaustion of the 8 ports, inbound
    # to an unmapped port, ICMP from inside
    add("3_nat_http", NAT, 60, 1, first(http, 5))
    add("3_nat_quic", NAT, 47, 2, first(quic, 4))
    add("3_nat_ssh_webex", NAT, 55, 0, first(ssh, 2) + first(small, 3))
    add("3_nat_exhausted", NAT, 50, 0, [set_sport(udp_zero_ck, 7000 + i) for i in range(11)])
    add("3_nat_expiry", NAT, 50, 30, [set_sport(udp_zero_ck, 7000 + i) for i in range(9)])
    add("3_nat_inbound", NAT, 45, 0x80, [set_ip(wg[1], dst=EXTERNAL), icmp, frag_first])
    add("3_nat_split", NAT, 25, 0, first(wg, 2))
    # vlan_tagger: insert, rewrite (tagged DNS, QinQ with DEI), no headroom, split header
    add("4_vt_http", VT, 60, 0, first(http, 3))
    add("4_vt_tagged", VT, 16, 0, [dns[0], qinq])
    add("4_vt_icmp_gre", VT, 20, 1, [icmp, gre, opts])
    add("4_vt_non_ip", VT, 3, 0, [tor[0], runt, frag_later])
    add("4_vt_no_headroom", VT, 60, 0x40, first(quic, 2))
    add("4_vt_split_eth", VT, 9, 0, first(ssh, 2))
    add("4_vt_full", VT, 40, 0, [set_sport(udp_zero_ck, 9000 + i) for i in range(14)])
    add("4_vt_expiry", VT, 40, 30, [set_sport(udp_zero_ck, 9000 + i) for i in range(5)])
    add("5_vtkeep_mixed", VT_KEEP, 30, 0, first(http, 2) + [dns[0], tor[2]])
    add("5_vtkeep_dns", VT_KEEP, 12, 0, [udp_zero_ck, qinq])
    # nondet: counting, the schedule's phases at several clock steps
    add("6_nd_count", ND_COUNT, 0, 0, first(http, 7))
    add("6_nd_count_mixed", ND_COUNT, 30, 2, [tor[0], runt, dns[0], frag_later])
    add("7_nd_sched_slow", ND_SCHED, 0, 8, first(quic, 12))
    add("7_nd_sched_fast", ND_SCHED, 70, 1, first(wg, 16))
    add("7_nd_sched_full", ND_SCHED, 0, 3, [set_sport(udp_zero_ck, 9500 + i) for i in range(15)])
    # nat with 100 ports: the table fills before the ports run out (several bitmap words)
    add("9_natwide_full", NAT_WIDE, 50, 0x80, [set_sport(udp_zero_ck, 8000 + i) for i in range(14)])
    add("9_natwide_http", NAT_WIDE, 60, 0, first(http, 4))
    # dpi: the first packets of each trace, so that nDPI detects something
    for i, t in enumerate(("http-manipulated", "quic", "wireguard", "skype-conference-call",
                           "ssh", "ftp", "smtp", "mpeg", "bittorrent", "tor", "dns")):
        frames = [f for f in tr[t] if len(f) < 1600][:12]
        add(f"8_dpi_{t}", DPI, 2 * i + (i & 1), 0, frames)
    add("8_dpi_webex_jumbo", DPI, 1, 0, [f for f in tr["webex"] if len(f) > 1600][:2])
    add("8_dpi_malformed", DPI, 0, 0, [runt, trunc_l4, frag_first, frag_later, icmp, qinq])
    add("8_dpi_many_flows", DPI, 6, 0, [set_sport(udp_zero_ck, 10000 + i) for i in range(16)])
    return s


def main():
    base = sys.argv[1] if len(sys.argv) > 1 else None
    argv = sys.argv
    for default_dir, items in (("corpus_nf_config", config_seeds()),
                               ("corpus_nf_packets", packet_seeds())):
        out = os.path.join(base, default_dir) if base else os.path.join(
            os.path.dirname(os.path.abspath(__file__)), default_dir)
        os.makedirs(out, exist_ok=True)
        for old in glob.glob(os.path.join(out, "*.bin")):
            os.remove(old)
        sys.argv = [argv[0], out]  # write_corpus() takes its directory from argv[1]
        n, where = write_corpus(items, default_dir)
        print(f"wrote {n} seeds to {where}")
    sys.argv = argv


if __name__ == "__main__":
    main()
