# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 REINFORCE-NFV authors
"""onvm.demo_chain -- the demo's chain (bridge -n -> basic_monitor ->
simple_forward on one net_pcap port) as a node config, and a trace run
through it with every check test_chain_traces.py lists: output byte for
byte, port and NF counters, the monitor's flows against tshark's, the pool
back to idle, nothing left at exit.  test_container_chain.py runs the same
with every NF in a container.
"""
import os

from onvm import containers, flowtable, lab, pcap, traces


def three_nf_chain(trace_path, out_path, monitor_json):
    """The demo's chain as a node config: one net_pcap port reading
    `trace_path` and writing `out_path`, bridge -n -> basic_monitor (exporting
    to `monitor_json`) -> simple_forward, back out of the same port."""
    return {
        "ports": [{"name": "in", "dev": f"net_pcap0,rx_pcap={trace_path},tx_pcap={out_path}"}],
        "nfs": [
            {"binary": "bridge", "service": 1, "args": ["-n", "-m", "0:0"]},
            {"binary": "basic_monitor", "service": 2, "args": ["-e", monitor_json, "-p", "0"]},
            {"binary": "simple_forward", "service": 3},
        ],
        "chains": [{"name": "main", "services": [1, 2, 3], "ingress_port": "in",
                    "exit_port": "in"}],
    }


PARSE_ERRORS = ["truncated_l2", "truncated_l3", "bad_ip_version", "bad_ihl",
                "bad_ip_total_length", "truncated_l4", "bad_l4_length"]


def run_trace(L, name, image=None):
    """One trace through the chain, checked (test_chain_traces.py says what);
    with `image`, every NF runs in a container of it (test_container_chain.py),
    the monitor's export directory its only volume."""
    path = traces.trace(name)
    frames = pcap.read_pcap(path)
    n_frames, want_flows, want_non_ip = flowtable.tshark_flows(path)
    L.expect(n_frames == len(frames),
             f"{name}: tshark sees {n_frames} frames, the pcap reader {len(frames)}")
    stem = name.rsplit(".", 1)[0]
    out = L.path(f"{stem}-out.pcap")
    export_dir = L.path(f"{stem}-export")
    os.makedirs(export_dir, exist_ok=True)
    mon = os.path.join(export_dir, "monitor.json")
    cfg = three_nf_chain(path, out, mon)
    if image is not None:
        cfg = containers.containerize(cfg, image, volumes={1: [f"{export_dir}:{export_dir}"]})
    node = L.node(f"chain-{stem}", cfg).start()

    port = node.wait_port("in", "tx", len(frames))
    L.expect(port["rx"] == len(frames), f"{name}: port rx {port['rx']}, want {len(frames)}")
    L.expect(port["tx"] == len(frames), f"{name}: port tx {port['tx']}, want {len(frames)}")
    L.expect(port["tx_drop"] == 0, f"{name}: port tx_drop {port['tx_drop']}")
    L.expect(port["tx_bytes"] == sum(map(len, frames)),
             f"{name}: port tx_bytes {port['tx_bytes']}, want {sum(map(len, frames))}")
    L.expect(port["rx_bytes"] == sum(map(len, frames)),
             f"{name}: port rx_bytes {port['rx_bytes']}, want {sum(map(len, frames))}")
    L.expect(port["not_ipv4"] == want_non_ip,
             f"{name}: port not_ipv4 {port['not_ipv4']}, tshark says {want_non_ip}")
    for r in PARSE_ERRORS:
        L.expect(port[r] == 0, f"{name}: port parse error {r} = {port[r]} on a clean trace")
    drops = {k: v for k, v in node.drops().items() if v}
    L.expect(not drops, f"{name}: drops {drops}")
    nfs = node.nfs()
    if image is not None:
        running = containers.node_containers(node.prefix)
        for nf in nfs.values():
            L.expect(nf.get("container") in running,
                     f"{name}: NF {nf['name']} not in one of the node's containers "
                     f"({nf.get('container')!r}, running {running})")
    for nf in nfs.values():
        L.expect(nf["rx"] == len(frames) and nf["tx"] == len(frames),
                 f"{name}: NF {nf['name']} rx {nf['rx']} tx {nf['tx']}, want {len(frames)}")
    # basic_monitor keeps its counters in libnf state regions: batches were
    # committed (the totals chunk at least), no touch fell outside the regions.
    mon_nf = [nf for nf in nfs.values() if nf["service"] == 2][0]
    L.expect(mon_nf["state_bytes"] > 0 and mon_nf["state_seq"] >= 1,
             f"{name}: monitor state {mon_nf['state_bytes']} bytes, seq {mon_nf['state_seq']}")
    L.expect(mon_nf["state_chunks_committed"] >= mon_nf["state_seq"] > 0,
             f"{name}: monitor committed {mon_nf['state_chunks_committed']} chunks in "
             f"{mon_nf['state_seq']} batches")
    L.expect(mon_nf["bad_touches"] == 0, f"{name}: monitor bad_touches {mon_nf['bad_touches']}")
    lab.wait_until(lambda: (lambda p: p["in_use"] == p["idle_in_use"])(node.pool()), 10,
                   "pool back to its idle level")

    rc = node.stop()
    L.expect(rc == 0, f"{name}: manager exit status {rc}")
    L.expect(not node.leftover_nfs,
             f"{name}: NFs still alive after the manager: {node.leftover_nfs}")
    L.expect(not node.runtime_leftovers(),
             f"{name}: runtime files left: {node.runtime_leftovers()}")
    if image is not None:
        left = containers.node_containers(node.prefix)
        L.expect(not left, f"{name}: containers left after the node stopped: {left}")

    pcap.compare_frames(pcap.read_capture_out(out), frames, f"{name}: output capture")
    doc = lab.read_json(mon)
    L.expect(doc["packets"] == len(frames), f"{name}: monitor packets {doc['packets']}")
    L.expect(doc["bytes"] == sum(map(len, frames)), f"{name}: monitor bytes {doc['bytes']}")
    L.expect(doc["non_ip"] == want_non_ip, f"{name}: monitor non_ip {doc['non_ip']}, "
                                          f"tshark says {want_non_ip}")
    L.expect(doc["untracked"] == 0, f"{name}: monitor untracked {doc['untracked']}")
    bad = {k: v for k, v in doc["malformed"].items() if v}
    L.expect(not bad, f"{name}: monitor malformed {bad}")
    diff = flowtable.diff_flows(flowtable.monitor_flows(doc), want_flows)
    L.expect(not diff, f"{name}: monitor flows differ from tshark's:\n    " + "\n    ".join(diff))
    print(f"{name}: {len(frames)} frames, {len(want_flows)} flows, {want_non_ip} non-IPv4: ok")
