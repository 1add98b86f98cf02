#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 REINFORCE-NFV authors
"""vlan_tagger tags every frame as its policy says, and keeps doing so across
a failover.

Input: webex.pcap (TCP/UDP flows, jumbo frames in chained mbufs), tor.pcap
(LLC/STP frames: not IPv4), dns.pcap (802.1Q, QinQ and PPPoE frames: tags to
rewrite) interleaved, plus frames built here from 198.18.0.0/15 (ICMP, a
malformed IPv4 header, a truncated IPv4 header, runts).  One net_pcap port,
one NF, vlan_tagger with "resiliency": "local" and a policy whose rules give
the flows of the traces different VLANs and priorities.

The expectation is computed here, from the input pcap and the policy, by a
parser written for this test (not the NF's code): the first rule matching a
frame's directional 5-tuple decides, anything that is not a well-formed IPv4
packet gets the default; an untagged frame gets 81 00 + TCI inserted after
the source MAC, a tagged one (outer TPID 0x8100 or 0x88a8) gets its outer
VID/PCP rewritten with DEI kept; frames shorter than an Ethernet (+ tag)
header are dropped.  Asserted, run without and with a failover
(ONVM_NF_FAULT=vlan_tagger:committed:N, N a seeded draw, printed;
ONVM_TEST_SEED repeats it):
  - the capture equals the expectation frame by frame: same order, every
    byte other than the tag's equal to the input;
  - several distinct VLANs came out (the policy is exercised);
  - the NF's export (written by the promoted standby in the failover run):
    per-rule and default packet/flow counters, inserted/rewritten, non_ip,
    malformed and drop reasons equal what this test computed; each exported
    flow carries the tag of its rule;
  - one failover in the failover runs (none in the first), nothing dropped
    by the promotion, the manager exits 0.
A third run fails the NF at the trace's last batch: the promoted standby
gets no packet after taking over and must still export the whole state.
First, a bad policy, a bad option and a missing policy: the node's log holds
the NF's reason (FILE:LINE:COL: field: reason / its usage).
"""
import json
import os
import random
import struct

from onvm import lab, pcap, traces

ETH = bytes.fromhex("020000000002" "020000000001")

POLICY = {
    "default": {"vlan": 42, "pcp": 3},
    "rules": [
        {"src": "10.8.0.1/32", "proto": "tcp", "dport": 443, "vlan": 100, "pcp": 4},
        {"dst": "10.8.0.1", "proto": "tcp", "sport": [443, 443], "vlan": 101, "pcp": 4},
        {"proto": "udp", "dport": [0, 1023], "vlan": 200, "pcp": 6},
        {"proto": "udp", "vlan": 201},
        {"src": "192.168.1.0/24", "vlan": 300},
        {"dst": "192.168.1.0/24", "vlan": 301, "pcp": 2},
        {"src": "198.18.0.0/15", "proto": "icmp", "vlan": 400, "pcp": 7},
    ],
    "idle_timeout_ms": 60000,
    "flows": 4096,
}


# ---- the policy, independently ---------------------------------------------------

def ip4(s):
    a, b, c, d = (int(x) for x in s.split("."))
    return a << 24 | b << 16 | c << 8 | d


def prefix(s):
    addr, _, n = s.partition("/")
    n = int(n) if n else 32
    mask = (0xFFFFFFFF << (32 - n)) & 0xFFFFFFFF if n else 0
    return ip4(addr) & mask, mask


PROTOS = {"tcp": 6, "udp": 17, "icmp": 1}


def compile_rules(policy):
    out = []
    for r in policy.get("rules", []):
        src = prefix(r["src"]) if "src" in r else (0, 0)
        dst = prefix(r["dst"]) if "dst" in r else (0, 0)
        proto = r.get("proto")
        proto = PROTOS.get(proto, proto)
        rng = lambda v: (0, 65535) if v is None else (v, v) if isinstance(v, int) else tuple(v)
        out.append((src, dst, proto, rng(r.get("sport")), rng(r.get("dport")), r["vlan"],
                    r.get("pcp", 0)))
    return out


def first_match(rules, key):
    s, d, proto, sp, dp = key
    for i, ((sa, sm), (da, dm), p, (slo, shi), (dlo, dhi), vlan, pcp) in enumerate(rules):
        if (s & sm) == sa and (d & dm) == da and (p is None or p == proto) and \
                slo <= sp <= shi and dlo <= dp <= dhi:
            return i, vlan, pcp
    return None


