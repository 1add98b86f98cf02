# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 REINFORCE-NFV authors
"""onvm.ftc_lab -- the FTC lab (docs/design/ftc.md): the stateful chain
basic_monitor -> vlan_tagger -> load_balancer spread over nodes, one NF a
node, with f replica-only nodes after it, each node a manager in a network
namespace of its own, linked by veth pairs on DPDK af_packet ports (no
address, no route: the kernel never forwards a frame).

  n0 (the forwarder):  "src" (the input) -> basic_monitor -> "next"
  n1:                  "prev" -> vlan_tagger -> "next"
  n2:                  "prev" -> load_balancer -> "next"
  n3 .. n(2+f):        "prev" -> (replicas only) -> "next"
  the last (egress):   "prev" -> held until committed -> "next"; "fb" back to n0
  sink:                "in" -> capture sink.pcap

The input is a trace repeated, tagged as remote resiliency's lab does
(onvm.remote_lab.tagged_input), so remote_lab's oracles apply: every frame
out once, in order, tagged and balanced (check_stateful), and the NFs'
exports (check_exports, or check_counts after a failure).  `source` (frames
a second) feeds it from outside, paced, through a veth (it goes on while a
node dies); else n0 reads it from a pcap at once.

For recovery (`recover=True`): BFD on every link of the chain (the
neighbours of a dead node see it go down), and a state network -- every
node's "st" port on one bridge in a namespace of its own -- on which a
replacement fetches its NF's state.  Orchestrator watches BFD, tells which
nodes died, and starts each one's replacement in its place (its network
namespace: its links) with "recover" and the live replicas to fetch from;
it times detection, start, state fetch and reroute.

For the benchmarks `ftc=False` builds the same nodes and links with no FTC
(the baseline: plain chains).
"""
import copy
import json
import os
import time

from onvm import lab, pcap
from onvm.remote_lab import (BIG, FAULTY_LINK, PACED_SOURCE, af, bfd_session, link, paced_log,
                             stateful_nfs, switch)

FTC_ID = 29
FTC_MTU = 1900  # frames <= 1914 bytes: one mbuf each (2048 of data room)
NF_NODES = 3
BFD_MS = 10


def link_ip(i, side):
    """The BFD addresses of link i (n_i -> n_(i+1)): side 0 n_i's, 1 the other's."""
    return f"198.18.20.{2 * i + 1 + side}"


class Chain:
    """The nodes of one FTC lab: nodes[0] the forwarder, nodes[-1] the
    egress; cfgs[i] node i's configuration (its replacement's base)."""

    def __init__(self, L, f, tag, ftc, n_nf=NF_NODES):
        self.L, self.f, self.tag, self.ftc, self.n_nf = L, f, tag, ftc, n_nf
        self.nodes, self.cfgs, self.ns = [], [], {}
        self.sink = None
        self.source = None
        self.relay = None
        self.replaced = {}  # position -> replacements so far

    @property
    def total(self):
        return len(self.nodes)

    def name(self, i):
        return f"n{i}"


