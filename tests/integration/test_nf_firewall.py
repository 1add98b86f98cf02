#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 REINFORCE-NFV authors
"""The firewall NF passes exactly the frames its rules allow, and its per-rule
counters equal the rules applied offline to the trace by tshark.

Each case runs one node: a net_pcap port reading a trace and writing a
capture, and the chain port -> firewall ("resiliency": "local") -> port.  The
rules file is chosen per trace to exercise allow and deny rules, prefixes,
port ranges, protocols by name and number, rules shadowed by earlier ones,
and the default / non_ip / malformed policies.

The expectation is computed without the product: tshark, with IP reassembly
off, evaluates one display filter per rule (fields of the OUTER IPv4 header
via the layer operator, ports of the outer TCP/UDP header, which tshark does
not dissect in a non-first fragment -- the firewall's documented rule); the
first rule whose filter selects a frame is that frame's rule.  Frames that
are not IPv4 (after at most two VLAN tags), and IPv4 frames whose header
fields (as tshark decodes them) break the parser's documented checks, get
the non_ip / malformed policies instead.  Asserted per case:
  - the firewall's export: per rule (by index and name) packets and bytes,
    the default, non_ip and malformed counts (malformed per reason), totals;
  - the output capture holds exactly the allowed input frames, in order, and
    the port sent as many;
  - the firewall received every frame; no packet is ND-marked; the manager
    exits 0.
The synthetic trace (scapy, 198.18.0.0/15) adds what the real traces lack:
fragments, ICMP, GRE (whose inner TCP header must not be matched), a VLAN tag,
ARP/IPv6, and malformed frames (their construction labels must agree with
the tshark-based oracle).

A last case runs tor.pcap again while the firewall's active process dies at
the "committed" fault point of the batch holding a seeded-random packet in
the middle of the trace (ONVM_NF_FAULT; ONVM_TEST_SEED=N repeats a run): one
failover, nothing dropped or duplicated (the standby re-emits the committed
batch), the final counters equal the offline expectation all the same, and
the promoted process freed the dead one's rte_acl context.
"""
import json
import os
import random
import re
import shutil
import subprocess

from onvm import lab, pcap, traces

PROTO = {"tcp": 6, "udp": 17, "icmp": 1}
REASONS = ["truncated_l2", "truncated_l3", "bad_ip_version", "bad_ihl", "bad_ip_total_length",
           "truncated_l4", "bad_l4_length"]

CASES = {
    "http-manipulated.pcap": {
        "default": "deny",
        "rules": [
            {"name": "old_conn", "action": "deny", "proto": "tcp", "src": "192.168.0.20/32",
             "sport": [33600, 33650]},
            {"name": "to_proxy", "action": "allow", "dst": "192.168.0.0/29", "proto": "tcp",
             "dport": [8000, 8099]},
            {"name": "from_proxy", "action": "allow", "src": "192.168.0.7", "proto": 6,
             "sport": 8080, "dport": [33680, 33700]},
            {"name": "never", "action": "allow", "src": "10.0.0.0/8"},
        ],
    },
    "dns.pcap": {
        "default": "allow",
        "non_ip": "deny",
        "rules": [
            {"name": "query_deny", "action": "deny", "proto": "udp", "dst": "192.168.170.0/24",
             "dport": 53},
            {"name": "answers", "action": "allow", "proto": "udp", "sport": [53, 53]},
        ],
    },
    "ssh.pcap": {
        "default": "deny",
        "non_ip": "allow",
        "rules": [
            {"name": "loopback_8000", "action": "allow", "src": "127.0.0.1/32", "proto": "tcp",
             "dport": 8000},
            {"name": "ssh_in", "action": "allow", "proto": "tcp", "dst": "172.16.238.160/28",
             "dport": [20, 25]},
            {"name": "ssh_out", "action": "allow", "proto": "tcp", "src": "172.16.238.168",
             "sport": 22, "dst": "172.16.238.0/24", "dport": [58000, 59000]},
            {"name": "shadowed", "action": "deny", "proto": "tcp", "dport": 22},
        ],
    },
    "tor.pcap": {
        "default": "allow",
        "non_ip": "deny",
        "rules": [
            {"name": "tls_to_91", "action": "deny", "dst": "91.143.93.0/24", "proto": "tcp",
             "dport": 443},
            {"name": "tls_replies", "action": "allow", "proto": "tcp", "sport": 443,
             "dport": [51100, 51199]},
            {"name": "lan_bcast", "action": "deny", "proto": 17, "src": "192.168.1.0/24",
             "dst": "192.168.1.255/32", "dport": 17500},
            {"name": "from_lan_low", "action": "deny", "src": "192.168.1.252/32", "proto": "tcp",
             "dport": [1, 442]},
            {"name": "from_lan_tls", "action": "deny", "src": "192.168.1.0/24", "proto": "tcp",
             "sport": [51100, 51180], "dport": [440, 450]},
        ],
    },
}

