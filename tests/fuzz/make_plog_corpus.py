#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 REINFORCE-NFV authors
"""Seeds for fuzz_plog: shimmed frames (pkt_logger/include/plog_shim.h) and
log operation scripts (append / trim / replay records of three bytes)."""
import os
import struct
import sys

MACS = bytes([2, 0, 0, 0, 0, 0x0b, 2, 0, 0, 0, 0, 0x0a])
IPV4 = bytes([0x45, 0, 0, 28, 0, 1, 0, 0, 64, 17, 0, 0, 198, 18, 0, 1, 198, 19, 0, 1,
              0x30, 0x39, 0, 53, 0, 8, 0, 0])

def shimmed(inner, payload, ts, flags=0):
    return MACS + struct.pack(">HBBHQ", 0x88B5, 1, flags, inner, ts) + payload

def main(out):
    os.makedirs(out, exist_ok=True)
    seeds = {
        "shim_ipv4": shimmed(0x0800, IPV4, 1),
        "shim_replay": shimmed(0x0800, IPV4, 0x0102030405060708, 1),
        "shim_vlan": shimmed(0x8100, bytes([0, 42, 8, 0]) + IPV4, 77),
        "plain_ipv4": MACS + b"\x08\x00" + IPV4,
        # first byte: max packets; then (op, arg hi, arg lo) records
        "script_fill": bytes([3]) + bytes([0, 0, 100] * 20),
        "script_mixed": bytes([8]) + bytes([0, 1, 0, 1, 0, 200, 2, 0, 3, 3, 0, 0,
                                            0, 60, 0, 2, 0, 7, 3, 0, 1]),
        "script_big": bytes([1]) + bytes([0, 0x3f, 0xff, 0, 0x3f, 0xff, 2, 0, 1, 0, 0x3f, 0xff]),
    }
    for name, data in seeds.items():
        with open(os.path.join(out, name), "wb") as f:
            f.write(data)

if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__),
                                                             "corpus_plog"))
