#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 REINFORCE-NFV authors
"""Two onvm_mgr nodes peer with BFD over memif; a killed node is detected.

  node A: port "link" (net_memif, server), BFD "to_b" 198.18.2.1 -> .2
  node B: port "link" (net_memif, client), BFD "to_a" 198.18.2.2 -> .1
  10 ms x 3 on both, peer MACs by ARP; a trace replayed through A -> B keeps
  the data path busy on the same link while BFD runs.

Asserted:
 - both sessions come Up, each learning the other's MAC by ARP, and the
   discriminators agree; the trace crosses the link intact while BFD
   frames share it (B's output == the trace; BFD frames never reach an NF);
 - SIGKILL of node B's manager -> node A declares Down with diag 1 within the
   detection time (30 ms) plus MARGIN_MS, timed from just before the kill to
   A's Down event (CLOCK_MONOTONIC); A's session stays Down while B is gone;
 - a new node B comes back on the same socket and both are Up again;
 - node A exits 0 and nothing is left behind (B's files removed by the lab).
"""
import os
import signal
import time

from onvm import lab, pcap, traces

MARGIN_MS = 70


def main(L):
    trace = traces.trace("tor.pcap")
    frames = pcap.read_pcap(trace)
    sock = f"/tmp/onvm-it-bfd-{os.getpid()}.sock"
    L.extra_paths.append(sock)
    out = L.path("b-out.pcap")
    bfd_a = {"name": "to_b", "port": "link", "local": "198.18.2.1", "peer": "198.18.2.2",
             "desired_min_tx_us": 10000, "required_min_rx_us": 10000, "detect_mult": 3}
    bfd_b = dict(bfd_a, name="to_a", local="198.18.2.2", peer="198.18.2.1")
    node_a = L.node("nodeA", {
        "startup": {"link_wait_ms": 60000},
        "ports": [{"name": "link", "dev": f"net_memif0,role=server,socket={sock},id=0"},
                  {"name": "trace",
                   "dev": f"net_pcap0,rx_pcap={trace},tx_pcap={L.path('a-unused.pcap')}"}],
        "nfs": [{"name": "fwd", "binary": "simple_forward", "service": 1}],
        "chains": [{"name": "a", "services": [1], "ingress_port": "trace",
                    "exit_port": "link"}],
        "bfd": {"sessions": [bfd_a]},
    })

    def node_b(tag):
        return L.node(f"nodeB{tag}", {
            "startup": {"link_wait_ms": 60000},
            "ports": [{"name": "link", "dev": f"net_memif0,role=client,socket={sock},id=0"},
                      {"name": "out", "dev": f"net_pcap0,tx_pcap={out}{tag}", "rx": False}],
            "nfs": [{"name": "fwd", "binary": "simple_forward", "service": 1}],
            "chains": [{"name": "b", "services": [1], "ingress_port": "link",
                        "exit_port": "out"}],
            "bfd": {"sessions": [bfd_b]},
        })

    node_a.start(wait=False)
    node_a.wait_telemetry()
    lab.wait_until(lambda: node_a.query("/ethdev/info,0").get("dev_started") == 1, 60,
                   "node A's memif server port to start", alive=node_a.assert_running)
    b = node_b("1").start()
    node_a.wait_ready()
    sa = node_a.wait_bfd("to_b", "Up", timeout=60)
    sb = b.wait_bfd("to_a", "Up", timeout=60)
    L.expect(sa["remote_discr"] == sb["local_discr"] and sb["remote_discr"] == sa["local_discr"],
             f"discriminators: A {sa['local_discr']}/{sa['remote_discr']}, "
             f"B {sb['local_discr']}/{sb['remote_discr']}")
    for s in (sa, sb):
        L.expect(s["peer_mac_source"] == "arp", f"peer MAC source {s['peer_mac_source']}")

    # The trace shares the link with BFD: all of it reaches B's output and no
    # BFD frame goes down B's chain.
    lab.wait_until(lambda: b.port("out")["tx"] >= len(frames), 60,
                   "the trace to cross the link", alive=b.assert_running)
    pcap.compare_frames(pcap.read_capture_out(out + "1"), frames, "node B output")
    L.expect(b.port("link")["ctrl_rx"] > 0, "node B took no BFD/ARP frame off the link")
    print(f"both Up (discriminators {sa['local_discr']} <-> {sb['local_discr']}); "
          f"{len(frames)} trace frames crossed the link intact")

    # Kill B's manager: A detects it.
    before = node_a.bfd("to_b")
    t0 = time.monotonic_ns()
    b.proc.send_signal(signal.SIGKILL)
    sa = node_a.wait_bfd("to_b", "Down", timeout=10)
    took_ms = (sa["last_down_ns"] - t0) / 1e6
    print(f"node B SIGKILLed: node A Down after {took_ms:.1f} ms (diag {sa['last_down_diag']})")
    L.expect(sa["last_down_ns"] > t0, "A went down before B was killed")
    L.expect(took_ms <= 30 + MARGIN_MS, f"Down {took_ms:.1f} ms after the kill, "
                                        f"want <= 30 + {MARGIN_MS} ms")
    L.expect(sa["last_down_diag"] == 1, f"diag {sa['last_down_diag']}, want 1")
    L.expect(sa["down_events"] == before["down_events"] + 1,
             f"down events {before['down_events']} -> {sa['down_events']}")
    b.stop()
    b.remove_runtime()
    time.sleep(0.5)
    L.expect(node_a.bfd("to_b")["state"] == "Down", "A left Down with B gone")

    # B comes back.
    b2 = node_b("2").start()
    node_a.wait_bfd("to_b", "Up", timeout=60)
    b2.wait_bfd("to_a", "Up", timeout=60)
    print("a new node B: both Up again")

    for node in (b2, node_a):
        rc = node.stop()
        L.expect(rc == 0, f"{node.name}: manager exit status {rc}")
        L.expect(not node.runtime_leftovers(),
                 f"{node.name}: runtime files left: {node.runtime_leftovers()}")


if __name__ == "__main__":
    lab.run("bfd_memif", main)
