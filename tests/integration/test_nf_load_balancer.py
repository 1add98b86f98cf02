#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 REINFORCE-NFV authors
"""load_balancer keeps every flow on its backend across a failover.

Input: the twelve traces of shared/traces interleaved into one capture (each
trace spread evenly over the whole run, so flows of every trace are alive
at once: ~3300 frames, ~250 directional flows, jumbo frames that net_pcap
chains over several mbufs).  Chain: test_nf -d 300 (a slow upstream: the
balancer sees small batches) -> load_balancer in transparent mode (every
IPv4 flow balanced over four backends) with "resiliency": "local" -> out.

The balancer's first incarnation is killed by ONVM_NF_FAULT at a seeded
random packet index in the middle third of the trace (printed; ONVM_TEST_SEED=N
repeats a run), once at the "committed" point of its batch and once at
"mid_emit" (two runs); the standby takes over.  Asserted from the OUTPUT
capture, frame by frame against the input:
  - frames: exactly the input minus what the balancer drops by design (IPv4
    that does not parse: none in these traces), in order; non-IPv4 frames
    unchanged; every IPv4 frame rewritten only in its destination MAC,
    destination address and checksums, which verify (independent sums);
  - every flow (directional 5-tuple of the input) went to exactly one
    backend over the whole run, with that backend's MAC -- including the
    flows that had packets both before and after the failover, of which
    there must be many (else the run proves nothing);
  - one failover (slot and node counters), nothing dropped by it;
  - ND marks only on first packets: the NF's nd_events, the port's tx_nd and
    the export's new_flows all equal the number of distinct flows;
  - the export of the promoted balancer lists exactly the capture's flows,
    each with the backend and the packet count seen in the capture.
A last check compares the two runs: most flows got different backends in
them, so a balancer that lost its table (and drew again) could not pass.

Negative control (a non-resilient balancer killed the same way) is not run:
onvm_mgr does not relaunch an NF with "resiliency": "none" (it reclaims the
slot, see docs/operator-guide.md and test_nf_kill.py), so there is nothing
that could re-map a flow.
"""
import os
import random
import re
import struct

import lab

TRACES = ["bittorrent.pcap", "skype-conference-call.pcap", "webex.pcap", "tor.pcap",
          "quic.pcap", "ftp.pcap", "ssh.pcap", "smtp.pcap", "http-manipulated.pcap",
          "wireguard.pcap", "mpeg.pcap", "dns.pcap"]
BACKENDS = [(f"198.18.1.{i}", f"02:00:00:00:01:0{i}") for i in range(1, 5)]
MIN_SPANNING = 25  # flows with packets before and after the kill, at the least
DYING_RE = re.compile(r"ONVM_NF_FAULT: dying at (\w+) after (\d+) packets")


# ---- frames, parsed independently of the product (mirrors onvm_pkt_parse's rules) ----

def parse(f):
    """(kind, info): kind is "non_ip", "malformed", "fragment" or "ok"; info has
    l3 (IPv4 header offset), ihl, proto, src, dst, sport, dport."""
    if len(f) < 14:
        return "malformed", None
    etype, off, tags = struct.unpack_from("!H", f, 12)[0], 14, 0
    while etype in (0x8100, 0x88A8) and tags < 2:
        if len(f) < off + 4:
            return "malformed", None
        etype = struct.unpack_from("!H", f, off + 2)[0]
        off, tags = off + 4, tags + 1
    if etype != 0x0800:
        return "non_ip", None
    if len(f) < off + 20 or f[off] >> 4 != 4 or (f[off] & 15) * 4 < 20:
        return "malformed", None
    ihl = (f[off] & 15) * 4
    tot = struct.unpack_from("!H", f, off + 2)[0]
    if len(f) < off + ihl or tot < ihl or off + tot > len(f):
        return "malformed", None
    frag = struct.unpack_from("!H", f, off + 6)[0]
    info = {"l3": off, "ihl": ihl, "tot": tot, "proto": f[off + 9],
            "src": f[off + 12:off + 16], "dst": f[off + 16:off + 20], "sport": 0, "dport": 0}
    if frag & 0x1FFF:
        return "fragment", info
    l4 = off + ihl
    if info["proto"] == 6:
        if l4 + 20 > off + tot or (f[l4 + 12] >> 4) * 4 < 20 or l4 + (f[l4 + 12] >> 4) * 4 > off + tot:
            return "malformed", None
    elif info["proto"] == 17:
        if l4 + 8 > off + tot:
            return "malformed", None
        ulen = struct.unpack_from("!H", f, l4 + 4)[0]
        if ulen < 8 or (not frag & 0x2000 and ulen > tot - ihl):
            return "malformed", None
    if info["proto"] in (6, 17):
        info["sport"], info["dport"] = struct.unpack_from("!HH", f, l4)
    return ("fragment" if frag & 0x2000 else "ok"), info