def classify(f):
    """('drop', None) | ('ip', 5-tuple) | ('other', reason): what the tagger sees.
    IPv4 after at most two tags; a well-formed header, and a whole TCP/UDP
    header for unfragmented (or first-fragment) TCP/UDP."""
    if len(f) < 14:
        return "drop", None
    etype, off, tags = struct.unpack_from(">H", f, 12)[0], 14, 0
    while etype in (0x8100, 0x88A8) and tags < 2:
        if len(f) < off + 4:
            return "drop", None
        etype = struct.unpack_from(">H", f, off + 2)[0]
        off += 4
        tags += 1
    if etype != 0x0800:
        return "other", "not_ipv4"
    if len(f) < off + 20:
        return "other", "truncated_l3"
    if f[off] >> 4 != 4:
        return "other", "bad_ip_version"
    ihl = (f[off] & 15) * 4
    if ihl < 20:
        return "other", "bad_ihl"
    if len(f) < off + ihl:
        return "other", "truncated_l3"
    total = struct.unpack_from(">H", f, off + 2)[0]
    if total < ihl or off + total > len(f):
        return "other", "bad_ip_total_length"
    proto = f[off + 9]
    src, dst = struct.unpack_from(">II", f, off + 12)
    frag = struct.unpack_from(">H", f, off + 6)[0]
    l4, end = off + ihl, off + total
    sport = dport = 0
    if frag & 0x1FFF == 0:
        if proto == 6:
            if l4 + 20 > end:
                return "other", "truncated_l4"
            doff = (f[l4 + 12] >> 4) * 4
            if doff < 20 or l4 + doff > end:
                return "other", "bad_l4_length"
            sport, dport = struct.unpack_from(">HH", f, l4)
        elif proto == 17:
            if l4 + 8 > end:
                return "other", "truncated_l4"
            ulen = struct.unpack_from(">H", f, l4 + 4)[0]
            if ulen < 8 or (not frag & 0x2000 and ulen > total - ihl):
                return "other", "bad_l4_length"
            sport, dport = struct.unpack_from(">HH", f, l4)
    return "ip", (src, dst, proto, sport, dport)


def expect(frames, policy):
    """(output frames, counters) the policy implies for the input frames."""
    rules = compile_rules(policy)
    dv, dp = policy["default"]["vlan"], policy["default"]["pcp"]
    out = []
    c = {"inserted": 0, "rewritten": 0, "unchanged": 0, "non_ip": 0, "dropped": 0,
         "malformed": {}, "rule_packets": [0] * (len(rules) + 1),
         "rule_flows": [set() for _ in range(len(rules) + 1)], "flows": {}}
    for f in frames:
        kind, what = classify(f)
        if kind == "drop":
            c["dropped"] += 1
            c["malformed"]["truncated_l2"] = c["malformed"].get("truncated_l2", 0) + 1
            continue
        idx, vlan, pcp = len(rules), dv, dp
        if kind == "ip":
            m = first_match(rules, what)
            if m is not None:
                idx, vlan, pcp = m
            c["rule_flows"][idx].add(what)
            c["flows"][what] = (vlan, pcp, idx if idx < len(rules) else -1)
        elif what == "not_ipv4":
            c["non_ip"] += 1
        else:
            c["malformed"][what] = c["malformed"].get(what, 0) + 1
        c["rule_packets"][idx] += 1
        if vlan == 0:
            c["unchanged"] += 1
            out.append(f)
        elif struct.unpack_from(">H", f, 12)[0] in (0x8100, 0x88A8):
            old = struct.unpack_from(">H", f, 14)[0]
            tci = pcp << 13 | (old & 0x1000) | vlan
            out.append(f[:14] + struct.pack(">H", tci) + f[16:])
            c["rewritten"] += 1
        else:
            out.append(f[:12] + struct.pack(">HH", 0x8100, pcp << 13 | vlan) + f[12:])
            c["inserted"] += 1
    return out, c


# ---- input --------------------------------------------------------------------------

def ipv4(src, dst, proto, payload, ihl=5, version=4, total=None):
    hdr = struct.pack(">BBHHHBBHII", version << 4 | ihl, 0,
                      total if total is not None else 20 + len(payload), 1, 0, 64, proto, 0,
                      ip4(src), ip4(dst))
    return hdr + bytes(4 * (ihl - 5) if ihl > 5 else 0) + payload


