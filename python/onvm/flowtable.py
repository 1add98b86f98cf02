# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 REINFORCE-NFV authors
"""onvm.flowtable -- flow tables the tests compare: what tshark computes from a
capture, independently of the product, and what basic_monitor exported,
keyed alike by the directional IPv4 5-tuple, and their differences.

tshark (Debian's, 4.0) is asked for fields only; a test without it is
skipped (onvm.lab.TestSkip).
"""
import shutil
import subprocess

from onvm.lab import TestSkip, check


def tshark_flows(path):
    """Per-packet facts of a capture, computed by tshark independently of the product.

    Returns (frames, flows, non_ip) where flows maps the directional IPv4
    5-tuple (src, dst, proto, sport, dport) to [packets, bytes].  A frame is
    IPv4 when the EtherType after at most two VLAN tags is 0x0800; ports are
    those of the outer TCP/UDP header (0 for other protocols, for ICMP errors
    quoting an inner header, and for non-first fragments)."""
    if shutil.which("tshark") is None:
        raise TestSkip("tshark is not installed")
    fields = ["frame.cap_len", "eth.type", "vlan.etype", "ip.src", "ip.dst", "ip.proto",
              "ip.frag_offset", "tcp.srcport", "tcp.dstport", "udp.srcport", "udp.dstport"]
    cmd = ["tshark", "-n", "-r", path, "-o", "ip.defragment:FALSE",
           "-o", "tcp.desegment_tcp_streams:FALSE", "-T", "fields", "-E", "separator=\t"]
    for f in fields:
        cmd += ["-e", f]
    out = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, check=True,
                         timeout=120).stdout.decode()
    flows, non_ip, frames = {}, 0, 0
    first = lambda s: s.split(",")[0] if s else ""
    for line in out.splitlines():
        v = dict(zip(fields, line.split("\t")))
        frames += 1
        length = int(v["frame.cap_len"])
        vl = [x for x in v.get("vlan.etype", "").split(",") if x]
        etype = vl[-1] if vl else v.get("eth.type", "")
        if len(vl) > 2 or etype == "" or int(etype, 16) != 0x0800 or not v.get("ip.src"):
            non_ip += 1
            continue
        proto = int(first(v["ip.proto"]))
        sport = dport = 0
        frag = int(first(v.get("ip.frag_offset", "")) or 0)
        if frag == 0 and proto == 6 and v.get("tcp.srcport"):
            sport, dport = int(first(v["tcp.srcport"])), int(first(v["tcp.dstport"]))
        elif frag == 0 and proto == 17 and v.get("udp.srcport"):
            sport, dport = int(first(v["udp.srcport"])), int(first(v["udp.dstport"]))
        key = (first(v["ip.src"]), first(v["ip.dst"]), proto, sport, dport)
        e = flows.setdefault(key, [0, 0])
        e[0] += 1
        e[1] += length
    return frames, flows, non_ip


def monitor_flows(doc):
    """basic_monitor's export as {(src, dst, proto, sport, dport): [packets, bytes]}."""
    out = {}
    for f in doc["flows"]:
        key = (f["src"], f["dst"], f["proto"], f["sport"], f["dport"])
        check(key not in out, f"basic_monitor exported flow {key} twice")
        out[key] = [f["packets"], f["bytes"]]
    return out


def diff_flows(got, want, limit=10):
    """Human-readable differences between two flow tables (empty if equal)."""
    lines = []
    for k in sorted(set(got) | set(want), key=str):
        if got.get(k) != want.get(k):
            lines.append(f"{k}: got {got.get(k)}, want {want.get(k)}")
    if len(lines) > limit:
        lines = lines[:limit] + [f"... and {len(lines) - limit} more"]
    return lines