def key(info):
    return (ip_str(info["src"]), ip_str(info["dst"]), info["proto"], info["sport"], info["dport"])


def ip_str(b):
    return ".".join(str(x) for x in b)


def csum(data):
    if len(data) % 2:
        data += b"\0"
    s = sum(struct.unpack(f"!{len(data) // 2}H", data))
    while s >> 16:
        s = (s & 0xFFFF) + (s >> 16)
    return s


def checksums_ok(f, info):
    l3, ihl, tot = info["l3"], info["ihl"], info["tot"]
    if csum(f[l3:l3 + ihl]) != 0xFFFF:
        return False
    if info["proto"] not in (6, 17):
        return True
    seg = f[l3 + ihl:l3 + tot]
    if info["proto"] == 17 and seg[6:8] == b"\0\0":
        return True
    pseudo = f[l3 + 12:l3 + 20] + struct.pack("!BBH", 0, info["proto"], tot - ihl)
    return csum(pseudo + seg) == 0xFFFF


def mix(paths):
    """The traces interleaved: frame i of a trace of n frames sits at (i + 0.5) / n."""
    placed = []
    for t, p in enumerate(paths):
        frames = lab.read_pcap(p)
        placed += [((i + 0.5) / len(frames), t, i, fr) for i, fr in enumerate(frames)]
    placed.sort(key=lambda x: x[:3])
    return [x[3] for x in placed]


def mac_bytes(s):
    return bytes(int(x, 16) for x in s.split(":"))


# ---- one run --------------------------------------------------------------------------

