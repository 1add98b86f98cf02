#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 REINFORCE-NFV authors
"""A resilient NF killed at each fault point of a batch: the standby's state
equals exactly the packets that left, nothing leaves twice, no mbuf leaks.

For each point of libnf's batch end -- processed (state not committed),
mid_commit (commit point passed, replica half-written), committed (nothing
emitted yet), mid_emit (half the batch emitted) -- quic.pcap goes through
test_nf -S (packet/byte totals in a state region) with "resiliency": "local"
and -F POINT:200 (SIGKILL at that point of the batch holding packet 200).
Asserted per point:
  - one failover; the output is an in-order subsequence of the input;
  - the promoted NF's totals (exported on exit) equal the frames and bytes
    that left the port: its state reflects exactly what the dead NF emitted;
  - the frames missing are exactly those the promotion dropped: the held
    batch when its state had not committed (processed), none otherwise (its
    outputs are re-emitted: mid_commit, committed, mid_emit);
  - the pool returns to its idle level; the manager exits 0.
Each point is run twice: SIGKILLed (the kernel wakes the standby once the
process is gone) and crashing of its own bug, a write through NULL (libnf's
signal handler fences the process and wakes the standby at once, then the
process dies of SIGSEGV; the slot counts one crash hand-over).  Three more
runs crash with abort(), a bus error and a division by zero at one point each.
With a sanitizer build the sanitizer's own SEGV/BUS/FPE handlers stay and
those crashes take the kernel's path: the hand-over is then not expected.
A last run hangs the NF instead (test_nf -H 200: an endless handler): the
manager's heartbeat check (nf_defaults.heartbeat_ms) kills it, and the same
holds as for "processed" (the hung batch never committed), plus one hung kill
counted.
"""
import os

from onvm import lab, pcap, traces

POINTS = ["processed", "mid_commit", "committed", "mid_emit"]
SIGNALS = {"segv": 11, "bus": 7, "fpe": 8, "abort": 6}
# A sanitizer installs its own handlers for these (ASan: SEGV, BUS, FPE).
SANITIZED = os.environ.get("ONVM_SANITIZE", "none") not in ("", "none")


def run_point(L, point, path, frames, death="kill"):
    out, tot = L.path(f"{point}-{death}-out.pcap"), L.path(f"{point}-{death}-totals.json")
    fault = ["-H", "200"] if point == "hung" else ["-F", f"{point}:200", "-K", death]
    node = L.node(f"fault-{point}-{death}", {
        "nf_defaults": {"heartbeat_ms": 300},
        "ports": [{"name": "in", "dev": f"net_pcap0,rx_pcap={path},tx_pcap={out}"}],
        "nfs": [{"binary": lab.TEST_NF, "service": 1, "resiliency": "local",
                 "args": ["-S", *fault, "-e", tot]}],
        "chains": [{"name": "c", "services": [1], "ingress_port": "in", "exit_port": "in"}],
    }).start()
    lab.wait_until(lambda: node.nf_by(service=1)[0]["failovers"] == 1, 30, f"{point}: failover")
    lab.wait_until(lambda: (lambda p: p["in_use"] == p["idle_in_use"])(node.pool()), 30,
                   f"{point}: pool back to its idle level")
    nf = node.nf_by(service=1)[0]
    port = node.port("in")
    hung = node.info()["nf_hung"]
    sig = SIGNALS.get(death, 0)
    fast = sig != 0 and (not SANITIZED or death == "abort")
    L.expect(nf["crash_handoffs"] == (1 if fast else 0) and
             (not fast or nf["crash_signal"] == sig),
             f"{point}/{death}: crash hand-overs {nf['crash_handoffs']} (signal "
             f"{nf['crash_signal']}), expected {1 if fast else 0}")
    # Woken by the handler, not by its park's 100 ms time-out (which would
    # promote it all the same, but late).
    L.expect(not fast or 0 <= nf["failover_wake_ns"] - nf["crash_handoff_ns"] < 20_000_000,
             f"{point}/{death}: the standby woke "
             f"{(nf['failover_wake_ns'] - nf['crash_handoff_ns']) / 1e6:.1f} ms after the "
             f"hand-over")
    L.expect(not fast or nf["crash_armed"] & (1 << sig),
             f"{point}/{death}: the promoted NF has not armed its crash hand-over "
             f"({nf['crash_armed']:#x})")
    point_name = point
    point = f"{point}/{death}"
    L.expect(hung == (1 if point_name == "hung" else 0) and nf["hung_kills"] == hung,
             f"{point}: nf_hung {hung}, slot hung_kills {nf['hung_kills']}")
    rc = node.stop()
    L.expect(rc == 0, f"{point}: manager exit status {rc}")
    got = pcap.read_capture_out(out)
    L.expect(pcap.is_subsequence(got, frames), f"{point}: output is not an in-order subsequence")
    L.expect(len(got) == port["tx"], f"{point}: capture {len(got)}, port tx {port['tx']}")
    doc = lab.read_json(tot)
    L.expect(doc["packets"] == len(got) and doc["bytes"] == sum(map(len, got)),
             f"{point}: state says {doc}, {len(got)} frames / {sum(map(len, got))} bytes left")
    dropped, reemitted = nf["failover_dropped"], nf["failover_reemitted"]
    L.expect(len(frames) - len(got) == dropped,
             f"{point}: {len(frames) - len(got)} frames missing, promotion dropped {dropped}")
    if point_name in ("processed", "hung"):
        L.expect(dropped > 0 and reemitted == 0, f"{point}: dropped {dropped}, re-emitted {reemitted}")
    else:
        L.expect(dropped == 0 and reemitted > 0, f"{point}: dropped {dropped}, re-emitted {reemitted}")
    print(f"{point}: re-emitted {reemitted}, dropped {dropped}, reprocessed "
          f"{nf['failover_reprocessed']}, wake->first packet "
          f"{(nf['failover_first_pkt_ns'] - nf['failover_wake_ns']) / 1000:.1f} us")


def test(L):
    path = traces.trace("quic.pcap")
    frames = pcap.read_pcap(path)
    for point in POINTS:
        for death in ("kill", "segv"):
            run_point(L, point, path, frames, death)
    for point, death in (("mid_emit", "abort"), ("processed", "bus"), ("committed", "fpe")):
        run_point(L, point, path, frames, death)
    run_point(L, "hung", path, frames)


if __name__ == "__main__":
    lab.Lab("local_faults").run(test)
