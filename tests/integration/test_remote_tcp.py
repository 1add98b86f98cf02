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
outside the chain (the lab: python/onvm/tcp_lab.py, shared with
bench/remote_tcp_stall.py).

The primary node dies whole -- its manager and its NF SIGKILLed at once --
when a seeded share of the file has been released (ONVM_SEED), and the
operator fails the chain over right after; the standby takes over, the
predecessor replays its log, and TCP recovers what the dead primary held
(its retransmissions) -- the chain never delivers a segment twice.
Asserted: every download completes, with the file's SHA-256; the failover
happened mid-transfer (the primary released part of it, the standby the
rest); nothing reached the client twice from the chain's point of view (the
standby's TxTs suppressed what the primary had released), and the promoted
basic_monitor counted each stamped packet that reached it once (no more
packets than the predecessor stamped); and the client's longest wait for
data from the failure on was within the failover's own time plus one of
the server's retransmission time-outs (with 100 ms to spare): a stall of
seconds means something held the flow after the takeover.
"""
import hashlib
import os
import random
import signal
import subprocess
import sys

from onvm import lab
from onvm import tcp_lab as tl

SIZE = 64 << 20


def test(L):
    seed = int(os.environ.get("ONVM_SEED", "1"))
    rnd = random.Random(seed)
    ns = tl.topology(L)
    sink, standby, primary, pred = tl.nodes(L, ns)
    NODES[:] = [pred, primary, standby, sink]
    tl.start(sink, standby, primary, pred)

    data = random.Random(seed).randbytes(SIZE)
    want = hashlib.sha256(data).hexdigest()
    server = tl.serve(L, ns, data)
    reads = L.path("client.reads")
    client = tl.download(L, ns, want, reads)

    # Kill the primary when a seeded share of the file has left it.
    share = rnd.uniform(0.2, 0.7)
    frames_total = SIZE // 1448
    lab.wait_until(lambda: primary.query("/onvm/remote")["web"]["out_released"] >=
                   share * frames_total or client.poll() is not None, 120,
                   f"{share:.2f} of the file released by the primary")
    L.expect(client.poll() is None, "the download ended before the failure")
    released = primary.query("/onvm/remote")["web"]["out_released"]
    rto = tl.socket_info(ns["srv"]).get("rto", 1000.0)  # ms; 1 s: the initial RTO
    t_kill = primary.crash()
    rep = pred.query("/onvm/remote/failover,web")
    L.expect(rep.get("status") == "ok", f"failover: {rep}")
    primary.stop()  # (reaps what the crash left)
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
    if rc == 0:
        times = [t for t, _ in tl.read_log(reads)]
        stall, start, _ = tl.gaps(times, t_kill - 50_000_000, times[-1])
        req, end = st_p["failover_req_ns"], st_p["replay_end_ns"]
        bound = (end - t_kill) / 1e6 + rto + 100
        print(f"stall {stall / 1e6:.1f} ms from {(start - t_kill) / 1e6:+.1f} ms after the "
              f"kill; failover asked {(req - t_kill) / 1e6:.1f} ms after it, replay ended "
              f"{(end - req) / 1e6:.1f} ms later; server's RTO {rto} ms")
        L.expect(stall / 1e6 <= bound * lab.SLOWDOWN,
                 f"the client waited {stall / 1e6:.0f} ms for data, more than the failover "
                 f"and one RTO ({bound:.0f} ms)")
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
