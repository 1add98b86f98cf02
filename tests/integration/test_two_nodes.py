#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 REINFORCE-NFV authors
"""Two nodes linked by memif: a trace replayed on node A leaves node B
complete and in order.

  node A: port "trace" (net_pcap, reads tor.pcap) -> simple_forward -> port
          "link" (net_memif)
  node B: port "link" (net_memif) -> simple_forward -> port "out" (net_pcap,
          output only, writes a capture)

Usage: test_two_nodes.py client-sends | server-sends | no-peer
  client-sends: A's memif is the client, B's the server;
  server-sends: A's memif is the server, B's the client;
  no-peer:      node A alone, its memif server never gets a client (below).

Ordering.  DPDK's memif client connects once, when its port starts, and the
server accepts it only if its own port is already started; node A's net_pcap
trace is read as soon as A's RX unit runs.  The manager covers this itself:
after starting its ports it waits (startup.link_wait_ms) until every link is
up before its RX unit runs.  So the test starts the server node, waits until
its memif port is started (/ethdev/info dev_started) while the node is still
waiting for its link, then starts the client node; both then forward.  In
server-sends, the test also asserts that A read nothing from its trace while
its link was down.

Asserted (client-sends, server-sends): B's capture holds exactly the trace's frames in order; A's link
port sent them all and B's received them all, with no drops of any kind on
either node; A's link tx_bytes equal B's link rx_bytes; both links are up
and neither node started with a link down; both managers exit 0 and leave
nothing behind (memif socket included).

no-peer: node A with startup.link_wait_ms 200 and no node B.  Asserted: A
logs that it starts with its link down, and every frame routed to the down
link is counted once as a TX drop (tx_drop and /onvm/drops port_tx_full ==
frames, tx == 0, tx_bytes == 0), with no other drops; A exits 0.
"""
import os
import sys

from onvm import lab, pcap, traces


def main(L, scenario):
    a_role, b_role = {"client-sends": ("client", "server"),
                      "server-sends": ("server", "client")}[scenario]
    trace = traces.trace("tor.pcap")
    frames = pcap.read_pcap(trace)
    n = len(frames)
    sock = f"/tmp/onvm-it-{os.getpid()}.sock"
    L.extra_paths.append(sock)
    out = L.path("b-out.pcap")
    node_a = L.node("nodeA", {
        "startup": {"link_wait_ms": 60000},
        "ports": [{"name": "trace",
                   "dev": f"net_pcap0,rx_pcap={trace},tx_pcap={L.path('a-unused.pcap')}"},
                  {"name": "link", "dev": f"net_memif0,role={a_role},socket={sock},id=0"}],
        "nfs": [{"name": "fwd", "binary": "simple_forward", "service": 1}],
        "chains": [{"name": "a", "services": [1], "ingress_port": "trace",
                    "exit_port": "link"}],
    })
    node_b = L.node("nodeB", {
        "startup": {"link_wait_ms": 60000},
        "ports": [{"name": "link", "dev": f"net_memif0,role={b_role},socket={sock},id=0"},
                  {"name": "out", "dev": f"net_pcap0,tx_pcap={out}", "rx": False}],
        "nfs": [{"name": "fwd", "binary": "simple_forward", "service": 1}],
        "chains": [{"name": "b", "services": [1], "ingress_port": "link", "exit_port": "out"}],
    })
    if a_role == "server":
        server, s_port, client = node_a, 1, node_b
    else:
        server, s_port, client = node_b, 0, node_a

    server.start(wait=False)
    server.wait_telemetry()
    lab.wait_until(lambda: server.query(f"/ethdev/info,{s_port}").get("dev_started") == 1, 60,
                   f"{server.name}'s memif server port to start", alive=server.assert_running)
    if server is node_a:
        lab.check(node_a.port("trace")["rx"] == 0 and "ONVM_MGR_READY" not in node_a.log(),
                  "node A started reading its trace before its memif link was up")
    client.start()
    server.wait_ready()
    lab.check(node_a.link_up(1) and node_b.link_up(0), "memif link is not up on both nodes")
    for node in (node_a, node_b):
        L.expect("link still down" not in node.log(), f"{node.name} started with a link down")

    def settled():  # every frame is out of B, or out of A and as far as it will get
        a, b = node_a.port("link"), node_b.port("out")
        return b["tx"] >= n or (a["tx"] + a["tx_drop"] >= n and b["tx"] >= a["tx"])
    lab.wait_until(settled, 60, "the trace to cross both nodes", alive=node_b.assert_running)
    b_out = node_b.port("out")
    a_link, b_link = node_a.port("link"), node_b.port("link")
    L.expect(node_a.port("trace")["rx"] == n, f"node A trace port rx, want {n}")
    L.expect(a_link["tx"] == n and a_link["tx_drop"] == 0,
             f"node A link tx {a_link['tx']} tx_drop {a_link['tx_drop']}, want {n} / 0" +
             (" -- memif link up did not mean the peer could receive yet"
              if a_link["tx_drop"] else ""))
    L.expect(b_link["rx"] == n, f"node B link rx {b_link['rx']}, want {n}")
    L.expect(a_link["tx_bytes"] == b_link["rx_bytes"],
             f"node A link tx_bytes {a_link['tx_bytes']} (tx {a_link['tx']}) != node B link "
             f"rx_bytes {b_link['rx_bytes']} (rx {b_link['rx']}): "
             "bytes counted for dropped frames?")
    L.expect(b_out["tx"] == n and b_out["tx_drop"] == 0,
             f"node B out tx {b_out['tx']} tx_drop {b_out['tx_drop']}, want {n} / 0")
    for node in (node_a, node_b):
        drops = {k: v for k, v in node.drops().items() if v}
        L.expect(not drops, f"{node.name}: drops {drops}")

    for node in (node_b, node_a):
        rc = node.stop()
        L.expect(rc == 0, f"{node.name}: manager exit status {rc}")
        L.expect(not node.leftover_nfs, f"{node.name}: NFs alive after the manager: "
                                        f"{node.leftover_nfs}")
        L.expect(not node.runtime_leftovers(),
                 f"{node.name}: runtime files left: {node.runtime_leftovers()}")
    L.expect(not os.path.exists(sock), f"memif socket {sock} left behind")
    pcap.compare_frames(pcap.read_capture_out(out), frames, "node B output")
    print(f"{scenario}: {n} frames crossed node A -> memif -> node B intact and in order")