def build(L, frames, f=1, tag="", ftc=True, propagate_us=500, retrans_us=5000, idle=None,
          nfs=None, source=None, recover=False, faults=None, fault_link=0, bfd_ms=BFD_MS,
          bfd=None, sniff_src=False):
    """The nodes for `frames` (the input) with `f` replica-only nodes;
    returns a Chain.  `nfs`: for each NF node, (NF object, service) instead
    of the stateful chain's (any number of them; the stateful chain is
    three); `bfd` (default: `recover`): BFD on the chain's links; `faults`: faulty_link.py's arguments for the
    link n_(fault_link) -> n_(fault_link + 1), through its relay (give it
    --only-ethertype 0x88b5 or --only-ftc-propagating: BFD's frames are
    not to be faulted)."""
    n_nf = len(nfs) if nfs else NF_NODES
    c = Chain(L, f, tag, ftc, n_nf)
    if bfd is None:
        bfd = recover
    src = L.path(f"input{tag}.pcap")
    pcap.write_pcap(src, frames)
    empty = L.path("empty.pcap")
    pcap.write_pcap(empty, [])
    total = n_nf + f if ftc else n_nf
    names = [f"n{i}" for i in range(total)]
    extra = (["g"] if source else []) + (["st"] if recover else []) + (["fl"] if faults else [])
    ns = {k: L.netns(k + tag) for k in names + ["k"] + extra}
    c.ns = ns
    for i in range(total - 1):
        a, b = f"n{i}_n{i + 1}", f"n{i + 1}_n{i}"
        if faults and i == fault_link:  # n_i -> relay -> n_(i+1)
            link(L, ns[names[i]], a, ns["fl"], "fl_a")
            link(L, ns["fl"], "fl_b", ns[names[i + 1]], b)
        else:
            link(L, ns[names[i]], a, ns[names[i + 1]], b)
    last = names[-1]
    link(L, ns[last], "e_k", ns["k"], "k_e")
    if ftc:
        link(L, ns[last], "e_fb", ns["n0"], "n0_fb")
    if source:
        link(L, ns["g"], "g_n0", ns["n0"], "n0_g")
    if recover:  # the state network: one switch, a port for every node
        # (A bridge that talks by itself -- IGMP with snooping on, IPv6's
        # probes -- once had a frame enter the chain at the forwarder: a
        # node's af_packet socket, not yet bound to its interface while the
        # node starts, takes in what comes on any interface of the
        # namespace.  switch() makes one that says nothing.)
        switch(L, ns["st"], "br0", [(ns[names[i]], f"n{i}_st") for i in range(total)])
    if faults:
        c.relay = L.spawn(f"faulty_link{tag}", lab.in_netns(ns["fl"], [
            "/usr/bin/python3", FAULTY_LINK, "fl_a", "fl_b", "--stats",
            L.path(f"faults{tag}.json")] + faults))
    wait = {"startup": {"link_wait_ms": 60000}}
    if idle:
        wait["idle"] = idle
    chain_nfs = stateful_nfs(L, "ftc", tag)
    for i, name in enumerate(names):
        ports = []
        if i == 0:
            ports.append({"name": "src", "dev": af(3, "n0_g", BIG) if source else
                          f"net_pcap0,rx_pcap={src},tx_pcap={L.path(f'n0-src{tag}.pcap')}"})
        else:
            ports.append({"name": "prev", "dev": af(0, f"n{i}_n{i - 1}", BIG)})
        ports.append({"name": "next", "dev": af(1, f"n{i}_n{i + 1}" if name != last else "e_k")})
        if ftc and (i == 0 or name == last):
            ports.append({"name": "fb", "dev": af(2, "n0_fb" if i == 0 else "e_fb", BIG)})
        if recover:
            ports.append({"name": "st", "dev": af(4, f"n{i}_st", BIG)})
        if i < n_nf:
            nf, svc = (nfs[i] if nfs else (chain_nfs[i], chain_nfs[i]["service"]))
            node_nfs, services = [nf], [svc]
        else:
            node_nfs, services = [], []
        chain = {"name": "c", "services": services,
                 "ingress_port": "src" if i == 0 else "prev", "exit_port": "next"}
        if ftc:
            chain["resiliency"] = "ftc"
            chain["ftc"] = dict({"id": FTC_ID, "f": f, "position": i, "nf_nodes": n_nf,
                                 "propagate_us": propagate_us, "retrans_us": retrans_us,
                                 "mtu": FTC_MTU},
                                **({"feedback_port": "fb"} if i == 0 or name == last else {}),
                                **({"state_port": "st"} if recover else {}))
        sessions = []
        if bfd:  # BFD with each neighbour on the chain's links
            if i > 0:
                sessions.append(bfd_session("prev", "prev", link_ip(i - 1, 1),
                                            link_ip(i - 1, 0), bfd_ms))
            if name != last:
                sessions.append(bfd_session("next", "next", link_ip(i, 0), link_ip(i, 1),
                                            bfd_ms))
        cfg = dict(wait, **{
            "node": {"lcores": f"0@{i % 2}"},
            "ports": ports, "nfs": node_nfs, "chains": [chain],
            **({"pool": {"mbufs": 32767}} if name == last else {}),
            **({"bfd": {"sessions": sessions}} if sessions else {}),
        })
        c.cfgs.append(cfg)
        node = L.node(name + tag, cfg, netns=ns[name])
        node.ns = ns[name]
        c.nodes.append(node)
    c.sink = L.node("sink" + tag, dict(wait, **{
        "node": {"lcores": "0@0"},
        "ports": [{"name": "in", "dev": af(0, "k_e", BIG)},
                  {"name": "cap", "dev": f"net_pcap1,rx_pcap={empty},"
                   f"tx_pcap={L.path(f'sink{tag}.pcap')}", "rx": False}],
        "chains": [{"name": "k", "services": [], "ingress_port": "in", "exit_port": "cap"}],
    }), netns=ns["k"])
    c.sink.capture = L.path(f"sink{tag}.pcap")
    if source:
        c.source = (source, src, L.path(f"source{tag}.log"))
    return c


def start(c, source=True):
    """The sink and the chain's nodes from the egress back; the forwarder,
    whose input flows at once, last; then the paced input, if any (unless
    `source` is False: start_source())."""
    c.sink.start(wait=False)
    for node in reversed(c.nodes[1:]):
        node.start(wait=False)
    for node in [c.sink] + c.nodes[1:]:
        node.wait_ready(120)
    c.nodes[0].start()
    if c.source and source:
        start_source(c)


def start_source(c):
    if c.source:
        rate, src, log = c.source
        c.source_proc = c.L.spawn(f"paced_source{c.tag}", lab.in_netns(c.ns["g"], [
            "/usr/bin/python3", PACED_SOURCE, "g_n0", src, "--rate", str(rate), "--log", log]))


