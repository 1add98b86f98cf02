#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 REINFORCE-NFV authors
"""Write the seed inputs for fuzz_bfd into corpus_bfd/.

Each file is one raw Ethernet frame (no pcap header, no FCS) for the node
that fuzz_bfd.c sets up, or (payload_*) a bare BFD control packet for the
codec.  Frames are built with scapy (Ether/IP/UDP/ARP and scapy's own BFD
layer for the mandatory section); the authentication sections, which scapy's
BFD layer lacks, are appended by hand and signed with hashlib.

The node's sessions, MACs, SHA1 key and discriminator seed below must match
fuzz_bfd.c.  The discriminators are recomputed here (bfd_node.c draws them
with splitmix64 from the seed), so that Init/Up packets name the session.

Usage: /usr/bin/python3 tests/fuzz/make_bfd_corpus.py [OUTDIR]  (default:
corpus_bfd next to this script).  scapy is only visible to Debian's python.
The output is deterministic; the files are committed, so rerun this only
when changing the seeds or fuzz_bfd.c's node.
"""
import hashlib
import os
import struct
import sys

from scapy.all import ARP, IP, UDP, Ether, load_contrib  # noqa: E402

load_contrib("bfd")
from scapy.contrib.bfd import BFD  # noqa: E402

from make_pkt_corpus import write_corpus  # noqa: E402  (same directory)

NODE_SEED = 0x5EEDBFD0
PORT_MAC = ["02:fe:00:00:00:00", "02:fe:00:00:00:01"]
BROADCAST = "ff:ff:ff:ff:ff:ff"
SHA1_KEY, SHA1_KEY_ID = b"reinforce-fuzz-key", 7

# name -> (port, local, peer, peer MAC); in the order fuzz_bfd.c adds them
SESSIONS = [
    ("plain", 0, "198.18.0.1", "198.18.0.2", "02:00:00:00:00:02"),
    ("sha1", 0, "198.18.0.1", "198.18.0.3", "02:00:00:00:00:03"),
    ("static", 1, "198.19.0.1", "198.19.0.2", "02:00:00:00:01:02"),
    ("admin", 1, "198.19.0.1", "198.19.0.3", "02:00:00:00:01:03"),
]

DOWN, INIT, UP, ADMIN_DOWN = 1, 2, 3, 0
F_POLL, F_FINAL, F_AUTH, F_DEMAND = 0x20, 0x10, 0x04, 0x02
M64 = (1 << 64) - 1


def discriminators(n):
    """bfd_node.c new_discriminator(): low 32 bits of splitmix64, non-zero, unique."""
    x, out = NODE_SEED, []
    while len(out) < n:
        x = (x + 0x9E3779B97F4A7C15) & M64
        z = x
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & M64
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & M64
        d = (z ^ (z >> 31)) & 0xFFFFFFFF
        if d != 0 and d not in out:
            out.append(d)
    return out


DISC = dict(zip([s[0] for s in SESSIONS], discriminators(len(SESSIONS))))


def ctrl(state, your, flags=0, my=0x0BFD0001, diag=0, tx=10000, rx=10000, mult=3):
    """The 24-byte mandatory section (scapy's BFD layer)."""
    return bytes(BFD(version=1, diag=diag, sta=state, flags=flags, detect_mult=mult, len=24,
                     my_discriminator=my, your_discriminator=your, min_tx_interval=tx,
                     min_rx_interval=rx, echo_rx_interval=0))


def with_auth(mandatory, section):
    """Set the A bit and the length field, append the auth section."""
    b = bytearray(mandatory + section)
    b[1] |= F_AUTH
    b[3] = len(b)
    return bytes(b)


def sha1_signed(mandatory, seq, key=SHA1_KEY, key_id=SHA1_KEY_ID, auth_type=4):
    """RFC 5880 6.7.4: hash the packet with the key in the digest field."""
    key_field = key.ljust(20, b"\0")
    pkt = bytearray(with_auth(mandatory, struct.pack("!BBBBI", auth_type, 28, key_id, 0, seq)
                              + key_field))
    pkt[-20:] = hashlib.sha1(bytes(pkt)).digest()
    return bytes(pkt)


def session(name):
    return next(s for s in SESSIONS if s[0] == name)


def frame_to(name, payload, ttl=255, sport=49152, flags="DF", **ip_kw):
    """A BFD frame from session `name`'s peer to its local address (scapy sums)."""
    _, port, local, peer, peer_mac = session(name)
    return bytes(Ether(dst=PORT_MAC[port], src=peer_mac)
                 / IP(src=peer, dst=local, ttl=ttl, tos=0xC0, flags=flags, id=0, **ip_kw)
                 / UDP(sport=sport, dport=3784) / payload)


def arp(name, op, broadcast=False):
    """ARP from session `name`'s peer: a request for the local address or a reply."""
    _, port, local, peer, peer_mac = session(name)
    dst = BROADCAST if broadcast else PORT_MAC[port]
    tha = "00:00:00:00:00:00" if op == 1 else PORT_MAC[port]
    f = bytes(Ether(dst=dst, src=peer_mac)
              / ARP(op=op, hwsrc=peer_mac, psrc=peer, hwdst=tha, pdst=local))
    return f + b"\0" * (60 - len(f))


