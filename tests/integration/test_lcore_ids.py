#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 REINFORCE-NFV authors
"""Launched NFs get lcore ids the manager does not use, whatever its lcores
(finding 4 of the hardening review: NF ids were 32 + slot, so a manager with
an lcore at 33 refused its own second NF, and the log only said it "did not
register").

The manager runs lcores 0 and 33 (both on CPU 0), three NFs in a chain.
Asserted: the node starts; the NFs' lcore ids are distinct, none is 0 or 33,
none is in the range kept for hand-started NFs; the trace goes through.
"""
from onvm import lab, pcap, traces

MGR_LCORES = {0, 33}


def test(L):
    path = traces.trace("dns.pcap")
    frames = pcap.read_pcap(path)
    out = L.path("out.pcap")
    node = L.node("lcore-ids", {
        "node": {"lcores": "0@0,33@0"},
        "ports": [{"name": "in", "dev": f"net_pcap0,rx_pcap={path},tx_pcap={out}"}],
        "nfs": [{"binary": "simple_forward", "name": f"fwd{s}", "service": s} for s in (1, 2, 3)],
        "chains": [{"name": "c", "services": [1, 2, 3], "ingress_port": "in", "exit_port": "in"}],
    }).start()
    ids = [node.nf_by(service=s)[0]["lcore"] for s in (1, 2, 3)]
    print(f"NF lcore ids {ids} with manager lcores {sorted(MGR_LCORES)}")
    L.expect(len(set(ids)) == 3, f"NF lcore ids are not distinct: {ids}")
    L.expect(not MGR_LCORES & set(ids), f"an NF has one of the manager's lcore ids: {ids}")
    L.expect(all(not 48 <= i < 64 for i in ids), f"an NF has a hand-started id: {ids}")
    node.wait_port("in", "tx", len(frames))
    rc = node.stop()
    L.expect(rc == 0, f"manager exit status {rc}")
    pcap.compare_frames(pcap.read_capture_out(out), frames, "output")


if __name__ == "__main__":
    lab.Lab("lcore_ids").run(test)
