# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 REINFORCE-NFV authors
"""onvm.wire -- remote resiliency's frames as the tests build them, from the
documented layout (docs/wire-format.md) rather than from the product's
encoder: the EtherTypes, and an RSync message as a primary would send it
(header, CRC32C, payload; one fragment).
"""
import struct

ETH_SHIM = 0x88B5  # the predecessor's timestamp shim
ETH_RSYNC = 0x88B6  # RSync messages
RSYNC_VERSION = 2  # rsync/include/rsync_wire.h


def crc32c(data):
    c = 0xFFFFFFFF
    for b in data:
        c ^= b
        for _ in range(8):
            c = (c >> 1) ^ (0x82F63B78 if c & 1 else 0)
    return c ^ 0xFFFFFFFF


def rsync_frame(mtype, chain, epoch, payload=b"", txid=0, bad_crc=False, region=0):
    """An RSync message as the primary would send it (docs/wire-format.md);
    one fragment (a PREPARE of only its META: region 0xFFFF)."""
    hdr = struct.pack(">BBBBHHIIQHHHHQ", RSYNC_VERSION, mtype, 0, 0, chain, len(payload), epoch, 0, txid,
                      0, 1, region, 0, 0)
    crc = crc32c(hdr + payload) ^ (1 if bad_crc else 0)
    hdr = hdr[:12] + struct.pack(">I", crc) + hdr[16:]
    return bytes([2, 0, 0, 0, 0, 1, 2, 0, 0, 0, 0, 2]) + struct.pack(">H", ETH_RSYNC) + hdr + payload
