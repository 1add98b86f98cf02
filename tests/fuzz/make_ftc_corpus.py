#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 REINFORCE-NFV authors
"""Seeds for fuzz_ftc (tests/fuzz/fuzz_ftc.c): frames with FTC's piggyback
header in the layout of ftc/include/ftc_wire.h, valid and broken.
Deterministic: rerun only when the format changes."""
import os
import struct
import sys

MACS = bytes([2, 0, 0, 0, 0, 0x0b, 2, 0, 0, 0, 0, 0x0a])
IPV4_UDP = bytes([0x45, 0, 0, 28, 0, 1, 0, 0, 64, 17, 0xee, 0xa8, 198, 18, 0, 1, 198, 19, 0, 1,
                  0x30, 0x39, 0, 53, 0, 8, 0, 0])


def record(region, offset, data):
    return struct.pack(">HHI", region, len(data), offset) + data


def log(instance, seq, records, part=0, parts=1):
    data = b"".join(records)
    return struct.pack(">HBBIQ", instance, part, parts, len(data), seq) + data


def commit(instance, seq, kind=0, reserved=0):
    """kind 0: held f + 1 times up to seq; 1: the packet needs that; 2:
    void (reserved: its span); 3: applied by the group so far."""
    return struct.pack(">HBBQ", instance, kind, reserved, seq)


def ftc(inner, payload, logs=(), commits=(), flags=0, version=2):
    section = b"".join(logs) + b"".join(commits)
    return (MACS + struct.pack(">HBBHHBB", 0x88B5, version, flags, inner, len(section),
                               len(logs), len(commits)) + section + payload)


def xfer(op, chain, frm, instance, nonce, seq, index):
    """The state transfer (version 3): its head after the MACs."""
    return MACS + struct.pack(">HBBHBBIQI", 0x88B5, 3, op, chain, frm, instance, nonce, seq,
                              index)


def frames():
    one = log(3, 41, [record(0, 4096, bytes(range(8))), record(2, 7, b"\x09\x09\x09")])
    return {
        "empty": ftc(0x0800, IPV4_UDP),
        "one_log": ftc(0x0800, IPV4_UDP, [one]),
        "logs_commits": ftc(0x0800, IPV4_UDP, [one, log(5, 1 << 40, [record(1, 0, b"x" * 64)],
                                                           part=1, parts=2)],
                            [commit(3, 40), commit(3, 7, kind=1), commit(9, 7)]),
        "vlan": ftc(0x8100, b"\x00\x2a\x08\x00" + IPV4_UDP, [one], [commit(1, 1)]),
        "propagate": ftc(0, b"", [], [commit(3, 40), commit(4, 2)], flags=1),
        "propagate_padded": ftc(0, b"", [], [commit(3, 40)], flags=1) + bytes(20),
        "big_record": ftc(0x0800, IPV4_UDP, [log(7, 2, [record(4, 1 << 20, bytes(1400))])]),
        "shim_v1": MACS + struct.pack(">HBBHQ", 0x88B5, 1, 0, 0x0800, 5) + IPV4_UDP,
        "bad_zero_seq": ftc(0x0800, IPV4_UDP, [log(3, 0, [])]),
        "bad_dup_commit": ftc(0x0800, IPV4_UDP, [], [commit(3, 1), commit(3, 2)]),
        "void": ftc(0x0800, IPV4_UDP, [], [commit(3, 1, kind=2, reserved=2), commit(3, 9, kind=1),
                                            commit(3, 0, kind=3)]),
        "bad_kind": ftc(0x0800, IPV4_UDP, [], [commit(3, 1, kind=4)]),
        "bad_record": ftc(0x0800, IPV4_UDP, [log(3, 1, [struct.pack(">HHI", 0, 0, 0)])]),
        "plain_ipv4": MACS + b"\x08\x00" + IPV4_UDP,
        "xfer_fetch": xfer(1, 29, 1, 1, 7, 0, 0),
        "xfer_piece": xfer(2, 29, 2, 1, 7, 40, 3) + struct.pack(">HHI", 1, 8, 4096) + bytes(8),
        # a piece of 1 byte, its frame padded to Ethernet's 60
        "xfer_piece_padded": (xfer(2, 29, 2, 1, 7, 40, 3) + struct.pack(">HHI", 1, 1, 8) +
                              b"\x2a").ljust(60, b"\0"),
        "xfer_end": xfer(3, 29, 2, 1, 7, 40, 12) + struct.pack(">Q", 5 << 32) + bytes(16),
        "xfer_resync": xfer(4, 29, 3, 2, 9, 0, 0),
    }


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__),
                                                             "corpus_ftc")
    os.makedirs(out, exist_ok=True)
    for name, data in frames().items():
        with open(os.path.join(out, name), "wb") as f:
            f.write(data)


if __name__ == "__main__":
    main()