def wait_bfd_up(c, timeout=60):
    for i, node in enumerate(c.nodes):
        for s in (["prev"] if i > 0 else []) + (["next"] if i < c.total - 1 else []):
            node.wait_bfd(s, "Up", timeout)


def source_progress(c):
    """[(CLOCK_MONOTONIC s, frames sent by then)] of the paced input, and
    the total once it ended (None while it runs)."""
    return paced_log(c.source[2])


class Orchestrator:
    """FTC's orchestrator, as the paper assumes one, with BFD for its eyes:
    it watches every live node's sessions, and when a node's neighbours see
    it go down, starts a replacement in its place.  Several nodes dying
    together are told apart by whose links went down within `settle_ms`."""

    def __init__(self, c, settle_ms=60):
        self.c = c
        self.settle_ms = settle_ms
        self.dead = set()
        self.timeline = []

    def _down(self):
        """Positions some live neighbour sees down, and the earliest
        last_change_ns of those sessions."""
        seen, first = set(), None
        for i, node in enumerate(self.c.nodes):
            if i in self.dead or not node.running():
                continue
            try:
                b = node.bfd()
            except Exception:
                continue
            for s, peer in (("prev", i - 1), ("next", i + 1)):
                e = b.get(s)
                if e is None or e["state"] == "Up" or peer in self.dead:
                    continue
                if e["state"] in ("Down", "AdminDown") and e.get("last_change_ns"):
                    seen.add(peer)
                    t = e["last_change_ns"]
                    first = t if first is None or t < first else first
        return seen, first

    def watch(self, timeout=30):
        """Wait for failures; returns ({positions}, detection ns)."""
        t0 = time.monotonic()
        while time.monotonic() - t0 < timeout:
            seen, first = self._down()
            if seen:
                time.sleep(self.settle_ms / 1000)  # a second node dying with it
                more, first2 = self._down()
                return seen | more, min(x for x in (first, first2) if x is not None)
            time.sleep(0.002)
        raise lab.TestFailure("the orchestrator saw no node go down")

    def _has_copy(self, q, p):
        """Whether node q holds a whole copy of NF p's state: a replica
        still rebuilding (a replacement itself, or repairing) answers no
        FETCH, and the recovering node waits for every replica it names."""
        try:
            return bool(self.c.nodes[q].query("/onvm/ftc").get(f"replica{p}_synced", 1))
        except Exception:
            return True  # (not known: named, and so waited for)

    def replace(self, dead, detected_ns):
        """Replacements for `dead` (positions), each in its place, fetching
        from the live replicas; returns their timelines."""
        c = self.c
        self.dead |= set(dead)
        started = []
        for p in sorted(dead):
            old = c.nodes[p]
            old.stop(sig=9)
            old.remove_runtime()
            cfg = copy.deepcopy(c.cfgs[p])
            fc = cfg["chains"][0]["ftc"]
            fc["recover"] = True
            if p < c.n_nf:
                fc["recover_from"] = [q for q in range(p + 1, p + c.f + 1)
                                      if q not in dead and self._has_copy(q, p)]
            k = c.replaced.get(p, 0) + 1
            c.replaced[p] = k
            node = c.L.node(f"n{p}{c.tag}_r{k}", cfg, netns=c.ns[f"n{p}"])
            node.ns = c.ns[f"n{p}"]
            t_launch = time.monotonic_ns()
            node.start(wait=False)
            started.append((p, node, t_launch))
        out = []
        for p, node, t_launch in started:
            node.wait_ready(120)
            t_up = time.monotonic_ns()
            c.nodes[p] = node
            self.dead.discard(p)

            def running():
                st = node.query("/onvm/ftc")
                return st if st.get("phase") == "running" else None
            st = lab.wait_until(running, 30, f"n{p}'s replacement has its state",
                                interval=0.005)
            t_state = time.monotonic_ns()

            def forwarding():
                s = node.query("/onvm/ftc")
                return s if (s.get("out_packets", 0) > 0 or s.get("released", 0) > 0) else None
            try:  # (the input may have ended: not waited for long)
                lab.wait_until(forwarding, 5, f"n{p}'s replacement forwards", interval=0.005)
                t_fwd = time.monotonic_ns()
            except lab.TestFailure:
                t_fwd = None
            out.append({"position": p, "detected_ns": detected_ns, "launched_ns": t_launch,
                        "up_ns": t_up, "state_ns": t_state, "forwarding_ns": t_fwd,
                        "fetch_us": st.get("fetch_us", 0), "loaded_seq": st.get("loaded_seq")})
        wait_bfd_up(c)
        self.timeline += out
        return out


def delivered(sink):
    """Frames the sink has taken in so far."""
    return sink.port("in")["rx"]


def ftc_state(node):
    return node.query("/onvm/ftc")


def digests(node):
    return node.query("/onvm/ftc/digest")


def read_exports(L, tag=""):
    out = {}
    for nf in ("mon", "vlan", "lb"):
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
