#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 REINFORCE-NFV authors
"""libnf's ND helpers mark the packet being handled, and the mark travels with
the packet along the chain to the port.

smtp.pcap (95 frames) goes through test_nf -N 10 (an ND random number on
every 10th packet) -> simple_forward.  Asserted: the NF counted 9 ND events,
exactly 9 frames left the port with the ND flag (the flag survived the second
NF), and every frame came out unchanged.
"""
from onvm import lab, pcap, traces


def test(L):
    path = traces.trace("smtp.pcap")
    frames = pcap.read_pcap(path)
    out = L.path("out.pcap")
    node = L.node("nd", {
        "ports": [{"name": "in", "dev": f"net_pcap0,rx_pcap={path},tx_pcap={out}"}],
        "nfs": [{"binary": lab.TEST_NF, "service": 1, "args": ["-N", "10"]},
                {"binary": "simple_forward", "service": 2}],
        "chains": [{"name": "c", "services": [1, 2], "ingress_port": "in", "exit_port": "in"}],
    }).start()
    port = node.wait_port("in", "tx", len(frames))
    want = len(frames) // 10
    nd = node.nf_by(service=1)[0]["nd_events"]
    L.expect(nd == want, f"test_nf counted {nd} ND events, want {want}")
    L.expect(port["tx_nd"] == want, f"{port['tx_nd']} frames left with the ND flag, want {want}")
    rc = node.stop()
    L.expect(rc == 0, f"manager exit status {rc}")
    pcap.compare_frames(pcap.read_capture_out(out), frames, "output capture")


if __name__ == "__main__":
    lab.Lab("nd_marks").run(test)
