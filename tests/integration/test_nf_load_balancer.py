#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 REINFORCE-NFV authors
"""load_balancer keeps every flow on its backend across a failover.

Input: the twelve traces of traces/ interleaved into one capture (each
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
The two runs are then compared: most flows got different backends in them,
so a balancer that lost its table (and drew again) could not pass.

A third run covers VIP mode with a trace made here (60 clients to the VIP,
TCP and UDP; three packets each, then two more and one "reply" from each of
the four backends per flow), killed at "committed" at a seeded index in the
middle: every flow on one backend; of the replies exactly the one from the
flow's own backend leaves with the VIP as source (checksums verified), the
others pass unchanged -- also for flows balanced before the failover and
replied to after it; ND marks == flows; export == capture.

Negative control (a non-resilient balancer killed the same way) is not run:
onvm_mgr does not relaunch an NF with "resiliency": "none" (it reclaims the
slot, see docs/operator-guide.md and test_nf_kill.py), so there is nothing
that could re-map a flow.
"""
import os
import random
import struct

from onvm import flowtable, lab, pcap, traces
from onvm.balancer import (BACKENDS, BY_IP, checksums_ok, csum, failover_run, ip_str, key,
                           mac_bytes, parse, rewritten, run_transparent, write_config)


# A VIP-mode trace, made here: CLIENTS flows to the VIP (TCP and UDP); first
# three packets of every flow, then, interleaved, two more and one reply from
# each backend (only the flow's own backend's reply may be rewritten).
VIP = "198.18.0.100"
CLIENTS = 60


def ip_frame(src, dst, proto, sport, dport, payload):
    l4len = (20 if proto == 6 else 8) + len(payload)
    ip = bytearray(struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + l4len, 1, 0, 64, proto, 0,
                               bytes(map(int, src.split("."))), bytes(map(int, dst.split(".")))))
    ip[10:12] = struct.pack("!H", 0xFFFF - csum(bytes(ip)))
    if proto == 6:
        l4 = bytearray(struct.pack("!HHIIBBHHH", sport, dport, 1, 0, 0x50, 0x18, 512, 0, 0))
        c = 16
    else:
        l4 = bytearray(struct.pack("!HHHH", sport, dport, l4len, 0))
        c = 6
    l4 += payload
    pseudo = bytes(ip[12:20]) + struct.pack("!BBH", 0, proto, l4len)
    v = 0xFFFF - csum(pseudo + bytes(l4))
    l4[c:c + 2] = struct.pack("!H", v or 0xFFFF)
    return mac_bytes("02:00:00:00:00:1b") + mac_bytes("02:00:00:00:00:0c") + b"\x08\x00" + \
        bytes(ip) + bytes(l4)


def vip_trace():
    flows = [(f"198.19.{1 + n // 200}.{1 + n % 200}", 6 if n % 2 else 17, 30000 + n,
              80 if n % 2 else 53) for n in range(CLIENTS)]
    frames = []
    for r in range(3):
        frames += [ip_frame(c, VIP, p, sp, dp, bytes([r]) * 40) for c, p, sp, dp in flows]
    for r in range(len(BACKENDS) + 2):
        for c, p, sp, dp in flows:
            if r < len(BACKENDS):
                frames.append(ip_frame(BACKENDS[r][0], c, p, dp, sp, bytes([r]) * 70))
            else:
                frames.append(ip_frame(c, VIP, p, sp, dp, bytes([r]) * 40))
    return frames


