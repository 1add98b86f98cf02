#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 REINFORCE-NFV authors
"""A lossy wire between two interfaces, for the lab's sync link.

This host's kernel has no sch_netem (nor act_gact), so tc cannot drop,
duplicate, reorder or delay frames.  This relay does it in user space: it
bridges two interfaces of one network namespace (veth ends with no address:
the kernel never forwards or answers anything on them) with raw AF_PACKET
sockets, and applies the faults with a seeded random generator, so a seed
repeats a run's decisions (not its timing).

  faulty_link.py IF_A IF_B --seed N [--drop P] [--dup P] [--reorder P]
                 [--delay P --delay-us D] [--fixed-delay-us D]
                 [--only-ethertype T] [--only-ftc-propagating] [--control FILE]
                 --stats FILE

Per frame, in each direction: dropped with probability --drop; else sent
twice with probability --dup; else held back and sent after the next frame
(or after 1 ms if none comes) with probability --reorder; else delayed by a
uniform 0..D us with probability --delay (which may also reorder it).
--fixed-delay-us delays every frame by D us, in order (a longer wire: the
benchmarks' sync-link RTT).  --only-ethertype T (e.g. 0x88b5): the faults
hit only frames of that EtherType, the others pass as on a faultless wire
(FTC's piggybacked frames faulted, BFD's not); --only-ftc-propagating: only
FTC's propagating frames (0x88B5 version 2 with its PROPAGATE flag: logs and
vectors with no packet), so that a duplicate never duplicates a packet.  On
SIGTERM it writes its counters as JSON to --stats and exits 0.

--control FILE: on SIGUSR1 the relay reads FILE, a JSON object, and its
faults become those it names from then on (the others 0): "drop", "dup",
"reorder", "delay" (probabilities), "delay_us", and "hold_ms" -- every
frame is held from now until that many ms have passed, then all are sent
in order (a stalled wire that loses nothing).  {} makes it a faultless
wire again (frames held go at once).  The random sequence goes on, so a
seed still repeats the decisions.  The counters also count the frames
held ("held") and, with --control, the changes ("controls").
"""
import argparse
import heapq
import json
import os
import random
import select
import signal
import socket
import sys
import time

