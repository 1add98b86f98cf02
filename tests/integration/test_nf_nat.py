#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 REINFORCE-NFV authors
"""nat keeps every flow's external port across a failover.

Input: the twelve traces of traces/ interleaved into one capture (each
trace spread evenly over the whole run: ~3300 frames; the clients of the
traces sit in private prefixes, ~120 of their TCP/UDP 5-tuples leave through
the NAT).  Chain: test_nf -d 300 (a slow upstream) -> nat with the three
RFC 1918 prefixes as "internal", external address 198.18.0.1, ports
20000..29999, "resiliency": "local" -> out.

The NAT's first incarnation is killed by ONVM_NF_FAULT at a seeded random
packet index in the middle third of the trace (printed; ONVM_TEST_SEED=N
repeats a run), once at the "committed" point of its batch and once at
"mid_emit" (two runs); the standby takes over.  Asserted from the OUTPUT
capture, frame by frame against the input:
  - frames: exactly the input minus what the NAT drops by design (malformed
    IPv4, non-TCP/UDP and fragments from internal sources: none in these
    traces), in order; everything not from an internal source unchanged;
    every translated frame changed only in its source address (198.18.0.1),
    source port (in the range) and checksums, which verify (independent sums);
  - every 5-tuple leaving the NAT left with exactly one external port over
    the whole run, and no two 5-tuples share a port -- including the flows
    with packets both before and after the failover, of which there must be
    many;
  - one failover (slot and node counters), nothing dropped by it;
  - ND marks only on first packets: nd_events, the port's tx_nd and the
    export's new_mappings all equal the number of translated 5-tuples;
  - the promoted NAT's export lists exactly those mappings with the port and
    packet count seen in the capture.
A last check compares the two runs: almost every 5-tuple got a different
port in them, so a NAT that lost its mappings could not pass.

Replies (outside -> external address) do not occur in recorded traces (they
were not NATed); the inbound direction is covered by tests/unit/test_nat.c.
Negative control with "resiliency": "none": not run, onvm_mgr does not
relaunch a non-resilient NF (docs/operator-guide.md, test_nf_kill.py).
"""
import ipaddress
import os
import random
import re
import struct

from onvm import balancer, flowtable, lab, pcap, traces

TRACES = ["bittorrent.pcap", "skype-conference-call.pcap", "webex.pcap", "tor.pcap",
          "quic.pcap", "ftp.pcap", "ssh.pcap", "smtp.pcap", "http-manipulated.pcap",
          "wireguard.pcap", "mpeg.pcap", "dns.pcap"]
INTERNAL = ["10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16"]
EXT_IP, PORT_MIN, PORT_MAX = "198.18.0.1", 20000, 29999
MIN_SPANNING = 15  # translated flows with packets before and after the kill, at the least
DYING_RE = re.compile(r"ONVM_NF_FAULT: dying at (\w+) after (\d+) packets")


# Frames are parsed independently of the product (onvm.balancer's parse:
# the rules of onvm_pkt_parse, and the checksums); traces mixed by onvm.traces.
parse, key, ip_str = balancer.parse, balancer.key, balancer.ip_str
checksums_ok = balancer.checksums_ok
mix = traces.mix
NETS = [ipaddress.ip_network(p) for p in INTERNAL]


def expect(kind, info):
    """What the NAT does with a frame: "translate", "pass" or "drop"."""
    if kind == "non_ip":
        return "pass"
    if kind == "malformed":
        return "drop"
    if ip_str(info["dst"]) == EXT_IP:
        return "drop"  # no reply in these traces: would be unmapped
    if not any(ipaddress.ip_address(ip_str(info["src"])) in n for n in NETS):
        return "pass"
    if info["proto"] not in (6, 17) or kind == "fragment":
        return "drop"
    return "translate"


# ---- one run --------------------------------------------------------------------------

