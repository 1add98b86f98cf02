#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 REINFORCE-NFV authors
"""Write the seed frames for fuzz_pkt_parse into corpus_pkt/.

Each file is one raw Ethernet frame (no pcap header, no FCS).  The fuzz target
uses the first byte (the first byte of the destination MAC, which the parser
never looks at) to choose where to split the frame into two mbuf segments, so
the seeds vary it to start with different splits.

Usage: tests/fuzz/make_pkt_corpus.py [OUTDIR]   (default: corpus_pkt next to
this script).  The output is deterministic; the files are committed, so rerun
this only when changing the seeds.  Standard library only.
"""
import os
import struct
import sys

ETH_IPV4, ETH_ARP, ETH_VLAN, ETH_IPV6, ETH_QINQ = 0x0800, 0x0806, 0x8100, 0x86DD, 0x88A8
SRC_IP, DST_IP = bytes([10, 1, 2, 3]), bytes([192, 168, 7, 9])


def eth(ether_type, tags=(), split=0x00):
    """Ethernet header; `tags` lists the TPID of each VLAN tag, outermost first."""
    dst = bytes([split, 0x11, 0x22, 0x33, 0x44, 0x55])
    src = bytes([0x02, 0x00, 0x00, 0x00, 0x00, 0x01])
    if not tags:
        return dst + src + struct.pack("!H", ether_type)
    hdr = dst + src + struct.pack("!H", tags[0])
    for i, _ in enumerate(tags):
        nxt = tags[i + 1] if i + 1 < len(tags) else ether_type
        hdr += struct.pack("!HH", 100 + i, nxt)
    return hdr


def ipv4(proto, payload, opt_words=0, frag=0, total=None):
    """IPv4 header (+ NOP options) followed by `payload`; checksum left 0."""
    hlen = 20 + 4 * opt_words
    if total is None:
        total = hlen + len(payload)
    hdr = struct.pack("!BBHHHBBH4s4s", 0x40 | (hlen // 4), 0, total, 0x1234, frag, 64, proto,
                      0, SRC_IP, DST_IP)
    return hdr + b"\x01" * (4 * opt_words) + payload


def tcp(sport, dport, doff=5, payload=b""):
    opts = b"\x01" * (4 * doff - 20) if doff > 5 else b""
    return struct.pack("!HHIIBBHHH", sport, dport, 1, 0, doff << 4, 0x02, 65535, 0, 0) + opts \
        + payload


def udp(sport, dport, payload=b"", ulen=None):
    if ulen is None:
        ulen = 8 + len(payload)
    return struct.pack("!HHHH", sport, dport, ulen, 0) + payload


def arp():
    return struct.pack("!HHBBH6s4s6s4s", 1, ETH_IPV4, 6, 4, 1, b"\x02\x00\x00\x00\x00\x01",
                       SRC_IP, b"\x00" * 6, DST_IP)


def ipv6_udp():
    src = bytes(15) + b"\x01"
    dst = bytes(15) + b"\x02"
    payload = udp(5353, 53, b"abcd")
    return struct.pack("!IHBB16s16s", 0x60000000, len(payload), 17, 64, src, dst) + payload


def frames():
    tcp_ok = ipv4(6, tcp(1234, 80, payload=b"GET / HTTP/1.0\r\n\r\n"))
    udp_ok = ipv4(17, udp(5353, 53, b"abcd"))
    yield "tcp", eth(ETH_IPV4, split=0x00) + tcp_ok
    yield "tcp_split_in_ip", eth(ETH_IPV4, split=20) + tcp_ok
    yield "tcp_options", eth(ETH_IPV4, split=40) + ipv4(6, tcp(1, 2, doff=8))
    yield "udp", eth(ETH_IPV4, split=0x07) + udp_ok
    # 46-byte UDP frame padded to the 60-byte Ethernet minimum
    udp_pad = eth(ETH_IPV4) + udp_ok
    yield "udp_padded", udp_pad + b"\x00" * (60 - len(udp_pad))
    yield "udp_ip_options", eth(ETH_IPV4, split=30) + ipv4(17, udp(7, 9), opt_words=3)
    yield "icmp", eth(ETH_IPV4) + ipv4(1, b"\x08\x00\x00\x00\x00\x01\x00\x01")
    yield "vlan_udp", eth(ETH_IPV4, (ETH_VLAN,), split=15) + udp_ok
    yield "qinq_tcp", eth(ETH_IPV4, (ETH_QINQ, ETH_VLAN), split=17) + tcp_ok
    yield "three_vlans", eth(ETH_IPV4, (ETH_QINQ, ETH_VLAN, ETH_VLAN)) + udp_ok
    yield "arp", eth(ETH_ARP) + arp()
    yield "ipv6_udp", eth(ETH_IPV6) + ipv6_udp()
    yield "vlan_ipv6", eth(ETH_IPV6, (ETH_VLAN,)) + ipv6_udp()
    yield "frag_first", eth(ETH_IPV4) + ipv4(17, udp(1111, 2222), frag=0x2000)
    yield "frag_later", eth(ETH_IPV4) + ipv4(17, udp(1111, 2222), frag=185)
    # a first fragment's UDP length covers the whole datagram, not this packet
    yield "frag_first_udp_len", eth(ETH_IPV4) + ipv4(17, udp(1111, 2222, b"x" * 8, ulen=3008),
                                                    frag=0x2000)
    # truncated and malformed variants
    full = eth(ETH_IPV4) + tcp_ok
    yield "trunc_l2", full[:13]
    yield "trunc_vlan", eth(ETH_IPV4, (ETH_VLAN,))[:16]
    yield "trunc_l3", full[:14 + 19]
    yield "trunc_l4_tcp", full[:14 + 20 + 19]
    yield "trunc_l4_udp", (eth(ETH_IPV4) + udp_ok)[:14 + 20 + 6]
    yield "bad_version", eth(ETH_IPV4) + b"\x65" + tcp_ok[1:]
    yield "bad_ihl", eth(ETH_IPV4) + b"\x44" + tcp_ok[1:]
    yield "ip_options_past_end", eth(ETH_IPV4) + b"\x4f" + ipv4(17, b"")[1:]
    yield "totlen_short", eth(ETH_IPV4) + ipv4(6, tcp(1, 2), total=19)
    yield "totlen_long", eth(ETH_IPV4) + ipv4(6, tcp(1, 2), total=41)
    yield "tcp_doff_small", eth(ETH_IPV4) + ipv4(6, tcp(1, 2, doff=4))
    yield "tcp_in_padding", eth(ETH_IPV4) + ipv4(6, tcp(1, 2), total=30)
    yield "udp_len_small", eth(ETH_IPV4) + ipv4(17, udp(1, 2, ulen=7))
    yield "udp_len_big", eth(ETH_IPV4) + ipv4(17, udp(1, 2, b"abcd", ulen=13))


def write_corpus(items, default_dir):
    """Write (name, bytes) items as NAME.bin into argv[1], else `default_dir`
    next to this script; returns (count, directory)."""
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(
        os.path.abspath(__file__)), default_dir)
    os.makedirs(out, exist_ok=True)
    n = 0
    for name, data in items:
        with open(os.path.join(out, name + ".bin"), "wb") as f:
            f.write(data)
        n += 1
    return n, out


def main():
    n, out = write_corpus(frames(), "corpus_pkt")
    print(f"wrote {n} frames to {out}")


if __name__ == "__main__":
    main()