def no_peer(L):
    trace = traces.trace("smtp.pcap")
    n = len(pcap.read_pcap(trace))
    sock = f"/tmp/onvm-it-{os.getpid()}.sock"
    L.extra_paths.append(sock)
    node = L.node("lonely", {
        "startup": {"link_wait_ms": 200},
        "ports": [{"name": "trace",
                   "dev": f"net_pcap0,rx_pcap={trace},tx_pcap={L.path('unused.pcap')}"},
                  {"name": "link", "dev": f"net_memif0,role=server,socket={sock},id=0"}],
        "nfs": [{"name": "fwd", "binary": "simple_forward", "service": 1}],
        "chains": [{"name": "a", "services": [1], "ingress_port": "trace",
                    "exit_port": "link"}],
    }).start()
    L.expect("'link' link still down after 200 ms; starting anyway" in node.log(),
             "the node did not log that it starts with its link down")
    link = node.wait_port("link", "tx_drop", n)
    drops = {k: v for k, v in node.drops().items() if v}
    L.expect(link["tx"] == 0 and link["tx_drop"] == n,
             f"link tx {link['tx']} tx_drop {link['tx_drop']}, want 0 / {n}")
    L.expect(link["tx_bytes"] == 0,
             f"link tx_bytes {link['tx_bytes']} with tx 0: bytes of dropped frames counted")
    L.expect(drops == {"port_tx_full": n}, f"drops {drops}, want port_tx_full {n} only")
    rc = node.stop()
    L.expect(rc == 0, f"manager exit status {rc}")
    L.expect(not node.runtime_leftovers(), f"runtime files left: {node.runtime_leftovers()}")


if __name__ == "__main__":
    if len(sys.argv) != 2 or sys.argv[1] not in ("client-sends", "server-sends", "no-peer"):
        sys.exit(f"usage: {sys.argv[0]} client-sends|server-sends|no-peer")
    if sys.argv[1] == "no-peer":
        lab.run("memif_no_peer", no_peer)
    lab.run(f"two_nodes_{sys.argv[1].replace('-', '_')}", lambda L: main(L, sys.argv[1]))
