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
RSYNC_VERSION = 5  # rsync/include/rsync_wire.h
RSYNC_HDR_LEN = 56

# enum rsync_role: the sender's part in the chain.
ROLE_PREDECESSOR, ROLE_PRIMARY, ROLE_STANDBY = 1, 2, 3

# enum rsync_msg_type
(PREPARE, VOTE, COMMIT, ACK, ABORT, CHECKPOINT, LOG_TRIM, REPLAY_START,
 REPLAY_END, HEARTBEAT, REPLAY_ACK, REPLAY_CANCEL, PROTECT) = range(1, 14)

# The role that sends each type (HEARTBEAT: any; the primary's by default).
SENDER_ROLE = {PREPARE: ROLE_PRIMARY, VOTE: ROLE_STANDBY, COMMIT: ROLE_PRIMARY,
               ACK: ROLE_STANDBY, ABORT: ROLE_PRIMARY, CHECKPOINT: ROLE_PRIMARY,
               LOG_TRIM: ROLE_PRIMARY, REPLAY_START: ROLE_PREDECESSOR,
               REPLAY_END: ROLE_PREDECESSOR, HEARTBEAT: ROLE_PRIMARY,
               REPLAY_ACK: ROLE_STANDBY, REPLAY_CANCEL: ROLE_PREDECESSOR,
               PROTECT: ROLE_PREDECESSOR}

# A run id the tests' senders use when none is given (never 0 on the wire).
TEST_RUN = 0x7E57


def crc32c(data):
    c = 0xFFFFFFFF
    for b in data:
        c ^= b
        for _ in range(8):
            c = (c >> 1) ^ (0x82F63B78 if c & 1 else 0)
    return c ^ 0xFFFFFFFF


def rsync_frame(mtype, chain, epoch, payload=b"", txid=0, bad_crc=False, region=0,
                role=None, sender_run=TEST_RUN, receiver_run=0, flags=0):
    """An RSync message as its sender would send it (docs/wire-format.md);
    one fragment (a PREPARE of only its META: region 0xFFFF).  `role`
    defaults to the role that sends `mtype`; `receiver_run` is the run id of
    the node it is addressed to (0: not known), which a receiver requires for
    whatever grants something."""
    if role is None:
        role = SENDER_ROLE[mtype]
    hdr = struct.pack(">BBBBHHIIQHHHBBQQQ", RSYNC_VERSION, mtype, flags, 0, chain, len(payload),
                      epoch, 0, txid, 0, 1, region, role, 0, 0, sender_run, receiver_run)
    assert len(hdr) == RSYNC_HDR_LEN
    crc = crc32c(hdr + payload) ^ (1 if bad_crc else 0)
    hdr = hdr[:12] + struct.pack(">I", crc) + hdr[16:]
    return bytes([2, 0, 0, 0, 0, 1, 2, 0, 0, 0, 0, 2]) + struct.pack(">H", ETH_RSYNC) + hdr + payload


def rsync_meta(prev_txid=0, cut_id=0, cut_ts=0, nd_cut=0, entries=0, state_frags=0,
               state_bytes=0, pkts=0, clock=0):
    """A PREPARE's META piece (64 bytes)."""
    return struct.pack(">QQQQIIQIIQ", prev_txid, cut_id, cut_ts, nd_cut, entries, state_frags,
                       state_bytes, pkts, 0, clock)


def rsync_fields(frame):
    """The header of an RSync frame (Ethernet header first) as a dict."""
    (ver, mtype, flags, key, chain, plen, epoch, crc, txid, seq, count, region, role, _res,
     offset, srun, rrun) = struct.unpack_from(">BBBBHHIIQHHHBBQQQ", frame, 14)
    return dict(version=ver, type=mtype, flags=flags, key_id=key, chain=chain, len=plen,
                epoch=epoch, crc=crc, txid=txid, seq=seq, count=count, region=region,
                role=role, offset=offset, sender_run=srun, receiver_run=rrun,
                payload=frame[14 + RSYNC_HDR_LEN:14 + RSYNC_HDR_LEN + plen])
