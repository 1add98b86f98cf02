# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 REINFORCE-NFV authors
"""onvm.remote_lab -- the four-node lab of remote resiliency and its
external-synchrony oracle, shared by tests/integration/test_remote_chain.py
(its scenarios) and the remote benchmarks (bench/remote_failover.py,
bench/remote_tput.py).

  pred:    port "src" (net_pcap, the input) -> stamped and logged -> "to_m"
           (or "to_s" after a failover)
  primary: "from_p" -> simple_forward -> "out", latched until the standby
           votes; RSync on "to_s"
  standby: "from_p" -> simple_forward -> "out" (nothing leaves before a
           takeover); RSync on "to_m"
  sink:    "in_m" -> capture sink-m.pcap, "in_s" -> capture sink-s.pcap

Every link is a veth pair with both ends on DPDK af_packet ports, each node
in a network namespace of its own (no address, no route: the kernel never
forwards a frame); build() makes the nodes and links (the chain's NFs
stateless, or the stateful chain basic_monitor -> vlan_tagger ->
load_balancer and its variants; the sync link optionally through
tests/integration/faulty_link.py).  The input is a trace repeated, each
frame tagged with a unique number in its source MAC (tagged_input: no NF
here reads MACs), so duplicates and order can be checked at the sink.

The oracle (check_sink, check_stateful, check_exports): nothing reaches the
sink twice, each capture in input order, per flow the standby's frames all
after the primary's, and the only frames lost the dead primary's tail
(check_tail_loss); for the stateful chain also every output its input
frame, tagged and balanced, and the promoted NFs' state exact.

For fault campaigns (onvm.campaign) the lab also takes a paced input that
goes on while the predecessor restarts (build(source=...), start_source,
source_progress), a sync link through the relay whose faults change at run
time (build(relay=True), set_relay), and NFs with hot standbys
(build(local=True)).
"""
import json
import os
import signal
import struct
import sys
import time

from onvm import lab, pcap

# The sync link's relay that drops, duplicates, reorders and delays (a
# program, run in the relay's namespace; this kernel has no netem).
FAULTY_LINK = os.path.join(lab.SRC, "tests", "integration", "faulty_link.py")
# The paced input of build(source=...): a program that sends a capture's
# frames into the predecessor's input port at a fixed rate, whether or not
# the predecessor runs (the outside world does not wait for a restart).
PACED_SOURCE = os.path.join(lab.SRC, "tests", "integration", "paced_source.py")

MTU = 9000  # the shim adds 12 bytes to full-size frames
STAGES, STAGE_PACKETS = 8, 64
PACE = "40mbit"  # about 12 k frames/s of this input


def ip_checksum(hdr):
    s = sum(struct.unpack(f">{len(hdr) // 2}H", hdr))
    while s >> 16:
        s = (s & 0xFFFF) + (s >> 16)
    return ~s & 0xFFFF


def new_flows(f, c):
    """IPv4 frame `f` with copy `c`'s own source address (xor of its last two
    bytes), so each copy of the trace is a new set of flows."""
    if struct.unpack_from(">H", f, 12)[0] != 0x0800 or len(f) < 34:
        return f
    ihl = (f[14] & 15) * 4
    b = bytearray(f)
    b[28] ^= (c >> 8) & 0xFF
    b[29] ^= c & 0xFF
    b[24:26] = b"\0\0"
    b[24:26] = struct.pack(">H", ip_checksum(bytes(b[14:14 + ihl])))
    return bytes(b)