def run(L, point, at, path, frames):
    out, exp = L.path(f"{point}-out.pcap"), L.path(f"{point}-nat.json")
    conf = L.path(f"{point}-nat-config.json")
    with open(conf, "w") as f:
        f.write('{"internal": [' + ", ".join(f'"{p}"' for p in INTERNAL) + '],\n'
                f' "external_ip": "{EXT_IP}", "port_min": {PORT_MIN}, "port_max": {PORT_MAX},\n'
                ' "idle_timeout_ms": 3600000, "flows": 16384}\n')
    node = L.node(f"nat-{point}", {
        "ports": [{"name": "in", "dev": f"net_pcap0,rx_pcap={path},tx_pcap={out}"}],
        "nfs": [{"binary": lab.TEST_NF, "service": 1, "args": ["-d", "300"]},
                {"binary": "nat", "service": 2, "resiliency": "local",
                 "args": ["-c", conf, "-e", exp, "-p", "0"]}],
        "chains": [{"name": "c", "services": [1, 2], "ingress_port": "in", "exit_port": "in"}],
    }, env={"ONVM_NF_FAULT": f"nat:{point}:{at}"}).start()

    def nat_nf():
        return node.nf_by(service=2)[0]

    lab.wait_until(lambda: nat_nf()["failovers"] == 1, 120, f"{point}: the failover")
    lab.wait_until(lambda: (lambda p: p["in_use"] == p["idle_in_use"])(node.pool()), 120,
                   f"{point}: pool back to its idle level (trace done)")
    nf, port, info = nat_nf(), node.port("in"), node.info()
    m = DYING_RE.search(node.log())
    lab.check(m is not None and m.group(1) == point, f"{point}: no 'dying at {point}' in the log")
    died_after = int(m.group(2))
    lab.wait_until(lambda: nat_nf()["standby_pid"] != 0, 30, f"{point}: a fresh standby")
    rc = node.stop()
    L.expect(rc == 0, f"{point}: manager exit status {rc}")
    print(f"{point}: killed after {died_after} packets (asked {at}); re-emitted "
          f"{nf['failover_reemitted']}, dropped {nf['failover_dropped']}, reprocessed "
          f"{nf['failover_reprocessed']}")
    L.expect(nf["failovers"] == 1 and info["nf_failovers"] == 1,
             f"{point}: failovers slot {nf['failovers']}, node {info['nf_failovers']}")
    L.expect(nf["failover_dropped"] == 0, f"{point}: the failover dropped {nf['failover_dropped']}")
    L.expect(nf["bad_touches"] == 0, f"{point}: {nf['bad_touches']} touches outside the regions")

    got = pcap.read_capture_out(out)
    parsed = [parse(f) for f in frames]
    fates = [expect(k, inf) for k, inf in parsed]
    fwd = [i for i, x in enumerate(fates) if x != "drop"]
    L.expect(len(got) == len(fwd), f"{point}: {len(got)} frames out, want {len(fwd)} "
                                   f"({len(frames)} in, {len(frames) - len(fwd)} dropped by design)")
    L.expect(port["tx"] == len(got), f"{point}: port tx {port['tx']}, capture {len(got)}")
    port_of, owner, packets, side = {}, {}, {}, {}
    bad_csum = 0
    ext = bytes(int(x) for x in EXT_IP.split("."))
    for j, (g, i) in enumerate(zip(got, fwd)):
        f, (kind, inf) = frames[i], parsed[i]
        truncated = isinstance(g, pcap.TruncatedFrame)
        g = bytes(g)
        same_len = truncated or len(g) == len(f)
        if fates[i] == "pass":
            lab.check(g == f[:len(g)] and same_len, f"{point}: output {j} (input {i}) changed")
            continue
        l3, l4 = inf["l3"], inf["l3"] + inf["ihl"]
        lab.check(g[l3 + 12:l3 + 16] == ext,
                  f"{point}: output {j} (input {i}) left from {ip_str(g[l3 + 12:l3 + 16])}")
        p = struct.unpack_from("!H", g, l4)[0]
        lab.check(PORT_MIN <= p <= PORT_MAX, f"{point}: output {j} left from port {p}")
        want = bytearray(f)
        want[l3 + 12:l3 + 16] = ext
        want[l4:l4 + 2] = g[l4:l4 + 2]
        want[l3 + 10:l3 + 12] = g[l3 + 10:l3 + 12]
        c = l4 + (16 if inf["proto"] == 6 else 6)
        want[c:c + 2] = g[c:c + 2]
        lab.check(g == bytes(want[:len(g)]) and same_len,
                  f"{point}: output {j} (input {i}) differs beyond the rewritten fields")
        if not truncated and not checksums_ok(g, inf):
            bad_csum += 1
        k = key(inf)
        if port_of.setdefault(k, p) != p:
            raise lab.TestFailure(f"{point}: flow {k} left from port {port_of[k]} and from {p} "
                                  f"(output {j}, input {i}, kill after {died_after})")
        if owner.setdefault(p, k) != k:
            raise lab.TestFailure(f"{point}: port {p} used by {owner[p]} and by {k}")
        packets[k] = packets.get(k, 0) + 1
        side.setdefault(k, set()).add(i < died_after)
    L.expect(bad_csum == 0, f"{point}: {bad_csum} translated frames with a bad checksum")
    spanning = sum(1 for s in side.values() if len(s) == 2)
    print(f"{point}: {len(port_of)} translated 5-tuples, each with one port of its own; "
          f"{spanning} of them with packets before and after the failover")
    L.expect(spanning >= MIN_SPANNING,
             f"{point}: only {spanning} flows span the failover (want >= {MIN_SPANNING})")

    n_maps = len(port_of)
    L.expect(nf["nd_events"] == n_maps, f"{point}: nd_events {nf['nd_events']}, mappings {n_maps}")
    L.expect(port["tx_nd"] == n_maps, f"{point}: tx_nd {port['tx_nd']}, mappings {n_maps}")

    doc = lab.read_json(exp)
    exported = {}
    for mp in doc["mappings"]:
        k = (mp["src"], mp["dst"], mp["proto"], mp["sport"], mp["dport"])
        lab.check(k not in exported, f"{point}: mapping {k} exported twice")
        exported[k] = (mp["external_port"], mp["packets_out"], mp["packets_in"])
    seen = {k: (port_of[k], packets[k], 0) for k in port_of}
    diff = flowtable.diff_flows(exported, seen)
    L.expect(not diff, f"{point}: export vs capture:\n    " + "\n    ".join(diff))
    counters = {k: doc[k] for k in ("packets", "outbound", "new_mappings", "passed", "non_ip",
                                    "untranslatable", "ports_exhausted", "table_full")}
    L.expect(counters == {"packets": len(frames), "outbound": sum(packets.values()),
                          "new_mappings": n_maps,
                          "passed": sum(1 for (k, _), x in zip(parsed, fates)
                                        if x == "pass" and k != "non_ip"),
                          "non_ip": sum(1 for k, _ in parsed if k == "non_ip"),
                          "untranslatable": 0, "ports_exhausted": 0, "table_full": 0},
             f"{point}: export counters {counters}")
    L.expect(doc["free_ports"] == PORT_MAX - PORT_MIN + 1 - n_maps,
             f"{point}: {doc['free_ports']} ports free with {n_maps} mappings")
    return port_of


def test(L):
    seed = int(os.environ.get("ONVM_TEST_SEED", random.randrange(1 << 32)))
    rng = random.Random(seed)
    frames = mix([traces.trace(t) for t in TRACES])
    path = L.path("mixed.pcap")
    pcap.write_pcap(path, frames)
    points = [("committed", rng.randrange(len(frames) // 3, 2 * len(frames) // 3)),
              ("mid_emit", rng.randrange(len(frames) // 3, 2 * len(frames) // 3))]
    print(f"seed {seed} (ONVM_TEST_SEED={seed} repeats): {len(frames)} frames, kills at "
          f"{points}")
    runs = [run(L, point, at, path, frames) for point, at in points]
    common = set(runs[0]) & set(runs[1])
    differ = sum(1 for k in common if runs[0][k] != runs[1][k])
    print(f"{differ} of {len(common)} 5-tuples got different ports in the two runs")
    L.expect(len(common) > 0 and differ >= len(common) * 9 // 10,
             f"only {differ} of {len(common)} 5-tuples differ between two runs: the draws are "
             f"not random enough for the mapping checks to mean anything")


if __name__ == "__main__":
    lab.Lab("nf_nat").run(test)