def run(L, point, at, path, frames):
    out, exp = L.path(f"{point}-out.pcap"), L.path(f"{point}-lb.json")
    conf = L.path(f"{point}-lb-config.json")
    with open(conf, "w") as f:
        f.write('{"backends": [\n' +
                ",\n".join(f'  {{"ip": "{ip}", "mac": "{mac}"}}' for ip, mac in BACKENDS) +
                '],\n "idle_timeout_ms": 3600000, "flows": 16384}\n')
    node = L.node(f"lb-{point}", {
        "ports": [{"name": "in", "dev": f"net_pcap0,rx_pcap={path},tx_pcap={out}"}],
        "nfs": [{"binary": lab.TEST_NF, "service": 1, "args": ["-d", "300"]},
                {"binary": "load_balancer", "service": 2, "resiliency": "local",
                 "args": ["-c", conf, "-e", exp, "-p", "0"]}],
        "chains": [{"name": "c", "services": [1, 2], "ingress_port": "in", "exit_port": "in"}],
    }, env={"ONVM_NF_FAULT": f"load_balancer:{point}:{at}"}).start()

    def lb_nf():
        return node.nf_by(service=2)[0]

    lab.wait_until(lambda: lb_nf()["failovers"] == 1, 120, f"{point}: the failover")
    lab.wait_until(lambda: (lambda p: p["in_use"] == p["idle_in_use"])(node.pool()), 120,
                   f"{point}: pool back to its idle level (trace done)")
    nf, port, info = lb_nf(), node.port("in"), node.info()
    m = DYING_RE.search(node.log())
    lab.check(m is not None and m.group(1) == point, f"{point}: no 'dying at {point}' in the log")
    died_after = int(m.group(2))
    lab.wait_until(lambda: lb_nf()["standby_pid"] != 0, 30, f"{point}: a fresh standby")
    rc = node.stop()
    L.expect(rc == 0, f"{point}: manager exit status {rc}")
    print(f"{point}: killed after {died_after} packets (asked {at}); re-emitted "
          f"{nf['failover_reemitted']}, dropped {nf['failover_dropped']}, reprocessed "
          f"{nf['failover_reprocessed']}")
    L.expect(nf["failovers"] == 1 and info["nf_failovers"] == 1,
             f"{point}: failovers slot {nf['failovers']}, node {info['nf_failovers']}")
    L.expect(nf["failover_dropped"] == 0, f"{point}: the failover dropped {nf['failover_dropped']}")
    L.expect(nf["bad_touches"] == 0, f"{point}: {nf['bad_touches']} touches outside the regions")

    # Frame by frame: output j is the j-th input frame the balancer forwards.
    got = lab.read_capture_out(out)
    kinds = [parse(f) for f in frames]
    fwd = [i for i, (k, _) in enumerate(kinds) if k in ("ok", "non_ip")]
    dropped = len(frames) - len(fwd)
    L.expect(len(got) == len(fwd), f"{point}: {len(got)} frames out, want {len(fwd)} "
                                   f"({len(frames)} in, {dropped} dropped by design)")
    L.expect(port["tx"] == len(got), f"{point}: port tx {port['tx']}, capture {len(got)}")
    backend_of, packets, side = {}, {}, {}
    by_ip = {ip: (n, mac_bytes(mac)) for n, (ip, mac) in enumerate(BACKENDS)}
    bad_csum = 0
    for j, (g, i) in enumerate(zip(got, fwd)):
        f, (kind, inf) = frames[i], kinds[i]
        truncated = isinstance(g, lab.TruncatedFrame)
        g = bytes(g)
        if kind == "non_ip":
            lab.check(g == f[:len(g)] and (truncated or len(g) == len(f)),
                      f"{point}: output {j} (input {i}, not IPv4) changed")
            continue
        l3 = inf["l3"]
        dst = ip_str(g[l3 + 16:l3 + 20])
        lab.check(dst in by_ip, f"{point}: output {j} (input {i}) goes to {dst}, no backend")
        b, mac = by_ip[dst]
        lab.check(g[:6] == mac, f"{point}: output {j} to {dst} with MAC {g[:6].hex()}")
        # Nothing but the destination MAC, address and checksums changed.
        want = bytearray(f)
        want[0:6] = mac
        want[l3 + 16:l3 + 20] = g[l3 + 16:l3 + 20]
        want[l3 + 10:l3 + 12] = g[l3 + 10:l3 + 12]
        c = {6: 16, 17: 6}.get(inf["proto"])
        if c is not None:
            want[l3 + inf["ihl"] + c:l3 + inf["ihl"] + c + 2] = \
                g[l3 + inf["ihl"] + c:l3 + inf["ihl"] + c + 2]
        lab.check(g == bytes(want[:len(g)]) and (truncated or len(g) == len(f)),
                  f"{point}: output {j} (input {i}) differs beyond the rewritten fields")
        if not truncated and not checksums_ok(g, inf):
            bad_csum += 1
        k = key(inf)
        if backend_of.setdefault(k, b) != b:
            raise lab.TestFailure(f"{point}: flow {k} went to backend {backend_of[k]} and to {b} "
                                  f"(output {j}, input {i}, kill after {died_after})")
        packets[k] = packets.get(k, 0) + 1
        side.setdefault(k, set()).add(i < died_after)
    L.expect(bad_csum == 0, f"{point}: {bad_csum} rewritten frames with a bad checksum")
    spanning = sum(1 for s in side.values() if len(s) == 2)
    print(f"{point}: {len(backend_of)} flows, each on one backend; {spanning} of them with "
          f"packets before and after the failover")
    L.expect(spanning >= MIN_SPANNING,
             f"{point}: only {spanning} flows span the failover (want >= {MIN_SPANNING})")

    # ND marks: one per new flow, nowhere else.
    n_flows = len(backend_of)
    L.expect(nf["nd_events"] == n_flows, f"{point}: nd_events {nf['nd_events']}, flows {n_flows}")
    L.expect(port["tx_nd"] == n_flows, f"{point}: tx_nd {port['tx_nd']}, flows {n_flows}")

    # The promoted balancer's export agrees with the capture.
    doc = lab.read_json(exp)
    exported = {}
    for fl in doc["flows"]:
        k = (fl["src"], fl["dst"], fl["proto"], fl["sport"], fl["dport"])
        lab.check(k not in exported, f"{point}: flow {k} exported twice")
        exported[k] = (by_ip.get(fl["backend_ip"], (None,))[0], fl["packets"])
    seen = {k: (backend_of[k], packets[k]) for k in backend_of}
    diff = lab.diff_flows(exported, seen)
    L.expect(not diff, f"{point}: export vs capture:\n    " + "\n    ".join(diff))
    L.expect(doc["new_flows"] == n_flows and doc["balanced"] == sum(packets.values()) and
             doc["packets"] == len(frames) and doc["table_full"] == 0 and
             doc["non_ip"] == sum(1 for k, _ in kinds if k == "non_ip"),
             f"{point}: export counters {({k: doc[k] for k in ('packets', 'balanced', 'new_flows', 'non_ip', 'table_full')})}")
    return backend_of


def test(L):
    seed = int(os.environ.get("ONVM_TEST_SEED", random.randrange(1 << 32)))
    rng = random.Random(seed)
    frames = mix([lab.trace(t) for t in TRACES])
    path = L.path("mixed.pcap")
    lab.write_pcap(path, frames)
    points = [("committed", rng.randrange(len(frames) // 3, 2 * len(frames) // 3)),
              ("mid_emit", rng.randrange(len(frames) // 3, 2 * len(frames) // 3))]
    print(f"seed {seed} (ONVM_TEST_SEED={seed} repeats): {len(frames)} frames, kills at "
          f"{points}")
    runs = [run(L, point, at, path, frames) for point, at in points]
    common = set(runs[0]) & set(runs[1])
    differ = sum(1 for k in common if runs[0][k] != runs[1][k])
    print(f"{differ} of {len(common)} flows got different backends in the two runs")
    L.expect(len(common) > 0 and differ >= len(common) // 2,
             f"only {differ} of {len(common)} flows differ between two runs: the draws are "
             f"not random enough for the mapping checks to mean anything")


if __name__ == "__main__":
    lab.Lab("nf_load_balancer").run(test)