def run_vip(L, at):
    tag = "vip-committed"
    frames = vip_trace()
    path, conf = L.path("vip.pcap"), L.path(f"{tag}.json")
    pcap.write_pcap(path, frames)
    write_config(conf, VIP)
    nf, port, died_after, got, doc = failover_run(L, tag, "committed", at, path, conf)
    L.expect(len(got) == len(frames), f"{tag}: {len(got)} frames out, want {len(frames)}")
    backend_of, replied, side = {}, {}, {}
    for j, (g, f) in enumerate(zip(got, frames)):
        kind, inf = parse(f)
        g = bytes(g)
        l3 = inf["l3"]
        src, dst = ip_str(inf["src"]), ip_str(inf["dst"])
        lab.check(len(g) == len(f), f"{tag}: output {j} changed length")
        if dst == VIP:
            k = key(inf)
            b, mac = BY_IP.get(ip_str(g[l3 + 16:l3 + 20]), (None, None))
            lab.check(b is not None and g[:6] == mac and
                      rewritten(f, inf, g, [(0, 6), (l3 + 16, l3 + 20)]) and
                      checksums_ok(g, inf), f"{tag}: output {j} (to the VIP) not balanced right")
            if backend_of.setdefault(k, b) != b:
                raise lab.TestFailure(f"{tag}: flow {k} went to backend {backend_of[k]} and "
                                      f"to {b} (frame {j}, kill after {died_after})")
        else:
            # A reply: the flow is (client, VIP, client port, VIP port).
            k = (dst, VIP, inf["proto"], inf["dport"], inf["sport"])
            mine = BY_IP[src][0] == backend_of.get(k)
            if mine:
                lab.check(ip_str(g[l3 + 12:l3 + 16]) == VIP and
                          rewritten(f, inf, g, [(l3 + 12, l3 + 16)]) and checksums_ok(g, inf),
                          f"{tag}: output {j}: the reply of {k} from its backend {src} "
                          f"does not come from the VIP")
                replied[k] = replied.get(k, 0) + 1
            else:
                lab.check(g == f, f"{tag}: output {j}: a reply of {k} from {src}, not its "
                                  f"backend, was changed")
        side.setdefault(k, set()).add(j < died_after)
    spanning = sum(1 for s in side.values() if len(s) == 2)
    print(f"{tag}: {len(backend_of)} flows, {len(replied)} replied to from their backend; "
          f"{spanning} with packets before and after the failover")
    L.expect(len(backend_of) == CLIENTS and len(replied) == CLIENTS and
             all(v == 1 for v in replied.values()),
             f"{tag}: {len(backend_of)} flows balanced, {len(replied)} replies rewritten")
    L.expect(spanning >= CLIENTS // 2, f"{tag}: only {spanning} flows span the failover")
    L.expect(nf["nd_events"] == CLIENTS and port["tx_nd"] == CLIENTS,
             f"{tag}: nd_events {nf['nd_events']}, tx_nd {port['tx_nd']}, flows {CLIENTS}")
    exported = {(fl["src"], fl["dst"], fl["proto"], fl["sport"], fl["dport"]):
                (BY_IP[fl["backend_ip"]][0], fl["packets"], fl["replies"]) for fl in doc["flows"]}
    seen = {k: (b, 5, 1) for k, b in backend_of.items()}
    diff = flowtable.diff_flows(exported, seen)
    L.expect(not diff, f"{tag}: export vs capture:\n    " + "\n    ".join(diff))
    counters = {k: doc[k] for k in ("replies", "unmatched_from_backend", "passed", "new_flows")}
    L.expect(counters == {"replies": CLIENTS, "unmatched_from_backend":
                          CLIENTS * (len(BACKENDS) - 1), "passed": 0, "new_flows": CLIENTS},
             f"{tag}: export counters {counters}")


def test(L):
    seed = int(os.environ.get("ONVM_TEST_SEED", random.randrange(1 << 32)))
    rng = random.Random(seed)
    frames = traces.mix([traces.trace(t) for t in traces.ALL])
    path = L.path("mixed.pcap")
    pcap.write_pcap(path, frames)
    points = [("committed", rng.randrange(len(frames) // 3, 2 * len(frames) // 3)),
              ("mid_emit", rng.randrange(len(frames) // 3, 2 * len(frames) // 3))]
    n_vip = CLIENTS * (3 + len(BACKENDS) + 2)
    vip_at = rng.randrange(n_vip // 3, 2 * n_vip // 3)
    print(f"seed {seed} (ONVM_TEST_SEED={seed} repeats): {len(frames)} frames, kills at "
          f"{points}; VIP run: {n_vip} frames, kill at committed:{vip_at}")
    runs = [run_transparent(L, point, at, path, frames) for point, at in points]
    common = set(runs[0]) & set(runs[1])
    differ = sum(1 for k in common if runs[0][k] != runs[1][k])
    print(f"{differ} of {len(common)} flows got different backends in the two runs")
    L.expect(len(common) > 0 and differ >= len(common) // 2,
             f"only {differ} of {len(common)} flows differ between two runs: the draws are "
             f"not random enough for the mapping checks to mean anything")
    run_vip(L, vip_at)


if __name__ == "__main__":
    lab.Lab("nf_load_balancer").run(test)