SYNTH_RULES = {
    "default": "deny",
    "non_ip": "allow",
    "malformed": "allow",
    "rules": [
        {"name": "dns", "action": "deny", "proto": "udp", "dport": 53},
        {"name": "udp_from_a", "action": "allow", "proto": "udp", "src": "198.18.0.0/24"},
        {"name": "tls", "action": "allow", "proto": "tcp", "dst": "198.19.0.0/17",
         "sport": [32768, 65535], "dport": [443, 443]},
        {"name": "low_ports", "action": "deny", "proto": "tcp", "dport": [0, 1023]},
        {"name": "high_ports", "action": "allow", "proto": 6, "dport": [1024, 65535]},
        {"name": "from_a", "action": "allow", "src": "198.18.0.1"},
        {"name": "icmp", "action": "allow", "proto": "icmp"},
        {"name": "gre", "action": "deny", "proto": 47},
        {"name": "vlan_udp", "action": "allow", "proto": "udp", "dst": "198.19.0.0/16"},
    ],
}


def synthetic():
    """[(frame, label)]: label "ip", "non_ip" or a malformed reason."""
    try:
        from scapy.all import ARP, GRE, ICMP, IP, TCP, UDP, Dot1Q, Ether, IPv6, Raw, raw
    except ImportError as e:
        raise lab.TestSkip(f"scapy is not available to /usr/bin/python3: {e}")
    E = Ether(src="02:00:00:00:00:01", dst="02:00:00:00:00:02")
    A, B, C, D = "198.18.0.1", "198.18.1.2", "198.19.0.3", "198.19.128.4"
    pay = lambda n: Raw(bytes(range(n)))
    good = [
        E / IP(src=A, dst=C) / UDP(sport=5000, dport=53) / pay(20),        # dns
        E / IP(src=A, dst=C, flags="MF") / UDP(sport=5000, dport=53, len=1008) / pay(96),
        E / IP(src=A, dst=C, proto=17, frag=13) / pay(100),                # udp_from_a
        E / IP(src=B, dst=C, proto=17, frag=13) / pay(100),                # vlan_udp (no ports)
        E / IP(src=B, dst=C) / TCP(sport=40000, dport=443) / pay(10),      # tls
        E / IP(src=B, dst=D) / TCP(sport=40000, dport=443),                # outside /17: low
        E / IP(src=B, dst=C) / TCP(sport=32767, dport=443),                # sport: low_ports
        E / IP(src=B, dst=C) / TCP(sport=5, dport=1023),                   # low_ports
        E / IP(src=B, dst=C) / TCP(sport=5, dport=1024),                   # high_ports
        E / IP(src=A, dst=D, proto=6, frag=20) / pay(40),                  # from_a (no ports)
        E / IP(src=B, dst=D, proto=6, frag=20) / pay(40),                  # default
        E / IP(src=C, dst=A) / ICMP() / pay(8),                            # icmp
        E / IP(src=C, dst=A) / GRE() / IP(src=B, dst=C) / TCP(sport=40000, dport=443),  # gre
        E / Dot1Q(vlan=7) / IP(src=B, dst=C) / UDP(sport=1, dport=9999) / pay(4),  # vlan_udp
        E / IP(src=D, dst=B) / UDP(sport=1, dport=9999),                   # default
        E / IP(src=D, dst=B, proto=50) / pay(30),                          # default
    ]
    frames = [(raw(p), "ip") for p in good]
    frames += [
        (raw(E / ARP(psrc=A, pdst=B)), "non_ip"),
        (raw(E / IPv6(src="2001:2::1", dst="2001:2::2") / UDP(sport=1, dport=53)), "non_ip"),
        (bytes(range(10)), "truncated_l2"),
        (raw(E / IP(src=A, dst=C, len=1500) / UDP(sport=1, dport=53) / pay(10)),
         "bad_ip_total_length"),
        (raw(E / IP(src=A, dst=C, ihl=3) / TCP()), "bad_ihl"),
        (raw(E / IP(src=A, dst=C, version=5) / TCP()), "bad_ip_version"),
        (raw(E / IP(src=A, dst=C) / TCP(dataofs=4)), "bad_l4_length"),
        (raw(E / IP(src=A, dst=C) / UDP(len=500) / pay(10)), "bad_l4_length"),
        (raw(E / IP(src=A, dst=C, proto=6) / pay(10)), "truncated_l4"),
    ]
    # Interleave, so that bad frames sit between good ones in every burst.
    out = []
    for i, f in enumerate(frames):
        out.append(f)
        out.append(frames[i % len(good)])
    return out


