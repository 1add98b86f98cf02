#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 REINFORCE-NFV authors
"""A real TCP download across a failover of the protected chain (the
REINFORCE paper's Table III).

A kernel HTTP server (python3 -m http.server) in one network namespace
serves a 64 MB file of random bytes; a kernel TCP client in another
downloads it.  The server's data goes through the protected chain:

  server s0 -> pred "src" -> stamped, logged -> primary (or standby) ->
      basic_monitor (state) -> "out" -> sink "in_m"/"in_s" -> "to_cli" -> client c0

and the client's requests and ACKs come back on a direct veth (c1 -> s1),
outside the chain: only one direction needs protecting to show the point,
and it is the one carrying the data.  Static neighbour entries, no ARP;
the server's interface sends whole, checksummed frames (no TSO/GSO, no
checksum offload): af_packet hands the DPDK port what the kernel queued.

The primary's manager and its NF are SIGKILLed when a seeded share of the
file has been released (ONVM_SEED), then the operator fails the chain over;
the standby takes over, the predecessor replays its log, and TCP recovers
what the dead primary held (its retransmissions) -- the chain never
delivers a segment twice.  Asserted: every download completes, with the
file's SHA-256; the failover happened mid-transfer (the primary released
part of it, the standby the rest); nothing reached the client twice from
the chain's point of view (the standby's TxTs suppressed what the primary
had released), and the promoted basic_monitor counted each stamped packet
that reached it once (no more packets than the predecessor stamped).
"""
import hashlib
import json
import os
import random
import signal
import subprocess
import sys
import time

from onvm import lab

SIZE = 64 << 20
SERVER, CLIENT = "198.18.20.2", "198.18.20.1"
PORT = 8080
PACE_NOTE = None


def macs(ns, ifname):
    out = lab.run_cmd(lab.in_netns(ns, ["ip", "-j", "link", "show", "dev", ifname]))
    return json.loads(out)[0]["address"]


def af(n, ifn, frames=4096):
    return f"net_af_packet{n},iface={ifn},qpairs=1,framecnt={frames}"


CLIENT_SCRIPT = r"""
import hashlib, sys, time, urllib.request
url, want = sys.argv[1], sys.argv[2]
t0 = time.monotonic()
h = hashlib.sha256()
n = 0
with urllib.request.urlopen(url, timeout=120) as r:
    while True:
        b = r.read(1 << 16)
        if not b:
            break
        h.update(b)
        n += len(b)
print(f"bytes {n} sha256 {h.hexdigest()} ok {h.hexdigest() == want} "
      f"seconds {time.monotonic() - t0:.2f}", flush=True)
sys.exit(0 if h.hexdigest() == want else 1)
"""


