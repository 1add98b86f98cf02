#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 REINFORCE-NFV authors
"""Seeds for fuzz_xmove (tests/fuzz/fuzz_xmove.c): the frames of a
cross-node flow migration (0x88B5 version 4) in the layout of
common/onvm_xmove_wire.c -- every data and control type, valid (some padded
to Ethernet's 60 bytes), and a few that are refused or not ours.
Deterministic: rerun only when the format changes."""
import os
import struct
import sys

MACS = bytes([2, 0, 0, 0, 0, 0x0b, 2, 0, 0, 0, 0, 0x0a])
INNER = (bytes([2, 0, 0, 0, 0, 2, 2, 0, 0, 0, 0, 1, 0x08, 0x00]) +
         bytes([0x45, 0, 0, 28, 0, 1, 0, 0, 64, 17, 0xee, 0xa8, 198, 18, 0, 1, 198, 19, 0, 1,
                0x30, 0x39, 0, 53, 0, 8, 0, 0]))
COPY, BUFFERED, HANDOFF, RETURN = 1, 2, 3, 4
SYNC, STATE, LOG, STATUS = 16, 17, 18, 19
F_ND = 0x01
S_START_OUT, S_END_OUT, S_SRC_GONE, S_EXPORTED = 1, 2, 4, 8
T_OPEN, T_IMPORTED, T_LOSSY = 1, 2, 4


def hdr(typ, version=4, ethertype=0x88B5):
    return MACS + struct.pack(">HBB", ethertype, version, typ)


def tag(slot, gen, seq):
    """A move's tag (ONVM_MOVE_TAG): top bit, slot, 8 bits of gen, 40 of seq."""
    return 1 << 63 | slot << 48 | (gen & 0xff) << 40 | (seq & ((1 << 40) - 1))


def data(typ, service, inst=0, chain_id=1, chain_index=0, action=0, destination=0, flags=0,
         in_port=0, egress_port=0xff, flow_hash=0, tag_=0, inner=INNER):
    """A data frame: 42 bytes, then the packet."""
    return (hdr(typ) + struct.pack(">HHHBBHBBBBIQ", service, inst, chain_id, chain_index,
                                   action, destination, flags, in_port, egress_port, 0,
                                   flow_hash, tag_) + inner)


def ctl(typ, slot, gen, body):
    return hdr(typ) + struct.pack(">BBHI", slot, 0, 0, gen) + body


def sync(slot, gen, service, inst, method=0, state=1, flags=0, fail=0, copies=0, state_len=0,
         n_included=0, buckets=(1,) + (0,) * 15):
    return ctl(SYNC, slot, gen, struct.pack(">HHBBBBQQII", service, inst, method, state, flags,
                                            fail, copies, state_len, n_included, 0) +
               struct.pack(">16Q", *buckets))


def state(slot, gen, offset, total, chunk):
    return ctl(STATE, slot, gen, struct.pack(">IIHH", offset, total, len(chunk), 0) + chunk)


def log(slot, gen, first, entries):
    """entries: (flags, [nd values])."""
    body = struct.pack(">QB3xI", first, len(entries), 0)
    for flags, nd in entries:
        body += struct.pack(">II", flags, len(nd)) + struct.pack(">4Q", *(list(nd) +
                                                                         [0] * (4 - len(nd))))
    return ctl(LOG, slot, gen, body)


def status(slot, gen, mirror_slot, state_, fail=0, flags=T_OPEN, counters=(0, 1) + (0,) * 8):
    return ctl(STATUS, slot, gen, struct.pack(">BBBBI", mirror_slot, state_, fail, flags, 0) +
               struct.pack(">10Q", *counters))


def pad(frame, size=60):
    return frame.ljust(size, b"\0")


