# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 REINFORCE-NFV authors
"""onvm.latshim -- the file bench/lat_shim.so (the latency benchmark's
LD_PRELOAD library, see its opening comment) writes: mapped and read
without stopping the system measured, its two latency histograms diffed
between two snapshots and read as percentiles.  bench/latency.py measures
with it; tests/integration/test_lat_shim.py checks the shim through it.
"""
import mmap
import os
import struct
import time

from onvm.tput import BenchError


class LatFile:
    """bench/lat_shim.c's histogram file (layout version 1, little endian):
    0 header (64 B), 64 control line (rate_pps), 128 generator counters,
    192 sink counters, 256 hist[2][n_buckets] of uint64."""
    HDR = struct.Struct("<8s8IQI3I")
    RX_FIELDS = ("polls", "kept", "paced_out", "ring_overflow", "muted", "pid")
    TX_FIELDS = ("measured", "unstamped", "negative", "sum_ns", "pid")
    VERSION = 1

    def __init__(self, path):
        self.path = path
        self.mm = None

    def try_open(self):
        if self.mm is not None:
            return True
        try:
            fd = os.open(self.path, os.O_RDWR)
        except FileNotFoundError:
            return False
        try:
            if os.fstat(fd).st_size < 256:
                return False
            mm = mmap.mmap(fd, 0)
        finally:
            os.close(fd)
        h = self.HDR.unpack_from(mm, 0)
        if h[0] != b"LATSHIM\0":
            mm.close()
            return False
        (_, version, hdr_bytes, n_hist, n_buckets, lin_width, lin_buckets, log_buckets,
         per_decade, tsc_hz, ring, *_) = h
        if version != self.VERSION or n_hist != 2:
            raise BenchError(f"{self.path}: layout version {version}, n_hist {n_hist}")
        need = hdr_bytes + n_hist * n_buckets * 8
        if len(mm) < need:
            mm.close()
            return False
        self.mm, self.size = mm, need
        self.hdr_bytes, self.n_buckets, self.tsc_hz, self.ring = hdr_bytes, n_buckets, tsc_hz, ring
        self.edges = bucket_edges(lin_width, lin_buckets, log_buckets, per_decade)
        return True

    def set_rate(self, pps):
        struct.pack_into("<Q", self.mm, 64, int(round(pps)))

    def snapshot(self):
        """A copy of the whole file (one memcpy: the measurement process should not
        compete with the pollers for a CPU during a window); parse() reads it."""
        t = time.monotonic()
        raw = self.mm[:self.size]
        return (t + time.monotonic()) / 2, raw

    def parse(self, snap):
        t, raw = snap
        rx = dict(zip(self.RX_FIELDS, struct.unpack_from("<6Q", raw, 128)))
        tx = dict(zip(self.TX_FIELDS, struct.unpack_from("<5Q", raw, 192)))
        n = self.n_buckets
        h = struct.unpack_from(f"<{2 * n}Q", raw, self.hdr_bytes)
        return {"t": t, "rx": rx, "tx": tx, "node": h[:n], "offered": h[n:]}

    def measured(self):
        """Stamped packets seen at the sink so far."""
        return struct.unpack_from("<Q", self.mm, 192)[0]

    def close(self):
        if self.mm is not None:
            self.mm.close()
            self.mm = None


def bucket_edges(lin_width, lin_buckets, log_buckets, per_decade):
    """Lower edges in ns of every bucket, plus the upper edge of the last finite one;
    the overflow bucket is [edges[-1], inf)."""
    lim = lin_width * lin_buckets
    return ([i * lin_width for i in range(lin_buckets)] +
            [lim * 10 ** (j / per_decade) for j in range(log_buckets + 1)])


def diff(s0, s1):
    d = {"dt": s1["t"] - s0["t"]}
    for side in ("rx", "tx"):
        d[side] = {k: s1[side][k] - s0[side][k] for k in s1[side] if k != "pid"}
    for h in ("node", "offered"):
        d[h] = [b - a for a, b in zip(s0[h], s1[h])]
    return d


def percentile(counts, edges, p):
    """p-th percentile in µs, linear inside the bucket (the overflow bucket gives its
    lower edge)."""
    total = sum(counts)
    if total == 0:
        return None
    target = p / 100.0 * total
    cum = 0
    for i, c in enumerate(counts):
        if c and cum + c >= target:
            lo = edges[i]
            if i + 1 >= len(edges):
                return lo / 1000.0
            return (lo + (edges[i + 1] - lo) * (target - cum) / c) / 1000.0
        cum += c
    return edges[-1] / 1000.0


def max_us(counts, edges):
    for i in range(len(counts) - 1, -1, -1):
        if counts[i]:
            return (edges[i + 1] if i + 1 < len(edges) else edges[i]) / 1000.0
    return None
