#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 REINFORCE-NFV authors
"""The NF start -> register -> run -> stop handshake, for launched and
hand-started NFs.

One node, chain [1, 5] from a net_pcap port (smtp.pcap) back to it.  Service
1 is a launched simple_forward; service 5 is a simple_forward the test starts
by hand.  A launched "gate" NF (service 9, see Lab.gate_nf) keeps the ports
from starting until the hand-started NF is registered, so the trace cannot
race it.  Asserted:
  - launched NFs report start_to_register_us (sanity bound 2 s; printed);
  - the hand-started NF (--proc-type=secondary --file-prefix=P --lcores=50@0
    -- -r 5) registers: /onvm/nfs lists it with launched=0, its pid, lcore 50;
  - a second hand-started NF with the same --lcores id is refused, and its
    message names the clash (lcore 50, the NF using it); one with the
    manager's own lcore id is refused too; neither appears in /onvm/nfs;
  - traffic: every frame goes through both NFs and comes out unchanged;
  - SIGTERM: the hand-started NF unregisters (manager log), exits 0, its
    slot is freed and reusable by the next NF with the same lcore id, and
    this is not counted as a death;
  - the manager exits 0 on SIGINT and leaves nothing behind.
"""
import re
import signal

from onvm import lab, pcap, traces

HAND_LCORE = 50


def hand_nf(L, node, name, lcore, service):
    return L.spawn(name, [lab.nf_binary("simple_forward"), "--proc-type=secondary",
                          f"--file-prefix={node.prefix}", f"--lcores={lcore}@0", "--",
                          "-r", str(service)])


def wait_registered(node, p, service):
    def found():
        lab.check(p.poll() is None, f"hand-started NF exited with {p.returncode}")
        m = node.nf_by(pid=p.pid)
        return m[0] if m and m[0]["service"] == service else None
    return lab.wait_until(found, 30, f"hand-started NF pid {p.pid} in /onvm/nfs",
                          alive=node.assert_running)


def expect_refused(L, node, name, lcore, service, reason_re):
    p = hand_nf(L, node, name, lcore, service)
    try:
        rc = p.wait(30)
    except Exception:
        raise lab.TestFailure(f"{name}: still running 30 s after start (not refused)")
    out = L.proc_log(p)
    L.expect(rc != 0, f"{name}: exit status {rc}, want non-zero")
    L.expect(re.search(r"refused registration: " + reason_re, out),
             f"{name}: its output does not say /{reason_re}/:\n{out[-600:]}")
    L.expect(re.search(rf"refused NF '[^']*' pid {p.pid}: " + reason_re, node.log()),
             f"{name}: the manager log does not say /{reason_re}/")
    L.expect(not node.nf_by(service=service), f"{name}: service {service} appears in /onvm/nfs")
    m = re.search(reason_re, out)
    print(f"{name}: refused: {m.group(0) if m else '?'}")


def main(L):
    trace = traces.trace("smtp.pcap")
    frames = pcap.read_pcap(trace)
    out = L.path("out.pcap")
    gate_bin, gate = L.gate_nf("gate", lab.nf_binary("simple_forward"))
    node = L.node("handshake", {
        "nf_defaults": {"start_timeout_ms": 60000},
        "ports": [{"name": "in", "dev": f"net_pcap0,rx_pcap={trace},tx_pcap={out}"}],
        "nfs": [{"name": "fwd1", "binary": "simple_forward", "service": 1},
                {"name": "gate", "binary": gate_bin, "service": 9}],
        "chains": [{"name": "main", "services": [1, 5], "ingress_port": "in",
                    "exit_port": "in"}],
    }).start(wait=False)
    node.wait_telemetry()
    lab.wait_until(lambda: [n for n in node.nf_by(name="fwd1")
                            if n["status"] in ("ready", "running")], 30,
                   "fwd1 registered", alive=node.assert_running)

    hand = hand_nf(L, node, "hand-nf", HAND_LCORE, 5)
    nf = wait_registered(node, hand, 5)
    inst = nf["instance"]
    L.expect(nf["launched"] == 0, f"hand-started NF has launched={nf['launched']}")
    L.expect(nf["lcore"] == HAND_LCORE, f"hand-started NF has lcore {nf['lcore']}")
    L.expect(nf["name"] == "simple_forward", f"hand-started NF is named {nf['name']!r}")
    L.expect("start_to_register_us" not in nf, "a hand-started NF reports start_to_register_us")
    print(f"hand-started NF pid {hand.pid}: instance {inst}, status {nf['status']}")

    expect_refused(L, node, "hand-nf-clash", HAND_LCORE, 6,
                   rf"lcore id {HAND_LCORE} is used by NF 'simple_forward' \(instance {inst}\)")
    expect_refused(L, node, "hand-nf-mgr-lcore", 0, 7, r"lcore id 0 is one of the manager's")

    L.open_gate(gate)
    node.wait_ready()
    port = node.wait_port("in", "tx", len(frames))
    L.expect(port["rx"] == len(frames) and port["tx"] == len(frames),
             f"port rx {port['rx']} tx {port['tx']}, want {len(frames)}")
    drops = {k: v for k, v in node.drops().items() if v}
    L.expect(not drops, f"drops {drops}")
    nfs = node.nfs()
    for n in nfs.values():
        if n["service"] in (1, 5):
            L.expect(n["rx"] == len(frames) and n["tx"] == len(frames) and n["status"] == "running",
                     f"NF {n['name']} (service {n['service']}) {n['status']} rx {n['rx']} "
                     f"tx {n['tx']}, want {len(frames)}")
        if n["launched"]:
            us = n.get("start_to_register_us")
            print(f"launched NF {n['name']}: start_to_register_us {us}, "
                  f"start_to_first_pkt_us {n.get('start_to_first_pkt_us')}")
            L.expect(us is not None, f"launched NF {n['name']} has no start_to_register_us")
            if n["name"] != "gate":  # the gate waited for the test on purpose
                L.expect(us is not None and us < 2000000,
                         f"NF {n['name']} took {us} us to register (sanity bound 2 s)")

    hand.send_signal(signal.SIGTERM)
    try:
        rc = hand.wait(30)
    except Exception:
        raise lab.TestFailure("the hand-started NF did not exit 30 s after SIGTERM")
    L.expect(rc == 0, f"hand-started NF exit status {rc} after SIGTERM")
    lab.wait_until(lambda: str(inst) not in node.nfs(), 10, f"slot {inst} to be freed",
                   alive=node.assert_running)
    L.expect(f"NF 'simple_forward' instance {inst} unregistered" in node.log(),
             "the manager did not log the unregistration")
    L.expect(node.info()["nf_deaths"] == 0, "a clean stop was counted as an NF death")

    again = hand_nf(L, node, "hand-nf-again", HAND_LCORE, 5)
    nf2 = wait_registered(node, again, 5)
    print(f"a new NF with lcore {HAND_LCORE} registered as instance {nf2['instance']}")
    again.send_signal(signal.SIGTERM)
    L.expect(again.wait(30) == 0, "second hand-started NF did not exit 0")
    lab.wait_until(lambda: not node.nf_by(service=5), 10, "service 5 to have no instance")

    rc = node.stop()
    L.expect(rc == 0, f"manager exit status {rc}")
    L.expect(not node.leftover_nfs, f"NFs still alive after the manager: {node.leftover_nfs}")
    L.expect(not node.runtime_leftovers(), f"runtime files left: {node.runtime_leftovers()}")
    pcap.compare_frames(pcap.read_capture_out(out), frames, "output capture")


if __name__ == "__main__":
    lab.run("handshake", main)