ETH_P_ALL = 0x0003
PACKET_OUTGOING = 4
REORDER_HOLD_S = 0.001
BURST = 256  # frames read from one side before the other's turn


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("if_a")
    ap.add_argument("if_b")
    ap.add_argument("--seed", type=int, required=True)
    for f in ("drop", "dup", "reorder", "delay"):
        ap.add_argument(f"--{f}", type=float, default=0.0)
    ap.add_argument("--delay-us", type=int, default=0)
    ap.add_argument("--fixed-delay-us", type=int, default=0,
                    help="every frame forwarded this late, in order (a longer wire)")
    ap.add_argument("--only-ethertype", type=lambda x: int(x, 0), default=None,
                    help="fault only frames of this EtherType")
    ap.add_argument("--only-ftc-propagating", action="store_true",
                    help="fault only FTC's propagating frames")
    ap.add_argument("--control", help="JSON file of faults, read on SIGUSR1")
    ap.add_argument("--stats", required=True)
    a = ap.parse_args()
    hold = {"until": 0.0, "frames": []}  # (out interface, frame) while the wire stalls
    rnd = random.Random(a.seed)
    # A faultless wire keeps order only from one CPU: a veth hands each
    # frame to the backlog of the CPU that sent it, and a relay moved
    # between CPUs may overtake itself.
    os.sched_setaffinity(0, {max(os.sched_getaffinity(0))})
    socks = {}
    for name in (a.if_a, a.if_b):
        s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(ETH_P_ALL))
        s.bind((name, 0))
        s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4 << 20)
        s.setblocking(False)
        socks[name] = s
    peer = {a.if_a: a.if_b, a.if_b: a.if_a}
    stats = {d: {k: 0 for k in ("rx", "tx", "dropped", "duplicated", "reordered", "delayed",
                                "held")}
             for d in (f"{a.if_a}->{a.if_b}", f"{a.if_b}->{a.if_a}")}
    if a.control:
        stats["controls"] = 0
    timers = []  # (due, seq, out interface, frame)
    held = {}    # out interface -> (due, frame): a frame waiting for the next one
    seq = 0
    stop = []
    signal.signal(signal.SIGTERM, lambda *_: stop.append(1))

    def control(*_):
        try:
            with open(a.control) as f:
                c = json.load(f)
        except (OSError, ValueError) as e:
            print(f"faulty_link: control file {a.control}: {e}", file=sys.stderr)
            return
        for name in ("drop", "dup", "reorder", "delay"):
            setattr(a, name, float(c.get(name, 0.0)))
        a.delay_us = int(c.get("delay_us", 0))
        hold["until"] = time.monotonic() + float(c.get("hold_ms", 0)) / 1000
        stats["controls"] += 1
    if a.control:
        signal.signal(signal.SIGUSR1, control)

    def send(out, frame, st):
        try:
            socks[out].send(frame)
            st["tx"] += 1
        except OSError:
            pass  # the far end is down: the wire loses it

    def later(due, out, frame):
        nonlocal seq
        seq += 1
        heapq.heappush(timers, (due, seq, out, frame))

    while not stop:
        now = time.monotonic()
        wait = 0.05
        if hold["frames"] or hold["until"] > now:
            wait = max(0.0, min(wait, hold["until"] - now))
        if timers:
            wait = max(0.0, min(wait, timers[0][0] - now))
        for due, _ in held.values():
            wait = max(0.0, min(wait, due - now))
        try:
            ready, _, _ = select.select(list(socks.values()), [], [], wait)
        except InterruptedError:
            continue
        for s in ready:
            src = next(n for n, x in socks.items() if x is s)
            out = peer[src]
            st = stats[f"{src}->{out}"]
            for _ in range(BURST):  # then the other direction: neither starves
                try:
                    frame, addr = s.recvfrom(65535)
                except BlockingIOError:
                    break
                if addr[2] == PACKET_OUTGOING:
                    continue  # what this relay sent itself
                st["rx"] += 1
                if hold["until"] > time.monotonic():  # a stalled wire: later, in order
                    st["held"] += 1
                    hold["frames"].append((out, frame))
                    continue
                fault, r = "none", rnd.random()
                spared = (a.only_ethertype is not None and
                          (len(frame) < 14 or
                           int.from_bytes(frame[12:14], "big") != a.only_ethertype))
                if a.only_ftc_propagating:
                    spared = not (len(frame) > 15 and frame[12:15] == b"\x88\xb5\x02" and
                                  frame[15] & 1)
                for name, p in (("drop", a.drop), ("dup", a.dup), ("reorder", a.reorder),
                                ("delay", a.delay)) if not spared else ():
                    if r < p:
                        fault = name
                        break
                    r -= p
                if fault == "reorder" and out in held:
                    fault = "none"  # one frame held back at a time
                if fault == "drop":
                    st["dropped"] += 1
                    continue
                if fault == "reorder":
                    st["reordered"] += 1
                    held[out] = (time.monotonic() + REORDER_HOLD_S, frame)
                    continue
                if fault == "delay":
                    st["delayed"] += 1
                    later(time.monotonic() + rnd.uniform(0, a.delay_us) / 1e6, out, frame)
                    continue
                if a.fixed_delay_us:  # a longer wire: everything, in order
                    later(time.monotonic() + a.fixed_delay_us / 1e6, out, frame)
                else:
                    send(out, frame, st)
                if fault == "dup":
                    st["duplicated"] += 1
                    send(out, frame, st)
                if out in held:  # the held frame goes after this one
                    send(out, held.pop(out)[1], st)
        now = time.monotonic()
        if hold["frames"] and hold["until"] <= now:
            for out, frame in hold["frames"]:
                send(out, frame, stats[f"{peer[out]}->{out}"])
            hold["frames"].clear()
        while timers and timers[0][0] <= now:
            _, _, out, frame = heapq.heappop(timers)
            send(out, frame, stats[f"{peer[out]}->{out}"])
        for out in [o for o, (due, _) in held.items() if due <= now]:
            send(out, held.pop(out)[1], stats[f"{peer[out]}->{out}"])
    with open(a.stats, "w") as f:
        json.dump(stats, f)
    return 0


if __name__ == "__main__":
    sys.exit(main())