def tagged_input(trace, copies, flows_per_copy=False, flows_every=0):
    """The trace `copies` times, frame k's source MAC = 02:00 + k;
    `flows_per_copy`: each copy's flows are new ones (new_flows);
    `flows_every` N: new ones every N frames instead."""
    frames = pcap.read_pcap(trace)
    out = []
    for c in range(copies):
        for f in frames:
            k = len(out) + 1
            if flows_every:
                f = new_flows(f, len(out) // flows_every)
            elif flows_per_copy:
                f = new_flows(f, c)
            out.append(f[:6] + b"\x02\x00" + struct.pack(">I", k) + f[12:])
    return out


def tag_of(frame):
    return struct.unpack_from(">I", frame, 8)[0]


def flow_of(frame):
    """(src ip, dst ip, proto, sport, dport) of an IPv4 frame, else None."""
    (et,) = struct.unpack_from(">H", frame, 12)
    if et != 0x0800 or len(frame) < 34:
        return None
    ihl = (frame[14] & 15) * 4
    proto = frame[23]
    src, dst = frame[26:30], frame[30:34]
    ports = (0, 0)
    if proto in (6, 17) and len(frame) >= 14 + ihl + 4:
        ports = struct.unpack_from(">HH", frame, 14 + ihl)
    return (src, dst, proto) + ports


def link(L, ns_a, a, ns_b, b):
    L.veth(ns_a, a, ns_b, b)
    for ns, ifn in ((ns_a, a), (ns_b, b)):
        lab.run_cmd(lab.in_netns(ns, ["ip", "link", "set", "dev", ifn, "mtu", str(MTU)]))


def switch(L, ns_sw, br, ends, learning=True):
    """A switch: one bridge in the namespace `ns_sw`, linked to every
    (namespace, interface) of `ends` -- a segment that reaches several
    nodes' ports, as a real switch would.  It says nothing itself (no
    address, IPv6 off in the lab's namespaces, IGMP snooping off).  With
    `learning` off it floods every frame (a trace's frames carry any MAC,
    a reply's source learned on the sender's own port would filter its
    flow's next frames there)."""
    lab.run_cmd(lab.in_netns(ns_sw, ["ip", "link", "add", br, "type", "bridge",
                                     "mcast_snooping", "0"]))
    lab.run_cmd(lab.in_netns(ns_sw, ["ip", "link", "set", br, "up"]))
    for i, (ns, ifn) in enumerate(ends):
        port = f"{br}_{i}"
        link(L, ns, ifn, ns_sw, port)
        lab.run_cmd(lab.in_netns(ns_sw, ["ip", "link", "set", port, "master", br]))
        if not learning:
            lab.run_cmd(lab.in_netns(ns_sw, ["ip", "link", "set", port, "type", "bridge_slave",
                                             "learning", "off"]))


def af(n, ifn, frames=4096, qdisc=False):
    """An af_packet port; `frames` sizes its rings (af_packet drops what a
    full ring cannot take, silently: 22.11 reports no kernel drops); `qdisc`:
    its frames go through the interface's qdisc (the PMD bypasses it by
    default), so tc can pace them."""
    return (f"net_af_packet{n},iface={ifn},qpairs=1,framecnt={frames}"
            f"{',qdisc_bypass=0' if qdisc else ''}")


BIG = 16384  # ring of a port that takes whole releases or the replay


def remote_common(role):
    return {"name": "web", "id": 7, "role": role}


BFD_MS = 10  # x 3: the predecessor -> primary session that triggers the failover


def bfd_session(name, port, local, peer, ms=BFD_MS):
    us = ms * 1000
    return {"name": name, "port": port, "local": local, "peer": peer,
            "desired_min_tx_us": us, "required_min_rx_us": us, "detect_mult": 3}


DPI_ARGS = ["-p", "0", "-H", "16", "-f", "4096"]  # nDPI's whole memory in a 16 MB heap


def stateful_nfs(L, name, rnd_tag, nd_heavy=False, dpi=False, multi=False, local=False):
    """basic_monitor -> vlan_tagger -> load_balancer, each with state (the
    issue's chain); exports of the node `name` under its name.  `nd_heavy`:
    nondet in vlan_tagger's place, making every packet it handles ND (count:1,
    each draw stored in the flow's entry); `dpi`: basic_monitor -> dpi (nDPI,
    its pointer-rich state in a region heap); `multi`: two instances of
    basic_monitor and of load_balancer (exports mon0/mon1, lb0/lb1), their
    markers aligned -- or (monitors, balancers), how many of each; `local`:
    every NF with a hot standby of its own ("resiliency": "local")."""
    nfs = _stateful_nfs(L, name, rnd_tag, nd_heavy, dpi, multi)
    if local:
        for nf in nfs:
            nf["resiliency"] = "local"
    return nfs


def _stateful_nfs(L, name, rnd_tag, nd_heavy, dpi, multi):
    policy, lbconf = L.path("vlan-policy.json"), L.path("lb.json")
    if not os.path.exists(policy):
        with open(policy, "w") as f:
            json.dump({"default": {"vlan": 42, "pcp": 3},
                       "rules": [{"proto": "tcp", "dport": 25, "vlan": 25}],
                       "idle_timeout_ms": 3600000, "flows": 4096}, f)
        with open(lbconf, "w") as f:
            json.dump({"backends": [{"ip": ip, "mac": mac} for ip, mac in BACKENDS],
                       "idle_timeout_ms": 3600000, "flows": 4096}, f)
    exp = lambda nf: L.path(f"{name}{rnd_tag}-{nf}.json")
    if dpi:
        return [{"name": "mon", "binary": "basic_monitor", "service": 1,
                 "args": ["-f", "4096", "-e", exp("mon"), "-p", "0"]},
                {"name": "dpi", "binary": "dpi", "service": 2,
                 "args": DPI_ARGS + ["-e", exp("dpi")]}]
    middle = ({"name": "nd", "binary": "nondet", "service": 2,
               "args": ["-m", "count:1", "-f", "4096", "-t", "0", "-e", exp("nd")]}
              if nd_heavy else
              {"name": "vlan", "binary": "vlan_tagger", "service": 2,
               "args": ["-c", policy, "-e", exp("vlan")]})
    n_mon, n_lb = multi if isinstance(multi, tuple) else (2, 2)
    mons = [{"name": f"mon{i}", "binary": "basic_monitor", "service": 1,
             "args": ["-f", "4096", "-e", exp(f"mon{i}"), "-p", "0"]} for i in range(n_mon)]
    lbs = [{"name": f"lb{i}", "binary": "load_balancer", "service": 3,
            "args": ["-c", lbconf, "-e", exp(f"lb{i}"), "-p", "0"]} for i in range(n_lb)]
    if multi:
        return mons + [middle] + lbs
    return [{"name": "mon", "binary": "basic_monitor", "service": 1,
             "args": ["-f", "4096", "-e", exp("mon"), "-p", "0"]},
            middle,
            {"name": "lb", "binary": "load_balancer", "service": 3,
             "args": ["-c", lbconf, "-e", exp("lb"), "-p", "0"]}]


BACKENDS = [(f"198.18.1.{i}", f"02:00:00:00:01:0{i}") for i in range(1, 5)]


def build(L, frames, rnd_tag="", idle=None, bfd=False, link_failover=True, faults=None,
          stateful=False, remote=True, nfs=None, paced=None, checkpoint_ms=5,
          nd_heavy=False, dpi=False, multi=False, standby_multi=None, standby_nf_cpus=None,
          source=None, relay=False, local=False, bfd_ms=BFD_MS, store=None, spare_store=None,
          state_mb=None, failover_by=None, reprotect=False, spare=False, data_cpu=None):
    """The four nodes; `idle` (e.g. {"max_sleep_us": 50}) goes to every node;
    `bfd`: a BFD session on the predecessor -> primary link triggers the
    failover (BFD then bypasses that link's pacing: it must not queue behind
    data).  For the benchmarks: `remote=False` builds the same nodes and
    links with no remote resiliency (the chain unprotected: the baseline);
    `nfs` = (NF list, services) replaces the chain's NFs; `paced` paces the
    predecessor's link to the primary (default: for `stateful`, whose kill
    must land mid-stream); `checkpoint_ms`: the primary's lazy cut period;
    `nd_heavy`: the stateful chain with nondet in the middle (every packet
    ND); `dpi`: the stateful chain basic_monitor -> dpi, with windows and
    transactions sized for nDPI's state (about 18 MB, all of it in the
    first cut and in a full one), paced at 8 Mbit/s (nDPI on two shared
    vCPUs: a faster input overflows the primary's af_packet ring); `multi`:
    the stateful chain with two instances of its first and last services
    (`standby_multi`, if not None, overrides it for the standby);
    `standby_nf_cpus`: the standby's nf_defaults.cpus (default: all).
    `data_cpu`: every manager's lcore and every NF on that one CPU (the
    other CPUs left to control threads and whatever the caller runs there).
    `source` (frames per second): the predecessor's input is an af_packet
    port on a veth ("p_g"), fed at that rate by paced_source.py from its
    other end ("g_p", in a namespace of its own) -- start_source()
    starts it; the input then goes on while the predecessor restarts, and
    the link to the primary is not paced.  `relay`: the sync link goes
    through faulty_link.py, faultless until told otherwise (set_relay(),
    through its control file), the primary configured as without it;
    `local`: the chain's NFs have hot standbys ("resiliency": "local");
    `bfd_ms`: BFD's interval (x 3: its detection time); `store` (a chain's
    "store" object): the chain is stateless (docs/design/stateless.md)
    instead, its state in that store -- with `remote`, on the primary and on
    the standby, a spare, behind the predecessor (their chains'
    "predecessor": the predecessor's log and failover, the state in the
    store); without, on the primary only, the predecessor just forwarding
    (the stateless figures of bench/stateless_lab.py); `spare_store`: the
    spare's, if not the same.  `reprotect`: the standby may be made primary
    after a takeover (its latch set up at start), and `primary.as_standby(
    epoch)` is the primary node's configuration as that chain's new standby
    (a node object of the same name, to start once the primary is dead);
    every chain node's `standby_config(epoch)` is that configuration as a
    dict (what onvm.cluster_config renders for it must equal it).
    `spare` (with `reprotect`): a fifth node, "spare", on the primary's
    side of the chain -- the predecessor's primary link and the standby's
    sync link are switches (switch()) that reach the primary's and the
    spare's ports, the spare's output goes to the sink's "in_x" (capture
    sink-x.pcap); `pred.spare` is its node (never started: its prefix, for
    an agent) and `pred.spare.as_standby(epoch)` its standby configuration
    (the chain's new standby once the primary is gone)."""
    assert not (spare and (faults or relay)) and (reprotect or not spare)
    assert data_cpu is None or standby_nf_cpus is None  # (both set nf_defaults)
    if paced is None:
        paced = stateful and not source
    src = L.path(f"input{rnd_tag}.pcap")
    pcap.write_pcap(src, frames)
    empty = L.path("empty.pcap")
    pcap.write_pcap(empty, [])
    # One namespace per node: like separate machines, and af_packet's
    # fanout group ids (pid ^ ifindex) cannot collide between nodes.
    relayed = bool(faults) or relay
    ns = {k: L.netns(k + rnd_tag) for k in ("p", "m", "s", "k") + (("f",) if relayed else ()) +
          (("g",) if source else ()) + (("x", "w") if spare else ())}
    # `faults`: the sync link is m_s <-> f_m, the relay, f_s <-> s_m
    sync = (("m_s", "f_m"), ("s_m", "f_s")) if relayed else (("m_s", "s_m"),)
    if spare:  # the primary's side a segment (a switch), the spare on it
        switch(L, ns["w"], "a_in", [(ns["p"], "p_m"), (ns["m"], "m_p"), (ns["x"], "x_p")],
               learning=False)
        switch(L, ns["w"], "a_sync", [(ns["s"], "s_m"), (ns["m"], "m_s"), (ns["x"], "x_s")],
               learning=False)
        sync = (("x_k", "k_x"),)
    for a, b in ((() if spare else (("p_m", "m_p"),)) + (("p_s", "s_p"), ("m_k", "k_m"),
                                                         ("s_k", "k_s")) + sync):
        link(L, ns[a[0]], a, ns[b[0]], b)
    if source:  # the input's wire; its sender in a namespace of its own: DPDK's
        # af_packet binds a port's socket to its interface only after setting
        # up its ring, so a starting node's ports briefly get every frame of
        # their namespace (a sender's frames twice: sent, and received)
        link(L, ns["g"], "g_p", ns["p"], "p_g")
    relay_proc, control = None, L.path(f"relay{rnd_tag}.json")
    if relayed:
        relay_proc = L.spawn(f"faulty_link{rnd_tag}", lab.in_netns(ns["f"], [
            "/usr/bin/python3", FAULTY_LINK, "f_m", "f_s",
            "--stats", L.path(f"faults{rnd_tag}.json" if relay else "faults.json")] +
            (faults or ["--seed", "0"]) + (["--control", control] if relay else [])))
    # With BFD, the input and the replay are paced so that the link fails
    # mid-stream (the predecessor sends a whole trace at once).  A token
    # bucket with a deep queue paces without dropping (this kernel has no
    # netem).  Only then do the ports go through the qdisc (qdisc_bypass=0):
    # frames held in the qdisc count against the socket's send buffer, and
    # af_packet leaves what does not fit in its TX ring until the next send
    # -- BFD's frames provide one every 10 ms on the primary's link; a trace
    # that just ends would leave its tail there, so the standby's link (no
    # BFD) is not paced: its receiving ring takes the whole replay.
    tc = lambda *argv: lab.run_cmd(lab.in_netns(ns["p"], ["tc"] + list(argv)))
    pace = ["tbf", "rate", "8mbit" if dpi else PACE, "burst", "32kb", "limit", "256mb"]
    if bfd:  # BFD (UDP 3784) in class 1:10, unpaced; the rest (1:20) paced
        tc("qdisc", "add", "dev", "p_m", "root", "handle", "1:", "htb", "default", "20",
           "r2q", "1000")
        tc("class", "add", "dev", "p_m", "parent", "1:", "classid", "1:10", "htb", "rate",
           "1gbit")
        tc("class", "add", "dev", "p_m", "parent", "1:", "classid", "1:20", "htb", "rate", PACE,
           "ceil", PACE)
        # a deep FIFO under the paced class (this kernel has no pfifo)
        tc("qdisc", "add", "dev", "p_m", "parent", "1:20", "handle", "20:", "tbf", "rate",
           "1gbit", "burst", "32kb", "limit", "256mb")
        tc("filter", "add", "dev", "p_m", "parent", "1:", "protocol", "ip", "prio", "1", "u32",
           "match", "ip", "dport", "3784", "0xffff", "flowid", "1:10")
    elif paced:  # paced so that the kill lands mid-stream (the tail
        # stuck in the TX ring goes to the dead primary: the replay has it)
        tc("qdisc", "add", "dev", "p_m", "root", *pace)

    wait = {"startup": {"link_wait_ms": 60000}}
    if idle:
        wait["idle"] = idle
    # Two cores for four managers and two NFs: spread the managers (or all
    # on data_cpu, their NFs too).
    cpu = (lambda c: {"node": {"lcores": f"0@{c}"}}) if data_cpu is None else \
        (lambda c: {"node": {"lcores": f"0@{data_cpu}"},
                    "nf_defaults": {"cpus": str(data_cpu)}})
    sink = L.node("sink" + rnd_tag, dict(wait, **cpu(0), **{
        "ports": [{"name": "in_m", "dev": af(0, "k_m", BIG)},
                  {"name": "in_s", "dev": af(1, "k_s", BIG)},
                  {"name": "cap_m", "dev": f"net_pcap0,rx_pcap={empty},"
                   f"tx_pcap={L.path(f'sink-m{rnd_tag}.pcap')}", "rx": False},
                  {"name": "cap_s", "dev": f"net_pcap1,rx_pcap={empty},"
                   f"tx_pcap={L.path(f'sink-s{rnd_tag}.pcap')}", "rx": False}]
                 + ([{"name": "in_x", "dev": af(2, "k_x", BIG)},
                     {"name": "cap_x", "dev": f"net_pcap2,rx_pcap={empty},"
                      f"tx_pcap={L.path(f'sink-x{rnd_tag}.pcap')}", "rx": False}]
                    if spare else []),
        "chains": [{"name": "m", "services": [], "ingress_port": "in_m", "exit_port": "cap_m"},
                   {"name": "s", "services": [], "ingress_port": "in_s", "exit_port": "cap_s"}]
                  + ([{"name": "x", "services": [], "ingress_port": "in_x",
                       "exit_port": "cap_x"}] if spare else []),
    }), netns=ns["k"])
    def chain_config(name, pred_if, sync_if, out_if, role, epoch=None):
        sl_here = bool(store) and (role == "primary" or remote)
        sync_port = "to_s" if role == "primary" else "to_m"
        rc = dict(remote_common(role), chain="c", predecessor_port="from_p",
                  **({"epoch": epoch} if epoch else {}))
        if role == "primary" and faults:
            # votes lost or late: retransmitted every 2 ms, aborted after 3
            # tries; no lazy checkpoint, so nothing is trimmed
            rc.update(standby_port=sync_port, stages=STAGES, stage_packets=STAGE_PACKETS,
                      stage_close_us=200, retrans_us=2000, max_tries=3, standby_window=16,
                      checkpoint_ms=60000)
        elif role == "primary":
            rc.update(standby_port=sync_port, stages=STAGES, stage_packets=STAGE_PACKETS,
                      stage_close_us=200,
                      **({"stage_state_kb": 65536, "state_window_mb": 96} if dpi else {}),
                      # a vote may wait for a descheduled standby: two cores
                      # shared by four managers (and CI's load) can stall one
                      # for tens of ms, and 5 x 1 ms would abort the stage
                      # (its packets dropped, counted: not what this tests)
                      retrans_us=5000, max_tries=20, standby_window=16,
                      checkpoint_ms=checkpoint_ms)
        else:
            # a cut of the stateful chain takes hundreds of fragments
            rc.update(primary_port=sync_port, window=32,
                      max_frags=4096 if stateful or nfs else 64, txts_flows=4096)
            if reprotect:  # once made primary: the primary's latch
                rc.update(reprotect=True, stages=STAGES, stage_packets=STAGE_PACKETS,
                          stage_close_us=200, retrans_us=5000, max_tries=20,
                          standby_window=16, checkpoint_ms=checkpoint_ms)
            if dpi:  # the chain's whole state in one transaction: 18 MB
                rc.update(window=8, max_frags=32768, state_window_mb=96)
        return dict(wait, **cpu(1 if role == "primary" else 0), **{
            "ports": [{"name": "from_p", "dev": af(0, pred_if, BIG)},
                      {"name": sync_port, "dev": af(1, sync_if)},
                      {"name": "out", "dev": af(2, out_if)}],
            "nfs": (nfs[0] if nfs else
                    stateful_nfs(L, name, rnd_tag, nd_heavy, dpi,
                                 multi if role == "primary" or standby_multi is None
                                 else standby_multi, local) if stateful else
                    [{"name": "fwd", "binary": "simple_forward", "service": 1}]),
            "chains": [{"name": "c",
                        "services": (nfs[1] if nfs else [1, 2] if dpi else [1, 2, 3] if stateful
                                     else [1]),
                        "ingress_port": "from_p", "exit_port": "out",
                        **({"resiliency": "stateless",
                            "store": (spare_store or store) if role == "standby" else store}
                           if sl_here else {}),
                        **({"predecessor": {"id": remote_common(role)["id"],
                                            "role": "primary" if role == "primary"
                                            else "spare"}}
                           if sl_here and remote else {})}],
            **({"remote": {"chains": [rc]}} if remote and not store else {}),
            # a stateless chain's log, a replay's copies and its held exit
            # (the manager wants the three at most half the pool: 2 x 3.5
            # x the log)
            **({"pool": {"mbufs": max(65535, 8 * max(
                (s or {}).get("log_packets", 0) for s in (store, spare_store)) - 1)}}
               if sl_here else {}),
            # two windows of 96 MB: nDPI's regions twice (canonical and
            # replica) and, on the primary, its cut log
            **({"state": {"pool_mb": state_mb}} if state_mb else
               {"state": {"pool_mb": 256}} if dpi else
               {"state": {"pool_mb": 128}} if multi else {}),  # five 16 MB windows
            **({"nf_defaults": {"cpus": standby_nf_cpus}}
               if standby_nf_cpus and role == "standby" else {}),
            # (with `reprotect` on both chain nodes: either may be primary)
            **({"bfd": {"sessions": [bfd_session("to_p", "from_p", *(
                ("198.18.3.2", "198.18.3.1") if pred_if in ("m_p", "x_p")  # (side a)
                else ("198.18.4.2", "198.18.4.1")),
                bfd_ms)]}}
               if bfd and (role == "primary" or reprotect) else {}),
        })

    def chain_node(name, pred_if, sync_if, out_if, role, epoch=None):
        node = L.node(name + rnd_tag, chain_config(name, pred_if, sync_if, out_if, role, epoch),
                      netns=ns[{"primary": "m", "standby": "s", "spare": "x"}[name]])
        # (its standby configuration at an epoch, as a dict: what a
        # control plane renders for it is compared with this)
        node.standby_config = lambda epoch: chain_config(name, pred_if, sync_if, out_if,
                                                         "standby", epoch)
        return node

    standby = chain_node("standby", "s_p", "s_m", "s_k", "standby")
    primary = chain_node("primary", "m_p", "m_s", "m_k", "primary")
    if reprotect:  # each chain node's standby configuration, at an epoch
        primary.as_standby = lambda epoch: chain_node("primary", "m_p", "m_s", "m_k", "standby",
                                                      epoch).take_prefix(primary)
        standby.as_standby = lambda epoch: chain_node("standby", "s_p", "s_m", "s_k", "standby",
                                                      epoch).take_prefix(standby)
    pred = L.node("pred" + rnd_tag, dict(wait, **cpu(1), **{
        "ports": [{"name": "src", "dev": af(2, "p_g", BIG) if source else
                   f"net_pcap0,rx_pcap={src},tx_pcap={L.path(f'pred-src{rnd_tag}.pcap')}"},
                  {"name": "to_m", "dev": af(0, "p_m", qdisc=bfd or paced)},
                  {"name": "to_s", "dev": af(1, "p_s")}],
        "chains": [{"name": "in", "services": [], "ingress_port": "src", "exit_port": "to_m"}],
        **({"remote": {"chains": [dict(remote_common("predecessor"), **{
            "primary_port": "to_m", "standby_port": "to_s", "log_packets": 1 << 20,
            "log_mb": 256, "link_failover": link_failover},
            **({"bfd": "to_m"} if bfd else {}),
            **({"standby_bfd": "to_s"} if bfd and reprotect else {}),
            **({"failover_by": failover_by} if failover_by else {}))]}} if remote else {}),
        **({"bfd": {"sessions": [bfd_session("to_m", "to_m", "198.18.3.1", "198.18.3.2",
                                             bfd_ms)] +
                    ([bfd_session("to_s", "to_s", "198.18.4.1", "198.18.4.2", bfd_ms)]
                     if reprotect else [])}}
           if bfd else {}),
    }), netns=ns["p"])
    pred.ns, primary.ns, standby.ns, sink.ns = ns["p"], ns["m"], ns["s"], ns["k"]
    pred.spare = None
    if spare:
        pred.spare = chain_node("spare", "x_p", "x_s", "x_k", "standby")
        pred.spare.ns = ns["x"]
        pred.spare.as_standby = lambda epoch: chain_node("spare", "x_p", "x_s", "x_k", "standby",
                                                         epoch).take_prefix(pred.spare)
    pred.relay = relay_proc
    pred.relay_ns = ns.get("f")
    pred.relay_control = control if relay else None
    pred.source = (source, src, L.path(f"source{rnd_tag}.log")) if source else None
    pred.source_ns = ns.get("g")
    return sink, standby, primary, pred


def start_source(L, pred, tag=""):
    """Start build(source=...)'s paced input (after the predecessor is
    ready); its log (source_progress) maps time to the frames sent."""
    rate, src, log = pred.source
    return L.spawn(f"paced_source{tag}", lab.in_netns(pred.source_ns, [
        "/usr/bin/python3", PACED_SOURCE, "g_p", src, "--rate", str(rate), "--log", log]))


def source_progress(pred):
    """[(CLOCK_MONOTONIC s, frames sent by then)] of the paced input, and
    the total once it ended (None while it runs)."""
    return paced_log(pred.source[2])


def paced_log(path):
    """paced_source.py's log at `path`: [(CLOCK_MONOTONIC s, frames sent by
    then)], and the total once it ended (None while it runs)."""
    points, total = [], None
    try:
        with open(path) as f:
            for line in f:
                w = line.split()
                if len(w) == 2 and w[0] == "end":
                    total = int(w[1])
                elif len(w) == 2:
                    points.append((float(w[0]), int(w[1])))
    except OSError:
        pass
    return points, total


def set_relay(pred, **faults):
    """Change the relay's faults now (build(relay=True)): drop, dup,
    reorder, delay (probabilities), delay_us, hold_ms (hold every frame,
    then send them in order); none given: a faultless wire again."""
    tmp = pred.relay_control + ".tmp"
    with open(tmp, "w") as f:
        json.dump(faults, f)
    os.rename(tmp, pred.relay_control)
    os.kill(pred.relay.pid, signal.SIGUSR1)


def quiet(standby, sink):
    """The standby sent all it passed, and the sink captured it."""
    a = remote(standby)["out_passed"]
    time.sleep(0.2)
    return remote(standby)["out_passed"] == a and sink.port("in_s")["rx"] >= a


def remote(node):
    return node.query("/onvm/remote")["web"]


def check_tail_loss(L, flow_of_tag, tags_m, tags_s, lost, per_flow=False):
    """What a dead primary may lose: only its tail -- stages the standby
    voted for (presumed commit: their flows' TxTs say released) but it did
    not release, and its port buffers: check_phase_loss over the two.
    `per_flow`: flows interleave (several instances of a service), so only
    per flow (the standby suppresses, per flow, what the TxTs covers)."""
    check_phase_loss(L, flow_of_tag, [tags_m, tags_s], lost, per_flow)


def check_sink(L, frames, got_m, got_s, allow_loss=0, tail_only=True, then=()):
    """Exactly-once, order, origin.  `then`: the outputs of the nodes that
    ran the chain after those two, in turn (failovers after a
    re-protection), held to the same.  `tail_only`: a frame may be lost
    only as the tail of a node that died (check_phase_loss), each node
    after the first having taken over from a dead one; without, anywhere
    (up to `allow_loss`, in all)."""
    sent = {tag_of(f): f for f in frames}
    seen = set()
    phases = [("primary", got_m), ("standby", got_s)] + [
        (f"node {i + 3}", got) for i, got in enumerate(then)]
    for where, got in phases:
        for f in got:
            t = tag_of(f)
            L.expect(t in sent, f"{where}: frame with tag {t} was never sent")
            L.expect(t not in seen, f"{where}: frame {t} reached the sink twice")
            seen.add(t)
            L.expect(bytes(f) == sent.get(t, b""), f"{where}: frame {t} differs from the input")
        tags = [tag_of(f) for f in got]
        L.expect(tags == sorted(tags), f"{where}: frames out of order")
    # per flow: everything the standby sent comes after what the primary
    # sent (and each later node's after all before it)
    last_m = {}
    for (before, got_b), (after, got_a) in zip(phases, phases[1:]):
        for f in got_b:
            last_m[flow_of(f)] = tag_of(f)
        for f in got_a:
            fl = flow_of(f)
            L.expect(tag_of(f) > last_m.get(fl, 0),
                     f"flow {fl}: {after} sent {tag_of(f)} after the {before}'s "
                     f"{last_m.get(fl)}")
    missing = len(frames) - len(seen)
    lost = sorted(set(sent) - seen)
    if lost and tail_only:
        hand_overs = [(max((tag_of(f) for f in a), default=0),
                       min((tag_of(f) for f in b), default=None))
                      for (_, a), (_, b) in zip(phases, phases[1:])]
        print(f"lost tags {lost[0]}..{lost[-1]} ({len(lost)}); each node's last and the "
              f"next one's first: {hand_overs}")
        check_phase_loss(L, lambda t: flow_of(sent[t]),
                         [[tag_of(f) for f in got] for _, got in phases], lost)
    L.expect(0 <= missing <= allow_loss, f"{missing} input frames never reached the sink")
    return missing


def check_phase_loss(L, flow_of_tag, phases, lost, per_flow=False):
    """Several nodes ran the chain in turn, each handing over to the next
    by its death (a failover): every lost frame is the tail of one of them
    -- after all that node sent (`per_flow`: not checked, flows
    interleave), and per flow between its frames and the next node's.  A
    frame lost anywhere else (mid-way through a node's run: a
    re-protection, a hiccup) fails."""
    per = []  # each phase's {flow: (first, last)}
    for tags in phases:
        d = {}
        for t in tags:
            fl = flow_of_tag(t)
            first, last = d.get(fl, (t, t))
            d[fl] = (min(first, t), max(last, t))
        per.append(d)
    ends = [max(tags, default=0) for tags in phases]
    for t in lost:
        fl = flow_of_tag(t)
        ok = any((per_flow or t > ends[k]) and per[k].get(fl, (0, 0))[1] < t <
                 per[k + 1].get(fl, (1 << 62, 0))[0] for k in range(len(phases) - 1))
        L.expect(ok, f"frame {t} (flow {fl}) lost, not in any dead node's tail: each "
                 f"node's last {ends}, the flow's spans "
                 f"{[d.get(fl) for d in per]}")
        if not ok:
            return  # (one is enough to say)


def ip4(b):
    return ".".join(str(x) for x in b)


def check_stateful(L, frames, got_m, got_s, allow_loss, vlan=True, tail=True, per_flow=False,
                   then=()):
    """The stateful chain's outputs: each an input frame with a VLAN tag
    (vlan_tagger; `vlan` False: none, nondet in its place) and its destination
    rewritten to a backend (load_balancer), once, in order (`per_flow`: in
    order per flow -- several instances of a service interleave flows), per
    flow the standby after the primary, every flow on one backend across both
    nodes; losses only the dead primary's tail (`tail` False: anywhere,
    counted by the caller).  `then`: the outputs of the nodes that ran the
    chain after those two, in turn (failovers after a re-protection), held
    to the same."""
    sent = {tag_of(f): f for f in frames}
    seen, backend = set(), {}
    phases = [("primary", got_m), ("standby", got_s)] + [
        (f"node {i + 3}", got) for i, got in enumerate(then)]
    for where, got in phases:
        tags = []
        for f in got:
            t = tag_of(f)
            tags.append(t)
            if not L.expect(t in sent and t not in seen, f"{where}: tag {t} unknown or twice"):
                continue
            seen.add(t)
            want = sent[t]
            if vlan:
                L.expect(f[12:14] == b"\x81\x00", f"{where}: frame {t} has no VLAN tag")
            inner = f[:12] + f[16:] if vlan else bytes(f)
            L.expect(len(inner) == len(want) and inner[6:14] == want[6:14],
                     f"{where}: frame {t} is not its input, tagged")
            fl = flow_of(want)
            if fl is not None and len(inner) >= 34:
                L.expect(inner[26:30] == want[26:30], f"{where}: frame {t}: source rewritten")
                b = (inner[0:6], inner[30:34])
                L.expect(backend.setdefault(fl, b) == b,
                         f"flow {fl}: backend {b} after {backend.get(fl)} ({where}, frame {t})")
                L.expect(ip4(b[1]) in [ip for ip, _ in BACKENDS], f"frame {t}: not a backend")
        if per_flow:
            by_flow = {}
            for t in tags:
                if t in sent:
                    by_flow.setdefault(flow_of(sent[t]), []).append(t)
            bad = [fl for fl, ts in by_flow.items() if ts != sorted(ts)]
            L.expect(not bad, f"{where}: {len(bad)} flows out of order, e.g. {bad[:2]}")
        else:
            L.expect(tags == sorted(tags), f"{where}: frames out of order")
    last_m = {}
    for (before, got_b), (after, got_a) in zip(phases, phases[1:]):
        for f in got_b:
            if tag_of(f) in sent:
                last_m[flow_of(sent[tag_of(f)])] = tag_of(f)
        for f in got_a:
            fl = flow_of(sent.get(tag_of(f), f))
            L.expect(tag_of(f) > last_m.get(fl, 0), f"flow {fl}: {after}'s {tag_of(f)} not "
                     f"after the {before}'s {last_m.get(fl)}")
    lost = sorted(set(sent) - seen)
    if tail:
        check_tail_loss(L, lambda t: flow_of(sent[t]), [tag_of(f) for f in got_m],
                        [tag_of(f) for f in got_s], lost, per_flow)
    L.expect(len(lost) <= allow_loss, f"{len(lost)} frames lost, more than {allow_loss}")
    return len(lost), backend


def check_exports(L, frames, mon, lb, backend, nd=None):
    """The promoted chain's state: basic_monitor and load_balancer (and nondet,
    `nd`) counted every input packet exactly once (the cut plus the replay
    after it: none twice, none missed), and the balancer's table holds each
    flow's backend.  nondet (count:1) drew for every packet it handled: its
    ND events equal its packets, per flow and in total (a draw of a packet
    the cut already held, made again, would count twice)."""
    want = {}
    for f in frames:
        fl = flow_of(f)
        if fl is not None:
            key = (ip4(fl[0]), ip4(fl[1]), fl[2], fl[3], fl[4])
            want[key] = want.get(key, 0) + 1
    for name, doc in (("basic_monitor", mon), ("load_balancer", lb)) + ((("nondet", nd),) if nd
                                                                        else ()):
        got = {(e["src"], e["dst"], e["proto"], e["sport"], e["dport"]): e["packets"]
               for e in doc["flows"]}
        L.expect(got == want, f"{name} on the promoted standby: per-flow packets "
                 f"{sorted(got.items())[:4]}... want {sorted(want.items())[:4]}... "
                 f"({sum(got.values())} vs {sum(want.values())})")
    if nd:
        L.expect(nd["packets"] == len(frames) and nd["nd_events"] == nd["packets"],
                 f"nondet on the promoted standby: {nd['packets']} packets, "
                 f"{nd['nd_events']} ND events, {len(frames)} input frames")
        bad = [e for e in nd["flows"] if e["nd_events"] != e["packets"]]
        L.expect(not bad, f"nondet: flows whose ND events are not their packets: {bad[:3]}")
    for e in lb["flows"]:
        key = (bytes(int(x) for x in e["src"].split(".")), bytes(int(x) for x in e["dst"].split(".")),
               e["proto"], e["sport"], e["dport"])
        if key in backend:
            L.expect(e["backend_ip"] == ip4(backend[key][1]),
                     f"load_balancer's table: flow {key} on {e['backend_ip']}, "
                     f"the capture says {ip4(backend[key][1])}")


def instances_merged(L, docs, nf):
    """The exports of a service's instances as one: every flow in exactly
    one of them (a flow hashes to the same rank on both nodes, so its state
    is in one instance's cut and restored to the same rank), each instance
    with some."""
    owner = {}
    for i, d in enumerate(docs):
        L.expect(d["flows"], f"{nf}{i} on the promoted standby handled no flow")
        for e in d["flows"]:
            key = (e["src"], e["dst"], e["proto"], e["sport"], e["dport"])
            L.expect(owner.setdefault(key, i) == i,
                     f"flow {key} in both {nf}{owner[key]} and {nf}{i} on the promoted standby")
    return {"flows": [e for d in docs for e in d["flows"]]}


def dump(nodes):
    """What every node says, for a failing run's log."""
    for node in nodes:
        try:
            print(f"--- {node.name}: /onvm/remote {node.query('/onvm/remote')}", file=sys.stderr)
            print(f"--- {node.name}: ports {node.ports()}", file=sys.stderr)
            print(f"--- {node.name}: nfs {node.query('/onvm/nfs')}", file=sys.stderr)
        except Exception as e:  # a killed node
            print(f"--- {node.name}: {e}", file=sys.stderr)


NODES = []


def start_all(sink, standby, primary, pred):
    """The chain's nodes first, the predecessor (whose input flows at once)
    last."""
    NODES[:] = [pred, primary, standby, sink]
    for node in (sink, standby, primary):
        node.start(wait=False)
    for node in (sink, standby, primary):
        node.wait_ready(120)
    pred.start()