def frames():
    d = DISC
    # the plain session: the three-way handshake, Poll/Final, AdminDown, Down with diag
    yield "plain_down", frame_to("plain", ctrl(DOWN, 0))
    yield "plain_init", frame_to("plain", ctrl(INIT, d["plain"]))
    yield "plain_up", frame_to("plain", ctrl(UP, d["plain"]))
    yield "plain_init_poll", frame_to("plain", ctrl(INIT, d["plain"], F_POLL, tx=5000))
    yield "plain_init_final", frame_to("plain", ctrl(INIT, d["plain"], F_FINAL))
    yield "plain_up_poll", frame_to("plain", ctrl(UP, d["plain"], F_POLL, rx=0))
    yield "plain_admin_down", frame_to("plain", ctrl(ADMIN_DOWN, 0, diag=7))
    yield "plain_down_diag", frame_to("plain", ctrl(DOWN, d["plain"], diag=1))
    # keyed SHA1 (RFC 5880 6.7.4), signed with the session's key
    yield "sha1_down", frame_to("sha1", sha1_signed(ctrl(DOWN, 0, my=0x0BFD0002), 100))
    yield "sha1_init", frame_to("sha1", sha1_signed(ctrl(INIT, d["sha1"], my=0x0BFD0002), 101))
    yield "sha1_up_poll", frame_to("sha1", sha1_signed(ctrl(UP, d["sha1"], F_POLL,
                                                            my=0x0BFD0002), 102))
    yield "sha1_init_final", frame_to("sha1", sha1_signed(ctrl(INIT, d["sha1"], F_FINAL,
                                                               my=0x0BFD0002), 103))
    yield "sha1_wrong_key", frame_to("sha1", sha1_signed(ctrl(DOWN, 0, my=0x0BFD0002), 104,
                                                         key=b"not-the-key"))
    yield "sha1_meticulous", frame_to("sha1", sha1_signed(ctrl(DOWN, 0, my=0x0BFD0002), 105,
                                                          auth_type=5))
    yield "plain_with_sha1", frame_to("plain", sha1_signed(ctrl(DOWN, 0), 1))
    # the static-MAC sessions on port 1
    yield "static_init", frame_to("static", ctrl(INIT, d["static"], mult=1, tx=50000))
    yield "static_up_final", frame_to("static", ctrl(UP, d["static"], F_FINAL, mult=1))
    yield "admin_up", frame_to("admin", ctrl(UP, d["admin"]))
    # Demand mode (D bit), to a session whose packets reach the fake xmit
    # (static MAC): fuzz_bfd's "as Up" copy puts the remote in Demand mode
    yield "static_init_demand_final", frame_to("static", ctrl(INIT, d["static"],
                                                              F_DEMAND | F_FINAL, mult=1))
    yield "static_init_demand_poll", frame_to("static", ctrl(INIT, d["static"],
                                                             F_DEMAND | F_POLL, mult=1))
    # framing: each RFC 5881 check failing once
    yield "bad_ttl", frame_to("plain", ctrl(DOWN, 0), ttl=254)
    yield "bad_sport", frame_to("plain", ctrl(DOWN, 0), sport=3784)
    good = bytearray(frame_to("plain", ctrl(DOWN, 0)))
    bad_ip, bad_udp = bytearray(good), bytearray(good)
    bad_ip[14 + 10] ^= 0xFF
    bad_udp[14 + 20 + 6] ^= 0xFF
    yield "bad_ip_csum", bytes(bad_ip)
    yield "bad_udp_csum", bytes(bad_udp)
    nosum = bytearray(good)
    nosum[14 + 20 + 6:14 + 20 + 8] = b"\0\0"
    yield "udp_no_csum", bytes(nosum)
    yield "ip_options", frame_to("plain", ctrl(DOWN, 0), options=b"\x01\x01\x01\x00")
    yield "first_fragment", frame_to("plain", ctrl(DOWN, 0), flags="MF")
    yield "later_fragment", frame_to("plain", ctrl(DOWN, 0), flags=0, frag=3)
    yield "padded", good + b"\0" * 8
    # ARP for the session addresses
    yield "arp_request_plain", arp("plain", 1)
    yield "arp_reply_plain", arp("plain", 2)
    yield "arp_reply_sha1", arp("sha1", 2)
    yield "arp_request_port1_bcast", arp("static", 1, broadcast=True)
    # bare control packets for the codec (the input is also tried as a UDP payload)
    yield "payload_down", ctrl(DOWN, 0)
    yield "payload_up_poll", ctrl(UP, 0x12345678, F_POLL)
    yield "payload_sha1", sha1_signed(ctrl(INIT, 0x12345678), 7)
    yield "payload_simple", with_auth(ctrl(DOWN, 0), struct.pack("!BBB", 1, 11, 3) + b"password")
    yield "payload_md5", with_auth(ctrl(DOWN, 0), struct.pack("!BBBBI", 2, 24, 1, 0, 9)
                                   + bytes(range(16)))
    yield "payload_long_length", ctrl(UP, 1)[:3] + bytes([40]) + ctrl(UP, 1)[4:] + bytes(16)


def main():
    n, out = write_corpus(frames(), "corpus_bfd")
    print(f"wrote {n} inputs to {out}; discriminators: "
          + ", ".join(f"{k}={v:#010x}" for k, v in DISC.items()))


if __name__ == "__main__":
    main()