def test(L):
    seed = int(os.environ.get("ONVM_SEED", "1"))
    rnd = random.Random(seed)
    ns = {k: L.netns(k) for k in ("p", "m", "s", "k", "srv", "cli")}
    # the chain's links, DPDK at both ends
    for a, b in (("p_m", "m_p"), ("p_s", "s_p"), ("m_s", "s_m"), ("m_k", "k_m"),
                 ("s_k", "k_s")):
        L.veth(ns[a[0]], a, ns[b[0]], b)
        if a in ("p_m", "p_s"):  # the shim adds 12 bytes to full-size frames
            for n, ifn in ((ns[a[0]], a), (ns[b[0]], b)):
                lab.run_cmd(lab.in_netns(n, ["ip", "link", "set", "dev", ifn, "mtu", "9000"]))
    # the kernel ends: the server's data into the predecessor, out of the sink
    # to the client; and the direct way back
    L.veth(ns["p"], "p_in", ns["srv"], "s0", addr_b=f"{SERVER}/24")
    L.veth(ns["k"], "k_c", ns["cli"], "c0", addr_b=f"{CLIENT}/24")
    L.veth(ns["cli"], "c1", ns["srv"], "s1")
    for n, ifn in ((ns["srv"], "s0"), (ns["cli"], "c1"), (ns["srv"], "s1")):
        lab.run_cmd(lab.in_netns(n, ["ethtool", "-K", ifn, "tx", "off", "tso", "off",
                                     "gso", "off"]))
    for n in (ns["srv"], ns["cli"]):
        for k in ("all", "default"):
            lab.run_cmd(lab.in_netns(n, ["sysctl", "-qw", f"net.ipv4.conf.{k}.rp_filter=0"]))
    lab.run_cmd(lab.in_netns(ns["srv"], ["ip", "neigh", "replace", CLIENT, "lladdr",
                                         macs(ns["cli"], "c0"), "dev", "s0", "nud",
                                         "permanent"]))
    lab.run_cmd(lab.in_netns(ns["cli"], ["ip", "route", "replace", f"{SERVER}/32", "dev", "c1",
                                         "src", CLIENT]))
    lab.run_cmd(lab.in_netns(ns["cli"], ["ip", "neigh", "replace", SERVER, "lladdr",
                                         macs(ns["srv"], "s1"), "dev", "c1", "nud",
                                         "permanent"]))

    wait = {"startup": {"link_wait_ms": 60000}}
    cpu = lambda c: {"node": {"lcores": f"0@{c}"}}
    big = 16384
    sink = L.node("sink", dict(wait, **cpu(0), **{
        "ports": [{"name": "in_m", "dev": af(0, "k_m", big)},
                  {"name": "in_s", "dev": af(1, "k_s", big)},
                  {"name": "to_cli", "dev": af(2, "k_c")}],
        "chains": [{"name": "m", "services": [], "ingress_port": "in_m", "exit_port": "to_cli"},
                   {"name": "s", "services": [], "ingress_port": "in_s",
                    "exit_port": "to_cli"}],
    }), netns=ns["k"])

    def chain_node(name, role):
        sync_port = "to_s" if role == "primary" else "to_m"
        rc = {"name": "web", "id": 7, "role": role, "chain": "c", "predecessor_port": "from_p"}
        if role == "primary":
            rc.update(standby_port=sync_port, stages=8, stage_packets=64, stage_close_us=200,
                      retrans_us=5000, max_tries=20, standby_window=16, checkpoint_ms=5)
        else:
            rc.update(primary_port=sync_port)
        x = 'm' if role == 'primary' else 's'
        return L.node(name, dict(wait, **cpu(1 if role == "primary" else 0), **{
            "ports": [{"name": "from_p", "dev": af(0, f"{x}_p", big)},
                      {"name": sync_port, "dev": af(1, f"{x}_{'s' if x == 'm' else 'm'}")},
                      {"name": "out", "dev": af(2, f"{x}_k")}],
            "nfs": [{"name": "mon", "binary": "basic_monitor", "service": 1,
                     "args": ["-f", "1024", "-e", L.path(f"{name}-mon.json"), "-p", "0"]}],
            "chains": [{"name": "c", "services": [1], "ingress_port": "from_p",
                        "exit_port": "out"}],
            "remote": {"chains": [rc]},
        }), netns=ns[x])

    standby = chain_node("standby", "standby")
    primary = chain_node("primary", "primary")
    pred = L.node("pred", dict(wait, **cpu(1), **{
        "ports": [{"name": "src", "dev": af(0, "p_in")},
                  {"name": "to_m", "dev": af(1, "p_m")},
                  {"name": "to_s", "dev": af(2, "p_s")}],
        "chains": [{"name": "in", "services": [], "ingress_port": "src", "exit_port": "to_m"}],
        "remote": {"chains": [{"name": "web", "id": 7, "role": "predecessor",
                               "primary_port": "to_m", "standby_port": "to_s",
                               "log_packets": 1 << 20, "log_mb": 256}]},
    }), netns=ns["p"])
    NODES[:] = [pred, primary, standby, sink]
    for node in (sink, standby, primary, pred):
        node.start(wait=False)
    for node in (sink, standby, primary, pred):
        node.wait_ready(120)

    blob_dir = L.path("www")
    os.makedirs(blob_dir)
    data = random.Random(seed).randbytes(SIZE)
    with open(os.path.join(blob_dir, "blob"), "wb") as f:
        f.write(data)
    want = hashlib.sha256(data).hexdigest()
    server = L.spawn("server", lab.in_netns(ns["srv"], [
        "/usr/bin/python3", "-u", "-m", "http.server", str(PORT), "--bind", SERVER,
        "--directory", blob_dir]))
    lab.wait_until(lambda: "Serving HTTP" in L.proc_log(server) or server.poll() is not None,
                   30, "the HTTP server")
    L.expect(server.poll() is None, f"server: {L.proc_log(server)}")
    client = L.spawn("client", lab.in_netns(ns["cli"], [
        "/usr/bin/python3", "-c", CLIENT_SCRIPT, f"http://{SERVER}:{PORT}/blob", want]))

    # Kill the primary when a seeded share of the file has left it.
    share = rnd.uniform(0.2, 0.7)
    frames_total = SIZE // 1448
    lab.wait_until(lambda: primary.query("/onvm/remote")["web"]["out_released"] >=
                   share * frames_total or client.poll() is not None, 120,
                   f"{share:.2f} of the file released by the primary")
    L.expect(client.poll() is None, "the download ended before the failure")
    released = primary.query("/onvm/remote")["web"]["out_released"]
    primary.stop(sig=signal.SIGKILL)
    rep = pred.query("/onvm/remote/failover,web")
    L.expect(rep.get("status") == "ok", f"failover: {rep}")
    try:
        rc = client.wait(180)
    except subprocess.TimeoutExpired:
        rc = None
    out = L.proc_log(client)
    print(f"kill after {released} frames released ({share:.2f}); client: {out.strip()}")
    L.expect(rc == 0 and f"sha256 {want} ok True" in out, f"download: exit {rc}: {out}")
    st_s, st_p = standby.query("/onvm/remote")["web"], pred.query("/onvm/remote")["web"]
    print(f"standby: takeovers {st_s['takeovers']}, passed {st_s['out_passed']}, dup "
          f"{st_s['out_dup']}, covered {st_s['ingress_replay_covered']}; pred: stamped "
          f"{st_p['stamped']}, replayed {st_p['replayed']}")
    L.expect(st_s["takeovers"] == 1 and st_s["out_passed"] > 0,
             f"the standby took over and carried the rest: {st_s}")
    server.send_signal(signal.SIGTERM)
    for node in (pred, standby, sink):
        L.expect(node.stop() == 0, f"{node.name}: manager exit status")
    primary.remove_runtime()
    mon = lab.read_json(L.path("standby-mon.json"))
    # Each stamped packet reached the promoted monitor at most once (the cut
    # holds those before it, the replay brings those after).
    L.expect(mon["packets"] == st_p["stamped"],
             f"basic_monitor counted {mon['packets']} of {st_p['stamped']} stamped")


NODES = []


def main(L):
    try:
        test(L)
    except lab.TestFailure:
        for node in NODES:  # what every node says, for a failing run's log
            try:
                print(f"--- {node.name}: ports {node.ports()}", file=sys.stderr)
                print(f"--- {node.name}: remote {node.query('/onvm/remote')}", file=sys.stderr)
            except Exception as e:  # a killed node
                print(f"--- {node.name}: {e}", file=sys.stderr)
        raise


if __name__ == "__main__":
    lab.run("remote_tcp", main)
