#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 REINFORCE-NFV authors
"""dpi identifies the same protocol for every flow of every trace with and
without a local failover of the dpi NF at a random point mid-trace (the
REINFORCE paper's failover test with nDPI traces).

Every trace of traces/ goes through one chain per node:
    in -> dpi_ref (service 1, no resiliency) -> dpi (service 2, "local") -> in
Both NFs see exactly the same packets in the same order (dpi_ref passes
everything on unchanged), so dpi_ref is the run without a failover and dpi
the run with one: ONVM_NF_FAULT kills dpi's first incarnation at a seeded
random packet between a quarter and three quarters of the trace, at a
seeded random point of its batch among those that lose no packet
(mid_commit, committed, mid_emit; ONVM_TEST_SEED=N repeats a run).  Its hot
standby adopts nDPI's module and flows from the state regions and carries on.

Asserted per trace:
  - dpi failed over exactly once (slot counter) and its successor exported;
  - the two exports list the same flows with the same protocol, result kind
    (detected / guessed), packets it took to decide, packet and byte counts;
  - the per-protocol tables agree;
  - every frame left the node, byte for byte and in order;
  - the promoted dpi's telemetry (/onvm/nf/app,ID) counts every packet, and
    its per-protocol flow counts add up to the flows it classified.
"""
import os
import random

from onvm import flowtable, lab, pcap, traces

TRACES = ["bittorrent.pcap", "dns.pcap", "ftp.pcap", "http-manipulated.pcap", "mpeg.pcap",
          "quic.pcap", "skype-conference-call.pcap", "smtp.pcap", "ssh.pcap", "tor.pcap",
          "webex.pcap", "wireguard.pcap"]
POINTS = ["mid_commit", "committed", "mid_emit"]


def flows(doc):
    out = {}
    for f in doc["flows"]:
        key = (f["a"], f["b"], f["proto"], f["aport"], f["bport"])
        lab.check(key not in out, f"flow {key} exported twice")
        out[key] = (f["protocol"], f["state"], f["detect_pkts"], f["packets"], f["bytes"])
    return out


def run(L, name, rng):
    path = traces.trace(name)
    frames = pcap.read_pcap(path)
    at = rng.randrange(max(1, len(frames) // 4), max(2, 3 * len(frames) // 4))
    point = rng.choice(POINTS)
    tag = name.split(".")[0]
    out, ref_json, got_json = (L.path(f"{tag}-out.pcap"), L.path(f"{tag}-ref.json"),
                               L.path(f"{tag}-dpi.json"))
    args = ["-p", "0", "-H", "32", "-f", "4096"]
    node = L.node(f"dpi-{tag}", {
        "ports": [{"name": "in", "dev": f"net_pcap0,rx_pcap={path},tx_pcap={out}"}],
        "nfs": [{"binary": "dpi", "name": "dpi_ref", "service": 1,
                 "args": args + ["-e", ref_json]},
                {"binary": "dpi", "name": "dpi", "service": 2, "resiliency": "local",
                 "args": args + ["-e", got_json]}],
        "chains": [{"name": "c", "services": [1, 2], "ingress_port": "in", "exit_port": "in"}],
        "state": {"pool_mb": 256},  # two NFs x (32 MB heap + flows) x (canonical + replica)
    }, env={"ONVM_NF_FAULT": f"dpi:{point}:{at}"}).start()
    print(f"{name}: {len(frames)} frames, dpi dies at {point} after {at} packets")
    port = node.wait_port("in", "tx", len(frames))
    m = node.nf_by(service=2)[0]
    L.expect(m["failovers"] == 1, f"{name}: dpi failed over {m['failovers']} times, want 1")
    # The promoted dpi publishes its counters in the node's telemetry.
    app = lab.wait_until(lambda: (lambda a: a if a and a.get("packets") == len(frames) else None)(
        node.query(f"/onvm/nf/app,{m['instance']}")), 10, f"{name}: dpi's telemetry")
    by_proto = sum(v for k, v in app.items() if k.startswith("p_"))
    L.expect(by_proto == app["flows_classified"],
             f"{name}: telemetry protocols add up to {by_proto} flows, classified {app['flows_classified']}")
    rc = node.stop()
    L.expect(rc == 0, f"{name}: manager exit status {rc}")
    pcap.compare_frames(pcap.read_capture_out(out), frames, f"{name}: output capture")
    L.expect(port["tx"] == len(frames), f"{name}: port sent {port['tx']} of {len(frames)}")

    ref, got = lab.read_json(ref_json), lab.read_json(got_json)
    want_flows, got_flows = flows(ref), flows(got)
    diff = flowtable.diff_flows(got_flows, want_flows)
    L.expect(not diff, f"{name}: flows after a failover differ from the run without:\n    " +
             "\n    ".join(diff))
    L.expect(got["protocols"] == ref["protocols"],
             f"{name}: per-protocol results differ: {got['protocols']} vs {ref['protocols']}")
    L.expect(ref["packets"] == len(frames) and got["packets"] == len(frames),
             f"{name}: dpi_ref saw {ref['packets']}, dpi {got['packets']} of {len(frames)}")
    names = sorted({v[0] for v in want_flows.values()})
    print(f"  {len(want_flows)} flows, identical after the failover: {', '.join(names)}")
    return len(want_flows)


def test(L):
    seed = int(os.environ.get("ONVM_TEST_SEED", random.randrange(1 << 32)))
    print(f"seed {seed}")
    rng = random.Random(seed)
    total = sum(run(L, name, rng) for name in TRACES)
    L.expect(total > 50, f"only {total} flows across the traces")


if __name__ == "__main__":
    lab.Lab("nf_dpi").run(test)
