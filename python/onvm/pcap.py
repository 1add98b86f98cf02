# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 REINFORCE-NFV authors
"""onvm.pcap -- capture files, read and written without a library: the
traces a test replays, what a node's net_pcap ports transmitted, and the
comparison of the two.

read_pcap takes classic pcap (usec or nsec timestamps, either byte order)
and pcapng (the tree ships both, traces/README.md), read_pcap_records a
classic pcap's records with their timestamps; write_pcap writes the
classic little-endian format net_pcap reads.  A capture that does not parse
fails the test (onvm.lab.TestFailure), naming the file and the offset.
"""
import struct

from onvm.lab import TestFailure, check


# DPDK 22.11's net_pcap TX copies a multi-segment frame into a buffer of
# RTE_ETHER_MAX_JUMBO_FRAME_LEN bytes before dumping it: longer frames are
# captured cut to that length (the record keeps the original length).
PCAP_TX_SNAP = 0x3F00


def read_pcap(path, orig_len=False):
    """Raw frames of a pcap (usec or nsec, either byte order) or pcapng file;
    with orig_len, (frame, original length) pairs."""
    with open(path, "rb") as f:
        data = f.read()
    check(len(data) >= 24, f"{path}: not a capture file ({len(data)} bytes)")
    magic = data[:4]
    if magic == b"\x0a\x0d\x0d\x0a":
        pkts = _read_pcapng(path, data)
        return [(p, len(p)) for p in pkts] if orig_len else pkts
    for endian in ("<", ">"):
        (m,) = struct.unpack(endian + "I", magic)
        if m in (0xA1B2C3D4, 0xA1B23C4D):
            break
    else:
        raise TestFailure(f"{path}: unknown capture magic {magic.hex()}")
    pkts, off = [], 24
    while off + 16 <= len(data):
        _, _, caplen, wire = struct.unpack_from(endian + "IIII", data, off)
        off += 16
        check(off + caplen <= len(data), f"{path}: truncated record at offset {off - 16}")
        pkts.append((data[off:off + caplen], wire) if orig_len else data[off:off + caplen])
        off += caplen
    check(off == len(data), f"{path}: {len(data) - off} trailing bytes")
    return pkts


def read_pcap_records(path):
    """[(time in ns, frame, original length)] of a classic pcap file (usec
    or nsec timestamps, either byte order): a capture's kernel timestamps
    (dumpcap -P writes this format)."""
    with open(path, "rb") as f:
        data = f.read()
    check(len(data) >= 24, f"{path}: not a capture file ({len(data)} bytes)")
    for endian in ("<", ">"):
        (m,) = struct.unpack(endian + "I", data[:4])
        if m in (0xA1B2C3D4, 0xA1B23C4D):
            break
    else:
        raise TestFailure(f"{path}: not a classic pcap file (magic {data[:4].hex()})")
    scale = 1 if m == 0xA1B23C4D else 1000
    out, off = [], 24
    while off + 16 <= len(data):
        sec, frac, caplen, wire = struct.unpack_from(endian + "IIII", data, off)
        off += 16
        if off + caplen > len(data):  # cut short by a writer stopped mid-record
            break
        out.append((sec * 1000000000 + frac * scale, data[off:off + caplen], wire))
        off += caplen
    return out


def _read_pcapng(path, data):
    pkts, off, endian = [], 0, "<"
    while off + 12 <= len(data):
        if data[off:off + 4] == b"\x0a\x0d\x0d\x0a":  # section header: learn byte order
            endian = "<" if data[off + 8:off + 12] == b"\x4d\x3c\x2b\x1a" else ">"
        btype, blen = struct.unpack_from(endian + "II", data, off)
        check(blen >= 12 and off + blen <= len(data), f"{path}: bad pcapng block at {off}")
        body = data[off + 8:off + blen - 4]
        if btype == 6:  # enhanced packet block
            caplen = struct.unpack_from(endian + "I", body, 12)[0]
            pkts.append(body[20:20 + caplen])
        elif btype == 3:  # simple packet block
            origlen = struct.unpack_from(endian + "I", body, 0)[0]
            pkts.append(body[4:4 + origlen])
        elif btype == 2:  # obsolete packet block
            caplen = struct.unpack_from(endian + "I", body, 12)[0]
            pkts.append(body[20:20 + caplen])
        off += blen
    return pkts


def write_pcap(path, frames):
    """Classic little-endian usec pcap, Ethernet link type."""
    with open(path, "wb") as f:
        f.write(struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, 65535, 1))
        for i, fr in enumerate(frames):
            f.write(struct.pack("<IIII", 1700000000 + i // 1000, (i % 1000) * 1000,
                                len(fr), len(fr)))
            f.write(fr)


def read_capture_out(path):
    """Frames a net_pcap port transmitted.  A record net_pcap cut at
    PCAP_TX_SNAP comes back as a TruncatedFrame, which compares equal only to
    a frame of the record's original length that starts with its bytes."""
    out = []
    for data, wire in read_pcap(path, orig_len=True):
        if len(data) < wire:
            check(len(data) == PCAP_TX_SNAP, f"{path}: record cut at {len(data)} of {wire} bytes")
            out.append(TruncatedFrame(data, wire))
        else:
            out.append(data)
    return out


class TruncatedFrame(bytes):
    """A frame captured cut at PCAP_TX_SNAP: equal to any frame of the original
    length whose first PCAP_TX_SNAP bytes match."""

    def __new__(cls, data, wire):
        obj = super().__new__(cls, data)
        obj.wire = wire
        return obj

    def __eq__(self, other):
        return (isinstance(other, (bytes, bytearray)) and len(other) == self.wire and
                bytes(other[:len(self)]) == bytes(self))

    def __ne__(self, other):
        return not self.__eq__(other)

    __hash__ = bytes.__hash__


def compare_frames(got, want, what):
    """Fail with the first difference between two frame lists."""
    for i, (g, w) in enumerate(zip(got, want)):
        if g != w:
            raise TestFailure(f"{what}: frame {i} differs (got {len(g)} bytes {g[:32].hex()}..., "
                              f"want {len(w)} bytes {w[:32].hex()}...)")
    check(len(got) == len(want), f"{what}: {len(got)} frames, want {len(want)}")


def is_subsequence(out, inp):
    """True if the frames `out` appear in `inp` in the same order (greedy
    match): nothing duplicated beyond the input, nothing reordered."""
    j = 0
    for f in out:
        while j < len(inp) and inp[j] != f:
            j += 1
        if j == len(inp):
            return False
        j += 1
    return True
