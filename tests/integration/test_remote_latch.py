#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 REINFORCE-NFV authors
"""Every packet that leaves a protected chain goes through its latch, and
nothing enters its NFs but its stamped input (rsync_unit_out.c,
dataplane/datapath.c).

One node, the primary of a protected chain with no standby: nothing it
latches is ever voted for, so nothing of the chain may leave.  Its NF
(test_nf, service 1) sends every packet to another port than the chain's
exit ("side": ONVM_ACTION_OUT), and every fourth packet it makes a copy and
sends it there too (nf_pkt_alloc: an NF-made packet, chain id 0, the
timestamp of the packet it handled).  An unprotected chain's NF (service 2)
sends everything it gets to service 1 (ONVM_ACTION_TONF).  Asserted:
nothing on "side" nor on the exit; the chain's outputs, NF-made ones too,
all latched; the other chain's packets dropped before service 1
(in_unlogged_nf), which saw only the stamped input.

A second node: the protected NF sends everything to service 3, an NF in no
chain: dropped before it (out_escaped), service 3 sees nothing.

(Before, the latch was only at the chain's exit port, for packets whose
metadata named the chain: the first node let all of it out on "side".)
"""
import struct

from onvm import lab, pcap, traces

SHIM = 0x88B5


def stamp(frame, ts):
    (etype,) = struct.unpack_from(">H", frame, 12)
    return frame[:12] + struct.pack(">HBBHQ", SHIM, 1, 0, etype, ts) + frame[14:]


def config(L, tag, stamped, plain, nf1_args, extra_nfs=()):
    empty = L.path("empty.pcap")
    pcap.write_pcap(empty, [])
    port = lambda n, name, rx: {"name": name, "dev": f"net_pcap{n},rx_pcap={rx},"
                                                       f"tx_pcap={L.path(f'{tag}-{name}.pcap')}"}
    return {
        "ports": [port(0, "from_p", stamped), port(1, "sink", empty), port(2, "side", empty),
                  port(3, "sync", empty), port(4, "in2", plain), port(5, "out2", empty)],
        "nfs": [{"name": "prot", "binary": lab.TEST_NF, "service": 1, "args": nf1_args},
                {"name": "feeder", "binary": lab.TEST_NF, "service": 2, "args": ["-a", "tonf:1"]}]
        + list(extra_nfs),
        "chains": [{"name": "web", "services": [1], "ingress_port": "from_p",
                    "exit_port": "sink"},
                   {"name": "other", "services": [2], "ingress_port": "in2",
                    "exit_port": "out2"}],
        "remote": {"chains": [{"name": "web", "id": 7, "role": "primary", "chain": "web",
                               "predecessor_port": "from_p", "standby_port": "sync"}]},
    }


def nf_rx(node, name):
    return node.nf_by(name=name)[0]["rx"]


def test(L):
    frames = [f for f in pcap.read_pcap(traces.trace("smtp.pcap")) if len(f) <= 1500]
    n = len(frames)
    stamped = L.path("stamped.pcap")
    pcap.write_pcap(stamped, [stamp(f, i + 1) for i, f in enumerate(frames)])
    plain = L.path("plain.pcap")
    pcap.write_pcap(plain, frames[:40])

    # 1: out of another port, NF-made packets, and packets from another chain
    node = L.node("outs", config(L, "outs", stamped, plain, ["-a", "out:2", "-g", "4:2"])).start()
    remote = lambda: node.query("/onvm/remote")["web"]
    lab.wait_until(lambda: remote()["out_latched"] + remote()["out_unstamped"] >= n + n // 4, 30,
                   "the protected NF's outputs")
    lab.wait_until(lambda: remote()["in_unlogged_nf"] >= 40, 30, "the other chain's packets")
    st = remote()
    print(f"outs: latched {st['out_latched']} ({n} and {n // 4} NF-made), from the other chain "
          f"dropped {st['in_unlogged_nf']}, released {st['out_released']}")
    L.expect(st["out_latched"] == n + n // 4 and st["out_unstamped"] == 0 and
             st["out_released"] == 0, f"the protected chain's outputs: {st}")
    L.expect(st["in_unlogged_nf"] == 40 and st["in_unlogged_port"] == 0 and
             st["out_escaped"] == 0, f"crossings: {st}")
    L.expect(nf_rx(node, "prot") == n, f"service 1 got {nf_rx(node, 'prot')}, want the {n} "
             "stamped packets only")
    L.expect(node.stop() == 0, "outs: exit status")
    for name in ("side", "sink"):
        got = pcap.read_capture_out(L.path(f"outs-{name}.pcap"))
        L.expect(not got, f"{len(got)} packets left the protected chain on {name!r} unvoted")

    # 2: to an NF in no chain
    node = L.node("esc", config(L, "esc", stamped, L.path("empty.pcap"), ["-a", "tonf:3"],
                                [{"name": "outside", "binary": lab.TEST_NF, "service": 3,
                                  "args": ["-a", "out:2"]}])).start()
    remote = lambda: node.query("/onvm/remote")["web"]
    lab.wait_until(lambda: remote()["out_escaped"] >= n, 30, "the protected NF's outputs")
    st = remote()
    L.expect(st["out_escaped"] == n and st["out_latched"] == 0,
             f"outputs to an NF outside the chain: {st}")
    L.expect(nf_rx(node, "outside") == 0, "service 3 got packets of the protected chain")
    L.expect(node.stop() == 0, "esc: exit status")
    got = pcap.read_capture_out(L.path("esc-side.pcap"))
    L.expect(not got, f"{len(got)} packets of the protected chain left through service 3")


if __name__ == "__main__":
    lab.run("remote_latch", test)
