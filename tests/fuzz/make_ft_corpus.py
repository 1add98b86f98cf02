#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 REINFORCE-NFV authors
"""Seeds for fuzz_ft_import: a first byte choosing the table (value size
8, 16 or 24 by its value mod 3; 64 slots with bit 7 set, else 16), then
flow-table records as onvm_ft_export() writes them (times as ages)
(libnf/include/onvm_flow_table.h: struct onvm_ft_record, host byte order
-- little-endian here -- and the value), written from that layout, not by
the library."""
import os
import struct
import sys

MAGIC = 0x4654524D  # ONVM_FT_RECORD_MAGIC, "FTRM"


def record(i, vsize, idle=100, age=500, magic=MAGIC, pad=0, route=0, reserved=0):
    key = struct.pack("<IIHHB3s", 0xC6120000 + i, 0xC6130000 + i, 1024 + i, 80, 6,
                      bytes([pad, 0, 0]))
    return key + struct.pack("<QQIIII", idle + i, age, vsize, magic, route, reserved) + \
        bytes((i + j) & 0xFF for j in range(vsize))


def main(out):
    os.makedirs(out, exist_ok=True)
    seeds = {
        "one_16": bytes([1]) + record(1, 16),
        "ten_8_big": bytes([0x81]) + b"".join(record(i, 8) for i in range(10)),
        "twenty_24_full": bytes([2]) + b"".join(record(i, 24) for i in range(20)),
        "same_key_twice": bytes([1]) + record(3, 16) + record(3, 16, idle=900),
        "older_than_the_clock": bytes([1]) + record(4, 16, idle=1 << 63, age=(1 << 64) - 1),
        "bad_magic_second": bytes([1]) + record(1, 16) + record(2, 16, magic=0),
        "key_pad_set": bytes([1]) + record(5, 16, pad=1),
        "routes": bytes([1]) + b"".join(record(i, 16, route=i * 100) for i in range(6)),
        "reserved_set": bytes([1]) + record(6, 16, route=3, reserved=1),
        "cut_short": bytes([1]) + record(1, 16) + record(2, 16)[:30],
    }
    for name, data in seeds.items():
        with open(os.path.join(out, name), "wb") as f:
            f.write(data)


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else
         os.path.join(os.path.dirname(os.path.abspath(__file__)), "corpus_ft_import"))