# ---- the offline expectation -----------------------------------------------------------

TSHARK = ["tshark", "-n", "-o", "ip.defragment:FALSE", "-o", "tcp.desegment_tcp_streams:FALSE"]
FIELDS = ["frame.number", "frame.cap_len", "eth.type", "vlan.etype", "ip.version", "ip.hdr_len",
          "ip.len", "ip.proto", "ip.frag_offset", "ip.flags.mf", "tcp.hdr_len", "udp.length"]


def tshark(path, args):
    return subprocess.run(TSHARK + ["-r", path] + args, stdout=subprocess.PIPE,
                          stderr=subprocess.DEVNULL, check=True, timeout=120).stdout.decode()


def frame_kinds(path):
    """Per frame: "ip", "non_ip", or the malformed reason, from tshark's
    decoding of the headers and the parser's documented checks."""
    first = lambda s: s.split(",")[0] if s else ""
    num = lambda s: int(first(s), 0) if first(s) else None
    kinds = []
    for line in tshark(path, ["-T", "fields", "-E", "separator=\t"] +
                       [x for f in FIELDS for x in ("-e", f)]).splitlines():
        v = dict(zip(FIELDS, line.split("\t")))
        cap = int(v["frame.cap_len"])
        vl = [x for x in v.get("vlan.etype", "").split(",") if x]
        l2 = 14 + 4 * min(len(vl), 2)
        etype = vl[-1] if vl else v.get("eth.type", "")
        if cap < 14 or (not vl and etype in ("0x8100", "0x88a8") and cap < 18):
            kinds.append("truncated_l2")  # no room for the (VLAN) header
            continue
        if len(vl) > 2 or etype == "" or int(etype, 16) != 0x0800:
            kinds.append("non_ip")
            continue
        ver, ihl, tot = num(v["ip.version"]), num(v["ip.hdr_len"]), num(v["ip.len"])
        if cap < l2 + 20:
            kinds.append("truncated_l3")
        elif ver != 4:
            kinds.append("bad_ip_version")
        elif ihl is None or ihl < 20:
            kinds.append("bad_ihl")
        elif l2 + ihl > cap:
            kinds.append("truncated_l3")
        elif tot is None or tot < ihl or l2 + tot > cap:
            kinds.append("bad_ip_total_length")
        else:
            kinds.append(l4_kind(v, num, tot - ihl))
    return kinds


def l4_kind(v, num, payload):
    if (num(v["ip.frag_offset"]) or 0) != 0:
        return "ip"
    proto = num(v["ip.proto"])
    if proto == 6:
        hl = num(v["tcp.hdr_len"])
        if payload < 20:
            return "truncated_l4"
        if hl is None or hl < 20 or hl > payload:
            return "bad_l4_length"
    elif proto == 17:
        ul = num(v["udp.length"])
        if payload < 8:
            return "truncated_l4"
        if ul is None or ul < 8 or (not flag(v["ip.flags.mf"]) and ul > payload):
            return "bad_l4_length"
    return "ip"


def flag(s):
    return (s.split(",")[0] if s else "0") in ("1", "True")


