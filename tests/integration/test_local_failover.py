#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 REINFORCE-NFV authors
"""Local resiliency: a crashed NF's hot standby takes over its rings and its
state, three times in a row, and the traffic does not notice beyond the
packets the dead NF held uncommitted.

quic.pcap (518 frames) goes through test_nf -d 3000 (a slow upstream, so the
trace takes about 1.5 s) -> basic_monitor with "resiliency": "local" -> out.  While the
trace flows, the monitor's active process is SIGKILLed three times, at random
points of the trace (a seeded draw, printed; ONVM_TEST_SEED=N repeats a run),
each time once the manager has launched and registered a fresh standby; the
signal lands wherever the monitor happens to be.  Run twice: with every kill
once a fresh standby is parked, and with the second kill landing before the new
standby has parked (it registers late, finds the active dead and takes over).
Asserted:
  - three failovers (slot and node counters), the slot keeps serving with a
    new pid each time, and a standby is back in place after each;
  - the output is an in-order subsequence of the input: no frame twice, none
    reordered; frames missing are exactly the ones the promotions dropped
    (held by a dead NF in a batch whose state had not committed);
  - the last monitor's counters, per flow, equal tshark's counts of the
    OUTPUT capture: its state reflects exactly the packets that left it;
  - every failover reports a first packet after the wake-up (while traffic
    flows), and the pool returns to its idle level; the manager exits 0.
"""
import os
import random
import signal
import time

from onvm import flowtable, lab, pcap, traces


def run(L, case, seed):
    """case "slow_upstream": test_nf -d 3000 -> monitor (the monitor waits
    for work most of the time); "quick_succession": the same, but the second
    kill hits the promoted NF while its own new standby is still starting.
    That window is a standby's start-up, which can end before the promotion
    is counted: there every standby of the monitor stalls 200 ms before it
    parks (fault point parking), and the second kill does not wait for the
    first failover's count -- the promoted NF's pid in the slot shows it."""
    path = traces.trace("quic.pcap")
    frames = pcap.read_pcap(path)
    out, mon = L.path(f"{case}-out.pcap"), L.path(f"{case}-mon.json")
    slow = {"binary": lab.TEST_NF, "service": 1, "args": ["-d", "3000"]}
    monitor_nf = {"binary": "basic_monitor", "service": 2, "resiliency": "local",
                  "args": ["-e", mon, "-p", "0"]}
    node = L.node(case, {
        "ports": [{"name": "in", "dev": f"net_pcap0,rx_pcap={path},tx_pcap={out}"}],
        "nfs": [slow, monitor_nf],
        "chains": [{"name": "c", "services": [1, 2], "ingress_port": "in", "exit_port": "in"}],
    }, env={"ONVM_NF_FAULT": "basic_monitor:parking:200"} if case == "quick_succession"
        else None).start()

    def monitor():
        return node.nf_by(service=2)[0]

    # Three points, at least 100 packets apart (room for a fresh standby to
    # start and park), the last well before the end of the 518-frame trace.
    rng = random.Random(seed)
    points = [60 + a + 100 * i for i, a in enumerate(sorted(rng.sample(range(200), 3)))]
    print(f"{case}, seed {seed}: kills after {points} packets")
    pids = []
    for k, at in enumerate(points):
        if case == "quick_succession" and k == 1:
            # The promoted NF dies before its own standby has even parked.
            m = lab.wait_until(lambda: (lambda m: m if m["pid"] not in pids and
                                        m["standby_pid"] not in (0, m["pid"]) and
                                        not m["standby_parked"] else None)(monitor()),
                               30, "the promoted NF with its fresh standby still starting",
                               interval=0.005)  # the window is a standby's start-up
        else:
            m = lab.wait_until(lambda: (lambda m: m if m["standby_parked"] and m["rx"] >= at
                                        else None)(monitor()),
                               60, f"monitor past {at} packets with a parked standby")
            # Anywhere in the next 3 ms (the upstream releases a packet every 3).
            time.sleep(rng.uniform(0, 0.003))
        pids.append(m["pid"])
        os.kill(m["pid"], signal.SIGKILL)  # an NF of our own manager (/onvm/nfs)
        if case == "quick_succession" and k == 0:
            continue  # the next kill waits for the promoted NF itself
        lab.wait_until(lambda: monitor()["failovers"] == k + 1, 30, f"failover {k + 1}")
    port = node.wait_port("in", "tx", 1)
    lab.wait_until(lambda: (lambda p: p["in_use"] == p["idle_in_use"])(node.pool()), 60,
                   "pool back to its idle level (trace done)")
    m = monitor()
    info = node.info()
    L.expect(m["failovers"] == 3 and info["nf_failovers"] == 3,
             f"failovers: slot {m['failovers']}, node {info['nf_failovers']}")
    L.expect(m["pid"] not in pids and len(set(pids)) == 3, f"pids {pids}, now {m['pid']}")
    L.expect(m["failover_first_pkt_ns"] >= m["failover_wake_ns"] > 0,
             f"no packet handled after the last promotion: {m}")
    print(f"last failover: wake -> first packet {(m['failover_first_pkt_ns'] - m['failover_wake_ns']) / 1000:.1f} us; "
          f"re-emitted {m['failover_reemitted']}, dropped {m['failover_dropped']}, "
          f"reprocessed {m['failover_reprocessed']}")
    lab.wait_until(lambda: monitor()["standby_pid"] != 0, 30, "a standby after the last failover")
    port = node.port("in")
    rc = node.stop()
    L.expect(rc == 0, f"manager exit status {rc}")

    got = pcap.read_capture_out(out)
    lab.check(pcap.is_subsequence(got, frames),
              "the output is not an in-order subsequence of the input (duplicate or reordered frame)")
    L.expect(len(got) == port["tx"], f"capture has {len(got)} frames, port sent {port['tx']}")
    L.expect(len(frames) - len(got) == m["failover_dropped"],
             f"{len(frames) - len(got)} frames missing, promotions dropped {m['failover_dropped']}")
    _, want_flows, want_non_ip = flowtable.tshark_flows(out)
    doc = lab.read_json(mon)
    diff = flowtable.diff_flows(flowtable.monitor_flows(doc), want_flows)
    L.expect(not diff, "monitor state after 3 failovers differs from what left it:\n    " +
             "\n    ".join(diff))
    L.expect(doc["packets"] == len(got), f"monitor packets {doc['packets']}, left {len(got)}")


def test(L):
    seed = int(os.environ.get("ONVM_TEST_SEED", random.randrange(1 << 32)))
    for case in ("slow_upstream", "quick_succession"):
        run(L, case, seed)


if __name__ == "__main__":
    lab.Lab("local_failover").run(test)
