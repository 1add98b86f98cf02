# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 REINFORCE-NFV authors
"""onvm.ftc_lab -- the FTC lab (docs/design/ftc.md): the stateful chain
basic_monitor -> vlan_tagger -> load_balancer spread over nodes, one NF a
node, with f replica-only nodes after it, each node a manager in a network
namespace of its own, linked by veth pairs on DPDK af_packet ports (no
address, no route: the kernel never forwards a frame).

  n0 (the forwarder):  "src" (net_pcap, the input) -> basic_monitor -> "next"
  n1:                  "prev" -> vlan_tagger -> "next"
  n2:                  "prev" -> load_balancer -> "next"
  n3 .. n(2+f):        "prev" -> (replicas only) -> "next"
  the last (egress):   "prev" -> held until committed -> "out"; "fb" back to n0
  sink:                "in" -> capture sink.pcap

The input is a trace repeated, tagged as remote resiliency's lab does
(onvm.remote_lab.tagged_input), so remote_lab's oracles apply: every frame
out once, in order, tagged and balanced (check_stateful), and the NFs'
exports exact (check_exports).  For the benchmarks `ftc=False` builds the
same nodes and links with no FTC (the baseline: plain chains).
"""
import json
import os

from onvm import lab, pcap
from onvm.remote_lab import BIG, af, link, stateful_nfs

FTC_ID = 29
FTC_MTU = 1900  # frames <= 1914 bytes: one mbuf each (2048 of data room)
NF_NODES = 3


def build(L, frames, f=1, tag="", ftc=True, propagate_us=500, retrans_us=5000, idle=None,
          nfs=None):
    """The nodes for `frames` (the input) with `f` replica-only nodes;
    returns (nodes, sink): nodes[0] the forwarder, nodes[-1] the egress.
    `nfs`: for each of the NF nodes, (NF object, service) instead of the
    stateful chain's."""
    src = L.path(f"input{tag}.pcap")
    pcap.write_pcap(src, frames)
    empty = L.path("empty.pcap")
    pcap.write_pcap(empty, [])
    total = NF_NODES + f if ftc else NF_NODES
    names = [f"n{i}" for i in range(total)]
    ns = {k: L.netns(k + tag) for k in names + ["k"]}
    # the chain's links: n_i "next" -> n_(i+1) "prev"; the egress -> sink;
    # the feedback link egress -> n0
    for i in range(total - 1):
        link(L, ns[names[i]], f"n{i}_n{i + 1}", ns[names[i + 1]], f"n{i + 1}_n{i}")
    last = names[-1]
    link(L, ns[last], "e_k", ns["k"], "k_e")
    if ftc:
        link(L, ns[last], "e_fb", ns["n0"], "n0_fb")
    wait = {"startup": {"link_wait_ms": 60000}}
    if idle:
        wait["idle"] = idle
    chain_nfs = stateful_nfs(L, "ftc", tag)
    nodes = []
    for i, name in enumerate(names):
        ports = []
        if i == 0:
            ports.append({"name": "src", "dev": f"net_pcap0,rx_pcap={src},"
                          f"tx_pcap={L.path(f'n0-src{tag}.pcap')}"})
        else:
            ports.append({"name": "prev", "dev": af(0, f"n{i}_n{i - 1}", BIG)})
        if name != last:
            ports.append({"name": "next", "dev": af(1, f"n{i}_n{i + 1}")})
        else:
            ports.append({"name": "next", "dev": af(1, "e_k")})
        if ftc and (i == 0 or name == last):
            ports.append({"name": "fb", "dev": af(2, "n0_fb" if i == 0 else "e_fb", BIG)})
        if i < NF_NODES:
            nf, svc = (nfs[i] if nfs else (chain_nfs[i], chain_nfs[i]["service"]))
            node_nfs, services = [nf], [svc]
        else:
            node_nfs, services = [], []
        chain = {"name": "c", "services": services,
                 "ingress_port": "src" if i == 0 else "prev", "exit_port": "next"}
        if ftc:
            chain["resiliency"] = "ftc"
            chain["ftc"] = dict({"id": FTC_ID, "f": f, "position": i, "nf_nodes": NF_NODES,
                                 "propagate_us": propagate_us, "retrans_us": retrans_us,
                                 "mtu": FTC_MTU},
                                **({"feedback_port": "fb"} if i == 0 or name == last else {}))
        cfg = dict(wait, **{
            "node": {"lcores": f"0@{i % 2}"},
            "ports": ports, "nfs": node_nfs, "chains": [chain],
            **({"pool": {"mbufs": 32767}} if name == last else {}),
        })
        node = L.node(name + tag, cfg, netns=ns[name])
        node.ns = ns[name]
        nodes.append(node)
    sink = L.node("sink" + tag, dict(wait, **{
        "node": {"lcores": "0@0"},
        "ports": [{"name": "in", "dev": af(0, "k_e", BIG)},
                  {"name": "cap", "dev": f"net_pcap1,rx_pcap={empty},"
                   f"tx_pcap={L.path(f'sink{tag}.pcap')}", "rx": False}],
        "chains": [{"name": "k", "services": [], "ingress_port": "in", "exit_port": "cap"}],
    }), netns=ns["k"])
    sink.capture = L.path(f"sink{tag}.pcap")
    return nodes, sink


def start(nodes, sink):
    """The sink and the chain's nodes from the egress back; the forwarder,
    whose input flows at once, last."""
    sink.start(wait=False)
    for node in reversed(nodes[1:]):
        node.start(wait=False)
    for node in [sink] + nodes[1:]:
        node.wait_ready(120)
    nodes[0].start()


def delivered(sink):
    """Frames the sink has taken in so far."""
    return sink.port("in")["rx"]


def ftc_state(node):
    return node.query("/onvm/ftc")


def digests(node):
    return node.query("/onvm/ftc/digest")


def read_exports(L, tag=""):
    out = {}
    for nf in ("mon", "lb"):
        with open(L.path(f"ftc{tag}-{nf}.json")) as fh:
            out[nf] = json.load(fh)
    return out


def dump(nodes):
    for node in nodes:
        try:
            print(f"--- {node.name}: /onvm/ftc {json.dumps(node.query('/onvm/ftc'))}")
            print(f"--- {node.name}: ports {node.ports()}")
        except Exception as e:  # a killed node
            print(f"--- {node.name}: {e}")


def sink_frames(sink):
    return pcap.read_pcap(sink.capture) if os.path.exists(sink.capture) else []