def built_frames():
    icmp = struct.pack(">BBHHH", 8, 0, 0, 1, 1) + bytes(range(32))
    udp = struct.pack(">HHHH", 5353, 53, 8 + 12, 0) + bytes(12)
    tcp = struct.pack(">HHIIBBHHH", 40000, 443, 1, 0, 0x50, 0x02, 1024, 0, 0)
    e4 = ETH + b"\x08\x00"
    return [
        e4 + ipv4("198.18.0.1", "198.19.0.2", 1, icmp),               # rule 6
        e4 + ipv4("198.19.0.2", "198.18.0.1", 1, icmp),               # rule 6 too (a /15)
        e4 + ipv4("198.18.0.1", "198.19.0.2", 17, udp),               # rule 2
        e4 + ipv4("198.18.0.1", "198.19.0.2", 6, tcp),                # default
        e4 + ipv4("198.18.0.1", "198.19.0.2", 6, tcp, version=6),     # bad_ip_version
        e4 + ipv4("198.18.0.1", "198.19.0.2", 17, udp, total=9000),   # bad_ip_total_length
        e4 + ipv4("198.18.0.1", "198.19.0.2", 6, tcp)[:12],           # truncated_l3
        ETH[:10],                                                     # runt: dropped
        ETH + b"\x81\x00\x00",                                        # tag cut: dropped
        ETH + b"\x81\x00\x30\x05\x08\x00" + ipv4("198.18.0.1", "198.19.0.2", 1, icmp),
    ]


def input_frames():
    webex = pcap.read_pcap(traces.trace("webex.pcap"))
    tor = pcap.read_pcap(traces.trace("tor.pcap"))
    dns = pcap.read_pcap(traces.trace("dns.pcap"))
    built = built_frames()
    frames = []
    # Interleave: runs of webex with tor, dns and built frames in between.
    others = [tor, dns, built]
    i = 0
    while webex or any(others):
        frames += webex[:7]
        del webex[:7]
        src = others[i % 3]
        i += 1
        if src:
            frames.append(src.pop(0))
    return frames


# ---- the runs ------------------------------------------------------------------------

def run(L, case, trace_path, frames, want, wc, fault_at=None):
    out, export = L.path(f"{case}-out.pcap"), L.path(f"{case}-export.json")
    policy_path = L.path("policy.json")
    env = {"ONVM_NF_FAULT": f"vlan_tagger:committed:{fault_at}"} if fault_at else None
    node = L.node(case, {
        "ports": [{"name": "in", "dev": f"net_pcap0,rx_pcap={trace_path},tx_pcap={out}"}],
        "nfs": [{"binary": "vlan_tagger", "service": 1, "resiliency": "local",
                 "args": ["-c", policy_path, "-e", export, "-p", "0"]}],
        "chains": [{"name": "c", "services": [1], "ingress_port": "in", "exit_port": "in"}],
    }, env=env).start()
    port = node.wait_port("in", "tx", len(want), timeout=60)
    lab.wait_until(lambda: (lambda p: p["in_use"] == p["idle_in_use"])(node.pool()), 30,
                   f"{case}: pool back to its idle level")
    nf = node.nf_by(service=1)[0]
    L.expect(nf["failovers"] == (1 if fault_at else 0),
             f"{case}: {nf['failovers']} failovers")
    L.expect(nf["failover_dropped"] == 0, f"{case}: promotion dropped {nf['failover_dropped']}")
    L.expect(port["rx"] == len(frames) and port["tx"] == len(want),
             f"{case}: port rx {port['rx']} tx {port['tx']}, want {len(frames)} / {len(want)}")
    rc = node.stop()
    L.expect(rc == 0, f"{case}: manager exit status {rc}")
    got = pcap.read_capture_out(out)
    pcap.compare_frames(got, want, f"{case}: output capture")

    doc = lab.read_json(export)
    L.expect(doc["packets"] == len(frames), f"{case}: export packets {doc['packets']}")
    for k in ("inserted", "rewritten", "unchanged", "non_ip", "dropped"):
        L.expect(doc[k] == wc[k], f"{case}: export {k} = {doc[k]}, want {wc[k]}")
    for r, n in doc["malformed"].items():
        L.expect(n == wc["malformed"].get(r, 0),
                 f"{case}: export malformed {r} = {n}, want {wc['malformed'].get(r, 0)}")
    L.expect(doc["drop_reasons"]["truncated_l2"] == wc["dropped"],
             f"{case}: drop reasons {doc['drop_reasons']}")
    n_rules = len(POLICY["rules"])
    for i, r in enumerate(doc["rules"] + [doc["default"]]):
        L.expect(r["packets"] == wc["rule_packets"][i] and r["flows"] == len(wc["rule_flows"][i]),
                 f"{case}: rule {i if i < n_rules else 'default'}: packets {r['packets']} flows "
                 f"{r['flows']}, want {wc['rule_packets'][i]} / {len(wc['rule_flows'][i])}")
    L.expect(doc["untracked"] == 0, f"{case}: {doc['untracked']} untracked")
    L.expect(len(doc["flows"]) == len(wc["flows"]),
             f"{case}: {len(doc['flows'])} flows exported, want {len(wc['flows'])}")
    for fl in doc["flows"]:
        key = (ip4(fl["src"]), ip4(fl["dst"]), fl["proto"], fl["sport"], fl["dport"])
        w = wc["flows"].get(key)
        if not L.expect(w == (fl["vlan"], fl["pcp"], fl["rule"]),
                        f"{case}: flow {fl} exported, want tag/rule {w}"):
            break
    print(f"{case}: {len(got)} frames out of {len(frames)}, failovers {nf['failovers']}, "
          f"re-emitted {nf['failover_reemitted']}")


