#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 REINFORCE-NFV authors
"""Stateless resiliency with a real redis-server (docs/design/stateless.md).

Scenarios (argument; none: all of them, in each of the four modes):

  modes   the stateful chain basic_monitor -> vlan_tagger -> load_balancer
          with "resiliency": "stateless", in each mode (sync, async, with
          and without the cache): 4 copies of ssh.pcap, each copy new flows
          (tagged frames, the remote tests' oracle).  Asserted: every frame
          out exactly once, in order, tagged and on one backend per flow;
          the exit released nothing before the store had its epoch (held
          = released, nothing lost); the store answered every update.  Then
          a second run of the node on the same store with no input: its
          fresh NFs load their state from the store (warm-up), and their
          exports equal the first run's input, per flow, exactly.
  absent  the store is not running at start: the chain's NF says so and
          exits, the node's other chain still forwards every frame.
"""
import os
import sys

from onvm import lab, pcap, store, traces
from onvm.remote_lab import check_exports, check_stateful, stateful_nfs, tagged_input

CHAIN = "sl"


def node_cfg(L, name, inp, out, st, nfs):
    return {
        "ports": [{"name": "p0", "dev": f"net_pcap0,rx_pcap={inp},tx_pcap={out}"}],
        "nfs": nfs,
        "chains": [{"name": CHAIN, "services": [1, 2, 3], "ingress_port": "p0",
                    "exit_port": "p0", "resiliency": "stateless", "store": st}],
    }


def exports(L, name):
    return (lab.read_json(L.path(f"{name}-mon.json")), lab.read_json(L.path(f"{name}-lb.json")))


def modes(L, mode, cache):
    tag = store.mode_name(mode, cache).replace("+", "_")
    r = store.Redis(L, f"redis-{tag}").start()
    frames = tagged_input(traces.trace("ssh.pcap"), 4, flows_per_copy=True)
    inp, out = L.path(f"{tag}-in.pcap"), L.path(f"{tag}-out.pcap")
    pcap.write_pcap(inp, frames)
    st = store.store_cfg(r.addr, mode, cache, flush_packets=16)
    nfs = stateful_nfs(L, tag, "")
    node = L.node(f"{tag}", node_cfg(L, tag, inp, out, st, nfs)).start()
    node.wait_port("p0", "tx", len(frames), timeout=120)
    d = node.query(f"/onvm/store,{CHAIN}")
    rc = node.stop()
    L.expect(rc == 0, f"{tag}: manager exit status {rc}")
    print(f"{tag}: committed {d['committed']}, markers {d['markers_in']}, held "
          f"{d['held_total']}, released {d['released']}; nf0 sent {d['nf0']['updates_sent']} "
          f"acked {d['nf0']['updates_acked']} chunks {d['nf0']['chunks_sent']} "
          f"absorbed {d['nf0']['cache_absorbed']}")
    L.expect(d["held_total"] == d["released"] == len(frames) and d["exit_full"] == 0,
             f"{tag}: held {d['held_total']}, released {d['released']}, {len(frames)} frames")
    for k in range(3):
        nf = d[f"nf{k}"]
        L.expect(nf["updates_sent"] > 0 and nf["updates_acked"] == nf["updates_sent"] and
                 nf["bad_replies"] == 0 and nf["fenced"] == 0 and nf["lost"] == 0,
                 f"{tag}: nf{k}'s updates: {nf}")
        L.expect(nf["closed"] == d["committed"], f"{tag}: nf{k} closed {nf['closed']}, "
                 f"committed {d['committed']}")
    got = pcap.read_capture_out(out)
    _, backend = check_stateful(L, frames, got, [], allow_loss=0, tail=False)
    mon, lb = exports(L, tag)
    check_exports(L, frames, mon, lb, backend)

    # A new run of the node, nothing to forward: its NFs are fresh
    # processes; all they know is what the store gives them.
    empty = L.path(f"{tag}-empty.pcap")
    pcap.write_pcap(empty, [])
    for p in (L.path(f"{tag}-mon.json"), L.path(f"{tag}-lb.json")):
        os.unlink(p)
    node2 = L.node(f"{tag}-again", node_cfg(L, tag, empty, L.path(f"{tag}-out2.pcap"), st,
                                              nfs)).start()
    d2 = store.wait_store(node2, CHAIN, lambda d: d["started"], 30, "the chain warmed up")
    L.expect(node2.stop() == 0, f"{tag}: second run's exit status")
    for k in range(3):
        nf = d2[f"nf{k}"]
        L.expect(nf["recovered_epoch"] == d["committed"] and nf["gen"] == d[f"nf{k}"]["gen"] + 1,
                 f"{tag}: nf{k} warmed up at epoch {nf['recovered_epoch']} gen {nf['gen']}, "
                 f"the first run committed {d['committed']} at gen {d[f'nf{k}']['gen']}")
    L.expect(d2["nf0"]["loaded_chunks"] > 0 and d2["nf2"]["loaded_chunks"] > 0,
             f"{tag}: loaded {d2['nf0']['loaded_chunks']}, {d2['nf2']['loaded_chunks']} chunks")
    mon, lb = exports(L, tag)
    check_exports(L, frames, mon, lb, backend)
    r.kill()


def absent(L):
    """No store: the stateless chain cannot start, the other chain runs."""
    frames = tagged_input(traces.trace("ssh.pcap"), 1)
    inp, out = L.path("absent-in.pcap"), L.path("absent-out.pcap")
    other_in, other_out = L.path("absent-in1.pcap"), L.path("absent-out1.pcap")
    pcap.write_pcap(inp, frames)
    pcap.write_pcap(other_in, frames)
    st = store.store_cfg("unix:" + L.path("no-such.sock"), timeout_ms=200)
    cfg = {
        "ports": [{"name": "p0", "dev": f"net_pcap0,rx_pcap={inp},tx_pcap={out}"},
                  {"name": "p1", "dev": f"net_pcap1,rx_pcap={other_in},tx_pcap={other_out}"}],
        "nfs": [{"binary": "basic_monitor", "service": 1, "args": ["-p", "0"]},
                {"binary": "simple_forward", "service": 4}],
        "chains": [{"name": CHAIN, "services": [1], "ingress_port": "p0", "exit_port": "p0",
                    "resiliency": "stateless", "store": st},
                   {"name": "other", "services": [4], "ingress_port": "p1", "exit_port": "p1"}],
    }
    node = L.node("absent", cfg).start()
    node.wait_port("p1", "tx", len(frames))
    lab.wait_until(lambda: not node.nf_by(service=1), 30, "the stateless chain's NF gone")
    log = node.log()
    L.expect("cannot reach the store of chain 'sl'" in log, "no clear error about the store")
    L.expect(node.stop() == 0, "manager exit status")
    L.expect(len(pcap.read_capture_out(other_out)) == len(frames), "the other chain lost frames")


def test(L, which):
    if which in (None, "modes"):
        for mode, cache in store.MODES:
            modes(L, mode, cache)
    if which in (None, "absent"):
        absent(L)


if __name__ == "__main__":
    which = sys.argv[1] if len(sys.argv) > 1 else None
    lab.Lab("stateless" + (f"_{which}" if which else "")).run(lambda L: test(L, which))
