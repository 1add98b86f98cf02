#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 REINFORCE-NFV authors
"""Seeds for fuzz_plog (tests/fuzz/fuzz_plog.c): shimmed frames in the layout
of pkt_logger/include/plog_shim.h, valid and broken, and scripts for the log.

A script is byte 0 -- bits 0-3 the packet bound minus 1, bits 4-5 the buffer
(0: two 64 KB records, 1: 8192, 2: 1024, 3: 256 bytes) -- then 3-byte records:
op (bits 0-2; for an append bits 3-4 are the timestamp gap - 1) and a 16-bit
big-endian argument.  Deterministic: rerun only when the format changes."""
import os
import struct
import sys

MACS = bytes([2, 0, 0, 0, 0, 0x0b, 2, 0, 0, 0, 0, 0x0a])
IPV4_UDP = bytes([0x45, 0, 0, 28, 0, 1, 0, 0, 64, 17, 0xee, 0xa8, 198, 18, 0, 1, 198, 19, 0, 1,
                  0x30, 0x39, 0, 53, 0, 8, 0, 0])

APPEND, TRIM, REPLAY, LIVE, REFUSED, DUMP = 0, 3, 4, 5, 6, 7
OLD_TRIM = 0x8000       # trim argument: a watermark at or below an earlier one
FROM_ANYWHERE = 0x8000  # replay argument: from arg % 64, not from the watermark


def shim(inner, payload, ts, flags=0, version=1):
    return MACS + struct.pack(">HBBHQ", 0x88B5, version, flags, inner, ts) + payload


def header(max_pkts, size_class):
    return bytes([(size_class << 4) | (max_pkts - 1)])


def op(kind, arg=0, gap=0):
    """One record; an append of `arg + 1` bytes (modulo the buffer)."""
    return bytes([kind | (gap << 3), arg >> 8, arg & 0xff])


def frames():
    return {
        "shim_ipv4": shim(0x0800, IPV4_UDP, 1),
        "shim_replay": shim(0x0800, IPV4_UDP, 0x0102030405060708, flags=1),
        "shim_vlan": shim(0x8100, bytes([0x60, 42, 8, 0]) + IPV4_UDP, 77),
        "shim_qinq": shim(0x88a8, bytes([0, 100, 0x81, 0, 0, 7, 8, 0]) + IPV4_UDP, 78),
        "shim_bare": shim(0x0800, b"", 5),  # the shortest valid frame, 26 bytes
        "shim_short": shim(0x0800, b"", 5)[:25],
        "shim_bad_version": shim(0x0800, IPV4_UDP, 3, version=2),
        "shim_bad_flags": shim(0x0800, IPV4_UDP, 3, flags=0x80),
        "shim_nested": shim(0x88B5, IPV4_UDP, 3),
        "shim_zero_ts": shim(0x0800, IPV4_UDP, 0),
        "plain_ipv4": MACS + b"\x08\x00" + IPV4_UDP,
        "runt": MACS[:10],
    }


def scripts():
    return {
        # the packet bound: 4 entries, then refusals; dump and replay them all
        "script_fill_pkts": header(4, 0) + op(APPEND, 99) * 8 + op(DUMP) + op(REPLAY)
        + op(TRIM, 2) + op(APPEND, 99) + op(LIVE, 3) * 3,
        # the byte bound of a 256-byte buffer, trims making room, a wrap
        "script_fill_bytes": header(16, 3) + op(APPEND, 59) * 5 + op(TRIM, 1)
        + op(APPEND, 59) * 2 + op(LIVE, 3) * 3 + op(REPLAY) + op(DUMP),
        # many laps of a 1 KB buffer with a long-lived cursor following
        "script_wrap": header(8, 2) + (op(APPEND, 200, 1) + op(APPEND, 37) + op(LIVE, 1)
                                       + op(TRIM, 3) + op(APPEND, 500) + op(REPLAY, 1)
                                       + op(TRIM, 5)) * 12 + op(DUMP, 1),
        # an empty log whose tail sits mid-buffer takes the whole buffer
        "script_empty_lap": header(8, 2) + op(APPEND, 495) + op(LIVE) + op(TRIM, 1)
        + op(APPEND, 1007) + op(LIVE) + op(TRIM, 2) + op(APPEND, 1008),
        # the largest frames in the largest buffer
        "script_big": header(2, 0) + op(APPEND, 0xfffe) * 3 + op(TRIM, 1) + op(APPEND, 0xfffe)
        + op(REPLAY) + op(LIVE, 3) + op(DUMP),
        # refusals that must change nothing, and old watermarks
        "script_refused": header(8, 1) + op(APPEND, 10) * 3 + op(REFUSED, 0) + op(REFUSED, 1)
        + op(REFUSED, 3) + op(TRIM, 2) + op(TRIM, OLD_TRIM | 1) + op(REPLAY, FROM_ANYWHERE)
        + op(DUMP, 0x33),
    }


def main(out):
    os.makedirs(out, exist_ok=True)
    for name, data in {**frames(), **scripts()}.items():
        with open(os.path.join(out, name), "wb") as f:
            f.write(data)


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__),
                                                             "corpus_plog"))