def rule_filter(r):
    """A display filter selecting the IPv4 frames rule r matches."""
    c = ["ip"]
    for key, field in (("src", "ip.src#1"), ("dst", "ip.dst#1")):
        if key in r:
            c.append(f"{field} == {r[key]}")
    proto = PROTO.get(r.get("proto"), r.get("proto"))
    if proto is not None:
        c.append(f"ip.proto#1 == {proto}")
    for key, fld in (("sport", "srcport"), ("dport", "dstport")):
        if key in r:
            lo, hi = (r[key], r[key]) if isinstance(r[key], int) else r[key]
            l4 = {6: "tcp", 17: "udp"}[proto]
            c.append(f"{l4}.{fld}#1 >= {lo} && {l4}.{fld}#1 <= {hi}")
    return " && ".join(c)


def expectation(path, frames, rules):
    """What the firewall must do with each frame of `path`, computed offline."""
    kinds = frame_kinds(path)
    lab.check(len(kinds) == len(frames),
              f"{path}: tshark sees {len(kinds)} frames, the pcap reader {len(frames)}")
    selected = []
    for r in rules["rules"]:
        f = rule_filter(r)
        nums = {int(x) for x in tshark(path, ["-Y", f, "-T", "fields", "-e", "frame.number"]).split()}
        selected.append(nums)
    default = rules["default"]
    policy = {"default": default, "non_ip": rules.get("non_ip", default),
              "malformed": rules.get("malformed", "deny")}
    want = {"rules": [[0, 0] for _ in rules["rules"]], "default": [0, 0], "non_ip": [0, 0],
            "malformed": [0, 0], "reasons": {r: 0 for r in REASONS}, "allowed": []}
    for i, (frame, kind) in enumerate(zip(frames, kinds)):
        if kind == "ip":
            hit = next((k for k, s in enumerate(selected) if i + 1 in s), None)
            if hit is None:
                slot, action = want["default"], policy["default"]
            else:
                slot, action = want["rules"][hit], rules["rules"][hit]["action"]
        elif kind == "non_ip":
            slot, action = want["non_ip"], policy["non_ip"]
        else:
            slot, action = want["malformed"], policy["malformed"]
            want["reasons"][kind] += 1
        slot[0] += 1
        slot[1] += len(frame)
        if action == "allow":
            want["allowed"].append(i)
    return want, kinds


# ---- one run ---------------------------------------------------------------------------

def run_case(L, tag, path, rules, fault_at=None):
    frames = pcap.read_pcap(path)
    want, _ = expectation(path, frames, rules)
    hits = {r["name"]: want["rules"][k][0] for k, r in enumerate(rules["rules"])}
    print(f"{tag}: {len(frames)} frames, allowed {len(want['allowed'])}; per rule {hits}, "
          f"default {want['default'][0]}, non_ip {want['non_ip'][0]}, "
          f"malformed {want['malformed'][0]}")
    rules_path, out, export = (L.path(f"{tag}-rules.json"), L.path(f"{tag}-out.pcap"),
                               L.path(f"{tag}-fw.json"))
    with open(rules_path, "w") as f:
        json.dump(rules, f, indent=2)
    env = {"ONVM_NF_FAULT": f"firewall:committed:{fault_at}"} if fault_at else None
    node = L.node(tag, {
        "ports": [{"name": "in", "dev": f"net_pcap0,rx_pcap={path},tx_pcap={out}"}],
        "nfs": [{"binary": "firewall", "service": 1, "resiliency": "local",
                 "args": ["-c", rules_path, "-e", export, "-p", "0"]}],
        "chains": [{"name": "c", "services": [1], "ingress_port": "in", "exit_port": "in"}],
    }, env=env).start()
    fw = lambda: node.nf_by(service=1)[0]
    first_pid = int(lab.LAUNCHED_RE.search(node.log()).group(1))
    if fault_at:
        lab.wait_until(lambda: fw()["failovers"] == 1, 60, f"{tag}: the failover")
    node.wait_port("in", "rx", len(frames))
    lab.wait_until(lambda: (lambda p: p["in_use"] == p["idle_in_use"])(node.pool()), 60,
                   f"{tag}: pool back to its idle level (trace done)")
    nf, port = fw(), node.port("in")
    L.expect(nf["rx"] == len(frames), f"{tag}: firewall rx {nf['rx']}, want {len(frames)}")
    L.expect(port["tx"] == len(want["allowed"]),
             f"{tag}: port tx {port['tx']}, want {len(want['allowed'])} allowed")
    L.expect(port.get("tx_nd", 0) == 0, f"{tag}: {port.get('tx_nd')} ND-marked packets")
    L.expect(nf["bad_touches"] == 0, f"{tag}: {nf['bad_touches']} touches outside the state")
    if fault_at:
        L.expect(nf["failovers"] == 1 and nf["pid"] != first_pid,
                 f"{tag}: failovers {nf['failovers']}, pid {first_pid} -> {nf['pid']}")
        L.expect(nf["failover_dropped"] == 0 and nf["failover_reemitted"] > 0,
                 f"{tag}: promotion dropped {nf['failover_dropped']}, re-emitted "
                 f"{nf['failover_reemitted']} (committed: none dropped, the batch re-emitted)")
    rc = node.stop()
    L.expect(rc == 0, f"{tag}: manager exit status {rc}")

    doc = lab.read_json(export)
    check_counters(L, tag, doc, rules, want)
    got = pcap.read_capture_out(out)
    pcap.compare_frames(got, [frames[i] for i in want["allowed"]], f"{tag}: output capture")
    if fault_at:
        log = node.log()
        L.expect(f"NF 'firewall' (pid {first_pid}, instance 0) died" in log,
                 f"{tag}: the first firewall (pid {first_pid}) did not die")
        L.expect(re.search(rf"freed ACL context fw1\.\d+\.{first_pid} ", log),
                 f"{tag}: the promoted firewall did not free the dead one's ACL context "
                 f"(pid {first_pid})")
    return doc


