#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 REINFORCE-NFV authors
"""An NF SIGKILLed mid-trace: the manager notices, frees its slot, returns
every mbuf it held to the pool, and the other chain never notices.

One node, two chains on two net_pcap ports:
  A: webex.pcap (1110 frames) -> test_nf -d 500 (slow) -> back out of port A
  B: smtp.pcap  (95 frames)   -> simple_forward        -> back out of port B
Once the whole of trace A is queued at test_nf (enqueued == 1110) and it has
handled a few batches, the test SIGKILLs it by the pid /onvm/nfs reports.
Asserted:
  - the manager logs the death, /onvm/nfs no longer lists the slot, and
    /onvm/info counts exactly one NF death;
  - chain B's output is complete and byte-identical, with no drops;
  - port A emitted fewer frames than the trace (the kill was mid-trace), and
    what it emitted is exactly the first tx_A frames of the trace, in order;
  - accounting: tx_A + nf_reclaimed_mbufs == 1110 -- every frame the NF never
    emitted was reclaimed (the batch it held plus its RX ring backlog); the
    backlog part is the nf_gone drop count, so what was held is at most one
    NF batch record (ONVM_NF_HELD_MAX = 64); no other drop reason is non-zero;
  - the pool's in_use returns exactly to idle_in_use;
  - the manager still exits 0 on SIGINT and leaves no runtime files.
"""
import os
import signal

from onvm import lab, pcap, traces

HELD_MAX = 64  # ONVM_NF_HELD_MAX: the most mbufs one NF batch record can hold


def main(L):
    trace_a, trace_b = traces.trace("webex.pcap"), traces.trace("smtp.pcap")
    frames_a, frames_b = pcap.read_pcap(trace_a), pcap.read_pcap(trace_b)
    n_a, n_b = len(frames_a), len(frames_b)
    out_a, out_b = L.path("out-a.pcap"), L.path("out-b.pcap")
    node = L.node("kill", {
        "ports": [{"name": "a", "dev": f"net_pcap0,rx_pcap={trace_a},tx_pcap={out_a}"},
                  {"name": "b", "dev": f"net_pcap1,rx_pcap={trace_b},tx_pcap={out_b}"}],
        "nfs": [{"name": "slow", "binary": "${BUILD}/tests/test_nf", "service": 1,
                 "args": ["-d", "500"]},
                {"binary": "simple_forward", "service": 2}],
        "chains": [{"name": "A", "services": [1], "ingress_port": "a", "exit_port": "a"},
                   {"name": "B", "services": [2], "ingress_port": "b", "exit_port": "b"}],
    }).start()

    slow = node.nf_by(name="slow")
    lab.check(len(slow) == 1, f"/onvm/nfs lists {len(slow)} NFs named 'slow'")
    inst, pid = slow[0]["instance"], slow[0]["pid"]

    def ready_to_kill():
        nf = node.nfs().get(str(inst))
        lab.check(nf is not None, "test_nf vanished before the kill")
        lab.check(nf["tx"] < n_a, f"test_nf already sent all {n_a} frames: too fast to kill "
                                  "mid-trace (machine overloaded?)")
        return nf if nf["enqueued"] == n_a and nf["tx"] >= 64 else None
    before = lab.wait_until(ready_to_kill, 30, "trace A queued at test_nf and 64 frames handled",
                            alive=node.assert_running)
    print(f"killing test_nf pid {pid} (instance {inst}) after rx {before['rx']} tx {before['tx']}")
    os.kill(pid, signal.SIGKILL)

    lab.wait_until(lambda: str(inst) not in node.nfs(), 10, "the dead NF's slot to be freed",
                   alive=node.assert_running)
    port_b = node.wait_port("b", "tx", n_b)
    info = node.info()
    L.expect(info["nf_deaths"] == 1, f"nf_deaths {info['nf_deaths']}, want 1")
    log = node.log()
    L.expect("died without unregistering" in log and f"pid {pid}" in log,
             "the manager did not log the NF's death")
    L.expect("mbufs returned to the pool" in log, "the manager did not log the reclamation")

    pool = lab.wait_until(lambda: (lambda p: p if p["in_use"] == p["idle_in_use"] else None)(
        node.pool()), 10, "pool in_use back to idle_in_use", alive=node.assert_running)
    port_a = node.port("a")
    drops = node.drops()
    info = node.info()
    reclaimed = info["nf_reclaimed_mbufs"]
    tx_a = port_a["tx"]
    print(f"port A tx {tx_a}, reclaimed {reclaimed}, drops "
          f"{ {k: v for k, v in drops.items() if v} }, pool {pool}")
    L.expect(port_a["rx"] == n_a, f"port A rx {port_a['rx']}, want {n_a}")
    L.expect(0 < tx_a < n_a, f"port A tx {tx_a}: the kill was not mid-trace")
    L.expect(tx_a + reclaimed == n_a,
             f"port A tx {tx_a} + reclaimed {reclaimed} = {tx_a + reclaimed}, want {n_a}")
    held = reclaimed - drops["nf_gone"]
    L.expect(0 <= held <= HELD_MAX, f"reclaimed {reclaimed} - nf_gone {drops['nf_gone']} = "
                                    f"{held} held mbufs: not one batch record")
    others = {k: v for k, v in drops.items() if v and k != "nf_gone"}
    L.expect(not others, f"unexpected drops {others}")
    L.expect(port_a["tx_drop"] == 0 and port_b["tx_drop"] == 0, "port TX drops")
    L.expect(port_b["rx"] == n_b and port_b["tx"] == n_b,
             f"port B rx {port_b['rx']} tx {port_b['tx']}, want {n_b}")
    fwd = node.nf_by(name="simple_forward")
    L.expect(len(fwd) == 1 and fwd[0]["status"] == "running",
             f"simple_forward is not running: {fwd}")

    rc = node.stop()
    L.expect(rc == 0, f"manager exit status {rc}")
    L.expect(not node.leftover_nfs, f"NFs still alive after the manager: {node.leftover_nfs}")
    L.expect(not node.runtime_leftovers(), f"runtime files left: {node.runtime_leftovers()}")
    pcap.compare_frames(pcap.read_capture_out(out_b), frames_b, "chain B output")
    got_a = pcap.read_capture_out(out_a)
    L.expect(len(got_a) == tx_a, f"port A capture has {len(got_a)} frames, port tx {tx_a}")
    pcap.compare_frames(got_a, frames_a[:len(got_a)], "chain A output (a prefix of the trace)")


if __name__ == "__main__":
    lab.run("nf_kill", main)
