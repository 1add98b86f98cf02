#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 REINFORCE-NFV authors
"""NF-generated packets: sent exactly, dropped when unsent, never leaked --
not even by an NF that dies inside nf_pkt_alloc() (finding 8 of the
hardening review).

test_nf -g 5:0 copies every 5th packet of quic.pcap out of port 0 with
nf_pkt_alloc()/nf_pkt_send(); with -u it also allocates one packet per copy
that it never sends.  Scenarios, one node each:

  plain        the output is the trace (in order) plus exactly one copy of
               every 5th frame, byte for byte; generated == 2 x copies,
               generated_unsent == copies (libnf dropped them); the pool
               returns to its idle level, no mbuf twice.
  alloc_death  "resiliency": "none", -F mid_alloc:200: the NF dies inside
               nf_pkt_alloc() -- an mbuf taken from its alloc ring, not yet in
               its batch record.  The manager reclaims: pool back to idle, no
               mbuf twice (DPDK's mempool refills its per-lcore cache before
               it sets the cache's length, so a death inside rte_pktmbuf_alloc
               leaked up to the cache size + 1; libnf no longer allocates from
               the mempool).
  alloc_failover "resiliency": "local", the same death: the standby drops the
               uncommitted batch (with the mbuf it had just taken), runs on
               and generates; pool back to idle, no mbuf twice.
"""
import collections
import os

from onvm import lab, pcap, traces

EVERY = 5


def pool_idle(node):
    """Idle but for the mbufs kept ready in alloc rings, none of them twice."""
    p = node.pool()
    lab.check(p["overcount"] == 0, f"{p['overcount']} mbufs freed twice: {p}")
    return p if p["in_use"] - p["nf_reserved"] == p["idle_in_use"] else None


def node_cfg(path, out, mode, args):
    return {
        "ports": [{"name": "in", "dev": f"net_pcap0,rx_pcap={path},tx_pcap={out}"}],
        "nfs": [{"binary": lab.TEST_NF, "service": 1, "resiliency": mode,
                 "args": ["-S", "-g", f"{EVERY}:0", "-u", *args]}],
        "chains": [{"name": "c", "services": [1], "ingress_port": "in", "exit_port": "in"}],
    }


def plain(L, path, frames):
    out = L.path("plain-out.pcap")
    node = L.node("gen-plain", node_cfg(path, out, "none", [])).start()
    lab.wait_until(lambda: node.nf_by(service=1)[0]["rx"] == len(frames), 30, "the trace")
    lab.wait_until(lambda: pool_idle(node), 30, "pool back to its idle level")
    nf = node.nf_by(service=1)[0]
    copies = len(frames) // EVERY
    L.expect(nf["generated"] == 2 * copies and nf["generated_unsent"] == copies,
             f"generated {nf['generated']}, unsent {nf['generated_unsent']}, want "
             f"{2 * copies} and {copies}")
    rc = node.stop()
    L.expect(rc == 0, f"plain: manager exit status {rc}")
    # A batch's generated packets leave after its received ones, so the
    # copies trail their originals by up to a batch: compare as multisets,
    # and the originals must still be in order.
    got = pcap.read_capture_out(out)
    want = list(frames) + [fr for i, fr in enumerate(frames, 1) if i % EVERY == 0]
    L.expect(len(got) == len(want), f"plain: {len(got)} frames out, want {len(want)}")
    L.expect(collections.Counter(map(bytes, got)) == collections.Counter(want),
             "plain: the output is not the trace plus one copy of every 5th frame")
    L.expect(pcap.is_subsequence(frames, got), "plain: the trace is not in order in the output")
    print(f"plain: {len(frames)} frames + {copies} copies out, {copies} unsent dropped")


def alloc_death(L, path, frames, mode):
    out = L.path(f"{mode}-out.pcap")
    node = L.node(f"gen-{mode}", node_cfg(path, out, mode, ["-F", "mid_alloc:200"])).start()
    if mode == "local":
        lab.wait_until(lambda: node.nf_by(service=1)[0]["failovers"] == 1, 30, "the failover")
        lab.wait_until(lambda: node.nf_by(service=1)[0]["rx"] > 0, 30,
                       "the promoted NF's packets")
    else:
        lab.wait_until(lambda: not node.nf_by(service=1), 30, "the dead NF's slot reclaimed")
    p = lab.wait_until(lambda: pool_idle(node), 30, "pool back to its idle level")
    # The node counts the death when the dead process is gone (its pidfd).
    info = lab.wait_until(lambda: (lambda i: i if i["nf_deaths"] >= 1 else None)(node.info()),
                          10, f"{mode}: the death counted")
    L.expect(info["nf_deaths"] == 1, f"{mode}: nf_deaths {info['nf_deaths']}")
    if mode == "local":
        nf = node.nf_by(service=1)[0]
        L.expect(nf["failover_dropped"] > 0, f"local: nothing dropped by the promotion: {nf}")
        L.expect(nf["generated"] > 0, f"local: the promoted NF generated nothing: {nf}")
    rc = node.stop()
    L.expect(rc == 0, f"{mode}: manager exit status {rc}")
    print(f"alloc death ({mode}): pool {p['in_use']} in use ({p['nf_reserved']} reserved), "
          f"idle {p['idle_in_use']}, {info['nf_reclaimed_mbufs']} reclaimed")


def test(L):
    path = traces.trace("quic.pcap")
    frames = pcap.read_pcap(path)
    only = os.environ.get("ONVM_SCENARIO")  # plain, none or local: one of them
    if only in (None, "plain"):
        plain(L, path, frames)
    for mode in ("none", "local"):
        if only in (None, mode):
            alloc_death(L, path, frames, mode)


if __name__ == "__main__":
    lab.Lab("nf_generate").run(test)