def check_counters(L, tag, doc, rules, want):
    L.expect(doc["classifier"] == "rte_acl", f"{tag}: classifier {doc['classifier']}")
    L.expect(len(doc["rules"]) == len(rules["rules"]),
             f"{tag}: {len(doc['rules'])} rules exported, {len(rules['rules'])} configured")
    for k, (r, w) in enumerate(zip(rules["rules"], want["rules"])):
        e = doc["rules"][k]
        L.expect(e["index"] == k and e["name"] == r["name"] and e["action"] == r["action"],
                 f"{tag}: rule {k} exported as {e}")
        L.expect([e["packets"], e["bytes"]] == w,
                 f"{tag}: rule {k} ({r['name']}): packets/bytes {[e['packets'], e['bytes']]}, "
                 f"tshark says {w}")
    for key in ("default", "non_ip", "malformed"):
        L.expect([doc[key]["packets"], doc[key]["bytes"]] == want[key],
                 f"{tag}: {key}: {[doc[key]['packets'], doc[key]['bytes']]}, want {want[key]}")
    for r in REASONS:
        L.expect(doc["malformed"]["reasons"].get(r) == want["reasons"][r],
                 f"{tag}: malformed {r} = {doc['malformed']['reasons'].get(r)}, "
                 f"want {want['reasons'][r]}")
    allowed = len(want["allowed"])
    L.expect(doc["allowed"]["packets"] == allowed,
             f"{tag}: allowed {doc['allowed']['packets']}, want {allowed}")
    L.expect(doc["packets"] == sum(w[0] for w in want["rules"]) + sum(
        want[k][0] for k in ("default", "non_ip", "malformed")), f"{tag}: total {doc['packets']}")


def test(L):
    if shutil.which("tshark") is None:
        raise lab.TestSkip("tshark is not installed")
    for name, rules in CASES.items():
        run_case(L, name.rsplit(".", 1)[0], traces.trace(name), rules)

    frames = synthetic()
    path = L.path("synthetic.pcap")
    pcap.write_pcap(path, [f for f, _ in frames])
    _, kinds = expectation(path, [f for f, _ in frames], SYNTH_RULES)
    labels = [label for _, label in frames]
    bad = [(i, k, lab_) for i, (k, lab_) in enumerate(zip(kinds, labels)) if k != lab_]
    lab.check(not bad, f"the tshark oracle disagrees with how frames were built: {bad}")
    run_case(L, "synthetic", path, SYNTH_RULES)

    seed = int(os.environ.get("ONVM_TEST_SEED", random.randrange(1 << 32)))
    path = traces.trace("tor.pcap")
    n = len(pcap.read_pcap(path))
    at = random.Random(seed).randrange(n // 3, 2 * n // 3)
    print(f"failover: seed {seed}: the active firewall dies after {at} of {n} packets")
    run_case(L, "tor-failover", path, CASES["tor.pcap"], fault_at=at)


if __name__ == "__main__":
    lab.run("nf_firewall", test)
