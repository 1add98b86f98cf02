# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 REINFORCE-NFV authors
"""onvm.flowhash -- where the manager routes a flow, computed here
independently of it: onvm_flow_key_hash() (common/onvm_pkt_parse.c: both
directions alike, CRC-32C words as rte_hash_crc_4byte computes them), the
bucket (the hash's top 10 bits, ONVM_FLOW_BUCKET) and its rank among n by
jump consistent hashing (onvm_mgr/dataplane/router.c), for tests and
benchmarks that must know which flows a move or a scale step takes."""
import struct

BUCKET_BITS = 10
BUCKETS = 1 << BUCKET_BITS


def crc32c_word(data, crc):
    """rte_hash_crc_4byte: CRC-32C of a 32-bit word, no inversions."""
    crc ^= data
    for _ in range(32):
        crc = (crc >> 1) ^ (0x82F63B78 if crc & 1 else 0)
    return crc


def flow_hash(src, dst, proto, sport, dport):
    """src, dst: 4 bytes each (network order)."""
    a, b = struct.unpack("!I", bytes(src))[0], struct.unpack("!I", bytes(dst))[0]
    pa, pb = sport, dport
    if a > b or (a == b and pa > pb):
        a, b, pa, pb = b, a, pb, pa
    h = crc32c_word(a, 0x9E3779B9)
    h = crc32c_word(b, h)
    h = crc32c_word((pa << 16) | pb, h)
    return crc32c_word(proto, h)


def bucket(src, dst, proto, sport, dport):
    return flow_hash(src, dst, proto, sport, dport) >> (32 - BUCKET_BITS)


def jump(key, n):
    """Lamping and Veach's jump consistent hash, as mgr_jump_hash()."""
    b, j = -1, 0
    while j < n:
        b = j
        key = (key * 2862933555777941757 + 1) & (2 ** 64 - 1)
        j = int((b + 1) * ((1 << 31) / ((key >> 33) + 1)))
    return b


def rank(src, dst, proto, sport, dport, n):
    """The rank a flow has in a service of n ranks, no bucket moved."""
    return jump(bucket(src, dst, proto, sport, dport), n)