def frames():
    state_bytes = bytes((i * 7 + 1) & 0xff for i in range(1024))
    return {
        # data
        "copy": data(COPY, 9, inst=2, chain_id=3, chain_index=1, flags=F_ND, in_port=0,
                     flow_hash=0xdeadbeef, tag_=tag(5, 17, 1)),
        "copy_vlan": data(COPY, 9, inst=2, chain_id=3, flow_hash=7, tag_=tag(23, 255, 1 << 39),
                          inner=INNER[:12] + b"\x81\x00\x00\x2a" + INNER[12:]),
        "buffered": data(BUFFERED, 9, inst=2, chain_id=3, chain_index=2, in_port=1,
                         egress_port=0, flow_hash=0x01020304, tag_=tag(0, 0, (1 << 40) - 1)),
        "handoff": data(HANDOFF, 0x1234, inst=0x0102, chain_id=0xbeef, chain_index=3,
                        flags=F_ND, in_port=1, flow_hash=0x55aa55aa),
        "handoff_eth_only": data(HANDOFF, 1, inst=1, inner=INNER[:14]),
        "return_tonf": data(RETURN, 9, chain_id=3, chain_index=1, action=2, destination=10,
                            flow_hash=99),
        "return_out": data(RETURN, 9, chain_id=3, chain_index=4, action=3, destination=1,
                           in_port=1, egress_port=1),
        "return_drop": data(RETURN, 9, chain_id=3, action=0),
        # control
        "sync_started": sync(5, 17, 9, 2, state=1, flags=S_START_OUT, copies=3,
                             buckets=(0xff00ff00ff00ff00,) * 16),
        "sync_exported": sync(5, 17, 9, 2, method=1, state=2, flags=S_START_OUT | S_EXPORTED,
                              copies=100, state_len=8 * 3 + 4096, n_included=3),
        "sync_failed": sync(23, 0xffffffff, 9, 2, state=7, fail=13,
                            flags=S_START_OUT | S_END_OUT | S_SRC_GONE | S_EXPORTED,
                            state_len=0, n_included=0),
        "state_first": state(5, 17, 0, 4120, state_bytes),
        "state_last": state(5, 17, 4096, 4120, state_bytes[:24]),
        "state_one_padded": pad(state(5, 17, 0, 1, b"\x2a")),
        "log_one": log(5, 17, 1, [(0, [])]),
        "log_nd": log(5, 17, 41, [(1, [7]), (0, [1, 2, 3, 4]), (2, []),
                                  (4, [0xffffffffffffffff, 5])]),
        "log_full": log(5, 17, (1 << 40) - 24,
                        [(i & 7, list(range(1, 1 + i % 5))) for i in range(24)]),
        "status_open": pad(status(5, 17, 3, 1)),
        "status_imported": status(5, 17, 3, 5, flags=T_OPEN | T_IMPORTED,
                                  counters=(4120, 42, 100, 120, 12, 37, 3, 2, 0, 0)),
        "status_refused": status(5, 17, 0xff, 7, fail=13, flags=0),
        "status_lossy": status(5, 17, 3, 7, fail=4, flags=T_OPEN | T_LOSSY,
                               counters=(4120, 42, 99, 120, 12, 37, 3, 2, 1, 1)),
        # refused, or not ours
        "bad_copy_untagged": data(COPY, 9, inst=2, tag_=0),
        "bad_log_reserved_nd": log(5, 17, 1, [(0, [])])[:-1] + b"\x01",
        "short_sync": sync(5, 17, 9, 2)[:100],
        "shim_v1": hdr(0, version=1)[:14] + struct.pack(">BBHQ", 1, 0, 0x0800, 5) + INNER[14:],
        "ftc_v2": pad(hdr(0, version=2)[:14] + struct.pack(">BBHHBB", 2, 0, 0x0800, 0, 0, 0) +
                      INNER[14:]),
        "plain_ipv4": INNER,
    }


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__),
                                                             "corpus_xmove")
    os.makedirs(out, exist_ok=True)
    for name, frame in frames().items():
        with open(os.path.join(out, name), "wb") as f:
            f.write(frame)


if __name__ == "__main__":
    main()
