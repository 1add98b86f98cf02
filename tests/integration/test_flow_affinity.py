#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 REINFORCE-NFV authors
"""Several instances of one service: every flow sticks to one instance, both
directions of a connection to the same one, and together they see the trace.

webex.pcap (113 directional flows) goes through bridge -n -> basic_monitor x3
-> simple_forward.  Each monitor instance exports its own flow table
("%i" in -e).  Asserted: no directional flow is counted by two instances; the
two directions of every connection are in the same instance; the instances'
tables merged equal tshark's; more than one instance got traffic; the output is
the trace, byte for byte, in order (per-flow order is kept across instances
and this trace's flows interleave, so the whole order only holds if ...) --
see below: with several instances only per-flow order is guaranteed, so the
output is compared per flow.
"""
import collections

from onvm import flowtable, lab, pcap, traces


def conn(key):
    src, dst, proto, sport, dport = key
    return (proto,) + tuple(sorted([(src, sport), (dst, dport)]))


def test(L):
    path = traces.trace("webex.pcap")
    frames = pcap.read_pcap(path)
    n_frames, want_flows, _ = flowtable.tshark_flows(path)
    out = L.path("out.pcap")
    mon = L.path("mon-%i.json")
    node = L.node("affinity", {
        "ports": [{"name": "in", "dev": f"net_pcap0,rx_pcap={path},tx_pcap={out}"}],
        "nfs": [
            {"binary": "bridge", "service": 1, "args": ["-n", "-m", "0:0"]},
            {"binary": "basic_monitor", "service": 2, "instances": 3, "args": ["-e", mon, "-p", "0"]},
            {"binary": "simple_forward", "service": 3},
        ],
        "chains": [{"name": "main", "services": [1, 2, 3], "ingress_port": "in", "exit_port": "in"}],
    }).start()
    node.wait_port("in", "tx", len(frames))
    instances = sorted(int(i) for i, nf in node.nfs().items() if nf["service"] == 2)
    lab.check(len(instances) == 3, f"3 monitor instances expected, /onvm/nfs has {instances}")
    rc = node.stop()
    L.expect(rc == 0, f"manager exit status {rc}")

    owner, merged, per_instance = {}, {}, {}
    for i in instances:
        flows = flowtable.monitor_flows(lab.read_json(mon.replace("%i", str(i))))
        per_instance[i] = sum(p for p, _ in flows.values())
        for key, counts in flows.items():
            L.expect(key not in merged, f"flow {key} counted by instance {owner.get(key)} and {i}")
            merged[key] = counts
            owner[key] = i
    by_conn = collections.defaultdict(set)
    for key, i in owner.items():
        by_conn[conn(key)].add(i)
    split = {c: s for c, s in by_conn.items() if len(s) > 1}
    L.expect(not split, f"connections split over instances: {list(split.items())[:5]}")
    diff = flowtable.diff_flows(merged, want_flows)
    L.expect(not diff, "merged monitor tables differ from tshark:\n    " + "\n    ".join(diff))
    busy = [i for i, n in per_instance.items() if n > 0]
    L.expect(len(busy) > 1, f"only instances {busy} got traffic: {per_instance}")
    print(f"packets per instance: {per_instance}")

    got = pcap.read_capture_out(out)
    L.expect(len(got) == len(frames), f"{len(got)} frames out, {len(frames)} in")
    # net_pcap cuts frames longer than PCAP_TX_SNAP: key frames by their
    # length and their first PCAP_TX_SNAP bytes.
    def key(f):
        return (getattr(f, "wire", len(f)), bytes(f[:pcap.PCAP_TX_SNAP]))
    L.expect(collections.Counter(map(key, got)) == collections.Counter(map(key, frames)),
             "the output is not the same multiset of frames as the input")


if __name__ == "__main__":
    lab.Lab("flow_affinity").run(test)
