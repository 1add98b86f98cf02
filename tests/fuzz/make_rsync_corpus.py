#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 REINFORCE-NFV authors
"""Seeds for fuzz_rsync: one valid frame of each RSync message type
(rsync/include/rsync_wire.h), a few with an HMAC-SHA256 under the fuzz
target's key ("fuzz key", id 1) so that its keyed path is reachable, and a
few message scripts.  The CRC32C is the tests' own bitwise one (onvm.wire)
and the HMAC Python's hmac module's (independently of the codec)."""
import hashlib
import hmac
import os
import struct
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python"))
from onvm.wire import RSYNC_VERSION, crc32c  # noqa: E402  (after the path)

FUZZ_KEY, FUZZ_KEY_ID = b"fuzz key", 1

# Who sends each type (rsync_wire.c's role_sends): 1 predecessor, 2 primary,
# 3 standby; and the fuzz target's runs (fuzz_rsync.c).
ROLE = {1: 2, 2: 3, 3: 2, 4: 3, 5: 2, 6: 2, 7: 2, 8: 1, 9: 1, 10: 2, 11: 3, 12: 1}
RUN_P, RUN_S = 0x50, 0x53

def frame(mtype, txid=0, payload=b"", seq=0, count=1, region=0, offset=0, epoch=1, chain=1,
          key=False, pad=0):
    flags, key_id = (1, FUZZ_KEY_ID) if key else (0, 0)
    role = ROLE[mtype]
    sender, receiver = (RUN_S, RUN_P) if role == 3 else (RUN_P, RUN_S)
    hdr = struct.pack(">BBBBHHIIQHHHBBQQQ", RSYNC_VERSION, mtype, flags, key_id, chain,
                      len(payload), epoch, 0,
                      txid, seq, count, region, role, 0, offset, sender, receiver)
    crc = crc32c(hdr + payload)
    hdr = hdr[:12] + struct.pack(">I", crc) + hdr[16:]
    mac = hmac.new(FUZZ_KEY, hdr + payload, hashlib.sha256).digest() if key else b""
    eth = bytes([2, 0, 0, 0, 0, 2, 2, 0, 0, 0, 0, 1]) + struct.pack(">H", 0x88B6)
    return eth + hdr + payload + mac + bytes(pad)

def main(out):
    os.makedirs(out, exist_ok=True)
    # META: prev txid, cut id, cut ts, nd cut, entries, state frags, state
    # bytes, packets, reserved, chain clock
    meta = struct.pack(">QQQQIIQIIQ", 0, 1, 5, 0, 1, 1, 28, 2, 0, 5000000000)
    txts = struct.pack(">IIHHB3xQ", 0xC6120001, 0xC6130001, 1000, 80, 6, 5)
    # a state record: 16 bytes of region 0 at 64
    rec = struct.pack(">HHQ", 0, 16, 64) + bytes(range(16))
    seeds = {
        "prepare_meta": frame(1, 1, meta, 0, 3, 0xFFFF),
        "prepare_txts": frame(1, 1, txts, 1, 3, 0xFFFE),
        "checkpoint": frame(6, 1, rec, 2, 3),
        "vote": frame(2, 1),
        "commit": frame(3, 1),
        "ack": frame(4, 1),
        "abort": frame(5, 1, struct.pack(">Q", 2)),
        "log_trim": frame(7, 0, struct.pack(">Q", 5)),
        "replay_start": frame(8, 0, struct.pack(">QQ", 5, 9), epoch=2),
        "replay_end": frame(9, 0, struct.pack(">QQ", 9, 4), epoch=2),
        "heartbeat": frame(10, 0, struct.pack(">QQ", 1, 5)),
        "replay_ack": frame(11, 0, struct.pack(">QQ", 5, 9)),
        "vote_padded": frame(2, 1, pad=6),
        # under the fuzz key
        "prepare_meta_hmac": frame(1, 1, meta, 0, 3, 0xFFFF, key=True),
        "checkpoint_hmac": frame(6, 1, rec, 2, 3, key=True),
        "abort_hmac": frame(5, 1, struct.pack(">Q", 2), key=True),
        "replay_start_hmac": frame(8, 0, struct.pack(">QQ", 5, 9), epoch=2, key=True),
        "heartbeat_hmac": frame(10, 0, struct.pack(">QQ", 1, 5), key=True, pad=4),
        # scripts (second use of the input): packets, then messages
        "script_traffic": bytes([0, 1, 0, 10, 4, 2, 0, 10, 0, 3, 0, 10, 0, 4, 0, 200]),
        # (a script message: op, type, epoch, who = role - 1 | sender run << 2
        # | receiver run << 4 (runs: 0 primary's, 1 standby's), txid, ...)
        "script_vote": bytes([0, 1, 0, 10] * 4 + [0x09, 1, 1, 0x06, 1, 1, 0, 0, 0, 0, 0]),
        "script_prepare": bytes([0x41, 0, 1, 0x11, 1, 3, 0, 0, 0, 0, 8] + [0] * 48 +
                                [0, 0, 0, 0, 0, 0, 0, 0]),
    }
    for name, data in seeds.items():
        with open(os.path.join(out, name), "wb") as f:
            f.write(data)

if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__),
                                                             "corpus_rsync"))