def bad_start(L):
    """A bad policy or option: the NF says why (FILE:LINE:COL: field: reason,
    or its usage) and leaves; the node goes on without it."""
    bad = L.path("rules-bad.json")  # not <node name>.json: the lab writes node configs there
    with open(bad, "w") as f:
        f.write('{"default": {"vlan": 7},\n "rules": [{"proto": "udp", "vlan": 0}]}\n')
    for name, args, want in [
        ("bad-policy", ["-c", bad], f"vlan_tagger: {bad}:2:37: rules[0].vlan: expected an "
                                    f"integer in 1..4094"),
        ("bad-option", ["-c", bad, "-x"], "usage: "),
        ("no-policy", [], "vlan_tagger: a policy (-c FILE) is required"),
    ]:
        node = L.node(name, {
            "ports": [{"name": "p", "dev": "net_null0", "rx": False}],
            "nfs": [{"binary": "vlan_tagger", "service": 1, "args": args}],
            "chains": [{"name": "c", "services": [1], "ingress_port": "p", "exit_port": "p"}],
        }).start()
        lab.wait_until(lambda: want in node.log(), 30, f"{name}: '{want}' in the log",
                       alive=node.assert_running)
        lab.wait_until(lambda: not [n for n in node.nf_by(service=1)
                                    if n["status"] in ("starting", "ready", "running")],
                       30, f"{name}: the NF to leave")
        rc = node.stop()
        L.expect(rc == 0, f"{name}: manager exit status {rc}")


def test(L):
    bad_start(L)
    frames = input_frames()
    trace_path = L.path("in.pcap")
    pcap.write_pcap(trace_path, frames)
    with open(L.path("policy.json"), "w") as f:
        json.dump(POLICY, f, indent=1)
    want, wc = expect(frames, POLICY)
    vlans = {struct.unpack_from(">H", f, 14)[0] & 0xFFF for f in want
             if struct.unpack_from(">H", f, 12)[0] in (0x8100, 0x88A8)}
    print(f"{len(frames)} frames in, {len(want)} expected out; VLANs {sorted(vlans)}; "
          f"inserted {wc['inserted']} rewritten {wc['rewritten']} non-ip {wc['non_ip']} "
          f"malformed {wc['malformed']}")
    lab.check({100, 101, 201, 300, 301, 400, 42} <= vlans,
              f"the input does not exercise the policy: VLANs {sorted(vlans)}")
    lab.check(wc["rewritten"] > 0 and wc["non_ip"] > 0 and wc["malformed"],
              "the input lacks tagged, non-IPv4 or malformed frames")
    run(L, "plain", trace_path, frames, want, wc)
    seed = int(os.environ.get("ONVM_TEST_SEED", random.randrange(1 << 32)))
    at = random.Random(seed).randrange(200, len(frames) - 300)
    print(f"seed {seed}: vlan_tagger dies after {at} packets (committed)")
    run(L, "failover", trace_path, frames, want, wc, fault_at=at)
    # At the last batch: the promoted standby gets no packet after taking
    # over, and must still open the state and export it.
    run(L, "failover-at-end", trace_path, frames, want, wc, fault_at=len(frames))


if __name__ == "__main__":
    lab.Lab("nf_vlan_tagger").run(test)
